"""Rendering: values, paths, missing keys in each mode, formatters, and what counts as state."""

from __future__ import annotations

import copy
import gc
import json
import sys
from collections import defaultdict
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from templating import (
    CyclicValueError,
    MissingKeyError,
    Template,
    TemplatingError,
    UnprintableValueError,
    format_adk_value,
    format_value,
    render,
)

PROFILE = {"user:profile": {"name": "Grace"}, "items": ["x", "y"]}

RENDERS = [
    ("required", "Hello <name>!", {"name": "Ada"}, "Hello Ada!"),
    ("optional-absent", "Hi <nick?>.", {}, "Hi ."),
    (
        "scopes",
        "<user:lang> <app:tier> <temp:step>",
        {"user:lang": "en", "app:tier": "gold", "temp:step": 3},
        "en gold 3",
    ),
    ("escape", "<<name>>", {"name": "Ada"}, "<name>"),
    ("escape-optional", "<<name?>>", {}, "<name?>"),
    ("escape-in-brackets", "<<<name>>>", {}, "<<name>>"),
    ("extra-open", "<<name>", {"name": "Ada"}, "<Ada"),
    ("extra-close", "<name>>", {"name": "Ada"}, "Ada>"),
    ("nested-key", "<user:profile.name>", PROFILE, "Grace"),
    ("list-index", "<items.1>", PROFILE, "y"),
    ("index-absent", "<items.9?>", PROFILE, ""),
    ("nested-absent", "<user:profile.zip?>", PROFILE, ""),
    ("none", "[<v>]", {"v": None}, "[]"),
    ("str", "<v>", {"v": "text"}, "text"),
    ("int", "<v>", {"v": 3}, "3"),
    ("float", "<v>", {"v": 1.5}, "1.5"),
    ("bool", "<v>", {"v": True}, "True"),
    ("dict-json", "<v>", {"v": {"a": 1}}, '{"a": 1}'),
    ("list-json", "<v>", {"v": [1, "é", None]}, '[1, "é", null]'),
    ("tuple-json", "<v>", {"v": (1, 2)}, "[1, 2]"),
    ("mapping-json", "<v>", {"v": MappingProxyType({"k": [True]})}, '{"k": [true]}'),
    ("value-not-expanded", "<v>", {"v": "<other> <<x>>", "other": "NO"}, "<other> <<x>>"),
    ("tuple-index", "<t.0>", {"t": ("a", "b")}, "a"),
    ("deep-path", "<a.b.0.c>", {"a": {"b": [{"c": "deep"}]}}, "deep"),
    ("digit-key-in-mapping", "<a.1>", {"a": {"1": "one"}}, "one"),
    ("json-braces-untouched", '{"a": {name}} {{name}} <name>', {"name": "Ada"}, '{"a": {name}} {{name}} Ada'),
    ("unicode-key", "<名前>", {"名前": "Ada"}, "Ada"),
]


@pytest.mark.parametrize(("source", "state", "expected"), [c[1:] for c in RENDERS], ids=[c[0] for c in RENDERS])
def test_render(source: str, state: dict[str, Any], expected: str) -> None:
    assert render(source, state) == expected


LITERAL_ROWS = [
    "< name >",
    "<bad-name>",
    "<1x>",
    "</tag>",
    '<a href="x">',
    "<other:key>",
    "<user:>",
    "<a.>",
    "x << 2 >> 1",
    "<name",
]


@pytest.mark.parametrize("source", LITERAL_ROWS, ids=[f"row-{i}" for i in range(len(LITERAL_ROWS))])
def test_literal_rows_render_unchanged(source: str) -> None:
    assert render(source, {"name": "Ada", "a": "A", "tag": "T"}) == source


