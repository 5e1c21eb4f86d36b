"""The agent model: a project's ADK apps as google-adk runs them, built from what `templating.pysource` reads of
the code (and of Agent Config files), for the lint rules, the language server and the preview.

[`build`][templating.agent_model.build]`(scan, config, root)` gives an
[`AgentModel`][templating.agent_model.AgentModel]: its `apps` (each a root agent and every agent it reaches),
its `agents` (each an [`Agent`][templating.agent_model.Agent]: children in run order, the state writes of its run
and when, the instructions it reads), `reads(agent)`, `availability(agent, key)` (an
[`Availability`][templating.agent_model.Availability]: given, before, maybe, unknown, sibling, loop, later or
nowhere, with the writer and the order in words), `writers(key, app)` in run order, `initial_state(app)` (an
[`InitialState`][templating.agent_model.InitialState]: declared by `initial-state` in `[tool.templating]`, eval
sets, `create_session(state=...)`) and `enforced_schema(agent)` (an
[`EnforcedSchema`][templating.agent_model.EnforcedSchema], where google-adk 2.13 checks writes).

Modules, each importing only those before it: `facts` (the data: agents, their writes, apps), `builder` (the
agents and their writes from the scan), `apps` (the roots and what each reaches), `graph` (both, and the writes no
agent makes), `workflow` (a Workflow's order
from its edges), `initial` (initial state), `order` (availability), `enforced` (state schemas google-adk enforces),
`model` (the `AgentModel`, `build`). The package sits above the project model (`templating.linter`'s config,
project and discovery modules) and below the lint rules; it reads, it reports nothing.
"""

from __future__ import annotations

from .enforced import EnforcedSchema
from .facts import Agent, AgentInstruction, App, Link, Phase, StateWrite
from .initial import InitialSource, InitialState
from .model import AgentModel, Read, build
from .order import Availability, Kind

__all__ = [
    "Agent",
    "AgentInstruction",
    "AgentModel",
    "App",
    "Availability",
    "EnforcedSchema",
    "InitialSource",
    "InitialState",
    "Kind",
    "Link",
    "Phase",
    "Read",
    "StateWrite",
    "build",
]
