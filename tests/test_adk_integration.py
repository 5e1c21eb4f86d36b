"""Our providers as a real Google ADK ``LlmAgent(instruction=...)``: the system instruction ADK builds for the model.

Runs ADK's own ``InMemoryRunner`` (in-memory sessions, no network), and a ``Runner`` over ADK's
SQLite-backed session services across a restart, with a fake model that records each ``LlmRequest``
it receives. Needs the ``adk`` extra (``pip install 'agent-prompt-templating[adk]'``; ADK's DatabaseSessionService
also needs SQLAlchemy, from the ``sql`` extra); without it the module is skipped, unless
``TEMPLATING_REQUIRE_ADK=1`` (set by CI, ``.ci/run``), which turns the skip into a failure so the proof
can never be skipped silently.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import re
import shutil
import sys
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from conftest import installed
from hypothesis import given, settings
from hypothesis import strategies as st

if not installed("google.adk"):
    if os.environ.get("TEMPLATING_REQUIRE_ADK") == "1":
        pytest.fail("TEMPLATING_REQUIRE_ADK=1 but google-adk is not installed (pip install '.[adk]')", pytrace=False)
    pytest.skip("google-adk is not installed (pip install '.[adk]')", allow_module_level=True)

from google.adk.agents import LlmAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.artifacts import InMemoryArtifactService
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.adk.sessions import InMemorySessionService
from google.adk.utils.instructions_utils import inject_session_state
from google.genai import types

from templating import Agent, MissingKeyError, Template, concat, instruction, jinja, lint, static, when
from templating.convert import adk_code_differences

render_module = importlib.import_module("templating.renderer")

JSON_EXAMPLE = '{"order": {"id": "A-1", "items": [1, 2]}}'
# ADK does not store ``temp:`` keys given when a session is created, so there are none here.
STATE = {"user:name": "Ada", "order_id": "A-1", "app:brand": "Acme"}


class RecordingLlm(BaseLlm):
    """A model that answers "ok" and keeps every request ADK sends it."""

    model: str = "recording-model"
    requests: ClassVar[list[LlmRequest]] = []

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        RecordingLlm.requests.append(llm_request)
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="ok")]))


async def _run(agent_instruction: Any, state: dict[str, Any], **fields: Any) -> tuple[LlmRequest, list[Any]]:
    RecordingLlm.requests.clear()
    agent = LlmAgent(name="support", model=RecordingLlm(), instruction=agent_instruction, **fields)
    runner = InMemoryRunner(agent=agent, app_name="templating-test")
    session = await runner.session_service.create_session(app_name="templating-test", user_id="u1", state=state)
    message = types.Content(role="user", parts=[types.Part(text="hello")])
    events = [event async for event in runner.run_async(user_id="u1", session_id=session.id, new_message=message)]
    assert len(RecordingLlm.requests) == 1, "the model was called exactly once"
    return RecordingLlm.requests[0], events


def sent(request: LlmRequest) -> str:
    """The system instruction ADK sent the model."""
    value = request.config.system_instruction
    assert isinstance(value, str), f"ADK sends the system instruction as a str, got {type(value).__name__}"
    return value


def assert_sent_first(request: LlmRequest, ours: str) -> None:
    """Our instruction leads the system instruction, whole: nothing after it but ADK's own additions
    (ADK 2.x appends a line naming the agent), each after a blank line. Only the prefix is asserted,
    so a change in ADK's wording of its own line does not break the proof."""
    value = sent(request)
    assert value == ours or value.startswith(ours + "\n\n"), f"expected {ours!r} first, ADK sent {value!r}"


PROVIDERS = [
    (
        "instruction",
        instruction("Hi <user:name>. Order <order_id>. Reply as JSON like " + JSON_EXAMPLE),
        f"Hi Ada. Order A-1. Reply as JSON like {JSON_EXAMPLE}",
    ),
    (
        "concat-static-when",
        concat(
            static("Escapes are literal here: <user:name> {order_id}"),
            instruction("Brand <app:brand>, step <temp:step?>."),
            when(lambda ctx: ctx.state["user:name"] == "Ada", instruction("Greet <user:name> by name.")),
            when(lambda ctx: "vip" in ctx.state, "VIP"),
        ),
        "Escapes are literal here: <user:name> {order_id}\n\nBrand Acme, step .\n\nGreet Ada by name.",
    ),
    (
        "jinja",
        jinja('{% for i in [1, 2] %}<{{ i }}>{% endfor %} {{ user.name }} {{ state["order_id"] }} {"k": 1}'),
        '<1><2> Ada A-1 {"k": 1}',
    ),
]


@pytest.mark.parametrize(("provider", "expected"), [c[1:] for c in PROVIDERS], ids=[c[0] for c in PROVIDERS])
def test_adk_sends_our_rendered_instruction_as_the_system_instruction(provider: Any, expected: str) -> None:
    request, _ = asyncio.run(_run(provider, dict(STATE)))
    assert_sent_first(request, expected)


