"""The agents of a project as google-adk builds them, and its apps: each agent call of the scan made an
[`Agent`][templating.agent_model.Agent] (an agent built in a custom agent's `__init__` once per instance), its
children in run order (sub-agents, workflow nodes, the agents a custom orchestrator runs, `AgentTool` agents), the
state writes its run makes and when (before its instruction is read, by its model's callbacks, by its tools,
after its final reply), and the [`App`][templating.agent_model.App] each root makes: every agent it reaches."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from ..nodes import Span
from ..pysource import AgentCall, AgentClass, FunctionFacts, InstructionRef, Ref, RunnerCall, Scan
from ..pysource.found import AgentKind

__all__ = ["Agent", "AgentInstruction", "App", "Graph", "Link", "Phase", "StateWrite", "build_graph"]

# When a write happens in an agent's run: `before` its instruction is read (before_agent_callback), by its
# `model` call's callbacks (before/after_model_callback), by a `tool` it may call, `after` its final reply
# (output_key, after_agent_callback), at a `step` of a custom orchestrator's `_run_async_impl`, at a `node`
# (a function) of a Workflow, or at a point not known (`maybe`: a method of a custom agent).
Phase: TypeAlias = Literal["before", "model", "tool", "after", "step", "node", "maybe"]
# How an agent is reached from its parent: a sub-agent of a Sequential/Parallel/Loop agent, a transfer target of
# an LlmAgent, an agent an LlmAgent calls as a tool (AgentTool), a node of a Workflow, an agent a custom
# orchestrator runs.
Link: TypeAlias = Literal["sub_agent", "transfer", "agent_tool", "node", "run"]

_CALLBACK_PHASES: dict[str, Phase] = {
    "before_agent_callback": "before",
    "before_model_callback": "model",
    "after_model_callback": "model",
    "before_tool_callback": "tool",
    "after_tool_callback": "tool",
    "after_agent_callback": "after",
}
_MAX_DEPTH = 64  # agents nested deeper than this are not followed (input cannot recurse without bound)
_MAX_CALLS = 32  # how deep the functions a tool or callback calls are followed


@dataclass(frozen=True, slots=True)
class StateWrite:
    """A state write an agent's run makes: `key` (None: known only at run time, `reason` says why), `agent` the
    id of the agent whose run makes it, `phase` when (see `Phase`), `how` what makes it (`output_key`,
    `before_agent_callback seed`, `tool save_notes`...), `certain` whether it happens whenever that phase runs
    (not under a condition), `path`/`span` where it is written. `step` is its position among a custom
    orchestrator's steps; `node` the Workflow node (a function's id, or an agent's) that makes it."""

    key: str | None
    agent: str
    phase: Phase
    how: str
    path: str
    span: Span | None
    certain: bool = True
    step: int | None = None
    node: str | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class AgentInstruction:
    """An instruction an agent's model call reads: `role` (`instruction`, `global_instruction` (the tree root's,
    read by every LlmAgent of the tree), `static_instruction`), the ref as given, and whether google-adk injects
    state into it (`injected`; with `reason` when it does not: a provider, a static instruction, a sub-agent's
    own global instruction, which google-adk ignores). `of`: the id of the agent that gives it."""

    role: str
    ref: InstructionRef
    injected: bool
    of: str
    reason: str | None = None


