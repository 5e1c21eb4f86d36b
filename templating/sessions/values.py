"""Agent state: string keys, plain JSON values, scoped by a key prefix, changed only through a delta.

`State` is the view an agent context hands out: reads see the combined state with the pending
delta on top, writes go to both, so the delta can travel in an event's `actions.state_delta`.
The renderer never imports this module; it only ever reads a mapping.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Any, ClassVar, NoReturn, SupportsIndex, overload

from ..errors import TemplatingError
from ..nodes import APP_PREFIX, MAX_VALUE_SIZE, TEMP_PREFIX, USER_PREFIX, VALUE_ITEM_SIZE, Scope

__all__ = [
    "MAX_DEPTH",
    "MAX_INT",
    "MAX_VALUE_SIZE",
    "MIN_INT",
    "InvalidStateError",
    "State",
    "check_state",
    "check_value",
    "scope_of",
]

MAX_DEPTH = 100
"""How many lists and dicts may nest inside one state value: `{"k": [[1]]}` nests 2."""

MIN_INT, MAX_INT = -(2**63), 2**63 - 1
"""The ints state may hold: a signed 64-bit integer, what SQLite and PostgreSQL store as one exactly."""

_VALUE_HELP = (
    "state values are str, int, float, bool, None, or lists and dicts (with string keys) of these; "
    "keep other objects outside state and store an id or a plain copy instead"
)
_KEY_HELP = "state keys are strings: 'name', 'user:name', 'app:tier' or 'temp:step'"
_TEXT_HELP = "state text must be valid Unicode: decode bytes with errors='replace', or drop the lone surrogate"
_INT_HELP = f"state ints are 64-bit ({MIN_INT} to {MAX_INT}): store a larger number as a string"
_SIZE_HELP = (
    f"a state delta, or an initial state, holds at most {MAX_VALUE_SIZE:,} in size (about its bytes as JSON): "
    "store a large document elsewhere and keep its id in state"
)
_DEPTH_HELP = f"state values nest at most {MAX_DEPTH} lists and dicts deep: flatten the value, or store it as a string"
_SURROGATE = re.compile("[\ud800-\udfff]")


class InvalidStateError(TemplatingError, ValueError):
    """A key that is not a string, or a value that is not plain JSON, offered as state.

    Also a `ValueError`. Raised before anything is changed: a rejected write or delta leaves
    state exactly as it was. `key` is the top-level key, `path` where inside its value.
    """

    def __init__(self, message: str, *, key: object, path: str, help: str) -> None:
        super().__init__(message, help=help)
        self.key = key
        self.path = path


def scope_of(key: str) -> Scope | None:
    """The scope a key's prefix names: `"app"`, `"user"`, `"temp"`, or `None` for the session."""
    if key.startswith(APP_PREFIX):
        return "app"
    if key.startswith(USER_PREFIX):
        return "user"
    if key.startswith(TEMP_PREFIX):
        return "temp"
    return None


def check_value(key: str, value: Any) -> Any:
    """A private deep copy of `value` if it is plain JSON; else [`InvalidStateError`][templating.InvalidStateError]
    naming where it is not.

    The one value contract of every session service and [`State`][templating.State]: str (valid
    Unicode), int from `MIN_INT` to `MAX_INT` (64-bit), finite float, bool, None, and lists and
    dicts with str keys of these, nested at most `MAX_DEPTH` deep, without cycles, of at most
    `MAX_VALUE_SIZE` (docs/sessions.md). The cost is linear in the distinct lists and dicts of the
    value: one that appears in several places is checked and copied once (the copy shares it the same way).
    """
    return _Walk(key).check(value)


def check_state(state: Mapping[Any, Any], *, what: str = "state") -> dict[str, Any]:
    """A checked deep copy of a whole mapping of state (an initial state, a delta), or an error and nothing else.

    The whole mapping has one size budget, `MAX_VALUE_SIZE`: the error names the key that exceeds it.
    """
    if type(state) is dict:
        flat = _flat_copy(state)
        if flat is not None:
            return flat
    if not isinstance(state, Mapping):
        raise TypeError(f"{what} must be a mapping of str to JSON values, not {type(state).__name__}")
    checked: dict[str, Any] = {}
    walk = _Walk("", what=what)
    for key, value in state.items():
        if not isinstance(key, str):
            raise InvalidStateError(
                f"{what} key {_safe_repr(key)} is a {type(key).__name__}, not a string",
                key=key,
                path=_safe_repr(key),
                help=_KEY_HELP,
            )
        if not key.isascii() and _SURROGATE.search(key):
            raise InvalidStateError(
                f"{what} key {key!r} is not valid Unicode: it {_surrogate_problem(key)}",
                key=key,
                path=repr(key),
                help=_TEXT_HELP,
            )
        walk.key = key
        walk.left -= VALUE_ITEM_SIZE + len(key)
        checked[key] = walk.check(value)
    return checked