def test_adk_awaits_an_async_provider() -> None:
    async def tail(ctx: Any) -> str:
        return "tail for " + ctx.state["user:name"]

    request, _ = asyncio.run(_run(concat(instruction("<user:name>"), tail, sep=" | "), dict(STATE)))
    assert_sent_first(request, "Ada | tail for Ada")


def test_a_missing_key_surfaces_as_our_missing_key_error() -> None:
    with pytest.raises(MissingKeyError) as caught:
        asyncio.run(_run(instruction("Hi <user:name>, order <order_idd>."), dict(STATE)))
    assert caught.value.keys == ("order_idd",)
    assert caught.value.missing[0].suggestion == "order_id"
    assert RecordingLlm.requests == [], "the model is never called with a half-rendered instruction"


ADK_2X_BRACE_BEHAVIOUR = (
    "This documents google-adk 2.x, whose string instructions read code and JSON braces as placeholders "
    "(the reason for our providers and the ADK dialect). If it fails, ADK changed that behaviour: "
    "update this test, the ADK pages of the docs (docs/adk.md) and convert's difference messages to match."
)


def _key_error_of(adk_instruction: str) -> KeyError | None:
    """The KeyError ADK raises for a string instruction, or None when the turn runs."""
    try:
        asyncio.run(_run(adk_instruction, dict(STATE)))
    except KeyError as error:
        return error
    return None


def test_adk_string_templating_breaks_literal_braces_where_ours_does_not() -> None:
    """ADK's own ``{key}`` injection (a plain string instruction) reads code and JSON braces as placeholders.

    The first half asserts ADK 2.x's current behaviour on purpose; see ``ADK_2X_BRACE_BEHAVIOUR``.
    """
    error = _key_error_of("Answer with a Python set such as {item}.")
    assert error is not None, "ADK no longer fails on a literal {item}. " + ADK_2X_BRACE_BEHAVIOUR
    assert "Context variable not found: `item`" in str(error), ADK_2X_BRACE_BEHAVIOUR
    request, _ = asyncio.run(_run('Return JSON like {"id": {order_id}}', dict(STATE)))
    assert sent(request).startswith('Return JSON like {"id": A-1\n\n'), (
        "ADK no longer eats the closing brace. " + ADK_2X_BRACE_BEHAVIOUR
    )

    ours = instruction('Answer with a Python set such as {item}. Return JSON like {"id": "<order_id>"}')
    request, _ = asyncio.run(_run(ours, dict(STATE)))
    assert_sent_first(request, 'Answer with a Python set such as {item}. Return JSON like {"id": "A-1"}')


def test_canonical_instruction_matches_what_adk_builds() -> None:
    """An LlmAgent with global_instruction, static_instruction and instruction, against our Agent.

    ADK puts the root's global instruction, then the static instruction, in the system instruction,
    and (because static_instruction is set) sends the instruction as a labelled user message right
    after; ``canonical_instruction`` gives the three parts, in that order, as one text.
    """
    global_part = instruction("You work for <app:brand>.")
    static_part = 'Answer as JSON: {"answer": "..."}. Never reveal <internal> notes.'
    instruction_part = instruction("Help <user:name> with order <order_id>.")
    ours = Agent(
        name="support",
        global_instruction=global_part,
        static_instruction=static_part,
        instruction=instruction_part,
    )
    expected = asyncio.run(ours.canonical_instruction(dict(STATE)))
    assert expected == (
        'You work for Acme.\n\nAnswer as JSON: {"answer": "..."}. Never reveal <internal> notes.'
        "\n\nHelp Ada with order A-1."
    )

    # global_instruction is deprecated in ADK 2.x (in favour of a plugin), but it is the field Agent mirrors.
    with pytest.warns(DeprecationWarning, match="global_instruction field is deprecated"):
        request, _ = asyncio.run(
            _run(instruction_part, dict(STATE), global_instruction=global_part, static_instruction=static_part)
        )
    system, _, instruction_text = expected.rpartition("\n\n")
    assert_sent_first(request, system)
    dynamic = [
        part.text
        for content in request.contents
        if content.role == "user"
        for part in content.parts or []
        if part.text and instruction_text in part.text
    ]
    assert len(dynamic) == 1, "ADK sends the instruction once, as a user message after the system instruction"
    assert instruction_text not in sent(request)


STATIC_AND_ANGLE = (
    "from google.adk.agents import LlmAgent\n\n"
    'persona_picker = LlmAgent(name="persona_picker", instruction="Pick a persona.", output_key="persona")\n'
    'topic_picker = LlmAgent(name="topic_picker", instruction="Pick a topic.", output_key="topic")\n'
    "guide = LlmAgent(\n"
    '    name="guide",\n'
    '    static_instruction="You are {persona}, a museum guide.",\n'
    '    instruction="Tell the visitor about <topic>, in {lang}.",\n'
    ")\n"
)


