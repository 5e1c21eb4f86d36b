"""Sessions in a database: SQLite embedded (one file, no server) or PostgreSQL (many workers, many machines).

[`DatabaseSessionService`][templating.DatabaseSessionService] stores what
[`InMemorySessionService`][templating.InMemorySessionService] keeps in
memory, with the same interface, semantics and errors: both are a
[`SessionService`][templating.SessionService], which does every check and applies every rule; this module
only reads and writes rows, on SQLAlchemy 2's asyncio API (`agent-prompt-templating[sql]`).

Tables (all prefixed `templating_`): one row per app and per app and user (the revision of their
`app:` and `user:` state), per session, per stored event, and one row per state key of each scope
(its JSON text and the scope revision that last wrote it), plus a schema-version row. So an append
reads and writes the rows of the keys its delta writes, never the whole state; times are epoch
seconds in a double column, so both are the same on SQLite and PostgreSQL.

Concurrency is optimistic and enforced by the database: an append reads and locks the rows it
writes (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: `SELECT ... FOR UPDATE`, always app, then user,
then session, so two appends never deadlock), applies the staleness rule to what it read, and
writes every row and event in that one transaction. So an append is all or nothing, across
threads, processes and machines.

The engine lives on a private event loop in a daemon thread: the `async` methods can be awaited
from any event loop or thread, as the in-memory service's can, and one connection pool serves them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import threading
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from ..errors import TemplatingError
from .base import (
    APP,
    SESSION,
    USER,
    AlreadyExistsError,
    Scopes,
    Seen,
    SessionNotFoundError,
    SessionService,
    check_fresh,
    merge_scopes,
    plan_append,
    privates,
    refresh_copy,
    scope_index,
    split_scopes,
    stored_copy,
)
from .models import Event, GetSessionConfig, Session, copy_stored

try:
    import sqlalchemy as sa
    from sqlalchemy import event as sa_event
    from sqlalchemy.dialects import postgresql as sa_postgresql
    from sqlalchemy.dialects import sqlite as sa_sqlite
    from sqlalchemy.engine import URL, make_url
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
    from sqlalchemy.pool import StaticPool
except ImportError as error:  # the sql extra is not installed: say so when the service is made
    _MISSING: ImportError | None = error
else:
    _MISSING = None

__all__ = ["DEFAULT_STATEMENT_TIMEOUT", "SCHEMA_VERSION", "DatabaseSessionService", "SessionStoreError"]

SCHEMA_VERSION = 2
"""The layout of the tables this module writes. A database holding another version is refused.

