"""DatabaseSessionService beyond the contract suite (tests/test_sessions.py runs that against it):
many OS processes and service objects on one database, a writer killed mid-stream, bad URLs and
unreachable servers, the schema version. Each test runs on a SQLite file and on a throw-away
PostgreSQL server (tests/conftest.py)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import pickle
import signal
import socket
import sqlite3
import subprocess
import sys
import traceback
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar, cast

import pytest
from conftest import LIVENESS, missing_sql_extra, skip_or_fail
from sql_worker import counting_upgrades, everything, first_use

from templating import Event, EventActions, SessionStoreError, StaleSessionError, TemplatingError

T = TypeVar("T")
APP, USER = "app", "ada"  # as in tests/sql_worker.py
WORKER = Path(__file__).with_name("sql_worker.py")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def event(delta: dict[str, Any], **fields: Any) -> Event:
    return Event(author="test", actions=EventActions(state_delta=delta), **fields)


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty database of each kind."""
    missing = missing_sql_extra()
    if missing:
        skip_or_fail(missing)
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}"
    server = request.getfixturevalue("postgres")
    return str(server.fresh_database("sql_sessions"))


def service_on(url: str) -> Any:
    from templating import DatabaseSessionService

    return DatabaseSessionService(url)


async def seed(url: str, sessions: dict[str, dict[str, Any]]) -> None:
    async with service_on(url) as service:
        for session_id, state in sessions.items():
            await service.create_session(app_name=APP, user_id=USER, session_id=session_id, state=state)


async def read(url: str, session_id: str) -> Any:
    async with service_on(url) as service:
        return await service.get_session(app_name=APP, user_id=USER, session_id=session_id)


# --- several OS processes on one database ---------------------------------------------------


def start_workers(url: str, *argument_lists: list[str]) -> list[subprocess.Popen[str]]:
    """Start workers, wait until each has opened the database, then let them all go at once."""
    workers = [
        subprocess.Popen(
            [sys.executable, str(WORKER), *arguments[:1], url, *arguments[1:]],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for arguments in argument_lists
    ]
    for worker in workers:
        assert worker.stdout is not None
        assert worker.stdin is not None
        line = worker.stdout.readline()
        assert line == "ready\n", worker.stderr.read() if worker.stderr else line
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.write("go\n")
        worker.stdin.flush()
    return workers


# Every bump of every process writes app:total and user:visits: 4 processes x 10 bumps contend at every
# step (the test asserts stale copies were refused). Without the row locks (PostgreSQL) or the write lock
# taken at BEGIN (SQLite), or without the staleness rule, the test fails at these sizes; retries grow with
# the square of the processes, so the sizes stay small.
PROCESSES, EACH = 4, 10


@pytest.mark.slow
def test_processes_appending_to_shared_sessions_lose_nothing_and_store_nothing_twice(url: str) -> None:
    run(seed(url, {"s1": {"count": 0, "user:visits": 0, "app:total": 0}, "s2": {"count": 0}}))
    workers = start_workers(url, *[["bump", str(worker), str(EACH)] for worker in range(PROCESSES)])
    retries = 0
    for worker in workers:
        out, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err
        retries += int(out.split()[-1])
    assert retries > 0  # the processes really contended: stale copies were refused, then retried
    first, second = run(read(url, "s1")), run(read(url, "s2"))
    half = PROCESSES // 2 * EACH
    assert (first.state["count"], second.state["count"]) == (half, half)  # every increment, none twice
    assert first.state["user:visits"] == second.state["user:visits"] == PROCESSES * EACH
    assert first.state["app:total"] == PROCESSES * EACH
    for stored, workers_of_it in ((first, range(1, PROCESSES, 2)), (second, range(0, PROCESSES, 2))):
        expected = {f"{kind}-{w}-{step}" for kind in ("bump", "own") for w in workers_of_it for step in range(EACH)}
        ids = [e.id for e in stored.events]
        assert len(ids) == len(set(ids)) == len(expected)
        assert set(ids) == expected
        # The disjoint keys written from copies gone stale at once all merged.
        assert {key for key in stored.state if key.startswith("k")} == {
            f"k{w}-{step}" for w in workers_of_it for step in range(EACH)
        }


def test_two_services_on_one_database_keep_the_staleness_rule(url: str) -> None:
    async def scenario() -> None:
        async with service_on(url) as one, service_on(url) as two:
            await one.create_session(app_name=APP, user_id=USER, session_id="s1", state={"a": 0, "user:v": 0})
            await one.create_session(app_name=APP, user_id=USER, session_id="s2")
            mine = await one.get_session(app_name=APP, user_id=USER, session_id="s1")
            theirs = await two.get_session(app_name=APP, user_id=USER, session_id="s1")
            other = await two.get_session(app_name=APP, user_id=USER, session_id="s2")
            assert mine is not None
            assert theirs is not None
            assert other is not None
            await two.append_event(theirs, event({"a": 1}))
            with pytest.raises(StaleSessionError, match="'a'") as info:
                await one.append_event(mine, event({"a": 2, "b": 1}))
            assert info.value.keys == ("a",)
            await one.append_event(mine, event({"b": 1}))  # a disjoint delta merges
            await two.append_event(other, event({"user:v": other.state["user:v"] + 1}))
            with pytest.raises(StaleSessionError, match="'user:v'"):  # s2 changed user:v after mine was read
                await one.append_event(mine, event({"user:v": mine.state["user:v"] + 1}))
            fresh = await one.get_session(app_name=APP, user_id=USER, session_id="s1")
            assert fresh is not None
            await one.append_event(fresh, event({"user:v": fresh.state["user:v"] + 1}))
            stored = await two.get_session(app_name=APP, user_id=USER, session_id="s1")
            assert stored is not None
            assert stored.state == {"a": 1, "b": 1, "user:v": 2}
            assert len(stored.events) == 3

    run(scenario())


# --- durability -----------------------------------------------------------------------------


@pytest.mark.slow
def test_a_writer_killed_mid_stream_leaves_every_session_as_of_its_last_completed_append(url: str) -> None:
    run(seed(url, {"stream": {"n": 0}, "other": {"keep": [1, 2]}}))
    (writer,) = start_workers(url, ["stream"])
    assert writer.stdout is not None
    completed = 0
    try:
        while completed < 20:
            line = writer.stdout.readline()
            assert line, writer.stderr.read() if writer.stderr else "the writer stopped"
            completed = int(line)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=60)
        for stream in (writer.stdin, writer.stdout, writer.stderr):
            if stream is not None:
                stream.close()
    stored = run(read(url, "stream"))
    number = stored.state["n"]
    assert completed <= number <= completed + 1  # the batch in flight is all there, or not at all
    assert stored.state["user:n"] == number
    assert [e.id for e in stored.events] == [f"e{n}-{part}" for n in range(1, number + 1) for part in range(3)]
    assert {key for key in stored.state if key.startswith("k")} == {
        f"k{n}-{part}" for n in range(1, number + 1) for part in range(3)
    }
    assert run(read(url, "other")).state == {"keep": [1, 2], "user:n": number}

    # The database takes writes again, from a fresh read.
    async def append_once() -> None:
        async with service_on(url) as service:
            session = await service.get_session(app_name=APP, user_id=USER, session_id="stream")
            await service.append_event(session, event({"n": number + 1}))

    run(append_once())
    assert run(read(url, "stream")).state["n"] == number + 1


