"""What a static preview keeps between previews (templating/preview/reuse.py): the tokens that key each agent's
request are equal exactly when nothing google-adk's processors read differs, and a value they cannot say as data
keeps nothing. Plain pydantic models stand for google-adk's agents (the same generic walk over their fields)."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from templating.preview.reuse import Opaque, RequestCache, Tokens


class Agent(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    description: str = ""
    instruction: str = ""
    global_instruction: str = ""
    tools: list[Any] = []
    sub_agents: list[Agent] = []
    parent_agent: Agent | None = None


def said(agent: Any) -> Hashable:
    """What the code says each instruction is (as `Facts.instructions`): instruction, static, global."""
    return (agent.instruction, None, agent.global_instruction)


def tree(**changes: Any) -> Agent:
    child = Agent(name="child", description="Helps.", instruction="Help {user}.")
    child.__dict__.update(changes.pop("child", {}))
    options = {"name": "root", "instruction": "Route.", "global_instruction": "Be kind.", **changes}
    root = Agent(sub_agents=[child], **options)
    child.parent_agent = root
    return root


def lookup(city: str) -> str:
    """Looks a city up."""
    return city


def lookup_other(city: str) -> str:
    """Looks a city up."""
    return city


class Unknown:
    __slots__ = ("x",)


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (lambda: tree(), lambda: tree(), True),
        (lambda: tree(), lambda: tree(description="Routes."), False),
        (lambda: tree(), lambda: tree(child={"description": "Assists."}), False),
        (lambda: tree(), lambda: tree(child={"instruction": "Help {user} now."}), True),  # another agent's own
        (lambda: tree(), lambda: tree(global_instruction="Be brief."), False),  # the root's global: read by all
        (lambda: tree(), lambda: tree(tools=[lookup]), False),
        (lambda: tree(tools=[lookup]), lambda: tree(tools=[lookup_other]), False),
        (lambda: tree(tools=[lookup]), lambda: tree(tools=[lookup]), True),
        (lambda: 1, lambda: True, False),
        (lambda: 1, lambda: 1.0, False),
        (lambda: "a", lambda: type("Marker", (str,), {})("a"), False),
        (lambda: {"k": [1, "x"]}, lambda: {"k": [1, "x"]}, True),
        (lambda: {"k": [1, "x"]}, lambda: {"k": (1, "x")}, False),
    ],
    ids=[
        "the same tree",
        "the root's description",
        "a sub-agent's description",
        "a sub-agent's instruction",
        "the global instruction",
        "a tool added",
        "another function",
        "the same function",
        "1 and True",
        "1 and 1.0",
        "a str and a marker",
        "the same data",
        "a list and a tuple",
    ],
)
def test_tokens_are_equal_exactly_when_nothing_read_differs(a: Any, b: Any, equal: bool) -> None:
    assert (Tokens(said).of(a()) == Tokens(said).of(b())) is equal


def test_the_assembled_agents_own_instructions_are_in_its_token_and_no_others() -> None:
    first, second = tree(), tree(child={"instruction": "Help {user} now."})
    tokens = [Tokens(said) for _ in range(2)]
    assert tokens[0].of(first) == tokens[1].of(second)
    own = [t.of(r.sub_agents[0], keep=r.sub_agents[0]) for t, r in zip(tokens, (first, second), strict=True)]
    assert own[0] != own[1]
    # the memo of one walk: the tree's token is not changed by an agent's own having been asked
    assert tokens[0].of(first) == Tokens(said).of(tree())
    assert tokens[0].of(first, keep=first) != tokens[0].of(first)


@pytest.mark.parametrize(
    "value",
    [Unknown(), [object.__new__(Unknown)], len],
    ids=["an object of slots only", "inside a list", "a builtin"],
)
def test_a_value_not_said_as_data_keeps_nothing(value: Any) -> None:
    with pytest.raises(Opaque):
        Tokens(said).of(value)


def test_a_cycle_keeps_nothing() -> None:
    looped: list[Any] = []
    looped.append(Agent(name="a", tools=[looped]))
    with pytest.raises(Opaque):
        Tokens(said).of(looped[0])


@dataclass
class Made:
    notes: list[str] = field(default_factory=list)


def test_the_cache_gives_copies_and_drops_the_least_recently_used() -> None:
    cache = RequestCache(2)
    cache.put("a", Made(["one"]))
    got = cache.get("a")
    got.notes.append("changed by a caller")
    assert cache.get("a") == Made(["one"])
    cache.put("b", Made())
    cache.get("a")
    cache.put("c", Made())
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (Made(["one"]), None, Made())
    cache.clear()
    assert len(cache) == 0


def test_tokens_kept_for_the_next_walk_are_those_of_the_objects_walked_since_the_last_prune() -> None:
    tokens = Tokens(said)
    first, second = tree(), tree(description="Routes.")
    before = tokens.of(first)
    tokens.prune()
    assert tokens.of(first) is before  # kept: the same token, not walked again
    tokens.prune()
    after = tokens.of(second)
    tokens.prune()  # the first tree was not walked since: let go
    assert id(first) not in tokens._done
    assert tokens.of(second) is after
    assert after != before
    assert after == Tokens(said).of(tree(description="Routes."))
    assert hash(after) == hash(Tokens(said).of(tree(description="Routes.")))
