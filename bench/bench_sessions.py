"""State at scale: create, get, append and a Runner turn against Google ADK's session services, at 10, 2,000 and
20,000 keys of state.

Run: python bench/bench_sessions.py [--quick] [--memory]   (needs the sql and adk extras: pip install -e ".[adk,sql]")

In one process, for each size of state (short strings, every tenth value a small dict with a list, plus an
``app:`` and a ``user:`` key), on each kind of service: ours against ADK's of the same kind (in memory:
both ``InMemorySessionService``; a SQLite file and a database on a PostgreSQL server: both
``DatabaseSessionService``; the server is a throw-away one started from its binaries by tests/pg_server.py,
skipped with a note without them), this times:

- ``create_session`` with that state (target: at most ADK's time at every size);
- ``get_session`` of that session, its whole state (target: at most 0.5 of ADK's at 2,000 and 20,000);
- ``append_event`` of one event writing one key, through the caller's copy: making the event (each
  library's own ``Event``) and appending it, what a caller does (no target but "no worse than before";
  in memory a second line times the ``append_event`` calls alone, the events made beforehand).

Then a ``Runner`` turn (read what the instruction needs, render, two events appended) on each of our
services at each size, against our own turn at 10 keys on that service (target: at most 1.5), and against
ADK's session work for a turn on its service of the same kind (``get_session`` and two ``append_event``:
ADK's Runner needs a model, so only its session work is timed).

Times are wall-clock (so the PostgreSQL server's work is in them, not only this process's). Each call of ours
is timed next to the same call of ADK's (which of the two goes first alternates), so that both meet the same
load of a shared machine; a line gives the median time of each (60 calls each at 10 keys, 21 at 2,000, 9 at
20,000) and their ratio. The garbage collector runs as it does
in use, after a collection before each round. Compare ratios, not absolute numbers, between machines. The
Runner turns keep the best of rounds.

``--quick`` leaves out 20,000 keys; ``--memory`` times only the in-memory service.
"""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import itertools
import logging
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SIZES = (10, 2_000, 20_000)
ROUNDS = 5  # of Runner turns
QUICK = "--quick" in sys.argv
APPENDS = 20  # per batch
TURNS = 10  # per batch
TARGETS = {"create": 1.0, "get": 0.5}  # ours / ADK, at most (get: from 2,000 keys)
TURN_TARGET = 1.5  # a turn at any size against our turn at 10 keys
_IDS = itertools.count(1)  # session ids, never used twice in a run


def state_of(size: int) -> dict[str, Any]:
    state: dict[str, Any] = {"app:brand": "Acme", "user:name": "Ada", "order_id": "A-1"}
    for number in range(size - len(state)):
        state[f"k{number}"] = {"id": number, "tags": ["a", "b"]} if number % 10 == 0 else f"value {number}"
    return state


def batch(size: int) -> int:
    """How many creates or gets a round makes at this size: a few milliseconds of work at least."""
    return 20 if size < 100 else 3 if size < 10_000 else 1


