"""One agent's first-turn request, assembled by google-adk itself without calling any model.

google-adk builds an `LlmRequest` by running its flow's request processors over an invocation context
(`basic`, `instructions`, `identity`, `contents`, ..., `agent_transfer`, then the tools' processors), and only
then calls the model. Here the same processors run over an in-memory session holding the given state and the
writes of the agents that ran before, so every word of the request (identity line, transfer block, the fence
around a dynamic instruction) comes from the installed google-adk. No model is ever called.

A required key nobody supplies makes google-adk raise `KeyError`; here its value becomes a visible marker and
the key is reported `missing`. Which keys an instruction reads is what google-adk's own injection asks the
session's state for while the `instructions` processor runs. This is the only module, with `walk` and `build`,
that imports google-adk, and only when a preview is made.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import MissingKeyError
from .result import KeyRead, KeySource, marker

__all__ = ["Assembled", "Given", "Marker", "assemble", "run_agent_callback", "tool_names"]

# How often one agent's request is assembled again, each time with one more missing key marked: bounds a
# provider that keeps asking for new keys.
MAX_ROUNDS = 200
# google-adk's messages for a key an instruction needs and nobody supplies (read to mark that key, not copied
# into any text shown: the preview says it in its own words).
_MISSING_STATE = re.compile(r"Context variable not found: `([^`]+)`")
_MISSING_ARTIFACT = re.compile(r"Artifact '(.+)' not found in agent")
_UNDEFINED = re.compile(r"'([^']+)' is undefined")  # Jinja2's, in templating's jinja() and google-adk's
_APP, _USER = "preview", "preview-user"
_UNDEFINED_ERRORS = ("UndefinedError", "JinjaUndefinedError")


@dataclass(frozen=True, slots=True)
class Given:
    """A value in the session's state and where it came from: `source` `state` (given), `earlier` (an agent
    that ran before wrote it) or `marker` (written at run time by code not run here: `value` is a marker);
    `by` names the writer."""

    value: Any
    source: str = "state"
    by: str | None = None


@dataclass(slots=True)
class Assembled:
    """What google-adk's processors produced for one agent (see
    [`AgentPreview`][templating.preview.result.AgentPreview] for the fields)."""

    system_instruction: str | None = None
    instruction_turn: str | None = None
    tools: tuple[str, ...] = ()
    model: str | None = None
    reads: tuple[KeyRead, ...] = ()
    notes: list[str] = field(default_factory=list)
    error: str | None = None


class _Recording(dict[str, Any]):
    """The session's state, noting which keys are asked for (and whether present) while `recording`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.recording = False
        self.asked: dict[str, bool] = {}

    def _note(self, key: object) -> None:
        if self.recording and isinstance(key, str) and key not in self.asked:
            self.asked[key] = dict.__contains__(self, key)

    def __contains__(self, key: object) -> bool:
        self._note(key)
        return dict.__contains__(self, key)

    def __getitem__(self, key: str) -> Any:
        self._note(key)
        return dict.__getitem__(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        self._note(key)
        return dict.get(self, key, default)


def _split(given: Mapping[str, Given]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The given state (as `create_session` takes it) and everything written since (as one event's delta)."""
    initial = {key: item.value for key, item in given.items() if item.source == "state"}
    written = {key: item.value for key, item in given.items() if item.source != "state"}
    return initial, written


async def _context(
    agent: Any, given: Mapping[str, Given], message: str, *, plugins: list[Any], artifacts: Mapping[str, str]
) -> Any:
    """An invocation context for `agent` over a new in-memory session: the given state through
    `create_session` (google-adk drops `temp:` keys there, as it does for a real session), the user's message,
    then what earlier agents wrote as one event's `state_delta` (a `temp:` key written so stays visible for the
    rest of the invocation, as in google-adk)."""
    from google.adk.agents.invocation_context import InvocationContext, new_invocation_context_id
    from google.adk.agents.run_config import RunConfig
    from google.adk.artifacts import InMemoryArtifactService
    from google.adk.events import Event, EventActions
    from google.adk.plugins.plugin_manager import PluginManager
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    initial, written = _split(given)
    sessions = InMemorySessionService()
    session = await sessions.create_session(app_name=_APP, user_id=_USER, state=initial)
    invocation = new_invocation_context_id()
    user = types.Content(role="user", parts=[types.Part(text=message)])
    await sessions.append_event(session, Event(invocation_id=invocation, author="user", content=user))
    if written:
        delta = Event(invocation_id=invocation, author=_APP, actions=EventActions(state_delta=written))
        await sessions.append_event(session, delta)
    store = InMemoryArtifactService()
    for name, text in artifacts.items():
        await store.save_artifact(
            app_name=_APP, user_id=_USER, session_id=session.id, filename=name, artifact=types.Part(text=text)
        )
    session.state = _Recording(session.state)
    return InvocationContext(
        session_service=sessions,
        artifact_service=store,
        invocation_id=invocation,
        agent=agent,
        session=session,
        user_content=user,
        run_config=RunConfig(),
        plugin_manager=PluginManager(plugins=list(plugins)),
    )


def _instruction_turn(contents: list[Any], message: str) -> str | None:
    """The text of the user turn google-adk inserted before the user's message (the dynamic instruction of an
    agent with a `static_instruction`), or None when there is none."""
    before = contents[:-1] if contents and _text(contents[-1]) == message else contents
    texts = [text for content in before if content.role == "user" and (text := _text(content)) is not None]
    return "\n".join(texts) if texts else None


def _text(content: Any) -> str | None:
    parts = [part.text for part in (content.parts or []) if part.text is not None]
    return "".join(parts) if parts else None


def tool_names(request: Any) -> tuple[str, ...]:
    """The names of the tools offered in `request.config.tools`, in order: each function declaration's name,
    and each of google-adk's built-in tools (Google Search, code execution, ...) by its field's name."""
    names: list[str] = []
    for tool in request.config.tools or []:
        declarations = getattr(tool, "function_declarations", None) or []
        names.extend(declaration.name for declaration in declarations)
        if hasattr(tool, "model_dump"):
            names.extend(name for name in tool.model_dump(exclude_none=True) if name != "function_declarations")
    return tuple(names)


class Marker(str):
    """A marker as a state value: text wherever it is shown, and one item when a template loops over it (a
    Jinja2 `{% for x in key %}` shows the marker once rather than each of its characters)."""

    __slots__ = ()

    def __iter__(self) -> Iterator[str]:
        yield str(self)


def _missing_key(exc: BaseException) -> tuple[str, str] | None:
    """(`state` or `artifact`, name) of the key whose absence `exc` reports: google-adk's injection, or one of
    templating's providers (its `MissingKeyError`)."""
    if not isinstance(exc, KeyError) and type(exc).__name__ not in _UNDEFINED_ERRORS:
        return None
    if isinstance(exc, MissingKeyError) and exc.missing:
        return "state", exc.missing[0].key.partition(".")[0]
    text = str(exc.args[0]) if exc.args else ""
    found = _MISSING_STATE.search(text)
    if found:
        return "state", found.group(1)
    found = _MISSING_ARTIFACT.search(text)
    if found:
        return "artifact", found.group(1)
    found = _UNDEFINED.search(text)
    if found and found.group(1).isidentifier():
        return "state", found.group(1)
    return None


def _flow_processors(agent: Any) -> Iterator[Any]:
    flow = agent._llm_flow
    yield from flow.request_processors
    yield from flow.tool_request_processors


async def assemble(
    agent: Any,
    given: Mapping[str, Given],
    *,
    message: str,
    plugins: list[Any] | None = None,
    before_model: bool = False,
) -> Assembled:
    """The request google-adk builds for `agent`'s first model call, with the session's state `given`.

    `before_model`: also run the plugins' and the agent's `before_model_callback`s, which may change the request
    (project code: only when the preview runs the app)."""
    state: dict[str, Given] = dict(given)
    marked: dict[str, str] = {}
    raised: dict[str, list[str]] = {}  # the error each missing key raises at run time -> the keys
    artifacts: dict[str, str] = {}
    result = Assembled()
    for _ in range(MAX_ROUNDS):
        try:
            request, asked, ctx = await _run_processors(agent, state, message, plugins or [], artifacts)
        except Exception as exc:
            missing = _missing_key(exc)
            if missing is None or missing[1] in marked or f"artifact.{missing[1]}" in marked:
                result.error = _error(exc)
                return result
            kind, name = missing
            raised.setdefault(type(exc).__name__, []).append(f"artifact.{name}" if kind == "artifact" else name)
            if kind == "artifact":
                artifacts[name] = marked[f"artifact.{name}"] = marker(f"missing artifact: {name}")
            else:
                marked[name] = marker(f"missing: {name}")
                state[name] = Given(Marker(marked[name]), "marker")
            continue
        break
    else:
        result.error = f"its instructions asked for more than {MAX_ROUNDS} keys that nobody supplies"
        return result
    if before_model:
        await _before_model(ctx, request, result)
    system = request.config.system_instruction
    result.system_instruction = system if isinstance(system, str) else (_text(system) if system else "")
    result.instruction_turn = _instruction_turn(list(request.contents), message)
    result.tools = tool_names(request)
    result.model = request.model
    result.reads = tuple(_reads(asked, state, marked))
    for error, keys in raised.items():
        shown = ", ".join(f"`{key}`" for key in keys)
        result.notes.append(
            f"nobody supplies {shown}: its instructions raise {error} on this turn at run time; shown as a marker"
        )
    return result


async def _run_processors(
    agent: Any, state: Mapping[str, Given], message: str, plugins: list[Any], artifacts: Mapping[str, str]
) -> tuple[Any, dict[str, bool], Any]:
    from google.adk.models.llm_request import LlmRequest

    ctx = await _context(agent, state, message, plugins=plugins, artifacts=artifacts)
    recorder: _Recording = ctx.session.state
    request = LlmRequest()
    for processor in _flow_processors(agent):
        recorder.recording = getattr(processor, "name", "") == "instructions"
        try:
            async for _ in processor.run_async(ctx, request):
                pass
        finally:
            recorder.recording = False
    return request, recorder.asked, ctx


def _reads(asked: Mapping[str, bool], state: Mapping[str, Given], marked: Mapping[str, str]) -> Iterator[KeyRead]:
    for key, present in asked.items():
        if key.startswith("_adk"):
            continue
        if key in marked:
            yield KeyRead(key, "missing", value=marked[key])
        elif not present:
            yield KeyRead(key, "absent")
        else:
            item = state[key] if key in state else Given(None)
            source: KeySource = (
                "earlier" if item.source == "earlier" else "marker" if item.source == "marker" else "state"
            )
            value = item.value if source != "state" or isinstance(item.value, Marker) else None
            yield KeyRead(key, source, item.by, value if isinstance(value, str) or value is None else str(value))
    for key, value in marked.items():
        if key.startswith("artifact."):
            yield KeyRead(key, "missing", value=value)


async def _before_model(ctx: Any, request: Any, result: Assembled) -> None:
    """Run the plugins' and the agent's `before_model_callback`s as google-adk does after the processors."""
    from google.adk.events import Event
    from google.adk.flows.llm_flows.core._finalizer import handle_before_model_callback

    try:
        answer = await handle_before_model_callback(
            ctx, request, Event(invocation_id=ctx.invocation_id, author=ctx.agent.name)
        )
    except Exception as exc:
        result.notes.append(f"its before_model_callback raised {_error(exc)}: the request is shown as built before it")
        return
    if answer is not None:
        result.notes.append(
            "a before_model_callback answers instead of the model on this turn: the model is not called"
        )


async def run_agent_callback(
    agent: Any, given: Mapping[str, Given], message: str, *, plugins: list[Any], when: str
) -> Any:
    """Run `agent`'s `before_agent_callback`s or `after_agent_callback`s (`when`), and the plugins', as google-adk
    does around the agent: the event they produce (its `actions.state_delta` and `content`), or None."""
    ctx = await _context(agent, given, message, plugins=plugins, artifacts={})
    ctx.session.state = dict(ctx.session.state)
    if when == "before":
        return await agent._handle_before_agent_callback(ctx)
    return await agent._handle_after_agent_callback(ctx)


def _error(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
