"""Agent contexts over a session: what instruction providers, callbacks and tools are handed.

`ReadonlyContext.state` is a live read-only view of the session's combined state (a `dict`;
nested dicts and lists come as read-only views, made when read, never deep copies).
`CallbackContext` and `ToolContext` make it writable: each write is visible at once and is
recorded in `actions.state_delta`, the delta of the event being produced, so appending that
event persists it. Assign the whole key: mutating a nested value in place is not tracked (see
[`State`][templating.State]). A template renders directly from any of them: `template.render(ctx)`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..renderer import Missing
from ..template import Template, render
from .models import EventActions, Session
from .state import ReadonlyState, State

__all__ = ["CallbackContext", "ReadonlyContext", "ToolContext", "inject_session_state"]


class ReadonlyContext:
    """What an instruction provider sees: a session's ids and a read-only view of its combined state."""

    def __init__(self, session: Session, *, invocation_id: str | None = None, agent_name: str | None = None) -> None:
        if not isinstance(session, Session):
            raise TypeError(f"a context needs a Session, not {type(session).__name__}")
        self._session = session
        self._invocation_id = invocation_id
        self._agent_name = agent_name

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # A subclass that redefines ``state`` is rendered from its own ``state``, never behind its back.
        owners = [next(k for k in cls.__mro__ if name in k.__dict__) for name in ("state", "_state_reader")]
        if owners[0] is not owners[1]:
            cls._state_reader = None  # type: ignore[assignment,method-assign]

    @property
    def state(self) -> Mapping[str, Any]:
        """The session's combined state, read-only (writes raise `TypeError`, nested ones too) and live.

        Making the view costs nothing whatever the size of state; a value is wrapped when it is read.
        """
        return ReadonlyState(self._session.state)

    def _state_reader(self) -> Callable[[str, Any], Any]:
        """For the renderer (see `templating.renderer.state_reader`): the session's state read where it is."""
        get: Callable[[str, Any], Any] = self._session.state.get
        return get

    @property
    def app_name(self) -> str:
        return self._session.app_name

    @property
    def user_id(self) -> str:
        return self._session.user_id

    @property
    def session_id(self) -> str:
        return self._session.id

    @property
    def invocation_id(self) -> str | None:
        return self._invocation_id

    @property
    def agent_name(self) -> str | None:
        return self._agent_name

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(app_name={self.app_name!r}, user_id={self.user_id!r}, "
            f"session_id={self.session_id!r}, invocation_id={self.invocation_id!r}, agent_name={self.agent_name!r})"
        )


class CallbackContext(ReadonlyContext):
    """A context whose `state` is writable: writes show at once and land in `actions.state_delta`.

    Build the event being produced with `actions=ctx.actions` and append it to persist the writes.
    """

    def __init__(
        self,
        session: Session,
        *,
        invocation_id: str | None = None,
        agent_name: str | None = None,
        actions: EventActions | None = None,
    ) -> None:
        super().__init__(session, invocation_id=invocation_id, agent_name=agent_name)
        self._actions = EventActions() if actions is None else actions
        # Read through their owners on each access: assigning a new dict to either keeps writes working.
        self._state = State._bound(lambda: session.state, lambda: self._actions.state_delta)

    @property
    def state(self) -> State:
        """The session's combined state; writes are checked, visible at once, and recorded in `actions`.

        Assign the whole key: mutating a nested value in place is not recorded, so not persisted.
        """
        return self._state

    def _state_reader(self) -> Callable[[str, Any], Any]:
        return self._state._state_reader()  # with nothing written yet, the session's state's own get

    @property
    def actions(self) -> EventActions:
        """The actions of the event being produced; `state_delta` holds every write made through `state`."""
        return self._actions


class ToolContext(CallbackContext):
    """The context a tool function gets: a [`CallbackContext`][templating.CallbackContext] plus the id of the call
    that ran it."""

    def __init__(
        self,
        session: Session,
        *,
        invocation_id: str | None = None,
        agent_name: str | None = None,
        actions: EventActions | None = None,
        function_call_id: str | None = None,
    ) -> None:
        super().__init__(session, invocation_id=invocation_id, agent_name=agent_name, actions=actions)
        self._function_call_id = function_call_id

    @property
    def function_call_id(self) -> str | None:
        return self._function_call_id


async def inject_session_state(template: str | Template, ctx: ReadonlyContext, *, missing: Missing = "error") -> str:
    """Render `template` against the context's state, for use inside an (async) instruction provider.

    Strict by default: a missing required key raises [`MissingKeyError`][templating.MissingKeyError].
    """
    return render(template, ctx, missing=missing)
