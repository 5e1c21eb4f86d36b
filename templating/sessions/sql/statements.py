"""The statements of the database service: each of its storage primitives as the reads and writes of one
transaction, on the tables of `schema`. An append reads and writes the rows of the keys its delta writes,
never the whole state; on PostgreSQL it locks the rows it writes, always app, then user, then session, so
two appends never deadlock.

State moves in bulk. A session's state given at create is stored as one document in its row (`initial`);
other values are written as one JSON document per scope that the database splits into rows (`json_each`, with
an upsert), and read back as one JSON document that it joins from them (`group_concat` or `string_agg`), which
one `json.loads` decodes, the session's rows overriding its document. Neither the rows nor their values go
through Python one by one. On PostgreSQL a whole create is one statement (`create_at_once`), and so is a get, a
list and a user's state, which the server runs as a transaction of its own: one round trip.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Collection
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
from .create_sql import create_sql
from .driver import dumps
from .schema import in_document, key_name
from .state_rows import Owner, StateRows

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


class Statements(StateRows):
    """The reads and writes of the service on `tables`, in the SQL of `backend` ("sqlite" or "postgresql");
    each method runs in the transaction of the connection it is given (the state rows' in `StateRows`)."""

    # --- sessions ------------------------------------------------------------------------------

    async def create(
        self, conn: AsyncConnection, app_name: str, user_id: str, session_id: str, scopes: Scopes
    ) -> Session:
        """Store a new session with its scopes' values (or raise `AlreadyExistsError`); its copy, without events.
        (SQLite's: PostgreSQL's is `create_at_once`.)"""
        t = self._tables
        token, now = uuid.uuid4().hex, time.time()
        # app, then user, then session: the order every writer locks them in
        app_pk, app_revision, app_text = await self.scope_row(conn, t.apps, APP, {"app_name": app_name}, scopes)
        user_pk, user_revision, user_text = await self.scope_row(
            conn, t.users, USER, {"app_name": app_name, "user_id": user_id}, scopes
        )
        insert = (sa_postgresql.insert if self.backend == "postgresql" else sa_sqlite.insert)(t.sessions)
        # The session's state as one document (a value, not a row per key), when a JSON path finds its keys.
        initial = dumps(scopes[SESSION]) if in_document(scopes[SESSION]) else None
        made = insert.values(
            user_pk=user_pk,
            session_id=session_id,
            token=token,
            revision=1,
            event_count=0,
            last_update_time=now,
            initial=initial,
        ).on_conflict_do_nothing(index_elements=["user_pk", "session_id"])
        pk = (await conn.execute(made.returning(t.sessions.c.pk))).scalar()
        if pk is None:  # the id is taken: the transaction is rolled back, so nothing else is written either
            raise AlreadyExistsError(app_name=app_name, user_id=user_id, session_id=session_id)
        pk = int(pk)
        if initial is None:
            await self.write_values(conn, [((SESSION, pk), scopes[SESSION], 1)], fresh=True)
        await self.write_values(
            conn, [((USER, user_pk), scopes[USER], user_revision), ((APP, app_pk), scopes[APP], app_revision)]
        )
        return _created(
            (app_name, user_id, session_id), scopes, (user_text, app_text), (user_revision, app_revision), token, now
        )

    async def create_at_once(
        self, conn: AsyncConnection, app_name: str, user_id: str, session_id: str, scopes: Scopes
    ) -> Session:
        """PostgreSQL: `create` as one statement, atomic without a transaction around it (one round trip to the
        server): the app's and user's rows made or moved to their next revision (in that order: the order every
        writer locks them in), the session's row, and every scope's values (`_PART`), whose stored state comes
        back as it was. A taken id fails the whole statement (`AlreadyExistsError`), so nothing is written."""
        token, now = uuid.uuid4().hex, time.time()
        # The session's state as one document (a value, not a row per key), when a JSON path finds its keys and
        # it holds no NUL (which PostgreSQL's JSON operators refuse).
        initial = dumps(scopes[SESSION]) if in_document(scopes[SESSION]) else None
        if initial is not None and "\\u0000" in initial:
            initial = None
        rows: Scopes = ({} if initial is not None else scopes[SESSION], scopes[USER], scopes[APP])
        forms, parameters = self.documents_of([((index, 0), rows[index], 0) for index in (SESSION, USER, APP)])
        present = [index for index in (SESSION, USER, APP) if rows[index]]
        for n in range(len(forms)):
            del parameters[f"owner_{n}"], parameters[f"written_{n}"]  # the statement takes them from its rows
        statement = self._creates.get(key := (tuple(forms), tuple(present)))
        if statement is None:
            statement = self._creates[key] = sa.text(create_sql(tuple(forms), present))
        parameters |= {"app_name": app_name, "user_id": user_id, "session_id": session_id, "token": token, "now": now}
        parameters["initial"] = initial
        row = None
        # None back: another writer made the app's or the user's row since the statement began (rare), and nothing
        # was written; once made, a row stays, so the second or third try reads it.
        for _ in range(3):
            try:
                row = (await conn.execute(statement, parameters)).first()
            except sa.exc.IntegrityError as error:
                if "templating_sessions_key" not in str(error.orig):
                    raise
                raise AlreadyExistsError(app_name=app_name, user_id=user_id, session_id=session_id) from None
            if row is not None:
                break
        if row is None:  # not reached: a row, once made, stays
            raise RuntimeError(f"the rows of app {app_name!r} and user {user_id!r} were not found after 3 tries")
        app_revision, app_text, user_revision, user_text = int(row[0]), row[1], int(row[2]), row[3]
        return _created(
            (app_name, user_id, session_id), scopes, (user_text, app_text), (user_revision, app_revision), token, now
        )

    async def scope_row(
        self, conn: AsyncConnection, table: sa.Table, index: int, key: dict[str, str], scopes: Scopes
    ) -> tuple[int, int, str | None]:
        """The pk and revision of a user's or app's row (`index`: USER or APP), made if missing, and its state as
        stored (a JSON object text, `None` for none), in one statement. If `scopes` write to it, the row is locked
        and moved to its next revision (an upsert); else nothing is locked."""
        insert = (sa_postgresql.insert if self.backend == "postgresql" else sa_sqlite.insert)(table)
        # Correlated by name: in RETURNING, SQLAlchemy would add the row's table to the subquery's FROM.
        c = self._tables.state.alias("scope_state").c
        row_pk: Any = sa.literal_column(f"{table.name}.pk")
        stored = sa.select(self._document(c)).where(c.scope == index, c.owner == row_pk).scalar_subquery()
        returned = (table.c.pk, table.c.revision, stored)
        row: Any
        if scopes[index]:
            upsert = insert.values(**key, revision=1).on_conflict_do_update(
                index_elements=list(key), set_={"revision": table.c.revision + 1}
            )
            row = (await conn.execute(upsert.returning(*returned))).one()
        else:
            query = sa.select(*returned).where(*(table.c[name] == value for name, value in key.items()))
            row = (await conn.execute(query)).first()
            if row is None:  # a new user or app: made now, or by another writer in between
                made = insert.values(**key, revision=0).on_conflict_do_nothing(index_elements=list(key))
                row = (await conn.execute(made.returning(*returned))).first() or (await conn.execute(query)).one()
        return int(row[0]), int(row[1]), row[2]

    def joined(self, *columns: Any) -> Any:
        t = self._tables
        return (
            sa.select(*columns)
            .select_from(t.sessions)
            .join(t.users, t.users.c.pk == t.sessions.c.user_pk)
            .join(t.apps, t.apps.c.app_name == t.users.c.app_name)
        )

    def read_columns(self) -> list[Any]:
        t = self._tables
        return [
            t.sessions.c.pk,
            t.sessions.c.session_id,
            t.users.c.user_id,
            t.sessions.c.token,
            t.sessions.c.revision,
            t.sessions.c.last_update_time,
            t.users.c.revision.label("user_revision"),
            t.apps.c.revision.label("app_revision"),
            t.users.c.pk.label("user_pk"),
            t.apps.c.pk.label("app_pk"),
        ]

    def session_row(self, key: tuple[str, str, str], *columns: Any) -> Any:
        """The query of a session's row, joined with its user's and app's, by its key."""
        t = self._tables
        return self.joined(*self.read_columns(), *columns).where(
            t.users.c.app_name == key[0], t.users.c.user_id == key[1], t.sessions.c.session_id == key[2]
        )

    @staticmethod
    def owners(row: Any) -> tuple[Owner, Owner, Owner]:
        """The owners of a session's scopes, in the order of `Scopes`: the session, its user, its app."""
        return (SESSION, int(row.pk)), (USER, int(row.user_pk)), (APP, int(row.app_pk))

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
        """A copy of a stored session with the events `config` chooses, or `None`. On PostgreSQL one statement
        reads the row, the state and the events (`events_column`): one snapshot without a transaction."""
        t = self._tables
        # The same choice as select_events, made by the query: at or after after_timestamp, then
        # the num_recent_events most recent of those.
        recent = config.num_recent_events if config is not None else None
        after = config.after_timestamp if config is not None else None
        together = self.backend == "postgresql" and recent != 0
        columns = [*self.documents(), self.events_column(recent, after)] if together else self.documents()
        row = (await conn.execute(self.session_row(key, *columns))).first()
        if row is None:
            return None
        scopes = self.decoded(row)
        data: list[Any] = []
        if together:
            data = row.events or []
        elif recent != 0:
            events = sa.select(t.events.c.data).where(t.events.c.session_pk == row.pk)
            if after is not None:
                events = events.where(t.events.c.timestamp >= after)
            if recent is None:
                data = list((await conn.execute(events.order_by(t.events.c.seq))).scalars())
            else:
                newest = events.order_by(t.events.c.seq.desc()).limit(recent)
                data = list((await conn.execute(newest)).scalars())[::-1]
        return self.copy(key[0], row, scopes, [Event.model_validate(item) for item in data])

    def events_column(self, recent: int | None, after: float | None) -> Any:
        """PostgreSQL: a column for the query of a session's row (`session_row`): the events `get` chooses (at or
        after `after`, then the `recent` most recent of those), in append order, as one JSON array (NULL for
        none)."""
        e = self._tables.events
        chosen = sa.select(e.c.data, e.c.seq).where(e.c.session_pk == self._tables.sessions.c.pk)
        if after is not None:
            chosen = chosen.where(e.c.timestamp >= after)
        if recent is not None:
            chosen = chosen.order_by(e.c.seq.desc()).limit(recent)
        events = chosen.correlate(self._tables.sessions).subquery("chosen_events")
        array = sa.func.json_agg(sa_postgresql.aggregate_order_by(events.c.data, events.c.seq), type_=sa.JSON)
        return sa.select(array).select_from(events).scalar_subquery().label("events")

    async def turn(self, conn: AsyncConnection, key: tuple[str, str, str], keys: Collection[str]) -> Session | None:
        """A copy of a stored session holding only those of `keys` that it has (no events), or `None`: what a
        Runner turn reads when it knows the keys its instruction reads."""
        names: tuple[dict[str, str], dict[str, str], dict[str, str]] = ({}, {}, {})
        for wanted in keys:
            index = scope_index(wanted)
            if index is not None:  # temp: keys are never stored
                names[index][key_name(wanted)[0]] = wanted
        row = (await conn.execute(self.session_row(key, *self.documents(names)))).first()
        if row is None:
            return None
        return self.copy(key[0], row, self.decoded(row), [])

    async def sessions(self, conn: AsyncConnection, app_name: str, user_id: str | None) -> list[Session]:
        """Copies of the app's sessions (of one user), without events, in creation order: one statement (one
        snapshot without a transaction), each scope's rows joined into a document once (`scope_documents`)."""
        t = self._tables
        c = t.state.c
        users = sa.select(t.users.c.pk).where(t.users.c.app_name == app_name)
        if user_id is not None:
            users = users.where(t.users.c.user_id == user_id)
        sessions_of = sa.select(t.sessions.c.pk).where(t.sessions.c.user_pk.in_(users.scalar_subquery()))
        app = sa.select(t.apps.c.pk).where(t.apps.c.app_name == app_name)
        documents = (
            sa.select(c.scope, c.owner, self._document().label("document"))
            .where(
                sa.or_(
                    sa.and_(c.scope == SESSION, c.owner.in_(sessions_of.scalar_subquery())),
                    sa.and_(c.scope == USER, c.owner.in_(users.scalar_subquery())),
                    sa.and_(c.scope == APP, c.owner.in_(app.scalar_subquery())),
                )
            )
            .group_by(c.scope, c.owner)
            .cte("scope_documents")
        )
        joined: Any = t.sessions.join(t.users, t.users.c.pk == t.sessions.c.user_pk).join(
            t.apps, t.apps.c.app_name == t.users.c.app_name
        )
        columns: list[Any] = [*self.read_columns(), self.initial_of(None).label("initial")]
        for index, owner in ((SESSION, t.sessions.c.pk), (USER, t.users.c.pk), (APP, t.apps.c.pk)):
            document = documents.alias(f"documents_{index}")
            joined = joined.outerjoin(document, sa.and_(document.c.scope == index, document.c.owner == owner))
            columns.append(document.c.document.label(f"state_{index}"))
        query = sa.select(*columns).select_from(joined).where(t.users.c.app_name == app_name)
        if user_id is not None:
            query = query.where(t.users.c.user_id == user_id)
        rows = (await conn.execute(query.order_by(t.sessions.c.pk))).all()
        # each decoded for its own session: copies never share a value
        return [self.copy(app_name, row, self.decoded(row), []) for row in rows]

    async def delete(self, conn: AsyncConnection, key: tuple[str, str, str]) -> None:
        """Forget a session, its events and its own state values, if it exists."""
        t = self._tables
        query = (
            sa.select(t.sessions.c.pk)
            .select_from(t.sessions)
            .join(t.users, t.users.c.pk == t.sessions.c.user_pk)
            .where(t.users.c.app_name == key[0], t.users.c.user_id == key[1], t.sessions.c.session_id == key[2])
        )
        pk = (await conn.execute(query.with_for_update(of=t.sessions))).scalar()
        if pk is not None:
            c = t.state.c
            await conn.execute(t.state.delete().where(c.scope == SESSION, c.owner == pk))
            await conn.execute(t.events.delete().where(t.events.c.session_pk == pk))
            await conn.execute(t.sessions.delete().where(t.sessions.c.pk == pk))

    async def user_state(self, conn: AsyncConnection, app_name: str, user_id: str) -> dict[str, Any]:
        """The stored `user:` state of one user of one app, in one statement."""
        t = self._tables
        c = t.state.c
        user = sa.select(t.users.c.pk).where(t.users.c.app_name == app_name, t.users.c.user_id == user_id)
        query = sa.select(self._document()).where(c.scope == USER, c.owner == user.scalar_subquery())
        text = (await conn.execute(query)).scalar()
        return json.loads(text) if text is not None else {}

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
        columns: list[Any] = [t.sessions.c.event_count]
        if ids:  # whether any of the ids is stored already, in the same statement (one round trip less)
            stored_ids = sa.exists().where(t.events.c.session_pk == t.sessions.c.pk, t.events.c.event_id.in_(ids))
            columns.append(stored_ids.label("has_known"))
        row = (await conn.execute(self.session_row(key, *columns).with_for_update(of=t.sessions))).first()
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
        owners = self.owners(row)
        revisions = [int(row.revision), int(row.user_revision), int(row.app_revision)]
        # The revision that last wrote each key the events write: the rows of those keys only.
        written: dict[str, int] = {}
        if writes:
            c = t.state.c
            names: tuple[dict[str, str], dict[str, str], dict[str, str]] = ({}, {}, {})
            for wanted in writes:
                names[scope_index(wanted) or SESSION][key_name(wanted)[0]] = wanted
            query = sa.select(c.scope, c.name, c.written).where(
                self._rows_of((owners[index], names[index]) for index in (SESSION, USER, APP) if names[index])
            )
            written = {names[int(scope)][name]: int(revision) for scope, name, revision in await conn.execute(query)}
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
        await self.write_values(conn, [(owners[index], values[index], revisions[index]) for index in range(3)])
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
            await conn.execute(t.users.update().where(t.users.c.pk == row.user_pk).values(revision=revisions[USER]))
        if APP in changed:
            await conn.execute(t.apps.update().where(t.apps.c.pk == row.app_pk).values(revision=revisions[APP]))
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


def _created(
    key: tuple[str, str, str],
    scopes: Scopes,
    stored: tuple[str | None, str | None],
    revisions: tuple[int, int],
    token: str,
    now: float,
) -> Session:
    """The copy of a session just created, without events: its own checked state, and the user's and app's
    state as it is now (as stored, read with their rows, and what was written)."""
    app_name, user_id, session_id = key
    user = (json.loads(stored[0]) if stored[0] is not None else {}) | scopes[USER]
    app = (json.loads(stored[1]) if stored[1] is not None else {}) | scopes[APP]
    return stored_copy(
        session_id=session_id,
        app_name=app_name,
        user_id=user_id,
        state=merge_scopes((scopes[SESSION], user, app)),
        events=[],
        last_update_time=now,
        token=token,
        seen=(1, *revisions),
    )