# --- bad URLs, unreachable databases --------------------------------------------------------


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("given", "shown", "message"),
    [
        ("mysql+aiomysql://ada:s3cret@db/x", "mysql+aiomysql://ada:***@db/x", "unsupported database URL"),
        ("postgresql://ada:s3cret@db/x", "postgresql://ada:***@db/x", "not postgresql"),
        ("sqlite:///sessions.db", "sqlite:///sessions.db", "not sqlite"),
        ("not a url s3cret", "***", "is not a database URL"),
    ],
    ids=["other-database", "sync-postgres-driver", "sync-sqlite-driver", "not-a-url"],
)
def test_an_unsupported_url_is_refused_with_its_password_masked(given: str, shown: str, message: str) -> None:
    missing = missing_sql_extra()
    if missing:
        skip_or_fail(missing)
    with pytest.raises(SessionStoreError, match=message) as info:
        service_on(given)
    assert isinstance(info.value, TemplatingError)
    assert info.value.url == shown
    assert shown in str(info.value)
    assert "s3cret" not in str(info.value)
    assert info.value.help
    copy = pickle.loads(pickle.dumps(info.value))
    assert (type(copy), str(copy), copy.url) == (SessionStoreError, str(info.value), shown)


@pytest.mark.parametrize("kind", ["postgresql-closed-port", "sqlite-missing-directory"])
def test_an_unreachable_database_is_a_clear_error_naming_the_url(kind: str, tmp_path: Path) -> None:
    missing = missing_sql_extra()
    if missing:
        skip_or_fail(missing)
    if kind.startswith("postgresql"):
        port = closed_port()
        given = f"postgresql+asyncpg://ada:s3cret@127.0.0.1:{port}/sessions"
        shown = f"postgresql+asyncpg://ada:***@127.0.0.1:{port}/sessions"
    else:
        given = shown = f"sqlite+aiosqlite:///{tmp_path / 'no-such-dir' / 'sessions.db'}"

    async def attempt() -> None:
        async with service_on(given) as service:
            with pytest.raises(SessionStoreError, match="failed") as info:
                await service.create_session(app_name=APP, user_id=USER, session_id="s1")
            assert shown in str(info.value)
            assert "s3cret" not in str(info.value)
            assert info.value.url == shown

    run(attempt())
    assert not (tmp_path / "no-such-dir").exists()  # nothing was created


CONNECT_FAILURES = [
    # kind, first line of the message (after the quoted URL), a piece of the help
    (
        "sqlite-missing-folder",
        "failed: unable to open database file (its folder '{tmp}/no-such-dir' does not exist)",
        "the folder must exist; the file is created, not its folder",
    ),
    (
        "sqlite-locked",
        "failed: database is locked",
        "another process held the write lock longer than timeout=0.2 seconds; raise timeout",
    ),
    ("postgresql-closed-port", "failed: ", "check that the database is reachable"),
    (
        "postgresql-sslmode",
        "cannot connect to the session database {shown!r}: the driver takes no URL option 'sslmode'",
        "asyncpg spells it ssl=: use ?ssl=require",
    ),
    ("postgresql-port-out-of-range", "port must be 0-65535", "check the URL's port (0-65535)"),
]


