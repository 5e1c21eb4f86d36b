"""What the agent model holds of a project's agents: each [`Agent`][templating.agent_model.Agent] as google-adk
builds it (its children in run order, each with the `Link` it is reached by), the
[`StateWrite`][templating.agent_model.StateWrite]s its run makes and when (`Phase`), the instructions it reads, and
the [`App`][templating.agent_model.App] each root makes. Data only: `builder` makes the agents, `apps` the apps."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from ..nodes import Span
from ..pysource import AgentCall, InstructionRef, RunnerCall
from ..pysource.found import AgentKind

__all__ = ["Agent", "AgentInstruction", "App", "Link", "Phase", "StateWrite"]

# When a write happens in an agent's run: `before` its instruction is read (before_agent_callback), by its
# `model` call's callbacks (before/after_model_callback), by a `tool` it may call, `after` its final reply
# (output_key, after_agent_callback), at a `step` of a custom orchestrator's `_run_async_impl`, at a `node`
# (a function) of a Workflow, or at a point not known (`maybe`: a method of a custom agent).
Phase: TypeAlias = Literal["before", "model", "tool", "after", "step", "node", "maybe"]
# How an agent is reached from its parent: a sub-agent of a Sequential/Parallel/Loop agent, a transfer target of
# an LlmAgent, an agent an LlmAgent calls as a tool (AgentTool), a node of a Workflow, an agent a custom
# orchestrator runs.
Link: TypeAlias = Literal["sub_agent", "transfer", "agent_tool", "node", "run"]


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
