"""The value contract of state (templating.sessions.values): scopes, and what counts as a state value."""

from __future__ import annotations

import enum
import gc
import json
import pickle
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from templating import InvalidStateError, State, TemplatingError, render
from templating.nodes import SCOPE_PREFIXES, VALUE_ITEM_SIZE
from templating.sessions.values import (
    MAX_DEPTH,
    MAX_INT,
    MAX_VALUE_SIZE,
    MIN_INT,
    _copy,
    _fast_copy,
    _flat_copy,
    _Refused,
    check_state,
    check_value,
    copy_checked,
    scope_of,
)


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
    st.none()
    | st.booleans()
    | st.integers(MIN_INT, MAX_INT)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
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


def sharing(value: Any) -> list[tuple[int, int]]:
    """Which lists and dicts of ``value`` are the same object: pairs of positions in a walk."""
    positions: dict[int, int] = {}
    pairs: list[tuple[int, int]] = []
    for position, ident in enumerate(containers(value)):
        if ident in positions:
            pairs.append((positions[ident], position))
        positions.setdefault(ident, position)
    return pairs


@given(st.lists(json_values, min_size=8, max_size=12), st.data())
def test_a_state_of_many_lists_and_dicts_is_copied_with_its_sharing_kept(values: list[Any], data: Any) -> None:
    """From eight lists and dicts on, copies are made by marshal: equal, sharing what the state shares,
    and nothing with it."""
    shared = data.draw(json_values)
    state = check_state({f"k{n}": [value] if n % 2 else {"v": value, "s": shared} for n, value in enumerate(values)})
    state["again"] = state["k0"]  # one value under two keys
    copied = copy_checked(state)
    assert copied == state
    assert [type(value) for value in copied.values()] == [type(value) for value in state.values()]
    assert copied["again"] is copied["k0"]
    assert sharing(copied) == sharing(state)
    assert not set(containers(copied)) & set(containers(state))


def test_a_value_with_types_marshal_refuses_is_copied_by_the_walk() -> None:
    """Only checked state is copied this way; anything else is passed through as it is, not refused."""
    opaque = Opaque()
    state = {f"k{n}": [n] for n in range(10)} | {"odd": [opaque]}
    copied = copy_checked(state)
    assert copied == state
    assert copied["odd"][0] is opaque
    assert copied["odd"] is not state["odd"]


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


# --- the value contract's limits: 64-bit ints, valid Unicode, nesting depth -------------------


def nested(depth: int, *, kind: str = "list") -> Any:
    """A value of ``depth`` lists (or dicts) nested in one another, built without recursion."""
    value: Any = 0
    for _ in range(depth):
        value = [value] if kind == "list" else {"a": value}
    return value


LIMITS = [
    # id, value, accepted?, words in the error
    ("int-max", MAX_INT, True, None),
    ("int-min", MIN_INT, True, None),
    ("int-max-plus-one", MAX_INT + 1, False, "is the int 9223372036854775808, outside the 64-bit range"),
    ("int-min-minus-one", MIN_INT - 1, False, "is the int -9223372036854775809, outside the 64-bit range"),
    ("int-10-to-5000", 10**5000, False, "is an int of about 5001 digits"),
    ("float-huge-is-fine", 1e308, True, None),
    ("surrogate", "ok \ud800", False, "holds the lone surrogate '\\ud800' at index 3, which is not valid Unicode"),
    ("surrogate-low", ["\udfff"], False, "'v[0]' is not plain JSON: it holds the lone surrogate '\\udfff'"),
    ("surrogate-pair-is-not-an-emoji", "\ud83d\ude00", False, "lone surrogate '\\ud83d' at index 0"),
    ("emoji", "\U0001f600", True, None),
    ("nul-and-controls", "a\x00b\x1b\u200b", True, None),
    ("surrogate-inner-key", {"\udc80": 1}, False, "has a key that holds the lone surrogate '\\udc80'"),
    ("list-at-the-limit", nested(MAX_DEPTH), True, None),
    ("dict-at-the-limit", nested(MAX_DEPTH, kind="dict"), True, None),
    ("list-one-too-deep", nested(MAX_DEPTH + 1), False, f"nests lists and dicts more than {MAX_DEPTH} deep"),
    ("dict-one-too-deep", nested(MAX_DEPTH + 1, kind="dict"), False, "v['a']['a']"),
    ("list-500-deep", nested(500), False, f"more than {MAX_DEPTH} deep"),
    ("list-100000-deep", nested(100_000), False, f"more than {MAX_DEPTH} deep"),
    ("dict-100000-deep", nested(100_000, kind="dict"), False, f"more than {MAX_DEPTH} deep"),
]


