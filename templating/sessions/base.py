"""The session services that store sessions and events: the supplier of the state templates render from.

A session holds `state` and `events`; state changes only arrive as an event's `actions.state_delta`
through [`SessionService.append_event`][templating.sessions.base.SessionService.append_event]. `app:` and `user:`
values are stored once, in their scope, and merged into every session returned; `temp:` values
are never stored. Every session a service returns is a copy.

Sessions and events are the pydantic models of `templating.sessions.models`.
[`SessionService`][templating.SessionService] (this module) holds everything the services share: checking
arguments, splitting state into scopes, preparing events, the staleness rule, bringing the caller's copy up to date, and
choosing events with [`GetSessionConfig`][templating.GetSessionConfig]. A service only stores and reads:
[`InMemorySessionService`][templating.InMemorySessionService] (`templating.sessions.memory`), and
`DatabaseSessionService` (`templating.sessions.sql`) in a database.

Stale sessions: every copy remembers which stored session it was read from and, for each scope it
merges (session, `user:`, `app:`), the revision of that scope it reflects (when it was read, or
when it last appended). Appending from a copy fails with [`StaleSessionError`][templating.StaleSessionError], and
changes
nothing, if it was read from another stored session (another store, or a session since deleted and
created again), or if its delta writes a key that another append or session creation wrote after
that revision; a delta that touches none of those keys goes through. See docs/sessions.md.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Container, Mapping, Sequence
from typing import Any, Protocol, TypeAlias, TypeVar

from ..errors import TemplatingError
from ..nodes import APP_PREFIX, TEMP_PREFIX, USER_PREFIX
from .models import (
    MAX_ID_LENGTH,
    Event,
    GetSessionConfig,
    Session,
    _new_id,
    id_problem,
    prepare_event,
    session_from,
    shown_id,
)
from .values import check_state, copy_checked, scope_of

__all__ = [
    "AlreadyExistsError",
    "SessionService",
    "SessionNotFoundError",
    "StaleSessionError",
]


class AlreadyExistsError(TemplatingError):
    """`create_session` with an id that this app and user already have."""

    def __init__(self, *, app_name: str, user_id: str, session_id: str) -> None:
        super().__init__(
            f"session {session_id!r} already exists for user {user_id!r} in app {app_name!r}",
            help="pass another session_id, leave it out for a generated one, or get_session() the existing one",
        )
        self.app_name, self.user_id, self.session_id = app_name, user_id, session_id


class SessionNotFoundError(TemplatingError):
    """`append_event` to a session that the service does not have (never created, or deleted)."""

    def __init__(self, *, app_name: str, user_id: str, session_id: str) -> None:
        super().__init__(
            f"no session {session_id!r} for user {user_id!r} in app {app_name!r}",
            help="create_session() first, or check the app name, user id and session id",
        )
        self.app_name, self.user_id, self.session_id = app_name, user_id, session_id


class StaleSessionError(TemplatingError):
    """An append from a session copy whose delta writes keys another append changed since it was read.

    `keys` are those keys. Nothing was stored: read the session again and rebuild the delta.
    """

    def __init__(self, *, session_id: str, keys: tuple[str, ...], reason: str | None = None) -> None:
        listed = ", ".join(repr(key) for key in keys)
        why = reason or f"{listed} changed after this copy was read"
        super().__init__(
            f"session {session_id!r} is stale: {why}",
            help="get_session() again, compute the delta from the fresh state, and append the event again",
        )
        self.session_id = session_id
        self.keys = keys


# --- the logic every service shares: pure functions over checked values ----------------------

Scopes: TypeAlias = tuple[dict[str, Any], dict[str, Any], dict[str, Any]]
"""Stored state split by scope: (the session's own keys, `user:` keys, `app:` keys)."""

Seen: TypeAlias = tuple[int, int, int]
"""The revision of each scope (session, `user:`, `app:`) that a session copy reflects."""

SESSION, USER, APP = 0, 1, 2  # the index of each stored scope in Scopes and Seen

SHARED_PREFIXES = (USER_PREFIX, APP_PREFIX)
"""The prefixes of the stored keys kept outside their session (`str.startswith` takes the tuple)."""


def scope_index(key: str) -> int | None:
    """Where `key` is stored: `SESSION`, `USER` or `APP`; `None` for `temp:` (never)."""
    if key.startswith(USER_PREFIX):
        return USER
    if key.startswith(APP_PREFIX):
        return APP
    if key.startswith(TEMP_PREFIX):
        return None
    return SESSION


def split_scopes(checked: Mapping[str, Any]) -> Scopes:
    """The stored part of checked state (an initial state, a delta), by scope; `temp:` keys are dropped."""
    return split_state(checked)[0]


def split_state(checked: Mapping[str, Any]) -> tuple[Scopes, dict[str, Any]]:
    """`split_scopes`, and the `temp:` values apart."""
    session = dict(checked)
    prefixed = [key for key in session if ":" in key]  # the scoped keys are among these (an `in` costs less)
    user: dict[str, Any] = {}
    app: dict[str, Any] = {}
    temp: dict[str, Any] = {}
    for key in prefixed:
        if key.startswith(USER_PREFIX):
            user[key] = session.pop(key)
        elif key.startswith(APP_PREFIX):
            app[key] = session.pop(key)
        elif key.startswith(TEMP_PREFIX):
            temp[key] = session.pop(key)
    return (session, user, app), temp


def merge_scopes(scopes: Scopes) -> dict[str, Any]:
    """The combined state a session shows: its own keys, then its user's, then its app's."""
    return {**scopes[SESSION], **scopes[USER], **scopes[APP]}


def clean_id(value: str, what: str) -> str:
    """An id stripped of surrounding whitespace; `TypeError` if it is not a str, `ValueError` if no database
    could index it (a NUL character, a lone surrogate, more than `MAX_ID_LENGTH` characters), so every service
    takes the same ids."""
    if type(value) is str and value.isascii() and "\x00" not in value and len(value) <= MAX_ID_LENGTH:
        return value.strip()  # the usual id: nothing to explain
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    cleaned = value.strip()
    problem = id_problem(cleaned)
    if problem:
        raise ValueError(f"{what} {shown_id(cleaned)} {problem}")
    return cleaned


def required_id(value: str, what: str) -> str:
    """`clean_id`, and `ValueError` if it is blank."""
    cleaned = clean_id(value, what)
    if not cleaned:
        raise ValueError(f"{what} must not be blank")
    return cleaned


def coerce_config(config: GetSessionConfig | Mapping[str, Any] | None) -> GetSessionConfig | None:
    """`get_session`'s config: a [`GetSessionConfig`][templating.GetSessionConfig], or a mapping validated into one."""
    if config is None or isinstance(config, GetSessionConfig):
        return config
    if not isinstance(config, Mapping):
        raise TypeError(f"config must be a GetSessionConfig or a mapping, not {type(config).__name__}")
    return GetSessionConfig.model_validate(config)


class Timed(Protocol):
    """An event as a service keeps it: it has a timestamp."""

    @property
    def timestamp(self) -> float: ...


TimedT = TypeVar("TimedT", bound=Timed)


def select_events(events: Sequence[TimedT], config: GetSessionConfig | None) -> list[TimedT]:
    """The events `config` asks for, in stored order: those at or after `after_timestamp`, then the
    `num_recent_events` most recent of them. A database service asks its query for the same."""
    chosen = list(events)
    if config is not None:
        if config.after_timestamp is not None:
            chosen = [event for event in chosen if event.timestamp >= config.after_timestamp]
        if config.num_recent_events is not None:
            chosen = chosen[len(chosen) - config.num_recent_events :] if config.num_recent_events else []
    return chosen


def plan_append(
    prepared: Sequence[tuple[Event, dict[str, Any]]], known: Container[str]
) -> tuple[list[bool], list[str]]:
    """Which prepared events an append stores (neither partial, nor with an id the session already has
    or an earlier event of the same batch has), and the keys those events write, in order."""
    if len(prepared) == 1:  # the usual append: one event
        stored = prepared[0][0]
        new = not stored.partial and stored.id not in known
        return [new], list(stored.actions.state_delta) if new else []
    store: list[bool] = []
    seen_ids: set[str] = set()
    writes: dict[str, None] = {}
    for stored, _ in prepared:
        new = not stored.partial and stored.id not in known and stored.id not in seen_ids
        if new:
            seen_ids.add(stored.id)
            writes.update(dict.fromkeys(stored.actions.state_delta))
        store.append(new)
    return store, list(writes)


def privates(session: Session) -> dict[str, Any]:
    """The private attributes of a session copy (`_origin`, `_seen`, `_invocation`, `_temp`), as the
    dict pydantic keeps them in: read and written directly, an append's hot path skips pydantic's
    attribute hooks."""
    private = session.__pydantic_private__
    assert private is not None
    return private


def check_fresh(
    session: Session,
    *,
    token: str,
    session_id: str,
    keys: Collection[str],
    written: Callable[[str], int],
    behind: Collection[int] | None = None,
) -> None:
    """The staleness rule: raise [`StaleSessionError`][templating.StaleSessionError] if `session` was not read from
    the stored session `token` names, or if any of `keys` was written (`written(key)`, the revision of
    its scope that last wrote it) after the revision of that scope the copy reflects.

    `behind`, if the service knows it, holds the scopes written at all after the revisions the copy
    reflects: only keys of those scopes can be stale, so only they are looked up (none, the usual
    case: the check costs the same whatever the delta)."""
    private = privates(session)
    if private["_origin"] != token:
        raise StaleSessionError(
            session_id=session_id,
            keys=tuple(keys),
            reason=(
                "this copy was not read from the session as it is now (it comes from another service, "
                "the session was deleted and created again, or the copy was built by hand)"
            ),
        )
    if behind is not None and not behind:
        return
    seen = private["_seen"]
    changed: list[str] = []
    for key in keys:
        index = scope_index(key) or SESSION
        if (behind is None or index in behind) and written(key) > seen[index]:
            changed.append(key)
    if changed:
        raise StaleSessionError(session_id=session_id, keys=tuple(changed))


def refresh_copy(
    session: Session,
    appended: Sequence[tuple[Event, Mapping[str, Any]]],
    seen: Seen,
    reloaded: Mapping[int, dict[str, Any]],
) -> list[Event]:
    """Bring the caller's copy up to date after `appended` (stored events and their whole deltas, in
    order, at least one) were appended through it: the stored values the events wrote, the `temp:`
    values of the last event's invocation, and the events.

    The events are those `prepare_event` made, and become the caller's as they are: a service keeps
    none of them (it keeps a copy, or what it wrote to its database), so the caller's copy shares
    nothing with what is stored.

    `reloaded` holds, for each scope the copy was behind on (another writer wrote it after the
    revision the copy reflects), the whole stored values of that scope, as the copy's own: they
    replace the copy's keys of that scope. Every other scope takes only what the events wrote, so an
    append costs its delta, never the size of the state. Once per append, however many events it
    stores; nothing of the copy changes before everything is computed. Returns the events it added
    to the caller's copy (also what `append_events` returns for them)."""
    private = privates(session)
    temp: set[str] = private["_temp"]
    invocation = private["_invocation"]
    if len(appended) == 1 and not reloaded:  # the usual append: one event, the copy behind on nothing
        stored, delta = appended[0]
        stored_delta = stored.actions.state_delta
        if len(delta) == len(stored_delta) and (not temp or invocation in (None, stored.invocation_id)):
            # ... and no temp: value to add or to expire: the copy takes what the event wrote, and the event.
            if stored_delta:
                session.state.update(copy_checked(stored_delta))  # the copy's own: not what the event holds
            session.events.append(stored)
            session.__dict__["last_update_time"] = stored.timestamp  # a stored event's: already valid
            private["_seen"] = seen
            private["_invocation"] = stored.invocation_id
            return [stored]
    expired: set[str] = set()
    written: dict[str, Any] = {}
    fresh: dict[str, Any] = {}
    for stored, delta in appended:
        if invocation not in (None, stored.invocation_id):  # temp: values live for one invocation
            expired.update(temp)
            expired.update(fresh)
            temp, fresh = set(), {}
        stored_delta = stored.actions.state_delta
        if len(delta) != len(stored_delta):  # only temp: keys are left out of what is stored
            for key, value in delta.items():
                if key.startswith(TEMP_PREFIX):
                    fresh[key] = value
        if not reloaded:
            written.update(stored_delta)
        else:
            for key, value in stored_delta.items():
                if (scope_index(key) or SESSION) not in reloaded:
                    written[key] = value
        invocation = stored.invocation_id
    events = [stored for stored, _ in appended]  # the service's own, never kept by it: the caller's now
    # The copy's own: never what is stored.
    written = copy_checked(written) if written else written
    fresh = copy_checked(fresh) if fresh else fresh
    state = session.state
    if reloaded:
        for key in [key for key in state if (scope_index(key) or SESSION) in reloaded and scope_of(key) != "temp"]:
            del state[key]
        for values in reloaded.values():
            state.update(values)
    for key in expired - fresh.keys():
        state.pop(key, None)
    state.update(written)
    state.update(fresh)
    session.events.extend(events)
    session.__dict__["last_update_time"] = appended[-1][0].timestamp  # a stored event's: already valid
    private["_temp"] = temp | fresh.keys() if fresh else temp
    private["_seen"] = seen
    private["_invocation"] = invocation
    return events


def stored_copy(
    *,
    session_id: str,
    app_name: str,
    user_id: str,
    state: dict[str, Any],
    events: list[Event],
    last_update_time: float,
    token: str,
    seen: Seen,
) -> Session:
    """A session copy as a service hands it out, from values that are already checked and its own."""
    return session_from(
        session_id=session_id,
        app_name=app_name,
        user_id=user_id,
        state=state,
        events=events,
        last_update_time=last_update_time,
        origin=token,
        seen=seen,
    )


# --- the services ---------------------------------------------------------------------------


def _key_of(session: Session) -> tuple[str, str, str]:
    """Where a session is stored: its clean app name, user id and id."""
    return (clean_id(session.app_name, "app_name"), clean_id(session.user_id, "user_id"), clean_id(session.id, "id"))


def _settled() -> bool:
    return True


class SessionService(ABC):
    """What every session service does, and the checks and rules they share; subclasses only store.

    All methods are `async`, and their arguments keyword-only except `append_event(session,
    event)`. [`InMemorySessionService`][templating.InMemorySessionService] and `DatabaseSessionService` behave the
    same (the
    tests run one contract suite against both).
    """

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        """Create a session with an initial `state` (checked before anything is stored).

        A blank or missing `session_id` gets a generated one; ids are stripped of surrounding
        whitespace. `app:` and `user:` keys go to their scope, `temp:` keys only to the
        returned copy (the session as stored, and every later read of it, never has them). Raises
        [`AlreadyExistsError`][templating.AlreadyExistsError] if the id is taken, `TypeError` if `state` is not a
        mapping.
        """
        app_name, user_id = required_id(app_name, "app_name"), required_id(user_id, "user_id")
        checked = check_state({} if state is None else state, what="initial state")
        session_id = clean_id(session_id, "session_id") if session_id is not None else ""
        scopes, temp = split_state(checked)
        copy = await self._create(app_name, user_id, session_id or _new_id(), scopes)
        copy.state.update(temp)
        copy._temp = set(temp)
        return copy

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | Mapping[str, Any] | None = None,
    ) -> Session | None:
        """A copy of the session with its combined state, or `None` if there is no such session.

        `config` is a [`GetSessionConfig`][templating.GetSessionConfig], or a mapping of its fields (validated into
        one).
        """
        key = (clean_id(app_name, "app_name"), clean_id(user_id, "user_id"), clean_id(session_id, "session_id"))
        return await self._get(key, coerce_config(config))

    async def _turn_session(
        self, *, app_name: str, user_id: str, session_id: str, keys: Collection[str] | None = None
    ) -> tuple[Session | None, Callable[[], bool]]:
        """For a [`Runner`][templating.Runner] turn: a session to render the instruction from (read-only)
        and to append the turn's events through, without its events, and a check, made after
        rendering, that what the render read was one consistent state (if not, the Runner renders
        again from a copy). Here: a copy, always consistent. A service may hand out a view of what
        it stores instead, so that a turn costs the same whatever the size of the state.

        `keys`, when given, are all the state keys the instruction reads: a service may then read only
        those (the session's state holds those of them it has), which a database does."""
        session = await self.get_session(
            app_name=app_name, user_id=user_id, session_id=session_id, config=GetSessionConfig(num_recent_events=0)
        )
        return session, _settled

    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> list[Session]:
        """Copies of the app's sessions (of one user, if given), without events, oldest update first."""
        app_name = clean_id(app_name, "app_name")
        user = clean_id(user_id, "user_id") if user_id is not None else None
        found = await self._list(app_name, user)  # in creation order: ties keep it
        return sorted(found, key=lambda session: session.last_update_time)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Forget a session (its `user:` and `app:` state stay). Deleting an unknown session does nothing."""
        key = (clean_id(app_name, "app_name"), clean_id(user_id, "user_id"), clean_id(session_id, "session_id"))
        await self._delete(key)

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        """A copy of the `user:` state of one user of one app (empty if there is none)."""
        return await self._user_state(clean_id(app_name, "app_name"), clean_id(user_id, "user_id"))

    async def append_event(self, session: Session, event: Event) -> Event:
        """Store `event` in `session` and apply its state delta; return the stored event (a copy).

        `temp:` keys are dropped from what is stored, but `session` (the caller's copy) keeps
        them for the rest of the invocation: after the append `session` holds the stored state,
        its `temp:` values and the event. The `temp:` values it carries are dropped when an
        event of another invocation (another `invocation_id`) is appended through it; events
        left with the default blank `invocation_id` all count as one invocation, so give each
        invocation its own id for `temp:` values to expire. The session must exist and the delta
        be valid even for a partial event, which is then not stored (a copy of it is returned); an
        event id the session already has is stored once.
        Raises [`SessionNotFoundError`][templating.SessionNotFoundError],
        [`StaleSessionError`][templating.StaleSessionError], or
        [`InvalidStateError`][templating.InvalidStateError] for a bad delta; on any error nothing changes.
        """
        if not isinstance(session, Session) or not isinstance(event, Event):
            raise TypeError("append_event(session, event) takes a Session and an Event")
        return (await self._append(_key_of(session), session, [prepare_event(event)], [event]))[0]

    async def append_events(self, session: Session, events: Sequence[Event]) -> list[Event]:
        """Append several events at once, all or nothing; return them as stored (copies), in order.

        Every event is checked first, and the freshness of every delta is checked in the same
        critical section (a lock, a database transaction) that stores them, so another writer
        landing in between can never leave half of them stored: either all are appended (as
        `append_event` would, one after the other) or, on any error
        ([`StaleSessionError`][templating.StaleSessionError] included), none is and nothing changes.
        """
        if not isinstance(session, Session) or not all(isinstance(event, Event) for event in events):
            raise TypeError("append_events(session, events) takes a Session and a sequence of Events")
        prepared = [prepare_event(event) for event in events]
        return await self._append(_key_of(session), session, prepared, list(events))

    # What a service implements: ids are clean, state checked and split, events prepared.

    @abstractmethod
    async def _create(self, app_name: str, user_id: str, session_id: str, scopes: Scopes) -> Session:
        """Store a new session (or raise [`AlreadyExistsError`][templating.AlreadyExistsError]); return its copy,
        without events."""

    @abstractmethod
    async def _get(self, key: tuple[str, str, str], config: GetSessionConfig | None) -> Session | None:
        """A copy of a stored session with the events `select_events` would choose."""

    @abstractmethod
    async def _list(self, app_name: str, user_id: str | None) -> list[Session]:
        """Copies of the matching sessions, without events, in the order they were created."""

    @abstractmethod
    async def _delete(self, key: tuple[str, str, str]) -> None:
        """Forget a session and its events, if it exists."""

    @abstractmethod
    async def _user_state(self, app_name: str, user_id: str) -> dict[str, Any]:
        """The stored `user:` state of one user of one app, as a copy."""

    @abstractmethod
    async def _append(
        self,
        key: tuple[str, str, str],
        session: Session,
        prepared: list[tuple[Event, dict[str, Any]]],
        events: list[Event],
    ) -> list[Event]:
        """Append prepared events all or nothing, following `plan_append`, `check_fresh`
        and `refresh_copy`; return copies: the stored event, the one already stored under its id,
        or (partial) a copy of the event given."""
