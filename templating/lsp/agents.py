"""What the editor says of an app's run order, from the agent model (`templating.agent_model`): where an agent runs
in its app, what it reads and writes, who writes a key before the agent that reads it, and the keys an
instruction's app has. Words only: `answers` turns them into hovers, locations and completions."""

from __future__ import annotations

import os
import re
import weakref
from dataclasses import dataclass
from pathlib import Path

from ..agent_model import Agent, AgentModel, App, Availability, StateWrite
from ..nodes import Span
from ..pysource import InstructionKey

__all__ = [
    "AgentPlace",
    "agent_at",
    "app_keys",
    "describe_agent",
    "describe_key",
    "describe_readers",
    "key_writers",
    "ordinal",
]

_MAX_SHOWN = 12  # agents listed in one line of a hover before "..."
_MAX_SECTIONS = 4  # readers (agent, app) described in a key's hover before "and N more"
_PHASE_WORDS = {
    "before": "before its instruction is read",
    "model": "at its model call (a model callback)",
    "tool": "by a tool, only if its model calls it",
    "after": "after its reply",
    "step": "at a step of its _run_async_impl",
    "node": "at a node of the workflow",
    "maybe": "at a point not known",
}
_KIND_WORDS = {
    "llm": "LlmAgent",
    "sequential": "SequentialAgent",
    "parallel": "ParallelAgent",
    "loop": "LoopAgent",
    "workflow": "Workflow",
    "custom": "custom agent",
    "app": "App",
    "join": "JoinNode",
    "unknown": "agent known only at run time",
}


def ordinal(number: int) -> str:
    """`1st`, `2nd`, `3rd`, `11th`, `22nd`."""
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def _absolute(path: str) -> str:
    return os.path.abspath(path)


class _Lookups:
    """What the answers look up in one agent model, worked out once per model (once per edit): its agents by
    file and by call, and the agents reading each instruction."""

    def __init__(self, model: AgentModel) -> None:
        self.by_file: dict[str, list[Agent]] = {}
        self.by_call: dict[str, list[Agent]] = {}
        self.readers: dict[InstructionKey, list[Agent]] = {}
        self.writes_at: dict[tuple[str, int], list[StateWrite]] = {}  # by file and offset of the key
        for agent in model.agents.values():
            for write in agent.writes:
                if write.key is not None and write.span is not None:
                    self.writes_at.setdefault((_absolute(write.path), write.span.start), []).append(write)
            self.by_call.setdefault(agent.call.id, []).append(agent)
            if agent.kind != "unknown":
                self.by_file.setdefault(_absolute(agent.path), []).append(agent)
            for read in model.reads(agent):
                if read.instruction is not None:
                    found = self.readers.setdefault(read.instruction, [])
                    if not found or found[-1] is not agent:
                        found.append(agent)


_LOOKUPS: weakref.WeakKeyDictionary[AgentModel, _Lookups] = weakref.WeakKeyDictionary()


def _lookups(model: AgentModel) -> _Lookups:
    found = _LOOKUPS.get(model)
    if found is None:
        found = _LOOKUPS[model] = _Lookups(model)
    return found


@dataclass(frozen=True, slots=True)
class AgentPlace:
    """An agent named at a place of a file: the agents of that call (one per instance of a custom agent's), and
    the characters naming it (file offsets)."""

    agents: tuple[Agent, ...]
    start: int
    end: int


