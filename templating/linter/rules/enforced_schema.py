"""The `state_schema=` models google-adk 2.13 enforces, as the agent model places them
([`AgentModel.enforced_schema`][templating.agent_model.AgentModel.enforced_schema]): a Workflow's, on every write of
its nodes; an LlmAgent node's own; a root LlmAgent's own. Nowhere else: a schema on an agent inside a
SequentialAgent, ParallelAgent or LoopAgent is never checked.

T028: a write google-adk refuses there (a key the model's fields do not declare; `extra="allow"` does not widen
them, a key holding `:` is never checked), made by an `output_key`, a callback, a tool or a function node.

T001's level: a key an instruction reads that its agent's `state_schema=` does not declare is an error only where
google-adk enforces that schema on the agent and the caller does not give the key (the initial state is never
checked); elsewhere the schema is the author's own contract, and the finding is advice (a warning).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..registry import RULES, Diagnostic

if TYPE_CHECKING:
    from ...agent_model import AgentModel, StateWrite
    from ...agent_model.facts import Agent
    from ...pysource import InstructionKey, SchemaRef, StateSchema

__all__ = ["schema_levels", "undeclared_writes"]

_WHERE = {
    "workflow": "the state_schema of the Workflow {by}, checked on every write of its nodes",
    "workflow-node": "{by}'s own state_schema, checked on the writes of a Workflow node",
    "root-llm": "{by}'s own state_schema, checked on the writes of a root LlmAgent",
}


def _label(agent: Agent) -> str:
    """The agent's call as messages name it: `Agent(name="responder")`."""
    cls = agent.call.cls.rsplit(".", 1)[-1] or agent.kind
    return f'{cls}(name="{agent.name}")' if agent.name else agent.shown


def _writer(agent: Agent, write: StateWrite) -> str:
    """Who makes `write`, in words: `classifier's before_agent_callback stamp_received`, `the node record_ticket of
    support_desk`."""
    if write.phase == "node":
        return f"the {write.how} of {agent.shown}"
    return f"{agent.shown}'s {write.how}"


def _keyword(write: StateWrite) -> str:
    """The keyword of the agent's call the write comes through (for the finding's origin)."""
    if write.phase == "node":
        return "edges"
    if write.how == "output_key":
        return "output_key"
    first = write.how.split(" ", 1)[0]
    if first.endswith("_callback"):
        return first
    return "tools" if write.phase == "tool" else first


def _fields(schema: SchemaRef) -> str:
    return ", ".join(sorted(schema.fields or ())) or "none"


def undeclared_writes(model: AgentModel, *, paths: Iterable[str] | None = None) -> list[Diagnostic]:
    """T028 for each write whose key the schema google-adk enforces on its writer does not declare, placed at
    the write (an `output_key=`, a callback's or a tool's `state[...] = ...`, a function node's event), in the
    files `paths` (default: all). A write whose key is known only at run time, or a schema whose fields are not
    all known, is left alone: nothing certain is said of it."""
    wanted = None if paths is None else set(paths)
    # With `paths` (an editor's edit asks for a few files of many apps): only the agents writing in them, in the
    # apps reaching them; the others' schemas are not worked out, their apps not gone through.
    writers: set[str] | None = None
    apps = model.apps
    if wanted is not None:
        writers = {a.id for a in model.agents.values() if any(write.path in wanted for write in a.writes)}
        reached = {app.id for agent_id in writers for app in model.apps_of(agent_id)}
        apps = tuple(app for app in apps if app.id in reached)
    out: list[Diagnostic] = []
    seen: set[tuple[str, int, str, str]] = set()
    for app in apps:
        for agent_id in app.agents:
            if writers is not None and agent_id not in writers:
                continue
            agent = model.agent(agent_id)
            schema = model.enforced_schema(agent_id, app=app)
            if schema is None:
                continue
            owner = model.agent(schema.by)
            for write in agent.writes:
                if write.key is None or write.span is None or schema.declares(write.key) is not False:
                    continue
                if wanted is not None and write.path not in wanted:
                    continue
                place = (write.path, write.span.start, write.key, schema.by)
                if place in seen:
                    continue
                seen.add(place)
                ref = schema.schema
                where = _WHERE[schema.where].format(by=owner.shown)
                out.append(
                    Diagnostic(
                        "T028",
                        RULES["T028"].severity,
                        f"`{write.key}` is written by {_writer(agent, write)}, but {ref.model} ({where}) does not "
                        f"declare it: google-adk raises StateSchemaError at this write (declared fields: "
                        f"{_fields(ref)})",
                        write.span,
                        write.path,
                        f"declare `{write.key}` as a field of {ref.model} ({ref.path}:{ref.span.line}); "
                        '`extra="allow"` does not help (google-adk checks only the fields). Or write a key with a '
                        f"prefix, which google-adk never checks (`temp:{write.key}` lasts one invocation)",
                        f"{_label(agent)}.{_keyword(write)}",
                    )
                )
    return out


def _agents_with(model: AgentModel, instruction: InstructionKey | None, state: StateSchema) -> list[Agent]:
    """The agents of the model given the instruction `instruction` whose `state_schema=` is the model `state`."""
    found = []
    for agent in model.agents.values():
        ref = agent.call.state_schema
        if ref is None or ref.model != state.model or ref.path != state.path or ref.span.start != state.span.start:
            continue
        if instruction is None or any(given.ref.key == instruction for given in agent.instructions):
            found.append(agent)
    return found


def schema_levels(
    model: AgentModel, instruction: InstructionKey | None, found: Iterable[tuple[StateSchema, str, Diagnostic]]
) -> list[Diagnostic]:
    """T001's findings of one instruction (each with the `state_schema=` it is against and the top-level key it
    reads, as [`schema_findings`][templating.linter.adk_schema.schema_findings] gives them) at their level: an
    error where google-adk enforces that schema on every agent given it with it (a root LlmAgent, an LlmAgent
    node of a Workflow) and no app of theirs declares the key in its initial state; else a warning that says
    google-adk does not check it there. Other findings pass as they are."""
    out: list[Diagnostic] = []
    for state, key, diag in found:
        if diag.code != "T001":
            out.append(diag)
            continue
        agents = _agents_with(model, instruction, state)
        enforced = bool(agents)
        given = False
        for agent in agents:
            apps = model.apps_of(agent)
            if not apps:
                enforced = False
            for app in apps:
                schema = model.enforced_schema(agent, app=app)
                if schema is None or schema.by != agent.id:
                    enforced = False
                elif model.initial_state(app).source_of(key) is not None:
                    given = True
        if enforced and not given:
            out.append(diag)
            continue
        why = (
            "the caller's initial state gives it, and google-adk never checks the initial state"
            if enforced
            else "google-adk 2.13 enforces an agent's own state_schema only on a root LlmAgent or a Workflow node"
        )
        out.append(dataclasses.replace(diag, severity="warning", message=f"{diag.message} (advice: {why})"))
    out.sort(key=lambda d: d.severity != "error")  # an error first, where two agents' schemas flag one place
    return out