@pytest.mark.parametrize(("value", "accepted", "words"), [c[1:] for c in LIMITS], ids=[c[0] for c in LIMITS])
def test_the_value_contracts_limits(value: Any, accepted: bool, words: str | None) -> None:
    state = State({"keep": 1})
    if accepted:
        state["v"] = value
        assert state["v"] == value
        assert json.loads(json.dumps(state["v"], allow_nan=False)) == value
        return
    with pytest.raises(InvalidStateError) as info:
        state.update({"ok": 2, "v": value})
    assert words is not None
    assert words in str(info.value)
    assert info.value.key == "v"
    assert f"state value {info.value.path!r} is not plain JSON" in str(info.value)
    assert state.to_dict() == {"keep": 1}
    assert not state.has_delta()


def test_too_deep_names_the_path_to_the_level_past_the_limit() -> None:
    with pytest.raises(InvalidStateError) as info:
        check_state({"k": {"a": [nested(MAX_DEPTH)]}})
    assert info.value.path == "k['a'][0]" + "[0]" * (MAX_DEPTH - 2)
    assert f"help: state values nest at most {MAX_DEPTH} lists and dicts deep" in str(info.value)


@pytest.mark.parametrize("key", ["\ud800", "user:\udbff", "a\udfffb"], ids=["alone", "scoped", "inside"])
def test_a_key_with_a_lone_surrogate_is_refused(key: str) -> None:
    with pytest.raises(InvalidStateError, match=r"key .* is not valid Unicode: it holds the lone surrogate") as info:
        check_state({"fine": 1, key: 2})
    assert info.value.key == key
    assert "help: state text must be valid Unicode" in str(info.value)
    str(info.value).encode("utf-8")  # the message itself is printable: the surrogate is escaped


@given(st.integers(min_value=MAX_INT + 1) | st.integers(max_value=MIN_INT - 1))
def test_every_int_outside_64_bits_is_refused(number: int) -> None:
    with pytest.raises(InvalidStateError, match="outside the 64-bit range"):
        check_value("v", [number])


@given(st.text(max_size=5), st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), st.text(max_size=5))
def test_every_text_with_a_surrogate_is_refused(before: str, surrogate: str, after: str) -> None:
    text = before + surrogate + after
    with pytest.raises(InvalidStateError, match="lone surrogate"):
        check_value("v", {"a": text})
    with pytest.raises(InvalidStateError, match="has a key that holds the lone surrogate"):
        check_value("v", {text: 1})


# Anything, the contract's values among others: the fast path (no paths built) must accept exactly what
# the checker that explains accepts, and copy it the same.
any_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(st.characters(codec=None, exclude_categories=()), max_size=3)
    | st.binary(max_size=2)
    | st.tuples(st.integers()),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.text(max_size=2) | st.integers(0, 3), children, max_size=3)
        | st.frozensets(st.integers(), max_size=2)
    ),
    max_leaves=12,
)


@given(any_values)
def test_the_fast_path_and_the_checker_accept_the_same_values(value: Any) -> None:
    try:
        fast: Any = _fast_copy(value, 0)
    except _Refused:
        fast = _Refused
    try:
        slow: Any = _copy(value, "v", "v", 0)
    except InvalidStateError:
        slow = _Refused
    assert (fast is _Refused) == (slow is _Refused)
    if fast is not _Refused:  # copied alike, sharing no container with the value given
        assert slow == fast
        assert not set(containers(fast)) & set(containers(value))


@given(st.dictionaries(st.text(max_size=3), any_values, max_size=5))
def test_the_one_loop_check_of_a_dict_accepts_and_copies_what_the_general_walk_does(state: dict[str, Any]) -> None:
    try:
        general: Any = check_state(MappingProxyType(state))  # not a dict: the general walk
    except InvalidStateError:
        general = None
    flat = _flat_copy(state)
    if general is None:
        assert flat is None
    elif flat is not None:  # (None: left to the general walk, e.g. a str subclass as a nested key)
        assert flat == general
        assert not set(containers(flat)) & set(containers(state))


def test_a_dict_key_of_a_str_subclass_is_left_to_the_checker_which_accepts_it() -> None:
    key = type("Name", (str,), {})("k")
    with pytest.raises(_Refused):
        _fast_copy({key: 1}, 0)
    assert check_value("v", {key: [1]}) == {"k": [1]}


