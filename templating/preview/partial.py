"""The preview without google-adk: each agent's instructions as this project renders them with the state, in run
order, marked as not the exact request.

Without the `adk` extra the request google-adk would build cannot be assembled (its wording is never copied into
this project). What this project can do itself still holds: the agent model gives the agents in run order and
where each key they read is written; a string google-adk injects is filled in as google-adk 2.13 reads its
placeholders (the agent model's `adk_placeholders`), one of templating's providers renders itself. A value nobody
supplies shows as the same marker the full preview uses. Each agent says which parts need the extra. Nothing here
imports google-adk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..errors import TemplatingError
from .assemble import MAX_ROUNDS, Given, Marker, _missing_key
from .result import AgentPreview, KeyRead, KeySource, Reached, marker
from .static import StaticApp

__all__ = ["ADK_MISSING", "NEEDS_ADK", "partial_previews"]

NEEDS_ADK = "pip install 'agent-prompt-templating[adk]'"
ADK_MISSING = (
    "google-adk is not installed: this preview is PARTIAL, not the exact request. It shows each agent's "
    "instructions as templating renders them with the state; google-adk's own parts (the system instruction's "
    "framing, transfer instructions, tool declarations, where the instruction turn goes) need the adk extra: "
    + NEEDS_ADK
)
_ROLES = ("global_instruction", "static_instruction", "instruction")
_REACHED: dict[str, Reached] = {
    "transfer": "transfer",
    "agent_tool": "agent_tool",
    "node": "workflow",
    "run": "custom",
}
_STEP: dict[str, Reached] = {"sequential": "sequence", "loop": "loop", "parallel": "parallel"}


def partial_previews(static: StaticApp, given: Mapping[str, Given]) -> list[AgentPreview]:
    """Each LlmAgent the app reaches, in the agent model's run order, with its instructions rendered by this
    project for the state `given` (the declared initial state or `--state`, plus what earlier agents write)."""
    model = static.model
    previews: list[AgentPreview] = []
    for agent_id in _run_order(static):
        agent = model.agents[agent_id]
        if agent.kind != "llm":
            continue
        path, reached, via = _place(static, agent_id)
        parts, reads, notes = _render(static, agent, given)
        previews.append(
            AgentPreview(
                agent=agent.name or f"agent_{agent.span.line}",
                path=path,
                kind="LlmAgent",
                reached=reached,
                via=via,
                model=m if isinstance(m := agent.call.option("model"), str) else None,
                system_instruction="\n\n".join(parts),
                instruction_turn=None,
                reads=tuple(reads),
                exact=False,
                notes=tuple(notes),
                partial=_needs(static, agent),
                order=len(previews) + 1,
            )
        )
    return previews


def _run_order(static: StaticApp) -> list[str]:
    """The agents in run order: the app's (the agent model's), else those the target's agent reaches, depth first
    in the order of their links."""
    if static.app is not None:
        return list(static.app.agents)
    order: list[str] = []

    def visit(agent_id: str) -> None:
        if agent_id in order or agent_id not in static.model.agents:
            return
        order.append(agent_id)
        for child in static.model.agents[agent_id].children:
            visit(child)

    visit(static.top.id)
    return order


def _place(static: StaticApp, agent_id: str) -> tuple[tuple[str, ...], Reached, str | None]:
    """(the names from the root down to the agent, how it comes to run, the agent that runs it)."""
    agents = static.model.agents
    if static.app is not None:
        chain = [(here, link) for here, link in static.app.path_to(agent_id)]
    else:
        chain = _chain(static, agent_id)
    names = tuple(agents[here].name or "?" for here, _ in chain)
    if len(chain) < 2:
        return names, "root", None
    parent = agents[chain[-2][0]]
    link = chain[-1][1]
    reached = _STEP.get(parent.kind, "custom") if link == "sub_agent" else _REACHED.get(str(link), "custom")
    return names, reached, parent.name


def _chain(static: StaticApp, agent_id: str) -> list[tuple[str, Any]]:
    """From the target's agent down to `agent_id` along children (an agent of no app)."""

    def down(here: str, seen: frozenset[str]) -> list[tuple[str, Any]] | None:
        if here == agent_id:
            return [(here, None)]
        agent = static.model.agents[here]
        for child, link in zip(agent.children, agent.links, strict=False):
            if child in seen or child not in static.model.agents:
                continue
            found = down(child, seen | {child})
            if found is not None:
                return [(here, None), (found[0][0], link), *found[1:]]
        return None

    return down(static.top.id, frozenset({static.top.id})) or [(agent_id, None)]


