"""Sessions, events, and the session services that store them: the supplier of the state templates render from.

A session holds `state` and `events`; state changes only arrive as an event's `actions.state_delta`
through [`SessionService.append_event`][templating.sessions.base.SessionService.append_event]. `app:` and `user:`
values are stored once, in their scope, and merged into every session returned; `temp:` values
are never stored. Every session a service returns is a copy.

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

import math
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Container, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeAlias, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, StrictFloat, StrictInt, field_validator

from ..errors import TemplatingError
from ..nodes import APP_PREFIX, TEMP_PREFIX, USER_PREFIX
from .state import check_state, copy_checked, scope_of, text_problem

__all__ = [
    "AlreadyExistsError",
    "Event",
    "EventActions",
    "GetSessionConfig",
    "Session",
    "SessionService",
    "SessionNotFoundError",
    "StaleSessionError",
]


def _new_id() -> str:
    """A random (version 4) UUID as 32 hex digits: what `uuid.uuid4().hex` gives, from the same source
    (`os.urandom`), without building a `UUID` (a third of the cost of making an event)."""
    raw = bytearray(os.urandom(16))
    raw[6] = raw[6] & 0x0F | 0x40  # version 4
    raw[8] = raw[8] & 0x3F | 0x80  # the RFC 4122 variant
    return raw.hex()


# Unknown fields are rejected, and assigning to a field validates the value as construction does. Errors
# leave the input out: its repr() can be huge (a value shared many times), and the message names the key.
_CONFIG = ConfigDict(extra="forbid", validate_assignment=True, hide_input_in_errors=True)


def _checked(value: dict[str, Any]) -> dict[str, Any]:
    check_state(value)  # an InvalidStateError is a ValueError, which pydantic reports as a validation error
    return value


class EventActions(BaseModel):
    """What an event does besides saying something: `state_delta`, the state it writes."""

    model_config = _CONFIG

    state_delta: dict[str, Any] = Field(default_factory=dict)

    _check_delta = field_validator("state_delta")(_checked)


class Event(BaseModel):
    """One entry in a session's history. `partial` events (streamed fragments) are never stored."""

    model_config = _CONFIG

    id: str = Field(default_factory=_new_id)
    invocation_id: str = ""
    author: str
    timestamp: float = Field(default_factory=time.time, allow_inf_nan=False)
    content: str | None = None
    partial: bool = False
    actions: EventActions = Field(default_factory=EventActions)

    @field_validator("id")
    @classmethod
    def _id_or_new(cls, value: str) -> str:
        return value.strip() or _new_id()

    @field_validator("id", "invocation_id", "author", "content")
    @classmethod
    def _storable(cls, value: str | None) -> str | None:
        problem = None if value is None else text_problem(value)
        if problem:  # every service stores the same text: a database cannot store this
            raise ValueError(f"the text {problem}")
        return value


class Session(BaseModel):
    """One conversation: who and where (`app_name`, `user_id`, `id`), its `state` and `events`.

    `state` is the combined view (session, `user:` and `app:` keys). Change it through events,
    or through a [`CallbackContext`][templating.CallbackContext], never by writing to this dict: the service
    would not see the change.
    """

    model_config = _CONFIG

    id: str
    app_name: str
    user_id: str
    state: dict[str, Any] = Field(default_factory=dict)
    events: list[Event] = Field(default_factory=list)
    last_update_time: float = Field(default=0.0, allow_inf_nan=False)

    # Which stored session this copy was read from ("" for one not returned by a service), the
    # revision of each scope it reflects (session, user:, app:), and the invocation of the last
    # event appended through it.
    _origin: str = PrivateAttr(default="")
    _seen: tuple[int, int, int] = PrivateAttr(default=(0, 0, 0))
    _invocation: str | None = PrivateAttr(default=None)
    # The temp: keys this copy carries, from its creation or appends through it (expired with their invocation).
    _temp: set[str] = PrivateAttr(default_factory=set)

    _check_state = field_validator("state")(_checked)


class GetSessionConfig(BaseModel):
    """Which events `get_session` returns: the `num_recent_events` most recent (0 means none) of
    those at or after `after_timestamp` (inclusive). `None` means no limit."""

    model_config = _CONFIG

    num_recent_events: StrictInt | None = Field(default=None, ge=0)
    after_timestamp: StrictFloat | None = Field(default=None, allow_inf_nan=False)


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
    scopes: Scopes = ({}, {}, {})
    for key, value in checked.items():
        index = scope_index(key)
        if index is not None:
            scopes[index][key] = value
    return scopes


def merge_scopes(scopes: Scopes) -> dict[str, Any]:
    """The combined state a session shows: its own keys, then its user's, then its app's."""
    return {**scopes[SESSION], **scopes[USER], **scopes[APP]}


def temp_values(state: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in state.items() if scope_of(key) == "temp"}


def clean_id(value: str, what: str) -> str:
    """An id stripped of surrounding whitespace; `TypeError` if it is not a str, `ValueError` if no
    database could store it (a NUL character, a lone surrogate), so every service takes the same ids."""
    if type(value) is str and value.isascii() and "\x00" not in value:  # the usual id: nothing to explain
        return value.strip()
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    if "\x00" in value:
        raise ValueError(f"{what} {value!r} holds a NUL character ('\\x00'), which PostgreSQL cannot store")
    problem = text_problem(value)
    if problem:
        raise ValueError(f"{what} {value!r} {problem}")
    return value.strip()


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


