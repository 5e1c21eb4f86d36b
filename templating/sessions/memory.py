"""The in-memory session service: sessions kept in a dict, guarded by one lock (lost when the process ends)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, ItemsView, Iterator, KeysView, Mapping, ValuesView
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .base import (
    APP,
    SESSION,
    SHARED_PREFIXES,
    USER,
    AlreadyExistsError,
    Scopes,
    SessionNotFoundError,
    SessionService,
    check_fresh,
    clean_id,
    merge_scopes,
    plan_append,
    privates,
    refresh_copy,
    scope_index,
    select_events,
    split_scopes,
    stored_copy,
)
from .models import Event, GetSessionConfig, Session, _new_id, event_from, session_from
from .values import copy_checked, copy_nested

__all__ = ["InMemorySessionService"]


@dataclass
class _Scope:
    """Stored values of one scope, the revision at which each key was last written, and the keys whose
    values are lists or dicts (the only values a copy has to copy: the others are immutable)."""

    values: dict[str, Any] = field(default_factory=dict)
    written: dict[str, int] = field(default_factory=dict)
    revision: int = 0  # the last revision that wrote any key
    nested: dict[str, None] = field(default_factory=dict)  # ordered as written: copies read in that order

    def write(self, values: Mapping[str, Any], revision: int) -> None:
        self.revision = revision  # first: a reader without the lock that sees a new value sees this too
        self.values.update(values)
        self.written.update(dict.fromkeys(values, revision))
        nested = self.nested
        if nested:
            for key in values:
                nested.pop(key, None)
        nested.update(_nested(values))

    def copy(self) -> dict[str, Any]:
        """A deep copy of the values, the caller's own."""
        return copy_nested(dict(self.values), self.nested)


def _nested(values: Mapping[str, Any]) -> dict[str, None]:
    """The keys of `values` that hold a list or a dict, in order."""
    return {key: None for key, value in values.items() if type(value) is dict or type(value) is list}


_EMPTY = _Scope()


def _values(scope: _Scope | None) -> dict[str, Any]:
    return scope.values if scope is not None else {}


def _written(scope: _Scope | None, key: str) -> int:
    """The revision that last wrote `key` in `scope` (0 if none has)."""
    return scope.written.get(key, 0) if scope is not None else 0


def _never() -> bool:
    return False


class _StoredView(dict[str, Any]):
    """The combined state of a stored session read where it is stored, under a dict of its own
    writes (a Runner turn's `state_delta`): a `dict` whose own storage holds only those writes.

    Only for a Runner turn, which reads it through read-only views (contexts, the renderer) and
    never hands it out; reads cost the keys read, and making one costs nothing, whatever the size
    of the state. Writes (`update`, item assignment) go to its own storage."""

    __slots__ = ("_scopes",)

    def __init__(self, scopes: tuple[dict[str, Any], dict[str, Any], dict[str, Any]]) -> None:
        super().__init__()
        self._scopes = scopes

    def _stored(self, key: str) -> dict[str, Any] | None:
        index = scope_index(key) if isinstance(key, str) else None
        return None if index is None else self._scopes[index]

    def __getitem__(self, key: str) -> Any:
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        stored = self._stored(key)
        if stored is None:
            raise KeyError(key)
        return stored[key]

    def get(self, key: str, default: Any = None) -> Any:
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        stored = self._stored(key)
        return default if stored is None else stored.get(key, default)

    def __contains__(self, key: object) -> bool:
        if dict.__contains__(self, key):
            return True
        stored = self._stored(key) if isinstance(key, str) else None
        return stored is not None and key in stored

    def __iter__(self) -> Iterator[str]:
        own = list(dict.__iter__(self))
        keys = set(own)
        for scope in self._scopes:
            own.extend(key for key in list(scope) if key not in keys)
        return iter(own)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def keys(self) -> KeysView[str]:  # type: ignore[override]
        return KeysView(self)

    def values(self) -> ValuesView[Any]:  # type: ignore[override]
        return ValuesView(self)

    def items(self) -> ItemsView[str, Any]:  # type: ignore[override]
        return ItemsView(self)

    def __eq__(self, other: object) -> bool:
        return dict(self.items()) == other

    __hash__ = None

    def __repr__(self) -> str:
        return repr(dict(self.items()))


class _Kept(NamedTuple):
    """A stored event: the fields of the valid `Event` it was made from but `partial` (never, once
    stored) and `actions`, the names of those set when it was made, and its own checked copy of the
    delta. Never handed out: a read gets a new `Event` made from it."""

    id: str
    invocation_id: str
    author: str
    timestamp: float
    content: str | None
    fields_set: tuple[str, ...]
    delta: dict[str, Any]

    def event(self) -> Event:
        """A new `Event` of this one, sharing nothing that can change with it (its fields are immutable)."""
        fields = {
            "id": self.id,
            "invocation_id": self.invocation_id,
            "author": self.author,
            "timestamp": self.timestamp,
            "content": self.content,
            "partial": False,
        }
        return event_from(fields, self.fields_set, copy_checked(self.delta))


