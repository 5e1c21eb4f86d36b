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

__all__ = ["Opaque", "RequestCache", "token"]

_INSTRUCTIONS = frozenset({"instruction", "static_instruction", "global_instruction"})
_SKIPPED = frozenset({"parent_agent"})  # the tree is walked from its root: a parent is where its child is found
MAX_DEPTH = 200  # nesting of the values walked: deeper is not kept rather than walked


class Opaque(Exception):
    """A value the key cannot say as data: the request is not kept."""


def token(value: Any, *, instructions: Callable[[Any], Hashable], keep: Any = None) -> Hashable:
    """`value` as nested tuples of plain data (equal exactly when google-adk's processors can tell no difference).
    Each agent's instructions are `instructions(agent)`'s answer; those of agents other than `keep` are left out
    but for their `global_instruction`. Raises `Opaque` for a value of unknown kind."""
    seen: dict[int, int] = {}
    said: Hashable = _token(value, seen, instructions, keep, 0)
    return said


def _token(value: Any, seen: dict[int, int], instructions: Callable[[Any], Hashable], keep: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise Opaque("too deep")
    kind = type(value)
    if value is None or kind in (bool, int, float, str, bytes):
        return value if kind is not float else ("float", repr(value))
    if isinstance(value, Enum):
        return ("enum", _type(kind), _token(value.value, seen, instructions, keep, depth + 1))
    if isinstance(value, str):  # a str subclass (a marker): its kind is part of it
        return ("str", _type(kind), str(value))
    if kind in (list, tuple):
        return (kind.__name__, *(_token(item, seen, instructions, keep, depth + 1) for item in value))
    if kind in (set, frozenset):
        return ("set", frozenset(_token(item, seen, instructions, keep, depth + 1) for item in value))
    if kind is dict:
        return (
            "dict",
            *(
                (_token(k, seen, instructions, keep, depth + 1), _token(v, seen, instructions, keep, depth + 1))
                for k, v in value.items()
            ),
        )
    if isinstance(value, type):
        return ("type", _type(value))
    if id(value) in seen:  # an object met before in this walk (a shared or a cyclic reference)
        return ("ref", seen[id(value)])
    seen[id(value)] = len(seen)
    if isinstance(value, types.FunctionType):
        return (
            "function",
            value.__module__,
            value.__qualname__,
            value.__name__,
            value.__doc__,
            id(value.__code__),  # a function's code lives as long as its module: the same def, the same code
            _token(value.__defaults__, seen, instructions, keep, depth + 1),
            _token(value.__kwdefaults__, seen, instructions, keep, depth + 1),
            _token(dict(value.__annotations__), seen, instructions, keep, depth + 1),
            _token(tuple(cell.cell_contents for cell in value.__closure__ or ()), seen, instructions, keep, depth + 1),
        )
    fields = getattr(kind, "model_fields", None)
    if isinstance(fields, Mapping):  # a pydantic model (google-adk's agents, models, tools' settings)
        names = [name for name in fields if name not in _SKIPPED]
        if value.__pydantic_extra__:
            raise Opaque("extra fields")
        out: list[Any] = ["model", _type(kind)]
        instructed = bool(_INSTRUCTIONS & set(names))
        for name in names:
            if instructed and name in _INSTRUCTIONS:
                continue
            out.append((name, _token(getattr(value, name), seen, instructions, keep, depth + 1)))
        if instructed:
            said = instructions(value)
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
        return ("object", _type(kind), _token(attributes, seen, instructions, keep, depth + 1))
    raise Opaque(f"a {kind.__name__}")


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
