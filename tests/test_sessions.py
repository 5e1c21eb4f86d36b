"""The session models, and the contract every session service keeps: scopes, copies, ids, events, bad input,
staleness, concurrency.

Every test that takes ``service`` (or ``make_service``) runs once per service (tests/conftest.py: in
memory, a SQLite file, a throw-away PostgreSQL server), and asserts nothing specific to one of them.
"""

from __future__ import annotations

import asyncio
import copy
import pickle
import re
import sys
import threading
import uuid
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import pydantic
import pytest

from templating import (
    AlreadyExistsError,
    Event,
    EventActions,
    GetSessionConfig,
    InMemorySessionService,
    InvalidStateError,
    Session,
    SessionNotFoundError,
    SessionService,
    StaleSessionError,
    TemplatingError,
)
from templating.sessions.values import MAX_DEPTH

T = TypeVar("T")
APP, USER = "shop", "ada"


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def event(delta: dict[str, Any] | None = None, **fields: Any) -> Event:
    return Event(author=fields.pop("author", "agent"), actions=EventActions(state_delta=delta or {}), **fields)


def create(service: SessionService, **kwargs: Any) -> Session:
    kwargs.setdefault("app_name", APP)
    kwargs.setdefault("user_id", USER)
    return run(service.create_session(**kwargs))


def fetch(service: SessionService, session_id: str, **kwargs: Any) -> Session:
    kwargs.setdefault("app_name", APP)
    kwargs.setdefault("user_id", USER)
    found = run(service.get_session(session_id=session_id, **kwargs))
    assert found is not None
    return found


# --- models ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "fields"),
    [
        (Session, {"id": "s", "app_name": "a", "user_id": "u", "owner": "x"}),
        (Event, {"author": "a", "text": "hi"}),
        (EventActions, {"state_delta": {}, "transfer_to_agent": "x"}),
        (GetSessionConfig, {"num_recent_events": 1, "limit": 2}),
    ],
    ids=["session", "event", "actions", "config"],
)
def test_models_reject_unknown_fields(model: type[pydantic.BaseModel], fields: dict[str, Any]) -> None:
    with pytest.raises(pydantic.ValidationError, match="Extra inputs are not permitted"):
        model(**fields)


def test_event_defaults() -> None:
    first, second = Event(author="a"), Event(author="a", id="  ")
    for generated in (first.id, second.id):  # a random (version 4) UUID as 32 hex digits, as uuid4().hex gives
        assert uuid.UUID(hex=generated).hex == generated
        assert uuid.UUID(hex=generated).version == 4
        assert uuid.UUID(hex=generated).variant == uuid.RFC_4122
    assert first.id != second.id
    assert Event(author="a", id=" e1 ").id == "e1"
    assert first.invocation_id == ""
    assert first.content is None
    assert first.partial is False
    assert first.actions.state_delta == {}
    assert first.timestamp > 0


@pytest.mark.parametrize(
    ("delta", "message"),
    [({"v": {1, 2}}, "not plain JSON"), ({1: "x"}, "valid string")],
    ids=["bad-value", "bad-key"],
)
def test_event_actions_check_the_delta(delta: dict[Any, Any], message: str) -> None:
    with pytest.raises(pydantic.ValidationError, match=message):
        EventActions(state_delta=delta)


CONFIG_ERRORS = [
    ("minus-one", {"num_recent_events": -1}, "greater than or equal to 0"),
    ("minus-ten", {"num_recent_events": -10}, "greater than or equal to 0"),
    ("true-is-not-one", {"num_recent_events": True}, "valid integer"),
    ("float", {"num_recent_events": 1.0}, "valid integer"),
    ("numeric-string", {"num_recent_events": "2"}, "valid integer"),
    ("nan-timestamp", {"after_timestamp": float("nan")}, "finite number"),
    ("infinite-timestamp", {"after_timestamp": float("inf")}, "finite number"),
    ("numeric-string-timestamp", {"after_timestamp": "1.5"}, "valid number"),
    ("true-is-not-a-timestamp", {"after_timestamp": True}, "valid number"),
]


@pytest.mark.parametrize(("fields", "message"), [c[1:] for c in CONFIG_ERRORS], ids=[c[0] for c in CONFIG_ERRORS])
def test_bad_get_session_configs_are_rejected(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(pydantic.ValidationError, match=message):
        GetSessionConfig(**fields)


def test_an_int_timestamp_is_a_float() -> None:
    assert GetSessionConfig(after_timestamp=20).after_timestamp == 20.0


def make_event() -> Event:
    return Event(author="a")


def make_session_model() -> Session:
    return Session(id="s", app_name="a", user_id="u")


ASSIGNMENTS: list[tuple[str, Any, str, Any, str]] = [
    ("event-timestamp-text", make_event, "timestamp", "yesterday", "valid number"),
    ("event-timestamp-nan", make_event, "timestamp", float("nan"), "finite number"),
    ("event-timestamp-inf", make_event, "timestamp", float("-inf"), "finite number"),
    ("event-author-none", make_event, "author", None, "valid string"),
    ("event-actions-bad-delta", make_event, "actions", {"state_delta": {"v": {1}}}, "not plain JSON"),
    ("event-unknown-field", make_event, "text", "hi", "has no field|Object has no attribute"),
    ("session-state-not-json", make_session_model, "state", {"v": object()}, "not plain JSON"),
    ("session-time-nan", make_session_model, "last_update_time", float("nan"), "finite number"),
    ("config-count-bool", GetSessionConfig, "num_recent_events", True, "valid integer"),
    ("actions-delta-key", EventActions, "state_delta", {1: "x"}, "valid string"),
]


@pytest.mark.parametrize(
    ("make", "field", "value", "message"), [c[1:] for c in ASSIGNMENTS], ids=[c[0] for c in ASSIGNMENTS]
)
def test_assigning_a_field_validates_it(make: Any, field: str, value: Any, message: str) -> None:
    model = make()
    before = model.model_dump()
    with pytest.raises((pydantic.ValidationError, ValueError), match=message):
        setattr(model, field, value)
    assert model.model_dump() == before


def test_assigned_fields_are_converted_as_on_construction() -> None:
    first = Event(author="a", id="e1")
    first.id = "  "
    assert len(first.id) == 32  # a blank id gets a generated one, on assignment too
    first.id = " e2 "
    assert first.id == "e2"
    first.actions = {"state_delta": {"a": 1}}  # type: ignore[assignment]
    assert isinstance(first.actions, EventActions)
    assert first.actions.state_delta == {"a": 1}


# --- create, ids, copies --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [(None, None), ("", None), ("   ", None), (" s1 ", "s1"), ("s1", "s1")],
    ids=["missing", "empty", "blank", "padded", "plain"],
)
def test_session_ids(given: str | None, expected: str | None, service: SessionService) -> None:
    session = create(service, session_id=given)
    if expected is None:
        assert len(session.id) == 32
    else:
        assert session.id == expected
    assert fetch(service, f"  {session.id} ").id == session.id


def test_creating_an_existing_id_raises_and_keeps_the_original(service: SessionService) -> None:
    create(service, session_id="s1", state={"a": 1})
    with pytest.raises(AlreadyExistsError) as info:
        create(service, session_id=" s1", state={"a": 2, "user:x": 1})
    assert str(info.value) == (
        "session 's1' already exists for user 'ada' in app 'shop'\n"
        "help: pass another session_id, leave it out for a generated one, or get_session() the existing one"
    )
    assert fetch(service, "s1").state == {"a": 1}
    assert run(service.get_user_state(app_name=APP, user_id=USER)) == {}
    # the same id for another user or app is another session
    assert create(service, session_id="s1", user_id="bob").id == "s1"
    assert create(service, session_id="s1", app_name="other").id == "s1"