def test_t029_and_t032_flag_what_adk_sends_as_written(tmp_path: Path) -> None:
    """google-adk sends a static_instruction's braces and an instruction's angle brackets as written, whatever
    state holds: lint says so at exactly those places (T032, T029), and T014 at the key ADK does look up."""
    from templating import lint_project

    (tmp_path / "agent.py").write_text(STATIC_AND_ANGLE, encoding="utf-8")
    result = lint_project([str(tmp_path / "agent.py")], root=tmp_path)
    flagged = [(d.code, STATIC_AND_ANGLE[d.span.start : d.span.end]) for d in result.diagnostics if d.span]
    assert flagged == [("T032", "{persona}"), ("T029", "<topic>"), ("T014", "{lang}")]
    state = {"persona": "Ada", "topic": "owls", "lang": "French"}
    static_part = "You are {persona}, a museum guide."
    request, _ = asyncio.run(_run("Tell the visitor about <topic>, in {lang}.", state, static_instruction=static_part))
    assert_sent_first(request, static_part)
    told = [part.text for content in request.contents for part in content.parts or [] if part.text]
    assert any("Tell the visitor about <topic>, in French." in text for text in told), told


# --- lint's ADK-dialect rules (T016 to T020, T029, T031) against google-adk's own inject_session_state ------------
# Each rule's message says what ADK does at run time; these tests make ADK do it.


async def _inject(template: str, state: dict[str, Any], artifacts: dict[str, str] | None) -> str:
    """What google-adk makes of a string instruction: its inject_session_state, in a real invocation context
    (an artifact service only when ``artifacts`` is given, holding those artifacts)."""
    sessions = InMemorySessionService()
    session = await sessions.create_session(app_name="claims", user_id="u1", state=state)
    artifact_service = None
    if artifacts is not None:
        artifact_service = InMemoryArtifactService()
        for filename, text in artifacts.items():
            await artifact_service.save_artifact(
                app_name="claims",
                user_id="u1",
                session_id=session.id,
                filename=filename,
                artifact=types.Part(text=text),
            )
    context = InvocationContext(
        session_service=sessions,
        invocation_id="i1",
        agent=LlmAgent(name="claims", model=RecordingLlm()),
        session=session,
        artifact_service=artifact_service,
    )
    return await inject_session_state(template, ReadonlyContext(context))


def adk_renders(template: str, state: dict[str, Any], artifacts: dict[str, str] | None = None) -> str:
    return asyncio.run(_inject(template, state, artifacts))


# (id, ADK instruction, state, artifacts or None for no artifact service, what ADK gives: text or an
# exception type, the lint finding codes)
ADK_CLAIMS = [
    ("T016-eats-the-brace", '{"a": {key}}', {"key": "V"}, None, '{"a": V', ["T016"]),
    ("T016-eats-every-brace", '{"a": {"b": {key}}}', {"key": "V"}, None, '{"a": {"b": V', ["T016"]),
    ("T016-help-space", '{"a": {key} }', {"key": "V"}, None, '{"a": V }', []),
    ("T017-substitutes", "{{key}}", {"key": "V"}, None, "V", ["T017"]),
    ("T017-missing-key", "{{key}}", {}, None, KeyError, ["T017"]),
    (
        "T017-adk-docs-example",
        "This is a {adjective} instruction with {{literal_braces}}.",
        {"adjective": "short"},
        None,
        KeyError,  # ADK's documentation says the doubled braces are kept
        ["T017"],
    ),
    ("T017-one-side", "{{key}", {"key": "V"}, None, "V", ["T017"]),
    ("T017-help", "{key}", {"key": "V"}, None, "V", []),
    ("T017-jinja-like-text-is-kept", "{{ customer.first_name }} {% if vip %}", {}, None, None, []),
    ("T018-no-artifact-service", "{artifact.notes}", {}, None, ValueError, ["T018"]),
    ("T018-no-such-artifact", "{artifact.notes}", {}, {}, KeyError, ["T018"]),
    ("T018-loads-it", "{artifact.notes}", {}, {"notes": "N"}, "N", ["T018"]),
    ("T018-optional-no-service", "{artifact.notes?}", {}, None, ValueError, ["T018"]),
    ("T018-help-optional", "{artifact.notes?}", {}, {}, "", ["T018"]),
    ("T019-hyphen", "{user-name}", {"user_name": "V", "user-name": "V"}, None, None, ["T019"]),
    ("T019-hyphen-help", "{user_name}", {"user_name": "V"}, None, "V", []),
    ("T019-bad-scope", "{usr:name} { tmp:step }", {"user:name": "Ada", "temp:step": 1}, None, None, ["T019", "T019"]),
    ("T019-capital-scope", "{User:name}", {"user:name": "Ada", "User:name": "Ada"}, None, None, ["T019"]),
    ("T019-scope-help", "{user:name}", {"user:name": "Ada"}, None, "Ada", []),
    ("T019-spaced-question-mark", "{nick ?}", {"nick": "N"}, None, None, ["T019"]),
    ("T019-doubled-question-mark", "{nick??}", {"nick": "N"}, None, None, ["T019"]),
    ("T019-question-mark-help", "{nick?}", {}, None, "", []),
    ("spaced-placeholder-is-a-placeholder", "{ user:name }", {"user:name": "Ada"}, None, "Ada", []),
    ("json-is-kept", '{"id": "{key}", "ok": true}', {"key": "V"}, None, '{"id": "V", "ok": true}', []),
    ("T020-dollar", "Hi ${name}.", {"name": "Ada"}, None, None, ["T020"]),
    ("T020-dollar-path", "Within ${budget.max}.", {"budget": {"max": 3}, "budget.max": 3}, None, None, ["T020"]),
    ("T020-dotted", "Order {order.id?}.", {"order": {"id": 1}, "order.id": 1}, None, None, ["T020"]),
    ("T020-scoped-path", "{user:profile.name}", {"user:profile": {"name": "A"}}, None, None, ["T020"]),
    ("T020-help", "Hi {name}, within {budget}.", {"name": "Ada", "budget": 3}, None, "Hi Ada, within 3.", []),
    (
        "T031-class-field",
        "It is {CityTime.time_info} in {CityTime.city}.",
        {"CityTime": {"time_info": "10:10", "city": "Paris"}, "time_info": "10:10", "city": "Paris"},
        None,
        None,
        ["T031", "T031"],
    ),
    (
        "T031-from-node",
        "It is <CityTime.time_info from lookup_time_function>.",
        {"lookup_time_function": {"time_info": "10:10"}, "time_info": "10:10"},
        None,
        None,
        ["T031"],
    ),
    ("T031-help", "It is {time_info}.", {"time_info": "10:10"}, None, "It is 10:10.", []),
    # T029 (a state key of the project, known from its code): google-adk sends <topic> as written
    ("T029-angle-brackets", "Write about <topic>.", {"topic": "owls"}, None, None, []),
]