@dataclass(eq=False)
class Agent:
    """One agent as google-adk builds it (see the module's description).

    `id` is its call's id (for an agent built in a custom agent's `__init__`: `call id#instance id`); `kind`,
    `name`, `path`, `span` and `call` come from the code; `children` are the agents its run may run, in order,
    each with its `Link` (`links`); `writes` the state writes of its own run (its callbacks, tools, output_key,
    a custom orchestrator's steps, a Workflow's function nodes); `runs` a custom orchestrator's steps as indexes
    of `children` (None: not known) and `graph` a Workflow's edges between its nodes (agent ids, function ids,
    `START`)."""

    id: str
    call: AgentCall
    kind: AgentKind | Literal["unknown"]
    name: str | None
    path: str
    span: Span
    children: list[str] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    writes: list[StateWrite] = field(default_factory=list)
    instructions: list[AgentInstruction] = field(default_factory=list)
    runs: list[tuple[int, bool, bool, tuple[int, ...]]] | None = None  # (step, conditional, looped, children)
    graph: list[tuple[str, str, bool]] = field(default_factory=list)  # (source, target, routed)
    nodes: list[str] = field(default_factory=list)  # a Workflow's function nodes (their ids)
    escalates: bool = False  # a tool of it may end an enclosing LoopAgent
    unknown: list[str] = field(default_factory=list)  # what of it is known only at run time

    @property
    def shown(self) -> str:
        """How messages name it: its `name=`, else its call as written."""
        return self.name or f"the {self.kind} agent at {self.path}:{self.span.line}"


@dataclass(frozen=True, slots=True, eq=False)
class App:
    """One app: the agents its root reaches, as `adk web`, `adk run` or a `Runner` runs them.

    `id` is the root agent's id; `name` google-adk's name for it (the `App(name=...)`, a Runner's `app_name=`,
    else the folder of an ADK app package, else the root's name); `root` the root agent's id; `folder` where
    its root is defined (the app package's folder); `agents` every agent it reaches, in run order (each once);
    `parents` each agent's parent in this app and how it is reached; `call` the `App(...)` call, if any;
    `runners` the Runner calls that run it; `unknown` what of it is known only at run time; `root_name` the root
    agent's `name=`."""

    id: str
    name: str
    root: str
    folder: str
    agents: tuple[str, ...]
    parents: Mapping[str, tuple[str, Link]]
    call: AgentCall | None = None
    runners: tuple[RunnerCall, ...] = ()
    unknown: tuple[str, ...] = ()
    root_name: str | None = None

    def path_to(self, agent: str) -> list[tuple[str, Link | None]]:
        """The agents from the root down to `agent`, each with how it is reached from the one before."""
        out: list[tuple[str, Link | None]] = []
        here: str | None = agent
        seen: set[str] = set()
        while here is not None and here not in seen:
            seen.add(here)
            parent = self.parents.get(here)
            out.append((here, parent[1] if parent else None))
            here = parent[0] if parent else None
        return out[::-1]


@dataclass(eq=False)
class Graph:
    """Every agent of a scan and the apps: what `build_graph` makes."""

    agents: dict[str, Agent]
    apps: list[App]
    classes: Mapping[str, AgentClass]
    functions: Mapping[str, FunctionFacts]
    # the writes of the project's code that no agent of any app makes (module level, or functions no agent names)
    elsewhere: list[StateWrite] = field(default_factory=list)