@pytest.mark.parametrize("state", [[], "", 0, False, [("a", 1)]], ids=["list", "empty-str", "zero", "false", "pairs"])
def test_an_initial_state_that_is_not_a_mapping_is_refused(state: Any, service: SessionService) -> None:
    message = f"initial state must be a mapping of str to JSON values, not {type(state).__name__}"
    with pytest.raises(TypeError, match=message):
        create(service, session_id="s1", state=state)
    assert run(service.list_sessions(app_name=APP)) == []


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ({"k": float("nan")}, "state value 'k' is not plain JSON: it is nan, which JSON cannot hold"),
        ({"user:k": float("inf")}, "state value 'user:k' is not plain JSON: it is inf, which JSON cannot hold"),
        ({"k": [1, float("-inf")]}, "state value 'k[1]' is not plain JSON: it is -inf, which JSON cannot hold"),
    ],
    ids=["nan", "infinity", "minus-infinity-in-list"],
)
def test_an_initial_state_with_nan_or_infinity_is_refused_in_words(
    state: dict[str, Any], message: str, service: SessionService
) -> None:
    with pytest.raises(InvalidStateError) as info:
        create(service, session_id="s1", state=state)
    assert str(info.value).splitlines()[0] == f"{message} (it has no NaN or infinity)"
    assert run(service.list_sessions(app_name=APP)) == []
    assert run(service.get_user_state(app_name=APP, user_id=USER)) == {}


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [("app_name", " ", ValueError), ("user_id", "", ValueError), ("user_id", 7, TypeError)],
    ids=["blank-app", "blank-user", "int-user"],
)
def test_app_and_user_are_required(field: str, value: Any, error: type[Exception], service: SessionService) -> None:
    with pytest.raises(error, match=field):
        create(service, **{field: value})


def test_returned_sessions_are_copies(service: SessionService) -> None:
    created = create(service, session_id="s1", state={"cart": ["book"], "user:p": {"a": 1}, "app:t": [1]})
    run(service.append_event(created, event({"n": 1})))
    for session in (created, fetch(service, "s1"), run(service.list_sessions(app_name=APP))[0]):
        session.state["cart"].append("pen")
        session.state["user:p"]["a"] = 2
        session.state["app:t"].clear()
        session.state["new"] = 1
        session.events.clear()
    again = fetch(service, "s1")
    assert again.state == {"cart": ["book"], "user:p": {"a": 1}, "app:t": [1], "n": 1}
    assert len(again.events) == 1
    returned = run(service.append_event(again, event({"m": {"k": [1]}})))
    returned.actions.state_delta["m"]["k"].append(2)
    assert fetch(service, "s1").events[-1].actions.state_delta == {"m": {"k": [1]}}


def test_a_large_state_is_handed_out_as_copies_as_its_keys_change_between_lists_and_scalars(
    service: SessionService,
) -> None:
    """Many lists and dicts (copied in bulk) and keys that change kind: every copy is equal and independent."""
    state: dict[str, Any] = {f"k{n}": {"n": n, "tags": ["a"]} if n % 2 else f"v{n}" for n in range(40)}
    state |= {"user:list": [1], "app:map": {"a": [2]}}
    created = create(service, session_id="s1", state=state)
    deltas: list[dict[str, Any]] = [
        {"k1": "now text", "k2": ["now", "a", "list"], "user:list": 0, "app:map": {"b": []}},
        {"k1": {"back": [1]}, "k2": None, "user:list": [[3]], "k40": [4]},
    ]
    expected = dict(state)
    session = created
    for delta in deltas:
        run(service.append_event(session, event(delta)))
        expected |= delta
        session = fetch(service, "s1")
        assert session.state == expected
        for value in session.state.values():  # changing the copy changes nothing stored
            if isinstance(value, list):
                value.append("x")
            elif isinstance(value, dict):
                value["x"] = 1
        assert fetch(service, "s1").state == expected
        assert session.state != expected
        session = fetch(service, "s1")


def large_state(size: int) -> dict[str, Any]:
    """A state as an app builds one, and values and keys that a JSON document must keep exactly: floats that
    print with 17 digits, big and negative numbers, None, nesting, keys a JSON path could misread."""
    state: dict[str, Any] = {
        f"k{n}": {"id": n, "tags": ["a", n / 7]} if n % 10 == 0 else f"value {n}" for n in range(size)
    }
    state |= {
        "sum": 0.1 + 0.2,
        "big": 1e300,
        "one": 1.0,
        "huge": 2**62,
        "neg": -17,
        "nul in a value": "a\x00b",
        "none": None,
        "deep": {"a": [{"b": [0.30000000000000004, None, "x"]}]},
        "a.b": 1,
        "[0]": 2,
        "$": 3,
        "it's": 4,
        "ключ 🔑": "значение",
        "k" * 300: 5,
        "\uffffx": 6,
        "user:name": "Ada",
        "user:prefs": {"lang": "en"},
        "app:brand": "Acme",
    }
    return state


# Keys that a JSON path does not find as written: a session created with one keeps its whole state in rows.
SPECIAL_KEYS = {"plain": {}, "a-quote": {'say "hi"': 1}, "a-newline": {"a\nb": 2}, "a-nul": {"a\x00b": 3}}


@pytest.mark.parametrize("extra", list(SPECIAL_KEYS.values()), ids=list(SPECIAL_KEYS))
def test_a_large_created_state_reads_and_writes_the_same_on_every_service(
    extra: dict[str, Any], service: SessionService
) -> None:
    """A state of 2,000 keys given at create (kept by a database as one document when its keys allow) is read,
    listed, written over key by key, read by a turn and checked for staleness exactly as the in-memory service
    does it: values keep their type and digits, later writes win, None is a value."""
    state = large_state(2_000) | extra
    created = create(service, session_id="s1", state=state)
    assert created.state == state
    assert fetch(service, "s1").state == state
    early = fetch(service, "s1")
    delta = {
        "k1": "changed",
        "sum": None,
        "k" * 300: [6],
        "fresh": 0.1 + 0.7,
        "user:name": "Bea",
        **{k: 0 for k in extra},
    }
    run(service.append_event(created, event(delta)))
    expected = state | delta
    session = fetch(service, "s1")
    assert session.state == expected
    assert [type(session.state[key]) for key in ("big", "one", "huge", "sum")] == [float, float, int, type(None)]
    assert [listed.state for listed in run(service.list_sessions(app_name=APP))] == [expected]
    assert run(service.get_user_state(app_name=APP, user_id=USER)) == {"user:name": "Bea", "user:prefs": {"lang": "en"}}
    keys = ("k2", "k1", "sum", "fresh", "deep", "a.b", "it's", "ключ 🔑", "k" * 300, "\uffffx", "nope", *extra, 'x"y')
    turn, _ = run(service._turn_session(app_name=APP, user_id=USER, session_id="s1", keys=keys))
    assert turn is not None
    assert {key: turn.state[key] for key in keys if key in turn.state} == {
        k: expected[k] for k in keys if k in expected
    }
    with pytest.raises(StaleSessionError) as info:  # early was read before k1 was written
        run(service.append_event(early, event({"k1": "late", "k3": "fine"})))
    assert info.value.keys == ("k1",)
    run(service.append_event(early, event({"k3": "fine", "deep": []})))  # written at create only: not stale
    assert fetch(service, "s1").state == expected | {"k3": "fine", "deep": []}
    assert early.state == expected | {"k3": "fine", "deep": []}  # the copy took the scope another writer changed


def test_events_handed_out_are_deep_copies(service: SessionService) -> None:
    session = create(service, session_id="s1")
    given = event({"m": {"k": [1]}}, id="e1")
    run(service.append_event(session, given))
    given.actions.state_delta["m"]["k"].append("given")  # the event passed in
    session.events[-1].actions.state_delta["m"]["k"].append("callers")  # the event added to the caller's copy
    session.events[-1].content = "changed"
    read = fetch(service, "s1")
    read.events[0].actions.state_delta["m"]["k"].append("read")  # an event of a session read back
    duplicate = run(service.append_event(read, event({"x": 1}, id="e1")))  # the stored one, already there
    duplicate.actions.state_delta["m"]["k"].append("duplicate")
    duplicate.content = "changed"
    stored = fetch(service, "s1")
    assert [e.id for e in stored.events] == ["e1"]
    assert stored.events[0].actions.state_delta == {"m": {"k": [1]}}
    assert stored.events[0].content is None
    assert stored.state == {"m": {"k": [1]}}