@pytest.mark.parametrize(
    ("source", "state", "artifacts", "adk", "codes"), [c[1:] for c in ADK_CLAIMS], ids=[c[0] for c in ADK_CLAIMS]
)
def test_adk_rules_say_what_adk_does(
    source: str, state: dict[str, Any], artifacts: dict[str, str] | None, adk: Any, codes: list[str]
) -> None:
    """``adk`` None: ADK sends the text as written."""
    assert [d.code for d in lint(source, dialect="adk")] == codes
    if isinstance(adk, type):
        with pytest.raises(adk):
            adk_renders(source, state, artifacts)
    else:
        assert adk_renders(source, state, artifacts) == (source if adk is None else adk)


_ADK_PATTERN_NAMES = re.compile(r"(?<![$\{\\])\{+([^{}]*)\}+")  # ADK's pattern: only to fill state


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(["{", "}", "a", "bc", "user:", "usr:", "-", " ", "?", "$", '"', "artifact."]), max_size=20
    ).map("".join)
)
def test_adk_rules_find_every_place_where_adk_renders_otherwise(source: str) -> None:
    """With every name ADK may look up in state, ADK's output differs from the ADK dialect's (which
    follows ADK's documentation) exactly where T016 or T017 reports, or at a {key} inside {{ ... }};
    ADK fails for want of an artifact service exactly where T018 reports; T019's text reaches the model."""
    state = {m.group(1).strip().removesuffix("?"): "V" for m in _ADK_PATTERN_NAMES.finditer(source)}
    diags = lint(source, dialect="adk", select=["T016", "T017", "T018", "T019"])
    codes = {d.code for d in diags}
    try:
        adk = adk_renders(source, state)
    except ValueError:
        assert "T018" in codes
        return
    assert "T018" not in codes
    reported = {(d.span.start, d.span.end) for d in diags if d.span}
    inside = any((d.span.start, d.span.end) not in reported for d in adk_code_differences(source))
    ours = Template(source, dialect="adk").render(state)
    assert (adk != ours) == bool(codes & {"T016", "T017"} or inside)
    for diag in diags:
        if diag.code == "T019" and diag.span:
            assert source[diag.span.start : diag.span.end] in adk


# --- persistence: ADK's own session services on a SQLite file, across a restart ---------------------

RESTART_TEMPLATE = (
    "# Support for <app:brand>\n\n"
    "<<customer>>\n  name: <user:name>\n  turns so far: <user:turns>\n</customer>\n\n"
    "Order <order_id>. Your last answer: <last_answer?>\n"
    'Answer as JSON: {"status": "..."}'
)


