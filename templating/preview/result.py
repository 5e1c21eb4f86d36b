"""What a preview holds: for each agent of an app, in run order, what google-adk sends its model on that
agent's first turn, and where each state key it reads comes from. Plain data, no google-adk."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

__all__ = [
    "AgentPreview",
    "KeyRead",
    "KeySource",
    "Preview",
    "Reached",
    "marker",
]

KeySource: TypeAlias = Literal["state", "earlier", "marker", "missing", "absent"]
"""Where the value of a key an agent reads comes from: `state` (the state given: `--state`, the declared initial
state), `earlier` (written by an agent that runs before it), `marker` (written at run time by code the preview does
not run: its value is a marker), `missing` (nobody supplies it and google-adk requires it: it raises KeyError there;
the preview shows a marker) or `absent` (optional and not supplied: google-adk sends nothing for it)."""

Reached: TypeAlias = Literal["root", "sequence", "loop", "parallel", "transfer", "agent_tool", "workflow", "custom"]
"""How an agent comes to run: as the tree's root, in a SequentialAgent, in a LoopAgent's first iteration, in a
ParallelAgent (beside its siblings), by a transfer from its parent (the model chooses), as an AgentTool a model
calls, as a Workflow node, or under a custom agent (its code decides)."""


def marker(what: str) -> str:
    """The visible value shown for a key whose real value is not known here (`⟨output of writer⟩`)."""
    return f"\u27e8{what}\u27e9"


@dataclass(frozen=True, slots=True)
class KeyRead:
    """A state key (or `artifact.NAME`) an agent's instructions read on its first turn, and where its value
    comes from: `source` (see [`KeySource`][templating.preview.result.KeySource]), `by` the agent (or callback)
    that writes it when `source` is `earlier` or `marker`, and `value` the text the model sees for it (a marker
    for `marker` and `missing`; None when the value is given state, shown as it is). `optional`: whether its
    placeholder is optional (`{key?}`), when the code says (None: not known, as for a provider's reads)."""

    key: str
    source: KeySource
    by: str | None = None
    value: str | None = None
    optional: bool | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "source": self.source}
        if self.optional is not None:
            out["optional"] = self.optional
        if self.by is not None:
            out["by"] = self.by
        if self.value is not None:
            out["value"] = self.value
        return out


@dataclass(frozen=True, slots=True)
class AgentPreview:
    """One agent's first-turn request as google-adk assembles it.

    `system_instruction` is the exact `config.system_instruction`; `instruction_turn` the exact text of the user
    turn google-adk inserts when the agent has a `static_instruction` (its dynamic instruction, fenced), else None;
    both None when the request could not be assembled (`error` says why). `tools` are the names of the tools the
    model is offered, in the request's order (google-adk's built-in tools by their kind). `reads` the keys the
    instructions read. `exact`: whether this is byte for byte what google-adk sends for the given state (`notes`
    say why not, and anything else worth knowing). `order`: its place in the run order (1 for the first).
    `partial`: None, or why this is only the part this project renders (google-adk not installed) and which parts
    need the `adk` extra; `system_instruction` then holds the agent's instructions rendered with the state."""

    agent: str
    path: tuple[str, ...]
    kind: str
    reached: Reached
    via: str | None = None
    model: str | None = None
    system_instruction: str | None = None
    instruction_turn: str | None = None
    tools: tuple[str, ...] = ()
    reads: tuple[KeyRead, ...] = ()
    exact: bool = True
    notes: tuple[str, ...] = ()
    error: str | None = None
    order: int = 0
    partial: str | None = None

    def keys(self, source: KeySource) -> list[str]:
        """The keys read whose value comes from `source`, in the order they are read."""
        return [read.key for read in self.reads if read.source == source]

    def to_json(self) -> dict[str, Any]:
        """The JSON object `templating preview --format json` prints for this agent."""
        return {
            "agent": self.agent,
            "order": self.order,
            "path": list(self.path),
            "kind": self.kind,
            "reached": self.reached,
            "via": self.via,
            "model": self.model,
            "system_instruction": self.system_instruction,
            "instruction_turn": self.instruction_turn,
            "tools": list(self.tools),
            "keys": {
                "read": [read.key for read in self.reads],
                "given": self.keys("state"),
                "supplied": {read.key: read.by for read in self.reads if read.source in ("earlier", "marker")},
                "missing": self.keys("missing"),
                "absent_optional": self.keys("absent"),
            },
            "reads": [read.to_json() for read in self.reads],
            "exact": self.exact,
            "notes": list(self.notes),
            "error": self.error,
            "partial": self.partial,
        }


@dataclass(frozen=True, slots=True)
class Preview:
    """The previews of an app's agents in run order: `target` as the user named it, `mode` `static` (read from
    the code, nothing of it run), `run` (the app imported) or `partial` (read from the code without google-adk:
    each agent's instructions as this project renders them, not the exact request), `notes` about the whole app."""

    target: str
    mode: Literal["static", "run", "partial"]
    agents: tuple[AgentPreview, ...]
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> list[dict[str, Any]]:
        return [agent.to_json() for agent in self.agents]

    def named(self, name: str) -> list[AgentPreview]:
        """The previews of the agents called `name` (an AgentTool's agent may share a tree agent's name)."""
        return [agent for agent in self.agents if agent.agent == name]
