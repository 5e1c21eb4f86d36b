"""Agent definitions: a small pydantic model of an agent tree and the instruction each agent's model receives.

The shape follows Google ADK's `LlmAgent` (`name`, `instruction`, `global_instruction`,
`static_instruction`, `output_key`, `sub_agents`), so a definition written here reads like
one written there; the instructions use this package's templates and providers.
"""

from __future__ import annotations

import copy
import keyword
from collections.abc import Mapping
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, PrivateAttr, field_validator, model_validator

from .providers import InstructionLike, check_near_misses, read_keys, resolve
from .template import Template, parse

__all__ = ["Agent"]

_INSTRUCTION_SEPARATOR = "\n\n"


class Agent(BaseModel):
    """One agent in a tree of agents.

    - `instruction` / `global_instruction`: a template source (`str`), a `Template` or a
      provider. Strings are parsed and checked when the agent is defined, as `instruction(s)`
      does (strict: a near miss such as `< name >` fails; pass `instruction(s, strict=False)`
      or a `Template` to keep such text). Only the *root* agent's `global_instruction` is
      used, for every agent in the tree (as in ADK).
    - `static_instruction`: text sent exactly as written (never rendered), for content that never
      changes; placed between the global instruction and the instruction, as ADK does.
    - `output_key`: the state key the agent's reply is saved under: a key a template can read
      (an identifier, optionally scoped: `summary`, `user:summary`).
    - `sub_agents`: child agents, kept as a tuple (assign a new sequence to change them); each
      gets this agent as its `parent_agent`, and children that leave lose it. An agent has at
      most one parent, names are unique within the whole tree (checked from the root, whichever
      agent changes), and the tree has no cycles.

    `model_copy(update=...)` validates the copy as a new definition; copying an agent that has
    `sub_agents` raises `TypeError` (a sub-agent has one parent).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid", validate_assignment=True)

    name: str
    instruction: InstructionLike = ""
    global_instruction: InstructionLike = ""
    static_instruction: str | None = None
    output_key: str | None = None
    sub_agents: tuple[Agent, ...] = ()

    _parent: Agent | None = PrivateAttr(default=None)
    _linked: tuple[Agent, ...] = PrivateAttr(default=())
    _templates: dict[str, Template] = PrivateAttr(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _check_name(cls, name: str) -> str:
        if not name.isidentifier() or keyword.iskeyword(name):
            raise ValueError(f"agent name must be a Python identifier, not {name!r}")
        if name == "user":
            raise ValueError("agent name 'user' is reserved for the end user's messages")
        return name

    @field_validator("instruction", "global_instruction")
    @classmethod
    def _parse_source(cls, value: InstructionLike) -> InstructionLike:
        if isinstance(value, str):
            check_near_misses(parse(value))  # parsed and checked now, so a typo fails at definition
        return value

    @field_validator("output_key")
    @classmethod
    def _check_output_key(cls, key: str | None) -> str | None:
        if key is None:
            return None
        placeholders = parse(f"<{key}>").placeholders
        if "." in key or len(placeholders) != 1 or placeholders[0].key != key:
            raise ValueError(
                f"output_key must be a state key a template can read (an identifier, optionally scoped "
                f"with app:, user: or temp:), not {key!r}"
            )
        return key

    @model_validator(mode="after")
    def _link_sub_agents(self) -> Agent:
        self._check_no_cycle(self.sub_agents)
        if len({id(sub) for sub in self.sub_agents}) != len(self.sub_agents):
            raise ValueError(f"a sub-agent is listed more than once in the sub_agents of {self.name!r}")
        seen: set[str] = set()
        root = self.root_agent  # the whole tree, not only below this agent: a name is unique in all of it
        for agent in root._walk():
            if agent.name in seen:
                raise ValueError(f"agent name {agent.name!r} is used more than once in the tree of {root.name!r}")
            seen.add(agent.name)
        for sub in self.sub_agents:
            if sub._parent is not None and sub._parent is not self:
                raise ValueError(
                    f"agent {sub.name!r} already has parent {sub._parent.name!r}; it cannot also be a sub-agent of "
                    f"{self.name!r}"
                )
        # Every check passed: now change links (children that left lose this parent).
        for old in self._linked:
            if not any(old is sub for sub in self.sub_agents):
                old._parent = None
        for sub in self.sub_agents:
            sub._parent = self
        self._linked = self.sub_agents
        self._templates = {
            field: parse(value)
            for field, value in (("instruction", self.instruction), ("global_instruction", self.global_instruction))
            if isinstance(value, str)
        }
        return self

    def _check_no_cycle(self, subs: object) -> None:
        for sub in subs if isinstance(subs, (list, tuple)) else ():
            if sub is self:
                raise ValueError(f"agent {self.name!r} cannot be its own sub-agent")
            if isinstance(sub, Agent) and any(agent is self for agent in sub._walk()):
                raise ValueError(
                    f"agent {sub.name!r} cannot be a sub-agent of {self.name!r}: {self.name!r} is already below "
                    f"{sub.name!r}, so the tree would have a cycle"
                )

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "sub_agents":
            self._check_no_cycle(value)  # before pydantic, whose own recursion guard gives an unclear error
        # pydantic keeps an assigned value even when a model validator then rejects it; put it back,
        # so a rejected assignment (a cycle, a second parent) changes nothing.
        before = dict(self.__dict__)
        try:
            super().__setattr__(name, value)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Agent:
        """A new agent with the same fields (`update` replacing some), validated as a new definition is.

        The copy has no parent. Copying an agent that has `sub_agents` is not supported (a sub-agent
        has one parent): it raises `TypeError`; build the new tree from new agents instead.
        """
        if self.sub_agents:
            raise TypeError(
                f"model_copy() of agent {self.name!r} is not supported: it has sub_agents, and a sub-agent has "
                "exactly one parent; define a new Agent (with new sub-agents) instead"
            )
        fields = {name: getattr(self, name) for name in type(self).model_fields}
        if deep:
            fields = copy.deepcopy(fields)
        return type(self)(**{**fields, **(update or {})})

    def __eq__(self, other: object) -> bool:
        """Equal definitions: the same fields, sub-agents compared downwards (the parent link is not compared)."""
        if not isinstance(other, Agent):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]  # mutable, like every non-frozen pydantic model

    @property
    def parent_agent(self) -> Agent | None:
        """The agent this one is a sub-agent of, if any."""
        return self._parent

    @property
    def root_agent(self) -> Agent:
        """The top of the tree this agent belongs to."""
        agent = self
        parent = _private(agent, "_parent")
        while parent is not None and parent is not self:
            agent = parent
            parent = _private(agent, "_parent")
        return agent

    @property
    def keys(self) -> tuple[str, ...]:
        """The state keys this agent's instruction uses, where they can be known before it runs.

        From the root's `global_instruction` and this agent's `instruction`: template strings,
        `Template`s and providers with `.keys` (`instruction`, `concat`, `when`). Other
        callables and Jinja2 providers add none.
        """
        found: dict[str, None] = {}
        for part in (self.root_agent.global_instruction, self.instruction):
            found.update(dict.fromkeys(_keys_of(part)))
        return tuple(found)

    def find_agent(self, name: str) -> Agent | None:
        """This agent or a descendant with `name`."""
        return next((agent for agent in self._walk() if agent.name == name), None)

    def _walk(self) -> list[Agent]:
        """This agent and its descendants, depth first; each once, even if links were forced into a cycle."""
        found: list[Agent] = []
        visited: set[int] = set()
        stack = [self]
        while stack:
            agent = stack.pop()
            if id(agent) in visited:
                continue
            visited.add(id(agent))
            found.append(agent)
            stack.extend(reversed(agent.sub_agents))
        return found

    def _parsed(self, field: str) -> InstructionLike:
        """The field's value, a string as its parsed template: the one kept at definition if it is still
        the field's source, else parsed now (and cached by `parse`)."""
        value: InstructionLike = getattr(self, field)
        if not isinstance(value, str):
            return value
        kept = _private(self, "_templates").get(field)
        return kept if kept is not None and kept.source == value else parse(value)

    async def canonical_instruction(self, ctx: Any) -> str:
        """The system instruction this agent's model receives for `ctx` (a mapping or an object with `.state`).

        The root agent's `global_instruction`, then `static_instruction` verbatim, then this
        agent's `instruction`, each rendered against `ctx` and separated by a blank line; empty
        parts are left out.
        """
        root = self.root_agent
        parts = [
            await _resolve_field(root, "global_instruction", ctx),
            self.static_instruction or "",
            await _resolve_field(self, "instruction", ctx),
        ]
        return _INSTRUCTION_SEPARATOR.join(part for part in parts if part)


