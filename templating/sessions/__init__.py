"""The sessions layer, in one place: state and its value contract, the session services, and contexts.

- `values`: the value contract (`check_state`, [`InvalidStateError`][templating.InvalidStateError]) and scopes.
- `state`: [`State`][templating.State], the view an agent writes through, and the read-only views.
- `models`: [`Session`][templating.Session], [`Event`][templating.Event] and their config, as pydantic models.
- `base`: [`SessionService`][templating.SessionService], its errors, and the rules every service shares.
- `memory`: [`InMemorySessionService`][templating.InMemorySessionService].
- `sql`: [`DatabaseSessionService`][templating.DatabaseSessionService] (SQLite, PostgreSQL; the `sql` extra).
- `contexts`: the agent contexts over a session ([`ReadonlyContext`][templating.ReadonlyContext] and the writable ones).

Data flows one way: the renderer reads a mapping and never imports this package. Every name is
loaded on first use, so importing `templating.sessions.state` alone loads neither pydantic nor
SQLAlchemy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .base import AlreadyExistsError, SessionNotFoundError, SessionService, StaleSessionError
    from .contexts import CallbackContext, ReadonlyContext, ToolContext, inject_session_state
    from .memory import InMemorySessionService
    from .models import Event, EventActions, GetSessionConfig, Session
    from .sql import DatabaseSessionService, SessionStoreError
    from .state import State
    from .values import InvalidStateError

_MODULES = {  # submodule -> the public names it defines; each is imported when one of its names is first used
    "base": ("AlreadyExistsError", "SessionNotFoundError", "SessionService", "StaleSessionError"),
    "contexts": (
        "CallbackContext",
        "ReadonlyContext",
        "ToolContext",
        "inject_session_state",
    ),
    "memory": ("InMemorySessionService",),
    "models": ("Event", "EventActions", "GetSessionConfig", "Session"),
    "sql": (
        "DatabaseSessionService",
        "SessionStoreError",
    ),
    "state": ("State",),
    "values": ("InvalidStateError",),
}
_LAZY, _load, __dir__ = lazy_names(globals(), _MODULES)

__all__ = [
    "AlreadyExistsError",
    "CallbackContext",
    "DatabaseSessionService",
    "Event",
    "EventActions",
    "GetSessionConfig",
    "InMemorySessionService",
    "InvalidStateError",
    "ReadonlyContext",
    "Session",
    "SessionNotFoundError",
    "SessionService",
    "SessionStoreError",
    "StaleSessionError",
    "State",
    "ToolContext",
    "inject_session_state",
]

if not TYPE_CHECKING:  # type checkers see the imports above, so a misspelt name is still an error
    __getattr__ = _load
