"""Shared fixtures: syrupy snapshots of this project's own tests live in the top-level snapshots/ folder;
every session service the contract suite runs against (in memory, a SQLite file, a throw-away PostgreSQL)."""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from syrupy.assertion import SnapshotAssertion

from templating.pytest_plugin import extension_for

pytest_plugins = ["pytester"]
# tests/fixtures holds agent apps written as their authors write them, their own eval tests included: data, not tests.
collect_ignore = ["fixtures"]

# Hypothesis judges no test by the clock: no deadline per example and no health check of how fast data is
# generated, both of which a busy machine fails by chance. A test's own @settings still sets its number of
# examples; what it leaves out comes from this profile.
settings.register_profile("templating", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("templating")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _inner_pytest_runs_without_asyncio(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pytest runs a test starts (pytester, a docs block's tests) need no pytest-asyncio, which the dev
    extra brings for pytest-lsp: without this project's ini they would each warn that its loop scope is unset.
    Nor do they need Hypothesis, whose plugin imports the whole of it (with its asserts rewritten) at the end
    of every inner run that pytester's clean-up has unloaded it from: seconds per run."""
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester")  # it clears PYTEST_ADDOPTS when it starts: set it after
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:asyncio -p no:hypothesispytest")


_LINT_CACHES = itertools.count()


@pytest.fixture(autouse=True)
def _lint_cache_outside_the_repository(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`templating lint` keeps its cache at the project root by default: a test that lints this repository's
    own examples would leave one there. Each test gets its own folder (made only if a run writes to it)."""
    monkeypatch.setenv("TEMPLATING_CACHE_DIR", str(tmp_path_factory.getbasetemp() / f"lint-cache-{next(_LINT_CACHES)}"))


@pytest.fixture
def preview_keeps_nothing() -> Iterator[None]:
    """No preview kept from another test, before and after: the built previews and the shared google-adk objects."""
    from templating.preview.build import clear_cache
    from templating.preview.shared import forget

    clear_cache()
    forget()
    yield
    clear_cache()
    forget()


SNAPSHOTS = ROOT / "snapshots"
# Every snapshot of this project's tests is a text file at snapshots/<test file path, no .py>/<test>.prompt.snap,
# stored by templating's pytest plugin: prompt_snapshot / lint_snapshot because pyproject.toml sets its ini option
# templating_snapshot_dir, and the `snapshot` fixture below (CLI output, error texts) with the same extension.


@pytest.fixture
def snapshot(snapshot: SnapshotAssertion, pytestconfig: pytest.Config) -> SnapshotAssertion:
    """syrupy's `snapshot`, storing a str as one UTF-8 file under snapshots/tests/<test module>/."""
    update = bool(pytestconfig.option.update_snapshots)
    return snapshot.use_extension(extension_for(str(SNAPSHOTS), str(pytestconfig.rootpath), update=update))


# --- session services -----------------------------------------------------------------------
# The contract suite (tests/test_sessions.py) runs once per service. SQL services need the sql
# extra; PostgreSQL also needs the server binaries (tests/pg_server.py). Both skip when missing,
# unless TEMPLATING_REQUIRE_POSTGRES=1 (set by CI, .ci/run) turns the skip into a failure.

SERVICES = ["memory", "sqlite", "postgresql"]
# A database service's timeout (connecting; waiting for SQLite's write lock) in the contract suite: far
# above what a busy machine takes, so that only a hang fails a test (the default, 10 s, is for users).
LIVENESS = 300.0


def _require_postgres() -> bool:
    return os.environ.get("TEMPLATING_REQUIRE_POSTGRES") == "1"


def skip_or_fail(reason: str) -> None:
    """Skip a test whose real part is missing; fail instead when CI requires it."""
    if _require_postgres():
        pytest.fail(f"TEMPLATING_REQUIRE_POSTGRES=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def installed(module: str) -> bool:
    """Whether `module` can be imported. find_spec of a dotted name imports its parent first and raises
    ModuleNotFoundError when the parent is missing (``google.adk`` with no ``google`` at all): that is a no."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def require_adk() -> None:
    """Skip a test that needs google-adk when it is not installed, naming the extra; fail instead when
    TEMPLATING_REQUIRE_ADK=1 (set by CI, .ci/run)."""
    if installed("google.adk"):
        return
    if os.environ.get("TEMPLATING_REQUIRE_ADK") == "1":
        pytest.fail("TEMPLATING_REQUIRE_ADK=1 but google-adk is not installed (pip install '.[adk]')", pytrace=False)
    pytest.skip("google-adk is not installed (pip install '.[adk]')")


def missing_sql_extra() -> str | None:
    for module in ("sqlalchemy", "aiosqlite", "asyncpg"):
        if not installed(module):
            return f"{module} is not installed (pip install '.[sql]')"
    return None


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """A throw-away PostgreSQL server for the whole test session (see tests/pg_server.py)."""
    from pg_server import PostgresServer, find_binaries

    missing = missing_sql_extra()
    if missing:
        skip_or_fail(missing)
    binaries = find_binaries()
    if binaries is None:
        skip_or_fail(
            "no PostgreSQL binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin "
            "(Debian: apt-get install postgresql)"
        )
    assert binaries is not None
    server = PostgresServer.start(binaries)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=SERVICES)
def make_service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Any]]:
    """Makes services of one kind, each on a store of its own that starts empty; closes them after the test."""
    from templating import InMemorySessionService

    kind = request.param
    if kind != "memory":
        missing = missing_sql_extra()
        if missing:
            skip_or_fail(missing)
    server = request.getfixturevalue("postgres") if kind == "postgresql" else None
    made: list[Any] = []
    numbers = itertools.count()

    def make() -> Any:
        from templating import DatabaseSessionService

        number = next(numbers)
        if kind == "memory":
            service: Any = InMemorySessionService()
        elif kind == "sqlite":
            service = DatabaseSessionService(
                f"sqlite+aiosqlite:///{tmp_path / f'sessions-{number}.db'}", timeout=LIVENESS
            )
        else:
            service = DatabaseSessionService(server.fresh_database(f"contract_{number}"), timeout=LIVENESS)
        made.append(service)
        return service

    try:
        yield make
    finally:
        for service in made:
            if hasattr(service, "close"):
                asyncio.run(service.close())


@pytest.fixture
def service(make_service: Callable[[], Any]) -> Any:
    """A session service of each kind, on an empty store."""
    return make_service()


@pytest.fixture
def py_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small ADK app in Python (agents/prompt.py and agents/agent.py), the current folder (the CLI tests)."""
    from cli_support import PY_AGENT, PY_PROMPT

    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "agents" / "prompt.py").write_text(PY_PROMPT, encoding="utf-8")
    (tmp_path / "agents" / "agent.py").write_text(PY_AGENT, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def shared_corpora() -> Path | None:
    """The shared corpus of real ADK code (`shared/corpora` beside the checkout or a folder above it); None
    when it is absent (the tests that read it then skip, or fail under TEMPLATING_REQUIRE_CORPUS)."""
    for folder in Path(__file__).resolve().parents:
        candidate = folder / "shared" / "corpora"
        if (candidate / "adk-samples").is_dir():
            return candidate
    return None