@pytest.mark.parametrize(
    ("source", "state"),
    [
        ("<name.first>", {"name": "Ada"}),  # no indexing into strings
        ("<items.x>", {"items": ["a"]}),  # lists only by integer
        ("<obj.real>", {"obj": 3}),  # never attributes
        ("<obj.__class__>", {"obj": {}}),
        ("<items.01>", {"items": []}),
    ],
    ids=["into-str", "list-by-name", "attribute", "dunder", "index-out-of-range"],
)
def test_paths_never_reach_outside_the_data(source: str, state: dict[str, Any]) -> None:
    with pytest.raises(MissingKeyError):
        render(source, state)
    assert render(source, state, missing="empty") == ""


def test_error_mode_names_every_missing_required_key() -> None:
    with pytest.raises(MissingKeyError) as info:
        render("<a> <b?> <c> <a> <d.e>", {"d": {}})
    assert info.value.keys == ("a", "c", "d.e")
    assert [m.span.column for m in info.value.missing] == [1, 10, 18]


@pytest.mark.parametrize(
    ("missing", "expected"),
    [("empty", "[] [] [x]"), ("keep", "[<a>] [<b?>] [x]")],
    ids=["empty", "keep"],
)
def test_lenient_modes(missing: str, expected: str) -> None:
    assert render("[<a>] [<b?>] [<c>]", {"c": "x"}, missing=missing) == expected  # type: ignore[arg-type]


def test_bad_missing_option() -> None:
    with pytest.raises(ValueError, match="missing= must be one of 'error', 'empty' or 'keep', not 'ignore'"):
        render("<a>", {"a": 1}, missing="ignore")  # type: ignore[arg-type]


def test_formatter_replaces_value_formatting() -> None:
    seen: list[Any] = []

    def formatter(value: Any) -> str:
        seen.append(value)
        return f"«{value!r}»"

    assert render("<a> <b> <c?>", {"a": 1, "b": None}, formatter=formatter) == "«1» «None» "
    assert seen == [1, None]


def test_formatter_must_return_text() -> None:
    with pytest.raises(TypeError, match="formatter= must return str, but returned int for 'b'"):
        render("<a> <b>", {"a": "x", "b": 2}, formatter=lambda value: value)


class Context:
    """Anything with a .state mapping, as agent contexts have."""

    def __init__(self, state: Mapping[str, Any]) -> None:
        self.state = state