def _expected(*, turns: int, order_id: str, last_answer: str) -> str:
    return (
        "# Support for Acme\n\n"
        f"<customer>\n  name: Ada\n  turns so far: {turns}\n</customer>\n\n"
        f"Order {order_id}. Your last answer: {last_answer}\n"
        'Answer as JSON: {"status": "..."}'
    )


class ReplyingLlm(RecordingLlm):
    """A recording model whose answer is ``reply`` (so ``output_key`` stores something recognisable)."""

    reply: str = "ok"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        RecordingLlm.requests.append(llm_request)
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=self.reply)]))


def _count_turn(callback_context: Any) -> None:
    """An after-agent callback: a ``user:`` write made by the turn itself, stored through ADK's event."""
    callback_context.state["user:turns"] = callback_context.state["user:turns"] + 1


def _adk_database_service(path: Any) -> Any:
    from google.adk.sessions import DatabaseSessionService

    return DatabaseSessionService(f"sqlite+aiosqlite:///{path}")


def _adk_sqlite_service(path: Any) -> Any:
    from google.adk.sessions.sqlite_session_service import SqliteSessionService

    return SqliteSessionService(str(path))


# ADK's DatabaseSessionService (SQLAlchemy, as our sql extra installs it) and the SqliteSessionService
# that `adk web` and `adk run` use for their local sessions (aiosqlite only, always installed with ADK).
ADK_STORES = [("DatabaseSessionService", _adk_database_service), ("SqliteSessionService", _adk_sqlite_service)]


def _require_sqlalchemy() -> None:
    if not (installed("sqlalchemy") and installed("aiosqlite")):
        if os.environ.get("TEMPLATING_REQUIRE_ADK") == "1":
            pytest.fail(
                "TEMPLATING_REQUIRE_ADK=1 but ADK's DatabaseSessionService needs SQLAlchemy (pip install '.[sql]')",
                pytrace=False,
            )
        pytest.skip("ADK's DatabaseSessionService needs SQLAlchemy (pip install '.[sql]')")


async def _turn(service: Any, session_id: str, reply: str) -> str:
    """One turn of a fresh agent and Runner over ``service``; the system instruction the model received."""
    from google.adk.runners import Runner

    RecordingLlm.requests.clear()
    agent = LlmAgent(
        name="support",
        model=ReplyingLlm(reply=reply),
        instruction=instruction(RESTART_TEMPLATE),
        output_key="last_answer",
        after_agent_callback=_count_turn,
    )
    runner = Runner(agent=agent, app_name="shop", session_service=service)
    message = types.Content(role="user", parts=[types.Part(text="Where is my order?")])
    async for _ in runner.run_async(user_id="u1", session_id=session_id, new_message=message):
        pass
    assert len(RecordingLlm.requests) == 1, "the model was called exactly once"
    return sent(RecordingLlm.requests[0])


async def _close(service: Any) -> None:
    close = getattr(service, "close", None)
    if close is not None:
        await close()


@pytest.mark.parametrize("make_store", [c[1] for c in ADK_STORES], ids=[c[0] for c in ADK_STORES])
def test_our_instruction_renders_from_state_adk_persisted_across_a_restart(make_store: Any, tmp_path: Any) -> None:
    """A turn over ADK's own SQLite-backed session service; then a new service object on the same file
    (a restarted process) renders the next instruction from what the first turn stored: the session's
    own keys, ``app:`` and ``user:`` state, and the keys the turn wrote (``output_key`` and a ``user:``
    counter written by a callback)."""
    if make_store is _adk_database_service:
        _require_sqlalchemy()
    path = tmp_path / "adk-sessions.db"

    async def before_restart() -> str:
        first = make_store(path)
        state = {"app:brand": "Acme", "user:name": "Ada", "user:turns": 0, "order_id": "A-1"}
        session = await first.create_session(app_name="shop", user_id="u1", session_id="s1", state=state)
        sent_first = await _turn(first, session.id, "Shipped on Monday.")
        await _close(first)
        return sent_first

    async def after_restart() -> tuple[str, str]:
        restarted = make_store(path)  # a new service object on the same file, in a new event loop
        sent_again = await _turn(restarted, "s1", "It arrives Friday.")
        other = await restarted.create_session(
            app_name="shop", user_id="u1", session_id="s2", state={"order_id": "B-2"}
        )
        sent_other = await _turn(restarted, other.id, "ok")
        stored = await restarted.get_session(app_name="shop", user_id="u1", session_id="s1")
        await _close(restarted)
        assert stored is not None
        assert (stored.state["last_answer"], stored.state["user:turns"]) == ("It arrives Friday.", 3)
        return sent_again, sent_other

    sent_first = asyncio.run(before_restart())
    sent_again, sent_other = asyncio.run(after_restart())
    checks = [
        (sent_first, _expected(turns=0, order_id="A-1", last_answer="")),
        # After the restart: output_key's answer and the counter the callback wrote were read back from the file.
        (sent_again, _expected(turns=1, order_id="A-1", last_answer="Shipped on Monday.")),
        # Another session of the same user: user: and app: state carry over, the session's own keys do not.
        (sent_other, _expected(turns=2, order_id="B-2", last_answer="")),
    ]
    for value, ours in checks:
        assert value == ours or value.startswith(ours + "\n\n"), f"expected {ours!r} first, ADK sent {value!r}"


