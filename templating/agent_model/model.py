"""The agent model of a project: its agents and apps, what each agent reads, the availability of each key it reads
on the first turn, the writers of a key in run order, each app's initial state, and the schemas google-adk
enforces. [`build`][templating.agent_model.build] makes it from a scan."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import TemplatingError
from ..linter.config import LintConfig
from ..linter.project import Walker
from ..nodes import Span
from ..places import line_starts, span_at
from ..pysource import Instruction, InstructionKey, Scan, Skipped
from ..pysource.found import Kind as Dialect
from ..template import parse
from .enforced import EnforcedSchema, enforced_schema
from .facts import Agent, AgentInstruction, App, StateWrite
from .graph import Graph, build_graph
from .initial import InitialState, initial_states
from .order import Availability, RunOrder

__all__ = ["AgentModel", "Read", "build"]

_PARENT_LINKS = ("sub_agent", "transfer", "run")  # the links google-adk sets a parent_agent along


@dataclass(frozen=True, slots=True)
class Read:
    """A key an agent's model call reads: `key` (the state key looked up: `user:profile` for
    `{user:profile.name}`), whether the placeholder is `optional`, the instruction's `role`, the id of the agent
    that gives it (`of`: the tree root's, for a global instruction), the instruction's identity (`instruction`,
    None when the scan did not record it) and dialect, and the placeholder's span in the instruction's text."""

    key: str
    optional: bool
    role: str
    of: str
    instruction: InstructionKey | None
    dialect: Dialect
    span: Span


# google-adk 2.13's placeholder (flows/llm_flows/prompt/_instructions_utils.py: _TEMPLATE_VAR_PATTERN)
_ADK_PLACEHOLDER = re.compile(r"(?<![\$\{\\]){+[^{}]*}+")
_ADK_PREFIXES = ("app", "user", "temp")


# adk_placeholders by text: an edit builds the model again, and every agent's instruction but the edited one has the
# same text (kept while the process lives, up to _KEEP texts: then started again)
_PLACEHOLDERS: dict[str, tuple[tuple[str, bool, Span], ...]] = {}
_KEEP = 20_000


def adk_placeholders(text: str) -> list[tuple[str, bool, Span]]:
    """The state keys google-adk 2.13 looks up when it injects `text`, as it reads them: each run of braces
    around a name (`{key}`, `{{key}}`, `{ key? }`), the name a state name (an identifier, or `app:`/`user:`/
    `temp:` and one); `{artifact.x}` loads an artifact, anything else stays as written. With whether it is
    optional, and its span in `text`."""
    known = _PLACEHOLDERS.get(text)
    if known is None:
        if len(_PLACEHOLDERS) >= _KEEP:
            _PLACEHOLDERS.clear()
        known = _PLACEHOLDERS[text] = tuple(_adk_placeholders(text))
    return list(known)


def _adk_placeholders(text: str) -> list[tuple[str, bool, Span]]:
    out: list[tuple[str, bool, Span]] = []
    starts = line_starts(text)
    for match in _ADK_PLACEHOLDER.finditer(text):
        name = match.group().lstrip("{").rstrip("}").strip()
        optional = name.endswith("?")
        name = name.removesuffix("?")
        if name.startswith("artifact."):
            continue
        parts = name.split(":")
        valid = (
            name.isidentifier()
            if len(parts) == 1
            else (len(parts) == 2 and parts[0] in _ADK_PREFIXES and parts[1].isidentifier())
        )
        if valid:
            out.append((name, optional, span_at(starts, match.start(), match.end())))
    return out


def _read(given: AgentInstruction) -> bool:
    """Whether an agent's model call reads the state keys of `given`: google-adk injects it, or it is templating's
    Jinja2 provider (`jinja(...)`), which google-adk calls and which renders the state itself."""
    return given.injected or (given.ref.kind == "provider" and given.ref.dialect == "jinja")


class AgentModel:
    """One model of a project's ADK apps, built from its code and Agent Config files (see the package's
    description). Agents are named by id (`Agent.id`); every method taking an agent takes an `Agent` or its id."""

    def __init__(self, graph: Graph, initial: Mapping[str, InitialState], scan: Scan) -> None:
        self.graph = graph
        self._order = RunOrder(graph)
        self._initial = dict(initial)
        self._apps_of: dict[str, list[App]] = {}
        for app in graph.apps:
            for member in app.agents:
                self._apps_of.setdefault(member, []).append(app)
        self._parent: dict[str, str] = {}
        for agent in graph.agents.values():
            for child, link in zip(agent.children, agent.links, strict=True):
                if link in _PARENT_LINKS:
                    self._parent.setdefault(child, agent.id)
        # each agent's reads with the agent and its tree root they were worked out for (those of the model before
        # that still hold are taken by `_keep_reads`)
        self._read_for: dict[str, tuple[Agent, Agent, tuple[Read, ...]]] = {}
        self.skipped: tuple[Skipped, ...] = tuple(scan.config_skipped)
        self.instructions: tuple[Instruction, ...] = tuple(scan.config_instructions)

    # -- what there is

    @property
    def apps(self) -> tuple[App, ...]:
        """Every app, by folder and name."""
        return tuple(self.graph.apps)

    @property
    def agents(self) -> Mapping[str, Agent]:
        """Every agent, by id (those of no app included)."""
        return self.graph.agents

    def agent(self, agent: Agent | str) -> Agent:
        return agent if isinstance(agent, Agent) else self.graph.agents[agent]

    def app_of(self, agent: Agent | str) -> App | None:
        """The app `agent` is part of (the first, by folder and name, when several reach it); None: no root
        reaches it."""
        apps = self._apps_of.get(self.agent(agent).id)
        return apps[0] if apps else None

    def apps_of(self, agent: Agent | str) -> tuple[App, ...]:
        return tuple(self._apps_of.get(self.agent(agent).id, ()))

    def app_named(self, name: str) -> App | None:
        """The app called `name`: its name, else the name of its folder (an ADK app package's, as `adk web` lists
        it), else its root agent's name."""
        for app in self.graph.apps:
            if app.name == name:
                return app
        for app in self.graph.apps:
            if os.path.basename(app.folder) == name:
                return app
        return next((app for app in self.graph.apps if app.root_name == name), None)

    def agents_in(self, path: str) -> tuple[Agent, ...]:
        """The agents whose call is in the file `path` (as the scan names it)."""
        return tuple(a for a in self.graph.agents.values() if a.path == path)

    def agents_reading(self, instruction: InstructionKey) -> tuple[Agent, ...]:
        """The agents whose model calls read the instruction `instruction` (a global instruction: every LlmAgent
        of its tree)."""
        return tuple(a for a in self.graph.agents.values() if any(r.instruction == instruction for r in self.reads(a)))

    def tree_root(self, agent: Agent | str) -> Agent:
        """The root of `agent`'s tree as google-adk walks it (`parent_agent` links: sub-agents, not AgentTool
        agents or Workflow nodes): whose global instruction its model calls read."""
        here = self.agent(agent).id
        seen = {here}
        while here in self._parent and self._parent[here] not in seen:
            here = self._parent[here]
            seen.add(here)
        return self.graph.agents[here]

    # -- what an agent reads

    def reads(self, agent: Agent | str) -> tuple[Read, ...]:
        """The keys `agent`'s model calls read, in order: its instruction's (if google-adk injects it), then its
        tree root's global instruction (if that root is an LlmAgent)."""
        here = self.agent(agent)
        known = self._read_for.get(here.id)
        if known is not None and known[0] is here:
            return known[2]
        top = self.tree_root(here)
        reads: list[Read] = []
        if here.kind == "llm":
            instructions = [i for i in here.instructions if i.role == "instruction" and _read(i)]
            if top.kind == "llm":
                instructions += [i for i in top.instructions if i.role == "global_instruction" and _read(i)]
            for given in instructions:
                ref = given.ref
                if ref.text is None:
                    continue
                if ref.dialect == "jinja":  # templating's Jinja2 provider reads state itself, when google-adk calls it
                    from ..jinja_mode.reads import state_reads as jinja_reads  # Jinja2: only for such an instruction

                    starts = line_starts(ref.text)
                    for jread in jinja_reads(ref.text):
                        span = span_at(starts, jread.start, jread.end)
                        reads.append(Read(jread.key, not jread.required, given.role, given.of, ref.key, "jinja", span))
                    continue
                if ref.kind == "text":  # google-adk injects it: its own placeholders, exactly
                    for key, optional, span in adk_placeholders(ref.text):
                        reads.append(Read(key, optional, given.role, given.of, ref.key, ref.dialect, span))
                    continue
                try:
                    template = parse(ref.text, dialect=ref.dialect)
                except TemplatingError:
                    continue  # not a template this dialect reads: its syntax finding is the linter's
                for node in template.placeholders:
                    reads.append(Read(node.name, node.optional, given.role, given.of, ref.key, ref.dialect, node.span))
        found = tuple(reads)
        if self.graph.agents.get(here.id) is here:  # (an agent of another model is not this one's)
            self._read_for[here.id] = (here, top, found)
        return found

    def _kept_reads(self, agent: str, reads: tuple[Read, ...]) -> bool:
        """Whether `reads` is the very object `reads(agent)` gives (taken from the model before, or worked out
        already), without working anything out: for the order rules' index (`OrderIndex.of`) to take what it made
        of an agent's reads in the model before."""
        known = self._read_for.get(agent)
        return known is not None and known[2] is reads and known[0] is self.graph.agents.get(agent)

    def _keep_reads(self, before: AgentModel) -> None:
        """Take the reads `before` worked out that hold here: an agent's reads are made from the agent and its tree
        root, so they hold for each agent whose `parent_agent` chain (itself up to its tree root) meets no agent that
        is not the very same object in both models (made again, added, gone) nor one whose parent differs (the chain
        is then the same, ending at the same root object). The others are those below such an agent."""
        agents, was = self.graph.agents, before.graph.agents
        moved = {key for key, agent in agents.items() if was.get(key) is not agent}
        parents, parents_before = self._parent, before._parent
        if parents != parents_before:
            moved.update(key for key in {*parents, *parents_before} if parents.get(key) != parents_before.get(key))
        stack = list(moved)
        while stack:  # down the parent_agent links: each agent whose chain meets one moved
            here = agents.get(stack.pop())
            if here is None:
                continue
            for child, link in zip(here.children, here.links, strict=True):
                if link in _PARENT_LINKS and child not in moved and parents.get(child) == here.id:
                    moved.add(child)
                    stack.append(child)
        self._read_for = {
            key: known for key, known in before._read_for.items() if key not in moved and agents.get(key) is known[0]
        }

    # -- run order

    def availability(self, agent: Agent | str, key: str, *, app: App | None = None) -> Availability:
        """Whether `key` is in state when `agent` injects its instruction on the first turn of `app` (default:
        `app_of(agent)`), and why (see [`Availability`][templating.agent_model.Availability]). An agent of no
        app gets an answer from the whole project's writes, without an order: `maybe` when something writes the
        key, `unknown` when a write's key is known only at run time, else `nowhere`, never certain."""
        here = self.agent(agent)
        app = app if app is not None else self.app_of(here)
        if app is None:
            return self._unordered(here, key)
        writes, unknown = [], []
        for member in app.agents:
            for write in self.graph.agents[member].writes:
                if write.key == key:
                    writes.append(write)
                elif write.key is None:
                    unknown.append(write)
        initial = self._initial.get(app.id)
        given: tuple[str, bool] | None = None
        if initial is not None and not key.startswith("temp:"):
            source = initial.source_of(key)
            if source is not None:
                given = (source.text, True)
            elif initial.open:
                open_source = next(s for s in initial.sources if s.keys is None)
                given = (open_source.text, False)
        elsewhere = [w for w in self.graph.elsewhere if w.key == key]
        return self._order.availability(app, here.id, key, writes, unknown, given=given, elsewhere=elsewhere)

    def _unordered(self, agent: Agent, key: str) -> Availability:
        writes = [w for a in self.graph.agents.values() for w in a.writes if w.key == key]
        writes += [w for w in self.graph.elsewhere if w.key == key]
        if writes:
            text = f"`{key}` is written by {writes[0].how} at {writes[0].path} ({agent.shown} is in no app: no order)"
            return Availability("maybe", key, agent.id, writes[0], text, False)
        unknown = [w for a in self.graph.agents.values() for w in a.writes if w.key is None]
        unknown += [w for w in self.graph.elsewhere if w.key is None]
        if unknown:
            text = (
                f"`{key}` may be written by {unknown[0].how} at {unknown[0].path}, whose key is known only at run time"
            )
            return Availability("unknown", key, agent.id, unknown[0], text, False)
        return Availability("nowhere", key, agent.id, None, f"nothing in the project writes `{key}`", False)

    def writers(self, key: str, app: App | str) -> tuple[StateWrite, ...]:
        """The writes of `key` made by the agents of `app`, in run order (by agent, then before its instruction,
        its steps, its model callbacks, its tools, after its reply)."""
        here = app if isinstance(app, App) else next(a for a in self.graph.apps if a.id == app)
        order = {agent: number for number, agent in enumerate(here.agents)}
        found = [w for a in here.agents for w in self.graph.agents[a].writes if w.key == key]
        return tuple(sorted(found, key=lambda w: self._order.write_position(order, w)))

    def first_turn(self, app: App | str) -> tuple[Agent, ...]:
        """The LlmAgents whose model google-adk certainly calls on `app`'s first turn (should no KeyError stop it),
        in the order of their first call: not those reached only if a model chooses them, a route not taken, a
        condition of a custom orchestrator."""
        here = app if isinstance(app, App) else next(a for a in self.graph.apps if a.id == app)
        return tuple(
            self.graph.agents[a]
            for a in here.agents
            if self.graph.agents[a].kind == "llm" and self._order.agent_runs_surely(here, a)
        )

    def initial_state(self, app: App | str) -> InitialState:
        """The declared initial state of `app` (see [`InitialState`][templating.agent_model.InitialState])."""
        app_id = app.id if isinstance(app, App) else app
        return self._initial[app_id]

    def enforced_schema(self, agent: Agent | str, *, app: App | None = None) -> EnforcedSchema | None:
        """The `state_schema` google-adk 2.13 checks `agent`'s writes against in `app` (default: its app), if any:
        a Workflow's (on its nodes), an LlmAgent node's own, a root LlmAgent's own. None for an agent of no app,
        and inside a SequentialAgent, ParallelAgent or LoopAgent, where google-adk checks none."""
        here = self.agent(agent)
        app = app if app is not None else self.app_of(here)
        return enforced_schema(self.graph.agents, app, here.id) if app is not None else None


