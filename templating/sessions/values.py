"""The value contract of agent state: string keys, plain JSON values, scoped by a key prefix.

Every write of state (a `State` view, an initial state, an event's delta) goes through `check_state`,
which refuses what is not plain JSON (with the key and the path inside its value) and returns a deep copy
that shares no container with what it was given: `InvalidStateError`, limits (`MAX_DEPTH`, 64-bit ints,
the size budget) and the copies every service and view take.
"""

from __future__ import annotations

import marshal
import math
import re
from collections.abc import Collection, Mapping
from typing import Any

from .._collector import paused
from ..errors import TemplatingError
from ..nodes import APP_PREFIX, MAX_VALUE_SIZE, TEMP_PREFIX, USER_PREFIX, VALUE_ITEM_SIZE, Scope

__all__ = [
    "MAX_DEPTH",
    "MAX_INT",
    "MAX_VALUE_SIZE",
    "MIN_INT",
    "InvalidStateError",
    "check_state",
    "check_value",
    "copy_checked",
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
    """`check_state` of a plain dict in one loop: scalars (str, int, float, bool or None, the usual
    values and deltas) are checked where they are, a shallow copy being a deep one for them, and each
    list or dict goes through the walk's fast path (one walk for the whole state: a value shared by two
    keys is copied once). `None` at anything refused or unusual (a subclass of str, int or float, a key
    that is not a str): the general walk then copies it, or says what is wrong. The same contract and
    size budget as the general walk."""
    copied = state.copy()  # taken first: what is checked is what is returned, whatever another thread does
    left = MAX_VALUE_SIZE
    walk: _Walk | None = None
    for key, value in copied.items():
        if type(key) is not str or (not key.isascii() and _SURROGATE.search(key)):
            return None
        kind = type(value)
        if kind is str:
            if not value.isascii() and _SURROGATE.search(value):
                return None
            left -= len(value)
        elif kind is dict or kind is list:
            if walk is None:
                walk = _Walk("")
            walk.left = left - VALUE_ITEM_SIZE - len(key)
            try:
                copied[key] = walk.fast(value, 0)  # a value replaced: the dict's size, which iteration checks, stays
            except _Refused:
                return None
            left = walk.left
            continue
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
    return copy_nested(copied, [key for key, value in copied.items() if type(value) is dict or type(value) is list])


def copy_nested(state: dict[str, Any], keys: Collection[str]) -> dict[str, Any]:
    """`state` (a shallow copy of checked state, the caller's own) with the values of `keys`, its lists and
    dicts, replaced by deep copies, in place; returned. For a service that knows which of its keys hold lists
    and dicts: the others are immutable, so the shallow copy is already a deep one for them.

    Many lists and dicts (a large state) are copied by `marshal`, in C: a round trip of exactly these
    types (str, int, float, bool, None, list, dict) gives equal values, shares what the original
    shares, and is several times faster than a walk in Python."""
    if len(keys) >= _MARSHAL_FROM:
        try:
            data = marshal.dumps([state[key] for key in keys])
        except ValueError:  # something marshal does not take (passed through by the walk below)
            pass
        else:
            if len(data) < _PAUSE_FROM:
                values = marshal.loads(data)
            else:  # many fresh lists and dicts, no cycle among them: the collector is not run over them meanwhile
                with paused():
                    values = marshal.loads(data)
            state.update(zip(keys, values, strict=True))
            return state
    memo: dict[int, Any] = {}
    for key in keys:
        state[key] = _tree_copy(state[key], memo)
    return state


_MARSHAL_FROM = 8  # lists and dicts in a state: from this many on, marshal copies them (a call costs a walk of a few)
_PAUSE_FROM = 32_768  # bytes of marshal data: from this much on, the garbage collector is paused while it is read


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
                before = left = self.left
                self.active.add(ident)
                depth += 1
                height = 0
                copied: Any  # a dict or a list
                # Scalar items are checked here (most items are): a call of `fast` only for a list or dict.
                if kind is dict:
                    copied = {}
                    for inner, item in value.items():
                        if type(inner) is not str or (not inner.isascii() and _SURROGATE.search(inner)):
                            raise _Refused
                        left -= len(inner)
                        item_kind = type(item)
                        if item_kind is str:
                            if not item.isascii() and _SURROGATE.search(item):
                                raise _Refused
                            left -= VALUE_ITEM_SIZE + len(item)
                        elif item_kind is int:
                            if not MIN_INT <= item <= MAX_INT:
                                raise _Refused
                            left -= VALUE_ITEM_SIZE
                        elif item_kind is float:
                            if not math.isfinite(item):
                                raise _Refused
                            left -= VALUE_ITEM_SIZE
                        elif item is None or item_kind is bool:
                            left -= VALUE_ITEM_SIZE
                        else:
                            if left < 0:  # the budget is spent: (a value that contains itself stops here too)
                                raise _Refused
                            self.left = left
                            item = self.fast(item, depth)
                            left = self.left
                            if self.height > height:
                                height = self.height
                        copied[inner] = item
                else:
                    copied = []
                    append = copied.append
                    for item in value:
                        item_kind = type(item)
                        if item_kind is str:
                            if not item.isascii() and _SURROGATE.search(item):
                                raise _Refused
                            left -= VALUE_ITEM_SIZE + len(item)
                        elif item_kind is int:
                            if not MIN_INT <= item <= MAX_INT:
                                raise _Refused
                            left -= VALUE_ITEM_SIZE
                        elif item_kind is float:
                            if not math.isfinite(item):
                                raise _Refused
                            left -= VALUE_ITEM_SIZE
                        elif item is None or item_kind is bool:
                            left -= VALUE_ITEM_SIZE
                        else:
                            if left < 0:  # the budget is spent: (a value that contains itself stops here too)
                                raise _Refused
                            self.left = left
                            item = self.fast(item, depth)
                            left = self.left
                            if self.height > height:
                                height = self.height
                        append(item)
                self.active.discard(ident)
                self.left = left - VALUE_ITEM_SIZE
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
