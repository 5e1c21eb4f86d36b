"""Sessions in a database: our DatabaseSessionService against Google ADK's, on the same kind of database.

Run: python bench/bench_sessions_sql.py   (needs the sql and adk extras: pip install -e ".[dev,adk,sql]")

For SQLite (a file) and PostgreSQL (a throw-away server started from its binaries with
tests/pg_server.py, as the tests do; skipped with a note when the binaries are missing), and for
sessions of 10 and of 1,000 events, this times, in one process:

- appends per second: ``append_event`` one event at a time through the session copy, as a Runner
  does (each event says a sentence and writes a session key; every tenth also a ``user:`` key),
  timed in windows of 100 appends: 10 new sessions of 10 events, or the next 100 events of a session
  growing to 1,000;
- ``get_session`` latency: the median time to read a whole session back (its state and every event).

Each service has a database of its own of the same kind (its own file; its own database on the same
server). On SQLite, ADK's service runs twice: as it comes (SQLite's defaults: a rollback journal and
a disk sync at every commit) and on an engine with the settings ours uses (WAL, synchronous=NORMAL),
which takes that difference out. The services take turns, window by window, and each reports its
best window (the best of 10 medians for get_session): the one least disturbed by other work on the
machine. Ratios are ours against ADK's: above 1 we append more per second, below 1 we read a session
back in less time. Compare ratios, not absolute numbers, between machines.
"""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import logging
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SIZES = (10, 1_000)
WINDOW = 100  # appends are timed in windows of this many events
ROUNDS = 10  # windows of appends to sessions of 10 events; rounds of get_session reads, for each size
READS = {10: 30, 1_000: 7}  # get_session calls per round (their median is the round's time)
TEXT = "Where is my order A-1? It was due on Monday and the tracking page says 'label created'."


@dataclass
class Result:
    appends_per_second: dict[int, float]
    get_seconds: dict[int, float]


class Ours:
    """templating's DatabaseSessionService."""

    name = "templating"

    def __init__(self, url: str) -> None:
        from templating import DatabaseSessionService

        self.service = DatabaseSessionService(url)

    async def create(self, session_id: str) -> Any:
        state = {"app:brand": "Acme", "user:name": "Ada", "order_id": "A-1"}
        return await self.service.create_session(app_name="bench", user_id="u1", session_id=session_id, state=state)

    async def append(self, session: Any, number: int) -> None:
        from templating import Event, EventActions

        delta: dict[str, Any] = {"step": number}
        if number % 10 == 0:
            delta["user:seen"] = number
        event = Event(invocation_id=f"i{number // 2}", author="user" if number % 2 else "support", content=TEXT)
        event.actions = EventActions(state_delta=delta)
        await self.service.append_event(session, event)

    async def get(self, session_id: str) -> Any:
        return await self.service.get_session(app_name="bench", user_id="u1", session_id=session_id)

    async def close(self) -> None:
        await self.service.close()


class Adk:
    """Google ADK's DatabaseSessionService (SQLAlchemy 2 asyncio, like ours), as it comes."""

    name = "google-adk"

    def __init__(self, url: str) -> None:
        from google.adk.sessions import DatabaseSessionService

        self.engine: Any = None
        self.service = DatabaseSessionService(url)

    async def create(self, session_id: str) -> Any:
        state = {"app:brand": "Acme", "user:name": "Ada", "order_id": "A-1"}
        return await self.service.create_session(app_name="bench", user_id="u1", session_id=session_id, state=state)

    async def append(self, session: Any, number: int) -> None:
        from google.adk.events import Event, EventActions
        from google.genai import types

        delta: dict[str, Any] = {"step": number}
        if number % 10 == 0:
            delta["user:seen"] = number
        author = "user" if number % 2 else "support"
        event = Event(
            invocation_id=f"i{number // 2}",
            author=author,
            content=types.Content(role="user" if number % 2 else "model", parts=[types.Part(text=TEXT)]),
            actions=EventActions(state_delta=delta),
        )
        await self.service.append_event(session, event)

    async def get(self, session_id: str) -> Any:
        return await self.service.get_session(app_name="bench", user_id="u1", session_id=session_id)

    async def close(self) -> None:
        await self.service.close()
        if self.engine is not None:
            await self.engine.dispose()


class AdkWal(Adk):
    """ADK's DatabaseSessionService on an engine with our SQLite settings (WAL, synchronous=NORMAL).

    ADK leaves SQLite's defaults (a rollback journal, synchronous=FULL: a sync of the disk at every
    commit); ours trades that for WAL with synchronous=NORMAL (nothing committed is lost when a
    process crashes; a power cut may lose the last commits). This variant takes that difference out."""

    name = "google-adk, WAL"

    def __init__(self, url: str) -> None:
        from google.adk.sessions import DatabaseSessionService
        from sqlalchemy import event
        from sqlalchemy.ext.asyncio import create_async_engine

        def pragmas(dbapi_connection: Any, record: Any) -> None:
            cursor = dbapi_connection.cursor()
            for pragma in ("foreign_keys=ON", "journal_mode=WAL", "synchronous=NORMAL"):  # ADK sets the first
                cursor.execute(f"PRAGMA {pragma}")
            cursor.close()

        self.engine = create_async_engine(url)
        event.listen(self.engine.sync_engine, "connect", pragmas)
        self.service = DatabaseSessionService(db_engine=self.engine)