def test_a_flat_delta_is_stored_apart_from_every_event_handed_in_or_out(service: SessionService) -> None:
    """A delta of plain scalars takes the fast path (no walk, shallow copies): the stored event still shares
    nothing that can change with the event given, the one returned, or the one in the caller's copy."""
    session = create(service, session_id="s1")
    given = event({"n": 1, "user:u": "a", "temp:t": 2.5}, id="e1", invocation_id="i1", content="hi")
    returned = run(service.append_event(session, given))
    assert returned is not given
    assert returned is session.events[-1]
    assert returned.actions.state_delta == {"n": 1, "user:u": "a"}  # temp: never stored
    given.actions.state_delta["n"] = "given"
    given.content = "given"
    returned.actions.state_delta["n"] = "returned"
    returned.actions.state_delta["x"] = "returned"
    returned.content = "returned"
    returned.actions = EventActions(state_delta={"n": "replaced"})
    stored = fetch(service, "s1")
    assert stored.events[0].actions.state_delta == {"n": 1, "user:u": "a"}
    assert stored.events[0].content == "hi"
    assert stored.state == {"n": 1, "user:u": "a"}
    assert session.state == {"n": 1, "user:u": "a", "temp:t": 2.5}  # the caller's copy keeps its temp: value


HANDED = [
    # (id, deltas appended (one: append_event, more: append_events), the copy reads another writer's first)
    ("flat", [{"n": 1, "user:u": "a"}], False),
    ("nested", [{"m": {"k": [1]}, "app:a": [{"x": 1}]}], False),
    ("nested-with-temp", [{"m": {"k": [1]}, "temp:t": {"k": [1]}}], False),
    ("behind-another-writer", [{"m": {"k": [1]}}], True),
    ("batch", [{"m": {"k": [1]}}, {"m2": {"k": [2]}, "user:u": ["v"]}], False),
]


@pytest.mark.parametrize(("deltas", "behind"), [c[1:] for c in HANDED], ids=[c[0] for c in HANDED])
def test_nothing_handed_in_or_out_by_an_append_is_stored(
    deltas: list[dict[str, Any]], behind: bool, service: SessionService
) -> None:
    """The events and values given, the events returned and the caller's copy (state and events) are
    each the caller's: changing any of them afterwards, in place or by assignment, changes nothing stored
    and nothing else the caller holds."""
    session = create(service, session_id="s1", state={"k": "v"})
    if behind:
        run(service.append_event(fetch(service, "s1"), event({"other": {"o": [1]}})))
    given = [event(delta, id=f"e{number}", invocation_id="i1") for number, delta in enumerate(deltas)]
    if len(given) == 1:
        returned = [run(service.append_event(session, given[0]))]
    else:
        returned = run(service.append_events(session, given))
    stored = fetch(service, "s1")
    expected_state, expected_events = stored.model_dump()["state"], [e.model_dump() for e in stored.events]
    mine = copy.deepcopy({**stored.state, **{k: v for d in deltas for k, v in d.items() if k.startswith("temp:")}})
    assert session.state == mine
    assert returned == session.events[-len(deltas) :]
    expected_returned = [e.model_dump() for e in returned]

    for event_given in given:  # the events given, and the values in them
        for value in event_given.actions.state_delta.values():
            if isinstance(value, dict):
                value["k"].append("given")
            elif isinstance(value, list):
                value.append("given")
        event_given.actions.state_delta["added"] = "given"
        event_given.content = "given"
    assert [e.model_dump() for e in returned] == expected_returned
    assert session.state == mine

    for event_returned in returned:  # the events returned, which are those in the caller's copy
        for value in event_returned.actions.state_delta.values():
            if isinstance(value, dict):
                value["k"].append("returned")
        event_returned.actions.state_delta["added"] = "returned"
        event_returned.content = "returned"
    assert session.state == mine  # the copy's state is not its events' deltas
    returned[0].actions = EventActions(state_delta={"n": "replaced"})

    for value in session.state.values():  # the caller's copy
        if isinstance(value, dict):
            value.setdefault("k", []).append("copy")
    session.state["added"] = "copy"
    session.events.clear()

    again = fetch(service, "s1")
    assert again.model_dump()["state"] == expected_state
    assert [e.model_dump() for e in again.events] == expected_events


def test_get_user_state_returns_a_copy(service: SessionService) -> None:
    create(service, session_id="s1", state={"user:profile": {"tags": ["a"]}})
    first = run(service.get_user_state(app_name=APP, user_id=USER))
    first["user:profile"]["tags"].append("b")
    first["user:new"] = 1
    assert run(service.get_user_state(app_name=APP, user_id=USER)) == {"user:profile": {"tags": ["a"]}}
    assert fetch(service, "s1").state == {"user:profile": {"tags": ["a"]}}


# --- scopes ---------------------------------------------------------------------------------

SCOPE_STATE = {"order": "A-1", "user:name": "Ada", "app:tier": "gold", "temp:step": 1, "other:key": "x"}


@pytest.mark.parametrize(
    ("app_name", "user_id", "expected"),
    [
        (APP, USER, {"user:name": "Ada", "app:tier": "gold"}),
        (APP, "bob", {"app:tier": "gold"}),
        ("other", USER, {}),
    ],
    ids=["same-user", "other-user-same-app", "other-app"],
)
def test_scopes_are_shared_where_their_prefix_says(
    app_name: str, user_id: str, expected: dict[str, Any], service: SessionService
) -> None:
    created = create(service, session_id="s1", state=SCOPE_STATE)
    assert created.state == SCOPE_STATE  # the creator's copy keeps its temp: values
    stored = fetch(service, "s1")
    assert stored.state == {k: v for k, v in SCOPE_STATE.items() if not k.startswith("temp:")}
    second = create(service, app_name=app_name, user_id=user_id, session_id="s2")
    assert second.state == expected


def test_user_and_app_state_are_stored_once_and_merged_everywhere(service: SessionService) -> None:
    first = create(service, session_id="s1")
    create(service, session_id="s2")
    bob = create(service, user_id="bob", session_id="s3")
    run(service.append_event(first, event({"user:lang": "en", "app:motd": "hi", "mine": 1})))
    assert fetch(service, "s2").state == {"user:lang": "en", "app:motd": "hi"}
    assert fetch(service, "s3", user_id="bob").state == {"app:motd": "hi"}
    run(service.append_event(fetch(service, "s2"), event({"user:lang": "fr"})))
    assert fetch(service, "s1").state == {"user:lang": "fr", "app:motd": "hi", "mine": 1}
    assert run(service.get_user_state(app_name=APP, user_id=USER)) == {"user:lang": "fr"}
    assert run(service.get_user_state(app_name=APP, user_id="nobody")) == {}
    run(service.delete_session(app_name=APP, user_id=USER, session_id="s1"))
    assert fetch(service, "s2").state == {"user:lang": "fr", "app:motd": "hi"}  # deleting a session keeps user state
    assert bob.state == {}


def test_temp_values_expire_from_the_callers_copy_with_their_invocation(service: SessionService) -> None:
    session = create(service, session_id="s1", state={"temp:init": 0})
    run(service.append_event(session, event({"temp:t": 1}, invocation_id="inv-1")))
    assert session.state == {"temp:init": 0, "temp:t": 1}  # initial temp: values join the first invocation
    run(service.append_event(session, event({"a": 1}, invocation_id="inv-1")))
    assert session.state == {"temp:init": 0, "temp:t": 1, "a": 1}
    run(service.append_event(session, event({"temp:u": 2}, invocation_id="inv-2")))
    assert session.state == {"a": 1, "temp:u": 2}  # inv-1's temp: values are gone, inv-2's are there
    run(service.append_event(session, event(invocation_id="inv-3")))
    assert session.state == {"a": 1}


