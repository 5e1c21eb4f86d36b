"""The sessions layer, in one place: state and its value contract, the session services, and contexts.

- `state`: [`State`][templating.State], the value contract (`check_state`), scopes and read-only views.
- `base`: sessions, events and [`SessionService`][templating.SessionService], the rules every service shares.
- `memory`: [`InMemorySessionService`][templating.InMemorySessionService].
- `sql`: [`DatabaseSessionService`][templating.DatabaseSessionService] (SQLite, PostgreSQL; the `sql` extra).
- `contexts`: the agent contexts over a session ([`ReadonlyContext`][templating.ReadonlyContext] and the writable ones).

Data flows one way: the renderer reads a mapping and never imports this package. Every name is
loaded on first use, so importing `templating.sessions.state` alone loads neither pydantic nor
SQLAlchemy. The old module paths `templating.state`, `templating.sql_sessions` and
`templating.contexts` still import (they are these modules under another name).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import (
        AlreadyExistsError,
        Event,
        EventActions,
        GetSessionConfig,
        Session,
        SessionNotFoundError,
        SessionService,
        StaleSessionError,
    )
    from .contexts import CallbackContext, ReadonlyContext, ToolContext, inject_session_state
    from .memory import InMemorySessionService
    from .sql import DatabaseSessionService, SessionStoreError
    from .state import InvalidStateError, State

_LAZY = {
    "AlreadyExistsError": "base",
    "Event": "base",
    "EventActions": "base",
    "GetSessionConfig": "base",
    "Session": "base",
    "SessionNotFoundError": "base",
    "SessionService": "base",
    "StaleSessionError": "base",
    "CallbackContext": "contexts",
    "ReadonlyContext": "contexts",
    "ToolContext": "contexts",
    "inject_session_state": "contexts",
    "InMemorySessionService": "memory",
    "DatabaseSessionService": "sql",
    "SessionStoreError": "sql",
    "InvalidStateError": "state",
    "State": "state",
}

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

if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'templating.sessions' has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", __name__), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
