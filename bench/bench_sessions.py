"""State at scale: appends and agent turns against Google ADK's session services, at 10, 2,000 and 20,000 keys.

Run: python bench/bench_sessions.py [--quick] [--memory]   (needs the sql and adk extras: pip install -e ".[adk,sql]")

In one process, for each size of state (a session created with that many keys: short strings, every
tenth a small dict with a list), this times:

- ``append_event``: one event writing one key, appended through the caller's copy, on our
  InMemorySessionService, DatabaseSessionService on a SQLite file and on PostgreSQL (a throw-away
  server started from its binaries by tests/pg_server.py; skipped with a note without them), against
  ADK's service of the same kind (its InMemorySessionService, its DatabaseSessionService). Each
  round appends to a fresh session, so neither pays for a long event list. An append is what a
  caller does: make the event (each service's own Event class) and call ``append_event``. Printed:
  ours / ADK's time per append (target: at most 1 at 2,000 and 20,000 keys). For the in-memory
  services, a second line times the ``append_event`` calls alone, the events made beforehand (no
  target: ADK's stores the caller's event object and checks nothing, ours checks the delta and copies).
- a ``Runner`` turn (ours, in memory: read state, render, two events appended) at each size,
  against our own turn at 10 keys (target: at most 1.5 at 20,000 keys), and against ADK's session
  work for a turn (``get_session`` and two ``append_event``; ADK's Runner needs a model, so only
  its session work is timed).

Times are CPU time of the process (the service threads included), the median of rounds; services
take turns round by round. Compare ratios, not absolute numbers, between machines.

``--quick`` leaves out 20,000 keys; ``--memory`` times only the in-memory appends (no SQL, no Runner).
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

SIZES = (10, 2_000, 20_000)
APPENDS = 20  # per round
ROUNDS = 5
TURNS = 20  # per round


def state_of(size: int) -> dict[str, Any]:
    state: dict[str, Any] = {"app:brand": "Acme", "user:name": "Ada", "order_id": "A-1"}
    for number in range(size - len(state)):
        state[f"k{number}"] = {"id": number, "tags": ["a", "b"]} if number % 10 == 0 else f"value {number}"
    return state


class Service:
    """One session service under test: make a session of a given state, append one event to it."""

    def __init__(self, name: str, service: Any, adk: bool) -> None:
        self.name, self.service, self.adk = name, service, adk
        self.sessions = 0

    async def create(self, state: dict[str, Any]) -> Any:
        self.sessions += 1
        return await self.service.create_session(
            app_name="bench", user_id="u1", session_id=f"s{self.sessions}", state=state
        )

    def event(self, number: int) -> Any:
        """The event an append appends: the service's own event class, writing one key."""
        if self.adk:
            from google.adk.events import Event as AdkEvent
            from google.adk.events import EventActions as AdkActions

            return AdkEvent(invocation_id="i", author="user", actions=AdkActions(state_delta={"step": number}))
        from templating import Event, EventActions

        return Event(invocation_id="i", author="user", actions=EventActions(state_delta={"step": number}))

    async def append(self, session: Any, number: int) -> None:
        await self.service.append_event(session, self.event(number))

    async def close(self) -> None:
        close = getattr(self.service, "close", None)
        if close is not None:
            await close()


async def cpu(work: Callable[[], Awaitable[Any]]) -> float:
    start = time.process_time()
    await work()
    return time.process_time() - start


async def append_round(service: Service, state: dict[str, Any], *, alone: bool = False) -> float:
    """The time per append of `APPENDS` appends to a new session: each making its event and appending
    it (what a caller does), or (`alone`) only the `append_event` calls, the events made beforehand."""
    session = await service.create(state)
    made = [service.event(number) for number in range(APPENDS)] if alone else []

    async def appends() -> None:
        for number in range(APPENDS):
            await service.append(session, number)

    async def appends_alone() -> None:
        for event in made:
            await service.service.append_event(session, event)

    return await cpu(appends_alone if alone else appends) / APPENDS


async def compare_appends(pairs: list[tuple[Service, Service]], sizes: tuple[int, ...], *, alone: bool = False) -> None:
    for ours, adk in pairs:
        for size in sizes:
            state = state_of(size)
            for only_append in (False, True) if alone else (False,):
                times: dict[str, list[float]] = {ours.name: [], adk.name: []}
                for _ in range(ROUNDS):
                    for service in (ours, adk):
                        times[service.name].append(await append_round(service, state, alone=only_append))
                mine, theirs = statistics.median(times[ours.name]), statistics.median(times[adk.name])
                if only_append:
                    print(
                        f"  {'':<24} {'':>6}  append_event alone (events made before):{mine * 1e6:5.1f} us, "
                        f"ADK {theirs * 1e6:5.1f} us; ours / ADK = {mine / theirs:5.2f}"
                    )
                    continue
                target = "" if size == SIZES[0] else "  (target <= 1)"
                print(
                    f"  {ours.name:<24} {size:>6,} keys: {mine * 1e6:9.0f} us per append, ADK {theirs * 1e6:9.0f} us; "
                    f"ours / ADK = {mine / theirs:5.2f}{target}"
                )