# --- lint's T014 against google-adk's state_schema=: a key nothing writes raises KeyError, whatever its default -----
# A project written as the samples write one (tests/fixtures/adk_state_project): its real LlmAgents, each with
# state_schema=TripState, render their instructions through ADK's own path (_process_agent_instruction: the
# agent's canonical instruction, then inject_session_state) on the session state the linter says the project
# writes (create_session(state=...), output_keys, a tool's and a callback's writes), each value written through
# ADK's schema-validating State first.

ADK_STATE_PROJECT = Path(__file__).resolve().parent / "fixtures" / "adk_state_project"
_MISSING = re.compile(r"Context variable not found: `([^`]+)`")


@pytest.fixture
def trip_planner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Any]]:
    root = tmp_path / "adk_state_project"
    shutil.copytree(ADK_STATE_PROJECT, root)
    (root / ".git").mkdir()
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(root))
    agent = importlib.import_module("trip_planner.agent")
    yield root, agent
    for name in [name for name in sys.modules if name == "trip_planner" or name.startswith("trip_planner.")]:
        del sys.modules[name]


async def _missing_keys(agent: LlmAgent, state: dict[str, Any]) -> tuple[list[str], str]:
    """The keys for which ADK raises KeyError rendering `agent`'s instruction on `state` (each found, then
    set so the next one shows), and the instruction ADK builds once none is missing."""
    from google.adk.flows.llm_flows.prompt._instructions import _process_agent_instruction

    missing: list[str] = []
    while True:
        sessions = InMemorySessionService()
        given = {**state, **{key: f"<{key}>" for key in missing}}
        session = await sessions.create_session(app_name="trip_planner", user_id="u1", state=given)
        context = InvocationContext(session_service=sessions, invocation_id="i1", agent=agent, session=session)
        try:
            return missing, await _process_agent_instruction(agent, context)
        except KeyError as exc:
            message = str(exc)
        found = _MISSING.search(message)
        assert found is not None, message
        assert found.group(1) not in missing
        missing.append(found.group(1))


def test_t014_reports_exactly_the_keys_adk_raises_key_error_for_under_a_state_schema(
    trip_planner: tuple[Path, Any],
) -> None:
    from google.adk.sessions.state import State
    from pydantic_core import PydanticUndefined

    from templating import lint_project
    from templating.pysource import scan

    root, module = trip_planner
    trip_state = importlib.import_module("trip_planner.state").TripState
    prompts = vars(importlib.import_module("trip_planner.prompt"))
    result = lint_project(["."])
    # no T009 noise on keys something writes; T027: weather, written only by a tool (only if the model calls it)
    assert {d.code for d in result.diagnostics} == {"T014", "T027"}
    reported: dict[str, set[str]] = {}
    for diag in (d for d in result.diagnostics if d.code == "T014"):
        assert diag.span is not None
        assert diag.path is not None
        assert diag.origin is not None
        key = result.sources[diag.path][diag.span.start : diag.span.end].strip("{}")
        reported.setdefault(diag.origin, set()).add(key)
        assert "google-adk raises KeyError" in diag.message
        assert f"write {{{key}?}} only if the agent can do without it" in (diag.help or "")
        assert f"create_session(..., state={{{key!r}: " in (diag.help or "")

    python = sorted(str(p.relative_to(root)) for p in root.rglob("*.py"))
    written = scan(python, root=str(root)).written
    assert written is not None
    state = State({}, {}, schema=trip_state)  # ADK validates each write against the schema: these are valid
    for key in sorted(written):
        default = trip_state.model_fields[key].default
        state[key] = f"<{key}>" if default is PydanticUndefined or default is None else default
    agents = [module.researcher, module.planner, module.summariser]
    raised: dict[str, set[str]] = {}
    for agent in agents:
        assert agent.state_schema is trip_state
        (label,) = [name for name, value in prompts.items() if value is agent.instruction]
        missing, rendered = asyncio.run(_missing_keys(agent, state.to_dict()))
        if missing:
            raised[label] = set(missing)
        for key in written:  # what is written renders
            if "{" + key + "}" in agent.instruction:
                assert str(state[key]) in rendered
    assert raised == reported
    # the two mistakes: a field with a default and a required one, neither filled by ADK
    keys = set().union(*raised.values())
    assert {trip_state.model_fields[key].is_required() for key in keys} == {True, False}