BATCHES = [
    # (name, the batch's (delta, invocation) pairs, the caller's state after it)
    ("one-invocation", [({"temp:t": 1}, "inv-1"), ({"a": 1}, "inv-1")], {"temp:init": 0, "temp:t": 1, "a": 1}),
    ("next-invocation-last", [({"temp:t": 1}, "inv-1"), ({"temp:u": 2, "a": 1}, "inv-2")], {"a": 1, "temp:u": 2}),
    ("back-and-forth", [({"temp:t": 1}, "inv-2"), ({"temp:u": 2}, "inv-1")], {"temp:u": 2}),
]


@pytest.mark.parametrize(("batch", "expected"), [c[1:] for c in BATCHES], ids=[c[0] for c in BATCHES])
def test_a_batch_leaves_the_callers_copy_as_the_same_events_one_by_one_would(
    service: SessionService, batch: list[tuple[dict[str, Any], str]], expected: dict[str, Any]
) -> None:
    """``append_events`` refreshes the caller's copy once for the whole batch: the state it leaves
    (stored values, plus the temp: values of the last event's invocation), and the events it adds,
    are those of appending the events one at a time."""
    session = create(service, session_id="s1", state={"temp:init": 0})
    one_by_one = create(service, session_id="s2", state={"temp:init": 0})
    appended = run(service.append_events(session, [event(delta, invocation_id=inv) for delta, inv in batch]))
    for delta, inv in batch:
        run(service.append_event(one_by_one, event(delta, invocation_id=inv)))
    assert session.state == one_by_one.state == expected
    assert [e.id for e in session.events] == [e.id for e in appended]
    assert session.last_update_time == appended[-1].timestamp
    # The copy is the caller's own: changing it changes nothing stored.
    session.state["a"] = "changed locally"
    assert fetch(service, "s1").state == {k: v for k, v in expected.items() if not k.startswith("temp:")}


def test_a_reused_event_object_with_a_new_blank_id_is_a_new_event(service: SessionService) -> None:
    session = create(service, session_id="s1")
    reused = event({"n": 1})
    run(service.append_event(session, reused))
    reused.id = ""
    reused.actions = EventActions(state_delta={"n": 2})
    run(service.append_event(session, reused))
    stored = fetch(service, "s1")
    assert len({e.id for e in stored.events}) == 2
    assert stored.state == {"n": 2}


def test_temp_values_are_never_stored_but_visible_to_the_caller(service: SessionService) -> None:
    session = create(service, session_id="s1")
    appended = event({"temp:raw": {"x": 1}, "kept": 1}, invocation_id="inv1")
    returned = run(service.append_event(session, appended))
    assert session.state == {"temp:raw": {"x": 1}, "kept": 1}  # the rest of this invocation sees it
    assert returned.actions.state_delta == {"kept": 1}
    assert session.events[-1].actions.state_delta == {"kept": 1}
    run(service.append_event(session, event({"later": 2}, invocation_id="inv1")))
    assert session.state["temp:raw"] == {"x": 1}  # still there after the next append of the invocation
    stored = fetch(service, "s1")  # the next invocation starts here
    assert stored.state == {"kept": 1, "later": 2}
    assert all("temp:raw" not in e.actions.state_delta for e in stored.events)


def test_an_unknown_prefix_is_just_a_session_key(service: SessionService) -> None:
    session = create(service, session_id="s1", state={"users:name": "x", "user": 1})
    run(service.append_event(session, event({"other:key": [1]})))
    assert create(service, session_id="s2").state == {}
    assert fetch(service, "s1").state == {"users:name": "x", "user": 1, "other:key": [1]}


# --- events ---------------------------------------------------------------------------------


def test_a_delta_replaces_values_and_stores_none(service: SessionService) -> None:
    session = create(service, session_id="s1", state={"profile": {"a": 1, "b": 2}, "gone": "x"})
    run(service.append_event(session, event({"profile": {"a": 3}, "gone": None})))
    stored = fetch(service, "s1")
    assert stored.state == {"profile": {"a": 3}, "gone": None}
    assert "gone" in stored.state


def test_last_update_time_and_list_order(service: SessionService) -> None:
    first, second = create(service, session_id="a"), create(service, session_id="b")
    create(service, user_id="bob", session_id="c")
    run(service.append_event(second, event(timestamp=1000.0)))
    run(service.append_event(first, event({"n": 1}, timestamp=2000.0)))
    assert fetch(service, "a").last_update_time == 2000.0
    assert first.last_update_time == 2000.0
    listed = run(service.list_sessions(app_name=APP, user_id=USER))
    assert [s.id for s in listed] == ["b", "a"]
    assert all(s.events == [] for s in listed)
    assert listed[1].state == {"n": 1}
    assert [s.id for s in run(service.list_sessions(app_name=APP))] == ["b", "a", "c"]
    assert run(service.list_sessions(app_name="none")) == []
    assert [s.id for s in run(service.list_sessions(app_name=APP, user_id="bob"))] == ["c"]


CONFIGS = [
    ("none", None, ["e1", "e2", "e3", "e4"]),
    ("recent-2", GetSessionConfig(num_recent_events=2), ["e3", "e4"]),
    ("recent-0-means-none", GetSessionConfig(num_recent_events=0), []),
    ("recent-more-than-there-are", GetSessionConfig(num_recent_events=9), ["e1", "e2", "e3", "e4"]),
    ("after-is-inclusive", GetSessionConfig(after_timestamp=20.0), ["e2", "e3", "e4"]),
    ("after-past-the-end", GetSessionConfig(after_timestamp=99.0), []),
    ("after-and-recent", GetSessionConfig(after_timestamp=20.0, num_recent_events=1), ["e4"]),
]


@pytest.mark.parametrize(("config", "expected"), [c[1:] for c in CONFIGS], ids=[c[0] for c in CONFIGS])
@pytest.mark.parametrize("given_as", ["model", "mapping"])
def test_get_session_config(
    config: GetSessionConfig | None, expected: list[str], given_as: str, service: SessionService
) -> None:
    session = create(service, session_id="s1")
    for number, stamp in enumerate([10.0, 20.0, 30.0, 40.0], start=1):
        run(service.append_event(session, event(id=f"e{number}", timestamp=stamp)))
    given: Any = config.model_dump() if config is not None and given_as == "mapping" else config
    got = run(service.get_session(app_name=APP, user_id=USER, session_id="s1", config=given))
    assert got is not None
    assert [e.id for e in got.events] == expected
    assert len(fetch(service, "s1").events) == 4


@pytest.mark.parametrize(
    ("config", "error", "message"),
    [
        ({"num_recent_events": -1}, pydantic.ValidationError, "greater than or equal to 0"),
        ({"limit": 1}, pydantic.ValidationError, "Extra inputs are not permitted"),
        (5, TypeError, "config must be a GetSessionConfig or a mapping, not int"),
        ([("num_recent_events", 1)], TypeError, "not list"),
    ],
    ids=["negative", "unknown-field", "int", "pairs"],
)
def test_get_session_refuses_a_bad_config(
    config: Any, error: type[Exception], message: str, service: SessionService
) -> None:
    create(service, session_id="s1")
    with pytest.raises(error, match=message):
        run(service.get_session(app_name=APP, user_id=USER, session_id="s1", config=config))


def test_partial_events_are_checked_but_not_stored(service: SessionService) -> None:
    session = create(service, session_id="s1")
    partial = event({"x": 1}, partial=True)
    returned = run(service.append_event(session, partial))
    assert returned == partial
    assert returned is not partial  # a copy, as for stored events: changing it changes nothing here
    returned.actions.state_delta["x"] = 2
    assert partial.actions.state_delta == {"x": 1}
    assert session.state == {}
    assert session.events == []
    bad = event(partial=True)
    bad.actions.state_delta["v"] = {1}
    with pytest.raises(InvalidStateError, match="not plain JSON"):
        run(service.append_event(session, bad))
    run(service.delete_session(app_name=APP, user_id=USER, session_id="s1"))
    with pytest.raises(SessionNotFoundError):
        run(service.append_event(session, partial))
    assert run(service.list_sessions(app_name=APP)) == []