class StateLike:
    """A state object that is not a registered Mapping but has get and __contains__."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._data


class CustomMapping(Mapping[str, Any]):
    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


@pytest.mark.parametrize(
    "state",
    [
        {"name": "Ada"},
        MappingProxyType({"name": "Ada"}),
        CustomMapping({"name": "Ada"}),
        Context({"name": "Ada"}),
        Context(MappingProxyType({"name": "Ada"})),
        StateLike({"name": "Ada"}),
        Context(StateLike({"name": "Ada"})),  # type: ignore[arg-type]
    ],
    ids=["dict", "mappingproxy", "custom-mapping", "context", "context-proxy", "state-like", "context-state-like"],
)
def test_state_sources(state: Any) -> None:
    assert render("Hi <name>", state) == "Hi Ada"


@pytest.mark.parametrize("state", [42, None, ["name"], "name"], ids=["int", "none", "list", "str"])
def test_state_must_be_a_mapping(state: Any) -> None:
    with pytest.raises(TypeError, match=r"state must be a mapping, or an object with a \.state mapping"):
        render("<name>", state)


def test_render_never_mutates_state() -> None:
    state: dict[str, Any] = {"a": {"b": [1, {"c": 2}]}, "x": None}
    before = copy.deepcopy(state)
    render("<a.b.1.c> <a.b.5?> <x> <missing?> <a.q?>", state)
    assert state == before


def test_defaultdict_is_not_written_by_lookups() -> None:
    state: defaultdict[str, str] = defaultdict(lambda: "default")
    assert render("[<absent?>]", state) == "[]"
    assert dict(state) == {}


# The ADK dialect: values as Google ADK renders them (str(), None as empty), missing keys as ours.
class Shown:
    def __str__(self) -> str:
        return "shown"


ADK_RENDERS = [
    ("required", "Hello {name}!", {"name": "Ada"}, "Hello Ada!"),
    ("optional-absent", "Hi {nick?}.", {}, "Hi ."),
    ("spaces-inside", "Hi { name }.", {"name": "Ada"}, "Hi Ada."),
    (
        "scopes",
        "{user:lang} {app:tier} {temp:step}",
        {"user:lang": "en", "app:tier": "gold", "temp:step": 3},
        "en gold 3",
    ),
    ("none-is-empty", "[{a}]", {"a": None}, "[]"),
    ("int-float-bool", "{a} {b} {c}", {"a": 3, "b": 1.5, "c": True}, "3 1.5 True"),
    ("dict-is-str-not-json", "{d}", {"d": {"a": 1, "b": None}}, "{'a': 1, 'b': None}"),
    ("list-is-str-not-json", "{items}", {"items": ["x", 2]}, "['x', 2]"),
    ("any-object-is-str", "{o}", {"o": Shown()}, "shown"),
    ("json-keeps-its-braces", '{"x": {key}}', {"key": "VAL"}, '{"x": VAL}'),
    ("double-braces-verbatim", "{{key}} {{ key }}", {"key": "VAL"}, "{{key}} {{ key }}"),
    ("angle-brackets-are-text", "<key> {key}", {"key": "VAL"}, "<key> VAL"),
    ("value-is-not-expanded", "{a}", {"a": "{b}", "b": "no"}, "{b}"),
]


@pytest.mark.parametrize(
    ("source", "state", "expected"), [case[1:] for case in ADK_RENDERS], ids=[case[0] for case in ADK_RENDERS]
)
def test_adk_renders(source: str, state: dict[str, Any], expected: str) -> None:
    assert render(source, state, dialect="adk") == expected


@pytest.mark.parametrize(
    ("missing", "expected"),
    [("empty", "[] [] [x]"), ("keep", "[{ a }] [{b?}] [x]")],
    ids=["empty", "keep-as-written"],
)
def test_adk_lenient_modes(missing: str, expected: str) -> None:
    assert render("[{ a }] [{b?}] [{c}]", {"c": "x"}, dialect="adk", missing=missing) == expected  # type: ignore[arg-type]


def test_adk_missing_keys_raise_with_spans() -> None:
    with pytest.raises(MissingKeyError) as info:
        render("{a} {b?} { c } {a}", {}, dialect="adk")
    assert info.value.keys == ("a", "c")
    assert [m.span.column for m in info.value.missing] == [1, 10]
    assert info.value.help == "give each key a value in state, or make a placeholder optional with {key?}"


def test_adk_formatter_still_overrides() -> None:
    assert render("{d} {n}", {"d": {"a": 1}, "n": None}, dialect="adk", formatter=repr) == "{'a': 1} None"


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, ""), ("s", "s"), (0, "0"), (False, "False"), ({"a": [1]}, "{'a': [1]}"), ((1,), "(1,)")],
    ids=["none", "str", "zero", "false", "dict", "tuple"],
)
def test_format_adk_value(value: Any, expected: str) -> None:
    assert format_adk_value(value) == expected


class TwoWays:
    """State offered two ways: a public view (``.state``, what a caller's code may see) and the
    ``_state_reader`` protocol (the stored values, for a renderer that only formats them)."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values
        self.used: list[str] = []

    @property
    def state(self) -> Mapping[str, Any]:
        self.used.append("view")
        return {key: f"view of {value}" for key, value in self.values.items()}

    def _state_reader(self) -> Any:
        self.used.append("reader")
        return self.values.get


READERS = [
    ("no-formatter-reads-the-stored-values", {}, "stored stored-too", ["reader"]),
    ("missing-empty", {"missing": "empty"}, "stored stored-too", ["reader"]),
    ("a-formatter-gets-the-public-view", {"formatter": str.upper}, "VIEW OF STORED VIEW OF STORED-TOO", ["view"]),
]


@pytest.mark.parametrize(("options", "expected", "used"), [c[1:] for c in READERS], ids=[c[0] for c in READERS])
def test_the_state_reader_protocol(options: dict[str, Any], expected: str, used: list[str]) -> None:
    holder = TwoWays({"a": "stored", "b": "stored-too"})
    assert render("<a> <b>", holder, **options) == expected
    assert holder.used == used


def test_the_state_reader_is_looked_up_on_the_type_never_the_instance() -> None:
    class Anything:
        """An object answering every attribute (as mocks do): its ``_state_reader`` is never called."""

        state = MappingProxyType({"a": "from the mapping"})

        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"looked up {name!r} on the instance")

    assert render("<a>", Anything()) == "from the mapping"