async def turn_curve(sizes: tuple[int, ...]) -> None:
    from google.adk.events import Event as AdkEvent
    from google.adk.events import EventActions as AdkActions
    from google.adk.sessions import InMemorySessionService as AdkMemory

    from templating import Agent, InMemorySessionService, Runner

    agent = Agent(name="bot", instruction="Hello <user:name>, about order <order_id>.", output_key="reply")
    base: float | None = None
    for size in sizes:
        state = state_of(size)
        ours: list[float] = []
        theirs: list[float] = []
        for round_number in range(ROUNDS):
            service = InMemorySessionService()
            await service.create_session(app_name="bench", user_id="u1", session_id="s", state=state)
            runner = Runner(agent=agent, app_name="bench", session_service=service, model=lambda i, m: "ok")

            async def turns(runner: Runner = runner) -> None:
                for number in range(TURNS):
                    await runner.run(user_id="u1", session_id="s", message="hi", state_delta={"temp:n": number})

            ours.append(await cpu(turns) / TURNS)
            adk = AdkMemory()
            await adk.create_session(app_name="bench", user_id="u1", session_id="s", state=state)

            async def adk_turns(adk: Any = adk, round_number: int = round_number) -> None:
                for number in range(TURNS):
                    session = await adk.get_session(app_name="bench", user_id="u1", session_id="s")
                    delta = {"temp:n": number}
                    await adk.append_event(session, AdkEvent(author="user", actions=AdkActions(state_delta=delta)))
                    reply = {"reply": "ok"}
                    await adk.append_event(session, AdkEvent(author="bot", actions=AdkActions(state_delta=reply)))

            theirs.append(await cpu(adk_turns) / TURNS)
        mine, adk_time = statistics.median(ours), statistics.median(theirs)
        base = base if base is not None else mine
        print(
            f"  {size:>6,} keys: our turn {mine * 1e6:8.0f} us = {mine / base:5.2f} x our turn at {sizes[0]} keys "
            f"(target <= 1.5); ADK's session work {adk_time * 1e6:8.0f} us, ours / ADK = {mine / adk_time:5.2f}"
        )


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


async def main(sizes: tuple[int, ...], *, memory_only: bool = False) -> None:
    from google.adk.sessions import DatabaseSessionService as AdkDatabase
    from google.adk.sessions import InMemorySessionService as AdkMemory

    from templating import DatabaseSessionService, InMemorySessionService

    print(f"append_event, one key per event, {APPENDS} per round, median of {ROUNDS} rounds (CPU time):")
    memory = (Service("in memory", InMemorySessionService(), False), Service("ADK in memory", AdkMemory(), True))
    await compare_appends([memory], sizes, alone=True)
    if memory_only:
        return
    folder = Path(tempfile.mkdtemp(prefix="bench-sessions-"))
    sqlite = (
        Service("SQLite file", DatabaseSessionService(f"sqlite+aiosqlite:///{folder / 'ours.db'}"), False),
        Service("ADK SQLite file", AdkDatabase(f"sqlite+aiosqlite:///{folder / 'adk.db'}"), True),
    )
    try:
        await compare_appends([sqlite], sizes)
    finally:
        for service in sqlite:
            await service.close()

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from pg_server import PostgresServer, find_binaries

    binaries = find_binaries()
    if binaries is None:
        print("  PostgreSQL: skipped, no binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin")
    else:
        server = await asyncio.to_thread(PostgresServer.start, binaries)
        try:
            urls = [await asyncio.to_thread(server.create_database, name) for name in ("bench_ours", "bench_adk")]
            postgres = (
                Service("PostgreSQL", DatabaseSessionService(urls[0]), False),
                Service("ADK PostgreSQL", AdkDatabase(urls[1]), True),
            )
            try:
                await compare_appends([postgres], sizes)
            finally:
                for service in postgres:
                    await service.close()
        finally:
            await asyncio.to_thread(server.stop)

    print(f"\nA Runner turn in memory, {TURNS} per round, median of {ROUNDS} rounds (CPU time):")
    await turn_curve(sizes)


if __name__ == "__main__":
    missing = [name for name in ("sqlalchemy", "aiosqlite", "asyncpg", "google.adk") if not _importable(name)]
    if missing:
        sys.exit(f"bench_sessions needs {', '.join(missing)}: pip install -e '.[dev,adk,sql]'")
    warnings.simplefilter("ignore")  # ADK's experimental-feature warnings are not what is measured
    logging.disable(logging.WARNING)
    asyncio.run(main(SIZES[:2] if "--quick" in sys.argv else SIZES, memory_only="--memory" in sys.argv))
