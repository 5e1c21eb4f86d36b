"""Agent contexts over a session: what instruction providers, callbacks and tools are handed.

``ReadonlyContext.state`` is a live read-only view of the session's combined state (nested dicts
and lists come as read-only copies). ``CallbackContext`` and ``ToolContext`` make it writable:
each write is visible at once and is recorded in ``actions.state_delta``, the delta of the event
being produced, so appending that event persists it. Assign the whole key: mutating a nested
value in place is not tracked (see :class:`~templating.State`). A template renders directly
from any of them: ``template.render(ctx)``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any, NoReturn

from .render import Missing
from .sessions import EventActions, Session
from .state import State
from .template import Template, render

__all__ = ["CallbackContext", "ReadonlyContext", "ToolContext", "inject_session_state"]


_READ_ONLY = (
    "ReadonlyContext.state is read-only, nested values included: write state through a CallbackContext "
    "or ToolContext (assigning the whole key), or in an event's actions.state_delta"
)


def _read_only(*args: object, **kwargs: object) -> NoReturn:
    raise TypeError(_READ_ONLY)


def _frozen(value: Any) -> Any:
    """``value`` as a reader may see it: dicts and lists as read-only copies (all the way down), the rest as is."""
    if isinstance(value, dict):
        return _ReadonlyDict(value)
    if isinstance(value, list):
        return _ReadonlyList(value)
    return value


class _ReadonlyState(Mapping[str, Any]):
    """A live, read-only view of a state mapping: every kind of write raises ``TypeError``, and so does
    every write to a value inside it (nested dicts and lists are handed out as read-only copies)."""

    __slots__ = ("_state",)

    def __init__(self, state: Mapping[str, Any]) -> None:
        self._state = state

    def __getitem__(self, key: str) -> Any:
        return _frozen(self._state[key])

    def __contains__(self, key: object) -> bool:
        return key in self._state

    def __iter__(self) -> Iterator[str]:
        return iter(self._state)

    def __len__(self) -> int:
        return len(self._state)

    def __repr__(self) -> str:
        return f"ReadonlyState({dict(self._state)!r})"

    __setitem__ = __delitem__ = update = setdefault = pop = popitem = clear = _read_only


# Nested values are read-only copies that are still a dict and a list, so templates index them, JSON
# formats them (Jinja2's tojson too), and they compare equal to what they copy. copy.copy() and
# copy.deepcopy() of one give a plain, writable dict or list.


class _ReadonlyDict(dict[str, Any]):
    """A dict from state, handed out read-only: a copy (its values read-only too) whose every write raises."""

    __slots__ = ()

    def __init__(self, items: dict[str, Any]) -> None:
        super().__init__((key, _frozen(item)) for key, item in items.items())

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return {key: copy.deepcopy(item, memo) for key, item in self.items()}

    def __reduce__(self) -> tuple[type[dict[str, Any]], tuple[dict[str, Any]]]:
        return dict, (dict(self),)

    __setitem__ = __delitem__ = __ior__ = update = setdefault = pop = popitem = clear = _read_only


class _ReadonlyList(list[Any]):
    """A list from state, handed out read-only: a copy (its items read-only too) whose every write raises."""

    __slots__ = ()

    def __init__(self, items: list[Any]) -> None:
        super().__init__(_frozen(item) for item in items)

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(item, memo) for item in self]

    def __reduce__(self) -> tuple[type[list[Any]], tuple[list[Any]]]:
        return list, (list(self),)

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only
    append = extend = insert = pop = remove = clear = sort = reverse = _read_only


class ReadonlyContext:
    """What an instruction provider sees: a session's ids and a read-only view of its combined state."""

    def __init__(self, session: Session, *, invocation_id: str | None = None, agent_name: str | None = None) -> None:
        if not isinstance(session, Session):
            raise TypeError(f"a context needs a Session, not {type(session).__name__}")
        self._session = session
        self._invocation_id = invocation_id
        self._agent_name = agent_name

    @property
    def state(self) -> Mapping[str, Any]:
        """The session's combined state, read-only (writes raise ``TypeError``, nested ones too) and live."""
        return _ReadonlyState(self._session.state)

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
    """A context whose ``state`` is writable: writes show at once and land in ``actions.state_delta``.

    Build the event being produced with ``actions=ctx.actions`` and append it to persist the writes.
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
        """The session's combined state; writes are checked, visible at once, and recorded in ``actions``.

        Assign the whole key: mutating a nested value in place is not recorded, so not persisted.
        """
        return self._state

    @property
    def actions(self) -> EventActions:
        """The actions of the event being produced; ``state_delta`` holds every write made through ``state``."""
        return self._actions


class ToolContext(CallbackContext):
    """The context a tool function gets: a :class:`CallbackContext` plus the id of the call that ran it."""

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
    """Render ``template`` against the context's state, for use inside an (async) instruction provider.

    Strict by default: a missing required key raises :class:`~templating.MissingKeyError`.
    """
    return render(template, ctx, missing=missing)