def test_a_holder_type_registered_as_a_mapping_after_its_first_render_is_read_as_one() -> None:
    """How to read a type is chosen once per type; one read as any object (`.state`, or `get`) is still
    checked on every render, so registering it as a Mapping later changes what it is read as."""

    class Holder:
        def __init__(self) -> None:
            self.state = {"a": "through .state"}

        def get(self, key: str, default: Any = None) -> Any:
            return {"a": "its own get"}.get(key, default)

        def __contains__(self, key: object) -> bool:
            return key == "a"

        def __getitem__(self, key: str) -> Any:
            return self.get(key)

        def __iter__(self) -> Iterator[str]:
            return iter(["a"])

        def __len__(self) -> int:
            return 1

    assert render("<a>", Holder()) == "through .state"
    Mapping.register(Holder)
    assert render("<a>", Holder()) == "its own get"


def test_the_readers_kept_by_type_are_bounded() -> None:
    module = sys.modules["templating.renderer"]
    for number in range(module._READERS_KEPT + 10):
        holder = type(f"Holder{number}", (), {"state": {"a": number}})
        assert render("<a>", holder()) == str(number)
    assert len(module._READERS) <= module._READERS_KEPT


def test_a_missing_key_read_through_the_protocol_still_suggests_a_close_one() -> None:
    with pytest.raises(MissingKeyError) as caught:
        render("<nmae>", TwoWays({"name": "Ada"}))
    assert caught.value.missing[0].suggestion == "name"


# Found values are filled first; at the first absent key the renderer hands over to its full loop.
# What was filled before stays, and the mode decides for every placeholder from there on.
HANDOVER_SOURCE = "<a> <n> <d> <b?> <x.0> <c> <a>"
HANDOVER_STATE = {"a": "A", "n": 3, "d": {"k": [1]}, "x": ["X"]}
HANDOVERS = [
    ("empty", {}, 'A 3 {"k": [1]}  X  A'),
    ("keep", {}, 'A 3 {"k": [1]} <b?> X <c> A'),
    ("error-all-found", {"c": None, "b": 0}, 'A 3 {"k": [1]} 0 X  A'),
    ("empty-all-found", {"c": "C"}, 'A 3 {"k": [1]}  X C A'),
]


@pytest.mark.parametrize(("missing", "extra", "expected"), HANDOVERS, ids=[c[0] for c in HANDOVERS])
def test_values_found_before_an_absent_key_are_kept(missing: str, extra: dict[str, Any], expected: str) -> None:
    mode = missing.partition("-")[0]
    assert render(HANDOVER_SOURCE, HANDOVER_STATE | extra, missing=mode) == expected  # type: ignore[arg-type]


def test_an_absent_key_after_found_ones_is_named_with_its_place() -> None:
    with pytest.raises(MissingKeyError) as info:
        render(HANDOVER_SOURCE + " <x.1> <n.0>", HANDOVER_STATE)
    assert info.value.keys == ("c", "x.1", "n.0")
    assert [m.span.column for m in info.value.missing] == [24, 32, 38]


# A renderer written the plain way, to check the real one against on any template and state.
_GONE = object()


def reference_value(state: Mapping[str, Any], name: str, below: tuple[str, ...]) -> Any:
    value = state.get(name, _GONE)
    for segment in below:
        if isinstance(value, Mapping):
            value = value.get(segment, _GONE)
        elif isinstance(value, (list, tuple)) and segment.isdecimal() and int(segment) < len(value):
            value = value[int(segment)]
        else:
            return _GONE
    return value


