"""Nodes plus a read-only view of state to text.

The renderer knows nodes and mappings, nothing else: state comes from whoever calls it (a plain
mapping, a session, an agent context with a `.state` mapping) and is only ever read.
"""

from __future__ import annotations

import contextlib
import difflib
import itertools
import json
import re
import sys
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, TypeAlias
from typing import Literal as _Literal

from .errors import CyclicValueError, MissingKey, MissingKeyError, UnprintableValueError
from .nodes import MAX_VALUE_SIZE, VALUE_ITEM_SIZE, Dialect, Node, Placeholder

__all__ = [
    "Formatter",
    "Missing",
    "Plan",
    "format_adk_value",
    "format_value",
    "lookup",
    "state_getter",
    "state_reader",
]

Missing: TypeAlias = _Literal["error", "empty", "keep"]
Formatter: TypeAlias = Callable[[Any], str]
_MODES = ("error", "empty", "keep")
_ABSENT: Any = object()


def format_value(value: Any) -> str:
    """The default formatting of a state value: `None` is empty, containers are JSON, the rest `str()`.

    A value that cannot be written out raises [`UnprintableValueError`][templating.UnprintableValueError]
    (never another exception, never a memory address): it contains itself, nests deeper than Python
    can walk, is an integer of more digits than Python writes, is larger than `MAX_VALUE_SIZE` once
    written out, has a dict key JSON cannot hold (a tuple), holds an object that prints only as its
    place in memory (`object()`), or its `str()` fails.
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        kind = type(value)
        if kind is int or kind is float or kind is bool:  # never a memory address: no ABC check, no search
            return str(value)
        if isinstance(value, (Mapping, list, tuple)):
            check_size(value)
            return json.dumps(_plain(value), ensure_ascii=False, default=_json_default)
        return _text(value)
    except UnprintableValueError:
        raise
    except (ValueError, RecursionError) as error:
        raise unprintable(value, error) from None
    except TypeError as error:  # json: a dict key that is not str, int, float, bool or None
        raise UnprintableValueError(_NOT_JSON.format(error=error)) from None
    except Exception as error:  # a __str__ or __repr__ of the value's own that fails
        raise UnprintableValueError(_FAILED.format(kind=type(error).__name__, error=error)) from None


def format_adk_value(value: Any) -> str:
    """The ADK dialect's default formatting, as Google ADK does it: `None` is empty, anything else `str()`.

    So a dict renders as Python writes it (`{'a': 1}`), not as JSON. A list or dict that contains
    itself is an error (Python would write `[[...]]`), as is any value [`format_value`][templating.format_value]
    cannot write out (the same reasons, but that Python writes any dict key).
    """
    if value is None:
        return ""
    try:
        kind = type(value)
        if kind is int or kind is float or kind is bool:  # never a memory address, never a cycle
            return str(value)
        if isinstance(value, (Mapping, list, tuple)):
            check_size(value)
        text = str(value)
    except UnprintableValueError:
        raise
    except (ValueError, RecursionError) as error:
        raise unprintable(value, error) from None
    except Exception as error:  # a __str__ or __repr__ (a dict key's) that fails
        raise UnprintableValueError(_FAILED.format(kind=type(error).__name__, error=error)) from None
    if "..." in text and isinstance(value, (Mapping, list, tuple)) and _shape(value) == "cyclic":
        raise CyclicValueError(_CYCLIC)
    if _ADDRESS.search(text) and not isinstance(value, str):
        culprit = _addressed(value)
        if culprit is not None:
            raise UnprintableValueError(_ADDRESSED.format(kind=type(culprit).__name__))
    return text


_CYCLIC = "a value contains itself (a list or dict that holds itself), so it cannot be printed"
_DEEP = "a value nests too deeply to print (lists or dicts deeper than Python can walk, about {limit} levels)"
_DIGITS = "a value is an integer of more than {limit} digits, more than Python writes out as text"
_OTHER = "a value cannot be printed: {error}"
_NOT_JSON = "a value cannot be printed as JSON: {error}"
_FAILED = "a value cannot be printed: turning it into text raised {kind}: {error}"
_ADDRESSED = "a value holds an object of type {kind}, which prints only as its place in memory"
_TOO_LARGE = "a value is too large to print: more than {limit:,} in size once written out (about its bytes)"
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>")


def _text(value: Any) -> str:
    """`str(value)` of a value that is not a container; refused if it is only a memory address."""
    text = str(value)
    if _ADDRESS.search(text):
        raise UnprintableValueError(_ADDRESSED.format(kind=type(value).__name__))
    return text


def _addressed(value: Any) -> Any:
    """The first object inside a container whose `repr()` is a memory address, or `None` (walked
    without recursion, each container once)."""
    stack: list[Any] = [value]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        if isinstance(item, (Mapping, list, tuple)):
            if id(item) not in seen:
                seen.add(id(item))
                stack.extend(_children(item))
                if isinstance(item, Mapping):
                    stack.extend(_keys_of(item))
        elif not isinstance(item, str) and _ADDRESS.search(repr(item)):
            return item
    return None


def _children(value: Any) -> Any:
    """The values in a container as stored: a dict's or list's own storage (a read-only view's is its
    source's values, never views made afresh), any other mapping's values."""
    if isinstance(value, dict):
        return dict.values(value)
    if isinstance(value, list):
        return list.__iter__(value)
    if isinstance(value, tuple):
        return value
    return value.values()


def _keys_of(value: Any) -> Any:
    return dict.keys(value) if isinstance(value, dict) else value.keys()


def check_size(value: Any) -> None:
    """[`UnprintableValueError`][templating.UnprintableValueError] if `value` (a container) written out
    is larger than `MAX_VALUE_SIZE`, as the state contract counts it: linear in its distinct containers,
    so `v = [v, v]` nested 60 times is refused at once, not written out. Cycles and depth are left to
    the writer, which reports them."""
    with contextlib.suppress(RecursionError):  # too deep to walk: the writer says so
        _size(value, {}, set())


def _size(value: Any, memo: dict[int, int], active: set[int]) -> int:
    if isinstance(value, str):
        return VALUE_ITEM_SIZE + len(value)
    if not isinstance(value, (Mapping, list, tuple)):
        return VALUE_ITEM_SIZE
    ident = id(value)
    known = memo.get(ident)
    if known is not None:
        return known
    if ident in active:
        return 0  # a cycle: the writer reports it
    active.add(ident)
    total = VALUE_ITEM_SIZE
    if isinstance(value, Mapping):  # counted as it is iterated: a mapping whose keys never end stops here
        for key, item in dict.items(value) if isinstance(value, dict) else value.items():
            total += (len(key) if isinstance(key, str) else 0) + _size(item, memo, active)
            if total > MAX_VALUE_SIZE:
                raise UnprintableValueError(_TOO_LARGE.format(limit=MAX_VALUE_SIZE))
    else:
        for item in _children(value):
            total += _size(item, memo, active)
            if total > MAX_VALUE_SIZE:
                raise UnprintableValueError(_TOO_LARGE.format(limit=MAX_VALUE_SIZE))
    active.discard(ident)
    memo[ident] = total
    return total


def unprintable(value: Any, error: ValueError | RecursionError) -> UnprintableValueError:
    """The error for `value`, whose formatting raised `error`: says why it cannot be printed."""
    shape = _shape(value) if isinstance(value, (Mapping, list, tuple)) else None
    if shape == "cyclic":
        return CyclicValueError(_CYCLIC)
    if shape == "deep" or isinstance(error, RecursionError):
        return UnprintableValueError(_DEEP.format(limit=sys.getrecursionlimit()))
    if "integer string conversion" in str(error):
        return UnprintableValueError(_DIGITS.format(limit=sys.get_int_max_str_digits()))
    return UnprintableValueError(_OTHER.format(error=error))


_DEEPEST = 100_000


def _shape(value: Any) -> _Literal["cyclic", "deep"] | None:
    """Whether a list, tuple or mapping holds itself at some depth, or nests more than `_DEEPEST`
    levels (walked without recursion); `None` if neither."""
    stack: list[tuple[Any, bool]] = [(value, True)]
    path: set[int] = set()
    while stack:
        item, entering = stack.pop()
        if not entering:
            path.discard(id(item))
            continue
        if not isinstance(item, (Mapping, list, tuple)):
            continue
        if id(item) in path:
            return "cyclic"
        if len(path) > _DEEPEST:  # (also views made afresh at each step, which never repeat an id)
            return "deep"
        path.add(id(item))
        stack.append((item, False))
        stack.extend((inner, True) for inner in (item.values() if isinstance(item, Mapping) else item))
    return None


def _plain(value: Any) -> Any:
    return dict(value) if isinstance(value, Mapping) and not isinstance(value, dict) else value


def _json_default(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    return _text(value)


Getter: TypeAlias = Callable[[str, Any], Any]


def state_getter(state: Any) -> Getter:
    """The `get` of whatever holds state: a mapping, or an object (an agent context) with a `.state`.

    Only `get` is used, never `[]`, so a `defaultdict` is not written to by a lookup.
    """
    if isinstance(state, Mapping):
        return state.get
    inner = getattr(state, "state", None)
    if isinstance(inner, Mapping):
        return inner.get
    # Mapping-like state objects that are not registered as Mappings (an agent framework's
    # State with a delta) expose `get` and `__contains__`.
    for candidate in (inner, state):
        if candidate is not None and callable(getattr(candidate, "get", None)) and hasattr(candidate, "__contains__"):
            get: Getter = candidate.get
            return get
    raise TypeError(
        f"state must be a mapping, or an object with a .state mapping (an agent context), not {type(state).__name__}"
    )


def state_reader(state: Any) -> Getter:
    """The `get` to read state with when every value read is only formatted, never handed to other code.

    A holder of state whose type has a `_state_reader()` method (the package's read-only views,
    `State` and the agent contexts) gives a `get` over the stored values themselves: a read
    costs one lookup, with no view of state and no read-only wrapper made per value. Google ADK's
    own `ReadonlyContext` is read from the dict its `state` wraps (see `_adk_readonly_reader`).
    Anything else is read through `state_getter`. Values that reach a caller's code (a `formatter`)
    are read through `state_getter` instead, as read-only as the holder makes them.
    """
    try:
        reader = _READERS[type(state)]
    except KeyError:
        reader = _reader_of(type(state))
    get: Getter = reader(state)
    return get


# How to read each type of holder seen so far (its type's `_state_reader`, ADK's context's, or
# `state_getter`, which checks everything on each call): one dict lookup per render instead of an
# attribute lookup and two ABC checks. Bounded, so classes made on the fly are not all kept alive.
_READERS: dict[type, Callable[[Any], Getter]] = {}
_READERS_KEPT = 256


def _reader_of(kind: type) -> Callable[[Any], Getter]:
    reader: Callable[[Any], Getter] | None = getattr(kind, "_state_reader", None)
    if reader is None:
        reader = _adk_readonly_reader if _is_adk_readonly_context(kind) else state_getter
    if len(_READERS) < _READERS_KEPT:
        _READERS[kind] = reader
    return reader


_ADK_READONLY_CONTEXT = ("google.adk.agents.readonly_context", "ReadonlyContext")
# What ADK's `ReadonlyContext.state` reads: `MappingProxyType(self._invocation_context.session.state)`.
_ADK_STATE_NAMES = ("MappingProxyType", "_invocation_context", "session", "state")


def _is_adk_readonly_context(kind: type) -> bool:
    """Whether `kind` is google-adk's `ReadonlyContext` (or a subclass keeping its `state`) and its
    `state` is still a read-only proxy of `_invocation_context.session.state`, as in google-adk 1.x
    and 2.x. A subclass with a `state` of its own (ADK's `Context`, whose `State` holds a delta)
    or a future ADK whose `state` reads anything else is read through `state` as any object is."""
    owner = next((klass for klass in kind.__mro__ if "state" in klass.__dict__), None)
    if owner is None or (owner.__module__, owner.__qualname__) != _ADK_READONLY_CONTEXT:
        return False
    getter = getattr(owner.__dict__["state"], "fget", None)
    code = getattr(getter, "__code__", None)
    return (
        code is not None
        and code.co_names == _ADK_STATE_NAMES
        and getattr(getter, "__globals__", {}).get("MappingProxyType") is MappingProxyType
    )


def _adk_readonly_reader(ctx: Any) -> Getter:
    """The `get` of the dict google-adk's `ReadonlyContext.state` wraps in a `MappingProxyType`: what
    the proxy's `get` reads, without making the proxy (a new one on every access) and without the
    ABC checks a holder that is not a Mapping takes. Anything but a plain dict is read as any object is."""
    state = ctx._invocation_context.session.state
    if type(state) is dict:
        return state.get
    return state_getter(ctx)


def lookup(get: Getter, placeholder: Placeholder) -> Any:
    """The value a placeholder names, or the module's absent sentinel. Mappings by key, lists and
    tuples by integer: never attributes, so a template reaches nothing but the data it is given."""
    value = get(placeholder.name, _ABSENT)
    for segment in placeholder.path[1:]:
        if value is _ABSENT:
            break
        value = _step(value, segment)
    return value


def _walk(value: Any, steps: tuple[tuple[str, int], ...]) -> Any:
    """`lookup` below the state key, with each step's list index worked out in advance."""
    for segment, index in steps:
        kind = type(value)
        if kind is dict:
            value = value.get(segment, _ABSENT)
        elif kind is list:
            value = value[index] if 0 <= index < len(value) else _ABSENT
        elif value is _ABSENT:
            break
        else:
            value = _step(value, segment)
    return value


def _step(value: Any, segment: str) -> Any:
    if type(value) is dict:
        return value.get(segment, _ABSENT)
    if isinstance(value, Mapping):
        return value.get(segment, _ABSENT)
    if isinstance(value, (list, tuple)) and segment.isdigit():
        index = int(segment)
        return value[index] if index < len(value) else _ABSENT
    return _ABSENT


def _suggest(get: Getter, state: Any, placeholder: Placeholder) -> str | None:
    """A close match for a missing key among the keys present at the level where the lookup failed."""
    path = placeholder.path
    prefix = placeholder.name[: len(placeholder.name) - len(path[0])]  # the scope, "user:" or ""
    keys: list[str] = []
    mapping: Any = _root_mapping(state)
    if mapping is not None:
        keys = [k for k in _keys(mapping) if isinstance(k, str)]
    value = get(placeholder.name, _ABSENT)
    if value is _ABSENT:
        match = difflib.get_close_matches(placeholder.name, keys, n=1, cutoff=0.6)
        return match[0] + placeholder.key[len(placeholder.name) :] if match else None
    walked = [prefix + path[0]]
    for segment in path[1:]:
        nxt = _step(value, segment)
        if nxt is _ABSENT:
            if isinstance(value, Mapping):
                options = [k for k in itertools.islice(value, SUGGESTED_FROM) if isinstance(k, str)]
                match = difflib.get_close_matches(segment, options, n=1, cutoff=0.6)
                if match:
                    return ".".join([*walked, match[0]])
            return None
        walked.append(segment)
        value = nxt
    return None


def _root_mapping(state: Any) -> Any:
    if isinstance(state, Mapping):
        return state
    inner = getattr(state, "state", None)
    return inner if inner is not None else state


SUGGESTED_FROM = 100_000  # the most keys a did-you-mean compares (a mapping's keys may never end)


def _keys(mapping: Any) -> list[Any]:
    if isinstance(mapping, Mapping):
        return list(itertools.islice(mapping, SUGGESTED_FROM))
    to_dict = getattr(mapping, "to_dict", None)
    if callable(to_dict):
        return list(itertools.islice(to_dict(), SUGGESTED_FROM))
    return []


class Plan:
    """What rendering needs from a parsed template, worked out once: the fixed text of every node,
    and for each placeholder the slot its value goes in. Rendering copies the text and fills the slots.

    `dialect` is the syntax the nodes were parsed from: it picks the default formatting of values
    ([`format_value`][templating.format_value], or [`format_adk_value`][templating.format_adk_value] for `"adk"`) and
    the help of a missing key."""

    __slots__ = ("default", "dialect", "holders", "parts", "reads", "source")

    def __init__(self, nodes: tuple[Node, ...], source: str, *, dialect: Dialect = "angle") -> None:
        # One pass with a type test per node (a `match` on the node classes cost twice as much), and
        # the steps below the state key worked out only for a dotted key: most keys have none. One
        # small tuple per placeholder (its slot, state key and steps) and nothing else made per node:
        # a node-dense megabyte has some 350,000 of them.
        parts: list[str] = []
        reads: list[tuple[int, str, tuple[tuple[str, int], ...]]] = []
        holders: list[Placeholder] = []
        add_part = parts.append
        add_read = reads.append
        add_holder = holders.append
        for node in nodes:
            if type(node) is Placeholder:
                key = node.key
                if "." in key:
                    # Each step with its list index (-1 if not all digits).
                    name = key.partition(".")[0]
                    steps = tuple((segment, int(segment) if segment.isdecimal() else -1) for segment in node.path[1:])
                else:
                    name, steps = key, ()
                add_read((len(parts), name, steps))
                add_holder(node)
                add_part("")
            else:
                add_part(node.text)  # type: ignore[union-attr]  # a Literal or an Escaped
        self.parts = parts
        self.reads = reads  # each placeholder's (slot in `parts`, state key, steps below it)
        self.holders = holders  # the placeholder of each read, in the same order
        self.source = source
        self.dialect = dialect
        self.default: Formatter = format_adk_value if dialect == "adk" else format_value

    def render(self, state: Any, *, missing: Missing = "error", formatter: Formatter | None = None) -> str:
        if missing not in _MODES:
            raise ValueError(f"missing= must be one of 'error', 'empty' or 'keep', not {missing!r}")
        get: Getter
        if type(state) is dict:
            get = state.get
        elif formatter is None:
            # Values are only formatted here: read them where they are stored (`state_reader`, inlined).
            reader = _READERS.get(type(state))
            get = (reader or _reader_of(type(state)))(state)
        else:
            get = state_getter(state)  # values go to the caller's formatter: read through the public view
        parts = self.parts.copy()
        reads = self.reads
        holders = self.holders
        if formatter is None:
            # The common case first: values found and formatted by default. At the first value
            # absent, the full loop below takes over from that placeholder on (missing= decides).
            default = self.default
            for index, name, steps in reads:
                value = get(name, _ABSENT)
                if steps:
                    value = _walk(value, steps)
                if type(value) is str:
                    parts[index] = value
                elif value is _ABSENT:
                    first = reads.index((index, name, steps))
                    reads, holders = reads[first:], holders[first:]
                    break
                else:
                    try:
                        parts[index] = default(value)
                    except UnprintableValueError as error:
                        raise self.value_error(index, error) from None
            else:
                return "".join(parts)
        absent: list[Placeholder] | None = None
        for (index, name, steps), node in zip(reads, holders, strict=True):
            value = get(name, _ABSENT)
            if steps:
                value = _walk(value, steps)
            if value is _ABSENT:
                if missing == "keep":
                    parts[index] = self.source[node.span.start : node.span.end]  # as the source has it
                elif missing == "error" and not node.optional:
                    if absent is None:
                        absent = []
                    absent.append(node)
            elif formatter is not None:
                text = formatter(value)
                if not isinstance(text, str):
                    raise TypeError(f"formatter= must return str, but returned {type(text).__name__} for {node.key!r}")
                parts[index] = text
            elif type(value) is str:
                parts[index] = value
            else:
                try:
                    parts[index] = self.default(value)
                except UnprintableValueError as error:
                    raise self.value_error(index, error) from None
        if absent is not None:
            raise self._missing_error(get, state, absent)
        return "".join(parts)

    def cyclic_error(self, name: str) -> CyclicValueError:
        """The error for a value that contains itself, naming the state key it was read from."""
        node = next(node for node, read in zip(self.holders, self.reads, strict=True) if read[1] == name)
        return CyclicValueError(
            f"the value of {name!r} contains itself (a list or dict that holds itself), so it cannot be printed",
            key=name,
            source=self.source,
            span=node.span,
            help=f"store a value without a cycle in {name!r}",
        )

    def value_error(self, index: int, error: UnprintableValueError) -> UnprintableValueError:
        """`error` (from formatting a value) again, naming the state key and placeholder of slot `index`."""
        node = next(node for node, read in zip(self.holders, self.reads, strict=True) if read[0] == index)
        if isinstance(error, CyclicValueError):
            return self.cyclic_error(node.name)
        name = node.name
        message = error.message.replace("a value", f"the value of {name!r}", 1)
        deep = error.message.startswith(_DEEP[:20])
        advice = "store it flatter, or as a string" if deep else "store it as a string"
        return UnprintableValueError(
            message, key=name, source=self.source, span=node.span, help=f"{advice} in {name!r}"
        )

    def _missing_error(self, get: Getter, state: Any, absent: list[Placeholder]) -> MissingKeyError:
        uses: dict[str, list[Placeholder]] = {}
        for node in absent:
            uses.setdefault(node.key, []).append(node)
        missing = [
            MissingKey(key, nodes[0].span, _suggest(get, state, nodes[0]), tuple(node.span for node in nodes[1:]))
            for key, nodes in uses.items()
        ]
        return MissingKeyError(missing, source=self.source, dialect=self.dialect)