def _needs(static: StaticApp, agent: Any) -> str:
    """Which parts of this agent's request need google-adk, in words."""
    parts = ["the system instruction's framing (google-adk's identity line and how the instructions are joined)"]
    parent = static.app.parents.get(agent.id) if static.app is not None else None
    if "transfer" in agent.links or (parent is not None and parent[1] == "transfer"):
        parts.append("the transfer instructions")
    if agent.call.tools or "agent_tool" in agent.links:
        parts.append("the tool declarations")
    if agent.call.instruction("static_instruction") is not None:
        parts.append("the instruction turn (google-adk moves the instruction to a user turn beside a static one)")
    return "google-adk is not installed: not the exact request; needs the adk extra: " + "; ".join(parts)


def _instructions(static: StaticApp, agent: Any) -> Iterator[tuple[str, Any, bool]]:
    """(role, ref, injected) of each instruction the agent's model call reads: its tree root's global
    instruction (google-adk ignores a sub-agent's own), its static instruction, its instruction."""
    top = static.model.tree_root(agent)
    own = {given.role: given for given in agent.instructions}
    for role in _ROLES:
        if role == "global_instruction":
            given = next((g for g in top.instructions if g.role == role), None) if top.kind == "llm" else None
        else:
            given = own.get(role)
        if given is not None:
            yield role, given.ref, given.injected


def _render(static: StaticApp, agent: Any, given: Mapping[str, Given]) -> tuple[list[str], list[KeyRead], list[str]]:
    """The agent's instructions rendered, the keys they read (and where from) and notes."""
    values = _Values(static, agent, given)
    parts: list[str] = []
    notes: list[str] = []
    for role, ref, injected in _instructions(static, agent):
        if ref.kind == "text" and ref.text is not None:
            parts.append(_inject(ref.text, values) if injected else ref.text)
        elif ref.kind == "templating" and ref.text is not None:
            text, error = _provide(ref, values)
            if error is not None:
                notes.append(f"its {role} could not be rendered: {error}")
            parts.append(text)
        else:
            written = _source(static, ref).strip() or "it"
            why = ref.reason or "known only at run time"
            notes.append(f"its {role} is {written}: {why}; the preview does not run it")
            parts.append(marker(f"{role} from {written}, known at run time"))
    return parts, values.reads(), notes


def _source(static: StaticApp, ref: Any) -> str:
    text = static.sources.get(ref.path)
    return text[ref.span.start : ref.span.end] if text is not None and ref.span is not None else ""