def reference_render(template: Template, state: Mapping[str, Any], missing: str) -> str | None:
    """The text ``template`` renders to, or None where it must raise MissingKeyError."""
    out: list[str] = []
    for node in template.nodes:
        if not hasattr(node, "optional"):
            out.append(node.text)  # type: ignore[attr-defined]
            continue
        value = reference_value(state, node.name, node.path[1:])  # type: ignore[attr-defined]
        if value is _GONE:
            if missing == "error" and not node.optional:  # type: ignore[attr-defined]
                return None
            out.append(template.source[node.span.start : node.span.end] if missing == "keep" else "")
        elif value is None:
            out.append("")
        elif isinstance(value, str):
            out.append(value)
        elif isinstance(value, (dict, list)):
            out.append(json.dumps(value, ensure_ascii=False))
        else:
            out.append(str(value))
    return "".join(out)


PATHS = ["a", "b", "user:a", "l", "l.0", "l.1", "l.01", "l.x", "d.k", "d.l.2", "d.0", "a.0", "gone", "d.gone"]
leaves = st.one_of(st.none(), st.integers(-5, 5), st.booleans(), st.text("xy<>{}é", max_size=3))
values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["k", "l", "0", "1"]), inner, max_size=3)
    ),
    max_leaves=6,
)
states = st.dictionaries(st.sampled_from(["a", "b", "user:a", "l", "d"]), values)
pieces = st.one_of(
    st.sampled_from(["", " ", "text ", "<<a>> ", "\n- "]),
    st.builds(lambda path, optional: f"<{path}{'?' if optional else ''}>", st.sampled_from(PATHS), st.booleans()),
)


modes = st.sampled_from(["error", "empty", "keep"])


@given(source=st.lists(pieces, max_size=8).map("".join), state=states, missing=modes)
def test_render_agrees_with_a_plain_reference(source: str, state: dict[str, Any], missing: str) -> None:
    template = Template(source)
    expected = reference_render(template, state, missing)
    if expected is None:
        with pytest.raises(MissingKeyError):
            template.render(state, missing=missing)  # type: ignore[arg-type]
    else:
        assert template.render(state, missing=missing) == expected  # type: ignore[arg-type]


def cyclic_list() -> list[Any]:
    value: list[Any] = [1]
    value.append(value)
    return value


def cyclic_dict() -> dict[str, Any]:
    value: dict[str, Any] = {"a": 1}
    value["inner"] = {"back": value}
    return value


CYCLIC = [
    ("angle-list", "Hi\n<x>", "angle", {"x": cyclic_list()}, 2),
    ("angle-dict", "<x>", "angle", {"x": cyclic_dict()}, 1),
    ("angle-nested-path", "<x.inner>", "angle", {"x": cyclic_dict()}, 1),
    ("angle-after-a-string", "<s> <x>", "angle", {"s": "ok", "x": [cyclic_list()]}, 1),
    ("adk-list", "Hi {x}", "adk", {"x": cyclic_list()}, 1),
    ("adk-dict", "a\n\n{x}", "adk", {"x": cyclic_dict()}, 3),
]


@pytest.mark.parametrize(("source", "dialect", "state", "line"), [c[1:] for c in CYCLIC], ids=[c[0] for c in CYCLIC])
@pytest.mark.parametrize("missing", ["error", "keep"])
def test_a_cyclic_value_is_an_error_naming_its_key(
    source: str, dialect: Any, state: dict[str, Any], line: int, missing: Any
) -> None:
    with pytest.raises(CyclicValueError) as caught:
        Template(source, dialect=dialect).render(state, missing=missing)
    error = caught.value
    assert isinstance(error, TemplatingError)
    assert isinstance(error, ValueError)
    assert error.key == "x"
    assert error.message.startswith("the value of 'x' contains itself")
    assert error.span is not None
    assert error.span.line == line


def test_format_functions_refuse_a_cyclic_value_and_keep_shared_ones() -> None:
    for format_function in (format_value, format_adk_value):
        with pytest.raises(CyclicValueError, match="contains itself"):
            format_function(cyclic_list())
    shared = [1]
    assert format_value([shared, shared]) == "[[1], [1]]"
    assert format_adk_value({"a": shared, "b": shared, "c": "..."}) == "{'a': [1], 'b': [1], 'c': '...'}"


