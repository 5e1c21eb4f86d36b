"""Agent definitions: validation, the tree's parent links, and the instruction each agent's model receives."""

from __future__ import annotations

import asyncio
from types import MappingProxyType, SimpleNamespace
from typing import Any

import pytest
from pydantic import ValidationError

import templating.agents
import templating.providers
from templating import Agent, MissingKeyError, Template, concat, instruction, jinja, static

STATE = {"user:name": "Ada", "app:brand": "Acme", "order_id": "A-1"}


async def async_global(ctx: Any) -> str:
    return "Async global for <not rendered>."


def canonical(agent: Agent, state: Any = None) -> str:
    return asyncio.run(agent.canonical_instruction(STATE if state is None else state))


def tree() -> tuple[Agent, Agent, Agent]:
    leaf = Agent(name="refunds", instruction=instruction("Refund order <order_id>."))
    middle = Agent(
        name="billing", instruction="Billing for <user:name>.", global_instruction="ignored", sub_agents=[leaf]
    )
    root = Agent(
        name="front_desk",
        instruction=jinja("Route {{ user.name }}'s request."),
        global_instruction='You work for <app:brand>. Reply in JSON: {"answer": ...}',
        sub_agents=[middle],
    )
    return root, middle, leaf


GLOBAL = 'You work for Acme. Reply in JSON: {"answer": ...}'

CANONICAL = [
    ("root", 0, f"{GLOBAL}\n\nRoute Ada's request."),
    ("middle-uses-root-global-not-its-own", 1, f"{GLOBAL}\n\nBilling for Ada."),
    ("leaf", 2, f"{GLOBAL}\n\nRefund order A-1."),
]


@pytest.mark.parametrize(("index", "expected"), [c[1:] for c in CANONICAL], ids=[c[0] for c in CANONICAL])
def test_canonical_instruction_puts_the_root_global_instruction_first(index: int, expected: str) -> None:
    assert canonical(tree()[index]) == expected


SINGLE = [
    ("instruction-only", Agent(name="a", instruction="Hi <user:name>"), "Hi Ada"),
    ("template", Agent(name="a", instruction=Template("Order <order_id>")), "Order A-1"),
    ("no-instruction", Agent(name="a"), ""),
    ("global-only", Agent(name="a", global_instruction="G <app:brand>"), "G Acme"),
    (
        "static-is-verbatim-between-global-and-instruction",
        Agent(name="a", global_instruction="G", static_instruction="Never <user:name>.", instruction="I <order_id>"),
        "G\n\nNever <user:name>.\n\nI A-1",
    ),
    ("async-provider-global", Agent(name="a", global_instruction=async_global), "Async global for <not rendered>."),
    (
        "composed-provider",
        Agent(name="a", instruction=concat(static("<raw>"), instruction("<user:name>"), sep=" ")),
        "<raw> Ada",
    ),
]


@pytest.mark.parametrize(("agent", "expected"), [c[1:] for c in SINGLE], ids=[c[0] for c in SINGLE])
def test_canonical_instruction(agent: Agent, expected: str) -> None:
    assert canonical(agent) == expected


CONTEXTS = [
    ("mapping", STATE),
    ("mapping-proxy", MappingProxyType(STATE)),
    ("object-with-state", SimpleNamespace(state=MappingProxyType(STATE))),
]


@pytest.mark.parametrize("ctx", [c[1] for c in CONTEXTS], ids=[c[0] for c in CONTEXTS])
def test_canonical_instruction_takes_any_read_only_context(ctx: Any) -> None:
    assert canonical(tree()[2], ctx) == f"{GLOBAL}\n\nRefund order A-1."


def test_parent_links_and_lookup() -> None:
    root, middle, leaf = tree()
    assert root.parent_agent is None
    assert middle.parent_agent is root
    assert leaf.parent_agent is middle
    assert leaf.root_agent is root
    assert root.find_agent("refunds") is leaf
    assert root.find_agent("nobody") is None
    assert middle.find_agent("front_desk") is None


def test_a_missing_key_raises_missing_key_error() -> None:
    agent = Agent(name="a", instruction="Hi <user:nmae>")
    with pytest.raises(MissingKeyError) as caught:
        canonical(agent)
    assert caught.value.keys == ("user:nmae",)


def test_fields_are_the_ones_defined() -> None:
    agent = Agent(name="writer", instruction="x", output_key="draft")
    assert agent.output_key == "draft"
    assert agent.static_instruction is None
    assert agent.sub_agents == ()


INVALID = [
    ("name-not-identifier", {"name": "my agent"}, "agent name must be a Python identifier"),
    ("name-keyword", {"name": "class"}, "agent name must be a Python identifier"),
    ("name-user", {"name": "user"}, "reserved"),
    ("instruction-wrong-type", {"name": "a", "instruction": 3}, "instruction"),
    ("static-not-str", {"name": "a", "static_instruction": instruction("<x>")}, "static_instruction"),
    ("unknown-field", {"name": "a", "instructions": "typo"}, "instructions"),
]