def test_the_same_event_id_is_stored_and_applied_once(service: SessionService) -> None:
    session = create(service, session_id="s1")
    first = event({"x": 1}, id="e1")
    run(service.append_event(session, first))
    run(service.append_event(session, event({"x": 2}, id="e2")))
    again = run(service.append_event(session, first))
    assert again.id == "e1"
    stored = fetch(service, "s1")
    assert [e.id for e in stored.events] == ["e1", "e2"]
    assert stored.state == {"x": 2}
    assert [e.id for e in session.events] == ["e1", "e2"]


def test_unknown_and_deleted_sessions(service: SessionService) -> None:
    session = create(service, session_id="s1")
    run(service.delete_session(app_name=APP, user_id=USER, session_id="nope"))  # a no-op
    run(service.delete_session(app_name=APP, user_id=USER, session_id=" s1 "))
    assert run(service.get_session(app_name=APP, user_id=USER, session_id="s1")) is None
    with pytest.raises(SessionNotFoundError) as info:
        run(service.append_event(session, event({"x": 1})))
    assert str(info.value) == (
        "no session 's1' for user 'ada' in app 'shop'\n"
        "help: create_session() first, or check the app name, user id and session id"
    )
    assert run(service.list_sessions(app_name=APP)) == []


def test_append_event_checks_its_arguments(service: SessionService) -> None:
    session = create(service, session_id="s1")
    with pytest.raises(TypeError, match="takes a Session and an Event"):
        run(service.append_event(session, {"author": "x"}))  # type: ignore[arg-type]


# --- bad input changes nothing --------------------------------------------------------------

BAD_DELTAS = [
    ("set-value", {"ok": 1, "v": {1}}, "not plain JSON"),
    ("object-in-list", {"user:ok": 1, "v": [object()]}, "not plain JSON"),
    ("int-key", {"app:ok": 1, 3: "x"}, "not a string"),
    ("nan", {"ok": 1, "v": float("nan")}, "'v' is not plain JSON: it is nan, which JSON cannot hold"),
    ("infinity", {"user:ok": 1, "v": float("inf")}, "'v' is not plain JSON: it is inf, which JSON cannot hold"),
]


@pytest.mark.parametrize(("delta", "message"), [c[1:] for c in BAD_DELTAS], ids=[c[0] for c in BAD_DELTAS])
def test_a_bad_delta_changes_nothing(delta: dict[Any, Any], message: str, service: SessionService) -> None:
    session = create(service, session_id="s1", state={"keep": 1})
    bad = event()
    bad.actions.state_delta.update(delta)  # models check on construction; the service checks again
    with pytest.raises(InvalidStateError, match=message):
        run(service.append_event(session, bad))
    assert session.state == {"keep": 1}
    assert session.events == []
    stored = fetch(service, "s1")
    assert stored.state == {"keep": 1}
    assert stored.events == []
    assert run(service.get_user_state(app_name=APP, user_id=USER)) == {}  # no user: key of the delta landed
    assert create(service, session_id="s2").state == {}  # no app: key either
    run(service.append_event(session, event({"ok": 2})))  # the copy is not stale afterwards
    assert fetch(service, "s1").state == {"keep": 1, "ok": 2}


@pytest.mark.parametrize(("state", "message"), [c[1:] for c in BAD_DELTAS], ids=[c[0] for c in BAD_DELTAS])
def test_a_bad_initial_state_creates_nothing(state: dict[Any, Any], message: str, service: SessionService) -> None:
    with pytest.raises(InvalidStateError, match=message):
        create(service, session_id="s1", state=state)
    assert run(service.list_sessions(app_name=APP)) == []
    assert run(service.get_user_state(app_name=APP, user_id=USER)) == {}
    assert create(service, session_id="s2").state == {}  # no app: value leaked either


# --- the value contract: every service accepts and refuses the same values -------------------


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def cycle() -> Any:
    value: list[Any] = []
    value.append(value)
    return value


# id, value, the error's words (None: accepted, and read back equal and of the same types)
VALUE_CONTRACT: list[tuple[str, Callable[[], Any], str | None]] = [
    ("text", lambda: "héllo 😀 \u200b", None),
    ("nul-and-control-characters", lambda: "a\x00b\x1f\x7f", None),
    ("nul-in-a-key", lambda: {"a\x00b": 1}, None),
    ("int-64-bit-max", lambda: 2**63 - 1, None),
    ("int-64-bit-min", lambda: -(2**63), None),
    ("float-not-int", lambda: [1.0, -0.0, 5e-324, 1.7976931348623157e308], None),
    ("bool-not-int", lambda: [True, False, 0, 1], None),
    ("nested-at-the-limit", lambda: nested(MAX_DEPTH), None),
    ("empty-containers", lambda: {"a": [], "b": {}, "c": [[], {}]}, None),
    ("lone-surrogate", lambda: "a\ud800", "holds the lone surrogate '\\ud800' at index 1"),
    ("lone-surrogate-in-a-key", lambda: {"\udfff": 1}, "has a key that holds the lone surrogate"),
    ("int-2-to-63", lambda: 2**63, "is the int 9223372036854775808, outside the 64-bit range"),
    ("int-10-to-5000", lambda: 10**5000, "is an int of about 5001 digits, outside the 64-bit range"),
    ("nan", lambda: float("nan"), "is nan, which JSON cannot hold"),
    ("infinity-in-a-dict", lambda: {"x": float("inf")}, "is inf, which JSON cannot hold"),
    ("nested-one-too-deep", lambda: nested(MAX_DEPTH + 1), f"nests lists and dicts more than {MAX_DEPTH} deep"),
    ("nested-500", lambda: nested(500), f"nests lists and dicts more than {MAX_DEPTH} deep"),
    ("nested-100000", lambda: nested(100_000), f"nests lists and dicts more than {MAX_DEPTH} deep"),
    ("cyclic-list", cycle, "contains itself"),
    ("tuple", lambda: (1, 2), "is of type tuple"),
    ("bytes", lambda: b"x", "is of type bytes"),
]


# Each value under a key of each stored scope in turn (they are stored alike, in one kind of column).
CONTRACT_CASES = [(("k", "user:k", "app:k")[n % 3], *case[1:]) for n, case in enumerate(VALUE_CONTRACT)]