def nested(depth: int, *, kind: str = "list") -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


# id, source, dialect, state, the line of the placeholder, a word of the message
class BadRepr:
    """An object whose str() and repr() raise."""

    def __repr__(self) -> str:
        raise RuntimeError("no repr")

    __str__ = __repr__


def doubled(times: int) -> list[Any]:
    """``v = [v, v]`` repeated: a few objects in memory, 2**times values written out."""
    value: list[Any] = []
    for _ in range(times):
        value = [value, value]
    return value


UNPRINTABLE = [
    ("angle-deep-list", "Hi\n<x>", "angle", {"x": nested(100_000)}, 2, "nests too deeply"),
    ("angle-deep-dict", "<x>", "angle", {"x": nested(5_000, kind="dict")}, 1, "nests too deeply"),
    ("angle-past-the-walk", "<x>", "angle", {"x": nested(100_005)}, 1, "nests too deeply"),
    ("angle-deep-below-a-path", "<s> <x.a>", "angle", {"s": "ok", "x": {"a": nested(3_000)}}, 1, "nests too deeply"),
    ("angle-huge-int", "<x>", "angle", {"x": 10**5000}, 1, "more than 4300 digits"),
    ("angle-huge-int-in-a-list", "a\n\n<x>", "angle", {"x": [1, 10**5000]}, 3, "more than 4300 digits"),
    ("adk-deep-list", "Hi {x}", "adk", {"x": nested(100_000)}, 1, "nests too deeply"),
    ("adk-huge-int", "\n{x}", "adk", {"x": -(10**5000)}, 2, "more than 4300 digits"),
    ("adk-huge-int-in-a-dict", "{x}", "adk", {"x": {"n": 10**5000}}, 1, "more than 4300 digits"),
    ("angle-tuple-key", "<x>", "angle", {"x": {(1, 2): "y"}}, 1, "cannot be printed as JSON"),
    ("angle-key-whose-repr-fails", "<x>", "angle", {"x": {"a": {BadRepr(): 1}}}, 1, "cannot be printed as JSON"),
    ("adk-key-whose-repr-fails", "{x}", "adk", {"x": {BadRepr(): 1}}, 1, "raised RuntimeError"),
    ("angle-object", "<x>", "angle", {"x": object()}, 1, "an object of type object, which prints only"),
    ("angle-object-inside", "<x>", "angle", {"x": {"a": object()}}, 1, "an object of type object, which prints"),
    ("adk-object", "{x}", "adk", {"x": object()}, 1, "an object of type object, which prints only"),
    ("adk-object-inside", "{x}", "adk", {"x": {"a": [object()]}}, 1, "an object of type object, which prints"),
    ("angle-str-that-fails", "<x>", "angle", {"x": BadRepr()}, 1, "raised RuntimeError"),
    ("angle-shared-60-times", "<x>", "angle", {"x": doubled(60)}, 1, "too large to print"),
    ("adk-shared-60-times", "{x}", "adk", {"x": doubled(60)}, 1, "too large to print"),
]


@pytest.mark.parametrize(
    ("source", "dialect", "state", "line", "words"), [u[1:] for u in UNPRINTABLE], ids=[u[0] for u in UNPRINTABLE]
)
@pytest.mark.parametrize("missing", ["error", "keep"])
def test_a_value_that_cannot_be_printed_is_an_error_naming_its_key_and_placeholder(
    source: str, dialect: Any, state: dict[str, Any], line: int, words: str, missing: Any
) -> None:
    with pytest.raises(UnprintableValueError) as caught:
        Template(source, dialect=dialect).render(state, missing=missing)
    error = caught.value
    assert type(error) is UnprintableValueError  # not a CyclicValueError: nothing here contains itself
    assert isinstance(error, TemplatingError)
    assert isinstance(error, ValueError)
    assert error.key == "x"
    assert error.message.startswith("the value of 'x' ")
    assert words in error.message
    assert error.span is not None
    assert error.span.line == line
    assert source[error.span.start : error.span.end].lstrip("<{").startswith("x")
    assert error.help is not None
    assert "'x'" in error.help