@pytest.mark.parametrize(
    ("value", "delta", "words"),
    [
        ({"k": nested(100_000)}, None, "state value 'k[0][0]"),
        ({}, {"k": nested(100_000)}, "state value 'k[0][0]"),
        ({"k": cyclic}, None, "state value 'k[0]' is not plain JSON: it contains itself"),
        ({"k": 10**5000}, None, "is an int of about 5001 digits"),
        ({}, {"k": "\ud800"}, "lone surrogate"),
    ],
    ids=["deep-value", "deep-delta", "cyclic-value", "huge-int", "surrogate-in-delta"],
)
def test_a_state_made_from_values_outside_the_contract_is_refused(
    value: dict[str, Any], delta: dict[str, Any] | None, words: str
) -> None:
    with pytest.raises(InvalidStateError) as info:
        State(value, delta=delta)
    assert words in str(info.value)
    assert info.value.key == "k"


def doubled(times: int, leaf: Any = None) -> Any:
    """``v = [v, v]`` repeated: ``times + 1`` objects in memory, ``2**times`` leaves written out."""
    value = [] if leaf is None else leaf
    for _ in range(times):
        value = [value, value]
    return value


@pytest.mark.parametrize("times", [24, 60, MAX_DEPTH - 1], ids=["24", "60", "as-deep-as-allowed"])
def test_a_value_shared_past_the_size_budget_is_refused_naming_its_key(times: int) -> None:
    """Checked once per distinct list: refused at once (a walk of the tree would take 2**times steps)."""
    with pytest.raises(InvalidStateError) as info:
        check_state({"ok": 1, "v": doubled(times)})
    error = info.value
    assert error.key == "v"
    assert error.path.startswith("v[")
    assert "state is too large" in str(error)
    assert "help: a state delta, or an initial state, holds at most" in str(error)
    with pytest.raises(InvalidStateError):
        State({}).update({"v": doubled(times)})


def test_a_shared_value_is_copied_once_and_keeps_its_sharing() -> None:
    value = doubled(16, leaf=[{"a": "b"}])  # 65,536 leaves written out, 17 lists and one dict in memory
    copied = check_value("v", value)
    assert copied == value
    assert copied[0] is copied[1]  # copied once, shared as in the value given
    assert not set(map(id, (copied, copied[0], copied[0][0]))) & set(map(id, (value, value[0], value[0][0])))
    again = copy_checked({"v": copied})["v"]
    assert again == value
    assert again[0] is again[1]
    assert again[0] is not copied[0]


def test_a_shared_value_that_nests_too_deeply_where_it_appears_again_is_refused() -> None:
    deep = nested(MAX_DEPTH - 2)
    assert check_value("v", [deep])[0] == deep  # at depth 1: fits
    with pytest.raises(InvalidStateError, match=f"more than {MAX_DEPTH} deep") as info:
        check_value("v", [deep, [[deep]]])  # the same list, two levels deeper the second time
    assert info.value.path.startswith("v[1][0][0]")


