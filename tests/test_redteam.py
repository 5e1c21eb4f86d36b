"""The red-team table: hostile input, each row with the clear error it must end in and the bound it must stay within.

Each section has its own rows and test functions; a row that passes today keeps a regression from coming back.
The time bounds are ceilings far above what a row takes (milliseconds), so they never flake: they catch a hang
or a runaway, not a slowdown (bench/ measures speed).
"""

from __future__ import annotations

# --- imports of the state and snapshot sections ---
import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

from templating import Event, EventActions, InvalidStateError, SessionService, State, TemplatingError

# === state values: hostile state on every session service (issue 19, items 3 and 4) ================


def _nested(depth: int, *, kind: str = "list") -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


def _cyclic_list() -> Any:
    value: list[Any] = []
    value.append(value)
    return value


def _cyclic_dict() -> Any:
    value: dict[str, Any] = {}
    value["self"] = [value]
    return value


# id, a maker of the hostile value, the exception it must end in, words of its message, seconds it may take
STATE_ROWS: list[tuple[str, Callable[[], Any], type[TemplatingError], str, float]] = [
    ("nested-500", lambda: _nested(500), InvalidStateError, "nests lists and dicts more than 100 deep", 5.0),
    ("nested-100000", lambda: _nested(100_000), InvalidStateError, "more than 100 deep", 5.0),
    ("dicts-nested-100000", lambda: _nested(100_000, kind="dict"), InvalidStateError, "more than 100 deep", 5.0),
    ("list-containing-itself", _cyclic_list, InvalidStateError, "contains itself", 5.0),
    ("dict-containing-itself", _cyclic_dict, InvalidStateError, "contains itself", 5.0),
    ("lone-surrogate", lambda: "\ud800", InvalidStateError, "lone surrogate", 5.0),
    ("lone-surrogate-key", lambda: {"a": {"\udc00": 1}}, InvalidStateError, "has a key that holds the lone", 5.0),
    ("int-10-to-5000", lambda: 10**5000, InvalidStateError, "int of about 5001 digits", 5.0),
    ("int-2-to-64", lambda: 2**64, InvalidStateError, "outside the 64-bit range", 5.0),
    ("nan", lambda: float("nan"), InvalidStateError, "which JSON cannot hold", 5.0),
    ("wide-then-deep", lambda: [list(range(10_000)), _nested(1_000)], InvalidStateError, "more than 100 deep", 5.0),
    ("object", lambda: object(), InvalidStateError, "is of type object", 5.0),
]
_STATE_IDS = [row[0] for row in STATE_ROWS]


@pytest.mark.parametrize(("make", "error", "words", "seconds"), [r[1:] for r in STATE_ROWS], ids=_STATE_IDS)
@pytest.mark.parametrize("how", ["create", "append"])
def test_hostile_state_on_every_service(
    make: Callable[[], Any],
    error: type[TemplatingError],
    words: str,
    seconds: float,
    how: str,
    service: SessionService,
) -> None:
    value = make()
    session = asyncio.run(service.create_session(app_name="red", user_id="u", session_id="s", state={"keep": 1}))
    bad = Event(author="a", actions=EventActions())
    bad.actions.state_delta["v"] = value  # as a model_construct()ed event would carry it

    def call() -> Any:
        if how == "create":
            return service.create_session(app_name="red", user_id="u", session_id="t", state={"v": value})
        return service.append_event(session, bad)

    started = time.perf_counter()
    with pytest.raises(error) as info:
        asyncio.run(call())
    assert time.perf_counter() - started < seconds
    assert words in str(info.value)
    stored = asyncio.run(service.get_session(app_name="red", user_id="u", session_id="s"))
    assert stored is not None
    assert (stored.state, stored.events) == ({"keep": 1}, [])
    assert asyncio.run(service.get_session(app_name="red", user_id="u", session_id="t")) is None


@pytest.mark.parametrize(("make", "error", "words", "seconds"), [r[1:] for r in STATE_ROWS], ids=_STATE_IDS)
def test_hostile_state_through_state(
    make: Callable[[], Any], error: type[TemplatingError], words: str, seconds: float
) -> None:
    value = make()
    state = State({"keep": 1})
    started = time.perf_counter()
    with pytest.raises(error) as info:
        state["v"] = value
    with pytest.raises(error):
        State({"v": value})
    assert time.perf_counter() - started < seconds
    assert words in str(info.value)
    assert state.to_dict() == {"keep": 1}


# === snapshot ids: hostile parametrized ids (issue 19, item 5) =======================================

# id, the test ids given to one parametrized test, how many of them would share a file, seconds it may take
SNAPSHOT_ROWS: list[tuple[str, list[str], int, float]] = [
    ("slash", ["a/b", "ab"], 2, 30.0),
    ("slash-plain-angle", ["a/b", "ab", "a<b"], 3, 30.0),
    ("colon-pipe-quote", ["a:b", "a|b", 'a"b', "a-b"], 3, 30.0),
    ("star-question-backslash", ["a*b", "a?b", "a\\b"], 3, 30.0),
    ("escaped-control", ["a\x1bb", "ax1bb"], 2, 30.0),  # pytest writes \x1b into the id, the file name drops "\"
    ("cut-at-251", ["x" * 300 + "1", "x" * 300 + "2", "short"], 2, 30.0),
    ("distinct", ["a-b", "a_b", "a.b", "a b"], 0, 30.0),
]


@pytest.mark.parametrize(
    ("ids", "colliding", "seconds"), [r[1:] for r in SNAPSHOT_ROWS], ids=[r[0] for r in SNAPSHOT_ROWS]
)
def test_hostile_snapshot_ids(pytester: pytest.Pytester, ids: list[str], colliding: int, seconds: float) -> None:
    pytester.makepyfile(
        test_hostile=(
            "import pytest\n\n"
            f"@pytest.mark.parametrize('n', list(range({len(ids)})), ids={ids!r})\n"
            "def test_x(prompt_snapshot, snapshot, n):\n"
            "    assert prompt_snapshot('Hi <n>', {'n': n}) == snapshot\n"
        )
    )
    started = time.perf_counter()
    result = pytester.runpytest("--snapshot-update", "-p", "no:cacheprovider")
    assert time.perf_counter() - started < seconds
    result.assert_outcomes(passed=len(ids) - colliding, errors=colliding)
    folder = pytester.path / "__snapshots__" / "test_hostile"
    written = list(folder.iterdir()) if folder.exists() else []
    assert len(written) == len(ids) - colliding  # one file per test that ran, none shared
    if colliding:
        assert "snapshot name collision: test_hostile.py::test_x[" in result.stdout.str()
    again = pytester.runpytest("-p", "no:cacheprovider")  # a later run: the same, never a flip-flop between tests
    again.assert_outcomes(passed=len(ids) - colliding, errors=colliding)