async def _timed(work: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await work()
    return time.perf_counter() - start


async def append_window(service: Any, sessions: list[Any], first: int, size: int) -> float:
    """Append WINDOW events, one at a time: to each of ``sessions`` its events ``first`` to
    ``first + size - 1``; appends per second."""

    async def append_all() -> None:
        for session in sessions:
            for number in range(first, first + size):
                await service.append(session, number)

    gc.collect()
    return len(sessions) * size / await _timed(append_all)


async def check(service: Any, session_id: str, size: int) -> None:
    """The session holds what was appended: ``size`` events and the last deltas."""
    read = await service.get(session_id)
    assert len(read.events) == size, f"{service.name}: {len(read.events)} events read back, {size} appended"
    assert read.state["step"] == size, f"{service.name}: the last delta was not stored"
    assert read.state["user:seen"] == size - size % 10, f"{service.name}: the last user: delta was not stored"


async def get_seconds(service: Any, ids: list[str], reads: int) -> float:
    """The median time of ``reads`` get_session calls over the sessions ``ids``."""
    times = []
    for number in range(reads):
        session_id = ids[number % len(ids)]
        times.append(await _timed(lambda session_id=session_id: service.get(session_id)))
    return statistics.median(times)


async def compare(makers: list[type[Ours | Adk]], url: Callable[[str], str]) -> dict[str, Result]:
    """The services, each on a database of its own (``url(name)``), measured in turns (ours, ADK's,
    ours, ...), window by window; the best window of each.

    Appends come in windows of WINDOW events: for sessions of 10 events, WINDOW // 10 new sessions
    of 10 events each; for 1,000 events, the next WINDOW events of one session, until it holds
    1,000. Taking turns spreads the load of a shared machine over all the services, and the best
    window (the best of ROUNDS medians, for get_session) is the one least disturbed by it."""
    services = [maker(url(maker.name)) for maker in makers]
    results = {service.name: Result({}, {}) for service in services}
    try:
        for service in services:
            await service.create("warm-up")  # tables created and the pool opened outside the timings
        for size in SIZES:
            ids: list[str] = []
            if size == 1_000:
                ids = ["long"]
                sessions = {service.name: [await service.create("long")] for service in services}
            for window in range(ROUNDS if size < WINDOW else size // WINDOW):
                if size < WINDOW:  # new sessions of `size` events
                    new = [f"s{size}-{window}-{n}" for n in range(WINDOW // size)]
                    ids += new
                    sessions = {service.name: [await service.create(i) for i in new] for service in services}
                for service in services:
                    first = 1 if size < WINDOW else window * WINDOW + 1
                    rate = await append_window(service, sessions[service.name], first, min(size, WINDOW))
                    best = results[service.name].appends_per_second
                    best[size] = max(rate, best.get(size, 0.0))
            for service in services:
                await check(service, ids[-1], size)
            for _ in range(ROUNDS):
                for service in services:
                    seconds = await get_seconds(service, ids, READS[size])
                    best = results[service.name].get_seconds
                    best[size] = min(seconds, best.get(size, float("inf")))
    finally:
        for service in services:
            await service.close()
    return results


def report(kind: str, results: dict[str, Result]) -> None:
    """A table: one column per service, then the ratio of ours to each of ADK's."""
    ours = results["templating"]
    others = [name for name in results if name != "templating"]
    print(f"\n{kind}")
    header = "".join(f"{name:>17s}" for name in results)
    print(f"  {'':25s}{header}   " + "   ".join(f"ours vs {name}" for name in others))
    for size in SIZES:
        values = "".join(f"{result.appends_per_second[size]:17.0f}" for result in results.values())
        ratios = "".join(
            f"   {ours.appends_per_second[size] / results[name].appends_per_second[size]:5.2f}x as many"
            for name in others
        )
        print(f"  appends/s, {size:>5,} events  {values}{ratios}")
    for size in SIZES:
        values = "".join(f"{result.get_seconds[size] * 1e3:14.2f} ms" for result in results.values())
        ratios = "".join(
            f"   {ours.get_seconds[size] / results[name].get_seconds[size]:5.2f}x the time" for name in others
        )
        print(f"  get_session, {size:>5,} events{values}{ratios}")


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent package (google) is missing
        return False


def main() -> None:
    missing = [name for name in ("sqlalchemy", "aiosqlite", "asyncpg", "google.adk") if not _importable(name)]
    if missing:
        sys.exit(f"bench_sessions_sql needs {', '.join(missing)}: pip install -e '.[dev,adk,sql]'")
    warnings.simplefilter("ignore")  # ADK's experimental-feature warnings are not what is measured
    logging.disable(logging.WARNING)
    folder = Path(tempfile.mkdtemp(prefix="bench-sessions-"))
    print(
        f"sessions of {' and '.join(f'{n:,}' for n in SIZES)} events; appends timed in windows of {WINDOW}, "
        f"get_session as the median of a round; the best window or round of each service, taken in turns"
    )
    files = {maker.name: folder / f"{number}.db" for number, maker in enumerate((Ours, Adk, AdkWal))}
    results = asyncio.run(compare([Ours, Adk, AdkWal], lambda name: f"sqlite+aiosqlite:///{files[name]}"))
    report("SQLite (a file each)", results)

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from pg_server import PostgresServer, find_binaries

    binaries = find_binaries()
    if binaries is None:
        print("\nPostgreSQL: skipped, no binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin")
        return
    server = PostgresServer.start(binaries)
    try:
        urls = {Ours.name: server.create_database("bench_templating"), Adk.name: server.create_database("bench_adk")}
        results = asyncio.run(compare([Ours, Adk], urls.__getitem__))
        report(f"PostgreSQL (a throw-away server from {binaries}, a database each)", results)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