# --- rendering from google-adk's own ReadonlyContext: read from the dict its `state` wraps -----------
# ADK hands an instruction provider `ReadonlyContext(invocation_context)`, whose `state` is a new
# MappingProxyType of the session's state dict on each access. The renderer reads that dict directly
# (templating.renderer._adk_readonly_reader): every render here is compared with the slow path, the
# renderer reading through `ctx.state` as it does for any object.


def adk_readonly_context(state: dict[str, Any]) -> ReadonlyContext:
    """A ReadonlyContext as ADK builds one for an agent turn: a real session from ADK's service, in an
    InvocationContext (see google.adk.flows.llm_flows.prompt._instructions)."""
    sessions = InMemorySessionService()
    session = asyncio.run(sessions.create_session(app_name="fast", user_id="u1", state=state))
    invocation = InvocationContext(
        session_service=sessions, invocation_id="i1", agent=LlmAgent(name="fast", model=RecordingLlm()), session=session
    )
    return ReadonlyContext(invocation)


def outcome(fn: Any) -> tuple[Any, str]:
    """What a render gives: ("text", the text), or the error's type and message."""
    try:
        return "text", fn()
    except Exception as error:
        return type(error), str(error)


def slow_path(fn: Any) -> tuple[Any, str]:
    """`outcome(fn)` with the renderer reading every holder of state through `state_getter` (its `.state`)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(render_module, "_READERS", {})
        patch.setattr(render_module, "_reader_of", lambda kind: render_module.state_getter)
        return outcome(fn)


FAST_STATE: dict[str, Any] = {
    "user:name": "Ada",
    "app:brand": "Acme",
    "order_id": "A-1",
    "count": 3,
    "nothing": None,
    "order": {"id": "A-1", "items": [{"sku": "s1"}, {"sku": "s2"}], "note": None},
    "tags": ["a", "b"],
    "flag": False,
}
# (id, source, dialect)
FAST_CASES = [
    ("plain-and-prefixed", "Hi <user:name> of <app:brand>, order <order_id> (<count>).", "angle"),
    ("values-as-json", "<order> <tags> <nothing>|<flag>", "angle"),
    ("nested-paths", "<order.id> <order.items.1.sku> <order.note>", "angle"),
    ("optional-absent", "[<absent?>] [<temp:step?>] [<order.missing?>] [<order.items.9.sku?>]", "angle"),
    ("missing-with-a-suggestion", "<user:name> <order_idd> <ordr.id> <order.idd>", "angle"),
    ("missing-scoped", "<user:nmae> <app:missing> <temp:step>", "angle"),
    ("adk-dialect", "Hi {user:name}, {order} {tags} {nothing}|{count} [{absent?}]", "adk"),
    ("adk-dialect-missing", "Hi {user:nme} {absent}", "adk"),
]


@pytest.mark.parametrize("missing", ["error", "empty", "keep"])
@pytest.mark.parametrize(("source", "dialect"), [c[1:] for c in FAST_CASES], ids=[c[0] for c in FAST_CASES])
def test_adk_readonly_context_renders_as_the_slow_path(source: str, dialect: Any, missing: Any) -> None:
    ctx = adk_readonly_context(dict(FAST_STATE))
    template = Template(source, dialect=dialect)
    provider = instruction(template, missing=missing, strict=False)
    fast = outcome(lambda: provider(ctx))
    assert fast == slow_path(lambda: provider(ctx))
    assert fast == outcome(lambda: template.render(ctx.state, missing=missing))
    assert fast == outcome(lambda: template.render(ctx, missing=missing))
    assert fast == outcome(lambda: jinja_equivalent_absent(template, ctx, missing))


def jinja_equivalent_absent(template: Template, ctx: Any, missing: Any) -> str:
    """The render with the caller's formatter equal to the default one: read through `ctx.state`, the public view."""
    default = render_module.format_adk_value if template.dialect == "adk" else render_module.format_value
    return template.render(ctx, missing=missing, formatter=default)


def test_the_context_adk_hands_a_provider_takes_the_fast_path() -> None:
    seen: list[Any] = []
    provider = instruction("Hi <user:name>, order <order_id>.")

    def recording(ctx: Any) -> str:
        seen.append(ctx)
        return provider(ctx)

    request, _ = asyncio.run(_run(recording, dict(STATE)))
    assert_sent_first(request, "Hi Ada, order A-1.")
    (ctx,) = seen
    assert type(ctx) is ReadonlyContext
    assert render_module._reader_of(type(ctx)) is render_module._adk_readonly_reader
    assert slow_path(lambda: provider(ctx)) == ("text", "Hi Ada, order A-1.")


class RecordingProxy:
    """Stands in for an object, recording every attribute read of it."""

    def __init__(self, target: Any, reads: list[str]) -> None:
        self._target = target
        self._reads = reads

    def __getattr__(self, name: str) -> Any:
        self._reads.append(name)
        return getattr(self._target, name)