def rounds(size: int) -> int:
    """How many rounds time create, get and append at this size: 60 pairs of creates and gets at 10 keys, 21
    at 2,000, 9 at 20,000 (fewer with --quick)."""
    count = 3 if size < 100 else 7 if size < 10_000 else 9
    return max(1, count // 3) if QUICK else count


class Service:
    """One session service under test (ours or ADK's): sessions of one app and user, each with a new id."""

    def __init__(self, name: str, service: Any, adk: bool) -> None:
        self.name, self.service, self.adk = name, service, adk

    @staticmethod
    def new_id() -> str:
        return f"s{next(_IDS)}"

    async def create(self, state: dict[str, Any], session_id: str | None = None) -> Any:
        return await self.service.create_session(
            app_name="bench", user_id="u1", session_id=session_id or self.new_id(), state=state
        )

    async def get(self, session_id: str) -> Any:
        return await self.service.get_session(app_name="bench", user_id="u1", session_id=session_id)

    def event(self, number: int, delta: dict[str, Any] | None = None, author: str = "user") -> Any:
        """The event an append appends: the service's own event class, writing one key."""
        delta = {"step": number} if delta is None else delta
        if self.adk:
            from google.adk.events import Event as AdkEvent
            from google.adk.events import EventActions as AdkActions

            return AdkEvent(invocation_id="i", author=author, actions=AdkActions(state_delta=delta))
        from templating import Event, EventActions

        return Event(invocation_id="i", author=author, actions=EventActions(state_delta=delta))

    async def close(self) -> None:
        close = getattr(self.service, "close", None)
        if close is not None:
            await close()


async def wall(work: Callable[[], Awaitable[Any]]) -> float:
    gc.collect()
    start = time.perf_counter()
    await work()
    return time.perf_counter() - start


async def timed(work: Awaitable[Any]) -> float:
    start = time.perf_counter()
    await work
    return time.perf_counter() - start


@dataclass
class Times:
    """Seconds of each call of each operation, ours and ADK's: calls made side by side share an index."""

    ours: dict[str, list[float]] = field(default_factory=lambda: {what: [] for what in OPERATIONS})
    adk: dict[str, list[float]] = field(default_factory=lambda: {what: [] for what in OPERATIONS})


OPERATIONS = ("create", "get", "append", "append alone")


async def side_by_side(
    pair: tuple[Service, Service], state: dict[str, Any], size: int, times: Times, turn: int
) -> None:
    """One round: a batch of creates with `state`, gets of each, and appends to the last session, each call of
    ours next to the same call of ADK's (which goes first alternates call by call), each call timed alone."""
    count = batch(size)
    services = {"ours": pair[0], "adk": pair[1]}
    ids = {name: [service.new_id() for _ in range(count)] for name, service in services.items()}
    sessions: dict[str, Any] = {}
    alone = pair[0].name == "in memory"

    def order(number: int) -> list[str]:
        return ["ours", "adk"] if (turn + number) % 2 == 0 else ["adk", "ours"]

    async def record(what: str, number: int, call: Callable[[str], Awaitable[Any]]) -> None:
        for name in order(number):
            getattr(times, name)[what].append(await timed(call(name)))

    gc.collect()
    for number in range(count):

        async def create(name: str, number: int = number) -> None:
            sessions[name] = await services[name].create(state, ids[name][number])

        await record("create", number, create)
    for number in range(count):
        await record("get", number, lambda name, number=number: services[name].get(ids[name][number]))
    for number in range(APPENDS):

        async def append(name: str, number: int = number) -> None:
            service = services[name]
            await service.service.append_event(sessions[name], service.event(number))

        await record("append", number, append)
    if alone:
        made = {name: [service.event(number) for number in range(APPENDS)] for name, service in services.items()}
        for number in range(APPENDS):
            await record(
                "append alone",
                number,
                lambda name, number=number: services[name].service.append_event(sessions[name], made[name][number]),
            )


def ratio_line(what: str, size: int, mine: list[float], theirs: list[float], target: float | None) -> str:
    """The medians of our calls and of ADK's, and their ratio."""
    ours, adk = statistics.median(mine), statistics.median(theirs)
    verdict = ""
    if target is not None:
        verdict = f"  (target <= {target:g}: {'met' if ours / adk <= target else 'NOT met'})"
    return (
        f"    {what:<12} {size:>6,} keys: ours {_ms(ours)}, ADK {_ms(adk)}; ours / ADK = {ours / adk:5.2f} "
        f"({len(mine)} calls each){verdict}"
    )


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:9.3f} ms"


async def compare(pair: tuple[Service, Service], sizes: tuple[int, ...]) -> None:
    ours, adk = pair
    print(f"  {ours.name} against {adk.name}:")
    await ours.create(state_of(10))  # tables created and the pool opened outside the timings
    await adk.create(state_of(10))
    for size in sizes:
        state = state_of(size)
        times = Times()
        for turn in range(rounds(size)):
            await side_by_side(pair, state, size, times, turn)
        for what in OPERATIONS:
            if not times.ours[what]:
                continue
            target = TARGETS.get(what)
            if what == "get" and size < 2_000:
                target = None
            print(ratio_line(what, size, times.ours[what], times.adk[what], target))


AGENT_INSTRUCTION = "Hello <user:name>, about order <order_id>."


async def turns(runner: Any, session_id: str) -> None:
    for number in range(TURNS):
        await runner.run(user_id="u1", session_id=session_id, message="hi", state_delta={"temp:n": number})


async def adk_turns(adk: Service, session_id: str) -> None:
    """ADK's session work for a turn: read the session, append the user's event and the model's."""
    for number in range(TURNS):
        current = await adk.get(session_id)
        await adk.service.append_event(current, adk.event(number, {"temp:n": number}))
        await adk.service.append_event(current, adk.event(number, {"reply": "ok"}, "bot"))


