"""An app's agents in the order google-adk runs them on a first turn, each previewed with the state it sees.

The tree is google-adk's own agent objects (imported from the app, or built from what the code says). A
SequentialAgent runs its sub-agents in order, each seeing what the earlier ones wrote; a LoopAgent's first
iteration does the same; a ParallelAgent's branches start together, so none sees a sibling's writes (later agents
see them all); a Workflow's node sees what the nodes on every path from START to it wrote; an LlmAgent's
sub-agents run only if its model transfers to them, and an `AgentTool`'s agent only if its model calls it: they
see the state as their parent saw it, and what they write is not counted on by later agents. What an agent
writes when it answers (`output_key`) is shown to later agents as a marker, `⟨output of writer⟩`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .assemble import Assembled, Given, Marker, assemble, run_agent_callback
from .result import AgentPreview, Reached, marker
from .reuse import Opaque, RequestCache, Tokens

__all__ = ["Facts", "REQUESTS", "Walk", "USER_MESSAGE"]

USER_MESSAGE = marker("the user's message")
# Each agent's request as google-adk assembled it in the static previews made last (see `reuse`): an edit of one
# agent's instruction re-assembles that agent's request only. A kept request and its key take some 10 kB on a
# 21-agent app: 512 of them hold the previews of some 25 edits, a few MB.
REQUESTS = RequestCache(512)


@dataclass(frozen=True, slots=True)
class Facts:
    """What is known about an agent beyond its google-adk object, when the object was built from the code:
    `notes` to show, `inexact` reasons its request may differ at run time, the keys its code writes before its
    first request (`before`: key -> who) and after it answers (`after`), each shown as a marker."""

    notes: tuple[str, ...] = ()
    inexact: tuple[str, ...] = ()
    before: tuple[tuple[str, str], ...] = ()
    after: tuple[tuple[str, str], ...] = ()
    optional: tuple[tuple[str, bool], ...] = ()  # each key its instructions read: whether only optionally
    # what its instruction, static_instruction and global_instruction are made of, as data (None: unknown); a
    # request is kept between previews only when this is known
    instructions: tuple[Hashable, Hashable, Hashable] | None = None


@dataclass
class Walk:
    """One walk over an app's tree: `run_code` runs the app's callbacks (its `before_agent_callback`s,
    `after_agent_callback`s and `before_model_callback`s) as google-adk would; `facts` gives what the code says
    about an agent built from it."""

    run_code: bool = False
    plugins: list[Any] = field(default_factory=list)
    facts: Callable[[Any], Facts | None] = lambda agent: None
    previews: list[AgentPreview] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    reuse: bool = False  # keep and reuse each agent's request (a static preview: no code of the app runs)
    _tokens: Tokens | None = None
    # google-adk reads its feature switches and the Google API settings from the environment
    _environment: Hashable = field(
        default_factory=lambda: tuple(
            sorted((k, v) for k, v in os.environ.items() if k.startswith(("GOOGLE_", "ADK_")))
        )
    )

    def __post_init__(self) -> None:
        if self._tokens is not None:  # the tokens of objects kept from an earlier walk: read with this walk's facts
            self._tokens.instructions = self._instructions

    def kept_tokens(self) -> Tokens | None:
        """The tokens of the objects this walk read, for the next walk over the same objects."""
        if self._tokens is not None:
            self._tokens.prune()
        return self._tokens

    async def app(self, root: Any, state: Mapping[str, Given]) -> list[AgentPreview]:
        """Preview every agent of the tree `root` on a first turn whose session starts with `state`."""
        await self.node(root, dict(state), path=(), reached="root", via=None, message=USER_MESSAGE)
        return self.previews

    async def node(
        self,
        agent: Any,
        state: dict[str, Given],
        *,
        path: tuple[str, ...],
        reached: Reached,
        via: str | None,
        message: str,
        notes: tuple[str, ...] = (),
        unknown_writers: str | None = None,
    ) -> dict[str, Given]:
        """Preview `agent` (and what runs inside it) seeing `state`; the state after it ran. `unknown_writers`
        names code that runs before it and may write state the preview does not know of."""
        from google.adk.agents import LlmAgent, LoopAgent, ParallelAgent, SequentialAgent

        path = (*path, agent.name)
        state = dict(state)
        skipped = await self._callback(agent, state, "before", message)
        facts = self.facts(agent)
        if isinstance(agent, LlmAgent):
            state = await self._llm(
                agent, state, path, reached, via, message, notes, skipped, unknown_writers=unknown_writers
            )
        elif skipped:
            pass
        elif isinstance(agent, (SequentialAgent, LoopAgent)):
            in_order: Reached = "sequence" if isinstance(agent, SequentialAgent) else "loop"
            # a LoopAgent with max_iterations <= 0 never runs its sub-agents
            never = isinstance(agent, LoopAgent) and agent.max_iterations is not None and agent.max_iterations <= 0
            for child in [] if never else agent.sub_agents:
                state = await self.node(
                    child,
                    state,
                    path=path,
                    reached=in_order,
                    via=agent.name,
                    message=message,
                    unknown_writers=unknown_writers,
                )
        elif isinstance(agent, ParallelAgent):
            after = dict(state)
            for child in agent.sub_agents:
                branch = await self.node(
                    child,
                    state,
                    path=path,
                    reached="parallel",
                    via=agent.name,
                    message=message,
                    unknown_writers=unknown_writers,
                )
                after.update({key: value for key, value in branch.items() if state.get(key) is not value})
            state = after
        elif _is_workflow(agent):
            state = await self._workflow(agent, state, path, message, unknown_writers)
        else:
            why = (
                f"runs under the custom agent {agent.name}, whose code decides whether and when; shown in its "
                "sub_agents order",
            )
            code = f"the code of the custom agent {agent.name}"
            for child in getattr(agent, "sub_agents", []) or []:
                state = await self.node(
                    child,
                    state,
                    path=path,
                    reached="custom",
                    via=agent.name,
                    message=message,
                    notes=why,
                    unknown_writers=code,
                )
        if not skipped:
            await self._callback(agent, state, "after", message)
        for key, who in facts.after if facts else ():
            state[key] = Given(Marker(marker(f"set by {who}")), "marker", who)
        return state

    async def _llm(
        self,
        agent: Any,
        state: dict[str, Given],
        path: tuple[str, ...],
        reached: Reached,
        via: str | None,
        message: str,
        notes: tuple[str, ...],
        skipped: bool,
        request_agent: Any = None,
        unknown_writers: str | None = None,
    ) -> dict[str, Given]:
        facts = self.facts(agent)
        notes = (*notes, *(facts.notes if facts else ()))
        inexact = facts.inexact if facts else ()
        state = dict(state)
        for key, who in facts.before if facts else ():  # written before its first turn by code not run here
            state[key] = Given(Marker(marker(f"set by {who}")), "marker", who)
        if skipped:
            notes = (*notes, "its before_agent_callback answers for it on this turn: its model is not called")
        target, dropped = _without_toolsets(request_agent or agent)
        if dropped:
            notes = (*notes, f"the tools of {', '.join(dropped)} are not listed: listing them would connect to it")
        made = await self._assemble(target, state, message, before_model=self.run_code and not skipped)
        notes = (*notes, *made.notes)
        if facts and facts.optional:
            optional = dict(facts.optional)
            made.reads = tuple(replace(read, optional=optional.get(read.key)) for read in made.reads)
        elif made.reads:
            made.reads = tuple(replace(read, optional=True) if read.source == "absent" else read for read in made.reads)
        set_later = [read for read in made.reads if read.source == "marker"]
        if set_later:
            shown = ", ".join(f"`{read.key}` (by {read.by})" for read in set_later)
            inexact = (*inexact, f"{shown} is set at run time: its value is shown as a marker")
        missing = [read.key for read in made.reads if read.source == "missing"]
        if missing and unknown_writers:
            shown = ", ".join(f"`{key}`" for key in missing)
            inexact = (*inexact, f"{shown} may be written by {unknown_writers}, which the preview does not run")
        if made.error is not None:
            notes = (*notes, f"google-adk could not build its request: {made.error}")
        self.previews.append(
            AgentPreview(
                agent=agent.name,
                path=path,
                kind=type(agent).__name__,
                reached=reached,
                via=via,
                model=made.model,
                system_instruction=made.system_instruction,
                instruction_turn=made.instruction_turn,
                tools=made.tools,
                reads=made.reads,
                exact=made.error is None and not inexact,
                notes=(*notes, *inexact),
                error=made.error,
                order=len(self.previews) + 1,
            )
        )
        seen = dict(state)
        for child in agent.sub_agents:  # reached by a transfer its model may choose: nothing later counts on it
            if _is_tool_mode(child):
                continue
            await self.node(child, seen, path=path, reached="transfer", via=agent.name, message=message)
        for child in [*_agent_tools(agent), *(c for c in agent.sub_agents if _is_tool_mode(c))]:
            # run in a session of its own holding a copy of the caller's state, without its temp: keys
            copied = {key: value for key, value in seen.items() if not key.startswith(("temp:", "_adk"))}
            await self.node(child, copied, path=path, reached="agent_tool", via=agent.name, message=message)
        if agent.output_key and not skipped:
            state = dict(state)
            state[agent.output_key] = Given(Marker(marker(f"output of {agent.name}")), "earlier", agent.name)
        return state

    async def _assemble(self, agent: Any, state: Mapping[str, Given], message: str, *, before_model: bool) -> Assembled:
        """google-adk's request for `agent`, or the one kept from an earlier preview made of the same."""
        key = self._key(agent, state, message) if self.reuse and not self.plugins and not before_model else None
        if key is not None:
            kept = REQUESTS.get(key)
            if kept is not None:
                return kept  # type: ignore[no-any-return]
        made = await assemble(agent, state, message=message, plugins=self.plugins, before_model=before_model)
        if key is not None:
            REQUESTS.put(key, made)
        return made

    def _key(self, agent: Any, state: Mapping[str, Given], message: str) -> Hashable | None:
        """All that google-adk's processors can read for `agent`'s request, as data; None when some of it cannot
        be said so (then the request is not kept)."""
        if self._tokens is None:
            self._tokens = Tokens(self._instructions)
        tokens = self._tokens
        try:
            root = getattr(agent, "root_agent", agent)
            tree = tokens.of(root)
            path = []
            here = agent
            while here is not None:
                path.append(here.name)
                here = getattr(here, "parent_agent", None)
            seen = tuple((key, tokens.of(item.value), item.source, item.by) for key, item in state.items())
            own = tokens.of(agent, keep=agent)
        except Opaque:
            return None
        return (tree, tuple(path), own, seen, message, self._environment)

    def _instructions(self, made: Any) -> Hashable:
        facts = self.facts(made)
        if facts is None or facts.instructions is None:
            raise Opaque("an agent not read from the code")
        return facts.instructions

    async def _callback(self, agent: Any, state: dict[str, Given], when: str, message: str) -> bool:
        """Run `agent`'s before/after agent callbacks when running the app's code; put what they write in
        `state`. True when a before callback answers for the agent (which then does not run)."""
        if not self.run_code:
            return False
        callbacks = getattr(agent, f"canonical_{when}_agent_callbacks", None)
        if not callbacks and not self.plugins:
            return False
        try:
            event = await run_agent_callback(agent, state, message, plugins=self.plugins, when=when)
        except Exception as exc:  # the app's own code failed: say so
            self.notes.append(f"the {when}_agent_callback of {agent.name} raised {type(exc).__name__}: {exc}")
            return False
        if event is None:
            return False
        who = f"{when}_agent_callback of {agent.name}"
        for key, value in (event.actions.state_delta or {}).items():
            state[key] = Given(value, "earlier", who)
        return when == "before" and event.content is not None

    async def _workflow(
        self, workflow: Any, state: dict[str, Given], path: tuple[str, ...], message: str, unknown_writers: str | None
    ) -> dict[str, Given]:
        graph = workflow.graph
        if graph is None:
            return state
        order, preds = _graph_order(graph)
        dominators = _dominators(order, preds)
        written: dict[int, dict[str, Given]] = {}
        unknown: list[str] = []
        for node in order[1:]:
            seen = dict(state)
            for other in order:
                if id(other) in dominators[id(node)] and other is not node:
                    seen.update(written.get(id(other), {}))
            before = preds[id(node)]
            node_input = message if any(p is order[0] for p in before) else marker(f"output of {before[0].name}")
            late = [name for name in unknown if name]
            writers = f"the function node(s) {', '.join(late)}" if late else unknown_writers
            after = await self._workflow_node(workflow, node, seen, path, node_input, writers)
            if after is None:
                unknown.append(getattr(node, "name", ""))
                continue
            written[id(node)] = {key: value for key, value in after.items() if seen.get(key) is not value}
        final = dict(state)
        for delta in written.values():
            final.update(delta)
        return final

    async def _workflow_node(
        self,
        workflow: Any,
        node: Any,
        state: dict[str, Given],
        path: tuple[str, ...],
        node_input: str,
        unknown_writers: str | None,
    ) -> dict[str, Given] | None:
        from google.adk.agents import BaseAgent, LlmAgent

        if isinstance(node, LlmAgent):
            from google.adk.workflow._llm_agent_wrapper import _effective_llm_agent_mode

            single = _effective_llm_agent_mode(node) == "single_turn"
            request_agent = node.model_copy(update={"mode": "single_turn"}) if single and node.mode is None else node
            skipped = await self._callback(node, state, "before", node_input)
            after = await self._llm(
                node,
                state,
                (*path, node.name),
                "workflow",
                workflow.name,
                node_input,
                (),
                skipped,
                request_agent,
                unknown_writers,
            )
            if not skipped:
                await self._callback(node, after, "after", node_input)
            return after
        if isinstance(node, BaseAgent) or _is_workflow(node):
            return await self.node(
                node,
                state,
                path=path,
                reached="workflow",
                via=workflow.name,
                message=node_input,
                unknown_writers=unknown_writers,
            )
        return None