Version 2: state is one row per key (`templating_state_values`); version 1 kept each scope's
state as one JSON document, which every append decoded and wrote again whole."""

DEFAULT_STATEMENT_TIMEOUT = 30.0
"""How long (seconds) one statement may wait or run before the service gives up with
[`SessionStoreError`][templating.SessionStoreError]: a frozen or locked database fails in bounded time."""

_INSTALL = "install the sql extra: pip install 'agent-prompt-templating[sql]' (SQLAlchemy 2 with aiosqlite and asyncpg)"
_DRIVERS = {"sqlite+aiosqlite": "sqlite", "postgresql+asyncpg": "postgresql"}
_URL_HELP = (
    "use sqlite+aiosqlite:///path/to/sessions.db (embedded; sqlite+aiosqlite:// for memory) or "
    "postgresql+asyncpg://user:password@host:5432/database"
)

T = TypeVar("T")


class SessionStoreError(TemplatingError):
    """The session database cannot be used: an unsupported URL, a server that cannot be reached, a
    failed transaction, or tables of another schema version. Nothing was changed. `url` is the URL
    with its password masked."""

    def __init__(self, message: str, *, url: str, help: str) -> None:
        super().__init__(message, help=help)
        self.url = url

    def __reduce__(self) -> tuple[Any, ...]:
        return (_store_error, (self.message, self.url, self.help))


def _store_error(message: str, url: str, help: str) -> SessionStoreError:
    return SessionStoreError(message, url=url, help=help)


def _dumps(value: Any) -> str:
    # Values are checked plain JSON already; allow_nan=False is a last guard against writing NaN.
    return json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class _Tables:
    metadata: sa.MetaData
    schema: sa.Table
    apps: sa.Table
    users: sa.Table
    sessions: sa.Table
    events: sa.Table
    values: sa.Table


def _tables() -> _Tables:
    """The schema, version `SCHEMA_VERSION`."""
    metadata = sa.MetaData()
    big = sa.BigInteger().with_variant(sa.Integer(), "sqlite")  # SQLite numbers its rowid only for INTEGER
    schema = sa.Table(
        "templating_schema",
        metadata,
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("version", sa.Integer, nullable=False),
    )
    apps = sa.Table(
        "templating_app_states",
        metadata,
        sa.Column("app_name", sa.Text, primary_key=True),
        sa.Column("revision", sa.BigInteger, nullable=False),
    )
    users = sa.Table(
        "templating_user_states",
        metadata,
        sa.Column("app_name", sa.Text, primary_key=True),
        sa.Column("user_id", sa.Text, primary_key=True),
        sa.Column("revision", sa.BigInteger, nullable=False),
    )
    sessions = sa.Table(
        "templating_sessions",
        metadata,
        sa.Column("pk", big, primary_key=True, autoincrement=True),  # creation order
        sa.Column("app_name", sa.Text, nullable=False),
        sa.Column("user_id", sa.Text, nullable=False),
        sa.Column("session_id", sa.Text, nullable=False),
        sa.Column("token", sa.Text, nullable=False),  # new for every session created: tells copies apart
        sa.Column("revision", sa.BigInteger, nullable=False),
        sa.Column("event_count", sa.BigInteger, nullable=False),
        sa.Column("last_update_time", sa.Double, nullable=False),
        sa.UniqueConstraint("app_name", "user_id", "session_id", name="templating_sessions_key"),
    )
    events = sa.Table(
        "templating_events",
        metadata,
        sa.Column("session_pk", sa.BigInteger, primary_key=True),
        sa.Column("seq", sa.BigInteger, primary_key=True),  # append order within the session
        sa.Column("event_id", sa.Text, nullable=False),
        sa.Column("timestamp", sa.Double, nullable=False),
        sa.Column("data", sa.JSON, nullable=False),  # the whole event, as Event.model_dump()
        sa.UniqueConstraint("session_pk", "event_id", name="templating_events_id"),
    )
    # One row per key of each scope, owned by (app_name, user_id, session_pk): a session's own keys by
    # its row's pk, a user's by (app, user, 0), an app's by (app, "", 0) (user ids are never blank).
    values = sa.Table(
        "templating_state_values",
        metadata,
        sa.Column("app_name", sa.Text, primary_key=True),
        sa.Column("user_id", sa.Text, primary_key=True),
        sa.Column("session_pk", sa.BigInteger, primary_key=True),
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("value", sa.Text, nullable=False),  # JSON text
        sa.Column("written", sa.BigInteger, nullable=False),  # the scope revision that last wrote it
    )
    return _Tables(metadata, schema, apps, users, sessions, events, values)


Owner = tuple[str, str, int]
"""Who owns a row of state values: (app_name, user_id, session_pk), see `_tables`."""


def _owners(app_name: str, user_id: str, session_pk: int) -> tuple[Owner, Owner, Owner]:
    """The owners of a session's scopes, in the order of `Scopes`: the session, its user, its app."""
    return (app_name, user_id, session_pk), (app_name, user_id, 0), (app_name, "", 0)


def _masked(url: str) -> str:
    """The URL as it may be shown: its password replaced by `***`."""
    if _MISSING is None:
        try:
            return make_url(url).render_as_string(hide_password=True)
        except Exception:  # not a URL SQLAlchemy can read: show its scheme only
            pass
    scheme, sep, _ = url.partition("://")
    return f"{scheme}://***" if sep else "***"


def _reason(error: BaseException) -> str:
    """What the driver said, in one line, without SQLAlchemy's statement dump."""
    orig = getattr(error, "orig", None)
    text = str(orig if orig is not None else error).strip() or type(error).__name__
    return text.splitlines()[0]