@pytest.mark.parametrize("format_function", [format_value, format_adk_value], ids=["angle", "adk"])
@pytest.mark.parametrize(
    ("value", "words"),
    [(nested(100_000), "nests too deeply"), (10**5000, "4300 digits"), ([[10**5000]], "4300 digits")],
    ids=["deep", "huge-int", "huge-int-inside"],
)
def test_format_functions_refuse_what_cannot_be_printed(format_function: Any, value: Any, words: str) -> None:
    with pytest.raises(UnprintableValueError, match=words) as caught:
        format_function(value)
    assert caught.value.key is None
    assert issubclass(CyclicValueError, UnprintableValueError)


@pytest.mark.parametrize(
    ("value", "angle", "adk"),
    [
        (nested(200), "[" * 200 + '"x"' + "]" * 200, "[" * 200 + "'x'" + "]" * 200),
        (10**4299, "1" + "0" * 4299, "1" + "0" * 4299),
        ({"n": [10**100]}, '{"n": [1' + "0" * 100 + "]}", "{'n': [1" + "0" * 100 + "]}"),
    ],
    ids=["200-deep", "4300-digits", "big-int-inside"],
)
def test_values_near_the_limits_still_print(value: Any, angle: str, adk: str) -> None:
    assert render("<v>", {"v": value}) == angle
    assert render("{v}", {"v": value}, dialect="adk") == adk


@pytest.mark.parametrize("dialect", ["angle", "adk"])
def test_a_value_shared_many_times_within_the_size_budget_prints_in_full(dialect: Any) -> None:
    """The size budget counts a shared value each time it is written out, as printing does: 2**12 of it fits."""
    source = "<x>" if dialect == "angle" else "{x}"
    text = Template(source, dialect=dialect).render({"x": doubled(12)})
    assert text.count("[]") == 2**12


@pytest.mark.parametrize(
    ("dialect", "value", "text"),
    [
        ("angle", ["<tag at 0x1>"], '["<tag at 0x1>"]'),
        ("adk", ["<tag at 0x1>"], "['<tag at 0x1>']"),
        ("angle", "<tag at 0x1>", "<tag at 0x1>"),
        ("adk", {1: "one"}, "{1: 'one'}"),
    ],
    ids=["angle-text-in-a-list", "adk-text-in-a-list", "angle-text", "adk-int-key"],
)
def test_text_that_looks_like_an_address_is_still_printed(dialect: Any, value: Any, text: str) -> None:
    source = "<x>" if dialect == "angle" else "{x}"
    assert Template(source, dialect=dialect).render({"x": value}) == text


