"""The statements of the database service: each of its storage primitives as the reads and writes of one
transaction, on the tables of `schema`. An append reads and writes the rows of the keys its delta writes,
never the whole state; on PostgreSQL it locks the rows it writes, always app, then user, then session, so
two appends never deadlock."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from ..base import (
    APP,
    SESSION,
    USER,
    AlreadyExistsError,
    Scopes,
    Seen,
    SessionNotFoundError,
    check_fresh,
    merge_scopes,
    plan_append,
    privates,
    refresh_copy,
    scope_index,
    split_scopes,
    stored_copy,
)
from ..models import Event, GetSessionConfig, Session, copy_stored
from .driver import dumps
from .schema import Owner, Tables, owners_of

try:
    import sqlalchemy as sa
    from sqlalchemy.dialects import postgresql as sa_postgresql
    from sqlalchemy.dialects import sqlite as sa_sqlite
    from sqlalchemy.ext.asyncio import AsyncConnection
except ImportError:  # the sql extra is not installed: the service says so when it is made
    pass

__all__ = ["Appended", "Statements"]


@dataclass
class Appended:
    """What an append did in its transaction, for bringing the caller's copy up to date once it is committed
    (`Statements.results`): which prepared events it stored, the events already stored under their ids, and,
    when it stored any, the revisions the copy now reflects and the scopes it was behind on, read again."""

    store: list[bool]
    known: dict[str, Any]
    seen: Seen | None = None
    reloaded: dict[int, dict[str, Any]] = field(default_factory=dict)


class Statements:
    """The reads and writes of the service on `tables`, in the SQL of `backend` ("sqlite" or "postgresql");
    each method runs in the transaction of the connection it is given."""

    def __init__(self, tables: Tables, *, backend: str) -> None:
        self._tables = tables
        self.backend = backend

    async def create(
        self, conn: AsyncConnection, app_name: str, user_id: str, session_id: str, scopes: Scopes
    ) -> Session:
        """Store a new session with its scopes' values (or raise `AlreadyExistsError`); its copy, without events."""
        t = self._tables
        token, now = uuid.uuid4().hex, time.time()
        # app, then user, then session: the order every writer locks them in
        app_revision = await self.scope_row(conn, t.apps, {"app_name": app_name}, bool(scopes[APP]))
        user_revision = await self.scope_row(
            conn, t.users, {"app_name": app_name, "user_id": user_id}, bool(scopes[USER])
        )
        exists = await conn.execute(
            sa.select(t.sessions.c.pk).where(
                t.sessions.c.app_name == app_name,
                t.sessions.c.user_id == user_id,
                t.sessions.c.session_id == session_id,
            )
        )
        if exists.first() is not None:
            raise AlreadyExistsError(app_name=app_name, user_id=user_id, session_id=session_id)
        try:
            result = await conn.execute(
                t.sessions.insert().values(
                    app_name=app_name,
                    user_id=user_id,
                    session_id=session_id,
                    token=token,
                    revision=1,
                    event_count=0,
                    last_update_time=now,
                )
            )
        except sa.exc.IntegrityError:  # created by another writer since the check: nothing else was written
            raise AlreadyExistsError(app_name=app_name, user_id=user_id, session_id=session_id) from None
        inserted = result.inserted_primary_key
        assert inserted is not None
        pk = int(inserted[0])
        owners = owners_of(app_name, user_id, pk)
        for index, revision in ((SESSION, 1), (USER, user_revision), (APP, app_revision)):
            await self.write_values(conn, owners[index], scopes[index], revision)
        user, app = await self.read_values(conn, [owners[USER], owners[APP]])
        return stored_copy(
            session_id=session_id,
            app_name=app_name,
            user_id=user_id,
            state=merge_scopes((scopes[SESSION], user, app)),  # its own: the checked initial state, rows just read
            events=[],
            last_update_time=now,
            token=token,
            seen=(1, user_revision, app_revision),
        )

    async def scope_row(self, conn: AsyncConnection, table: sa.Table, key: dict[str, str], write: bool) -> int:
        """Make sure a user or app row exists; if `write`, lock it and move it to its next revision.
        Return its revision."""
        insert = (sa_postgresql.insert if self.backend == "postgresql" else sa_sqlite.insert)(table)
        await conn.execute(insert.values(**key, revision=0).on_conflict_do_nothing(index_elements=list(key)))
        where = [table.c[name] == value for name, value in key.items()]
        query = sa.select(table.c.revision).where(*where)
        revision = int((await conn.execute(query.with_for_update() if write else query)).scalar_one())
        if write:
            revision += 1
            await conn.execute(table.update().where(*where).values(revision=revision))
        return revision

    def owned_by(self, owner: Owner) -> Any:
        c = self._tables.values.c
        return sa.and_(c.app_name == owner[0], c.user_id == owner[1], c.session_pk == owner[2])

    async def read_values(self, conn: AsyncConnection, owners: list[Owner]) -> list[dict[str, Any]]:
        """The whole state of each owner, in one query (decoded: the caller's own)."""
        c = self._tables.values.c
        query = sa.select(c.app_name, c.user_id, c.session_pk, c.key, c.value).where(
            sa.or_(*(self.owned_by(owner) for owner in owners))
        )
        found: dict[Owner, dict[str, Any]] = {owner: {} for owner in owners}
        for app_name, user_id, session_pk, name, value in await conn.execute(query):
            found[(app_name, user_id, int(session_pk))][name] = json.loads(value)
        return [found[owner] for owner in owners]

    async def write_values(self, conn: AsyncConnection, owner: Owner, values: dict[str, Any], revision: int) -> None:
        """Insert or replace the rows of `values` (keys of one owner), written at `revision`."""
        if not values:
            return
        table = self._tables.values
        insert = (sa_postgresql.insert if self.backend == "postgresql" else sa_sqlite.insert)(table)
        upsert = insert.on_conflict_do_update(
            index_elements=["app_name", "user_id", "session_pk", "key"],
            set_={"value": insert.excluded.value, "written": insert.excluded.written},
        )
        app_name, user_id, session_pk = owner
        rows = [
            {
                "app_name": app_name,
                "user_id": user_id,
                "session_pk": session_pk,
                "key": name,
                "value": dumps(value),
                "written": revision,
            }
            for name, value in values.items()
        ]
        await conn.execute(upsert, rows)

    def joined(self, *columns: Any) -> Any:
        t = self._tables
        return (
            sa.select(*columns)
            .select_from(t.sessions)
            .join(
                t.users, sa.and_(t.users.c.app_name == t.sessions.c.app_name, t.users.c.user_id == t.sessions.c.user_id)
            )
            .join(t.apps, t.apps.c.app_name == t.sessions.c.app_name)
        )

    def read_columns(self) -> list[Any]:
        t = self._tables
        return [
            t.sessions.c.pk,
            t.sessions.c.session_id,
            t.sessions.c.user_id,
            t.sessions.c.token,
            t.sessions.c.revision,
            t.sessions.c.last_update_time,
            t.users.c.revision.label("user_revision"),
            t.apps.c.revision.label("app_revision"),
        ]

    @staticmethod
    def copy(app_name: str, row: Any, scopes: list[dict[str, Any]], events: list[Event]) -> Session:
        return stored_copy(
            session_id=row.session_id,
            app_name=app_name,
            user_id=row.user_id,
            state=merge_scopes((scopes[SESSION], scopes[USER], scopes[APP])),  # freshly decoded: our own
            events=events,
            last_update_time=row.last_update_time,
            token=row.token,
            seen=(int(row.revision), int(row.user_revision), int(row.app_revision)),
        )

    async def get(
        self, conn: AsyncConnection, key: tuple[str, str, str], config: GetSessionConfig | None
    ) -> Session | None:
        """A copy of a stored session with the events `config` chooses, or `None`."""
        t = self._tables
        app_name, user_id, session_id = key
        query = self.joined(*self.read_columns()).where(
            t.sessions.c.app_name == app_name,
            t.sessions.c.user_id == user_id,
            t.sessions.c.session_id == session_id,
        )
        row = (await conn.execute(query)).first()
        if row is None:
            return None
        scopes = await self.read_values(conn, list(owners_of(app_name, user_id, int(row.pk))))
        # The same choice as select_events, made by the query: at or after after_timestamp, then
        # the num_recent_events most recent of those.
        recent = config.num_recent_events if config is not None else None
        after = config.after_timestamp if config is not None else None
        data: list[Any] = []
        if recent != 0:
            events = sa.select(t.events.c.data).where(t.events.c.session_pk == row.pk)
            if after is not None:
                events = events.where(t.events.c.timestamp >= after)
            if recent is None:
                data = list((await conn.execute(events.order_by(t.events.c.seq))).scalars())
            else:
                newest = events.order_by(t.events.c.seq.desc()).limit(recent)
                data = list((await conn.execute(newest)).scalars())[::-1]
        return self.copy(app_name, row, scopes, [Event.model_validate(item) for item in data])

    async def sessions(self, conn: AsyncConnection, app_name: str, user_id: str | None) -> list[Session]:
        """Copies of the app's sessions (of one user), without events, in creation order."""
        t = self._tables
        c = t.values.c
        query = self.joined(*self.read_columns()).where(t.sessions.c.app_name == app_name)
        values = sa.select(c.user_id, c.session_pk, c.key, c.value).where(c.app_name == app_name)
        if user_id is not None:
            query = query.where(t.sessions.c.user_id == user_id)
            values = values.where(c.user_id.in_([user_id, ""]))
        rows = (await conn.execute(query.order_by(t.sessions.c.pk))).all()
        owned: dict[tuple[str, int], dict[str, Any]] = {}
        for owner, session_pk, name, value in await conn.execute(values):
            owned.setdefault((owner, int(session_pk)), {})[name] = value
        sessions = []
        for row in rows:
            texts = [owned.get(owner[1:], {}) for owner in owners_of(app_name, row.user_id, int(row.pk))]
            scopes = [{name: json.loads(text) for name, text in scope.items()} for scope in texts]  # each its own
            sessions.append(self.copy(app_name, row, scopes, []))
        return sessions

    async def delete(self, conn: AsyncConnection, key: tuple[str, str, str]) -> None:
        """Forget a session, its events and its own state values, if it exists."""
        t = self._tables
        where = (t.sessions.c.app_name == key[0], t.sessions.c.user_id == key[1], t.sessions.c.session_id == key[2])
        pk = (await conn.execute(sa.select(t.sessions.c.pk).where(*where).with_for_update())).scalar()
        if pk is not None:
            await conn.execute(t.values.delete().where(self.owned_by((key[0], key[1], int(pk)))))
            await conn.execute(t.events.delete().where(t.events.c.session_pk == pk))
            await conn.execute(t.sessions.delete().where(t.sessions.c.pk == pk))

    async def user_state(self, conn: AsyncConnection, app_name: str, user_id: str) -> dict[str, Any]:
        """The stored `user:` state of one user of one app."""
        return (await self.read_values(conn, [(app_name, user_id, 0)]))[0]

    async def append(
        self,
        conn: AsyncConnection,
        key: tuple[str, str, str],
        session: Session,
        prepared: list[tuple[Event, dict[str, Any]]],
    ) -> Appended:
        """Store the prepared events `plan_append` keeps, after `check_fresh`; the caller's copy is left as it is
        (see `results`, once the transaction is committed)."""
        t = self._tables
        app_name, user_id, session_id = key
        candidates = [stored for stored, _ in prepared if not stored.partial]
        # The scopes the events may write: on PostgreSQL their rows are locked, app before user before
        # session (SQLite's BEGIN IMMEDIATE has already taken the one write lock of the whole database).
        touched: set[int | None] = set()
        if self.backend == "postgresql":
            touched = {scope_index(name) for stored in candidates for name in stored.actions.state_delta}
        ids = {stored.id for stored in candidates}
        if APP in touched:
            await conn.execute(sa.select(t.apps.c.revision).where(t.apps.c.app_name == app_name).with_for_update())
        if USER in touched:
            await conn.execute(
                sa.select(t.users.c.revision)
                .where(t.users.c.app_name == app_name, t.users.c.user_id == user_id)
                .with_for_update()
            )
        columns = [*self.read_columns(), t.sessions.c.event_count]
        if ids:  # whether any of the ids is stored already, in the same statement (one round trip less)
            stored_ids = sa.exists().where(t.events.c.session_pk == t.sessions.c.pk, t.events.c.event_id.in_(ids))
            columns.append(stored_ids.label("has_known"))
        query = self.joined(*columns).where(
            t.sessions.c.app_name == app_name,
            t.sessions.c.user_id == user_id,
            t.sessions.c.session_id == session_id,
        )
        row = (await conn.execute(query.with_for_update(of=t.sessions))).first()
        if row is None:
            raise SessionNotFoundError(app_name=app_name, user_id=user_id, session_id=session_id)
        known: dict[str, Any] = {}
        if ids and row.has_known:
            found = await conn.execute(
                sa.select(t.events.c.event_id, t.events.c.data).where(
                    t.events.c.session_pk == row.pk, t.events.c.event_id.in_(ids)
                )
            )
            known = {event_id: data for event_id, data in found}
        store, writes = plan_append(prepared, known)
        if not any(store):  # partial events and ids already stored: nothing to write
            return Appended(store, known)
        owners = owners_of(app_name, user_id, int(row.pk))
        revisions = [int(row.revision), int(row.user_revision), int(row.app_revision)]
        # The revision that last wrote each key the events write: the rows of those keys only.
        written: dict[str, int] = {}
        if writes:
            c = t.values.c
            by_scope: dict[int, list[str]] = {}
            for name in writes:
                by_scope.setdefault(scope_index(name) or SESSION, []).append(name)
            query = sa.select(c.key, c.written).where(
                sa.or_(*(sa.and_(self.owned_by(owners[index]), c.key.in_(names)) for index, names in by_scope.items()))
            )
            written = {name: int(revision) for name, revision in await conn.execute(query)}
        check_fresh(
            session,
            token=row.token,
            session_id=session_id,
            keys=writes,
            written=lambda name: written.get(name, 0),
        )
        # The scopes another writer changed since the copy was read: the copy takes them whole.
        behind = [index for index in (SESSION, USER, APP) if revisions[index] > privates(session)["_seen"][index]]
        new = [stored for stored, keep in zip((p[0] for p in prepared), store, strict=True) if keep]
        changed = {scope_index(name) or SESSION for stored in new for name in stored.actions.state_delta}
        changed.add(SESSION)  # its events, count and time change on every stored append
        for index in changed:
            revisions[index] += 1
        values: Scopes = ({}, {}, {})
        for stored in new:
            for index, scope in enumerate(split_scopes(stored.actions.state_delta)):
                values[index].update(scope)
        for index in (SESSION, USER, APP):
            await self.write_values(conn, owners[index], values[index], revisions[index])
        count = int(row.event_count)
        await conn.execute(
            t.events.insert(),
            [
                {
                    "session_pk": row.pk,
                    "seq": count + number,
                    "event_id": stored.id,
                    "timestamp": stored.timestamp,
                    "data": stored.model_dump(),
                }
                for number, stored in enumerate(new, start=1)
            ],
        )
        await conn.execute(
            t.sessions.update()
            .where(t.sessions.c.pk == row.pk)
            .values(revision=revisions[SESSION], event_count=count + len(new), last_update_time=new[-1].timestamp)
        )
        if USER in changed:
            await conn.execute(
                t.users.update()
                .where(t.users.c.app_name == app_name, t.users.c.user_id == user_id)
                .values(revision=revisions[USER])
            )
        if APP in changed:
            await conn.execute(t.apps.update().where(t.apps.c.app_name == app_name).values(revision=revisions[APP]))
        reloaded: dict[int, dict[str, Any]] = {}
        if behind:  # rare: the whole of each scope another writer changed, as stored now
            reloaded = dict(zip(behind, await self.read_values(conn, [owners[i] for i in behind]), strict=True))
        seen: Seen = (revisions[SESSION], revisions[USER], revisions[APP])
        return Appended(store, known, seen, reloaded)

    @staticmethod
    def results(
        session: Session, prepared: list[tuple[Event, dict[str, Any]]], events: list[Event], appended: Appended
    ) -> list[Event]:
        """After an append is committed: the caller's copy brought up to date (when it stored anything), and
        what `append_events` returns for each event: the stored event, the one already stored under its id, or
        (partial) a copy of the event given."""
        store, known = appended.store, appended.known
        if appended.seen is None:  # nothing stored: the copy is as it was
            return [
                event.model_copy(deep=True) if stored.partial else Event.model_validate(known[stored.id])
                for (stored, _), event in zip(prepared, events, strict=True)
            ]
        kept = [(stored, delta) for (stored, delta), keep in zip(prepared, store, strict=True) if keep]
        added = iter(refresh_copy(session, kept, appended.seen, appended.reloaded))
        results: list[Event] = []
        by_id: dict[str, Event] = {}
        for (stored, _), event, keep in zip(prepared, events, store, strict=True):
            if keep:
                by_id[stored.id] = stored
                results.append(next(added))
            elif stored.partial:
                results.append(event.model_copy(deep=True))
            elif stored.id in by_id:
                results.append(copy_stored(by_id[stored.id]))
            else:
                results.append(Event.model_validate(known[stored.id]))
        return results