def same_json(left: Any, right: Any) -> bool:
    """Equal, with the same types all the way down (``1 == 1.0 == True`` in Python; not in state)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(same_json(left[key], right[key]) for key in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(same_json(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, float):
        return repr(left) == repr(right)  # -0.0 stays -0.0
    return bool(left == right)


@pytest.mark.parametrize(("key", "make", "words"), CONTRACT_CASES, ids=[c[0] for c in VALUE_CONTRACT])
def test_the_value_contract_on_create(
    make: Callable[[], Any], words: str | None, key: str, service: SessionService
) -> None:
    value = make()
    if words is None:
        create(service, session_id="s1", state={key: value})
        assert same_json(fetch(service, "s1").state[key], value)
        return
    with pytest.raises(InvalidStateError) as info:
        create(service, session_id="s1", state={"ok": 1, key: value})
    assert words in str(info.value)
    assert info.value.key == key
    assert str(info.value).startswith(f"state value {info.value.path!r} is not plain JSON")
    assert run(service.list_sessions(app_name=APP)) == []
    assert run(service.get_user_state(app_name=APP, user_id=USER)) == {}
    assert create(service, session_id="s2").state == {}


@pytest.mark.parametrize(("key", "make", "words"), CONTRACT_CASES, ids=[c[0] for c in VALUE_CONTRACT])
def test_the_value_contract_on_append(
    make: Callable[[], Any], words: str | None, key: str, service: SessionService
) -> None:
    value = make()
    session = create(service, session_id="s1", state={"keep": 1})
    appended = event()
    appended.actions.state_delta.update({"ok": 2, key: value})  # models check on construction; services again
    if words is None:
        run(service.append_event(session, appended))
        stored = fetch(service, "s1")
        assert same_json(stored.state[key], value)
        assert same_json(stored.events[0].actions.state_delta[key], value)
        return
    with pytest.raises(InvalidStateError) as info:
        run(service.append_event(session, appended))
    assert words in str(info.value)
    assert info.value.key == key
    assert session.state == {"keep": 1}
    assert session.events == []
    stored = fetch(service, "s1")
    assert stored.state == {"keep": 1}
    assert stored.events == []
    assert run(service.get_user_state(app_name=APP, user_id=USER)) == {}
    assert create(service, session_id="s2").state == {}  # no user: or app: value landed either


# Ids and event text no database can store are refused by every service, before anything is stored.

BAD_IDS = [
    ("app-nul", {"app_name": "sh\x00op"}, "app_name 'sh\\x00op' holds a NUL character"),
    ("app-too-long", {"app_name": "a" * 257}, "app_name 'aaaaaaaaaa"),
    ("user-too-long", {"user_id": "u" * 300}, "is 300 characters long; ids are at most 256 (a database indexes them)"),
    ("session-too-long", {"session_id": "é" * 1000}, "session_id 'éééééééééé"),
    ("user-surrogate", {"user_id": "a\ud800"}, "user_id 'a\\ud800' holds the lone surrogate '\\ud800' at index 1"),
    ("session-nul", {"session_id": "s\x00"}, "session_id 's\\x00' holds a NUL character"),
    ("session-surrogate", {"session_id": "\udfff"}, "session_id '\\udfff' holds the lone surrogate"),
]


@pytest.mark.parametrize(("ids", "words"), [c[1:] for c in BAD_IDS], ids=[c[0] for c in BAD_IDS])
def test_ids_no_database_can_store_are_refused(ids: dict[str, str], words: str, service: SessionService) -> None:
    with pytest.raises(ValueError, match=re.escape(words)):
        create(service, **ids)
    assert run(service.list_sessions(app_name=APP)) == []
    key = {"app_name": APP, "user_id": USER, "session_id": "s1", **ids}
    with pytest.raises(ValueError, match=re.escape(words)):
        run(service.get_session(**key))
    with pytest.raises(ValueError, match=re.escape(words)):
        run(service.delete_session(**key))


@pytest.mark.parametrize("field", ["author", "content", "invocation_id", "id"])
def test_event_text_no_database_can_store_is_refused(field: str, service: SessionService) -> None:
    with pytest.raises(pydantic.ValidationError, match="holds the lone surrogate"):
        Event(**{"author": "a", field: "x\ud800"})
    session = create(service, session_id="s1")
    bad = event({"k": 1})
    bad.__dict__[field] = "x\ud800"  # as if built without validation: the service validates it again
    with pytest.raises(pydantic.ValidationError, match="holds the lone surrogate '\\\\ud800' at index 1"):
        run(service.append_event(session, bad))
    assert fetch(service, "s1").events == []
    assert fetch(service, "s1").state == {}
    run(service.append_event(session, event({"k": 1}, author="a\x00", content="b\x00")))  # NUL is text all store
    stored = fetch(service, "s1").events[0]
    assert (stored.author, stored.content) == ("a\x00", "b\x00")


@pytest.mark.parametrize(
    ("event_id", "words"),
    [("x" * 257, "the id is 257 characters long; ids are at most 256"), ("e\x00", "the id holds a NUL character")],
    ids=["too-long", "nul"],
)
def test_event_ids_no_database_can_index_are_refused(event_id: str, words: str, service: SessionService) -> None:
    with pytest.raises(pydantic.ValidationError, match=re.escape(words)):
        event({"k": 1}, id=event_id)
    session = create(service, session_id="s1")
    bad = event({"k": 1})
    bad.__dict__["id"] = event_id  # as if built without validation: the service validates it again
    with pytest.raises(pydantic.ValidationError, match=re.escape(words)):
        run(service.append_event(session, bad))
    assert fetch(service, "s1").events == []


# Four bytes in UTF-8 each, and no two alike in a row: what an index stores at its largest (not compressible).
WIDE = "".join(chr(0x1F300 + (n * 7919) % 0x300) for n in range(256))


def test_ids_as_long_as_allowed_in_the_widest_characters_work_on_every_service(service: SessionService) -> None:
    ids = {"app_name": WIDE, "user_id": WIDE[::-1], "session_id": WIDE[1:] + WIDE[0]}
    created = run(service.create_session(**ids, state={"user:a": 1, "app:b": 2, "c": 3}))
    run(service.append_event(created, event({"c": 4}, id=WIDE)))
    found = run(service.get_session(**ids))
    assert found is not None
    assert found.state == {"user:a": 1, "app:b": 2, "c": 4}
    assert [stored.id for stored in found.events] == [WIDE]
    assert [session.id for session in run(service.list_sessions(app_name=WIDE))] == [ids["session_id"]]


def digest_of(key: str) -> str:
    """The name under which a database stores a key that no index takes (tests/test_sql_sessions.py)."""
    import hashlib

    return "\uffff" + hashlib.sha256(key.encode()).hexdigest()


LONG = "".join(chr(0x4E00 + (n * 7919) % 0x5000) for n in range(1200))  # 3,600 bytes, not compressible
ODD_KEYS = [
    ("long", LONG),
    ("long-user", "user:" + LONG),
    ("long-app", "app:" + LONG),
    ("nul", "a\x00b"),
    ("user-nul", "user:\x00"),
    ("starts-like-a-digest", "\uffffx"),
    ("a-digest-of-another-key", digest_of(LONG)),
    ("as-long-as-a-name", "k" * 256),
    ("one-longer", "k" * 257),
    ("one-longer-but-a-nul", "k" * 256 + "\x00"),
]


def test_every_service_takes_state_keys_of_any_length_and_with_nul_characters(service: SessionService) -> None:
    """Keys that no database index takes as they are (PostgreSQL's limit on an index row, text that cannot
    hold a NUL): stored, read back, written again, listed and checked for staleness like any other key."""
    state = {key: number for number, (_, key) in enumerate(ODD_KEYS)}
    created = create(service, session_id="s1", state=state)
    assert created.state == state
    assert fetch(service, "s1").state == state
    other = fetch(service, "s1")
    delta = {key: [key, number] for number, (_, key) in enumerate(ODD_KEYS) if number % 2 == 0}
    run(service.append_event(created, event(delta)))
    expected = state | delta
    assert fetch(service, "s1").state == expected
    assert run(service.list_sessions(app_name=APP))[0].state == expected
    assert run(service.get_user_state(app_name=APP, user_id=USER)) == {
        key: value for key, value in expected.items() if key.startswith("user:")
    }
    with pytest.raises(StaleSessionError) as info:  # other was read before the delta landed
        run(service.append_event(other, event({LONG: "late", "a\x00b": "late", "fresh": 1})))
    assert info.value.keys == (LONG,)
    run(service.append_event(other, event({"a\x00b": "new"})))  # not written since other was read
    assert fetch(service, "s1").state == expected | {"a\x00b": "new"}


# --- stale sessions -------------------------------------------------------------------------

STALE = [
    # (id, who writes first, what they write, what the stale copy then appends, keys in the error or None);
    # "new-..." writers create a session with that initial state, the others append it.
    ("same-key", "same-session", {"status": "a"}, {"status": "b"}, ("status",)),
    ("other-key", "same-session", {"status": "a"}, {"note": "b"}, None),
    ("names-only-the-shared-keys", "same-session", {"a": 1, "b": 1}, {"b": 2, "c": 2, "a": 2}, ("b", "a")),
    ("empty-other-append", "same-session", {}, {"status": "b"}, None),
    ("none-is-a-write", "same-session", {"status": None}, {"status": "b"}, ("status",)),
    ("temp-keys-never-conflict", "same-session", {"temp:t": 1}, {"temp:t": 2}, None),
    ("user-key-from-another-session", "other-session", {"user:n": 1}, {"user:n": 2}, ("user:n",)),
    ("session-key-from-another-session", "other-session", {"status": "a"}, {"status": "b"}, None),
    ("app-key-from-another-user", "other-user", {"app:n": 1}, {"app:n": 2}, ("app:n",)),
    ("user-key-from-another-user", "other-user", {"user:n": 1}, {"user:n": 2}, None),
    ("user-key-of-a-new-session", "new-session", {"user:n": 1}, {"user:n": 2}, ("user:n",)),
    ("app-key-of-a-new-session-of-another-user", "new-other-user", {"app:n": 1}, {"app:n": 2}, ("app:n",)),
    ("session-key-of-a-new-session", "new-session", {"status": "a"}, {"status": "b"}, None),
    ("user-key-of-another-users-new-session", "new-other-user", {"user:n": 1}, {"user:n": 2}, None),
]


@pytest.mark.parametrize(("writer", "first", "second", "keys"), [c[1:] for c in STALE], ids=[c[0] for c in STALE])
def test_stale_session_rule(
    writer: str,
    first: dict[str, Any],
    second: dict[str, Any],
    keys: tuple[str, ...] | None,
    service: SessionService,
) -> None:
    create(service, session_id="s1", state={"status": "new"})
    writers = {
        "same-session": lambda: fetch(service, "s1"),
        "other-session": lambda: create(service, session_id="s2"),
        "other-user": lambda: create(service, user_id="bob", session_id="b1"),
    }
    stale = fetch(service, "s1")
    if writer == "new-session":
        create(service, session_id="s2", state=first)
    elif writer == "new-other-user":
        create(service, user_id="bob", session_id="b1", state=first)
    else:
        run(service.append_event(writers[writer](), event(first)))
    before = fetch(service, "s1")
    if keys is None:
        run(service.append_event(stale, event(second)))
        expected = {k: v for k, v in {**before.state, **second}.items() if not k.startswith("temp:")}
        assert fetch(service, "s1").state == expected
        return
    with pytest.raises(StaleSessionError) as info:
        run(service.append_event(stale, event(second)))
    assert info.value.keys == keys
    assert str(info.value).startswith(f"session 's1' is stale: {', '.join(map(repr, keys))} changed after")
    assert "help: get_session() again" in str(info.value)
    after = fetch(service, "s1")
    assert after.state == before.state
    assert len(after.events) == len(before.events)
    run(service.append_event(fetch(service, "s1"), event(second)))  # a fresh copy goes through
    assert fetch(service, "s1").state == {**before.state, **second}


def test_a_successful_append_brings_the_callers_copy_up_to_date(service: SessionService) -> None:
    create(service, session_id="s1")
    mine, theirs = fetch(service, "s1"), fetch(service, "s1")
    run(service.append_event(mine, event({"temp:t": 1})))
    run(service.append_event(theirs, event({"a": 1})))
    run(service.append_event(mine, event({"b": 1})))  # stale, but touches nothing theirs changed
    assert mine.state == {"a": 1, "b": 1, "temp:t": 1}  # theirs is visible now, temp: kept
    run(service.append_event(mine, event({"a": 2, "b": 2})))  # no longer stale: nothing changed since
    assert fetch(service, "s1").state == {"a": 2, "b": 2}


@pytest.mark.parametrize("how", ["recreated", "built-by-hand", "from-another-service"], ids=lambda how: how)
def test_a_copy_of_another_session_is_stale(
    how: str, service: SessionService, make_service: Callable[[], SessionService]
) -> None:
    old = create(service, session_id="s1")
    if how == "recreated":
        run(service.delete_session(app_name=APP, user_id=USER, session_id="s1"))
        create(service, session_id="s1")
    elif how == "built-by-hand":
        old = Session(id="s1", app_name=APP, user_id=USER)
    else:  # the same ids in another service, whose revision number has run ahead of this one's
        other = make_service()
        old = create(other, session_id="s1")
        for step in range(3):
            run(other.append_event(old, event({"n": step})))
    run(service.append_event(fetch(service, "s1"), event({"x": "newer"})))
    with pytest.raises(StaleSessionError, match="this copy was not read from the session as it is now"):
        run(service.append_event(old, event({"x": "older"})))
    assert fetch(service, "s1").state == {"x": "newer"}


def test_session_errors_are_templating_errors_and_pickle() -> None:
    errors: list[TemplatingError] = [
        AlreadyExistsError(app_name="a", user_id="u", session_id="s"),
        SessionNotFoundError(app_name="a", user_id="u", session_id="s"),
        StaleSessionError(session_id="s", keys=("k",)),
    ]
    for error in errors:
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error)
        assert str(copy) == str(error)
        assert error.help


# --- concurrency ----------------------------------------------------------------------------
# Threads contend for the same keys of the same session. The interpreter switches threads every
# microsecond here (not every 5 ms) for the in-memory service, so without its lock it loses updates within
# a run.

# How many appends each thread makes depends on where a service can interleave two appends. The
# in-memory service awaits nothing: only a thread switch in the middle of an append can, so without its
# lock it loses updates only over many appends (8 threads x 100; fewer let it pass). A database service
# interleaves at every await on its connection: 8 threads x 10 contend plenty (each test asserts it saw
# stale copies refused), and without its staleness check (or, on PostgreSQL, its row locks) it loses
# updates within the first round. Tasks cannot race inside the in-memory service; for a database service
# 16 tasks contend plenty. Retries grow with the square of the contenders: the database sizes are what
# keeps these tests short (docs/contributing.md).
WORKERS, MEMORY_EACH, DATABASE_EACH = 8, 100, 10
TASKS = 16


def appends_per_thread(service: SessionService) -> int:
    return MEMORY_EACH if isinstance(service, InMemorySessionService) else DATABASE_EACH


@pytest.fixture
def fast_switching(service: SessionService) -> Iterator[None]:
    """Threads switch every microsecond for the in-memory service. A database service runs every call on
    its own loop thread, where appends interleave at awaits whatever the interval: switching that often
    would only hand the interpreter lock round nine threads, several times slower."""
    if not isinstance(service, InMemorySessionService):
        yield
        return
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


async def read_modify_write(
    service: SessionService, session_id: str, change: Any, *, after_first_read: Any = None
) -> int:
    """Append ``change(state)`` as a delta computed from a fresh read, again on a stale copy; return the retries.

    ``after_first_read()`` is called once, between the first read and its append."""
    retries = 0
    while True:
        config = GetSessionConfig(num_recent_events=0)
        session = await service.get_session(app_name=APP, user_id=USER, session_id=session_id, config=config)
        assert session is not None
        if after_first_read is not None:
            after_first_read()
            after_first_read = None
        await asyncio.sleep(0)  # let other tasks append in between
        try:
            await service.append_event(session, event(change(session.state)))
        except StaleSessionError:
            retries += 1
        else:
            return retries


def bump(state: dict[str, Any]) -> dict[str, Any]:
    return {"count": state["count"] + 1, "user:visits": state["user:visits"] + 1}


def in_threads(work: Any) -> list[Any]:
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        return list(pool.map(work, range(WORKERS)))


@pytest.mark.slow
@pytest.mark.usefixtures("fast_switching")
def test_threads_incrementing_one_counter_lose_no_update(service: SessionService) -> None:
    create(service, session_id="s1", state={"count": 0, "user:visits": 0})
    create(service, session_id="s2", state={"count": 0})  # user:visits is shared with s1

    # Every thread reads before any appends, so their first appends surely contend: each writes
    # user:visits, which all of them read at the same value.
    everyone_read = threading.Barrier(WORKERS, timeout=600)  # a bound on a hang, never a verdict
    each = appends_per_thread(service)

    async def increments(worker: int) -> int:
        session_id = "s1" if worker % 2 else "s2"
        first = await read_modify_write(service, session_id, bump, after_first_read=everyone_read.wait)
        return first + sum([await read_modify_write(service, session_id, bump) for _ in range(each - 1)])

    retries = in_threads(lambda worker: run(increments(worker)))
    assert sum(retries) >= WORKERS - 1  # all but the first append of the first round were refused as stale
    first, second = fetch(service, "s1"), fetch(service, "s2")
    half = WORKERS * each // 2
    assert (first.state["count"], second.state["count"]) == (half, half)
    assert first.state["user:visits"] == second.state["user:visits"] == WORKERS * each
    assert (len(first.events), len(second.events)) == (half, half)


@pytest.mark.slow
@pytest.mark.usefixtures("fast_switching")
def test_threads_appending_to_one_shared_session_lose_no_event_and_no_update(service: SessionService) -> None:
    create(service, session_id="shared", state={"log": []})
    each = appends_per_thread(service)

    def work(worker: int) -> None:
        own = create(service, session_id=f"own-{worker}")
        copy = fetch(service, "shared")  # goes stale at once; keys of its own still go through
        for step in range(each):
            entry = f"{worker}-{step}"
            run(read_modify_write(service, "shared", lambda state, entry=entry: {"log": [*state["log"], entry]}))
            run(service.append_event(copy, event({f"k{entry}": step, f"user:u{worker}": step})))
            run(service.append_event(own, event({"n": step})))

    in_threads(work)
    stored = fetch(service, "shared")
    expected = {f"{worker}-{step}" for worker in range(WORKERS) for step in range(each)}
    assert len(stored.state["log"]) == WORKERS * each
    assert set(stored.state["log"]) == expected
    assert {key[1:] for key in stored.state if key.startswith("k")} == expected
    assert len(stored.events) == 2 * WORKERS * each
    assert len({e.id for e in stored.events}) == 2 * WORKERS * each
    assert all(stored.state[f"user:u{w}"] == each - 1 for w in range(WORKERS))
    for worker in range(WORKERS):
        own = fetch(service, f"own-{worker}")
        assert len(own.events) == each
        assert own.state["n"] == each - 1


@pytest.mark.slow
def test_asyncio_tasks_lose_no_event_and_no_update(service: SessionService) -> None:
    create(service, session_id="s1", state={"count": 0, "user:visits": 0})
    create(service, session_id="s2", state={"count": 0, "user:visits": 0})

    async def main() -> list[int]:
        jobs = [read_modify_write(service, f"s{1 + n % 2}", bump) for n in range(TASKS)]
        return await asyncio.gather(*jobs)

    retries = run(main())
    assert sum(retries) > 0  # tasks really interleaved, and stale copies were caught rather than overwritten
    first, second = fetch(service, "s1"), fetch(service, "s2")
    half = TASKS // 2
    assert (first.state["count"], second.state["count"]) == (half, half)
    assert first.state["user:visits"] == TASKS
    assert (len(first.events), len(second.events)) == (half, half)


def test_append_events_stores_all_or_nothing_when_another_write_lands_first(service: SessionService) -> None:
    mine = create(service, session_id="s1", state={"a": 0})
    other = run(service.get_session(app_name=APP, user_id=USER, session_id="s1"))
    assert other is not None
    run(service.append_event(other, event({"b": 1})))  # another writer changes "b" after ``mine`` was read
    with pytest.raises(StaleSessionError, match="'b'"):
        run(service.append_events(mine, [event({"a": 1}), event({"b": 2})]))
    stored = run(service.get_session(app_name=APP, user_id=USER, session_id="s1"))
    assert stored is not None
    assert (stored.state, len(stored.events)) == ({"a": 0, "b": 1}, 1)  # the first event was not stored either
    assert mine.state == {"a": 0}
    appended = run(service.append_events(mine, [event({"a": 1}), event({"c": 3}, partial=True), event({"c": 2})]))
    assert [e.actions.state_delta for e in appended] == [{"a": 1}, {"c": 3}, {"c": 2}]
    assert mine.state == {"a": 1, "b": 1, "c": 2}
    assert len(mine.events) == 2  # the partial event is not stored


def test_append_events_checks_every_event_before_storing_any(service: SessionService) -> None:
    session = create(service, session_id="s1")
    bad = event()
    bad.actions.state_delta["v"] = {1}
    with pytest.raises(InvalidStateError):
        run(service.append_events(session, [event({"a": 1}), bad]))
    with pytest.raises(TypeError, match="sequence of Events"):
        run(service.append_events(session, [event({"a": 1}), "not an event"]))  # type: ignore[list-item]
    assert session.events == []
    stored = run(service.get_session(app_name=APP, user_id=USER, session_id="s1"))
    assert stored is not None
    assert stored.events == []


# --- appends cost the delta ------------------------------------------------------------------


def test_an_append_changes_only_the_keys_its_delta_writes_in_the_callers_copy(service: SessionService) -> None:
    """The copy takes the delta, not a new copy of the whole state: values the delta does not touch
    stay the very objects the copy had, and the values it writes are the copy's own."""
    session = create(service, session_id="s1", state={"big": {"rows": list(range(100))}, "user:prefs": {"a": [1]}})
    big, prefs = session.state["big"], session.state["user:prefs"]
    written = {"rows": [1, 2]}
    run(service.append_event(session, event({"small": written, "temp:t": written}, invocation_id="inv-1")))
    assert session.state["big"] is big
    assert session.state["user:prefs"] is prefs
    assert session.state == {**fetch(service, "s1").state, "temp:t": written}
    assert session.state["small"] is not written
    assert session.state["temp:t"] is not written
    assert session.state["small"] is not session.state["temp:t"]  # the stored value is not the caller's temp: one
    session.state["small"]["rows"].append(3)
    assert fetch(service, "s1").state["small"] == {"rows": [1, 2]}