def agent_at(model: AgentModel, path: str, text: str, offset: int) -> AgentPlace | None:
    """The agent named at `offset` of the Python file `path` (absolute) whose text is `text`: its call's `name=`
    literal, the variable the call is bound to, an expression naming it (`sub_agents=[writer]`, `root_agent=...`),
    or a module-level name bound to an agent of the file."""
    lookups = _lookups(model)
    here, by_call = lookups.by_file.get(path, []), lookups.by_call
    best: AgentPlace | None = None
    for agent in sorted(here, key=lambda a: a.span.end - a.span.start):  # the innermost call first
        span = agent.span
        if not span.start <= offset <= span.end:
            continue
        name = agent.call.name
        if name:
            found = re.search(rf"\bname\s*=\s*([\"']){re.escape(name)}\1", text[span.start : span.end])
            if found is not None:
                start = span.start + found.start(1)
                end = span.start + found.end()
                if start <= offset <= end:
                    return AgentPlace(tuple(by_call[agent.call.id]), start, end)
        if best is None:
            best = _ref_at(model, agent, path, offset, by_call)
    if best is not None:
        return best
    line_start = text.rfind("\n", 0, offset) + 1
    for agent in here:  # the variable the call is assigned to: `writer = LlmAgent(`
        before = text[text.rfind("\n", 0, agent.span.start) + 1 : agent.span.start]
        for bound in agent.call.bound:
            found = re.match(rf"\s*({re.escape(bound)})\s*(?::[^=]*)?=\s*$", before)
            if found is not None:
                start = agent.span.start - len(before) + found.start(1)
                if start <= offset <= start + len(bound):
                    return AgentPlace(tuple(by_call[agent.call.id]), start, start + len(bound))
    word = re.search(r"[A-Za-z_]\w*$", text[line_start:offset])
    rest = re.match(r"\w*", text[offset:])
    if word is not None and rest is not None:
        name = word.group() + rest.group()
        for agent in here:
            if name in agent.call.bound and agent.call.in_function is None:
                start = offset - len(word.group())
                return AgentPlace(tuple(by_call[agent.call.id]), start, start + len(name))
    return None


def _ref_at(
    model: AgentModel, agent: Agent, path: str, offset: int, by_call: dict[str, list[Agent]]
) -> AgentPlace | None:
    """An expression of `agent`'s call that names an agent (`sub_agents=[writer]`, `AgentTool(agent=...)`,
    an App's `root_agent=`) at `offset`."""
    call = agent.call
    refs = [*(call.sub_agents or ()), *(call.tools or ())]
    refs += [ref for _, given in call.fields for ref in given]
    refs += [edge.source for edge in call.edges or ()] + [edge.target for edge in call.edges or ()]
    for ref in refs:
        if ref.kind != "agent" or ref.span is None or ref.target not in by_call:
            continue
        if _absolute(ref.path or agent.path) == path and ref.span.start <= offset <= ref.span.end:
            return _place_of(ref.target, ref.span, by_call)
    return None


def _place_of(call_id: str, span: Span, by_call: dict[str, list[Agent]]) -> AgentPlace | None:
    agents = by_call.get(call_id)
    return AgentPlace(tuple(agents), span.start, span.end) if agents else None


# -- where an agent runs


def _shown(agent: Agent) -> str:
    return f"`{agent.shown}`" if agent.name else agent.shown


def place(model: AgentModel, app: App, agent: Agent) -> str:
    """Where `agent` runs in `app`, in words: `the root agent of the app blog`, `runs 2nd of 3 in blog's
    sub_agents, after writer`, `runs only if triage's model transfers to it`."""
    if agent.id == app.root:
        return f"the root agent of the app `{app.name}`"
    parent_link = app.parents.get(agent.id)
    if parent_link is None:
        return f"an agent of the app `{app.name}`"
    parent = model.agents[parent_link[0]]
    link = parent_link[1]
    siblings = [c for c, how in zip(parent.children, parent.links, strict=True) if how == link]
    number = siblings.index(agent.id) + 1 if agent.id in siblings else 0
    total = len(siblings)
    previous = model.agents[siblings[number - 2]] if number > 1 else None
    owner = _shown(parent)
    if link == "transfer":
        return f"runs only if {owner}'s model transfers to it"
    if link == "agent_tool":
        return f"runs only if {owner}'s model calls it as a tool (AgentTool)"
    if link == "node":
        return f"a node of the workflow {owner}"
    if link == "run":
        return f"run by {owner}'s _run_async_impl"
    if parent.kind == "parallel":
        others = [_shown(model.agents[c]) for c in siblings if c != agent.id]
        return f"runs alongside {_listed(others)} in {owner}'s sub_agents (a ParallelAgent)"
    where = f"runs {ordinal(number)} of {total} in {owner}'s sub_agents"
    if parent.kind == "loop":
        where += " (a LoopAgent's body, repeated)"
    return where + (f", after {_shown(previous)}" if previous is not None else "")


def _listed(items: list[str]) -> str:
    if len(items) > _MAX_SHOWN:
        items = [*items[:_MAX_SHOWN], f"{len(items) - _MAX_SHOWN} more"]
    return ", ".join(items) if items else "nothing"


def _path(model: AgentModel, app: App, agent: Agent) -> str:
    chain = [model.agents[a] for a, _ in app.path_to(agent.id) if a in model.agents]
    return " > ".join(f"**{_shown(a)}**" if a is agent else _shown(a) for a in chain)


