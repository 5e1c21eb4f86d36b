"""What a static preview keeps between previews: each agent's request as google-adk's processors assembled it, by
everything those processors can read.

An editor asks for the preview again after every edit; an edit of one agent's instruction changes what that agent's
request is made of and nothing else. A request is a function of the agent object the processors run on (its
fields, and through `parent_agent`, `sub_agents` and its tools the whole tree it belongs to), the session's state
and the user's message. The key written here is all of that, as data: every field of every agent of the tree,
walked generically, except the `instruction` and `static_instruction` of the agents other than the one assembled
(google-adk's processors read those of the agent they run for only; the root's `global_instruction` is read for
every agent and stays in). Instructions are keyed by what the code says they are (a `Facts.instructions`), not by
the objects built for them. A value the key cannot say as data (an object of unknown kind) makes the request not
kept, so a kept request is never one built from something else.
"""

from __future__ import annotations

import threading
import types
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import replace
from enum import Enum
from typing import Any

__all__ = ["Opaque", "RequestCache", "Said", "Tokens"]

_INSTRUCTIONS = frozenset({"instruction", "static_instruction", "global_instruction"})
_SKIPPED = frozenset({"parent_agent"})  # the tree is walked from its root: a parent is where its child is found
MAX_DEPTH = 200  # nesting of the values walked: deeper is not kept rather than walked


class Opaque(Exception):
    """A value the key cannot say as data: the request is not kept."""


class Tokens:
    """Values as nested tuples of plain data, equal exactly when google-adk's processors can tell no difference
    between them. Each agent's instructions are `instructions(agent)`'s answer. An object's token is computed
    once (one walk over an app shares the agents of its tree); the objects are kept alive with their tokens so that
    no other object can take their id while this lives."""

    def __init__(self, instructions: Callable[[Any], Hashable]) -> None:
        self.instructions = instructions
        self._done: dict[int, tuple[Any, Hashable]] = {}
        self._used: set[int] = set()  # the objects whose token was asked for since the last `prune`
        self._open: set[int] = set()
        self._met = False  # whether the object being walked holds `keep`

    def of(self, value: Any, *, keep: Any = None) -> Hashable:
        """`value`'s token, with the instructions of `keep` (an agent) in it; of the other agents, only the
        `global_instruction`. Raises `Opaque` for a value of unknown kind."""
        said: Hashable = self._token(value, keep, 0)
        return said

    def _token(self, value: Any, keep: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise Opaque("too deep")
        kind = type(value)
        if value is None or kind is str:
            return value
        if kind in (bool, int, bytes):  # True == 1: each kept apart by its kind
            return (kind.__name__, value)
        if kind is float:
            return ("float", repr(value))
        if isinstance(value, Enum):
            return ("enum", _type(kind), self._token(value.value, keep, depth + 1))
        if isinstance(value, str):  # a str subclass (a marker): its kind is part of it
            return ("str", _type(kind), str(value))
        if kind in (list, tuple):
            return (kind.__name__, *(self._token(item, keep, depth + 1) for item in value))
        if kind in (set, frozenset):
            return ("set", frozenset(self._token(item, keep, depth + 1) for item in value))
        if kind is dict:
            return (
                "dict",
                *((self._token(k, keep, depth + 1), self._token(v, keep, depth + 1)) for k, v in value.items()),
            )
        if isinstance(value, type):
            return ("type", _type(value))
        if value is not keep and id(value) in self._done:
            self._used.add(id(value))
            return self._done[id(value)][1]
        if id(value) in self._open:
            raise Opaque("a cycle")
        self._open.add(id(value))
        outer, self._met = self._met, value is keep
        try:
            said = self._object(value, kind, keep, depth)
        finally:
            self._open.discard(id(value))
            inner, self._met = self._met, outer or self._met
        said = Said(said)
        if not inner:  # a token that holds no agent's own instructions: the same whichever agent is assembled
            self._done[id(value)] = (value, said)
            self._used.add(id(value))
        return said

    def prune(self) -> None:
        """Keep only the tokens asked for since the last prune (a walk over a tree keeps the tree's objects): the
        objects of trees no longer walked are let go. A kept object must not have changed since its token was
        taken (google-adk's `parent_agent` aside, which no token holds)."""
        self._done = {key: found for key, found in self._done.items() if key in self._used}
        self._used = set()

    def _object(self, value: Any, kind: type, keep: Any, depth: int) -> Hashable:
        if isinstance(value, types.FunctionType):
            return (
                "function",
                value.__module__,
                value.__qualname__,
                value.__name__,
                value.__doc__,
                id(value.__code__),  # a function's code lives as long as its module: the same def, the same code
                self._token(value.__defaults__, keep, depth + 1),
                self._token(value.__kwdefaults__, keep, depth + 1),
                self._token(dict(value.__annotations__), keep, depth + 1),
                self._token(tuple(cell.cell_contents for cell in value.__closure__ or ()), keep, depth + 1),
            )
        fields = getattr(kind, "model_fields", None)
        if isinstance(fields, Mapping):  # a pydantic model (google-adk's agents, models, tools' settings)
            if value.__pydantic_extra__:
                raise Opaque("extra fields")
            names = [name for name in fields if name not in _SKIPPED]
            out: list[Any] = ["model", _type(kind)]
            instructed = bool(_INSTRUCTIONS & set(names))
            for name in names:
                if instructed and name in _INSTRUCTIONS:
                    continue
                out.append((name, self._token(getattr(value, name), keep, depth + 1)))
            if instructed:
                said = self.instructions(value)
                out.append(("instructions", said if value is keep else _global(said)))
            return tuple(out)
        state = getattr(value, "__dict__", None)
        if isinstance(state, dict):  # a plain object (a tool of google-adk's): its attributes, slots included
            attributes = dict(state)
            for cls in kind.__mro__:
                slots = cls.__dict__.get("__slots__", ())
                for name in (slots,) if isinstance(slots, str) else slots:
                    if name not in ("__dict__", "__weakref__") and hasattr(value, name):
                        attributes[f"{cls.__qualname__}.{name}"] = getattr(value, name)
            return ("object", _type(kind), self._token(attributes, keep, depth + 1))
        raise Opaque(f"a {kind.__name__}")


class Said:
    """An object's token with its hash taken once: a request's key holds the tree's token and each agent's, which
    hold the tokens of the objects below them, hashed once each rather than again for every key."""

    __slots__ = ("_hash", "value")

    def __init__(self, value: Hashable) -> None:
        self.value = value
        self._hash = hash(value)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (
            isinstance(other, Said) and self._hash == other._hash and bool(self.value == other.value)
        )

    def __repr__(self) -> str:
        return f"Said({self.value!r})"


def _global(said: Hashable) -> Hashable:
    """Of an agent's instructions as `Facts.instructions` says them, the part every agent's request may read."""
    return said[2] if isinstance(said, tuple) and len(said) == 3 else said


def _type(kind: type) -> tuple[str, str, int]:
    return (kind.__module__, kind.__qualname__, id(kind))


class RequestCache:
    """The requests assembled last (least recently used dropped first), for the language server's worker threads
    and the command alike."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._kept: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable) -> Any:
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
        return None if found is None else _copy(found)

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._kept[key] = _copy(value)
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()

    def __len__(self) -> int:
        return len(self._kept)


def _copy(made: Any) -> Any:
    """A copy whose lists the caller may change (an `Assembled`)."""
    return replace(made, notes=list(made.notes))