def test_the_fast_path_reads_the_session_state_and_nothing_else() -> None:
    ctx = adk_readonly_context(dict(FAST_STATE))
    reads: list[str] = []
    invocation = ctx._invocation_context
    proxy = RecordingProxy(invocation.model_copy(update={"session": RecordingProxy(invocation.session, reads)}), reads)
    ctx._invocation_context = proxy  # type: ignore[assignment]
    assert instruction("<user:name> <order.id> <absent?>")(ctx) == "Ada A-1 "
    assert reads == ["session", "state"]


def test_a_pending_delta_of_adks_context_is_read_through_its_state() -> None:
    """ADK's ``Context`` (callbacks, tools) is a ReadonlyContext whose ``state`` is ADK's ``State``, with the
    event's pending delta on top of the session's state: it is read through that State, never the session."""
    from google.adk.agents.context import Context
    from google.adk.events.event_actions import EventActions

    invocation = adk_readonly_context(dict(FAST_STATE))._invocation_context
    ctx = Context(invocation, event_actions=EventActions(state_delta={"temp:step": 2, "order_id": "B-2"}))
    ctx.state["count"] = 4  # a write: in the delta and the session's state
    template = Template("<order_id> <temp:step> <count> <order.id> [<absent?>]")
    fast = outcome(lambda: template.render(ctx))
    assert fast == ("text", "B-2 2 4 A-1 []")
    assert fast == slow_path(lambda: template.render(ctx))
    assert fast == outcome(lambda: template.render(ctx.state.to_dict()))
    assert render_module._reader_of(Context) is render_module.state_getter


def test_only_adks_own_state_property_takes_the_fast_path() -> None:
    class Keeps(ReadonlyContext):
        """A subclass that keeps ADK's ``state``: read as ADK's context is."""

    class Redefines(ReadonlyContext):
        @property
        def state(self) -> Any:
            return {"user:name": "from the subclass"}

    class LooksLikeAdks:
        """A class named as ADK's whose ``state`` reads something else."""

        def __init__(self, invocation: Any) -> None:
            self._invocation_context = invocation

        @property
        def state(self) -> Any:
            return {"user:name": "from the look-alike"}

    LooksLikeAdks.__module__ = "google.adk.agents.readonly_context"
    LooksLikeAdks.__qualname__ = "ReadonlyContext"
    invocation = adk_readonly_context(dict(FAST_STATE))._invocation_context
    provider = instruction("<user:name>")
    assert render_module._reader_of(Keeps) is render_module._adk_readonly_reader
    assert provider(Keeps(invocation)) == "Ada"
    assert render_module._reader_of(Redefines) is render_module.state_getter
    assert provider(Redefines(invocation)) == "from the subclass"
    assert render_module._reader_of(LooksLikeAdks) is render_module.state_getter
    assert provider(LooksLikeAdks(invocation)) == "from the look-alike"


def test_a_session_state_that_is_not_a_plain_dict_is_read_through_the_proxy() -> None:
    class Loud(dict[str, Any]):
        def get(self, key: str, default: Any = None) -> Any:
            return "loud " + str(super().get(key, default))

    ctx = adk_readonly_context({})
    ctx.session.state = Loud(FAST_STATE)
    provider = instruction("<user:name>")
    assert provider(ctx) == "loud Ada"  # what MappingProxyType(state).get gives
    assert slow_path(lambda: provider(ctx)) == ("text", "loud Ada")


_FAST_KEYS = ["name", "user:name", "app:brand", "temp:step", "order", "items", "n"]
_FAST_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["id", "x", "0"]), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=60, deadline=None)
@given(
    state=st.dictionaries(st.sampled_from(_FAST_KEYS), _FAST_VALUES, max_size=5),
    uses=st.lists(
        st.tuples(
            st.sampled_from([*_FAST_KEYS, "nmae", "ordr"]), st.sampled_from(["", ".id", ".0", ".x.0"]), st.booleans()
        ),
        min_size=1,
        max_size=5,
    ),
    dialect=st.sampled_from(["angle", "adk"]),
    missing=st.sampled_from(["error", "empty", "keep"]),
)
def test_adk_readonly_context_renders_as_the_slow_path_for_any_state(
    state: dict[str, Any], uses: list[tuple[str, str, bool]], dialect: Any, missing: Any
) -> None:
    if dialect == "adk":
        uses = [(key, "", optional) for key, _, optional in uses]  # the ADK dialect has no paths
    open_, close = ("{", "}") if dialect == "adk" else ("<", ">")
    source = " ".join(f"{open_}{key}{path}{'?' if optional else ''}{close}" for key, path, optional in uses)
    template = Template(source, dialect=dialect)
    ctx = adk_readonly_context(state)
    fast = outcome(lambda: template.render(ctx, missing=missing))
    assert fast == slow_path(lambda: template.render(ctx, missing=missing))
    assert fast == outcome(lambda: template.render(dict(ctx.session.state), missing=missing))
