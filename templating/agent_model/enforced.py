"""Which `state_schema=` google-adk 2.13 enforces on an agent's writes, and where: the schema of the `Workflow` an
agent is a node of (or the node's own, an LlmAgent node's), checked on every write of the node (output_key,
callbacks, tools, a function node's events), and a root LlmAgent's own (run on the node runtime). An LlmAgent's
`state_schema` inside a SequentialAgent, ParallelAgent or LoopAgent (the legacy path) is never enforced, nor is a
schema on one of those. A key holding `:` bypasses the check; `extra="allow"` does not widen it (only the model's
fields count)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from ..pysource import SchemaRef
from .facts import Agent, App

__all__ = ["EnforcedSchema", "enforced_schema"]


@dataclass(frozen=True, slots=True)
class EnforcedSchema:
    """A schema google-adk checks an agent's writes against: `schema` (the model and its fields), `by` the id of
    the agent whose `state_schema=` it is, and `where`: `workflow` (the Workflow's, on its nodes' writes),
    `workflow-node` (an LlmAgent node's own), `root-llm` (a root LlmAgent's own)."""

    schema: SchemaRef
    by: str
    where: Literal["workflow", "workflow-node", "root-llm"]

    def declares(self, key: str) -> bool | None:
        """Whether google-adk accepts a write of `key` (None: the model's fields are not all known)."""
        return self.schema.declares(key)


def enforced_schema(agents: Mapping[str, Agent], app: App, agent: str) -> EnforcedSchema | None:
    """The schema google-adk enforces on the writes of `agent` in `app` (None: none is)."""
    here = agents[agent]
    path = app.path_to(agent)
    parent = agents[path[-2][0]] if len(path) > 1 else None
    if parent is not None and parent.kind == "workflow" and path[-1][1] == "node":
        if here.kind == "llm" and here.call.state_schema is not None:
            return EnforcedSchema(here.call.state_schema, here.id, "workflow-node")
        if parent.call.state_schema is not None:
            return EnforcedSchema(parent.call.state_schema, parent.id, "workflow")
        return None
    if here.kind == "workflow" and here.call.state_schema is not None:
        return EnforcedSchema(here.call.state_schema, here.id, "workflow")  # its function nodes' writes
    if len(path) == 1 and here.kind == "llm" and here.call.state_schema is not None:
        return EnforcedSchema(here.call.state_schema, here.id, "root-llm")
    return None