def turn_keys(agent: Agent) -> tuple[str, ...] | None:
    """The state keys `agent.canonical_instruction` may read (see `providers.read_keys`), or `None` when a part
    of it may read any key: what a [`Runner`][templating.Runner] turn reads from its session."""
    found: dict[str, None] = {}
    for part in (agent.root_agent.global_instruction, agent.instruction):
        keys = read_keys(part)
        if keys is None:
            return None
        found.update(dict.fromkeys(keys))
    return tuple(found)


def _private(agent: Agent, name: str) -> Any:
    """A private attribute read from pydantic's store directly: `agent._name` first fails the normal
    lookup and then goes through `BaseModel.__getattr__`, which costs more than rendering a template
    does, on the path every turn takes."""
    return cast(dict[str, Any], agent.__pydantic_private__)[name]


async def _resolve_field(agent: Agent, field: str, ctx: Any) -> str:
    """An instruction field resolved for `ctx`; an empty string (the default) is empty, with no render."""
    value = getattr(agent, field)
    if isinstance(value, str) and not value:
        return ""
    return await resolve(agent._parsed(field), ctx)


def _keys_of(instruction: InstructionLike) -> tuple[str, ...]:
    if isinstance(instruction, str):
        return parse(instruction).keys
    if isinstance(instruction, Template):
        return instruction.keys
    found = getattr(instruction, "keys", ())
    return tuple(key for key in found if isinstance(key, str)) if isinstance(found, tuple) else ()
