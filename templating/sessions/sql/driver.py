"""What the database service needs of SQLAlchemy and its drivers: the import of the `sql` extra (said when a
service is made, not when this package is imported), the URLs spoken, `SessionStoreError` with the URL's
password masked, the private event loop the engine lives on, and SQLite's connection hooks."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from ...errors import TemplatingError

try:
    from sqlalchemy.engine import make_url
    from sqlalchemy.ext.asyncio import AsyncEngine
except ImportError as error:  # the sql extra is not installed: say so when the service is made
    MISSING: ImportError | None = error
else:
    MISSING = None

__all__ = ["SessionStoreError"]

INSTALL = "install the sql extra: pip install 'agent-prompt-templating[sql]' (SQLAlchemy 2 with aiosqlite and asyncpg)"
DRIVERS = {"sqlite+aiosqlite": "sqlite", "postgresql+asyncpg": "postgresql"}
URL_HELP = (
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


def dumps(value: Any) -> str:
    # Values are checked plain JSON already; allow_nan=False is a last guard against writing NaN.
    return json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))


def masked(url: str) -> str:
    """The URL as it may be shown: its password replaced by `***`."""
    if MISSING is None:
        try:
            return make_url(url).render_as_string(hide_password=True)
        except Exception:  # not a URL SQLAlchemy can read: show its scheme only
            pass
    scheme, sep, _ = url.partition("://")
    return f"{scheme}://***" if sep else "***"


def reason_of(error: BaseException) -> str:
    """What the driver said, in one line, without SQLAlchemy's statement dump."""
    orig = getattr(error, "orig", None)
    text = str(orig if orig is not None else error).strip() or type(error).__name__
    return text.splitlines()[0]


# PostgreSQL's error classes (SQLSTATE prefixes) that mean the server could not be used at all: a connection
# failure, authentication, an unknown database, a server shutting down or refusing connections.
_UNUSABLE_STATES = ("08", "28", "3D", "57P", "53300")
# SQLite's error names for a file that cannot be opened, is locked, or cannot be written.
_UNUSABLE_SQLITE = ("SQLITE_CANTOPEN", "SQLITE_NOTADB", "SQLITE_AUTH", "SQLITE_BUSY", "SQLITE_LOCKED")
_STORAGE_SQLITE = ("SQLITE_FULL", "SQLITE_IOERR", "SQLITE_READONLY", "SQLITE_CORRUPT", "SQLITE_PERM")


def refusal(error: BaseException) -> str | None:
    """What kind of failure a driver's error is, when the database answered: "timeout" (PostgreSQL cancelled
    a statement that ran or waited past statement_timeout), "storage" (SQLite could not write its file), or
    "statement" (the database was reached and refused a statement); `None` for a connection, a login, a
    lock, or anything else (the URL and the server are then what to check)."""
    orig = getattr(error, "orig", None)
    state = getattr(orig, "sqlstate", None)
    if isinstance(state, str) and state:
        if state == "57014":
            return "timeout"
        return None if state.startswith(_UNUSABLE_STATES) else "statement"
    name = getattr(orig, "sqlite_errorname", None)
    if isinstance(name, str) and name:
        if name.startswith(_UNUSABLE_SQLITE):
            return None
        return "storage" if name.startswith(_STORAGE_SQLITE) else "statement"
    return None


class LoopThread:
    """A private event loop running in a daemon thread; coroutines are handed to it from any loop. `stopped`
    makes the error of a call the shut-down ended (see `shut_down`), `refused` that of a call handed over once the
    shut-down takes no more (default: `stopped`'s); `shut` is set once the shut-down ended."""

    def __init__(
        self, stopped: Callable[[], BaseException], *, refused: Callable[[], BaseException] | None = None
    ) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="templating-sql", daemon=True)
        self.shut = threading.Event()
        self._running: set[concurrent.futures.Future[Any]] = set()  # the calls handed over and not ended
        self._lock = threading.Lock()  # (the calls are handed over in the callers' threads, end in the loop's)
        self._stopping = False
        self._stopped = stopped
        self._refused = refused if refused is not None else stopped
        self.thread.start()

    def running(self) -> list[concurrent.futures.Future[Any]]:
        """The calls handed over and not ended."""
        with self._lock:
            return list(self._running)

    def stop_taking(self) -> None:
        """Take no more calls: each one handed over from now on fails with the `refused` error."""
        with self._lock:
            self._stopping = True

    def fail_running(self) -> None:
        """End each call still running with the `stopped` error (the loop that ran it has stopped)."""
        for future in self.running():
            with contextlib.suppress(concurrent.futures.InvalidStateError):
                future.set_exception(self._stopped())

    def _ended(self, future: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            self._running.discard(future)

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        with self._lock:
            if self._stopping:
                work.close()
                raise self._refused()
            future = asyncio.run_coroutine_threadsafe(work, self.loop)
            self._running.add(future)
        future.add_done_callback(self._ended)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if self._stopping and future.cancelled() and not (task is not None and task.cancelling()):
                raise self._stopped() from None  # ended by the shut-down, not by a cancelling of the caller's
            raise


def shut_down(runner: LoopThread, engine: AsyncEngine, *, wait: float = 0.0) -> None:
    """Let the calls running end (for at most `wait` seconds), cancel those still running (each caller gets the
    runner's `stopped` error), dispose of the pool on its own loop, then stop the loop (at close(), garbage
    collection or exit). A statement a driver is running cannot be interrupted (SQLite's): the cancelling waits
    for it, at most 10 seconds; after that, its loop is stopped but not closed, so that its driver's thread can
    still hand its result over (to no one)."""
    try:
        _shut_down(runner, engine, wait)
    finally:
        runner.shut.set()


def _shut_down(runner: LoopThread, engine: AsyncEngine, wait: float) -> None:
    loop = runner.loop
    if loop.is_closed():
        return
    if threading.current_thread() is runner.thread:  # cannot wait for our own loop: just stop it
        runner.stop_taking()
        loop.stop()
        return
    if loop.is_running():
        running = runner.running()
        if running and wait > 0:
            concurrent.futures.wait(running, timeout=wait)
        runner.stop_taking()
        settled = False
        with contextlib.suppress(Exception):  # shutting down: a pool that cannot close cleanly is dropped
            asyncio.run_coroutine_threadsafe(_cancel_tasks(), loop).result(timeout=10)
            settled = True
            asyncio.run_coroutine_threadsafe(engine.dispose(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        runner.thread.join(timeout=10)
        runner.fail_running()
        if not settled:
            return
    if not loop.is_running():
        loop.close()


async def _cancel_tasks() -> None:
    """Cancel every other task of the running loop and let each end (its transaction rolled back, its
    connection given back), so that none is left pending when the loop stops."""
    tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def retrieved(task: asyncio.Future[Any]) -> None:
    """Take the outcome of a task given up on, so that asyncio does not report it as never retrieved."""
    if not task.cancelled():
        task.exception()


def sqlite_connect(dbapi_connection: Any, record: Any, *, memory: bool) -> None:
    """Every new SQLite connection: transactions are begun by us (below), and a file uses WAL, so
    readers never wait for the writer (`synchronous=NORMAL`: a crashed process loses nothing
    committed; a power cut may lose the last commits, never consistency)."""
    dbapi_connection.isolation_level = None
    if not memory:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()


def sqlite_begin(conn: Any) -> None:
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("templating_write") else "BEGIN")