def _first_turn(model: AgentModel, app: App, agent: Agent) -> str | None:
    calls = model.first_turn(app)
    if not calls:
        return None
    names = [f"**{_shown(a)}**" if a is agent else _shown(a) for a in calls]
    if len(names) > _MAX_SHOWN:
        names = [*names[:_MAX_SHOWN], "…"]
    return "Model calls on the first turn: " + " → ".join(names)


# -- what an agent reads and writes


def _relative(path: str, root: Path) -> str:
    absolute = _absolute(path)
    try:
        return Path(absolute).relative_to(root).as_posix()
    except ValueError:
        return absolute


def describe_write(model: AgentModel, write: StateWrite, root: Path) -> str:
    """`output_key='critique'` of agent `critic` at `sub_agents/critic.py:10`."""
    where = f"`{_relative(write.path, root)}" + (f":{write.span.line}`" if write.span else "`")
    owner = model.agents.get(write.agent)
    of = f" of agent {_shown(owner)}" if owner is not None else ""
    if write.how == "output_key":
        return f"`output_key={write.key!r}`{of} at {where}"
    return f"`{write.how}`{of} at {where}"


def _availability_line(found: Availability, *, optional: bool, jinja: bool = False) -> str:
    """`found` in words, with what a missing key does there: google-adk's KeyError, or for a `jinja(...)`
    instruction (`jinja`) templating's JinjaUndefinedError."""
    text = found.order_text
    if found.kind in ("given", "before"):
        return text
    if optional:
        return text + (
            " (guarded in the template: nothing raised)" if jinja else " (optional: google-adk inserts nothing then)"
        )
    if found.certain:
        error = "the Jinja2 instruction raises JinjaUndefinedError" if jinja else "google-adk raises a KeyError"
        return text + f": **{error} on the first turn**"
    return text


def describe_agent(model: AgentModel, agent: Agent, root: Path) -> str:
    """The hover of an agent: its kind and app, where it runs, the model calls of the first turn, what it reads
    (each key with who writes it before it) and what it writes (and when)."""
    head = f"**agent {_shown(agent)}** ({_KIND_WORDS.get(agent.kind, agent.kind)})"
    body = [head]
    apps = model.apps_of(agent)
    if not apps:
        body.append("In no app: no root agent reaches it, so it has no run order.")
    for app in apps[:_MAX_SECTIONS]:
        lines = [f"App `{app.name}`: {place(model, app, agent)}.", _path(model, app, agent)]
        turn = _first_turn(model, app, agent)
        if turn is not None and agent.kind == "llm":
            lines.append(turn)
        body.append("  \n".join(lines))
    if len(apps) > _MAX_SECTIONS:
        body.append(f"Also in {len(apps) - _MAX_SECTIONS} more app(s).")
    reads = list({read.key: read for read in model.reads(agent)}.values())
    if reads:
        first = apps[0] if apps else None
        items = []
        for read in reads:
            found = model.availability(agent, read.key, app=first)
            line = _availability_line(found, optional=read.optional, jinja=read.dialect == "jinja")
            items.append(f"- `{read.key}`: {line}")
        body.append("Reads:\n" + "\n".join(items))
    elif agent.kind == "llm":
        body.append("Reads no state key.")
    if agent.writes:
        items = []
        for write in agent.writes:
            key = f"`{write.key}`" if write.key is not None else f"a key known only at run time ({write.reason})"
            where = f" at `{_relative(write.path, root)}:{write.span.line}`" if write.span else ""
            items.append(f"- {key}: `{write.how}`, {_PHASE_WORDS.get(write.phase, write.phase)}{where}")
        body.append("Writes:\n" + "\n".join(items))
    if agent.unknown:
        body.append("Known only at run time: " + "; ".join(agent.unknown[:3]))
    return "\n\n".join(body)


# -- who writes a key an instruction reads


def readers(model: AgentModel, instruction: InstructionKey | None) -> list[tuple[Agent, App]]:
    """Each agent of an app whose model call reads `instruction`, with each app it is in."""
    if instruction is None:
        return []
    agents = _lookups(model).readers.get(instruction, ())
    return [(agent, app) for agent in agents for app in model.apps_of(agent)]


