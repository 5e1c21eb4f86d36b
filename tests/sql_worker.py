"""A worker process for tests/test_sql_sessions.py: ``python sql_worker.py MODE URL [ARGS]``.

It opens a DatabaseSessionService on URL, prints ``ready``, waits for a line on stdin (so that
every worker starts at once), then:

- ``bump URL WORKER EACH``: EACH times, increment ``count`` (its session: s1 or s2 by WORKER),
  ``user:visits`` (shared by both sessions) and ``app:total`` from a fresh read, retrying on
  StaleSessionError; and write a key of its own from a copy read once at the start (stale at once,
  but its keys are its own). Prints the number of retries.
- ``stream URL``: append batches of three events to session ``stream`` forever, each batch
  writing ``n`` (its number), ``user:n`` and one ``kN-i`` key per event; prints N after batch N
  is committed. The test kills it with SIGKILL.
- ``open URL NUMBER``: prints ``ready`` before its service touches the database, so that every worker
  prepares it at once (`first_use`); prints what it read and how many upgrade statements it ran, as JSON.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from templating import DatabaseSessionService, Event, EventActions, GetSessionConfig, StaleSessionError

APP, USER = "app", "ada"
# How long to wait for a connection, or for another process's SQLite write lock: far longer than a busy
# machine takes (the default 10 s is for users), so only a real hang fails the test.
LIVENESS = 300.0


def event(delta: dict[str, object], event_id: str) -> Event:
    return Event(id=event_id, author="worker", actions=EventActions(state_delta=delta))


async def bump(service: DatabaseSessionService, worker: int, each: int) -> int:
    session_id = "s1" if worker % 2 else "s2"
    own = await service.get_session(app_name=APP, user_id=USER, session_id=session_id)
    assert own is not None
    retries = 0
    for step in range(each):
        while True:
            config = GetSessionConfig(num_recent_events=0)
            copy = await service.get_session(app_name=APP, user_id=USER, session_id=session_id, config=config)
            assert copy is not None
            delta = {
                "count": copy.state["count"] + 1,
                "user:visits": copy.state["user:visits"] + 1,
                "app:total": copy.state["app:total"] + 1,
            }
            try:
                await service.append_event(copy, event(delta, f"bump-{worker}-{step}"))
            except StaleSessionError:
                retries += 1
            else:
                break
        # A disjoint delta from a copy that every other worker has made stale: it merges.
        await service.append_event(own, event({f"k{worker}-{step}": step}, f"own-{worker}-{step}"))
    return retries


async def stream(service: DatabaseSessionService) -> None:
    session = await service.get_session(app_name=APP, user_id=USER, session_id="stream")
    assert session is not None
    number = session.state.get("n", 0)
    while True:
        number += 1
        batch = [
            event({"n": number, "user:n": number, f"k{number}-{part}": part}, f"e{number}-{part}") for part in range(3)
        ]
        await service.append_events(session, batch)
        print(number, flush=True)


async def everything(service: Any) -> list[Any]:
    """Each session of app "app" as stored (state, and each event's delta), and a user's state."""
    found = []
    for listed in await service.list_sessions(app_name="app"):
        session = await service.get_session(app_name="app", user_id=listed.user_id, session_id=listed.id)
        deltas = [stored.actions.state_delta for stored in session.events]
        found.append((listed.user_id, listed.id, listed.state, session.state, deltas))
    return [*found, await service.get_user_state(app_name="app", user_id="ada")]


# What only the upgrade from schema version 3 runs (templating/sessions/sql/schema.py, `prepare`).
UPGRADE = "ADD COLUMN initial"


@contextmanager
def counting_upgrades() -> Iterator[list[str]]:
    """The upgrade statements run by every engine of this process (on any thread) while in the block."""
    import sqlalchemy as sa

    ran: list[str] = []

    def seen(conn: Any, cursor: Any, statement: str, *rest: Any) -> None:
        if UPGRADE in statement:
            ran.append(statement)  # one call: safe from any thread

    sa.event.listen(sa.engine.Engine, "before_cursor_execute", seen)
    try:
        yield ran
    finally:
        sa.event.remove(sa.engine.Engine, "before_cursor_execute", seen)


async def first_use(service: Any, number: int) -> list[Any]:
    """A service's first calls, which prepare the database: every session of app "app" read (as `everything`),
    then a session of its own created in app "new"."""
    found = await everything(service)
    await service.create_session(app_name="new", user_id=USER, session_id=f"s{number}", state={"n": number})
    return found


async def main(mode: str, url: str, args: list[str]) -> None:
    async with DatabaseSessionService(url, timeout=LIVENESS) as service:
        if mode == "open":
            print("ready", flush=True)
            sys.stdin.readline()
            with counting_upgrades() as ran:
                found = await first_use(service, int(args[0]))
            print(json.dumps({"found": found, "upgrades": len(ran)}), flush=True)
            return
        await service.list_sessions(app_name=APP)  # open: tables checked before "ready"
        print("ready", flush=True)
        sys.stdin.readline()
        if mode == "bump":
            print(await bump(service, int(args[0]), int(args[1])), flush=True)
        else:
            await stream(service)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
