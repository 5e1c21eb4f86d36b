"""State: the delta view, prefixes and scopes, and what counts as a state value."""

from __future__ import annotations

import json
import pickle
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from templating import InvalidStateError, State, TemplatingError, render
from templating.nodes import SCOPE_PREFIXES, SCOPES
from templating.state import check_state, check_value, copy_checked, scope_of


def test_prefix_constants_come_from_the_one_definition() -> None:
    assert (State.APP_PREFIX, State.USER_PREFIX, State.TEMP_PREFIX) == ("app:", "user:", "temp:")
    assert (State.APP_PREFIX, State.USER_PREFIX, State.TEMP_PREFIX) == SCOPE_PREFIXES
    assert [scope_of(prefix + "key") for prefix in SCOPE_PREFIXES] == list(SCOPES)


@pytest.mark.parametrize(
    ("key", "scope"),
    [
        ("name", None),
        ("app:tier", "app"),
        ("user:name", "user"),
        ("temp:step", "temp"),
        ("other:key", None),
        ("username", None),
        ("App:tier", None),
        ("user", None),
    ],
    ids=["session", "app", "user", "temp", "unknown-prefix", "no-colon", "case-matters", "bare-word"],
)
def test_scope_of(key: str, scope: str | None) -> None:
    assert scope_of(key) == scope


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


class Opaque:
    pass


cyclic: list[Any] = []
cyclic.append(cyclic)

BAD_VALUES = [
    ("set", {1, 2}, "'v' is not plain JSON: it is of type set"),
    ("tuple", (1, 2), "it is of type tuple"),
    ("object", Opaque(), "it is of type Opaque"),
    ("bytes", b"x", "it is of type bytes"),
    ("nested-object", {"a": [1, Opaque()]}, "state value \"v['a'][1]\" is not plain JSON"),
    ("non-string-inner-key", {"a": {1: "x"}}, "\"v['a'][1]\" is not plain JSON: it has a key of type int"),
    ("nan", float("nan"), "'v' is not plain JSON: it is nan, which JSON cannot hold (it has no NaN or infinity)"),
    ("infinity", float("inf"), "'v' is not plain JSON: it is inf, which JSON cannot hold"),
    ("minus-infinity", [float("-inf")], "'v[0]' is not plain JSON: it is -inf, which JSON cannot hold"),
    ("str-subclass", type("Name", (str,), {})("x"), "it is of type Name"),
    ("cycle", cyclic, "contains itself"),
    ("function", len, "builtin_function_or_method"),
]


@pytest.mark.parametrize(("value", "message"), [c[1:] for c in BAD_VALUES], ids=[c[0] for c in BAD_VALUES])
def test_bad_values_are_rejected_and_change_nothing(value: Any, message: str) -> None:
    value_dict: dict[str, Any] = {"keep": 1}
    delta: dict[str, Any] = {}
    state = State(value_dict, delta=delta)
    with pytest.raises(InvalidStateError, match="not plain JSON") as info:
        state.update({"ok": 2, "v": value})
    assert message in str(info.value)
    assert "help: state values are str, int, float, bool, None" in str(info.value)
    assert info.value.key == "v"
    assert value_dict == {"keep": 1}
    assert delta == {}
    with pytest.raises(InvalidStateError):
        state["v"] = value
    assert value_dict == {"keep": 1}


@pytest.mark.parametrize("key", [1, None, ("a",), b"k"], ids=["int", "none", "tuple", "bytes"])
def test_non_string_keys_are_rejected(key: Any) -> None:
    state = State({})
    with pytest.raises(InvalidStateError, match="not a string") as info:
        state.update({"fine": 1, key: "x"})
    assert "help: state keys are strings" in str(info.value)
    assert state.to_dict() == {}


GOOD_VALUES = [
    ("none", None),
    ("str", "é"),
    ("int", -3),
    ("bool", True),
    ("float", 1.5),
    ("list", [1, "a", None, [True]]),
    ("dict", {"a": {"b": [1.0, {"c": None}]}}),
    ("empty", {}),
]


@pytest.mark.parametrize("value", [c[1] for c in GOOD_VALUES], ids=[c[0] for c in GOOD_VALUES])
def test_plain_json_values_are_accepted_as_deep_copies(value: Any) -> None:
    copied = check_value("v", value)
    assert copied == value
    if isinstance(value, (list, dict)):
        assert copied is not value


def test_check_state_needs_a_mapping() -> None:
    with pytest.raises(TypeError, match="must be a mapping"):
        check_state([("a", 1)])  # type: ignore[arg-type]


def test_invalid_state_error_is_a_value_error_and_pickles() -> None:
    with pytest.raises(InvalidStateError) as info:
        check_state({"v": {1}})
    error = info.value
    assert isinstance(error, ValueError)
    assert isinstance(error, TemplatingError)
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is InvalidStateError
    assert str(copy) == str(error)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_every_plain_json_value_is_accepted_and_survives_json(value: Any) -> None:
    copied = check_value("v", value)
    assert copied == value
    assert json.loads(json.dumps(copied, allow_nan=False)) == copied


def containers(value: Any) -> list[int]:
    """The ids of every list and dict in ``value``, itself included."""
    if isinstance(value, dict):
        return [id(value), *(found for item in value.values() for found in containers(item))]
    if isinstance(value, list):
        return [id(value), *(found for item in value for found in containers(item))]
    return []


@given(st.dictionaries(st.text(max_size=5), json_values, max_size=6))
def test_copy_checked_is_a_deep_copy_that_shares_no_container(state: dict[str, Any]) -> None:
    checked = check_state(state)
    copied = copy_checked(checked)
    assert copied == checked == state
    assert not set(containers(copied)) & set(containers(checked))


state_keys = st.builds(
    lambda scope, name: scope + name,
    st.sampled_from(["", *SCOPE_PREFIXES]),
    st.from_regex(r"[a-c][a-c0-9_]{0,2}", fullmatch=True),
)
state_dicts = st.dictionaries(state_keys, json_values, max_size=6)


@given(value=state_dicts, delta=state_dicts, writes=st.lists(state_dicts, max_size=3), unused=state_dicts)
def test_a_state_renders_exactly_what_it_reads(
    value: dict[str, Any], delta: dict[str, Any], writes: list[dict[str, Any]], unused: dict[str, Any]
) -> None:
    """Rendering reads a State where its values are stored (no copies): the text is what its mapping reads."""
    state = State({**unused, **value}, delta=check_state(delta))
    for write in writes:
        state.update(write)
    keys = sorted({*value, *delta, *(key for write in writes for key in write)})
    source = " | ".join(f"<{key}>" for key in keys)
    assert render(source, state) == render(source, {key: state[key] for key in keys})