def test_a_large_template_is_planned_with_the_collector_paused_and_renders_as_its_pieces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A node-dense template above the parser's size for pausing the collector: its plan is built with the
    collector paused (as its parse is), it renders what its pieces render, and the collector runs after."""
    template_module = sys.modules["templating.template"]
    seen: list[bool] = []

    class Recording(template_module.Plan):  # type: ignore[misc,name-defined]
        __slots__ = ()

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            seen.append(gc.isenabled())
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(template_module, "Plan", Recording)
    piece = "<a> <<b>> <c?> <d.0> <e.x?> text\n"
    state = {"a": 1, "d": ["first"], "e": {}}
    source = piece * 4_000
    assert len(source) >= sys.modules["templating.parser"]._PAUSE_COLLECTOR_FROM
    assert gc.isenabled()
    for missing in ("empty", "keep"):
        expected = Template(piece).render(state, missing=missing) * 4_000
        assert Template(source).render(state, missing=missing) == expected
    assert seen == [True, False] * 2  # the small piece's plan with it running, the large one's paused
    with pytest.raises(MissingKeyError) as caught:
        Template(source + "<zz>").render(state)
    assert caught.value.keys == ("zz",)
    assert gc.isenabled()


class AddressedInt(int):
    """An int whose text is only its place in memory: a subclass is formatted as any object is."""

    def __str__(self) -> str:
        return object.__repr__(self)


@given(st.one_of(st.integers(), st.floats(allow_nan=True, allow_infinity=True), st.booleans()))
def test_numbers_format_as_every_value_does(value: Any) -> None:
    """ints, floats and bools skip the checks for containers and memory addresses: the same text as the full path."""
    assert format_value(value) == sys.modules["templating.renderer"]._text(value) == str(value)
    assert format_adk_value(value) == str(value)
    assert render("<v>", {"v": value}) == render("{v}", {"v": value}, dialect="adk") == str(value)


def test_a_number_subclass_is_still_checked_for_a_memory_address() -> None:
    with pytest.raises(UnprintableValueError, match="type AddressedInt, which prints only as its place in memory"):
        format_value(AddressedInt(1))


class _Overdrawn(BaseException):
    """Raised by `Endless` when asked for more keys than any budget allows (a BaseException: no
    `except Exception` in the code under test can turn it into an ordinary error)."""


class Endless(Mapping[str, Any]):
    """A mapping whose iteration never ends (keys `k0`, `k1`, ... each holding `"v"`, and `len()` lies):
    asked for more than `limit` keys, it fails the test instead of hanging it."""

    def __init__(self, limit: int = 1_000_000) -> None:
        self.limit = limit
        self.drawn = 0

    def __getitem__(self, key: str) -> Any:
        if isinstance(key, str) and key[:1] == "k" and key[1:].isdigit():
            return "v"
        raise KeyError(key)

    def __len__(self) -> int:
        return 2

    def __iter__(self) -> Iterator[str]:
        index = 0
        while True:
            self.drawn += 1
            if self.drawn > self.limit:
                raise _Overdrawn(f"{self.drawn} keys drawn: iterated past every budget")
            yield f"k{index}"
            index += 1


SMALL_BUDGET = 100_000  # MAX_VALUE_SIZE for these tests: an endless mapping reaches it in ~10,000 keys


@pytest.fixture
def small_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    import templating.renderer

    monkeypatch.setattr(templating.renderer, "MAX_VALUE_SIZE", SMALL_BUDGET)


ENDLESS_RENDERS = [
    ("angle", lambda m: Template("Hi <m>").render({"m": m})),
    ("adk", lambda m: Template("Hi {m}", dialect="adk").render({"m": m})),
    ("format-value", format_value),
    ("format-adk-value", format_adk_value),
    ("nested", lambda m: Template("Hi <m>").render({"m": [1, {"x": m}]})),
    ("provider", lambda m: _instruction("Hi <m>")({"m": m})),
]


def _instruction(source: str) -> Any:
    from templating import instruction

    return instruction(source)


@pytest.mark.usefixtures("small_budget")
@pytest.mark.parametrize("render_it", [c[1] for c in ENDLESS_RENDERS], ids=[c[0] for c in ENDLESS_RENDERS])
def test_a_mapping_that_never_ends_is_too_large_not_a_hang(render_it: Any) -> None:
    """The size budget is counted as the mapping is iterated: a value whose keys never end is refused
    once it is over the budget, after about budget / item size keys, whatever `len()` says."""
    endless = Endless()
    with pytest.raises(UnprintableValueError, match="too large to print"):
        render_it(endless)
    assert endless.drawn <= SMALL_BUDGET // 8 + 1


@pytest.mark.parametrize("dialect", ["angle", "adk"])
def test_a_state_that_never_ends_is_not_listed_whole_for_a_did_you_mean(dialect: str) -> None:
    """A missing key's did-you-mean looks at a bounded number of the state's keys."""
    source = "Hi <k12x>" if dialect == "angle" else "Hi {k12x}"
    endless = Endless()
    with pytest.raises(MissingKeyError):
        Template(source, dialect=dialect).render(endless)  # type: ignore[arg-type]
    assert endless.drawn < endless.limit