def describe_key(model: AgentModel, key: str, instruction: InstructionKey | None, root: Path) -> str | None:
    """For a key an instruction reads, by each agent of an app that reads it: where it runs, whether the key is
    there when it does (who writes it before it, or first after it), and the writers in its app in run order.
    None: no agent of any app reads the instruction."""
    found = readers(model, instruction)
    if not found:
        return None
    sections = []
    for agent, app in found[:_MAX_SECTIONS]:
        available = model.availability(agent, key, app=app)
        reads = [r for r in model.reads(agent) if r.key == key and r.instruction == instruction]
        optional = all(r.optional for r in reads)
        jinja = any(r.dialect == "jinja" for r in reads)
        lines = [
            f"In app `{app.name}`, read by {_shown(agent)}: {place(model, app, agent)}.",
            _availability_line(available, optional=optional, jinja=jinja) + ".",
        ]
        writes = model.writers(key, app)
        if writes:
            listed = "\n".join(f"- {describe_write(model, w, root)}" for w in writes)
            lines.append("Written in this app, in run order:\n" + listed)
        sections.append("\n\n".join(lines))
    if len(found) > _MAX_SECTIONS:
        sections.append(f"And {len(found) - _MAX_SECTIONS} more agent(s) reading it.")
    return "\n\n".join(sections)


def key_writers(model: AgentModel, key: str, instruction: InstructionKey | None) -> list[StateWrite] | None:
    """The writes of `key` in the apps of the agents reading `instruction`, in run order (app by app), each once;
    None when no agent of any app reads it (the caller then answers for the whole project)."""
    found = readers(model, instruction)
    if not found:
        return None
    out: dict[tuple[str, int], StateWrite] = {}
    for app in dict.fromkeys(app for _, app in found):
        for write in model.writers(key, app):
            out.setdefault((_absolute(write.path), write.span.start if write.span else -1), write)
    return list(out.values())


def app_keys(model: AgentModel, instruction: InstructionKey | None) -> dict[str, StateWrite | None] | None:
    """The keys the apps of the agents reading `instruction` have: each written by one of their agents (with its
    first write in run order) or given by their declared initial state (None). None when no agent of any app
    reads it."""
    found = readers(model, instruction)
    if not found:
        return None
    keys: dict[str, StateWrite | None] = {}
    for app in dict.fromkeys(app for _, app in found):
        for member in app.agents:
            for write in model.agents[member].writes:
                if write.key is not None and keys.get(write.key) is None:
                    keys[write.key] = write
        keys.update({key: None for key in sorted(model.initial_state(app).keys) if key not in keys})
    return keys


# -- who reads a key a write writes


def describe_readers(model: AgentModel, path: str, start: int, key: str) -> str | None:
    """For the write of `key` at offset `start` of the file `path` (absolute), made by agents of apps: in each
    of their apps, the agents whose model calls read `key`, in run order, each with where it runs and whether
    the key is there when it does. None: no agent of any app makes that write (the caller then answers for
    the whole project)."""
    writes = [w for w in _lookups(model).writes_at.get((path, start), ()) if w.key == key]
    apps = list(dict.fromkeys(app for w in writes for app in model.apps_of(w.agent)))
    if not apps:
        return None
    sections = []
    for app in apps[:_MAX_SECTIONS]:
        items = []
        for member in app.agents:
            agent = model.agents[member]
            reads = [r for r in model.reads(agent) if r.key == key]
            if not reads:
                continue
            found = model.availability(agent, key, app=app)
            jinja = any(r.dialect == "jinja" for r in reads)
            line = _availability_line(found, optional=all(r.optional for r in reads), jinja=jinja)
            labels = ", ".join(dict.fromkeys(f"`{r.instruction.name}`" for r in reads if r.instruction is not None))
            how = f" (its {reads[0].role.replace('_', ' ')} {labels})" if labels else ""
            items.append(f"- {_shown(agent)}{how}: {place(model, app, agent)}; {line}")
        if len(items) > _MAX_SHOWN:
            items = [*items[:_MAX_SHOWN], f"- and {len(items) - _MAX_SHOWN} more agent(s)"]
        if items:
            sections.append(f"In app `{app.name}`, read by, in run order:\n" + "\n".join(items))
        else:
            sections.append(f"In app `{app.name}`, no agent's instruction reads it.")
    if len(apps) > _MAX_SECTIONS:
        sections.append(f"Also written in {len(apps) - _MAX_SECTIONS} more app(s).")
    return "\n\n".join(sections)