async def turn_curve(name: str, ours: Service, adk: Service, sizes: tuple[int, ...]) -> None:
    """A Runner turn on one of our services at each size, against ADK's session work on its service of the
    same kind."""
    from templating import Agent, Runner

    agent = Agent(name="bot", instruction=AGENT_INSTRUCTION, output_key="reply")
    runner = Runner(agent=agent, app_name="bench", session_service=ours.service, model=lambda i, m: "ok")
    base: float | None = None
    print(f"  turns on {name}:")
    for size in sizes:
        state = state_of(size)
        mine: list[float] = []
        theirs: list[float] = []
        for _ in range(ROUNDS):
            session = await ours.create(state)
            mine.append(await wall(lambda session_id=session.id: turns(runner, session_id)) / TURNS)
            adk_session = await adk.create(state)
            theirs.append(await wall(lambda session_id=adk_session.id: adk_turns(adk, session_id)) / TURNS)
        turn, adk_time = min(mine), min(theirs)
        base = base if base is not None else turn
        verdict = "met" if turn / base <= TURN_TARGET else "NOT met"
        print(
            f"    {size:>6,} keys: our turn {_ms(turn)} = {turn / base:5.2f} x our turn at {sizes[0]} keys "
            f"(target <= {TURN_TARGET:g}: {verdict}); ADK's session work {_ms(adk_time)}, "
            f"ours / ADK = {turn / adk_time:5.2f}"
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

    print(
        f"create_session, get_session ({batch(10) * rounds(10)}, {batch(2_000) * rounds(2_000)}, "
        f"{batch(20_000) * rounds(20_000)} calls at 10, 2,000, 20,000 keys), append_event ({APPENDS} calls a "
        "round, one key each): wall-clock time per call, the median; each call of ours next to the same call of "
        "ADK's (which goes first alternates)"
    )
    kinds: list[tuple[str, Any, Any]] = [("in memory", InMemorySessionService(), AdkMemory())]
    await compare((Service(*kinds[0][:2], False), Service("ADK in memory", kinds[0][2], True)), sizes)
    server = None
    opened: list[Any] = []
    try:
        if not memory_only:
            folder = Path(tempfile.mkdtemp(prefix="bench-sessions-"))
            ours = DatabaseSessionService(f"sqlite+aiosqlite:///{folder / 'ours.db'}")
            theirs = AdkDatabase(f"sqlite+aiosqlite:///{folder / 'adk.db'}")
            opened += [ours, theirs]
            kinds.append(("SQLite file", ours, theirs))
            await compare((Service("SQLite file", ours, False), Service("ADK SQLite file", theirs, True)), sizes)

            sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
            from pg_server import PostgresServer, find_binaries

            binaries = find_binaries()
            if binaries is None:
                print("  PostgreSQL: skipped, no binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin")
            else:
                server = await asyncio.to_thread(PostgresServer.start, binaries)
                urls = [await asyncio.to_thread(server.create_database, name) for name in ("bench_ours", "bench_adk")]
                ours, theirs = DatabaseSessionService(urls[0]), AdkDatabase(urls[1])
                opened += [ours, theirs]
                kinds.append(("PostgreSQL", ours, theirs))
                await compare((Service("PostgreSQL", ours, False), Service("ADK PostgreSQL", theirs, True)), sizes)

        print(
            f"\nA Runner turn, instruction {AGENT_INSTRUCTION!r}, {TURNS} turns per round, wall-clock time per "
            f"turn, the best of {ROUNDS} rounds:"
        )
        for name, ours_service, adk_service in kinds:
            await turn_curve(name, Service(name, ours_service, False), Service(name, adk_service, True), sizes)
    finally:
        for service in opened:
            await service.close()
        if server is not None:
            await asyncio.to_thread(server.stop)


if __name__ == "__main__":
    missing = [name for name in ("sqlalchemy", "aiosqlite", "asyncpg", "google.adk") if not _importable(name)]
    if missing:
        sys.exit(f"bench_sessions needs {', '.join(missing)}: pip install -e '.[dev,adk,sql]'")
    warnings.simplefilter("ignore")  # ADK's experimental-feature warnings are not what is measured
    logging.disable(logging.WARNING)
    asyncio.run(main(SIZES[:2] if QUICK else SIZES, memory_only="--memory" in sys.argv))