def _is_workflow(agent: Any) -> bool:
    return type(agent).__name__ == "Workflow" and hasattr(agent, "graph")


def _is_tool_mode(agent: Any) -> bool:
    """A sub-agent google-adk offers its parent's model as a tool rather than a transfer target."""
    return getattr(agent, "mode", None) in ("single_turn", "task")


def _agent_tools(agent: Any) -> list[Any]:
    from google.adk.tools.agent_tool import AgentTool

    return [tool.agent for tool in agent.tools if isinstance(tool, AgentTool)]


def _without_toolsets(agent: Any) -> tuple[Any, list[str]]:
    """`agent`, or a copy without its toolsets (listing their tools may connect to a server), and their names."""
    from google.adk.tools.base_toolset import BaseToolset

    dropped = [type(tool).__name__ for tool in agent.tools if isinstance(tool, BaseToolset)]
    if not dropped:
        return agent, []
    kept = [tool for tool in agent.tools if not isinstance(tool, BaseToolset)]
    return agent.model_copy(update={"tools": kept}), dropped


def _graph_order(graph: Any) -> tuple[list[Any], dict[int, list[Any]]]:
    """The workflow's nodes reached from START, breadth first (START first), and each one's predecessors."""
    preds: dict[int, list[Any]] = {}
    succs: dict[int, list[Any]] = {}
    for edge in graph.edges:
        preds.setdefault(id(edge.to_node), []).append(edge.from_node)
        succs.setdefault(id(edge.from_node), []).append(edge.to_node)
    start = next((node for node in graph.nodes if id(node) not in preds or node.name == "__START__"), graph.nodes[0])
    order, seen = [start], {id(start)}
    for node in order:
        for nxt in succs.get(id(node), []):
            if id(nxt) not in seen:
                seen.add(id(nxt))
                order.append(nxt)
    return order, {id(node): [p for p in preds.get(id(node), []) if id(p) in seen] for node in order}


def _dominators(order: list[Any], preds: Mapping[int, list[Any]]) -> dict[int, set[int]]:
    """For each node, the nodes on every path from START to it (itself included)."""
    everything = {id(node) for node in order}
    dom = {id(node): set(everything) for node in order}
    dom[id(order[0])] = {id(order[0])}
    changed = True
    while changed:
        changed = False
        for node in order[1:]:
            before = [dom[id(p)] for p in preds[id(node)]]
            new = ({id(node)} | set.intersection(*before)) if before else {id(node)}
            if new != dom[id(node)]:
                dom[id(node)] = new
                changed = True
    return dom