class _LoopThread:
    """A private event loop running in a daemon thread; coroutines are handed to it from any loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="templating-sql", daemon=True)
        self.thread.start()

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self.loop))


def _shut_down(runner: _LoopThread, engine: AsyncEngine) -> None:
    """Dispose of the pool on its own loop, then stop the loop (at close(), garbage collection or exit)."""
    loop = runner.loop
    if loop.is_closed():
        return
    if threading.current_thread() is runner.thread:  # cannot wait for our own loop: just stop it
        loop.stop()
        return
    if loop.is_running():
        with contextlib.suppress(Exception):  # shutting down: a pool that cannot close cleanly is dropped
            asyncio.run_coroutine_threadsafe(engine.dispose(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        runner.thread.join(timeout=10)
    if not loop.is_running():
        loop.close()


class DatabaseSessionService(SessionService):
    """Sessions in SQLite or PostgreSQL, through SQLAlchemy 2's asyncio API (needs `agent-prompt-templating[sql]`).

    `url` is `sqlite+aiosqlite:///path/to/sessions.db` (a file, created if missing; its folder
    must exist; four slashes for an absolute path; `sqlite+aiosqlite://` for a private in-memory
    database) or `postgresql+asyncpg://user:password@host:port/database`. Tables are created on
    first use; a database whose tables have another schema version, or `templating_*` tables
    without one, is refused with [`SessionStoreError`][templating.SessionStoreError], as is an unsupported URL, a URL
    option
    or port the driver refuses, or a database that cannot be reached (the URL is named, its password
    masked), and nothing is changed. `timeout` (seconds) bounds connecting, and for SQLite how
    long to wait for another process's write. `statement_timeout` (seconds, default
    `DEFAULT_STATEMENT_TIMEOUT`, 30) bounds each PostgreSQL statement (the server cancels it, the
    driver stops waiting for it) and a whole call at `timeout + statement_timeout`, so a frozen or
    locked server gives [`SessionStoreError`][templating.SessionStoreError] in bounded time.
    Call `await service.close()` (or use `async with`) to release the connections; a service
    left open is closed at exit.
    """

    def __init__(
        self, url: str, *, timeout: float = 10.0, statement_timeout: float = DEFAULT_STATEMENT_TIMEOUT
    ) -> None:
        if not isinstance(url, str):
            raise TypeError(f"url must be a str, not {type(url).__name__}")
        for name, value in (("timeout", timeout), ("statement_timeout", statement_timeout)):
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ValueError(f"{name} must be a positive number of seconds, not {value!r}")
        self.url = _masked(url)
        if _MISSING is not None:
            raise ImportError(f"DatabaseSessionService needs SQLAlchemy: {_INSTALL}") from _MISSING
        try:
            parsed: URL = make_url(url)
        except Exception as error:  # SQLAlchemy raises ArgumentError, ValueError, ...
            raise SessionStoreError(
                f"{self.url!r} is not a database URL: {_reason(error)}", url=self.url, help=_URL_HELP
            ) from None
        self.backend = _DRIVERS.get(parsed.drivername, "")
        if not self.backend:
            raise SessionStoreError(
                f"unsupported database URL {self.url!r}: DatabaseSessionService speaks "
                f"{' and '.join(sorted(_DRIVERS))}, not {parsed.drivername}",
                url=self.url,
                help=_URL_HELP,
            )
        self._memory = self.backend == "sqlite" and parsed.database in (None, "", ":memory:")
        self._file = (
            Path(parsed.database) if self.backend == "sqlite" and not self._memory and parsed.database else None
        )
        self._timeout = timeout
        self._statement_timeout = float(statement_timeout)
        options: dict[str, Any] = {"json_serializer": _dumps, "json_deserializer": json.loads}
        if self.backend == "sqlite":
            options["connect_args"] = {"timeout": float(timeout)}  # how long to wait for the write lock
            if self._memory:
                options["poolclass"] = StaticPool  # one connection: it is the database
        else:
            milliseconds = str(max(1, round(statement_timeout * 1000)))
            options["connect_args"] = {
                "timeout": float(timeout),
                "command_timeout": float(statement_timeout),  # the driver gives up waiting for an answer
                "server_settings": {"statement_timeout": milliseconds},  # the server cancels the statement
            }
            options["pool_pre_ping"] = True
        try:
            self._engine = create_async_engine(parsed, **options)
        except ImportError as error:
            raise ImportError(f"DatabaseSessionService needs the driver for {self.url!r}: {_INSTALL}") from error
        if self.backend == "sqlite":
            sa_event.listen(self._engine.sync_engine, "connect", partial(_sqlite_connect, memory=self._memory))
            sa_event.listen(self._engine.sync_engine, "begin", _sqlite_begin)
        self._tables = _tables()
        self._runner = _LoopThread()
        self._finalizer = weakref.finalize(self, _shut_down, self._runner, self._engine)
        self._opened = False
        self._open_lock: asyncio.Lock | None = None  # made on the service loop
        self._write_lock: asyncio.Lock | None = None

    def __repr__(self) -> str:
        return f"DatabaseSessionService({self.url!r})"

    async def close(self) -> None:
        """Release the connections and stop the service's loop. Calls after this fail; closing twice is fine."""
        await asyncio.to_thread(self._finalizer)

    async def __aenter__(self) -> DatabaseSessionService:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    # --- running on the service loop -------------------------------------------------------

    async def _call(self, work: Callable[[], Awaitable[T]]) -> T:
        if not self._finalizer.alive:
            raise SessionStoreError(
                f"this DatabaseSessionService ({self.url!r}) is closed", url=self.url, help="make a new one"
            )
        return await self._runner.run(self._bounded(work) if self.backend == "postgresql" else self._guarded(work))

    async def _bounded(self, work: Callable[[], Awaitable[T]]) -> T:
        """`_guarded(work)`, given up after `timeout + statement_timeout` seconds: a frozen server never
        answers, nor lets a cancelled statement's connection be cleaned up, so the call stops waiting
        for it (the clean-up goes on in the background) and raises `SessionStoreError`."""
        task = asyncio.ensure_future(self._guarded(work))
        done, _ = await asyncio.wait({task}, timeout=self._timeout + self._statement_timeout)
        if task in done:
            return task.result()
        task.cancel()
        task.add_done_callback(_retrieved)
        raise SessionStoreError(
            f"the session database {self.url!r} did not answer within "
            f"timeout={self._timeout} + statement_timeout={self._statement_timeout} seconds",
            url=self.url,
            help=(
                "check that the server is running and that no other connection holds a lock on the templating_* "
                "tables; an append that timed out may or may not be stored: read the session again (appending the "
                "same event again stores it once)"
            ),
        )

    async def _guarded(self, work: Callable[[], Awaitable[T]]) -> T:
        try:
            if not self._opened:
                await self._open()
            return await work()
        except TemplatingError:
            raise
        except (sa.exc.SQLAlchemyError, OSError, TimeoutError) as error:
            # from None: the driver's and SQLAlchemy's traceback stays reachable as __context__, unprinted.
            raise self._failure(error) from None

    def _failure(self, error: BaseException) -> SessionStoreError:
        """The error for a failed connection or transaction, with the help that fits its cause."""
        reason = _reason(error)
        if isinstance(error, TimeoutError) and reason == "TimeoutError":
            limit = f"statement_timeout={self._statement_timeout}" if self._opened else f"timeout={self._timeout}"
            reason = f"no answer within {limit} seconds"
        help = (
            "check that the database is reachable and the URL (user, password, host, port, database) is right; "
            "nothing was changed"
        )
        if self._file is not None and not self._file.parent.is_dir():
            reason = f"{reason} (its folder {str(self._file.parent)!r} does not exist)"
            help = (
                f"make the folder {str(self._file.parent)!r} first: the folder must exist; the file is created, "
                "not its folder; nothing was changed"
            )
        elif self.backend == "sqlite" and "database is locked" in reason:
            help = (
                f"another process held the write lock longer than timeout={self._timeout} seconds; raise timeout "
                "(DatabaseSessionService(url, timeout=...)) or make that process's writes shorter; nothing was changed"
            )
        return SessionStoreError(f"the session database {self.url!r} failed: {reason}", url=self.url, help=help)

    def _bad_connect(self, error: Exception) -> SessionStoreError:
        """A URL option or port that the driver refuses when connecting (TypeError, ValueError, OverflowError)."""
        reason = _reason(error)
        help = "check the URL's port (0-65535) and its ?options, which are passed to the driver; nothing was changed"
        unexpected = re.search(r"unexpected keyword argument '(\w+)'", reason)
        if unexpected:
            reason = f"the driver takes no URL option {unexpected.group(1)!r}"
            help = "remove that option from the URL; nothing was changed"
            if unexpected.group(1) == "sslmode":
                help = "asyncpg spells it ssl=: use ?ssl=require (or another mode); nothing was changed"
        return SessionStoreError(
            f"cannot connect to the session database {self.url!r}: {reason}", url=self.url, help=help
        )

    async def _open(self) -> None:
        """Create the tables if there are none, and check the schema version (once per service)."""
        if self._open_lock is None:
            self._open_lock = asyncio.Lock()
            self._write_lock = asyncio.Lock()
        async with self._open_lock:
            if self._opened:
                return
            t = self._tables
            async with self._transaction(write=True) as conn:
                if self.backend == "postgresql":  # DDL is transactional: one creator at a time
                    await conn.execute(sa.text("SELECT pg_advisory_xact_lock(7240118)"))
                existing = set(await conn.run_sync(lambda sync: sa.inspect(sync).get_table_names()))
                version = None
                if t.schema.name in existing:
                    version = (
                        await conn.execute(sa.select(t.schema.c.version).where(t.schema.c.name == "sessions"))
                    ).scalar()
                foreign = sorted(existing & {table.name for table in (t.apps, t.users, t.sessions, t.events, t.values)})
                if version is None and foreign:  # checked before anything is created: nothing changes
                    raise SessionStoreError(
                        f"tables named templating_* exist in {self.url!r} without a schema version: written by "
                        f"something else ({', '.join(foreign)})",
                        url=self.url,
                        help="use another database, or drop those tables if nothing needs them; nothing was changed",
                    )
                if version is not None and version != SCHEMA_VERSION:
                    older = (
                        " (version 1 kept each scope's state as one JSON document; version 2 stores one row per "
                        "state key, so that an append writes only the keys it changes)"
                        if version == 1
                        else ""
                    )
                    raise SessionStoreError(
                        f"the session tables in {self.url!r} have schema version {version}, and this version of "
                        f"templating reads version {SCHEMA_VERSION}{older}",
                        url=self.url,
                        help="use the templating version that wrote them, or another database; nothing was changed",
                    )
                await conn.run_sync(t.metadata.create_all)
                if version is None:
                    await conn.execute(t.schema.insert().values(name="sessions", version=SCHEMA_VERSION))
            self._opened = True

    @asynccontextmanager
    async def _transaction(self, *, write: bool) -> AsyncIterator[AsyncConnection]:
        """One transaction: a write takes SQLite's write lock at once (BEGIN IMMEDIATE); a read sees one
        snapshot (SQLite's BEGIN, PostgreSQL's REPEATABLE READ). Writers of this service queue here
        rather than in SQLite's busy loop; an in-memory SQLite database has one connection, so all queue."""
        assert self._write_lock is not None
        serial = self.backend == "sqlite" and (write or self._memory)
        if serial:
            await self._write_lock.acquire()
        try:
            async with contextlib.AsyncExitStack() as stack:
                try:
                    conn = await stack.enter_async_context(self._engine.connect())
                except (TypeError, ValueError, OverflowError) as error:  # the driver refuses a URL option or port
                    raise self._bad_connect(error) from None
                if self.backend == "sqlite":
                    conn = await conn.execution_options(templating_write=write)
                elif not write:
                    conn = await conn.execution_options(isolation_level="REPEATABLE READ")
                async with conn.begin():
                    yield conn
        finally:
            if serial:
                self._write_lock.release()

    # --- the storage primitives ------------------------------------------------------------

    async def _create(self, app_name: str, user_id: str, session_id: str, scopes: Scopes) -> Session:
        return await self._call(lambda: self._create_now(app_name, user_id, session_id, scopes))

    async def _create_now(self, app_name: str, user_id: str, session_id: str, scopes: Scopes) -> Session:
        t = self._tables
        token, now = uuid.uuid4().hex, time.time()
        async with self._transaction(write=True) as conn:
            # app, then user, then session: the order every writer locks them in
            app_revision = await self._scope_row(conn, t.apps, {"app_name": app_name}, bool(scopes[APP]))
            user_revision = await self._scope_row(
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
            owners = _owners(app_name, user_id, pk)
            for index, revision in ((SESSION, 1), (USER, user_revision), (APP, app_revision)):
                await self._write_values(conn, owners[index], scopes[index], revision)
            user, app = await self._read_values(conn, [owners[USER], owners[APP]])
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

    async def _scope_row(self, conn: AsyncConnection, table: sa.Table, key: dict[str, str], write: bool) -> int:
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

    def _owned_by(self, owner: Owner) -> Any:
        c = self._tables.values.c
        return sa.and_(c.app_name == owner[0], c.user_id == owner[1], c.session_pk == owner[2])

    async def _read_values(self, conn: AsyncConnection, owners: list[Owner]) -> list[dict[str, Any]]:
        """The whole state of each owner, in one query (decoded: the caller's own)."""
        c = self._tables.values.c
        query = sa.select(c.app_name, c.user_id, c.session_pk, c.key, c.value).where(
            sa.or_(*(self._owned_by(owner) for owner in owners))
        )
        found: dict[Owner, dict[str, Any]] = {owner: {} for owner in owners}
        for app_name, user_id, session_pk, name, value in await conn.execute(query):
            found[(app_name, user_id, int(session_pk))][name] = json.loads(value)
        return [found[owner] for owner in owners]

    async def _write_values(self, conn: AsyncConnection, owner: Owner, values: dict[str, Any], revision: int) -> None:
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
                "value": _dumps(value),
                "written": revision,
            }
            for name, value in values.items()
        ]
        await conn.execute(upsert, rows)

    async def _get(self, key: tuple[str, str, str], config: GetSessionConfig | None) -> Session | None:
        return await self._call(lambda: self._get_now(key, config))

    def _joined(self, *columns: Any) -> Any:
        t = self._tables
        return (
            sa.select(*columns)
            .select_from(t.sessions)
            .join(
                t.users, sa.and_(t.users.c.app_name == t.sessions.c.app_name, t.users.c.user_id == t.sessions.c.user_id)
            )
            .join(t.apps, t.apps.c.app_name == t.sessions.c.app_name)
        )

    def _read_columns(self) -> list[Any]:
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
    def _copy(app_name: str, row: Any, scopes: list[dict[str, Any]], events: list[Event]) -> Session:
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

    async def _get_now(self, key: tuple[str, str, str], config: GetSessionConfig | None) -> Session | None:
        t = self._tables
        app_name, user_id, session_id = key
        async with self._transaction(write=False) as conn:
            query = self._joined(*self._read_columns()).where(
                t.sessions.c.app_name == app_name,
                t.sessions.c.user_id == user_id,
                t.sessions.c.session_id == session_id,
            )
            row = (await conn.execute(query)).first()
            if row is None:
                return None
            scopes = await self._read_values(conn, list(_owners(app_name, user_id, int(row.pk))))
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
        return self._copy(app_name, row, scopes, [Event.model_validate(item) for item in data])

    async def _list(self, app_name: str, user_id: str | None) -> list[Session]:
        return await self._call(lambda: self._list_now(app_name, user_id))

    async def _list_now(self, app_name: str, user_id: str | None) -> list[Session]:
        t = self._tables
        c = t.values.c
        query = self._joined(*self._read_columns()).where(t.sessions.c.app_name == app_name)
        values = sa.select(c.user_id, c.session_pk, c.key, c.value).where(c.app_name == app_name)
        if user_id is not None:
            query = query.where(t.sessions.c.user_id == user_id)
            values = values.where(c.user_id.in_([user_id, ""]))
        async with self._transaction(write=False) as conn:
            rows = (await conn.execute(query.order_by(t.sessions.c.pk))).all()
            owned: dict[tuple[str, int], dict[str, Any]] = {}
            for owner, session_pk, name, value in await conn.execute(values):
                owned.setdefault((owner, int(session_pk)), {})[name] = value
        sessions = []
        for row in rows:
            texts = [owned.get(owner[1:], {}) for owner in _owners(app_name, row.user_id, int(row.pk))]
            scopes = [{name: json.loads(text) for name, text in scope.items()} for scope in texts]  # each its own
            sessions.append(self._copy(app_name, row, scopes, []))
        return sessions

    async def _delete(self, key: tuple[str, str, str]) -> None:
        await self._call(lambda: self._delete_now(key))

    async def _delete_now(self, key: tuple[str, str, str]) -> None:
        t = self._tables
        where = (t.sessions.c.app_name == key[0], t.sessions.c.user_id == key[1], t.sessions.c.session_id == key[2])
        async with self._transaction(write=True) as conn:
            pk = (await conn.execute(sa.select(t.sessions.c.pk).where(*where).with_for_update())).scalar()
            if pk is not None:
                await conn.execute(t.values.delete().where(self._owned_by((key[0], key[1], int(pk)))))
                await conn.execute(t.events.delete().where(t.events.c.session_pk == pk))
                await conn.execute(t.sessions.delete().where(t.sessions.c.pk == pk))

    async def _user_state(self, app_name: str, user_id: str) -> dict[str, Any]:
        return await self._call(lambda: self._user_state_now(app_name, user_id))

    async def _user_state_now(self, app_name: str, user_id: str) -> dict[str, Any]:
        async with self._transaction(write=False) as conn:
            return (await self._read_values(conn, [(app_name, user_id, 0)]))[0]

    async def _append(
        self,
        key: tuple[str, str, str],
        session: Session,
        prepared: list[tuple[Event, dict[str, Any]]],
        events: list[Event],
    ) -> list[Event]:
        return await self._call(lambda: self._append_now(key, session, prepared, events))

    async def _append_now(
        self,
        key: tuple[str, str, str],
        session: Session,
        prepared: list[tuple[Event, dict[str, Any]]],
        events: list[Event],
    ) -> list[Event]:
        t = self._tables
        app_name, user_id, session_id = key
        candidates = [stored for stored, _ in prepared if not stored.partial]
        # The scopes the events may write: on PostgreSQL their rows are locked, app before user before
        # session (SQLite's BEGIN IMMEDIATE has already taken the one write lock of the whole database).
        touched: set[int | None] = set()
        if self.backend == "postgresql":
            touched = {scope_index(name) for stored in candidates for name in stored.actions.state_delta}
        ids = {stored.id for stored in candidates}
        async with self._transaction(write=True) as conn:
            if APP in touched:
                await conn.execute(sa.select(t.apps.c.revision).where(t.apps.c.app_name == app_name).with_for_update())
            if USER in touched:
                await conn.execute(
                    sa.select(t.users.c.revision)
                    .where(t.users.c.app_name == app_name, t.users.c.user_id == user_id)
                    .with_for_update()
                )
            columns = [*self._read_columns(), t.sessions.c.event_count]
            if ids:  # whether any of the ids is stored already, in the same statement (one round trip less)
                stored_ids = sa.exists().where(t.events.c.session_pk == t.sessions.c.pk, t.events.c.event_id.in_(ids))
                columns.append(stored_ids.label("has_known"))
            query = self._joined(*columns).where(
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
                return [
                    event.model_copy(deep=True) if stored.partial else Event.model_validate(known[stored.id])
                    for (stored, _), event in zip(prepared, events, strict=True)
                ]
            owners = _owners(app_name, user_id, int(row.pk))
            revisions = [int(row.revision), int(row.user_revision), int(row.app_revision)]
            # The revision that last wrote each key the events write: the rows of those keys only.
            written: dict[str, int] = {}
            if writes:
                c = t.values.c
                by_scope: dict[int, list[str]] = {}
                for name in writes:
                    by_scope.setdefault(scope_index(name) or SESSION, []).append(name)
                query = sa.select(c.key, c.written).where(
                    sa.or_(
                        *(sa.and_(self._owned_by(owners[index]), c.key.in_(names)) for index, names in by_scope.items())
                    )
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
                await self._write_values(conn, owners[index], values[index], revisions[index])
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
                reloaded = dict(zip(behind, await self._read_values(conn, [owners[i] for i in behind]), strict=True))
        # Committed: now (never before) the caller's copy is brought up to date.
        seen: Seen = (revisions[SESSION], revisions[USER], revisions[APP])
        appended = [(stored, delta) for (stored, delta), keep in zip(prepared, store, strict=True) if keep]
        added = iter(refresh_copy(session, appended, seen, reloaded))
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


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Take the outcome of a task given up on, so that asyncio does not report it as never retrieved."""
    if not task.cancelled():
        task.exception()


def _sqlite_connect(dbapi_connection: Any, record: Any, *, memory: bool) -> None:
    """Every new SQLite connection: transactions are begun by us (below), and a file uses WAL, so
    readers never wait for the writer (`synchronous=NORMAL`: a crashed process loses nothing
    committed; a power cut may lose the last commits, never consistency)."""
    dbapi_connection.isolation_level = None
    if not memory:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()


def _sqlite_begin(conn: Any) -> None:
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("templating_write") else "BEGIN")