def test_a_copy_behind_another_writer_takes_the_changed_scope_whole(service: SessionService) -> None:
    mine = create(service, session_id="s1", state={"a": 1, "user:u": 1, "app:x": {"k": 1}})
    app_value = mine.state["app:x"]
    theirs = fetch(service, "s1")
    run(service.append_event(theirs, event({"b": 2, "user:u": 2})))  # session and user: scopes change
    run(service.append_event(mine, event({"c": 3})))
    assert mine.state == {"a": 1, "b": 2, "c": 3, "user:u": 2, "app:x": {"k": 1}}
    assert mine.state["app:x"] is app_value  # the app: scope did not change: not copied again


@pytest.mark.parametrize("times", [30, 60], ids=["30", "60"])
def test_a_value_shared_past_the_size_budget_is_refused_at_once_by_every_service(
    times: int, service: SessionService
) -> None:
    shared: list[Any] = []
    for _ in range(times):
        shared = [shared, shared]
    with pytest.raises(InvalidStateError, match="too large") as info:
        create(service, session_id="s1", state={"v": shared})
    assert info.value.key == "v"
    with pytest.raises(pydantic.ValidationError, match="too large"):  # an event refuses it too, at once
        event({"v": shared})
    session = create(service, session_id="s1")
    unchecked = Event(author="agent", actions=EventActions.model_construct(state_delta={"ok": 1, "v": shared}))
    with pytest.raises(InvalidStateError, match="too large"):
        run(service.append_event(session, unchecked))
    assert fetch(service, "s1").state == {}


