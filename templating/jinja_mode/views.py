"""What a Jinja2 template reads: read-only views of state, and values from state behind wrappers that
charge the render's budgets as they are iterated (a mapping of the caller's own class, an iterable
that is not a container of data). The sandbox in `sandbox` hands every value through `bounded`; what
the filters build from a bounded value (their generators, a reversed list) is passed on as it is.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Callable, Iterator, Mapping
from types import GeneratorType
from typing import Any

from jinja2 import Environment, Undefined
from jinja2.runtime import Context, LoopContext, Macro
from jinja2.utils import Namespace
from markupsafe import Markup

from ..nodes import SCOPES
from ..sessions.state import ReadonlyDict, ReadonlyList, ReadonlyState
from .budget import Capped, counted
from .filters import DRAWN_FROM_INPUT

__all__ = ["ABSENT", "Bounded", "ReadOnlyState", "bounded", "bounded_all", "did_you_mean", "get", "hinted"]

ABSENT: Any = object()


HINTED_FROM = 100_000  # the most state keys a did-you-mean compares (a state's keys may never end)


class ReadOnlyState(Mapping[str, Any]):
    """A read-only view of state, or of one scope of it (`user` reads the `user:` keys). `keys` gives the
    state's keys lazily: iterating the view charges each key read to the render's loop budget."""

    __slots__ = ("_get", "_keys", "_label", "_prefix")

    def __init__(
        self, get: Callable[[str, Any], Any], keys: Callable[[], Iterator[str]], prefix: str, label: str
    ) -> None:
        self._get = get
        self._keys = keys
        self._prefix = prefix
        self._label = label

    def __getitem__(self, key: str) -> Any:
        value = self._get(self._prefix + key, ABSENT) if isinstance(key, str) else ABSENT
        if value is ABSENT:
            raise KeyError(key)
        return bounded(value)

    def __iter__(self) -> Iterator[str]:
        size, prefix = len(self._prefix), self._prefix
        return (key[size:] for key in counted(self._keys()) if key.startswith(prefix))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return self._label

    def _lookup(self, environment: Environment, key: Any) -> Any:
        try:
            return self[key]
        except KeyError:
            full = self._prefix + key if isinstance(key, str) else key
            hint = f"state has no key {full!r}" + did_you_mean_key(str(full), hinted(self._keys))
            return environment.undefined(hint=hint, obj=self, name=str(key))


def hinted(keys: Callable[[], Iterator[str]]) -> list[str]:
    """The state keys a did-you-mean compares: at most `HINTED_FROM` of them."""
    return list(itertools.islice(keys(), HINTED_FROM))


class Bounded(Mapping[Any, Any]):
    """A mapping from state that is not a plain `dict` (any `Mapping` class), as a template reads it: each
    key its iteration draws is charged to the render's loop budget (and clock), so a mapping whose keys
    never end stops at the budget whatever iterates it (a loop, a filter, a method, `==`, printing); what
    it holds is read bounded too, and never written (`get`, never `[]`: no `__missing__` runs)."""

    __slots__ = ("_inner",)

    def __init__(self, inner: Mapping[Any, Any]) -> None:
        self._inner = inner

    def __getitem__(self, key: Any) -> Any:
        value = get(self._inner, key)
        if value is ABSENT:
            raise KeyError(key)
        return bounded(value)

    def __iter__(self) -> Iterator[Any]:
        return counted(self._inner)

    def __len__(self) -> int:
        return len(self._inner)


# Finite, iterated as they are: a dict's storage (its subclasses' too: the sandbox judges their methods by
# their own class), views of state over one, Jinja2's own render context (registered as a Mapping).
_PLAIN = (dict, ReadOnlyState, ReadonlyDict, ReadonlyState, Bounded, Context)


_AS_IS = frozenset({str, int, float, bool, type(None), list, dict, Markup})
# Iterated as they are: containers whose items are all there (a subclass too, unless it has an `__iter__` of
# its own: `len()` bounds what a C-level iteration of it draws), iterators that walk a sequence's indexes back
# to 0 (`|reverse`), and Jinja2's own machinery. Any other iterable is read `Capped`, but the filters' own
# generators.
_FINITE: tuple[type, ...] = (
    *(str, bytes, bytearray, list, tuple, set, frozenset, range, ReadonlyList, Capped, Undefined),
    *(type({}.keys()), type({}.values()), type({}.items()), type(reversed([])), reversed),
    *(LoopContext, Namespace, Macro),
)


_SEQUENCES = (list, tuple, set, frozenset)


def _iterates_itself(kind: type) -> bool:
    """Whether `kind`, a subclass of a list, tuple or set, has an `__iter__` of its own: `list()` or `in` would
    draw from that, not from its items (which `len()` bounds)."""
    return any(issubclass(kind, base) and kind.__iter__ is not base.__iter__ for base in _SEQUENCES)


def bounded(value: Any) -> Any:
    """`value` as a template may read it: a mapping of another class than `dict` (a `Mapping` of the
    caller's own) behind `Bounded`; a pair from `.items()` with its value so; an iterable that is not a
    container of data (from state: a generator, an object with its own `__iter__`) `Capped`, but for
    those a filter made from a value already bounded; anything else as it is."""
    if type(value) in _AS_IS:  # the usual values, without an abstract class's check
        return value
    if isinstance(value, Mapping):
        return value if isinstance(value, _PLAIN) else Bounded(value)
    if type(value) is tuple and len(value) == 2 and isinstance(value[1], Mapping):
        return (value[0], bounded(value[1]))
    if not hasattr(type(value), "__iter__"):
        return value
    if isinstance(value, _FINITE):
        return value if type(value) in _FINITE or not _iterates_itself(type(value)) else Capped(value)
    if type(value) is GeneratorType and value.gi_code in DRAWN_FROM_INPUT:
        return value  # a filter's own: it draws from the value it was given, bounded then (`Capped`: a step per item)
    return Capped(value)


def bounded_all(items: Iterator[Any]) -> Iterator[Any]:
    for item in items:
        yield bounded(item)


def get(mapping: Mapping[Any, Any], key: Any) -> Any:
    try:
        return mapping.get(key, ABSENT)
    except TypeError:  # an unhashable key
        return ABSENT


def did_you_mean(name: str, options: list[str]) -> str:
    match = difflib.get_close_matches(name, options, n=1, cutoff=0.6)
    return f"; did you mean {match[0]!r}?" if match else ""


def did_you_mean_key(key: str, keys: list[str]) -> str:
    """A close state key, compared within the key's scope so that a shared `user:` does not count as likeness."""
    scope, colon, name = key.partition(":")
    if colon and scope in SCOPES:
        names = [k[len(scope) + 1 :] for k in keys if k.startswith(scope + ":")]
        match = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
        return f"; did you mean {scope + ':' + match[0]!r}?" if match else ""
    return did_you_mean(key, [k for k in keys if k.partition(":")[0] not in SCOPES or ":" not in k])
