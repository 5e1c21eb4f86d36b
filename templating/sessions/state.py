"""Agent state as an agent sees it: the `State` view, and the read-only views a `ReadonlyContext` hands out.

`State` is the view an agent context hands out: reads see the combined state with the pending
delta on top, writes go to both, so the delta can travel in an event's `actions.state_delta`.
Every value written is checked against the value contract (`templating.sessions.values`).
The renderer never imports this module; it only ever reads a mapping.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Any, ClassVar, NoReturn, SupportsIndex, overload

from ..nodes import APP_PREFIX, TEMP_PREFIX, USER_PREFIX
from .values import check_state, check_value

__all__ = ["ReadonlyDict", "ReadonlyList", "ReadonlyState", "State", "read_only"]


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