def _kept(event: Event) -> _Kept:
    """What the service keeps of an event `prepare_event` made: its immutable fields shared, its delta
    copied (the event itself goes to the caller's copy of the session)."""
    fields = event.__dict__
    values = (
        fields["id"],
        fields["invocation_id"],
        fields["author"],
        fields["timestamp"],
        fields["content"],
        tuple(event.__pydantic_fields_set__),
        copy_checked(fields["actions"].state_delta),
    )
    return tuple.__new__(_Kept, values)  # what _Kept(*values) makes, without its Python-level __new__


@dataclass
class _Record:
    """A stored session: its own (unprefixed) state and its events. `token` is unique to this record,
    so a copy read from another service, or from an earlier session with the same id, is told apart.
    `session` holds who and where and `last_update_time`; its `events` stay empty (they are `events`)."""

    session: Session
    scope: _Scope
    token: str = field(default_factory=_new_id)
    event_ids: set[str] = field(default_factory=set)
    events: list[_Kept] = field(default_factory=list)


class InMemorySessionService(SessionService):
    """Sessions kept in memory (lost when the process ends). Safe to share between threads and tasks.

    One lock guards every read and write; nothing inside it awaits, so the `async` methods can
    be called from any event loop or thread. One revision counter serves every scope.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._revision = 0
        self._sessions: dict[tuple[str, str, str], _Record] = {}
        self._users: dict[tuple[str, str], _Scope] = {}
        self._apps: dict[str, _Scope] = {}

    async def _create(self, app_name: str, user_id: str, session_id: str, scopes: Scopes) -> Session:
        key = (app_name, user_id, session_id)
        with self._lock:
            if key in self._sessions:
                raise AlreadyExistsError(app_name=app_name, user_id=user_id, session_id=session_id)
            self._revision += 1
            own = scopes[SESSION]  # the base's split of a checked copy: ours to keep
            # The session's own keys, written at its creation: left out of `written` (0, never stale), as no copy
            # of this session can be older than it.
            scope = _Scope(own, {}, self._revision if own else 0, _nested(own))
            record = _Record(
                session=session_from(
                    session_id=session_id,
                    app_name=app_name,
                    user_id=user_id,
                    state={},
                    events=[],
                    last_update_time=time.time(),
                ),
                scope=scope,
            )
            self._sessions[key] = record
            self._apply(record, ({}, scopes[USER], scopes[APP]))
            return self._copy(record, events=[])

    async def _turn_session(
        self, *, app_name: str, user_id: str, session_id: str, keys: Collection[str] | None = None
    ) -> tuple[Session | None, Callable[[], bool]]:
        """A session whose state is read where it is stored (`_StoredView`): a turn copies nothing
        of the state, whatever `keys` it reads. Consistency: every write moves its scope's revision before it
        changes a value, so a render that overlapped a write sees a revision past the one it started from."""
        key = (clean_id(app_name, "app_name"), clean_id(user_id, "user_id"), clean_id(session_id, "session_id"))
        with self._lock:  # no write is half done while the revision is read
            record = self._sessions.get(key)
            if record is None:
                return None, _never
            revision = self._revision
            scopes = (self._existing(record, SESSION), self._existing(record, USER), self._existing(record, APP))
            stored = record.session
            session = stored_copy(
                session_id=stored.id,
                app_name=stored.app_name,
                user_id=stored.user_id,
                state=_StoredView((record.scope.values, _values(scopes[USER]), _values(scopes[APP]))),
                events=[],
                last_update_time=stored.last_update_time,
                token=record.token,
                seen=(revision, revision, revision),
            )

        def settled() -> bool:
            return all(
                (scope or self._existing(record, index) or _EMPTY).revision <= revision
                for index, scope in enumerate(scopes)
            )

        return session, settled

    async def _get(self, key: tuple[str, str, str], config: GetSessionConfig | None) -> Session | None:
        with self._lock:
            record = self._sessions.get(key)
            if record is None:
                return None
            return self._copy(record, events=select_events(record.events, config))

    async def _list(self, app_name: str, user_id: str | None) -> list[Session]:
        with self._lock:
            return [
                self._copy(record, events=[])
                for (app, owner, _), record in self._sessions.items()
                if app == app_name and (user_id is None or owner == user_id)
            ]

    async def _delete(self, key: tuple[str, str, str]) -> None:
        with self._lock:
            self._sessions.pop(key, None)

    async def _user_state(self, app_name: str, user_id: str) -> dict[str, Any]:
        with self._lock:
            scope = self._users.get((app_name, user_id))
            return scope.copy() if scope else {}

    async def _append(
        self,
        key: tuple[str, str, str],
        session: Session,
        prepared: list[tuple[Event, dict[str, Any]]],
        events: list[Event],
    ) -> list[Event]:
        with self._lock:
            record = self._sessions.get(key)
            if record is None:
                raise SessionNotFoundError(app_name=key[0], user_id=key[1], session_id=key[2])
            if len(prepared) == 1:  # the usual append: one event
                stored = prepared[0][0]
                if not stored.partial and stored.id not in record.event_ids:
                    behind = self._check_fresh(record, session, stored.actions.state_delta.keys())
                    self._store(record, stored)
                    revision = self._revision
                    reloaded = self._reloaded(record, behind) if behind else {}
                    return refresh_copy(session, prepared, (revision, revision, revision), reloaded)
            store, writes = plan_append(prepared, record.event_ids)
            behind = self._check_fresh(record, session, writes) if any(store) else []
            results: list[Event | None] = []
            appended: list[tuple[Event, dict[str, Any]]] = []
            for (stored, delta), event, new in zip(prepared, events, store, strict=True):
                if new:
                    self._store(record, stored)
                    appended.append((stored, delta))
                    results.append(None)  # the caller's copy of it, below
                elif stored.partial:
                    results.append(event.model_copy(deep=True))
                else:
                    results.append(next(kept for kept in record.events if kept.id == stored.id).event())
            if appended:
                revision = self._revision
                added = iter(
                    refresh_copy(session, appended, (revision, revision, revision), self._reloaded(record, behind))
                )
                results = [next(added) if result is None else result for result in results]
        return [result for result in results if result is not None]

    def _check_fresh(self, record: _Record, session: Session, writes: Collection[str]) -> list[int]:
        """`check_fresh` for an append from `session` writing `writes` (lock held), and the scopes
        another writer changed since the copy was read: only their keys can be stale, and the copy
        takes them whole (`_reloaded`). Usually none is, and the copy was read from this record:
        then nothing more is looked up, whatever the delta."""
        private = privates(session)
        seen = private["_seen"]
        stored = record.session
        user = self._users.get((stored.app_name, stored.user_id))
        app = self._apps.get(stored.app_name)
        if (
            record.scope.revision <= seen[SESSION]
            and (user is None or user.revision <= seen[USER])
            and (app is None or app.revision <= seen[APP])
            and private["_origin"] == record.token
        ):
            return []  # the usual append: nothing written since the copy was read, nothing to look up
        scopes = (record.scope, user, app)
        behind = [index for index in (SESSION, USER, APP) if (scopes[index] or _EMPTY).revision > seen[index]]
        check_fresh(
            session,
            token=record.token,
            session_id=stored.id,
            keys=writes,
            written=lambda name: _written(scopes[scope_index(name) or SESSION], name),
            behind=behind,
        )
        return behind

    def _reloaded(self, record: _Record, behind: list[int]) -> dict[int, dict[str, Any]]:
        """The whole values of the scopes a copy was behind on, as its own (lock held)."""
        return {index: self._scope(record, index).copy() for index in behind}

    def _store(self, record: _Record, stored: Event) -> None:
        """Apply and keep one checked, fresh event (lock held): a copy of it, whose delta the scopes share."""
        self._revision += 1
        kept = _kept(stored)
        delta = kept.delta
        if delta:
            for name in delta:
                if name.startswith(SHARED_PREFIXES):  # a user: or app: key: split by scope
                    self._apply(record, split_scopes(delta))
                    break
            else:  # the session's own keys only (a stored delta has no temp: key)
                record.scope.write(delta, self._revision)
        record.events.append(kept)
        record.event_ids.add(kept.id)
        record.session.__dict__["last_update_time"] = kept.timestamp  # a stored event's: already valid

    def _existing(self, record: _Record, index: int) -> _Scope | None:
        """A scope of `record`, if it exists."""
        session = record.session
        if index == APP:
            return self._apps.get(session.app_name)
        if index == USER:
            return self._users.get((session.app_name, session.user_id))
        return record.scope

    def _scope(self, record: _Record, index: int) -> _Scope:
        session = record.session
        if index == APP:
            return self._apps.setdefault(session.app_name, _Scope())
        if index == USER:
            return self._users.setdefault((session.app_name, session.user_id), _Scope())
        return record.scope

    def _apply(self, record: _Record, scopes: Scopes) -> None:
        """Write stored values to their scopes at the current revision."""
        for index, values in enumerate(scopes):
            if values:
                self._scope(record, index).write(values, self._revision)

    def _merged(self, record: _Record) -> dict[str, Any]:
        """The combined state of a stored session, deep-copied: nothing handed out shares anything with what is
        stored."""
        session = record.session
        app = self._apps.get(session.app_name)
        user = self._users.get((session.app_name, session.user_id))
        merged = merge_scopes((record.scope.values, user.values if user else {}, app.values if app else {}))
        nested = [*record.scope.nested, *(user.nested if user else ()), *(app.nested if app else ())]
        return copy_nested(merged, nested)

    def _copy(self, record: _Record, *, events: list[_Kept]) -> Session:
        stored = record.session
        revision = self._revision
        return stored_copy(
            session_id=stored.id,
            app_name=stored.app_name,
            user_id=stored.user_id,
            state=self._merged(record),
            events=[kept.event() for kept in events],
            last_update_time=stored.last_update_time,
            token=record.token,
            seen=(revision, revision, revision),
        )