class _Builder:
    def __init__(self, scan: Scan, root: str) -> None:
        self.scan = scan
        self.root = root
        self.calls: dict[str, AgentCall] = {a.id: a for a in scan.agents}
        self.agents: dict[str, Agent] = {}
        self.functions = scan.functions
        self.classes = scan.agent_classes

    # -- agents

    def agent(self, call_id: str, binding: Mapping[str, tuple[Ref, ...]] | None = None, suffix: str = "") -> Agent:
        """The agent of the call `call_id` (an instance of it, when built from a custom agent's parameters)."""
        key = call_id + suffix
        known = self.agents.get(key)
        if known is not None:
            return known
        call = self.calls[call_id]
        made = self.agents[key] = Agent(key, call, call.kind, call.name, call.path, call.span)
        self.read(made, binding or {}, suffix)
        return made

    def resolve(self, refs: Iterable[Ref], binding: Mapping[str, tuple[Ref, ...]]) -> list[Ref]:
        """`refs` with each parameter ref replaced by what the instance gives it."""
        out: list[Ref] = []
        for ref in refs:
            if ref.kind == "param":
                given = binding.get(ref.target)
                if given is None:
                    why = f"the parameter {ref.target!r}, which nothing gives here"
                    out.append(Ref("unknown", text=ref.text, path=ref.path, span=ref.span, reason=why))
                else:
                    out += given
            else:
                out.append(ref)
        return out

    def child(self, ref: Ref, binding: Mapping[str, tuple[Ref, ...]], suffix: str) -> Agent | None:
        if ref.kind != "agent" or ref.target not in self.calls:
            return None
        target = self.calls[ref.target]
        inner = suffix if target.in_function is not None and suffix else ""
        return self.agent(ref.target, binding if inner else None, inner)

    def read(self, agent: Agent, binding: Mapping[str, tuple[Ref, ...]], suffix: str) -> None:
        call = agent.call
        for keyword, why in call.unread:
            if keyword in ("sub_agents", "tools", "edges", "**") or keyword.endswith("_callback"):
                agent.unknown.append(f"{keyword}: {why}")
        for role, given in call.instructions:
            agent.instructions.append(self.instruction(agent, role, given))
        if agent.kind == "custom":
            self.custom(agent, binding, suffix)
        elif agent.kind == "workflow":
            self.workflow(agent, binding, suffix)
        else:
            link: Link = "transfer" if agent.kind == "llm" else "sub_agent"
            for ref in self.resolve(call.sub_agents or (), binding):
                self.add_child(agent, ref, link, binding, suffix)
        for ref in self.resolve(call.tools or (), binding):
            if ref.wrapper == "AgentTool" and ref.kind == "agent":
                self.add_child(agent, ref, "agent_tool", binding, suffix)
            else:
                self.function_writes(agent, ref, "tool", f"tool {ref.text}", certain=False)
        for callback, refs in call.callbacks:
            phase = _CALLBACK_PHASES[callback]
            for ref in self.resolve(refs, binding):
                self.function_writes(agent, ref, phase, f"{callback} {ref.text}", certain=True)
        if call.output_key is not None:
            out = call.output_key
            agent.writes.append(
                StateWrite(out.key, agent.id, "after", "output_key", out.path, out.span, reason=out.reason)
            )

    def instruction(self, agent: Agent, role: str, ref: InstructionRef) -> AgentInstruction:
        if role == "static_instruction":
            return AgentInstruction(role, ref, False, agent.id, "google-adk sends a static instruction as written")
        if ref.kind == "provider":
            return AgentInstruction(role, ref, False, agent.id, "google-adk does not inject a provider's result")
        if agent.kind != "llm":
            return AgentInstruction(role, ref, False, agent.id, f"only an LlmAgent reads an {role}")
        return AgentInstruction(role, ref, True, agent.id)

    def add_child(
        self, agent: Agent, ref: Ref, link: Link, binding: Mapping[str, tuple[Ref, ...]], suffix: str
    ) -> int | None:
        """Add what `ref` names as a child of `agent`; its index among the children (None: nothing to run)."""
        child = self.child(ref, binding, suffix)
        if child is None:
            if ref.kind in ("external", "builtin", "function", "class"):
                if ref.kind == "external":
                    agent.unknown.append(f"{ref.text}: an agent from a library ({ref.target}), not read")
                return None
            placeholder = self.placeholder(agent, ref)
            agent.children.append(placeholder.id)
            agent.links.append(link)
            return len(agent.children) - 1
        agent.children.append(child.id)
        agent.links.append(link)
        return len(agent.children) - 1

    def placeholder(self, agent: Agent, ref: Ref) -> Agent:
        """An agent known only at run time, where `ref` names it: its run may write any key."""
        key = f"{agent.id}?{len(agent.children)}"
        span = ref.span or agent.span
        why = ref.reason or f"{ref.text}: known only at run time"
        call = AgentCall(key, "llm", "", None, ref.path or agent.path, span)
        made = self.agents[key] = Agent(key, call, "unknown", None, ref.path or agent.path, span)
        made.writes.append(StateWrite(None, key, "after", f"the agent {ref.text}", made.path, span, False, reason=why))
        made.unknown.append(why)
        return made

    # -- writes of functions

    def function_writes(self, agent: Agent, ref: Ref, phase: Phase, how: str, *, certain: bool) -> None:
        """The writes of the function (or tool class) `ref` names, made by `agent` in `phase`."""
        if ref.kind == "function":
            self.expand(agent, ref.target, phase, how, certain, 0, set())
        elif ref.kind == "class":
            for method in self.class_methods(ref.target):
                self.expand(agent, method, phase, how, False, 0, set())
        elif ref.kind in ("unknown", "param", "dotted"):
            why = ref.reason or f"{ref.text}: known only at run time"
            agent.writes.append(StateWrite(None, agent.id, phase, how, ref.path, ref.span, False, reason=why))
            agent.unknown.append(f"{how}: {why}")
        elif ref.kind == "external" and ref.target.rsplit(".", 1)[-1] == "exit_loop":
            agent.escalates = True

    def class_methods(self, class_id: str) -> tuple[str, ...]:
        """The methods of a tool class (its `__init__` aside: it runs when the tool is built, not called)."""
        methods = self.scan.class_methods.get(class_id, ())
        return tuple(m for m in methods if m in self.functions and self.functions[m].name != "__init__")

    def expand(
        self,
        agent: Agent,
        function: str,
        phase: Phase,
        how: str,
        certain: bool,
        depth: int,
        seen: set[str],
        *,
        step: int | None = None,
        node: str | None = None,
    ) -> None:
        facts = self.functions.get(function)
        if facts is None or function in seen or depth > _MAX_CALLS:
            return
        seen.add(function)
        agent.escalates = agent.escalates or facts.escalates
        for item in facts.steps:
            sure = certain and not item.conditional
            if item.kind == "write":
                agent.writes.append(
                    StateWrite(
                        item.key,
                        agent.id,
                        phase,
                        how,
                        item.path,
                        item.span,
                        sure,
                        step,
                        node,
                        None if item.key is not None else f"{item.how} with a key known only at run time",
                    )
                )
            elif item.kind == "call" and item.field is not None:
                self.expand(agent, item.field, phase, how, sure, depth + 1, seen, step=step, node=node)

    # -- custom orchestrators and workflows

    def custom(self, agent: Agent, binding: Mapping[str, tuple[Ref, ...]], suffix: str) -> None:
        call = agent.call
        cls = self.classes.get(call.cls)
        given: dict[str, tuple[Ref, ...]] = {name: tuple(self.resolve(refs, binding)) for name, refs in call.fields}
        if call.sub_agents is not None:
            given["sub_agents"] = tuple(self.resolve(call.sub_agents, binding))
        fields: dict[str, tuple[Ref, ...]] = dict(given)
        instance = agent.id
        if cls is not None and cls.init is not None:  # its own __init__: fields from super().__init__(...)
            params = dict(given)
            fields = {}
            for name, refs in cls.init_fields:
                resolved: list[Ref] = []
                for ref in refs:
                    if ref.kind == "param":
                        resolved += params.get(ref.target, ())
                    else:
                        resolved.append(ref)
                fields[name] = tuple(resolved)
            inner_binding = params
        else:
            inner_binding = dict(binding)
        members: dict[str, list[str]] = {}  # each field's agents (ids), made once
        for name, refs in fields.items():
            for ref in refs:
                if ref.kind == "agent" and ref.target in self.calls:
                    target = self.calls[ref.target]
                    built_here = (
                        cls is not None and target.in_function is not None and target.in_function in cls.methods
                    )
                    inner = f"#{instance}" if built_here else ""
                    members.setdefault(name, []).append(
                        self.agent(ref.target, inner_binding if inner else None, inner).id
                    )
                elif name == "sub_agents" and ref.kind not in ("external", "builtin", "function", "class"):
                    members.setdefault(name, []).append(self.placeholder(agent, ref).id)

        def run(ids: list[str]) -> tuple[int, ...]:
            """The indexes among the children of the agents `ids`, added (in run order) when first run."""
            out = []
            for member in ids:
                if member not in agent.children:
                    agent.children.append(member)
                    agent.links.append("run")
                out.append(agent.children.index(member))
            return tuple(out)

        every = [m for ids in members.values() for m in ids]
        if cls is None or cls.run is None or cls.run not in self.functions:
            agent.unknown.append(cls.reason if cls is not None and cls.reason else "its run order is not known")
            run(list(dict.fromkeys(every)))
            return
        runs: list[tuple[int, bool, bool, tuple[int, ...]]] = []
        for number, item in enumerate(self.functions[cls.run].steps):
            if item.kind == "write":
                reason = None if item.key is not None else f"{item.how} with a key known only at run time"
                how = f"_run_async_impl ({item.how})"
                sure = not item.conditional
                agent.writes.append(
                    StateWrite(item.key, agent.id, "step", how, item.path, item.span, sure, number, reason=reason)
                )
            elif item.kind == "call" and item.field is not None:
                sure = not item.conditional
                self.expand(agent, item.field, "step", "_run_async_impl", sure, 1, {cls.run}, step=number)
            elif item.kind == "run_all":
                runs.append((number, item.conditional, item.looped, run(members.get("sub_agents", []))))
            elif item.field is None:
                agent.unknown.append(f"_run_async_impl runs an agent known only at run time (line {item.span.line})")
                runs.append((number, True, item.looped, run(list(dict.fromkeys(every)))))
            else:
                ids = members.get(item.field, [])
                if item.field == "sub_agents" and item.index is not None:
                    ids = ids[item.index : item.index + 1]
                runs.append((number, item.conditional, item.looped, run(ids)))
        agent.runs = runs
        for method in cls.methods:  # writes of its other methods: at a point not known
            if method != cls.run and method in self.functions and self.functions[method].name != "__init__":
                called = {s.field for s in self.functions[cls.run].steps if s.kind == "call"}
                if method not in called:
                    self.expand(agent, method, "maybe", f"method {self.functions[method].name}", False, 0, set())

    def workflow(self, agent: Agent, binding: Mapping[str, tuple[Ref, ...]], suffix: str) -> None:
        call = agent.call
        for edge in call.edges or ():
            ends = []
            for ref in (edge.source, edge.target):
                node = self.node(agent, ref, binding, suffix)
                ends.append(node)
            if ends[0] is not None and ends[1] is not None:
                agent.graph.append((ends[0], ends[1], edge.routed))

    def node(self, agent: Agent, ref: Ref, binding: Mapping[str, tuple[Ref, ...]], suffix: str) -> str | None:
        """The id of the workflow node `ref` names (an agent's, a function's, START), added when first met."""
        if ref.kind == "builtin":
            return "START"
        if ref.kind == "function":
            if ref.target not in agent.nodes:
                agent.nodes.append(ref.target)
                name = self.functions[ref.target].name if ref.target in self.functions else ref.text
                self.expand(agent, ref.target, "node", f"node {name}", True, 0, set(), node=ref.target)
            return ref.target
        if ref.kind == "agent" and ref.target in self.calls:
            child = self.child(ref, binding, suffix)
            if child is not None and child.kind == "join":
                return child.id
            if child is not None and child.id not in agent.children:
                agent.children.append(child.id)
                agent.links.append("node")
            return child.id if child is not None else None
        placeholder = self.placeholder(agent, ref)
        agent.children.append(placeholder.id)
        agent.links.append("node")
        return placeholder.id