def _flat_copy(state: dict[Any, Any]) -> dict[str, Any] | None:
    """`check_state` of a plain dict whose values are all scalars (str, int, float, bool or None), the
    usual delta: a shallow copy is a deep one, and no walk is needed. `None` for anything else (a list
    or dict value, a subclass of str, int or float, anything refused): the general walk then copies it,
    or says what is wrong. The same contract and size budget as the walk."""
    copied = state.copy()  # taken first: what is checked is what is returned, whatever another thread does
    left = MAX_VALUE_SIZE
    for key, value in copied.items():
        if type(key) is not str or (not key.isascii() and _SURROGATE.search(key)):
            return None
        kind = type(value)
        if kind is str:
            if not value.isascii() and _SURROGATE.search(value):
                return None
            left -= len(value)
        elif kind is int:
            if not MIN_INT <= value <= MAX_INT:
                return None
        elif kind is float:
            if not math.isfinite(value):
                return None
        elif value is not None and kind is not bool:
            return None
        left -= 2 * VALUE_ITEM_SIZE + len(key)
    return copied if left >= 0 else None


def copy_checked(state: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of state that `check_state` made (plain JSON, no cycles): what a service hands
    out of what it stores. Nothing to check, so no paths to build for errors: a few times faster.
    Only for such state: anything else (a tuple, a dict subclass, an object) is passed through as is.
    A list or dict that appears in several places is copied once (the copy shares it the same way)."""
    copied = dict(state)
    memo: dict[int, Any] | None = None
    for key, value in copied.items():
        kind = type(value)
        if kind is dict or kind is list:
            if memo is None:
                memo = {}
            copied[key] = _tree_copy(value, memo)  # a value replaced: the dict's size, which iteration checks, stays
    return copied


def copy_value(value: Any) -> Any:
    """`copy_checked` of one value."""
    return _tree_copy(value, {})


def _tree_copy(value: Any, memo: dict[int, Any]) -> Any:
    kind = type(value)
    if kind is dict:
        copied = memo.get(id(value))
        if copied is None:
            copied = memo[id(value)] = {inner: _tree_copy(item, memo) for inner, item in value.items()}
        return copied
    if kind is list:
        copied = memo.get(id(value))
        if copied is None:
            copied = memo[id(value)] = [_tree_copy(item, memo) for item in value]
        return copied
    return value  # immutable: str, int, float, bool or None


class _Refused(Exception):
    """Raised by the fast path at anything it does not accept as is; the checker then says why."""


class _Walk:
    """One check of the contract: a memo of the lists and dicts done (their copy, height and size),
    those being walked (a cycle), and what is left of the size budget.

    `fast` copies, raising `_Refused` at anything it does not accept as is (it builds no paths);
    `explain` walks again building the path to what is wrong, and raises the error."""

    __slots__ = ("active", "height", "key", "left", "memo", "what")

    def __init__(self, key: str, *, what: str = "state") -> None:
        self.key = key
        self.what = what
        self.memo: dict[int, tuple[Any, int, int]] = {}
        self.active: set[int] = set()
        self.left = MAX_VALUE_SIZE
        self.height = 0  # of the value last copied: how many lists and dicts nest in it

    def check(self, value: Any) -> Any:
        left = self.left
        try:
            copied = self.fast(value, 0)
            if self.left >= 0:
                return copied
            raise _Refused  # past the budget with this value (a str, which the fast path does not count against it)
        except _Refused:
            # Something to explain (or a str subclass as a dict key, which the fast path leaves to this one):
            # walk again, building the path to what is wrong.
            self.active.clear()
            self.left = left
            return self.explain(value, self.key, 0)

    def fast(self, value: Any, depth: int) -> Any:
        kind = type(value)
        if kind is str:
            if value.isascii() or not _SURROGATE.search(value):
                self.left -= VALUE_ITEM_SIZE + len(value)
                self.height = 0
                return value
        elif kind is dict or kind is list:
            ident = id(value)
            done = self.memo.get(ident)
            if done is not None:
                if depth + done[1] <= MAX_DEPTH:
                    self.left -= done[2]
                    if self.left < 0:
                        raise _Refused
                    self.height = done[1]
                    return done[0]
            elif depth < MAX_DEPTH and ident not in self.active:
                before = self.left
                self.active.add(ident)
                depth += 1
                height = 0
                copied: Any  # a dict or a list
                if kind is dict:
                    copied = {}
                    for inner, item in value.items():
                        if type(inner) is not str or (not inner.isascii() and _SURROGATE.search(inner)):
                            raise _Refused
                        self.left -= len(inner)
                        copied[inner] = self.fast(item, depth)
                        if self.height > height:
                            height = self.height
                else:
                    copied = []
                    append = copied.append
                    for item in value:
                        append(self.fast(item, depth))
                        if self.height > height:
                            height = self.height
                self.active.discard(ident)
                self.left -= VALUE_ITEM_SIZE
                if self.left < 0:
                    raise _Refused
                height += 1
                self.memo[ident] = (copied, height, before - self.left)
                self.height = height
                return copied
        elif kind is int:
            if MIN_INT <= value <= MAX_INT:
                self.left -= VALUE_ITEM_SIZE
                self.height = 0
                return value
        elif kind is float:
            if math.isfinite(value):
                self.left -= VALUE_ITEM_SIZE
                self.height = 0
                return value
        elif value is None or kind is bool:
            self.left -= VALUE_ITEM_SIZE
            self.height = 0
            return value
        raise _Refused

    def explain(self, value: Any, path: str, depth: int) -> Any:
        """What `fast` does, with the path to every value, and the error at the first one refused."""
        key = self.key
        kind = type(value)
        self.height = 0
        if kind is list or kind is dict:
            ident = id(value)
            if ident in self.active:
                raise _bad_value(key, path, "contains itself")
            done = self.memo.get(ident)
            if done is not None and depth + done[1] <= MAX_DEPTH:
                self.left -= done[2]
                self.height = done[1]
                self._spend(path)
                return done[0]
            # (a value seen before, less deep, that nests too deeply here is walked again to say where)
            if depth >= MAX_DEPTH:
                raise _bad_value(key, path, f"nests lists and dicts more than {MAX_DEPTH} deep", help=_DEPTH_HELP)
            before = self.left
            depth += 1
            height = 0
            self.active.add(ident)
            try:
                if kind is list:
                    copied_list: list[Any] = []
                    for index, item in enumerate(value):
                        copied_list.append(self.explain(item, f"{path}[{index}]", depth))
                        height = max(height, self.height)
                    copied: Any = copied_list
                else:
                    copied_dict: dict[str, Any] = {}
                    for inner, item in value.items():
                        if not isinstance(inner, str):
                            raise _bad_value(
                                key, f"{path}[{_safe_repr(inner)}]", f"has a key of type {type(inner).__name__}"
                            )
                        if not inner.isascii() and _SURROGATE.search(inner):
                            raise _bad_value(
                                key,
                                f"{path}[{inner!r}]",
                                f"has a key that {_surrogate_problem(inner)}",
                                help=_TEXT_HELP,
                            )
                        self.left -= len(inner)
                        copied_dict[inner] = self.explain(item, f"{path}[{inner!r}]", depth)
                        height = max(height, self.height)
                    copied = copied_dict
            finally:
                self.active.discard(ident)
            self.left -= VALUE_ITEM_SIZE
            self._spend(path)
            self.memo[ident] = (copied, height + 1, before - self.left)
            self.height = height + 1
            return copied
        if value is None or kind is bool:
            pass
        elif kind is str:
            if not value.isascii() and _SURROGATE.search(value):
                raise _bad_value(key, path, _surrogate_problem(value), help=_TEXT_HELP)
            self.left -= len(value)
        elif kind is int:
            if not MIN_INT <= value <= MAX_INT:
                raise _bad_value(
                    key, path, f"{_int_words(value)}, outside the 64-bit range state holds", help=_INT_HELP
                )
        elif kind is float:
            if not math.isfinite(value):
                raise _bad_value(key, path, f"is {value!r}, which JSON cannot hold (it has no NaN or infinity)")
        else:
            raise _bad_value(key, path, f"is of type {kind.__name__}")
        self.left -= VALUE_ITEM_SIZE
        self._spend(path)
        return value

    def _spend(self, path: str) -> None:
        if self.left < 0:
            raise InvalidStateError(
                f"{self.what} is too large at {path!r}: more than {MAX_VALUE_SIZE:,} in size, about the bytes of "
                "its JSON (a list or dict that appears in several places counts each time)",
                key=self.key,
                path=path,
                help=_SIZE_HELP,
            )


def _fast_copy(value: Any, depth: int = 0) -> Any:
    """The fast path alone, on a fresh walk: a copy, or `_Refused`."""
    return _Walk("v").fast(value, depth)


def _copy(value: Any, key: str, path: str | None = None, depth: int = 0) -> Any:
    """The explaining path alone, on a fresh walk: a copy, or the error."""
    return _Walk(key).explain(value, key if path is None else path, depth)


def _safe_repr(value: object) -> str:
    """`repr(value)`, or a description when it raises (a dict key's own `__repr__` may)."""
    try:
        return repr(value)
    except Exception:
        return f"<a {type(value).__name__} whose repr() fails>"


def _int_words(value: int) -> str:
    if value.bit_length() <= 256:
        return f"is the int {value}"
    return f"is an int of about {int(value.bit_length() * math.log10(2)) + 1} digits"  # str() of it may fail


def text_problem(text: str) -> str | None:
    """Why `text` cannot be stored by every session service (a lone surrogate), or `None`."""
    return None if text.isascii() or not _SURROGATE.search(text) else _surrogate_problem(text)


def _surrogate_problem(text: str) -> str:
    found = _SURROGATE.search(text)
    assert found is not None
    return (
        f"holds the lone surrogate {found.group()!r} at index {found.start()}, "
        "which is not valid Unicode (no database can store it as text)"
    )


def _bad_value(key: str, path: str, problem: str, *, help: str = _VALUE_HELP) -> InvalidStateError:
    return InvalidStateError(f"state value {path!r} is not plain JSON: it {problem}", key=key, path=path, help=help)


class _Fixed:
    """A picklable `lambda: value`."""

    __slots__ = ("value",)

    def __init__(self, value: dict[str, Any]) -> None:
        self.value = value

    def __call__(self) -> dict[str, Any]:
        return self.value


class State(Mapping[str, Any]):
    """The combined state an agent sees, with the writes of the event being produced kept as a delta.

    `value` is the current state (a session's `state`); `delta` collects writes. Reading a
    key gives the delta's value if there is one, else the stored one; writing sets both, so the
    writer sees its change at once and the delta can be appended in an event. Keys are strings and
    values plain JSON (checked on every write; a rejected write changes nothing). The prefixes
    `app:`, `user:` and `temp:` scope a key to the app, the user or the current invocation;
    a key without one belongs to the session.

    Assign the whole key: `state["profile"] = {**state["profile"], "a": 1}`. Mutating a nested
    value in place (`state["profile"]["a"] = 1`) is not tracked, whether or not the key was
    written before: the delta holds its own copy of every value written, never an object that
    reads hand out, so an in-place change never reaches the delta and is not persisted.
    """

    APP_PREFIX: ClassVar[str] = APP_PREFIX
    USER_PREFIX: ClassVar[str] = USER_PREFIX
    TEMP_PREFIX: ClassVar[str] = TEMP_PREFIX

    __slots__ = ("_delta_of", "_value_of", "_written", "_written_in")

    def __init__(self, value: dict[str, Any], *, delta: dict[str, Any] | None = None) -> None:
        delta = {} if delta is None else delta
        check_state(value)  # both are kept as given (writes go to them): checked, the copies dropped
        check_state(delta, what="state delta")
        self._value_of: Callable[[], dict[str, Any]] = _Fixed(value)
        self._delta_of: Callable[[], dict[str, Any]] = _Fixed(delta)
        self._written: set[str] = set()  # keys written through this view: ``value`` has their own copy
        self._written_in: tuple[int, int] = (id(value), id(delta))  # ... of these two dicts

    @classmethod
    def _bound(cls, value: Callable[[], dict[str, Any]], delta: Callable[[], dict[str, Any]]) -> State:
        """A view reading its value and delta through their owners on every access, so a dict assigned
        in their place (`ctx.actions.state_delta = {...}`, `session.state = {...}`) is the one used."""
        state = cls({})
        state._value_of, state._delta_of = value, delta
        state._written_in = (id(value()), id(delta()))
        return state

    @property
    def _value(self) -> dict[str, Any]:
        return self._value_of()

    @property
    def _delta(self) -> dict[str, Any]:
        return self._delta_of()

    def _written_keys(self, value: dict[str, Any], delta: dict[str, Any]) -> set[str]:
        """The keys written through this view, forgotten when the value or delta dict was replaced."""
        if self._written_in != (id(value), id(delta)):
            self._written = set()
            self._written_in = (id(value), id(delta))
        return self._written

    def __getitem__(self, key: str) -> Any:
        value, delta = self._value, self._delta
        if key in delta:
            if key in self._written_keys(value, delta) and key in value:
                return value[key]
            return check_value(key, delta[key])  # a delta given from outside: never hand out its objects
        return value[key]

    def __contains__(self, key: object) -> bool:
        return key in self._delta or key in self._value

    def __iter__(self) -> Iterator[str]:
        keys = list(self._value)
        keys.extend(key for key in self._delta if key not in self._value)
        return iter(keys)

    def __len__(self) -> int:
        return len(self._value.keys() | self._delta.keys())

    def __setitem__(self, key: str, value: Any) -> None:
        self.update({key: value})

    def update(self, delta: Mapping[str, Any], /) -> None:
        """Write every key of `delta` (checked first: one bad key or value and nothing is written).

        The view and the delta each get their own deep copy of every value.
        """
        checked = check_state(delta, what="state")
        value, pending = self._value, self._delta
        written = self._written_keys(value, pending)
        pending.update(checked)
        value.update(check_state(checked))
        written.update(checked)

    def _state_reader(self) -> Callable[[str, Any], Any]:
        """A `get(key, default)` reading what `self[key]` reads, without copying: for the renderer,
        which only formats values, never changes or hands them out (see `templating.renderer`)."""
        value, delta = self._value_of(), self._delta_of()
        if not delta:
            return value.get
        written = self._written_keys(value, delta)

        def get(key: str, default: Any = None) -> Any:
            if key in delta and not (key in written and key in value):
                return delta[key]
            return value.get(key, default)

        return get

    def has_delta(self) -> bool:
        """Whether the delta holds any key: written through this view, or given in `delta` when it was made."""
        return bool(self._delta)

    def to_dict(self) -> dict[str, Any]:
        """The combined state as a new dict, deep-copied (and checked): the stored values with the delta on top."""
        return check_state({key: self[key] for key in self})

    def __repr__(self) -> str:
        return f"State({self.to_dict()!r}, delta={self._delta!r})"


# --- read-only views, for ReadonlyContext.state -----------------------------------------------------

_READ_ONLY = (
    "ReadonlyContext.state is read-only, nested values included: write state through a CallbackContext "
    "or ToolContext (assigning the whole key), or in an event's actions.state_delta"
)


def _read_only(*args: object, **kwargs: object) -> NoReturn:
    raise TypeError(_READ_ONLY)


def read_only(value: Any) -> Any:
    """`value` as a reader may see it: a dict or list as a read-only view, anything else as is.

    A view wraps only the object itself; its children are wrapped when they are read, so a read
    costs the size of one level, never a copy of everything below it.
    """
    if isinstance(value, (ReadonlyDict, ReadonlyList)):
        return value
    if isinstance(value, dict):
        return ReadonlyDict(value)
    if isinstance(value, list):
        return ReadonlyList(value)
    return value


class ReadonlyDict(dict[str, Any]):
    """A read-only view of a dict from state: still a `dict` (so it indexes, compares, `json.dumps`
    and formats as one), reading through to the dict it wraps, with every write raising `TypeError`.

    Values come out as read-only views too, made when read. `copy.copy` gives a plain dict (of
    read-only values); `copy.deepcopy` and pickling give a plain, writable deep copy.
    """

    __slots__ = ("_source",)

    def __init__(self, source: dict[str, Any]) -> None:
        super().__init__(source)  # one level, for C code that reads a dict's own storage (json)
        self._source = source

    def __getitem__(self, key: str) -> Any:
        return read_only(self._source[key])

    def _state_reader(self) -> Callable[[str, Any], Any]:
        """The wrapped dict's own `get`, for the renderer, which only formats what it reads."""
        get: Callable[[str, Any], Any] = self._source.get
        return get

    def get(self, key: str, default: Any = None) -> Any:
        source = self._source
        return read_only(source[key]) if key in source else default

    def __contains__(self, key: object) -> bool:
        return key in self._source

    def __iter__(self) -> Iterator[str]:
        return iter(self._source)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._source)

    def __len__(self) -> int:
        return len(self._source)

    def keys(self) -> KeysView[str]:  # type: ignore[override]
        return KeysView(self)

    def values(self) -> ValuesView[Any]:  # type: ignore[override]
        return ValuesView(self)

    def items(self) -> ItemsView[str, Any]:  # type: ignore[override]
        return ItemsView(self)

    def __eq__(self, other: object) -> bool:
        return self._source == (other._source if isinstance(other, ReadonlyDict) else other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None

    def __or__(self, other: Any) -> dict[str, Any]:  # type: ignore[override]
        return {**self, **other} if isinstance(other, dict) else NotImplemented

    def __ror__(self, other: Any) -> dict[str, Any]:  # type: ignore[override]
        return {**other, **self} if isinstance(other, dict) else NotImplemented

    def __repr__(self) -> str:
        return repr(self._source)

    def copy(self) -> dict[str, Any]:
        return dict(self)

    __copy__ = copy

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return copy.deepcopy(self._source, memo)

    def __reduce__(self) -> tuple[type[dict[str, Any]], tuple[dict[str, Any]]]:
        return dict, (self._source,)

    __setitem__ = __delitem__ = __ior__ = update = setdefault = pop = popitem = clear = _read_only


class ReadonlyList(list[Any]):
    """A read-only view of a list from state: still a `list` (a shallow copy of its items, made when
    the list is read), whose items come out as read-only views when read; every write raises `TypeError`.
    """

    __slots__ = ()

    @overload
    def __getitem__(self, index: SupportsIndex) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> ReadonlyList: ...

    def __getitem__(self, index: SupportsIndex | slice) -> Any:
        if isinstance(index, slice):
            return ReadonlyList(super().__getitem__(index))
        return read_only(super().__getitem__(index))

    def __iter__(self) -> Iterator[Any]:
        return map(read_only, super().__iter__())

    def __reversed__(self) -> Iterator[Any]:
        return map(read_only, super().__reversed__())

    def __add__(self, other: Any) -> list[Any]:
        return [*self, *other] if isinstance(other, list) else NotImplemented

    def __radd__(self, other: Any) -> list[Any]:
        return [*other, *self] if isinstance(other, list) else NotImplemented

    def __mul__(self, times: SupportsIndex) -> list[Any]:
        return list(self) * times

    __rmul__ = __mul__

    def copy(self) -> list[Any]:
        return list(self)

    __copy__ = copy

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return copy.deepcopy(list(super().__iter__()), memo)

    def __reduce__(self) -> tuple[type[list[Any]], tuple[list[Any]]]:
        return list, (list(super().__iter__()),)

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only
    append = extend = insert = pop = remove = clear = sort = reverse = _read_only


# What a ReadonlyState keeps in its own dict storage: one entry that is never state. C code that looks at
# a dict's size before reading it through its methods (json's encoder writes "{}" for an empty one)
# then reads through the view; code that bypasses the view's methods finds no state at all.
_STORAGE: dict[Any, Any] = {object(): None}


class ReadonlyState(ReadonlyDict):
    """`ReadonlyContext.state`: a read-only view of a session's combined state, live (it reads the
    session's state dict on every access) and a `dict`, so `json.dumps(ctx.state)` works.

    Making one costs the same whatever the size of state: nothing is copied, and a value is wrapped
    only when it is read. Unlike a nested view, its own `dict` storage holds none of state, so
    `dict.get(view, key)` and other calls that bypass the view's methods find nothing.
    """

    __slots__ = ()

    def __init__(self, source: dict[str, Any]) -> None:
        dict.__init__(self, _STORAGE)
        self._source = source

    def __repr__(self) -> str:
        return f"ReadonlyState({self._source!r})"