@pytest.mark.parametrize(("kind", "message", "help"), CONNECT_FAILURES, ids=[c[0] for c in CONNECT_FAILURES])
def test_a_failure_to_connect_says_why_in_one_message_with_help_for_its_cause(
    kind: str, message: str, help: str, tmp_path: Path
) -> None:
    missing = missing_sql_extra()
    if missing:
        skip_or_fail(missing)
    queries = {"postgresql-sslmode": "?sslmode=require"}
    port = {"postgresql-closed-port": closed_port(), "postgresql-port-out-of-range": 99999}.get(kind, 5432)
    given = f"postgresql+asyncpg://ada:s3cret@127.0.0.1:{port}/sessions{queries.get(kind, '')}"
    shown = given.replace(":s3cret@", ":***@")
    folder = tmp_path / ("no-such-dir" if kind == "sqlite-missing-folder" else "")
    if kind.startswith("sqlite"):
        given = shown = f"sqlite+aiosqlite:///{folder / 'sessions.db'}"
    holder = None
    if kind == "sqlite-locked":
        run(seed(given, {"s0": {}}))
        holder = sqlite3.connect(folder / "sessions.db", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another process holding the write lock

    async def attempt() -> SessionStoreError:
        from templating import DatabaseSessionService

        async with DatabaseSessionService(given, timeout=0.2) as service:
            with pytest.raises(SessionStoreError) as info:
                await service.create_session(app_name=APP, user_id=USER, session_id="s1")
            return info.value

    try:
        error = run(attempt())
    finally:
        if holder is not None:
            holder.close()
    first, *rest = str(error).splitlines()
    assert first.startswith(f"the session database {shown!r} ") or first.startswith(
        f"cannot connect to the session database {shown!r}: "
    )
    assert message.format(tmp=tmp_path, shown=shown) in first
    assert help in rest[-1]
    assert "s3cret" not in str(error)
    assert error.url == shown
    # Raised from None: the driver's traceback is not printed before ours, but stays reachable.
    assert error.__cause__ is None
    assert error.__suppress_context__
    assert error.__context__ is not None
    printed = "".join(traceback.format_exception(error))
    assert "During handling" not in printed
    assert "direct cause" not in printed
    assert not (tmp_path / "no-such-dir").exists()  # nothing was created


def test_a_wrong_password_is_a_clear_error_with_the_password_masked(postgres: Any) -> None:
    given = postgres.url("postgres").replace(":pg-secret-7@", ":wrong-s3cret@")

    async def attempt() -> None:
        async with service_on(given) as service:
            with pytest.raises(SessionStoreError, match="password") as info:
                await service.list_sessions(app_name=APP)
            assert "wrong-s3cret" not in str(info.value)
            assert ":***@" in str(info.value)

    run(attempt())


def test_a_turn_reads_only_the_keys_its_instruction_reads(url: str) -> None:
    """What a Runner turn is given when it knows its keys: the session's row and the rows of those keys (of each
    scope, keys of any length), not the rest of the state; without keys, the whole state."""
    long_key = "k" * 300
    state = {"a": 1, "b": [2], "user:c": 3, "app:d": 4, "user:e": 5, long_key: 6, "temp:t": 7}

    async def scenario() -> None:
        async with service_on(url) as service:
            await service.create_session(app_name=APP, user_id=USER, session_id="s1", state=state)
            keys = ("a", "user:c", "app:d", "app:nope", long_key, "temp:t")
            turn, settled = await service._turn_session(app_name=APP, user_id=USER, session_id="s1", keys=keys)
            assert turn is not None
            assert turn.state == {"a": 1, "user:c": 3, "app:d": 4, long_key: 6}
            assert turn.events == []
            assert settled()
            whole, _ = await service._turn_session(app_name=APP, user_id=USER, session_id="s1")
            assert whole is not None
            assert whole.state == {key: value for key, value in state.items() if key != "temp:t"}
            # the turn's copy appends as any copy does
            await service.append_event(turn, Event(author="a", actions=EventActions(state_delta={"b": [3]})))
            assert turn.state == {"a": 1, "b": [3], "user:c": 3, "app:d": 4, long_key: 6}
            none, _ = await service._turn_session(app_name=APP, user_id=USER, session_id="nope", keys=keys)
            assert none is None

    run(scenario())


@pytest.mark.parametrize("version", [(3, 37, 2), None], ids=["sqlite-before-3.38", "this-sqlite"])
def test_a_turn_finds_its_keys_in_the_created_document_on_any_sqlite(
    version: tuple[int, ...] | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SQLite before 3.38 has no `->`: a turn then finds each key with json_extract, values as written."""
    import types

    from templating.sessions.sql import state_rows

    if missing_sql_extra():
        skip_or_fail(missing_sql_extra() or "")
    if version is not None:
        monkeypatch.setattr(state_rows, "sqlite3", types.SimpleNamespace(sqlite_version_info=version))
    state = {"f": 0.1 + 0.2, "big": 1e300, "n": None, "s": 'a "q" ключ', "d": {"x": [1.0, None]}, "a.b": 1, "z": 0}
    keys = ("f", "big", "n", "s", "d", "a.b", "nope")

    async def scenario() -> None:
        async with service_on(f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}") as service:
            await service.create_session(app_name=APP, user_id=USER, session_id="s1", state=state)
            turn, _ = await service._turn_session(app_name=APP, user_id=USER, session_id="s1", keys=keys)
            assert turn is not None
            assert turn.state == {key: state[key] for key in keys if key in state}
            assert type(turn.state["big"]) is float

    run(scenario())


REFUSING_TRIGGERS = {
    "sqlite": [
        "CREATE TRIGGER refuse BEFORE INSERT ON templating_sessions BEGIN SELECT RAISE(ABORT, 'no sessions today'); END"
    ],
    "postgresql": [
        "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE 'no sessions today'; END $$",
        "CREATE TRIGGER refuse BEFORE INSERT ON templating_sessions FOR EACH ROW EXECUTE FUNCTION refuse()",
    ],
}


def test_a_statement_the_database_refuses_is_said_so_and_not_blamed_on_the_url(url: str) -> None:
    """The database was reached and refused a statement (here a trigger of its owner's): the help says so,
    not to check that the server is reachable or the URL right."""
    run(seed(url, {"s0": {"a": 1}}))
    for statement in REFUSING_TRIGGERS["sqlite" if url.startswith("sqlite") else "postgresql"]:
        run(execute(url, statement))

    async def attempt() -> SessionStoreError:
        async with service_on(url) as service:
            with pytest.raises(SessionStoreError) as info:
                await service.create_session(app_name=APP, user_id=USER, session_id="s1", state={"user:b": 2})
            assert [session.id for session in await service.list_sessions(app_name=APP)] == ["s0"]
            assert await service.get_user_state(app_name=APP, user_id=USER) == {}  # nothing was changed
            return info.value

    error = run(attempt())
    first, *rest = str(error).splitlines()
    assert first.startswith(f"the session database {error.url!r} failed: ")
    assert "no sessions today" in first
    assert "was reached and refused the statement" in rest[-1]
    assert "nothing was changed" in rest[-1]
    assert "reachable" not in str(error)
    assert "URL" not in rest[-1]


# --- schema ---------------------------------------------------------------------------------


async def execute(url: str, statement: str) -> list[Any]:
    """Run one SQL statement on the database directly, as another program would."""
    import sqlalchemy as sa
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(url)
    try:
        async with engine.begin() as conn:
            result = await conn.execute(sa.text(statement))
            return list(result.all()) if result.returns_rows else []
    finally:
        await engine.dispose()


def test_tables_are_created_on_first_use_with_a_schema_version_row(url: str) -> None:
    from templating.sessions.sql import SCHEMA_VERSION

    async def scenario() -> None:
        service = service_on(url)  # making the service does not touch the database
        try:
            if url.startswith("sqlite"):
                assert not Path(url.split(":///", 1)[1]).exists()
            await service.create_session(app_name=APP, user_id=USER, session_id="s1", state={"a": 1})
        finally:
            await service.close()

    run(scenario())
    assert run(execute(url, "SELECT name, version FROM templating_schema")) == [("sessions", SCHEMA_VERSION)]
    assert run(read(url, "s1")).state == {"a": 1}


def test_calls_at_once_on_a_new_service_prepare_the_tables_once(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first calls of a service, made at once, wait for one of them to create (or check) the tables: the
    others neither prepare them again nor run before they are there."""
    from templating.sessions.sql import service as sql_service

    prepared: list[str] = []
    real = sql_service.prepare

    async def counted(conn: Any, *args: Any, **kwargs: Any) -> None:
        prepared.append(kwargs["url"])
        await asyncio.sleep(0.05)  # (the others arrive meanwhile)
        await real(conn, *args, **kwargs)

    monkeypatch.setattr(sql_service, "prepare", counted)

    async def scenario() -> None:
        async with service_on(url) as service:
            created = await asyncio.gather(
                *(service.create_session(app_name=APP, user_id=USER, session_id=f"s{i}") for i in range(8))
            )
            assert sorted(session.id for session in created) == [f"s{i}" for i in range(8)]
            assert len(prepared) == 1

    run(scenario())


def test_another_schema_version_is_refused_and_nothing_changes(url: str) -> None:
    from templating.sessions.sql import SCHEMA_VERSION

    run(seed(url, {"s1": {"a": 1}}))
    run(execute(url, "UPDATE templating_schema SET version = 99"))

    async def attempt() -> None:
        async with service_on(url) as service:
            with pytest.raises(SessionStoreError, match="schema version 99") as info:
                await service.create_session(app_name=APP, user_id=USER, session_id="s2")
            assert f"reads version {SCHEMA_VERSION}" in str(info.value)
            assert f"tables in {service.url!r} have" in str(info.value)
            with pytest.raises(SessionStoreError, match="schema version 99"):
                await service.get_session(app_name=APP, user_id=USER, session_id="s1")

    run(attempt())
    assert run(execute(url, "SELECT version FROM templating_schema")) == [(99,)]
    assert run(execute(url, "SELECT session_id FROM templating_sessions")) == [("s1",)]


def test_a_closed_service_refuses_calls(url: str) -> None:
    async def scenario() -> None:
        service = service_on(url)
        await service.close()
        await service.close()  # twice is fine
        with pytest.raises(SessionStoreError, match="is closed") as info:
            await service.list_sessions(app_name=APP)
        assert str(info.value).startswith(f"this DatabaseSessionService ({service.url!r}) is closed")

        async def work() -> None:
            return None

        # a call that passed the open check just before the close reaches a loop that takes no more: refused alike
        with pytest.raises(SessionStoreError, match="is closed") as info:
            await service._runner.run(work())
        assert str(info.value).startswith(f"this DatabaseSessionService ({service.url!r}) is closed")

    run(scenario())


def test_closing_lets_the_calls_running_end_and_refuses_the_next(url: str) -> None:
    """close() while calls run (an application shutting down mid-request): each running call ends as it would
    have (none is left waiting for a loop that stopped), close() returns after them, the next call is refused."""

    async def scenario() -> None:
        await seed(url, {"s1": {f"k{i}": i for i in range(2000)}, "s2": {}, "s3": {}})
        service = service_on(url)
        others = [await service.get_session(app_name=APP, user_id=USER, session_id=name) for name in ("s2", "s3")]
        reads = [
            asyncio.ensure_future(service.get_session(app_name=APP, user_id=USER, session_id="s1")) for _ in range(12)
        ]
        writes = [asyncio.ensure_future(service.append_event(session, event({"n": 1}))) for session in others]
        await asyncio.sleep(0)
        await asyncio.gather(service.close(), service.close())  # (the second waits for the first)
        assert all(call.done() for call in [*reads, *writes])
        assert [len(call.result().state) for call in reads] == [2000] * 12
        assert [call.result().actions.state_delta for call in writes] == [{"n": 1}] * 2
        with pytest.raises(SessionStoreError, match="is closed"):
            await service.get_session(app_name=APP, user_id=USER, session_id="s1")

    run(scenario())
    assert [run(read(url, name)).state for name in ("s2", "s3")] == [{"n": 1}] * 2


def _closing_service(tmp_path: Path) -> Any:
    """A SQLite service that waits 0.4 s for the calls running when it is closed."""
    pytest.importorskip("aiosqlite")
    from templating import DatabaseSessionService

    return DatabaseSessionService(f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}", timeout=0.2, statement_timeout=0.2)


async def _slow_call(service: Any, *, ending: float = 0.0, within: float | None = None) -> asyncio.Future[Any]:
    """A call of `service` that would run 30 s (taking `ending` s to end once cancelled, whoever cancels it; given
    up by its caller after `within` s), once it runs."""
    started = asyncio.Event()
    loop = asyncio.get_running_loop()

    async def slow() -> None:
        loop.call_soon_threadsafe(started.set)
        try:
            await asyncio.sleep(30)
        finally:
            if ending:
                await asyncio.shield(asyncio.sleep(ending))

    call = service._call(slow)
    running = asyncio.ensure_future(call if within is None else asyncio.wait_for(call, within))
    await started.wait()
    return running


def test_a_caller_cancelling_its_call_while_the_service_closes_gets_its_cancel(tmp_path: Path) -> None:
    """A call the shut-down cancelled, slow to end (a roll-back), cancelled meanwhile by its caller too
    (`asyncio.wait_for`): the caller sees its own cancel (a `TimeoutError` here), not the service's error."""

    async def scenario() -> None:
        service = _closing_service(tmp_path)
        running = await _slow_call(service, ending=1.0, within=0.8)
        closing = asyncio.ensure_future(service.close())  # it stops waiting after 0.4 s and cancels the call
        with pytest.raises(TimeoutError):
            await running
        await closing

    run(asyncio.wait_for(scenario(), 20))


def test_closing_after_the_loops_executor_shut_down_still_closes(url: str) -> None:
    """close() hands the shut-down to a thread of the caller's loop; when there is none to be had (the loop's
    executor shut down, as late in an application's exit), it shuts down in place: never half closed."""

    async def scenario() -> Any:
        service = service_on(url)
        await service.list_sessions(app_name=APP)
        await asyncio.get_running_loop().shutdown_default_executor()
        await service.close()
        await service.close()  # the second returns at once: the first is over
        with pytest.raises(SessionStoreError, match="is closed"):
            await service.list_sessions(app_name=APP)
        return service._runner

    runner = run(asyncio.wait_for(scenario(), 30))
    assert runner.shut.is_set()
    assert runner.loop.is_closed()


def test_a_call_handed_over_once_the_loop_stops_taking_calls_fails_at_once() -> None:
    """Between a call's check that its service is open and its handing over, the service may close: the call
    then fails with the service's error (it neither waits for a loop that stopped nor meets a closed one)."""
    from templating.sessions.sql.driver import LoopThread, shut_down

    runner = LoopThread(
        lambda: SessionStoreError("ended", url="sqlite://", help="none"),
        refused=lambda: SessionStoreError("is closed", url="sqlite://", help="none"),
    )

    async def work() -> int:
        return 1

    async def scenario() -> None:
        assert await runner.run(work()) == 1
        runner.stop_taking()
        with pytest.raises(SessionStoreError, match=r"^is closed"):  # refused, not ended while it ran
            await runner.run(work())
        shut_down(runner, cast(Any, _Disposable()))
        assert runner.shut.is_set()
        assert runner.loop.is_closed()
        with pytest.raises(SessionStoreError, match=r"^is closed"):
            await runner.run(work())

    run(scenario())


class _Disposable:
    """An engine with nothing to dispose of."""

    async def dispose(self) -> None:
        return None


def test_a_service_dropped_without_closing_is_collected_and_stops_its_loop(url: str) -> None:
    """Nothing the service's loop or its shut-down holds refers back to the service: dropped, it is collected,
    and its loop's thread ends."""
    import gc
    import weakref

    async def scenario() -> tuple[weakref.ref[Any], Any]:
        service = service_on(url)
        await service.list_sessions(app_name=APP)
        return weakref.ref(service), service._runner.thread

    gone, thread = run(scenario())
    gc.collect()
    assert gone() is None
    thread.join(timeout=10)
    assert not thread.is_alive()


def test_a_call_still_running_when_close_stops_waiting_fails_clearly(tmp_path: Path) -> None:
    """A call that outlasts `timeout + statement_timeout` after close() began is cancelled, and its caller gets a
    `SessionStoreError` saying so (not a `CancelledError`, not a wait without end). SQLite: on PostgreSQL each call
    gives up after that bound itself."""

    async def scenario() -> None:
        service = _closing_service(tmp_path)
        running = await _slow_call(service)
        await service.close()
        with pytest.raises(SessionStoreError, match="was closed while the call ran") as info:
            await running
        assert "read the session again" in str(info.value)

    run(asyncio.wait_for(scenario(), 20))


FOREIGN_TABLES = [
    ("sessions-only", ["CREATE TABLE templating_sessions (x INTEGER)"], "templating_sessions"),
    (
        "events-and-an-empty-schema-table",
        [
            "CREATE TABLE templating_schema (name TEXT PRIMARY KEY, version INTEGER NOT NULL)",
            "CREATE TABLE templating_events (x INTEGER)",
        ],
        "templating_events",
    ),
]


def table_names(url: str) -> set[str]:
    if url.startswith("sqlite"):
        rows = run(execute(url, "SELECT name FROM sqlite_master WHERE type = 'table'"))
    else:
        rows = run(execute(url, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"))
    return {row[0] for row in rows}


@pytest.mark.parametrize(("statements", "named"), [c[1:] for c in FOREIGN_TABLES], ids=[c[0] for c in FOREIGN_TABLES])
def test_tables_with_our_names_but_no_schema_version_are_refused_and_nothing_changes(
    statements: list[str], named: str, url: str
) -> None:
    for statement in statements:
        run(execute(url, statement))
    before = table_names(url)

    async def attempt() -> None:
        async with service_on(url) as service:
            for call in (
                service.create_session(app_name=APP, user_id=USER, session_id="s1"),
                service.list_sessions(app_name=APP),
            ):
                with pytest.raises(SessionStoreError) as info:
                    await call
                assert str(info.value).splitlines()[0] == (
                    f"tables named templating_* exist in {service.url!r} without a schema version: "
                    f"written by something else ({named})"
                )
                assert "nothing was changed" in str(info.value)

    run(attempt())
    assert table_names(url) == before
    if "templating_schema" in before:
        assert run(execute(url, "SELECT * FROM templating_schema")) == []


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"url": 7}, TypeError, "url must be a str, not int"),
        ({"url": "sqlite+aiosqlite://", "timeout": 0}, ValueError, "timeout must be a positive number"),
        ({"url": "sqlite+aiosqlite://", "timeout": True}, ValueError, "timeout must be a positive number"),
    ],
    ids=["url-int", "timeout-zero", "timeout-bool"],
)
def test_constructor_arguments_are_checked(kwargs: dict[str, Any], error: type[Exception], message: str) -> None:
    missing = missing_sql_extra()
    if missing:
        skip_or_fail(missing)
    from templating import DatabaseSessionService

    with pytest.raises(error, match=message):
        DatabaseSessionService(**kwargs)


def test_an_in_memory_sqlite_database_is_private_to_its_service() -> None:
    missing = missing_sql_extra()
    if missing:
        skip_or_fail(missing)

    async def scenario() -> None:
        async with service_on("sqlite+aiosqlite://") as one, service_on("sqlite+aiosqlite://") as two:
            session = await one.create_session(app_name=APP, user_id=USER, session_id="s1", state={"user:v": 1})
            await one.append_event(session, event({"a": 1}))
            stored = await one.get_session(app_name=APP, user_id=USER, session_id="s1")
            assert stored is not None
            assert (stored.state, len(stored.events)) == ({"a": 1, "user:v": 1}, 1)
            assert await two.get_session(app_name=APP, user_id=USER, session_id="s1") is None

    run(scenario())


OLDER_VERSIONS = [
    (1, "one row per state key"),  # version 1 kept each scope's state as one JSON document
    (2, "state keys of any length and with NUL characters"),  # version 2 indexed keys and ids as they are
]


@pytest.mark.parametrize(("version", "words"), OLDER_VERSIONS, ids=[f"version-{c[0]}" for c in OLDER_VERSIONS])
def test_a_database_of_an_earlier_schema_version_is_refused_with_what_changed(
    version: int, words: str, url: str
) -> None:
    run(seed(url, {"s1": {"a": 1}}))
    run(execute(url, f"UPDATE templating_schema SET version = {version}"))

    async def attempt() -> None:
        async with service_on(url) as service:
            with pytest.raises(SessionStoreError, match=f"schema version {version},") as info:
                await service.get_session(app_name=APP, user_id=USER, session_id="s1")
            assert words in str(info.value)
            assert "nothing was changed" in str(info.value)

    run(attempt())
    assert run(execute(url, "SELECT version FROM templating_schema")) == [(version,)]


async def version_3_scenario(service: Any) -> None:
    """What tests/fixtures/sessions_v3.db holds: this, run by templating at schema version 3 (commit 5fae947)."""
    big = {f"k{n}": ({"id": n, "f": n / 7} if n % 10 == 0 else f"value {n}") for n in range(300)}
    state = {**big, "app:brand": "Acme", "user:name": "Ada", "k" * 300: 1, "nul\x00key": "a\x00b"}
    a = await service.create_session(app_name="app", user_id="ada", session_id="big", state=state)
    delta = {"k1": "changed", "new": 0.1 + 0.2, "user:name": "Bea"}
    await service.append_event(a, Event(author="a", actions=EventActions(state_delta=delta)))
    b = await service.create_session(app_name="app", user_id="ada", session_id="small", state={"x": 1})
    await service.append_event(b, Event(author="a", actions=EventActions(state_delta={"y": [1, 2]})))
    await service.create_session(app_name="app", user_id="bob", session_id="empty")


def test_a_version_3_database_is_upgraded_on_open_and_reads_and_writes_as_before(tmp_path: Path) -> None:
    """A SQLite file written by the previous version (schema 3, state one row per key) gets the added column and
    version 4 when opened, and every session, event and user state reads as the in-memory service holds them
    after the same calls; then it takes appends and new sessions."""
    from templating import InMemorySessionService

    missing = missing_sql_extra()
    if missing:
        skip_or_fail(missing)
    path = tmp_path / "sessions.db"
    path.write_bytes((Path(__file__).parent / "fixtures" / "sessions_v3.db").read_bytes())
    url = f"sqlite+aiosqlite:///{path}"
    assert run(execute(url, "SELECT version FROM templating_schema")) == [(3,)]
    memory = InMemorySessionService()
    run(version_3_scenario(memory))

    async def scenario() -> None:
        async with service_on(url) as service:
            assert await everything(service) == await everything(memory)
            for each in (service, memory):
                session = await each.get_session(app_name="app", user_id="ada", session_id="big")
                await each.append_event(session, Event(author="a", actions=EventActions(state_delta={"k2": 2})))
                await each.create_session(app_name="app", user_id="ada", session_id="new", state={"k2": 3})
        async with service_on(url) as service:
            assert await everything(service) == await everything(memory)

    run(scenario())
    assert run(execute(url, "SELECT version FROM templating_schema")) == [(4,)]


def to_version_3(url: str) -> None:
    """Tables of version 4 made version 3 (no `initial` and `lookup` columns): whole when each state is in rows."""
    run(execute(url, "ALTER TABLE templating_sessions DROP COLUMN initial"))
    run(execute(url, "ALTER TABLE templating_sessions DROP COLUMN lookup"))
    run(execute(url, "UPDATE templating_schema SET version = 3"))


STORAGE = (
    "SELECT attname, CAST(attstorage AS text) FROM pg_attribute WHERE attrelid = 'templating_sessions'::regclass "
    "AND attname IN ('initial', 'lookup') ORDER BY attname"
)


def test_an_upgrade_to_version_4_adds_two_columns_and_loses_nothing(url: str) -> None:
    """On either database: tables of version 3 (no `initial` and `lookup` columns), state in rows, are brought to
    version 4."""
    # keys a JSON path does not find as written: each state is stored in rows, as version 3 stored it
    states = {"s1": {"a": 1, 'q"uote': [2], "user:u": 3}, "s2": {"b": None, "\\": 0, "app:c": {"d": 0.1 + 0.2}}}
    run(seed(url, states))
    if url.startswith("postgresql"):
        assert run(execute(url, STORAGE)) == [("initial", "e"), ("lookup", "e")]
    to_version_3(url)
    assert run(read(url, "s1")).state == states["s1"] | {"app:c": {"d": 0.1 + 0.2}}
    assert run(read(url, "s2")).state == states["s2"] | {"user:u": 3}
    assert run(execute(url, "SELECT version FROM templating_schema")) == [(4,)]
    assert run(execute(url, "SELECT initial FROM templating_sessions")) == [(None,), (None,)]
    if url.startswith("postgresql"):  # the documents are stored uncompressed, as in new tables
        assert run(execute(url, STORAGE)) == [("initial", "e"), ("lookup", "e")]


# --- the upgrade, by several services or processes at once ------------------------------------

UPGRADERS = 4  # services, or processes, opening one database of version 3 at once


async def written_by_version_3(service: Any) -> None:
    """Sessions, events, user and app state, each session's created keys ones a JSON path does not find as written:
    all of it stored in rows, as version 3 stored every state (so dropping version 4's columns loses nothing)."""
    state = {'q"a': 1, "user:u": [1, 2], "app:c": {"d": 0.1 + 0.2}}
    first = await service.create_session(app_name="app", user_id="ada", session_id="s1", state=state)
    await service.append_event(first, event({"k\\": "x", "user:u": 3}))
    second = await service.create_session(app_name="app", user_id="bob", session_id="s2", state={'"': None, "n": 0})
    await service.append_event(second, event({"app:c": 2, "n": 1, "user:v": "bob"}))
    await service.create_session(app_name="app", user_id="ada", session_id="empty")


def version_3_database(url: str) -> list[Any]:
    """Tables of version 3 at `url`, holding `written_by_version_3`; what `everything` reads of them, as the
    in-memory service holds it after the same calls."""
    from templating import InMemorySessionService

    async def write() -> list[Any]:
        async with service_on(url) as service:
            await written_by_version_3(service)
        memory = InMemorySessionService()
        await written_by_version_3(memory)
        return await everything(memory)

    expected = run(write())
    to_version_3(url)
    return expected


def assert_upgraded_once(url: str, expected: list[Any]) -> None:
    """Version 4, in one row; everything written before as it was written; the session each upgrader created."""
    from templating.sessions.sql import SCHEMA_VERSION

    assert run(execute(url, "SELECT name, version FROM templating_schema")) == [("sessions", SCHEMA_VERSION)]
    if url.startswith("postgresql"):
        assert run(execute(url, STORAGE)) == [("initial", "e"), ("lookup", "e")]

    async def stored() -> None:
        async with service_on(url) as service:
            assert await everything(service) == expected
            made = await service.list_sessions(app_name="new")
            assert {each.id: each.state for each in made} == {f"s{n}": {"n": n} for n in range(UPGRADERS)}

    run(stored())


async def first_uses(url: str, **options: Any) -> list[list[Any]]:
    """`first_use` by `UPGRADERS` services at once, each with its own engine, as in processes of their own."""
    from templating import DatabaseSessionService

    services = [DatabaseSessionService(url, timeout=LIVENESS, **options) for _ in range(UPGRADERS)]
    try:
        # Every call ended before the services close, failed or not: none is left holding a transaction open.
        found = await asyncio.gather(
            *(first_use(service, n) for n, service in enumerate(services)), return_exceptions=True
        )
    finally:
        for service in services:
            await service.close()
    failed = [str(each) for each in found if isinstance(each, BaseException)]
    assert not failed, f"{len(failed)} of {UPGRADERS} services failed: {failed}"
    return [each for each in found if not isinstance(each, BaseException)]


@pytest.mark.parametrize("how", ["services", pytest.param("processes", marks=pytest.mark.slow)])
def test_services_opening_a_version_3_database_at_once_upgrade_it_once_and_lose_nothing(how: str, url: str) -> None:
    """Several services (or processes) make their first calls on one database of version 3 at once: one upgrades
    it, the others wait for that (PostgreSQL: the advisory lock `prepare` takes; SQLite: the write lock taken at
    BEGIN) and find version 4; no call fails, and each reads every session, event and state as written before."""
    expected = version_3_database(url)
    if how == "services":
        with counting_upgrades() as ran:
            found = run(first_uses(url))
        upgrades = len(ran)
    else:
        workers = start_workers(url, *[["open", str(n)] for n in range(UPGRADERS)])
        ended = [(worker.communicate(timeout=300), worker.returncode) for worker in workers]
        failed = [" / ".join(err.strip().splitlines()[-2:]) or f"exit {code}" for (_, err), code in ended if code]
        assert not failed, f"{len(failed)} of {UPGRADERS} processes failed: {failed}"
        reports = [json.loads(out.splitlines()[-1]) for (out, _), _ in ended]
        found, upgrades = [report["found"] for report in reports], sum(report["upgrades"] for report in reports)
    assert found == [expected if how == "services" else json.loads(json.dumps(expected))] * UPGRADERS
    assert upgrades == 1
    assert_upgraded_once(url, expected)


# The upgraders waiting for a lock, in the database at hand (the reader's own locks are granted).
WAITING = (
    "SELECT count(DISTINCT pid) FROM pg_locks WHERE NOT granted "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)


def test_postgresql_services_held_at_the_upgrade_by_a_reader_upgrade_once_when_it_ends(postgres: Any) -> None:
    """Services open a database of version 3 while another transaction has read the sessions table, which the
    upgrade must alter: the first upgrader waits for that transaction, holding the lock `prepare` takes, and the
    others wait for that lock (without it they would read version 3 too, and add the columns again once the
    first committed). When the reader ends, the upgrade runs once and every call succeeds."""
    import sqlalchemy as sa
    from sqlalchemy.ext.asyncio import create_async_engine

    url = str(postgres.fresh_database("held_upgrade"))
    expected = version_3_database(url)

    async def held() -> list[list[Any]]:
        engine = create_async_engine(url)
        try:
            async with engine.connect() as reader:
                await reader.begin()
                await reader.execute(sa.text("SELECT count(*) FROM templating_sessions"))  # held until rollback
                calls = asyncio.ensure_future(first_uses(url, statement_timeout=LIVENESS))

                async def all_waiting() -> None:
                    while not calls.done() and (await reader.execute(sa.text(WAITING))).scalar() < UPGRADERS:
                        await asyncio.sleep(0.01)

                await asyncio.wait_for(all_waiting(), timeout=LIVENESS)  # a bound on a hang, not a verdict
                await reader.rollback()
            return await calls
        finally:
            await engine.dispose()

    with counting_upgrades() as ran:
        found = run(held())
    assert found == [expected] * UPGRADERS
    assert len(ran) == 1
    assert_upgraded_once(url, expected)


STORED = [
    # (id, the session's keys beside "a" and "b", whether its created state is one document)
    ("plain-keys", {"k" * 300: 2}, True),
    ("a-key-with-a-quote", {'say "hi"': 2}, False),
    ("a-key-with-a-nul", {"a\x00b": 2}, False),
    ("a-nul-in-a-value", {"v": "a\x00b"}, "sqlite"),  # PostgreSQL's JSON operators refuse a NUL
]


@pytest.mark.parametrize(("extra", "document"), [c[1:] for c in STORED], ids=[c[0] for c in STORED])
def test_a_created_state_is_one_document_and_each_later_write_a_row(
    extra: dict[str, Any], document: bool | str, url: str
) -> None:
    """A session's state given at create is stored as one JSON document when a JSON path finds its keys as
    written, else one row per key; an append writes the rows of the keys its delta writes (the others keep the
    revision that wrote them), which override the document. A key no index takes (long, or holding a NUL) is
    stored under its digest, the key beside it."""
    (key,) = extra
    document = document is True or url.startswith(str(document))
    created_state = {"a": 1, "b": [1], "user:n": "x", **extra}

    async def scenario() -> None:
        async with service_on(url) as service:
            session = await service.create_session(app_name=APP, user_id=USER, session_id="s1", state=created_state)
            delta = {"b": [2], key: 3}
            await service.append_event(session, Event(author="a", actions=EventActions(state_delta=delta)))
            assert (await read_in(service, "s1")).state == created_state | delta

    run(scenario())
    rows = run(execute(url, "SELECT scope, name, long_key, value, written FROM templating_state"))
    name, long_key = (key, None) if len(key) <= 256 and "\x00" not in key else (digest_of(key), json.dumps(key))
    later = [(0, "b", None, "[2]", 2), (0, name, long_key, "3", 2)]
    at_create = [(0, "a", None, "1", 1)]  # (b and the key: overwritten by the append)
    assert sorted(tuple(row) for row in rows) == sorted(
        [*later, (1, "user:n", None, '"x"', 1)] + ([] if document else at_create)
    )
    (stored,) = [value for (value,) in run(execute(url, "SELECT initial FROM templating_sessions"))]
    initial = json.loads(stored) if stored is not None else None
    if url.startswith("postgresql"):  # and in jsonb, each value's JSON text
        (lookup,) = [value for (value,) in run(execute(url, "SELECT lookup FROM templating_sessions"))]
        assert initial == ({key: json.loads(text) for key, text in lookup.items()} if lookup is not None else None)
    assert initial == ({"a": 1, "b": [1], **extra} if document else None)


async def read_in(service: Any, session_id: str) -> Any:
    return await service.get_session(app_name=APP, user_id=USER, session_id=session_id)


def digest_of(key: str) -> str:
    return "\uffff" + hashlib.sha256(key.encode()).hexdigest()


@pytest.mark.parametrize("statement", ["LOCK TABLE templating_sessions IN ACCESS EXCLUSIVE MODE"], ids=["lock-table"])
def test_a_locked_postgresql_gives_a_store_error_in_bounded_time(statement: str, postgres: Any) -> None:
    """Another connection holds a lock the append needs: the statement timeout ends the wait with a
    SessionStoreError, nothing is stored, and the service works again once the lock is gone. The
    bound asserted is a liveness bound (minutes), not a time."""
    import sqlalchemy as sa
    from sqlalchemy.ext.asyncio import create_async_engine

    from templating import DatabaseSessionService

    url = str(postgres.fresh_database("locked"))

    async def scenario() -> None:
        async with DatabaseSessionService(url, statement_timeout=0.5) as service:
            session = await service.create_session(app_name=APP, user_id=USER, session_id="s1")
            engine = create_async_engine(url)
            try:
                async with engine.connect() as other:
                    await other.begin()
                    await other.execute(sa.text(statement))
                    append = service.append_event(
                        session, Event(author="a", actions=EventActions(state_delta={"x": 1}))
                    )
                    with pytest.raises(SessionStoreError) as info:
                        await asyncio.wait_for(append, timeout=120)
                    assert "statement" in str(info.value)
                    await other.rollback()
            finally:
                await engine.dispose()
            stored = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
            assert stored is not None
            assert stored.state == {}
            assert stored.events == []
            await service.append_event(stored, Event(author="a", actions=EventActions(state_delta={"x": 2})))
            again = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
            assert again is not None
            assert again.state == {"x": 2}

    run(scenario())


@pytest.mark.parametrize("value", [0, -1, True, "1"], ids=["zero", "negative", "bool", "str"])
def test_statement_timeout_must_be_a_positive_number(value: Any) -> None:
    from templating import DatabaseSessionService

    with pytest.raises(ValueError, match="statement_timeout must be a positive number of seconds"):
        DatabaseSessionService("sqlite+aiosqlite://", statement_timeout=value)


# id, the state created, whether the session id is taken already
CREATES_ON_THE_WIRE: list[tuple[str, dict[str, Any], bool]] = [
    ("no-state", {}, False),
    ("session-keys", {"a": 1, "b": [2, {"c": None}]}, False),
    ("every-scope", {"a": 1, "user:b": "two", "app:c": 3.5}, False),
    ("a-nul-in-a-value", {"a": "x\x00y", "user:b": "\x00"}, False),
    ("a-long-key", {"k" * 300: 1, "app:" + "k" * 300: 2}, False),
    ("2000-keys", {f"k{number}": f"value {number}" for number in range(2_000)} | {"user:n": 1}, False),
    ("id-taken", {"a": 1, "user:b": 2, "app:c": 3}, True),
]


@pytest.mark.parametrize(
    ("state", "taken"), [case[1:] for case in CREATES_ON_THE_WIRE], ids=[case[0] for case in CREATES_ON_THE_WIRE]
)
def test_a_postgresql_create_is_one_statement_in_one_round_trip(
    state: dict[str, Any], taken: bool, postgres: Any
) -> None:
    """What the service sends the server for a create, seen on the wire (a proxy in between): the pool's check of
    the connection (one round trip: an empty query), then one round trip holding one statement (no BEGIN or
    COMMIT, no COPY), prepared once per connection. A taken id fails that statement whole: nothing is written."""
    from pg_wire import WireLog, assert_one_statement

    from templating import AlreadyExistsError, DatabaseSessionService

    url = str(postgres.fresh_database("wire"))

    async def scenario() -> None:
        wire = WireLog(("127.0.0.1", postgres.port))
        port = await wire.start()
        try:
            async with DatabaseSessionService(url.replace(f":{postgres.port}/", f":{port}/")) as service:
                warm_state = {key: "warm" for key in state} if taken else state  # the same statement
                for warm in ("w1", "w2"):  # the tables made, the statement prepared
                    await service.create_session(app_name=APP, user_id=USER, session_id=warm, state=warm_state)
                if taken:
                    await service.create_session(app_name=APP, user_id=USER, session_id="s1", state={"a": 0})
                before = len(wire.trips)
                if taken:
                    with pytest.raises(AlreadyExistsError):
                        await service.create_session(app_name=APP, user_id=USER, session_id="s1", state=state)
                else:
                    await service.create_session(app_name=APP, user_id=USER, session_id="s1", state=state)
                every = wire.trips[before:]
                stored = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
        finally:
            await wire.stop()
        assert_one_statement(every)
        assert stored is not None
        if taken:  # the user's and app's values of the failed create were not written either
            assert stored.state == {"a": 0} | {key: "warm" for key in state if ":" in key}
        else:
            assert stored.state == state

    run(scenario())


# id, get_session's config, the events it reads back (of e1..e4, appended in that order)
GETS_ON_THE_WIRE: list[tuple[str, dict[str, Any] | None, list[str]]] = [
    ("every-event", None, ["e1", "e2", "e3", "e4"]),
    ("recent-2", {"num_recent_events": 2}, ["e3", "e4"]),
    ("after-a-time", {"after_timestamp": 30.0}, ["e3", "e4"]),
    ("after-a-time-recent-1", {"after_timestamp": 20.0, "num_recent_events": 1}, ["e4"]),
    ("no-events", {"num_recent_events": 0}, []),
]


@pytest.mark.parametrize(
    ("config", "expected"), [case[1:] for case in GETS_ON_THE_WIRE], ids=[case[0] for case in GETS_ON_THE_WIRE]
)
def test_a_postgresql_get_is_one_statement_in_one_round_trip(
    config: dict[str, Any] | None, expected: list[str], postgres: Any
) -> None:
    """A get on PostgreSQL, seen on the wire: the pool's check, then one statement (the session's row, its state
    and the events chosen: one snapshot without BEGIN or COMMIT), and the events are the ones the config chooses."""
    from pg_wire import WireLog, assert_one_statement

    from templating import DatabaseSessionService

    url = str(postgres.fresh_database("wire"))

    async def scenario() -> None:
        wire = WireLog(("127.0.0.1", postgres.port))
        port = await wire.start()
        try:
            async with DatabaseSessionService(url.replace(f":{postgres.port}/", f":{port}/")) as service:
                session = await service.create_session(app_name=APP, user_id=USER, session_id="s1", state={"a": 1})
                for number in range(1, 5):
                    made = event({"n": number}, id=f"e{number}", timestamp=10.0 * number)
                    await service.append_event(session, made)
                for _ in range(2):  # the statement prepared
                    await service.get_session(app_name=APP, user_id=USER, session_id="s1", config=config)
                before = len(wire.trips)
                got = await service.get_session(app_name=APP, user_id=USER, session_id="s1", config=config)
                every = wire.trips[before:]
        finally:
            await wire.stop()
        assert_one_statement(every, prepared=False)
        assert got is not None
        assert [stored.id for stored in got.events] == expected
        assert got.state == {"a": 1, "n": 4}

    run(scenario())


READS_ON_THE_WIRE = [
    ("list", "list_sessions", {"app_name": APP}),
    ("list-of-a-user", "list_sessions", {"app_name": APP, "user_id": USER}),
    ("user-state", "get_user_state", {"app_name": APP, "user_id": USER}),
    ("user-state-of-no-user", "get_user_state", {"app_name": APP, "user_id": "nobody"}),
]


@pytest.mark.parametrize(
    ("method", "arguments"), [case[1:] for case in READS_ON_THE_WIRE], ids=[case[0] for case in READS_ON_THE_WIRE]
)
def test_a_postgresql_list_or_user_state_is_one_statement_in_one_round_trip(
    method: str, arguments: dict[str, str], postgres: Any
) -> None:
    """`list_sessions` and `get_user_state` on PostgreSQL, seen on the wire: the pool's check, then one statement
    (no BEGIN or COMMIT), and what it returns is what the in-memory service returns after the same calls."""
    from pg_wire import WireLog, assert_one_statement

    from templating import DatabaseSessionService, InMemorySessionService

    url = str(postgres.fresh_database("wire"))
    memory = InMemorySessionService()

    async def fill(service: Any) -> None:
        big = {f"k{n}": n / 7 for n in range(500)}
        first = await service.create_session(app_name=APP, user_id=USER, session_id="s1", state=big | {"user:a": 1})
        await service.append_event(first, event({"k1": "x", "user:a": 2, "app:b": [3]}))
        await service.create_session(app_name=APP, user_id="bea", session_id="s2", state={'q"': 1, "user:c": 4})
        await service.create_session(app_name=APP, user_id=USER, session_id="s3")
        await service.create_session(app_name="other", user_id=USER, session_id="s4", state={"app:b": 0})

    def plain(found: Any) -> Any:
        return [(s.user_id, s.id, s.state) for s in found] if isinstance(found, list) else found

    async def scenario() -> None:
        await fill(memory)
        wire = WireLog(("127.0.0.1", postgres.port))
        port = await wire.start()
        try:
            async with DatabaseSessionService(url.replace(f":{postgres.port}/", f":{port}/")) as service:
                await fill(service)
                for _ in range(2):  # the statement prepared
                    await getattr(service, method)(**arguments)
                before = len(wire.trips)
                got = await getattr(service, method)(**arguments)
                every = wire.trips[before:]
        finally:
            await wire.stop()
        assert_one_statement(every, prepared=False)
        assert plain(got) == plain(await getattr(memory, method)(**arguments))

    run(scenario())


# id, a row another transaction holds locked, the state of a create that writes nothing of that row's scope
UNWRITTEN_ROWS_LOCKED: list[tuple[str, str, dict[str, Any]]] = [
    ("app-row", "SELECT 1 FROM templating_apps WHERE app_name = 'app' FOR UPDATE", {"a": 1, "user:b": 2}),
    ("user-row", "SELECT 1 FROM templating_users WHERE user_id = 'ada' FOR UPDATE", {"a": 1, "app:c": 3}),
    ("both", "SELECT 1 FROM templating_users JOIN templating_apps USING (app_name) FOR UPDATE", {"a": 1}),
]


@pytest.mark.parametrize(
    ("statement", "state"),
    [case[1:] for case in UNWRITTEN_ROWS_LOCKED],
    ids=[case[0] for case in UNWRITTEN_ROWS_LOCKED],
)
def test_a_postgresql_create_does_not_wait_on_rows_it_does_not_write(
    statement: str, state: dict[str, Any], postgres: Any
) -> None:
    """A create that writes no `app:` (or `user:`) key reads the app's (user's) row without locking it: it does not
    wait for another transaction holding that row (so creates in one app do not queue on its row). Bounded by the
    statement timeout (a liveness bound: waiting would end in SessionStoreError), not a time."""
    import sqlalchemy as sa
    from sqlalchemy.ext.asyncio import create_async_engine

    from templating import DatabaseSessionService

    url = str(postgres.fresh_database("unlocked"))

    async def scenario() -> None:
        async with DatabaseSessionService(url, statement_timeout=20) as service:
            await service.create_session(app_name=APP, user_id=USER, session_id="s0", state={"user:b": 0, "app:c": 0})
            engine = create_async_engine(url)
            try:
                async with engine.connect() as other:
                    await other.begin()
                    assert (await other.execute(sa.text(statement))).all()  # the row is there, and locked
                    created = await service.create_session(app_name=APP, user_id=USER, session_id="s1", state=state)
                    await other.rollback()
            finally:
                await engine.dispose()
            stored = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
            assert stored is not None
            assert stored.state == created.state == {"user:b": 0, "app:c": 0} | state

    run(scenario())
