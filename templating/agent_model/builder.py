"""The agents of a scan as google-adk builds them: each agent call made an [`Agent`][templating.agent_model.Agent]
(an agent built in a custom agent's `__init__` once per instance), its children in run order (sub-agents, transfer
targets, `AgentTool` agents, the agents a custom orchestrator's `_run_async_impl` runs, a Workflow's nodes from its
edges), and the state writes its run makes and when, followed through the functions its callbacks and tools call."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..pysource import AgentCall, FunctionFacts, InstructionRef, Ref, Scan
from .facts import Agent, AgentInstruction, Link, Phase, StateWrite

__all__ = ["Builder", "Built", "Lookups"]


_CALLBACK_PHASES: dict[str, Phase] = {
    "before_agent_callback": "before",
    "before_model_callback": "model",
    "after_model_callback": "model",
    "before_tool_callback": "tool",
    "after_tool_callback": "tool",
    "after_agent_callback": "after",
}

_MAX_CALLS = 32  # how deep the functions a tool or callback calls are followed


@dataclass(slots=True)
class Built:
    """How an agent was made, to make it again from the same facts without reading them: each fact its own reading
    looked up (`looked`: which table, the key, what was found, None for nothing), and the agents its reading asked
    for, in order (`asked`: each key, and whether it was a placeholder made there)."""

    looked: list[tuple[int, str, object]] = field(default_factory=list)
    asked: list[tuple[str, bool]] = field(default_factory=list)


_CALLS, _FUNCTIONS, _CLASSES, _METHODS = range(4)


@dataclass(slots=True)
class Lookups:
    """Who looked up what in a build, for the next build to tell the agents it cannot take without going through
    every agent's record: the `tables` the facts were looked up in, the agents (by key) that looked up each fact
    (`lookers`, by table and key) and those whose reading asked for each agent (`askers`; a placeholder aside)."""

    tables: tuple[Mapping[str, Any], ...]
    lookers: dict[tuple[int, str], frozenset[str]]
    askers: dict[str, frozenset[str]]


class Builder:
    """Makes the agents of `scan` (`agent(call_id)`), each once, into `agents`.

    `before`: the agents of an earlier build, with how each was made (`made`) and who looked up what there
    (`Lookups`): an agent (and what its reading asked for) whose every fact looked up is the very object this scan
    holds is taken as it was, not made again (an edit changes few; the same facts make the same agent, in the same
    order)."""

    def __init__(
        self,
        scan: Scan,
        before: tuple[Mapping[str, Agent], Mapping[str, Built], Lookups] | None = None,
    ) -> None:
        self.calls: dict[str, AgentCall] = {a.id: a for a in scan.agents}
        self.agents: dict[str, Agent] = {}
        self.functions = scan.functions
        self.classes = scan.agent_classes
        self.made: dict[str, Built] = {}
        self._tables: tuple[Mapping[str, Any], ...] = (self.calls, self.functions, self.classes, scan.class_methods)
        self._reading: list[Built] = []
        self._before = before
        self._fresh: list[str] = []  # the keys of the agents made (not taken), in order
        # the earlier agents that cannot be taken
        self._stale = self._stale_agents(before[2]) if before is not None else set()

    def _stale_agents(self, lookups: Lookups) -> set[str]:
        """The earlier agents that looked up a fact that is not the very same object here, and those whose reading
        asked for one of them: the others are made from the very same facts."""
        stale: set[str] = set()
        for table, (now, was) in enumerate(zip(self._tables, lookups.tables, strict=True)):
            if now is was:
                continue
            changed = [key for key, found in now.items() if was.get(key) is not found]
            changed += [key for key in was.keys() - now.keys()]
            for key in changed:
                stale.update(lookups.lookers.get((table, key), ()))
        stack = list(stale)
        while stack:
            for asker in lookups.askers.get(stack.pop(), ()):
                if asker not in stale:
                    stale.add(asker)
                    stack.append(asker)
        return stale

    def lookups(self) -> Lookups:
        """Who looked up what in this build (see `Lookups`): the earlier build's, less the agents not taken, plus
        those made."""
        made = self.made
        if self._before is None:
            lookers: dict[tuple[int, str], frozenset[str]] = {}
            askers: dict[str, frozenset[str]] = {}
            fresh: list[str] = list(made)
        else:
            _, was, earlier = self._before
            lookers, askers, fresh = dict(earlier.lookers), dict(earlier.askers), self._fresh
            for key in [*(k for k in fresh if k in was), *(was.keys() - made.keys())]:
                built = was[key]
                for table, name, _ in built.looked:
                    if key in (found := lookers.get((table, name), frozenset())):
                        lookers[table, name] = found - {key}
                for asked, placeholder in built.asked:
                    if not placeholder and key in (found := askers.get(asked, frozenset())):
                        askers[asked] = found - {key}
        for key in fresh:
            built = made[key]
            for table, name, _ in built.looked:
                lookers[table, name] = lookers.get((table, name), frozenset()) | {key}
            for asked, placeholder in built.asked:
                if not placeholder:
                    askers[asked] = askers.get(asked, frozenset()) | {key}
        return Lookups(self._tables, lookers, askers)

    # -- facts looked up (each recorded for the agent being read)

    def _look(self, table: int, key: str) -> Any:
        found = self._tables[table].get(key)
        if self._reading:
            self._reading[-1].looked.append((table, key, found))
        return found

    def _call(self, call_id: str) -> AgentCall | None:
        found: AgentCall | None = self._look(_CALLS, call_id)
        return found

    def _function(self, function: str) -> FunctionFacts | None:
        found: FunctionFacts | None = self._look(_FUNCTIONS, function)
        return found

    # -- agents

    def agent(self, call_id: str, binding: Mapping[str, tuple[Ref, ...]] | None = None, suffix: str = "") -> Agent:
        """The agent of the call `call_id` (an instance of it, when built from a custom agent's parameters)."""
        key = call_id + suffix
        if self._reading:  # (made already or not: taking the reader again takes it where a fresh build makes it)
            self._reading[-1].asked.append((key, False))
        known = self.agents.get(key)
        if known is not None:
            return known
        if not suffix and self._before is not None and self._can_take(key):
            return self._take(key)
        call = self._call(call_id)
        assert call is not None
        made = self.agents[key] = Agent(key, call, call.kind, call.name, call.path, call.span)
        self._reading.append(built := Built())
        self.made[key] = built
        self._fresh.append(key)
        built.looked.append((_CALLS, call_id, call))
        try:
            self.read(made, binding or {}, suffix)
        finally:
            self._reading.pop()
        return made

    def _can_take(self, key: str) -> bool:
        """Whether the earlier agent `key` is made from the very facts of this scan (and so is each agent its
        reading asked for)."""
        assert self._before is not None
        return key not in self._stale and key in self._before[1] and key in self._before[0]

    def _take(self, key: str) -> Agent:
        """The earlier agent `key` (see `_can_take`), and those its reading asked for, in the order it made them."""
        assert self._before is not None
        agents, made, _ = self._before
        taken = self.agents[key] = agents[key]
        self.made[key] = made[key]
        for asked, placeholder in made[key].asked:
            if asked in self.agents:
                continue
            if placeholder:
                self.agents[asked] = agents[asked]
            else:
                self._take(asked)
        return taken

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
        target = self._call(ref.target) if ref.kind == "agent" else None
        if target is None:
            return None
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
        if self._reading:
            self._reading[-1].asked.append((key, True))
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
        methods: tuple[str, ...] = self._look(_METHODS, class_id) or ()
        return tuple(m for m in methods if (facts := self._function(m)) is not None and facts.name != "__init__")

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
        facts = self._function(function)
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
        cls = self._look(_CLASSES, call.cls)
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
                target = self._call(ref.target) if ref.kind == "agent" else None
                if target is not None:
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
        run_facts = self._function(cls.run) if cls is not None and cls.run is not None else None
        if cls is None or run_facts is None:
            agent.unknown.append(cls.reason if cls is not None and cls.reason else "its run order is not known")
            run(list(dict.fromkeys(every)))
            return
        runs: list[tuple[int, bool, bool, tuple[int, ...]]] = []
        for number, item in enumerate(run_facts.steps):
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
            facts = self._function(method) if method != cls.run else None
            if facts is not None and facts.name != "__init__":
                called = {s.field for s in run_facts.steps if s.kind == "call"}
                if method not in called:
                    self.expand(agent, method, "maybe", f"method {facts.name}", False, 0, set())

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
                facts = self._function(ref.target)
                name = facts.name if facts is not None else ref.text
                self.expand(agent, ref.target, "node", f"node {name}", True, 0, set(), node=ref.target)
            return ref.target
        if ref.kind == "agent" and self._call(ref.target) is not None:
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