class _Values:
    """The state one agent sees on its first turn, as the agent model tells it, and the keys asked for."""

    def __init__(self, static: StaticApp, agent: Any, given: Mapping[str, Given]) -> None:
        self.static, self.agent = static, agent
        self.given = {key: item for key, item in given.items() if not key.startswith("temp:") or item.source != "state"}
        self.asked: dict[str, KeyRead] = {}

    def value(self, key: str, *, optional: bool) -> str | None:
        """The text the model sees for `key` (a marker when nobody supplies it), None for an optional key that is
        not supplied."""
        read = self.asked.get(key) or self._read(key, optional)
        self.asked.setdefault(key, read)
        if read.source == "absent":
            return None
        if read.source == "state":
            item = self.given[key].value
            return str(item)
        return read.value

    def lookup(self, key: str) -> Given | None:
        """`key` as a state value for one of templating's providers (None: not supplied)."""
        read = self.asked.get(key) or self._read(key, None)
        self.asked.setdefault(key, read)
        if read.source == "state":
            return self.given[key]
        if read.source in ("earlier", "marker"):
            return Given(Marker(read.value or ""), read.source, read.by)
        return None

    def _read(self, key: str, optional: bool | None) -> KeyRead:
        model, app = self.static.model, self.static.app
        found = model.availability(self.agent, key, app=app) if app is not None else None
        writer = found.writer if found is not None and found.kind == "before" else None
        if writer is not None:
            who = model.agents[writer.agent].name or writer.how
            if writer.how == "output_key":
                return KeyRead(key, "earlier", who, marker(f"output of {who}"), optional)
            return KeyRead(key, "marker", writer.how, marker(f"set by {writer.how}"), optional)
        if key in self.given:
            item = self.given[key]
            source: KeySource = "state"
            if item.source in ("earlier", "marker"):
                source = "earlier" if item.source == "earlier" else "marker"
            shown = item.value if isinstance(item.value, Marker) else None
            return KeyRead(key, source, item.by, shown, optional)
        if optional is None or optional:
            return KeyRead(key, "absent", optional=optional)
        return KeyRead(key, "missing", value=marker(f"missing: {key}"), optional=False)

    def missing(self, key: str) -> str:
        read = KeyRead(key, "missing", value=marker(f"missing: {key}"), optional=False)
        self.asked[key] = read
        return read.value or ""

    def reads(self) -> list[KeyRead]:
        return list(self.asked.values())


def _inject(text: str, values: _Values) -> str:
    """`text` with its placeholders filled in as google-adk 2.13 reads them (`{key}`, `{key?}`, `{app:key}`)."""
    from ..agent_model.model import adk_placeholders

    out: list[str] = []
    at = 0
    for key, optional, span in adk_placeholders(text):
        start, end = span.start, span.end
        out.append(text[at:start])
        shown = values.value(key, optional=optional)
        out.append("" if shown is None else shown)
        at = end
    out.append(text[at:])
    return "".join(out)


class _Lookup(dict[str, Any]):
    """The state a provider renders against: each key it asks for is looked up on demand."""

    def __init__(self, values: _Values, marked: Mapping[str, str]) -> None:
        super().__init__()
        self.seen = values
        self.marked = marked

    def _fill(self, key: object) -> None:
        if isinstance(key, str) and not dict.__contains__(self, key):
            if key in self.marked:
                dict.__setitem__(self, key, Marker(self.marked[key]))
                return
            found = self.seen.lookup(key)
            if found is not None:
                dict.__setitem__(self, key, found.value)

    def __contains__(self, key: object) -> bool:
        self._fill(key)
        return dict.__contains__(self, key)

    def __getitem__(self, key: str) -> Any:
        self._fill(key)
        return dict.__getitem__(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        self._fill(key)
        return dict.get(self, key, default)

    def keys(self) -> Any:  # listed (for a hint on a missing key): the given keys, not counted as read
        for key, item in self.seen.given.items():
            if not dict.__contains__(self, key):
                dict.__setitem__(self, key, item.value)
        return dict.keys(self)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())


def _provide(ref: Any, values: _Values) -> tuple[str, str | None]:
    """One of templating's providers, rendered against the state (a marker for each required key nobody
    supplies); the text and, when it cannot be rendered, why."""
    make = _provider(ref)
    marked: dict[str, str] = {}
    for _ in range(MAX_ROUNDS):
        lookup = _Lookup(values, marked)
        try:
            text = make(lookup)
        except Exception as exc:
            missing = _missing_key(exc)
            if missing is None or missing[0] != "state" or missing[1] in marked:
                shown = exc.message if isinstance(exc, TemplatingError) else str(exc)
                return marker(f"{ref.kind} instruction, not rendered"), f"{type(exc).__name__}: {shown}"
            marked[missing[1]] = values.missing(missing[1])
            continue
        return text, None
    return marker("instruction, not rendered"), f"it asked for more than {MAX_ROUNDS} keys that nobody supplies"


def _provider(ref: Any) -> Callable[[Any], str]:
    from ..jinja_mode.mode import jinja
    from ..providers import instruction
    from ..template import Template

    if ref.dialect == "jinja":
        return jinja(ref.text)
    return instruction(Template(ref.text, dialect=ref.dialect), strict=False)
