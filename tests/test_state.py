"""The State view (templating.sessions.state): reads with the delta on top, writes to both, copies."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from templating import State, render
from templating.nodes import SCOPE_PREFIXES, SCOPES
from templating.sessions.values import scope_of


def test_prefix_constants_come_from_the_one_definition() -> None:
    assert (State.APP_PREFIX, State.USER_PREFIX, State.TEMP_PREFIX) == ("app:", "user:", "temp:")
    assert (State.APP_PREFIX, State.USER_PREFIX, State.TEMP_PREFIX) == SCOPE_PREFIXES
    assert [scope_of(prefix + "key") for prefix in SCOPE_PREFIXES] == list(SCOPES)


def test_reads_prefer_the_delta() -> None:
    state = State({"a": 1, "b": 2}, delta={"b": 20, "c": 30})
    assert (state["a"], state["b"], state["c"]) == (1, 20, 30)
    assert state.get("b") == 20
    assert state.get("zzz", "default") == "default"
    assert "c" in state
    assert "zzz" not in state
    assert state.to_dict() == {"a": 1, "b": 20, "c": 30}
    assert sorted(state) == ["a", "b", "c"]
    assert len(state) == 3
    assert state.has_delta()
    with pytest.raises(KeyError):
        state["zzz"]


def test_writes_update_value_and_delta() -> None:
    value: dict[str, Any] = {"count": 1}
    state = State(value)
    assert not state.has_delta()
    state["count"] = 2
    state.update({"user:lang": "en", "temp:step": None})
    assert value == {"count": 2, "user:lang": "en", "temp:step": None}
    assert state.to_dict() == value
    assert state.has_delta()
    delta: dict[str, Any] = {}
    tracked = State(value, delta=delta)
    tracked["x"] = [1, {"y": 2}]
    assert delta == {"x": [1, {"y": 2}]}
    assert value["x"] == [1, {"y": 2}]


def test_writes_are_copies_and_the_delta_shares_nothing() -> None:
    value: dict[str, Any] = {}
    delta: dict[str, Any] = {}
    cart = ["book"]
    state = State(value, delta=delta)
    state["cart"] = cart
    cart.append("pen")  # the caller's list is not state
    assert state["cart"] == ["book"]
    assert value["cart"] == delta["cart"] == ["book"]
    assert value["cart"] is not delta["cart"]
    assert state["cart"] is not delta["cart"]


def test_assign_the_whole_key_nested_mutation_in_place_is_not_tracked() -> None:
    """The rule: in-place changes to a nested value never reach the delta, written before or not."""
    value: dict[str, Any] = {"profile": {"a": 1}, "tags": ["x"]}
    delta: dict[str, Any] = {}
    state = State(value, delta=delta)
    state["cart"] = ["book"]
    state["cart"].append("lamp")  # a key written earlier in the turn
    state["profile"]["a"] = 2  # a key not written
    state["tags"].append("y")
    assert delta == {"cart": ["book"]}
    state["profile"] = {**state["profile"], "b": 3}  # assigning the whole key is tracked
    state["cart"] = [*state["cart"], "pen"]
    assert delta == {"cart": ["book", "lamp", "pen"], "profile": {"a": 2, "b": 3}}


def test_a_delta_given_from_outside_is_read_but_never_handed_out() -> None:
    outside: dict[str, Any] = {"x": {"k": [1]}}
    state = State({"x": "old"}, delta=outside)
    assert state["x"] == {"k": [1]}
    state["x"]["k"].append(2)
    state.to_dict()["x"]["k"].append(3)
    assert outside == {"x": {"k": [1]}}


def test_to_dict_is_a_deep_copy_in_key_order() -> None:
    value: dict[str, Any] = {"b": {"n": [1]}, "a": 2}
    state = State(value, delta={"c": 3, "a": 4})
    combined = state.to_dict()
    assert list(combined) == list(state) == ["b", "a", "c"]
    assert combined == {"b": {"n": [1]}, "a": 4, "c": 3}
    combined["b"]["n"].append(2)
    assert value["b"] == {"n": [1]}


def test_state_is_a_mapping_that_templates_render_from() -> None:
    state = State({"user:name": "Ada"}, delta={"order": {"id": "A-1"}})
    assert isinstance(state, Mapping)
    assert state == {"user:name": "Ada", "order": {"id": "A-1"}}
    assert render("<user:name> <order.id> <nick?>", state) == "Ada A-1 "
    assert "delta=" in repr(state)