def prepare_event(event: Event) -> tuple[Event, dict[str, Any]]:
    """The event to store (a validated private copy without `temp:` keys) and its whole checked delta.

    Both are private: nothing in them is the caller's. Without `temp:` keys the event's delta is the
    checked delta itself (one dict, read by the append, never changed by it). Once stored, the event
    goes to the caller's copy of the session (`refresh_copy`): a service that keeps events keeps a
    copy of its own."""
    delta = check_state(event.actions.state_delta, what="state delta")
    persisted = delta
    for key in delta:
        if key.startswith(TEMP_PREFIX):
            persisted = {k: v for k, v in delta.items() if not k.startswith(TEMP_PREFIX)}
            break
    actions = _actions(persisted)  # checked above: not again
    if _plainly_valid(event):  # every field already what validation would make it: a shallow copy will do
        return _event_with(event, actions), delta
    # Validated again (fields assigned on a model_construct()ed event are not), into a private copy.
    fields = {name: getattr(event, name) for name in Event.model_fields if name != "actions"}
    return Event.model_validate({**fields, "actions": actions}), delta


_set_attribute = object.__setattr__
_new = object.__new__  # what a pydantic model's __new__ is


def _actions(delta: dict[str, Any]) -> EventActions:
    """`EventActions.model_construct(state_delta=delta)` without its generic work (a delta already checked)."""
    actions = _new(EventActions)
    _set_attribute(actions, "__dict__", {"state_delta": delta})
    _set_attribute(actions, "__pydantic_fields_set__", {"state_delta"})
    _set_attribute(actions, "__pydantic_extra__", None)
    _set_attribute(actions, "__pydantic_private__", None)
    return actions


def _event_with(event: Event, actions: EventActions) -> Event:
    """A shallow copy of a valid `Event` with other `actions`: what `model_copy(update=...)` makes, without
    its generic work. Every other field of an `Event` is immutable (str, float, bool or None), so sharing
    them shares nothing that can change."""
    copy = _new(Event)
    fields = event.__dict__.copy()
    fields["actions"] = actions
    fields_set = set(event.__pydantic_fields_set__)
    fields_set.add("actions")
    _set_attribute(copy, "__dict__", fields)
    _set_attribute(copy, "__pydantic_fields_set__", fields_set)
    _set_attribute(copy, "__pydantic_extra__", None)
    _set_attribute(copy, "__pydantic_private__", None)
    return copy


def _plainly_valid(event: Event) -> bool:
    """Whether every field but `actions` of an `Event` is exactly what validating it would give (a
    model_construct()ed event may hold anything): its values are immutable, so they can be shared."""
    fields = event.__dict__
    event_id, invocation, author, content = fields["id"], fields["invocation_id"], fields["author"], fields["content"]
    timestamp = fields["timestamp"]
    return (
        type(event) is Event
        and type(event_id) is str
        and type(invocation) is str
        and type(author) is str
        and (content is None or type(content) is str)
        and type(fields["partial"]) is bool
        and type(timestamp) is float
        and math.isfinite(timestamp)
        and event_id.strip() == event_id != ""
        and (event_id.isascii() or text_problem(event_id) is None)
        and (invocation.isascii() or text_problem(invocation) is None)
        and (author.isascii() or text_problem(author) is None)
        and (content is None or content.isascii() or text_problem(content) is None)
    )


def event_from(fields: dict[str, Any], fields_set: Iterable[str], delta: dict[str, Any]) -> Event:
    """An `Event` from the fields of a valid one but `actions` (immutable values, in a dict that
    becomes the event's own), the names of the fields set when it was made, and a checked delta of
    its own (taken as it is)."""
    fields["actions"] = _actions(delta)
    event = _new(Event)
    _set_attribute(event, "__dict__", fields)
    _set_attribute(event, "__pydantic_fields_set__", set(fields_set))
    _set_attribute(event, "__pydantic_extra__", None)
    _set_attribute(event, "__pydantic_private__", None)
    return event


def copy_stored(event: Event) -> Event:
    """A copy of a stored event (one `prepare_event` made) that shares nothing mutable with it: its
    fields are immutable but its delta, which is copied. Cheaper than a deep copy of the model."""
    return _event_with(event, _actions(copy_checked(event.actions.state_delta)))


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
    copy = Session.model_construct(  # already checked: skip validating (and copying) it again
        id=session_id,
        app_name=app_name,
        user_id=user_id,
        state=state,
        events=events,
        last_update_time=last_update_time,
    )
    copy._origin = token
    copy._seen = seen
    return copy


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
        copy = await self._create(app_name, user_id, session_id or _new_id(), split_scopes(checked))
        temp = temp_values(checked)
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
        self, *, app_name: str, user_id: str, session_id: str
    ) -> tuple[Session | None, Callable[[], bool]]:
        """For a [`Runner`][templating.Runner] turn: a session to render the instruction from (read-only)
        and to append the turn's events through, without its events, and a check, made after
        rendering, that what the render read was one consistent state (if not, the Runner renders
        again from a copy). Here: a copy, always consistent. A service may hand out a view of what
        it stores instead, so that a turn costs the same whatever the size of the state."""
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