def test_a_shared_value_within_the_budget_is_stored_in_full(service: SessionService) -> None:
    shared: list[Any] = [{"a": 1}]
    for _ in range(10):
        shared = [shared, shared]
    session = create(service, session_id="s1")
    run(service.append_event(session, event({"v": shared})))
    assert fetch(service, "s1").state["v"] == shared
    assert session.state["v"] == shared


@pytest.mark.parametrize(
    ("fields", "stored"),
    [
        ({"id": "  e1  "}, {"id": "e1"}),
        ({"timestamp": 5}, {"timestamp": 5.0}),
        ({"id": ""}, {}),
    ],
    ids=["unstripped-id", "int-timestamp", "blank-id"],
)
def test_an_event_built_without_validation_is_validated_when_stored(
    fields: dict[str, Any], stored: dict[str, Any], service: SessionService
) -> None:
    session = create(service, session_id="s1")
    made = Event.model_construct(author="agent", actions=EventActions(), **fields)
    result = run(service.append_event(session, made))
    for name, value in stored.items():
        assert getattr(result, name) == value
        assert type(getattr(result, name)) is type(value)
    assert result.id.strip() == result.id != ""
    assert fetch(service, "s1").events[0].id == result.id


def test_an_event_built_without_validation_with_a_bad_field_is_refused(service: SessionService) -> None:
    session = create(service, session_id="s1")
    with pytest.raises(pydantic.ValidationError):
        run(service.append_event(session, Event.model_construct(author=3, actions=EventActions())))
    assert fetch(service, "s1").events == []