@pytest.mark.parametrize(("fields", "match"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_definitions_fail_when_defined(fields: dict[str, Any], match: str) -> None:
    with pytest.raises(ValidationError, match=match):
        Agent(**fields)


def test_an_agent_has_at_most_one_parent() -> None:
    child = Agent(name="child")
    first = Agent(name="first", sub_agents=[child])
    with pytest.raises(ValidationError, match="'child' already has parent 'first'"):
        Agent(name="second", sub_agents=[child])
    assert child.parent_agent is first, "the failed definition changed nothing"


def test_the_same_sub_agent_cannot_be_listed_twice() -> None:
    twin = Agent(name="twin")
    with pytest.raises(ValidationError, match="listed more than once"):
        Agent(name="root", sub_agents=[twin, twin])
    assert twin.parent_agent is None


def test_names_are_unique_in_a_tree() -> None:
    with pytest.raises(ValidationError, match="'twin' is used more than once"):
        Agent(name="root", sub_agents=[Agent(name="twin"), Agent(name="mid", sub_agents=[Agent(name="twin")])])


def test_equality_compares_definitions_not_parent_links() -> None:
    first, second = tree(), tree()
    assert first[0] == second[0]
    assert first[2] == second[2]
    assert first[2] != Agent(name="refunds", instruction="Refund order <order_id>.")
    assert first[0] != "front_desk"


KEYS = [
    ("root", 0, ("app:brand",)),
    ("middle-root-global-then-own", 1, ("app:brand", "user:name")),
    ("leaf-provider-keys", 2, ("app:brand", "order_id")),
]


@pytest.mark.parametrize(("index", "expected"), [c[1:] for c in KEYS], ids=[c[0] for c in KEYS])
def test_keys_are_known_before_running(index: int, expected: tuple[str, ...]) -> None:
    assert tree()[index].keys == expected


def test_keys_of_opaque_providers_are_unknown() -> None:
    agent = Agent(name="a", instruction=concat(static("<x>"), async_global, instruction("<y> <z?>")))
    assert agent.keys == ("y", "z")


def _cycle_of_two() -> None:
    a = Agent(name="a")
    b = Agent(name="b", sub_agents=[a])
    a.sub_agents = (b,)


def _own_sub_agent() -> None:
    a = Agent(name="a")
    a.sub_agents = (a,)


def _cycle_of_three() -> None:
    a = Agent(name="a")
    b = Agent(name="b", sub_agents=[a])
    c = Agent(name="c", sub_agents=[b])
    a.sub_agents = [c]


CYCLES = [
    ("two", _cycle_of_two, "'b' cannot be a sub-agent of 'a'"),
    ("own-sub-agent", _own_sub_agent, "'a' cannot be its own sub-agent"),
    ("three", _cycle_of_three, "the tree would have a cycle"),
]


@pytest.mark.parametrize(("make", "match"), [c[1:] for c in CYCLES], ids=[c[0] for c in CYCLES])
def test_a_cycle_is_a_clear_error(make: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make()


def test_a_rejected_cycle_changes_nothing() -> None:
    a = Agent(name="a")
    b = Agent(name="b", sub_agents=[a])
    with pytest.raises(ValueError, match="cycle"):
        a.sub_agents = [b]
    assert a.sub_agents == ()
    assert a.parent_agent is b
    assert b.root_agent is b
    assert [agent.name for agent in b._walk()] == ["b", "a"]


def test_a_rejected_second_parent_by_assignment_changes_nothing() -> None:
    child = Agent(name="child")
    first = Agent(name="first", sub_agents=[child])
    other = Agent(name="other", sub_agents=[Agent(name="kept")])
    with pytest.raises(ValidationError, match="'child' already has parent 'first'"):
        other.sub_agents = [child]
    assert [sub.name for sub in other.sub_agents] == ["kept"]
    assert child.parent_agent is first


def test_children_that_leave_lose_their_parent() -> None:
    child = Agent(name="child", instruction="Child.")
    stays = Agent(name="stays")
    root = Agent(name="root", global_instruction="Root global.", sub_agents=[child, stays])
    assert canonical(child) == "Root global.\n\nChild."
    root.sub_agents = [stays]
    assert child.parent_agent is None
    assert child.root_agent is child
    assert stays.parent_agent is root
    assert canonical(child) == "Child.", "the old root's global instruction no longer applies"
    elsewhere = Agent(name="elsewhere", sub_agents=[child])
    assert child.parent_agent is elsewhere


def test_sub_agents_cannot_be_changed_in_place() -> None:
    root = Agent(name="root", sub_agents=[Agent(name="a")])
    assert isinstance(root.sub_agents, tuple)
    with pytest.raises(AttributeError):
        root.sub_agents.append(Agent(name="b"))  # type: ignore[attr-defined]
    root.sub_agents = (*root.sub_agents, Agent(name="b"))
    assert [sub.parent_agent for sub in root.sub_agents] == [root, root]


OUTPUT_KEYS = [
    ("plain", "summary", True),
    ("scoped", "user:summary", True),
    ("temp", "temp:draft", True),
    ("blank", "", False),
    ("spaces", " summary", False),
    ("dotted", "a.b", False),
    ("unknown-scope", "usr:summary", False),
    ("scope-only", "user:", False),
    ("not-identifier", "first-name", False),
]


@pytest.mark.parametrize(("key", "valid"), [c[1:] for c in OUTPUT_KEYS], ids=[c[0] for c in OUTPUT_KEYS])
def test_output_key_is_a_readable_state_key(key: str, valid: bool) -> None:
    if valid:
        assert Agent(name="a", output_key=key).output_key == key
    else:
        with pytest.raises(ValidationError, match="output_key must be a state key"):
            Agent(name="a", output_key=key)


STRICT_STRINGS = [
    ("instruction-spaced", "instruction", "Hi < user:name >", "T002"),
    ("global-bad-scope", "global_instruction", "Brand <ap:brand>", "T003"),
    ("instruction-doubled-question", "instruction", "Hi <nick??>", "T006"),
]


@pytest.mark.parametrize(
    ("field", "source", "code"), [c[1:] for c in STRICT_STRINGS], ids=[c[0] for c in STRICT_STRINGS]
)
def test_template_strings_are_checked_strictly(field: str, source: str, code: str) -> None:
    with pytest.raises(ValidationError, match=rf"\[{code}\]"):
        Agent(name="a", **{field: source})
    assert Agent(name="a", **{field: instruction(source, strict=False)})
    assert Agent(name="a", **{field: Template(source)})


def test_string_instructions_are_parsed_once_per_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent keeps its parsed templates, so a turn never re-parses (even once parse's LRU cache overflows)."""
    agent = Agent(name="a", global_instruction="G <app:brand>", instruction="Hi <user:name>")

    def no_parse(source: str) -> Template:
        raise AssertionError(f"parsed again: {source!r}")

    monkeypatch.setattr(templating.providers, "parse", no_parse)
    monkeypatch.setattr(templating.agents, "parse", no_parse)
    assert canonical(agent) == "G Acme\n\nHi Ada"
    assert canonical(agent) == "G Acme\n\nHi Ada"


def test_model_copy_renders_the_updated_instruction_and_validates_it() -> None:
    agent = Agent(name="greeter", instruction="Hello <user:name>", output_key="reply")
    bye = agent.model_copy(update={"instruction": "Bye <user:name>"})
    assert canonical(bye) == "Bye Ada"
    assert canonical(agent) == "Hello Ada"
    assert (bye.output_key, bye.parent_agent) == ("reply", None)
    with pytest.raises(ValidationError, match=r"\[T001\]|near miss|< name >"):
        agent.model_copy(update={"instruction": "Bye < name >"})
    with pytest.raises(ValidationError, match="extra"):
        agent.model_copy(update={"no_such_field": 1})
    assert canonical(agent.model_copy(deep=True)) == "Hello Ada"


def test_an_instruction_assigned_after_definition_is_the_one_rendered() -> None:
    agent = Agent(name="greeter", instruction="Hello <user:name>")
    object.__setattr__(agent, "__dict__", {**agent.__dict__, "instruction": "Hi <order_id>"})  # bypasses validation
    assert canonical(agent) == "Hi A-1"


def test_model_copy_of_an_agent_with_sub_agents_is_refused() -> None:
    root, middle, _ = tree()
    with pytest.raises(TypeError, match="has sub_agents"):
        middle.model_copy()
    with pytest.raises(TypeError, match="has sub_agents"):
        root.model_copy(update={"name": "other"})


def three_levels() -> tuple[Agent, Agent, Agent]:
    leaf = Agent(name="leaf")
    mid = Agent(name="mid", sub_agents=[leaf])
    top = Agent(name="top", sub_agents=[mid])
    return top, mid, leaf


TREE_CHANGES: list[tuple[str, Any]] = [
    ("sub-agent-named-like-the-root", lambda mid: setattr(mid, "sub_agents", [Agent(name="top")])),
    ("rename-to-a-child-name", lambda mid: setattr(mid, "name", "leaf")),
    ("rename-to-the-root-name", lambda mid: setattr(mid, "name", "top")),
]


@pytest.mark.parametrize("change", [c[1] for c in TREE_CHANGES], ids=[c[0] for c in TREE_CHANGES])
def test_names_stay_unique_in_the_whole_tree_when_a_middle_agent_changes(change: Any) -> None:
    top, mid, leaf = three_levels()
    with pytest.raises(ValidationError, match="is used more than once in the tree of 'top'"):
        change(mid)
    assert (mid.name, mid.sub_agents, leaf.parent_agent) == ("mid", (leaf,), mid)
    assert [agent.name for agent in top._walk()] == ["top", "mid", "leaf"]