_SESSION_WRITES = frozenset({"create_session(state=...)", "Session(state=...)"})


def build_graph(scan: Scan, root: str) -> Graph:
    """Every agent of `scan` (built from the project's code and Agent Config files) and the apps its roots make."""
    builder = _Builder(scan, root)
    templates = {
        call.id
        for call in scan.agents
        for cls in scan.agent_classes.values()
        if call.in_function is not None and call.in_function in cls.methods
    }
    for call in scan.agents:
        if call.id not in templates:
            builder.agent(call.id)
    agents = builder.agents
    apps = _apps(scan, agents, root)
    made = {(w.path, w.span.start if w.span else -1, w.key) for a in agents.values() for w in a.writes}
    elsewhere = [
        StateWrite(w.key, "", "maybe", w.how, w.path, w.span, False)
        for w in scan.writes
        if w.how not in _SESSION_WRITES and (w.path, w.span.start, w.key) not in made
    ]
    return Graph(agents, apps, scan.agent_classes, scan.functions, elsewhere)


def _apps(scan: Scan, agents: Mapping[str, Agent], root: str) -> list[App]:
    """The apps: one per root (an `App(root_agent=...)`, a module's `root_agent`, a Runner's agent or app, a
    `root_agent.yaml`), each with every agent it reaches."""
    calls = {a.id: a for a in scan.agents}
    found: dict[str, dict[str, object]] = {}  # root agent id -> what names it

    def add(agent_id: str, **named: object) -> None:
        if agent_id not in agents:
            return
        entry = found.setdefault(agent_id, {})
        for key, value in named.items():
            if value is not None:
                entry.setdefault(key, value)

    for call in scan.agents:
        if call.kind == "app":
            for ref in call.field("root_agent") or ():
                if ref.kind == "agent":
                    add(ref.target, app=call, name=call.name)
        elif call.path.endswith(("root_agent.yaml", "root_agent.yml")) and call.id.endswith("@0"):
            add(call.id)
    for binding in scan.roots:
        if binding.ref.kind == "agent":
            add(binding.ref.target)
    runners: dict[str, list[RunnerCall]] = {}
    for runner in scan.runners:
        target = None
        if runner.app is not None and runner.app.kind == "agent" and runner.app.target in calls:
            app = calls[runner.app.target]
            roots = [r.target for r in app.field("root_agent") or () if r.kind == "agent"]
            target = roots[0] if roots else None
        elif runner.agent is not None and runner.agent.kind == "agent":
            target = runner.agent.target
        if target is not None:
            add(target, runner_name=runner.app_name)
            runners.setdefault(target, []).append(runner)
    apps: list[App] = []
    for root_id, named in found.items():
        order: list[str] = []
        parents: dict[str, tuple[str, Link]] = {}
        stack: list[tuple[str, int]] = [(root_id, 0)]
        seen: set[str] = set()
        while stack:
            here, depth = stack.pop()
            if here in seen or here not in agents or depth > _MAX_DEPTH:
                continue
            seen.add(here)
            order.append(here)
            agent = agents[here]
            for child, link in reversed(list(zip(agent.children, agent.links, strict=True))):
                if child not in seen:
                    parents.setdefault(child, (here, link))
                    stack.append((child, depth + 1))
        parents = {child: parent for child, parent in parents.items() if child in seen}
        top = agents[root_id]
        folder = os.path.dirname(top.call.file or top.path)
        app_call = named.get("app")
        name = named.get("name") or named.get("runner_name")
        if not isinstance(name, str):
            base = os.path.basename(top.path)
            name = (
                os.path.basename(folder)
                if base in ("agent.py", "__init__.py", "root_agent.yaml", "root_agent.yml")
                else top.name or os.path.splitext(base)[0]
            )
        unknown = tuple(dict.fromkeys(f"{agents[a].shown}: {why}" for a in order for why in agents[a].unknown))
        apps.append(
            App(
                root_id,
                name,
                root_id,
                folder,
                tuple(order),
                parents,
                app_call if isinstance(app_call, AgentCall) else None,
                tuple(runners.get(root_id, ())),
                unknown,
                top.name,
            )
        )
    apps.sort(key=lambda a: (a.folder, a.name, a.id))
    return apps
