"""The database service, [`DatabaseSessionService`][templating.DatabaseSessionService]: its URL and engine,
one transaction per primitive (the statements are `templating.sessions.sql.statements`), and bounded time.

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
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from ...errors import TemplatingError
from ..base import Scopes, SessionService, _settled, clean_id
from ..models import Event, GetSessionConfig, Session
from .driver import (
    DRIVERS,
    INSTALL,
    MISSING,
    URL_HELP,
    LoopThread,
    SessionStoreError,
    dumps,
    masked,
    reason_of,
    refusal,
    retrieved,
    shut_down,
    sqlite_begin,
    sqlite_connect,
)
from .schema import prepare, tables
from .statements import Statements

try:
    import sqlalchemy as sa
    from sqlalchemy import event as sa_event
    from sqlalchemy.engine import URL, make_url
    from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine
    from sqlalchemy.pool import StaticPool
except ImportError:  # the sql extra is not installed: said when the service is made (driver.MISSING)
    pass

__all__ = ["DEFAULT_STATEMENT_TIMEOUT", "DatabaseSessionService"]

DEFAULT_STATEMENT_TIMEOUT = 30.0
"""How long (seconds) one statement may wait or run before the service gives up with
[`SessionStoreError`][templating.SessionStoreError]: a frozen or locked database fails in bounded time."""

T = TypeVar("T")


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
        self.url = masked(url)
        if MISSING is not None:
            raise ImportError(f"DatabaseSessionService needs SQLAlchemy: {INSTALL}") from MISSING
        try:
            parsed: URL = make_url(url)
        except Exception as error:  # SQLAlchemy raises ArgumentError, ValueError, ...
            raise SessionStoreError(
                f"{self.url!r} is not a database URL: {reason_of(error)}", url=self.url, help=URL_HELP
            ) from None
        self.backend = DRIVERS.get(parsed.drivername, "")
        if not self.backend:
            raise SessionStoreError(
                f"unsupported database URL {self.url!r}: DatabaseSessionService speaks "
                f"{' and '.join(sorted(DRIVERS))}, not {parsed.drivername}",
                url=self.url,
                help=URL_HELP,
            )
        self._memory = self.backend == "sqlite" and parsed.database in (None, "", ":memory:")
        self._file = (
            Path(parsed.database) if self.backend == "sqlite" and not self._memory and parsed.database else None
        )
        self._timeout = timeout
        self._statement_timeout = float(statement_timeout)
        options: dict[str, Any] = {"json_serializer": dumps, "json_deserializer": json.loads}
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
            # A connection at rest is in autocommit: the pool's check of it is then one query, not BEGIN, query,
            # ROLLBACK (two round trips fewer on every call); `_transaction` sets each transaction's level.
            options["isolation_level"] = "AUTOCOMMIT"
        try:
            self._engine = create_async_engine(parsed, **options)
        except ImportError as error:
            raise ImportError(f"DatabaseSessionService needs the driver for {self.url!r}: {INSTALL}") from error
        if self.backend == "sqlite":
            sa_event.listen(self._engine.sync_engine, "connect", partial(sqlite_connect, memory=self._memory))
            sa_event.listen(self._engine.sync_engine, "begin", sqlite_begin)
        self._tables = tables()
        self._statements = Statements(self._tables, backend=self.backend)
        # (not self: the finalizer holds the runner)
        self._runner = LoopThread(partial(_closed_meanwhile, self.url), refused=partial(_closed, self.url))
        self._finalizer = weakref.finalize(self, shut_down, self._runner, self._engine)
        self._opened = False
        self._closing = False  # close() began: no call is taken
        self._open_lock: asyncio.Lock | None = None  # made on the service loop
        self._write_lock: asyncio.Lock | None = None

    def __repr__(self) -> str:
        return f"DatabaseSessionService({self.url!r})"

    async def close(self) -> None:
        """Let the calls running end (waiting `timeout + statement_timeout` seconds for them, then cancelling
        those left: each fails with `SessionStoreError`; a statement SQLite is running ends first, waited for 10
        seconds at most), release the connections and stop the service's loop. Calls after this fail; closing
        twice is fine (the second waits for the first)."""
        self._closing = True
        if self._finalizer.detach() is None:  # closed, or closing in another call: wait for it to end
            if not self._runner.shut.is_set():
                try:
                    await asyncio.to_thread(self._runner.shut.wait)
                except RuntimeError:  # no thread to wait in (see below)
                    self._runner.shut.wait()
            return
        wait = self._timeout + self._statement_timeout
        try:
            await asyncio.to_thread(shut_down, self._runner, self._engine, wait=wait)
        except RuntimeError:  # no thread to run it in (the loop's executor shut down, the interpreter exiting)
            if self._runner.shut.is_set():  # (it ran, and failed: as it says)
                raise
            shut_down(self._runner, self._engine, wait=wait)  # here, then: never left half closed

    async def __aenter__(self) -> DatabaseSessionService:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    # --- running on the service loop -------------------------------------------------------

    async def _call(self, work: Callable[[], Awaitable[T]]) -> T:
        if self._closing or not self._finalizer.alive:
            raise _closed(self.url)
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
        task.add_done_callback(retrieved)
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
        reason = reason_of(error)
        if isinstance(error, TimeoutError) and reason == "TimeoutError":
            limit = f"statement_timeout={self._statement_timeout}" if self._opened else f"timeout={self._timeout}"
            reason = f"no answer within {limit} seconds"
        help = (
            "check that the database is reachable and the URL (user, password, host, port, database) is right; "
            "nothing was changed"
        )
        cause = "timeout" if isinstance(error, TimeoutError) and self._opened else refusal(error)
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
        elif cause == "timeout":
            help = (
                f"a statement ran or waited for a lock longer than statement_timeout={self._statement_timeout} "
                "seconds: check that no other connection holds a lock on the templating_* tables, or raise "
                "statement_timeout; nothing was changed"
            )
        elif cause == "storage":
            help = (
                "the database could not write: check its disk space, its permissions, and that the file is not "
                "read-only or damaged; nothing was changed"
            )
        elif cause == "statement":
            help = (
                "the database was reached and refused the statement (the reason above: a trigger, a permission, "
                "a limit of the server, a table changed by something else); nothing was changed. If nothing of the "
                "sort applies, report it: every state the session services accept should be stored"
            )
        return SessionStoreError(f"the session database {self.url!r} failed: {reason}", url=self.url, help=help)

    def _bad_connect(self, error: Exception) -> SessionStoreError:
        """A URL option or port that the driver refuses when connecting (TypeError, ValueError, OverflowError)."""
        reason = reason_of(error)
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
            async with self._transaction(write=True) as conn:
                await prepare(conn, self._tables, backend=self.backend, url=self.url)
            self._opened = True

    @asynccontextmanager
    async def _transaction(self, *, write: bool, single: bool = False) -> AsyncIterator[AsyncConnection]:
        """One transaction: a write takes SQLite's write lock at once (BEGIN IMMEDIATE); a read sees one
        snapshot (SQLite's BEGIN, PostgreSQL's REPEATABLE READ). Writers of this service queue here
        rather than in SQLite's busy loop; an in-memory SQLite database has one connection, so all queue.
        `single`: the work is one statement, which PostgreSQL runs as a transaction of its own (the connection's
        autocommit: no BEGIN and COMMIT sent, two round trips fewer)."""
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
                elif not single:  # (one statement runs in the connection's autocommit, a transaction of its own)
                    level = "READ COMMITTED" if write else "REPEATABLE READ"
                    conn = await conn.execution_options(isolation_level=level)
                async with conn.begin():
                    yield conn
        finally:
            if serial:
                self._write_lock.release()

    # --- the storage primitives, each one transaction of `Statements` ---------------------------

    async def _create(self, app_name: str, user_id: str, session_id: str, scopes: Scopes) -> Session:
        return await self._call(lambda: self._create_now(app_name, user_id, session_id, scopes))

    async def _create_now(self, app_name: str, user_id: str, session_id: str, scopes: Scopes) -> Session:
        if self.backend == "postgresql":
            async with self._transaction(write=True, single=True) as conn:
                return await self._statements.create_at_once(conn, app_name, user_id, session_id, scopes)
        async with self._transaction(write=True) as conn:
            return await self._statements.create(conn, app_name, user_id, session_id, scopes)

    async def _get(self, key: tuple[str, str, str], config: GetSessionConfig | None) -> Session | None:
        return await self._call(lambda: self._get_now(key, config))

    async def _get_now(self, key: tuple[str, str, str], config: GetSessionConfig | None) -> Session | None:
        async with self._transaction(write=False, single=True) as conn:  # PostgreSQL: one statement (Statements.get)
            return await self._statements.get(conn, key, config)

    async def _turn_session(
        self, *, app_name: str, user_id: str, session_id: str, keys: Collection[str] | None = None
    ) -> tuple[Session | None, Callable[[], bool]]:
        """A copy of the session holding only the state `keys` name (those it has): a turn reads the rows of
        the keys its instruction reads, whatever the size of the state, in one snapshot (always consistent).
        Without `keys`, the whole state."""
        if keys is None:
            return await super()._turn_session(app_name=app_name, user_id=user_id, session_id=session_id)
        key = (clean_id(app_name, "app_name"), clean_id(user_id, "user_id"), clean_id(session_id, "session_id"))
        return await self._call(lambda: self._turn_now(key, keys)), _settled

    async def _turn_now(self, key: tuple[str, str, str], keys: Collection[str]) -> Session | None:
        async with self._transaction(write=False, single=True) as conn:  # one statement (Statements.turn)
            return await self._statements.turn(conn, key, keys)

    async def _list(self, app_name: str, user_id: str | None) -> list[Session]:
        return await self._call(lambda: self._list_now(app_name, user_id))

    async def _list_now(self, app_name: str, user_id: str | None) -> list[Session]:
        async with self._transaction(write=False, single=True) as conn:  # one statement (Statements.sessions)
            return await self._statements.sessions(conn, app_name, user_id)

    async def _delete(self, key: tuple[str, str, str]) -> None:
        await self._call(lambda: self._delete_now(key))

    async def _delete_now(self, key: tuple[str, str, str]) -> None:
        async with self._transaction(write=True) as conn:
            await self._statements.delete(conn, key)

    async def _user_state(self, app_name: str, user_id: str) -> dict[str, Any]:
        return await self._call(lambda: self._user_state_now(app_name, user_id))

    async def _user_state_now(self, app_name: str, user_id: str) -> dict[str, Any]:
        async with self._transaction(write=False, single=True) as conn:  # one statement (Statements.user_state)
            return await self._statements.user_state(conn, app_name, user_id)

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
        async with self._transaction(write=True) as conn:
            appended = await self._statements.append(conn, key, session, prepared)
        # Committed: now (never before) the caller's copy is brought up to date.
        return self._statements.results(session, prepared, events, appended)


def _closed(url: str) -> SessionStoreError:
    """The error of a call made once its service is closed (or closing)."""
    return SessionStoreError(f"this DatabaseSessionService ({url!r}) is closed", url=url, help="make a new one")


def _closed_meanwhile(url: str) -> SessionStoreError:
    """The error of a call still running when its service's close() stopped waiting for it."""
    return SessionStoreError(
        f"this DatabaseSessionService ({url!r}) was closed while the call ran",
        url=url,
        help="close the service after its calls end; a write that was running may or may not be stored: read "
        "the session again (appending the same event again stores it once)",
    )
