"""Run order: for an agent and a key its instruction reads, what google-adk's state holds when the instruction is
injected on the first turn, and why: given by the initial state, written `before` it (guaranteed), or the first
writer and why it is too late (`later` in a Sequential/Workflow order or the agent's own output_key, a `sibling`
racing it in a ParallelAgent or concurrent branch, only `loop`-later in a LoopAgent body or workflow cycle, `maybe`
only (a tool, a condition, an agent the model may choose)), `unknown` (a write whose key is known only at run
time could write it), or `nowhere` in the app. Rules as google-adk 2.13 runs agents (each proven by a scenario
run against it: docs/architecture.md, "The agent model")."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from .facts import Agent, App, Link, StateWrite
from .graph import Graph
from .workflow import WorkflowOrder

__all__ = ["Availability", "Relation", "Kind", "RunOrder"]

Kind: TypeAlias = Literal["given", "before", "maybe", "unknown", "sibling", "loop", "later", "nowhere"]
# How one write stands to an agent's first model call in an app's run: certainly `before` it, `maybe` before it,
# racing it (`sibling`), only on a later iteration (`loop`), after it (`later`), or never in the same run (`apart`).
Relation: TypeAlias = Literal["before", "maybe", "sibling", "loop", "later", "apart"]

_RANK: dict[str, int] = {"before": 0, "maybe": 1, "sibling": 2, "loop": 3, "later": 4, "apart": 5}
_PHASE_RANK = {"before": 0, "step": 1, "node": 1, "model": 2, "tool": 3, "maybe": 3, "after": 4}


@dataclass(frozen=True, slots=True)
class Availability:
    """Whether the key `key` is in state when the agent `agent` (an id) injects its instruction on the first turn.

    `kind` is one of `given` (the app's declared initial state gives it), `before` (a write google-adk makes
    before, for sure), `maybe` (only a write that may happen before: a tool the model may not call, a write
    under a condition, an agent reached only if the model transfers to it or calls it), `unknown` (a write whose
    key is known only at run time, running before or alongside the agent, could write it), `sibling` (written
    only by an agent running alongside it: a race), `loop` (written only later in a LoopAgent body or workflow
    cycle: missing on the first iteration), `later` (written only after it: a later agent of a Sequential or a
    Workflow, or its own output_key), or `nowhere` (nothing in the app writes it).

    `writer` is the write that decides it (the first in run order for `later`, `loop` and `sibling`; the one
    that may write it for `maybe` and `unknown`), `order_text` says it in words for a message, and `certain`
    whether google-adk is certain to raise on the first turn (for `later`, `loop`, `sibling`, `nowhere`: the
    agent always runs, the writer's write comes after its model call, the key is not shared across sessions) --
    for `given`/`before`, that the key is certainly there. `app` is the id of the app it is worked out in (None:
    the agent is in no app, and the answer says only whether the project writes the key)."""

    kind: Kind
    key: str
    agent: str
    writer: StateWrite | None
    order_text: str
    certain: bool
    app: str | None = None


class RunOrder:
    """The run order of the apps of a [`Graph`][templating.agent_model.graph.Graph]: how each write stands to
    each agent, and the availability of a key to an agent (see `Availability`)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.agents = graph.agents
        self._workflows: dict[str, WorkflowOrder] = {}
        self._paths: dict[tuple[str, str], list[tuple[str, Link | None]]] = {}

    # -- the pieces

    def workflow(self, agent: Agent) -> WorkflowOrder:
        found = self._workflows.get(agent.id)
        if found is None:
            is_join = lambda node: node in self.agents and self.agents[node].kind == "join"  # noqa: E731
            found = self._workflows[agent.id] = WorkflowOrder(agent.graph, is_join)
        return found

    def path(self, app: App, agent: str) -> list[tuple[str, Link | None]]:
        key = (app.id, agent)
        found = self._paths.get(key)
        if found is None:
            found = self._paths[key] = app.path_to(agent)
        return found

    def first_run(self, parent: Agent, child_index: int) -> tuple[int, bool, bool] | None:
        """A custom orchestrator's first step running its child `child_index`: (step, conditional, looped)."""
        for step, conditional, looped, indexes in parent.runs or ():
            if child_index in indexes:
                return step, conditional, looped
        return None

    def runs_surely(self, parent: Agent, child: str) -> bool:
        """Whether `parent`'s run surely runs `child` to its end (once `parent` runs)."""
        if child not in parent.children:
            return False
        index = parent.children.index(child)
        link = parent.links[index]
        if link in ("transfer", "agent_tool"):
            return False
        if parent.kind in ("sequential", "parallel"):
            return True
        if parent.kind == "loop":
            if parent.call.option("max_iterations", 1) in (0,) or (
                isinstance(parent.call.option("max_iterations"), int) and parent.call.option("max_iterations", 1) <= 0  # type: ignore[operator]
            ):
                return False
            earlier = parent.children[:index]
            return not any(
                self.agents[c].escalates or self.agents[c].kind == "unknown" for c in earlier if c in self.agents
            )
        if parent.kind == "workflow":
            return self.workflow(parent).always_runs(child)
        if parent.kind == "custom":
            run = self.first_run(parent, index)
            return run is not None and not run[1]
        return False

    def surely_written(self, write: StateWrite, app: App, top: str) -> bool:
        """Whether the run of `top` (an agent of `app`) surely makes `write`, made by `write.agent` at or below it."""
        if not write.certain or write.phase in ("tool", "maybe"):
            return False
        if write.phase == "node":
            owner = self.agents[write.agent]
            if write.node is None or not self.workflow(owner).always_runs(write.node):
                return False
        if write.phase == "step":
            pass  # certain steps of a custom orchestrator's own run happen whenever it runs
        path = [a for a, _ in self.path(app, write.agent)]
        if top not in path:
            return False
        below = path[path.index(top) :]
        return all(self.runs_surely(self.agents[a], b) for a, b in itertools.pairwise(below))

    def starts_at_once(self, app: App, top: str, agent: str) -> bool:
        """Whether `agent`'s first model call comes first in the run of `top` (no model call before it there)."""
        path = [a for a, _ in self.path(app, agent)]
        below = path[path.index(top) :] if top in path else []
        for parent, child in itertools.pairwise(below):
            node = self.agents[parent]
            index = node.children.index(child)
            if node.kind in ("sequential", "loop") and index > 0:
                return False
            if node.kind in ("custom", "workflow", "llm"):
                return False
        return bool(below)

    # -- one write against one agent

    def relation(self, app: App, agent: str, write: StateWrite) -> tuple[Relation, bool]:
        """How `write` stands to `agent`'s first model call in `app`'s run, and, for a `sibling`, whether the race
        is certainly lost (the write comes after the writer's model call and `agent` calls its model first)."""
        if write.agent not in app.parents and write.agent != app.root:
            return "apart", False
        path_a = [a for a, _ in self.path(app, agent)]
        path_w = [a for a, _ in self.path(app, write.agent)]
        common = 0
        while common < min(len(path_a), len(path_w)) and path_a[common] == path_w[common]:
            common += 1
        lowest = self.agents[path_a[common - 1]]
        sure = self.surely_written(write, app, write.agent) if write.agent in path_w else False
        if write.agent == agent:  # its own run
            if write.phase == "before":
                return ("before" if write.certain else "maybe"), False
            return "later", False  # its model callbacks, tools and output_key come after its first request
        if lowest.id == write.agent:  # the writer is an ancestor of `agent`
            child = path_a[common]
            index = lowest.children.index(child)
            link = lowest.links[index]
            if write.phase == "before":
                return ("before" if write.certain else "maybe"), False
            if write.phase == "after":
                return "later", False
            if link in ("transfer", "agent_tool"):  # its model chose `agent`: its model callbacks ran, tools may have
                if write.phase == "model":
                    return ("before" if write.certain else "maybe"), False
                return "maybe", False
            if lowest.kind == "custom":
                return self.step_relation(lowest, write, index)
            if lowest.kind == "workflow" and write.phase == "node" and write.node is not None:
                return self.node_relation(lowest, write.node, child, write, sure=write.certain)
            return "maybe", False
        if lowest.id == agent:  # the writer runs below `agent`, during or after its turn
            return "later", False
        child_a, child_w = path_a[common], path_w[common]
        index_a, index_w = lowest.children.index(child_a), lowest.children.index(child_w)
        link_a = lowest.links[index_a]
        sure = self.surely_written(write, app, child_w)
        if link_a in ("transfer", "agent_tool") or lowest.links[index_w] in ("transfer", "agent_tool"):
            return "maybe", False
        if lowest.kind == "sequential":
            return (("before" if sure else "maybe") if index_w < index_a else "later"), False
        if lowest.kind == "loop":
            return (("before" if sure else "maybe") if index_w < index_a else "loop"), False
        if lowest.kind == "parallel":
            lost = write.phase in ("model", "tool", "after") and self.starts_at_once(app, child_a, agent)
            lost = lost and self.model_call_before(app, child_w, write)
            return "sibling", lost
        if lowest.kind == "workflow":
            return self.node_relation(lowest, child_w, child_a, write, sure=sure)
        if lowest.kind == "custom":
            run_w, run_a = self.first_run(lowest, index_w), self.first_run(lowest, index_a)
            if run_w is None or run_a is None:
                return "maybe", False
            if run_w[0] < run_a[0]:
                return ("before" if sure and not run_w[1] else "maybe"), False
            if run_w[0] == run_a[0]:  # one step runs both (a loop over self.sub_agents): their order in it
                return (("before" if sure and not run_w[1] else "maybe") if index_w < index_a else "later"), False
            return ("loop" if run_a[2] and run_w[2] else "later"), False
        return "maybe", False

    def model_call_before(self, app: App, top: str, write: StateWrite) -> bool:
        """Whether, in the run of `top`, a model call certainly comes before `write` (an LlmAgent's output_key,
        model callbacks and tools come after its model call)."""
        after_reply = write.phase == "after" and self.agents[write.agent].kind == "llm"
        return write.phase in ("model", "tool") or after_reply

    def step_relation(self, parent: Agent, write: StateWrite, child_index: int) -> tuple[Relation, bool]:
        """A custom orchestrator's own write (`write.step`) against its child's first run."""
        run = self.first_run(parent, child_index)
        if write.phase != "step" or write.step is None or run is None:
            return ("maybe" if write.phase != "after" else "later"), False
        if write.step < run[0]:
            return ("before" if write.certain else "maybe"), False
        return ("loop" if run[2] else "later"), False

    def node_relation(
        self, workflow: Agent, node_w: str, node_a: str, write: StateWrite, *, sure: bool
    ) -> tuple[Relation, bool]:
        order = self.workflow(workflow).order(node_w, node_a)
        if order == "before":
            return ("before" if sure else "maybe"), False
        if order == "same":
            return "later", False
        if order == "apart":
            return "sibling", False
        return order, False

    # -- availability

    def agent_runs_surely(self, app: App, agent: str) -> bool:
        """Whether `agent` surely runs on the first turn of `app` (never only if a model chooses, or a condition)."""
        path = [a for a, _ in self.path(app, agent)]
        return all(self.runs_first(self.agents[a], b) for a, b in itertools.pairwise(path))

    def runs_first(self, parent: Agent, child: str) -> bool:
        """Whether `parent` surely starts `child` (its first model call is reached, not only its end)."""
        if child not in parent.children:
            return False
        index = parent.children.index(child)
        if parent.links[index] in ("transfer", "agent_tool"):
            return False
        if parent.kind == "loop":
            max_iterations = parent.call.option("max_iterations", 1)
            return not (isinstance(max_iterations, int | float) and max_iterations <= 0) and not any(
                self.agents[c].escalates for c in parent.children[:index] if c in self.agents
            )
        if parent.kind == "workflow":
            return self.workflow(parent).always_runs(child)
        if parent.kind == "custom":
            run = self.first_run(parent, index)
            return run is not None and not run[1]
        return parent.kind in ("sequential", "parallel")

    def availability(
        self,
        app: App,
        agent: str,
        key: str,
        writes: Sequence[StateWrite],
        unknown: Sequence[StateWrite],
        *,
        given: tuple[str, bool] | None,
        elsewhere: Sequence[StateWrite] = (),
    ) -> Availability:
        """The availability of `key` to `agent` in `app`: `writes` are the app's writes of `key`, `unknown` its
        writes whose key is known only at run time; `given` says whether the initial state gives the key
        (the text naming its source, and whether it certainly does); `elsewhere` the project's writes of the
        key that no agent of the app makes."""
        shown = self.agents[agent].shown
        if given is not None and given[1]:
            return Availability("given", key, agent, None, f"`{key}` is given by {given[0]}", True, app.id)
        best: dict[Relation, list[tuple[StateWrite, bool]]] = {}
        for write in writes:
            relation, lost = self.relation(app, agent, write)
            best.setdefault(relation, []).append((write, lost))
        order = self.run_position(app)
        for found in best.values():
            found.sort(key=lambda item: self.write_position(order, item[0]))
        if "before" in best:
            write = best["before"][0][0]
            return Availability(
                "before", key, agent, write, f"`{key}` is written {self.by(write)} before {shown} runs", True, app.id
            )
        if given is not None:  # an initial state that may give it (a session whose state is known only at run time)
            return Availability("unknown", key, agent, None, f"`{key}` may be given by {given[0]}", False, app.id)
        # a write whose key is known only at run time, running before it, may give the key: no writer is the only one
        for write in unknown:
            relation, _ = self.relation(app, agent, write)
            if relation in ("before", "maybe", "sibling"):
                why = write.reason or "a write whose key is known only at run time"
                where = f"{write.path}:{write.span.line}" if write.span else write.path
                text = (
                    f"`{key}` may be written {self.by(write)} ({why}, at {where}),"
                    f" which runs before or alongside {shown}"
                )
                return Availability("unknown", key, agent, write, text, False, app.id)
        if "maybe" in best:
            write = best["maybe"][0][0]
            return Availability(
                "maybe",
                key,
                agent,
                write,
                f"`{key}` is written only {self.by(write)}, {self.why_maybe(app, agent, write)}",
                False,
                app.id,
            )
        runs = self.agent_runs_surely(app, agent)
        shared = key.startswith(("user:", "app:"))  # kept across the user's (or app's) sessions
        if "sibling" in best:
            write, lost = best["sibling"][0]
            place = self.where(app, agent, write)
            text = f"`{key}` is written only {self.by(write)}, which runs alongside {shown} ({place}): a race"
            return Availability("sibling", key, agent, write, text, lost and runs and not shared, app.id)
        if "loop" in best:
            write = best["loop"][0][0]
            place = self.where(app, agent, write)
            text = f"`{key}` is first written {self.by(write)}, later in {place}: missing on the first iteration"
            return Availability("loop", key, agent, write, text, runs and not shared, app.id)
        if "later" in best:
            write = best["later"][0][0]
            if write.agent == agent:
                text = f"`{key}` is written only {self.by(write)}, after {shown}'s instruction is read"
            else:
                place = self.where(app, agent, write)
                text = f"`{key}` is first written {self.by(write)}, which runs after {shown} in {place}"
            return Availability("later", key, agent, write, text, runs and not shared, app.id)
        text = f"nothing in the app {app.name} writes `{key}`"
        writer = None
        if elsewhere:
            writer = elsewhere[0]
            where = f"{writer.path}:{writer.span.line}" if writer.span else writer.path
            text += f" (it is written by {writer.how} at {where}, which no agent of this app runs)"
        elif "apart" in best:
            writer = best["apart"][0][0]
            text += f" before {shown} in the same run ({self.by(writer)} runs in another branch)"
        return Availability("nowhere", key, agent, writer, text, runs, app.id)

    # -- words

    def run_position(self, app: App) -> dict[str, int]:
        return {agent: number for number, agent in enumerate(app.agents)}

    def write_position(self, order: dict[str, int], write: StateWrite) -> tuple[int, int, int, int]:
        return (
            order.get(write.agent, len(order)),
            _PHASE_RANK.get(write.phase, 5),
            write.step if write.step is not None else -1,
            write.span.start if write.span else -1,
        )

    def by(self, write: StateWrite) -> str:
        """`by critic's output_key`, `by the tool save_notes of writer`, `by pipeline's before_agent_callback seed`."""
        owner = self.agents[write.agent].shown if write.agent in self.agents else "the project"
        if write.how == "output_key":
            return f"by {owner}'s output_key"
        if write.how.startswith("tool "):
            return f"by the {write.how} of {owner}"
        if write.how.startswith("node "):
            return f"by the workflow {write.how} of {owner}"
        if write.how.startswith("the agent "):
            return f"by {write.how}"
        return f"by {owner}'s {write.how}"

    def why_maybe(self, app: App, agent: str, write: StateWrite) -> str:
        if write.phase == "tool":
            return "which runs only if the model calls it"
        if not write.certain:
            return "under a condition"
        path = [a for a, _ in self.path(app, write.agent)]
        for parent, child in itertools.pairwise(path):
            node = self.agents[parent]
            link = node.links[node.children.index(child)]
            if link == "transfer":
                return f"which runs only if {node.shown}'s model transfers to {self.agents[child].shown}"
            if link == "agent_tool":
                return f"which runs only if {node.shown}'s model calls {self.agents[child].shown} as a tool"
        if agent in self.agents:
            path_a = [a for a, _ in self.path(app, agent)]
            for parent, child in itertools.pairwise(path_a):
                node = self.agents[parent]
                link = node.links[node.children.index(child)]
                if link in ("transfer", "agent_tool"):
                    return f"and {self.agents[agent].shown} runs only when {node.shown}'s model chooses it"
        return "which may not run before it"

    def where(self, app: App, agent: str, write: StateWrite) -> str:
        """Where the two meet: `pipeline's sub_agents`, `the workflow trip`."""
        path_a = [a for a, _ in self.path(app, agent)]
        path_w = [a for a, _ in self.path(app, write.agent)]
        common = 0
        while common < min(len(path_a), len(path_w)) and path_a[common] == path_w[common]:
            common += 1
        lowest = self.agents[path_a[common - 1]] if common else self.agents[app.root]
        if lowest.kind == "workflow":
            return f"the workflow {lowest.shown}"
        if lowest.kind == "custom":
            return f"{lowest.shown}'s _run_async_impl"
        return f"{lowest.shown}'s sub_agents"