def test_the_size_budget_is_for_the_whole_state_and_names_the_key_that_exceeds_it() -> None:
    half = "x" * (MAX_VALUE_SIZE // 2)
    assert check_state({"a": half})["a"] is half
    with pytest.raises(InvalidStateError) as info:
        check_state({"a": half, "b": "y", "c": half})
    assert info.value.key == "c"


class _BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


@pytest.mark.parametrize(
    ("state", "words"),
    [
        ({"v": {_BadRepr(): 1}}, "state value 'v[<a _BadRepr whose repr() fails>]' is not plain JSON"),
        ({_BadRepr(): 1}, "state key <a _BadRepr whose repr() fails> is a _BadRepr, not a string"),
    ],
    ids=["inside-a-value", "top-level"],
)
def test_a_key_whose_repr_fails_is_refused_with_a_clear_error(state: dict[Any, Any], words: str) -> None:
    with pytest.raises(InvalidStateError) as info:
        check_state(state)
    assert words in str(info.value)


class _Color(enum.IntEnum):
    RED = 1


class _Ratio(float):
    pass


class _Name(str):
    pass


# A flat delta (every value a scalar) takes a fast path in check_state: each case is refused, or accepted
# as the same value of the same type, exactly as the general walk does.
FLAT_EDGES = [
    ("bool", {"v": True}, True),
    ("none", {"v": None}, True),
    ("max-int", {"v": MAX_INT}, True),
    ("min-int", {"v": MIN_INT}, True),
    ("int-past-max", {"v": MAX_INT + 1}, "outside the 64-bit range"),
    ("int-below-min", {"v": MIN_INT - 1}, "outside the 64-bit range"),
    ("huge-int", {"v": 10**400}, "outside the 64-bit range"),
    ("nan", {"v": float("nan")}, "is nan, which JSON cannot hold"),
    ("infinity", {"v": float("-inf")}, "is -inf, which JSON cannot hold"),
    ("int-subclass", {"v": _Color.RED}, "is of type _Color"),
    ("float-subclass", {"v": _Ratio(0.5)}, "is of type _Ratio"),
    ("str-subclass", {"v": _Name("x")}, "is of type _Name"),
    ("surrogate-value", {"v": "a\udc80"}, "not plain JSON"),
    ("surrogate-key", {"a\ud800": 1}, "is not valid Unicode"),
    ("int-key", {1: "x"}, "is a int, not a string"),
    ("non-ascii", {"clé": "é"}, True),
    ("empty", {}, True),
]


@pytest.mark.parametrize(("state", "outcome"), [c[1:] for c in FLAT_EDGES], ids=[c[0] for c in FLAT_EDGES])
def test_a_flat_state_is_checked_as_the_general_walk_checks_it(state: dict[Any, Any], outcome: bool | str) -> None:
    general: Any  # the same state through the general walk (not a dict: no fast path)
    try:
        general = check_state(MappingProxyType(state))
    except InvalidStateError as error:
        general = error
    if outcome is True:
        checked = check_state(state)
        assert checked == state == general
        assert checked is not state
        assert [type(value) for value in checked.values()] == [type(value) for value in state.values()]
    else:
        assert _flat_copy(state) is None  # left to the general walk, which says what is wrong
        with pytest.raises(InvalidStateError, match=str(outcome)):
            check_state(state)
        assert isinstance(general, InvalidStateError)
        assert str(outcome) in str(general)


def test_a_str_subclass_key_of_a_flat_state_is_left_to_the_general_walk() -> None:
    state = {_Name("k"): 1}
    assert _flat_copy(state) is None
    assert check_state(state) == {"k": 1}


@pytest.mark.parametrize("extra", [0, 1], ids=["at-the-budget", "one-past-it"])
def test_the_size_budget_of_a_flat_state_is_the_general_walks(extra: int) -> None:
    text = "x" * (MAX_VALUE_SIZE - 2 * VALUE_ITEM_SIZE - len("a") + extra)
    state = {"a": text}
    if extra:
        with pytest.raises(InvalidStateError, match="too large") as info:
            check_state(state)
        assert info.value.key == "a"
        with pytest.raises(InvalidStateError, match="too large"):
            check_state(MappingProxyType(state))
    else:
        assert check_state(state)["a"] is text
        assert check_state(MappingProxyType(state))["a"] is text


flat_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3)


@given(st.dictionaries(st.text(max_size=3), flat_scalars, max_size=4))
def test_the_flat_fast_path_and_the_general_walk_agree(state: dict[str, Any]) -> None:
    try:
        general: Any = check_state(MappingProxyType(state))
    except InvalidStateError:
        general = None
    fast = _flat_copy(state)
    if fast is not None:  # what the fast path accepts, the walk accepts the same
        assert general is not None
        assert fast == general or fast.keys() == general.keys()  # (NaN is never equal, and never accepted)
    elif general is not None:  # only refusals are left to the walk: it accepts nothing the fast path refused
        pytest.fail(f"the fast path refused {state!r}, which the walk accepts")


@pytest.mark.parametrize("nested", [10, 5_000], ids=["small", "large"])
@pytest.mark.parametrize("collector_on", [True, False], ids=["collector-on", "collector-off"])
def test_a_large_copy_reads_with_the_collector_paused_and_leaves_it_as_it_was(
    nested: int, collector_on: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Thousands of lists and dicts copied at once (a get of a large state) are made with the cyclic collector
    paused, which would otherwise walk them again and again; a small copy does not pause it."""
    import marshal

    from templating.sessions import values as values_module

    seen: list[bool] = []

    class Spy:
        dumps = staticmethod(marshal.dumps)

        @staticmethod
        def loads(data: bytes) -> Any:
            seen.append(gc.isenabled())
            return marshal.loads(data)

    monkeypatch.setattr(values_module, "marshal", Spy)
    state = {f"k{n}": {"id": n, "tags": ["a", "b"]} for n in range(nested)}
    was = gc.isenabled()
    (gc.enable if collector_on else gc.disable)()
    try:
        copied = copy_checked(state)
        assert gc.isenabled() is collector_on
    finally:
        (gc.enable if was else gc.disable)()
    assert copied == state
    assert all(copied[key] is not state[key] for key in state)
    assert seen == [collector_on and nested < 1_000]