def build(
    scan: Scan,
    config: LintConfig | None = None,
    root: str | Path | None = None,
    *,
    walker: Walker | None = None,
    before: AgentModel | None = None,
) -> AgentModel:
    """The agent model of a project from its `scan` (`templating.pysource.scan`, with the project's
    `root_agent.yaml` files as `configs=` for Agent Config apps): `config` is its `[tool.templating]` (for
    `initial-state`; default: none), `root` its folder (default: the config's root), `walker` the project's walk
    (eval sets are found with it; default: a new one), `before` the model of an earlier scan of the same project (its
    agents made from the very same facts of `scan` are taken, not made again: an editor's edit). A bad
    `initial-state` is a `LintConfigError` naming it."""
    base = Path(root) if root is not None else (config.root if config is not None else Path.cwd())
    config = config if config is not None else LintConfig(root=base)
    graph = build_graph(scan, str(base), before=before.graph if before is not None else None)
    _plugins(graph, scan)
    initial = initial_states(scan, config, base, graph.apps, walker)
    model = AgentModel(graph, initial, scan)
    if before is not None:
        model._keep_reads(before)  # (what holds of it, not the model itself: models are not chained)
    return model


def _plugins(graph: Graph, scan: Scan) -> None:
    """An App's plugins run callbacks around every agent of it: their writes may happen before any of them (added to
    a copy of its root: the agent made stays as it is, for the next build to take)."""
    for app in graph.apps:
        if app.call is None:
            continue
        top = graph.agents[app.root]
        added: list[StateWrite] = []
        for ref in app.call.field("plugins") or ():
            if ref.kind == "class":
                for method in scan.class_methods.get(ref.target, ()):
                    facts = scan.functions.get(method)
                    for step in facts.steps if facts is not None else ():
                        if step.kind == "write":
                            how = f"plugin {ref.text} ({facts.name if facts else ''})"
                            added.append(StateWrite(step.key, top.id, "maybe", how, step.path, step.span, False))
            elif ref.kind in ("unknown", "dotted", "param"):
                why = ref.reason or f"{ref.text}: known only at run time"
                added.append(
                    StateWrite(None, top.id, "maybe", f"plugin {ref.text}", ref.path, ref.span, False, reason=why)
                )
        if added:
            graph.agents[app.root] = dataclasses.replace(top, writes=[*top.writes, *added])
