"""Agent contexts over sessions, inject_session_state, and the whole pipeline from session to instruction."""

from __future__ import annotations

import asyncio
import copy
import json
import pickle
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from syrupy.assertion import SnapshotAssertion

from templating import (
    Agent,
    CallbackContext,
    Event,
    EventActions,
    InMemorySessionService,
    InvalidStateError,
    MissingKeyError,
    ReadonlyContext,
    Session,
    State,
    Template,
    ToolContext,
    concat,
    inject_session_state,
    instruction,
    jinja,
    render,
    when,
)


def make_session(**state: Any) -> Session:
    service = InMemorySessionService()
    return asyncio.run(service.create_session(app_name="shop", user_id="ada", session_id="s1", state=state))


CONTEXTS: list[tuple[str, Callable[[Session], ReadonlyContext]]] = [
    ("readonly", lambda s: ReadonlyContext(s, invocation_id="inv-1", agent_name="support")),
    ("callback", lambda s: CallbackContext(s, invocation_id="inv-1", agent_name="support")),
    ("tool", lambda s: ToolContext(s, invocation_id="inv-1", agent_name="support", function_call_id="call-1")),
]


@pytest.mark.parametrize("make", [c[1] for c in CONTEXTS], ids=[c[0] for c in CONTEXTS])
def test_every_context_exposes_ids_and_renders(make: Callable[[Session], ReadonlyContext]) -> None:
    ctx = make(make_session(**{"order": "A-1", "user:name": "Ada", "app:brand": "Acme", "temp:step": 2}))
    assert (ctx.app_name, ctx.user_id, ctx.session_id) == ("shop", "ada", "s1")
    assert (ctx.invocation_id, ctx.agent_name) == ("inv-1", "support")
    assert isinstance(ctx.state, Mapping)
    template = Template("<app:brand>: hi <user:name>, order <order> (step <temp:step>)<note?>")
    assert template.render(ctx) == "Acme: hi Ada, order A-1 (step 2)"
    with pytest.raises(MissingKeyError) as info:
        Template("<user:nmae>").render(ctx)
    assert info.value.missing[0].suggestion == "user:name"
    assert "session_id='s1'" in repr(ctx)


def test_context_ids_default_to_none() -> None:
    ctx = ReadonlyContext(make_session())
    assert (ctx.invocation_id, ctx.agent_name) == (None, None)
    assert ToolContext(make_session()).function_call_id is None


def test_a_context_needs_a_session() -> None:
    with pytest.raises(TypeError, match="a context needs a Session, not dict"):
        ReadonlyContext({"a": 1})  # type: ignore[arg-type]


WRITES: list[tuple[str, Callable[[Any], object]]] = [
    ("setitem", lambda s: s.__setitem__("a", 2)),
    ("delitem", lambda s: s.__delitem__("a")),
    ("update", lambda s: s.update({"a": 2})),
    ("setdefault", lambda s: s.setdefault("b", 1)),
    ("pop", lambda s: s.pop("a")),
    ("popitem", lambda s: s.popitem()),
    ("clear", lambda s: s.clear()),
]


@pytest.mark.parametrize("write", [c[1] for c in WRITES], ids=[c[0] for c in WRITES])
def test_readonly_state_refuses_every_write(write: Callable[[Any], object]) -> None:
    session = make_session(a=1)
    ctx = ReadonlyContext(session)
    with pytest.raises(TypeError, match=r"ReadonlyContext\.state is read-only"):
        write(ctx.state)
    assert session.state == {"a": 1}


NESTED = {"profile": {"name": "Ada", "tags": ["a", {"deep": [1]}]}, "cart": [{"sku": "b-1"}]}

NESTED_WRITES: list[tuple[str, Callable[[Any], object]]] = [
    ("dict-setitem", lambda s: s["profile"].__setitem__("name", "Bob")),
    ("dict-delitem", lambda s: s["profile"].__delitem__("name")),
    ("dict-update", lambda s: s["profile"].update(name="Bob")),
    ("dict-ior", lambda s: s["profile"].__ior__({"name": "Bob"})),
    ("dict-setdefault", lambda s: s["profile"].setdefault("new", 1)),
    ("dict-pop", lambda s: s["profile"].pop("name")),
    ("dict-popitem", lambda s: s["profile"].popitem()),
    ("dict-clear", lambda s: s["profile"].clear()),
    ("list-append", lambda s: s["profile"]["tags"].append("c")),
    ("list-iadd", lambda s: s["profile"]["tags"].__iadd__(["c"])),
    ("list-imul", lambda s: s["profile"]["tags"].__imul__(2)),
    ("list-setitem", lambda s: s["profile"]["tags"].__setitem__(0, "z")),
    ("list-delitem", lambda s: s["profile"]["tags"].__delitem__(0)),
    ("list-extend", lambda s: s["profile"]["tags"].extend(["c"])),
    ("list-insert", lambda s: s["profile"]["tags"].insert(0, "c")),
    ("list-pop", lambda s: s["profile"]["tags"].pop()),
    ("list-remove", lambda s: s["profile"]["tags"].remove("a")),
    ("list-clear", lambda s: s["profile"]["tags"].clear()),
    ("list-sort", lambda s: s["cart"].sort()),
    ("list-reverse", lambda s: s["profile"]["tags"].reverse()),
    ("deep-list-in-dict-in-list", lambda s: s["profile"]["tags"][1]["deep"].append(2)),
    ("dict-in-list", lambda s: s["cart"][0].__setitem__("sku", "x")),
]


@pytest.mark.parametrize("write", [c[1] for c in NESTED_WRITES], ids=[c[0] for c in NESTED_WRITES])
def test_readonly_state_refuses_nested_writes(write: Callable[[Any], object]) -> None:
    session = make_session(**copy.deepcopy(NESTED))
    with pytest.raises(TypeError, match=r"ReadonlyContext\.state is read-only, nested values included"):
        write(ReadonlyContext(session).state)
    assert session.state == NESTED


def test_readonly_nested_values_are_plain_data_to_read_and_copy() -> None:
    session = make_session(**copy.deepcopy(NESTED))
    profile = ReadonlyContext(session).state["profile"]
    assert profile == NESTED["profile"]
    assert isinstance(profile, dict)
    assert isinstance(profile["tags"], list)
    assert json.loads(json.dumps(profile)) == NESTED["profile"]
    assert str(profile) == str(NESTED["profile"])
    for mine in (copy.deepcopy(profile), pickle.loads(pickle.dumps(profile)), {**profile}):
        mine["name"] = "Bob"  # a copy is an ordinary dict, the caller's to change
        assert type(mine) is dict
    deep = copy.deepcopy(profile)
    deep["tags"][1]["deep"].append(2)
    shallow = copy.copy(profile["tags"])
    shallow.append("c")
    assert (type(deep["tags"]), type(shallow)) == (list, list)
    assert session.state == NESTED


NESTED_TEMPLATE = "<profile.name> <profile.tags.1.deep.0> <cart.0.sku> <profile.tags> <cart>"
NESTED_RENDERED = 'Ada 1 b-1 ["a", {"deep": [1]}] [{"sku": "b-1"}]'


@pytest.mark.parametrize("make", [c[1] for c in CONTEXTS], ids=[c[0] for c in CONTEXTS])
def test_every_context_renders_nested_paths_and_json(make: Callable[[Session], ReadonlyContext]) -> None:
    session = make_session(**copy.deepcopy(NESTED))
    ctx = make(session)
    assert Template(NESTED_TEMPLATE).render(ctx) == NESTED_RENDERED
    assert jinja("{{ profile.tags[1].deep[0] }} {{ profile | tojson }}")(ctx) == (
        '1 {"name": "Ada", "tags": ["a", {"deep": [1]}]}'
    )
    assert Template("{profile}", dialect="adk").render(ctx) == str(NESTED["profile"])  # str(), as ADK does
    assert session.state == NESTED


def test_readonly_state_is_a_live_view() -> None:
    session = make_session(a=1)
    state = ReadonlyContext(session).state
    session.state["b"] = 2
    assert dict(state) == {"a": 1, "b": 2}
    assert len(state) == 2
    assert "b" in state
    assert state.get("c", "none") == "none"
    assert "ReadonlyState" in repr(state)


@pytest.mark.parametrize("kind", [CallbackContext, ToolContext], ids=["callback", "tool"])
def test_writes_land_in_the_event_delta_and_persist(kind: type[CallbackContext]) -> None:
    async def scenario() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        service = InMemorySessionService()
        session = await service.create_session(app_name="shop", user_id="ada", state={"count": 1})
        ctx = kind(session, invocation_id="inv-1", agent_name="support")
        assert isinstance(ctx.state, State)
        assert not ctx.state.has_delta()
        ctx.state["count"] = ctx.state["count"] + 1
        ctx.state.update({"user:lang": "en", "temp:scratch": [1]})
        assert session.state["count"] == 2  # visible at once
        delta = dict(ctx.actions.state_delta)
        await service.append_event(session, Event(invocation_id="inv-1", author="support", actions=ctx.actions))
        stored = await service.get_session(app_name="shop", user_id="ada", session_id=session.id)
        assert stored is not None
        return delta, session.state, stored.state

    delta, callers, stored = asyncio.run(scenario())
    assert delta == {"count": 2, "user:lang": "en", "temp:scratch": [1]}
    assert callers == {"count": 2, "user:lang": "en", "temp:scratch": [1]}
    assert stored == {"count": 2, "user:lang": "en"}


def test_a_context_can_share_the_actions_of_an_event() -> None:
    actions = EventActions(state_delta={"already": True})
    ctx = CallbackContext(make_session(), actions=actions)
    ctx.state["more"] = 1
    assert ctx.actions is actions
    assert actions.state_delta == {"already": True, "more": 1}
    assert ctx.state["already"] is True  # the pending delta is part of what the context reads


@pytest.mark.parametrize("kind", [CallbackContext, ToolContext], ids=["callback", "tool"])
def test_nested_mutation_through_a_context_is_not_persisted_assigning_the_key_is(kind: type[CallbackContext]) -> None:
    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        service = InMemorySessionService()
        session = await service.create_session(
            app_name="shop", user_id="ada", state={"profile": {"a": 1}, "user:tags": ["x"]}
        )
        ctx = kind(session, invocation_id="inv-1")
        ctx.state["cart"] = ["book"]
        ctx.state["cart"].append("lamp")  # written earlier in this turn: not tracked
        ctx.state["profile"]["a"] = 42  # not written yet: not tracked either
        ctx.state["user:tags"].append("y")
        delta = copy.deepcopy(ctx.actions.state_delta)
        ctx.state["note"] = {"n": 1}  # assigning the whole key is tracked
        await service.append_event(session, Event(invocation_id="inv-1", author="a", actions=ctx.actions))
        stored = await service.get_session(app_name="shop", user_id="ada", session_id=session.id)
        assert stored is not None
        return delta, stored.state

    delta, stored = asyncio.run(scenario())
    assert delta == {"cart": ["book"]}
    assert stored == {"profile": {"a": 1}, "user:tags": ["x"], "cart": ["book"], "note": {"n": 1}}


def test_a_bad_write_through_a_context_changes_nothing() -> None:
    session = make_session(a=1)
    ctx = CallbackContext(session)
    with pytest.raises(InvalidStateError, match="not plain JSON"):
        ctx.state.update({"b": 2, "c": object()})
    assert session.state == {"a": 1}
    assert ctx.actions.state_delta == {}


INJECTIONS = [
    ("strict-found", "<user:name> <order?>", "error", "Ada "),
    ("empty", "<user:name> <missing>", "empty", "Ada "),
    ("keep", "<user:name> <missing>", "keep", "Ada <missing>"),
    ("escape", "<<user:name>> {not: state}", "error", "<user:name> {not: state}"),
]


@pytest.mark.parametrize(
    ("template", "missing", "expected"), [c[1:] for c in INJECTIONS], ids=[c[0] for c in INJECTIONS]
)
def test_inject_session_state(template: str, missing: Any, expected: str) -> None:
    ctx = ReadonlyContext(make_session(**{"user:name": "Ada"}))
    assert asyncio.run(inject_session_state(template, ctx, missing=missing)) == expected
    assert asyncio.run(inject_session_state(Template(template), ctx, missing=missing)) == expected


def test_inject_session_state_is_strict_by_default() -> None:
    ctx = ReadonlyContext(make_session())
    with pytest.raises(MissingKeyError, match="'order_id'"):
        asyncio.run(inject_session_state("Order <order_id>", ctx))


# --- the whole pipeline ---------------------------------------------------------------------

INSTRUCTION = """\
You are the <app:brand> support agent for <user:name> (replies in <user:lang>).
Order <order_id?> is <status?>. Open hours: <app:hours>.
Last tool used: <user:last_tool?>. Scratch notes: <temp:notes?>
Write JSON like {"order": "<order_id?>"}; <<user:name>> is a placeholder, not a name."""


async def pipeline() -> str:
    """Two sessions of one user, events touching every scope, and instructions rendered along the way."""
    service = InMemorySessionService()
    out: list[str] = []

    # Invocation 1, in the order session: a callback writes to session, user:, app: and temp: keys.
    order = await service.create_session(
        app_name="shop",
        user_id="ada",
        session_id="order-7",
        state={"order_id": "A-7", "status": "placed", "user:name": "Ada", "app:brand": "Acme"},
    )
    callback = CallbackContext(order, invocation_id="inv-1", agent_name="support")
    callback.state["status"] = "shipped"
    callback.state["user:lang"] = "English"
    callback.state["app:hours"] = "9-17"
    callback.state["temp:notes"] = "customer asked twice"
    event = Event(invocation_id="inv-1", author="support", content="Your order shipped.", actions=callback.actions)
    stored = await service.append_event(order, event)
    out.append(f"stored delta: {sorted(stored.actions.state_delta)}")
    during = ReadonlyContext(order, invocation_id="inv-1", agent_name="support")
    out.append("== invocation 1, order session (temp: still visible)")
    out.append(await inject_session_state(INSTRUCTION, during))

    # Invocation 2, in a second session of the same user: user: and app: values are there, session keys are not.
    chat = await service.create_session(app_name="shop", user_id="ada", session_id="chat-1")
    tool = ToolContext(chat, invocation_id="inv-2", agent_name="support", function_call_id="call-1")
    tool.state["user:last_tool"] = "track_order"
    await service.append_event(chat, Event(invocation_id="inv-2", author="support", actions=tool.actions))
    second = await service.get_session(app_name="shop", user_id="ada", session_id="chat-1")
    assert second is not None
    out.append("== invocation 2, second session of the same user")
    out.append(await inject_session_state(INSTRUCTION, ReadonlyContext(second, invocation_id="inv-2")))

    # Invocation 3, back in the order session: temp: is gone, everything else is read back.
    again = await service.get_session(app_name="shop", user_id="ada", session_id="order-7")
    assert again is not None
    ctx = ReadonlyContext(again, invocation_id="inv-3", agent_name="support")
    out.append("== invocation 3, order session read back")
    out.append(Template(INSTRUCTION).render(ctx))
    try:
        await inject_session_state("<temp:notes>", ctx)
    except MissingKeyError as error:
        out.append(f"temp:notes in the next invocation: {error.message}")
    out.append(f"stored state: {again.state}")
    return "\n".join(out) + "\n"


def test_pipeline(snapshot: SnapshotAssertion) -> None:
    text = asyncio.run(pipeline())
    assert "customer asked twice" in text.split("== invocation 2")[0]
    assert "customer asked twice" not in text.split("== invocation 2")[1]
    assert text == snapshot


REASSIGNMENTS: list[tuple[str, Callable[[CallbackContext, Session], None]]] = [
    ("actions-state-delta", lambda ctx, session: setattr(ctx.actions, "state_delta", {"seed": 1})),
    ("session-state", lambda ctx, session: setattr(session, "state", {**session.state, "seed": 1})),
]


@pytest.mark.parametrize("reassign", [c[1] for c in REASSIGNMENTS], ids=[c[0] for c in REASSIGNMENTS])
def test_writes_after_reassigning_the_delta_or_the_state_dict_are_kept(
    reassign: Callable[[CallbackContext, Session], None],
) -> None:
    session = make_session(count=1)
    ctx = CallbackContext(session)
    ctx.state["before"] = 1
    reassign(ctx, session)
    ctx.state["after"] = 2
    assert ctx.state["after"] == 2
    assert ctx.actions.state_delta["after"] == 2
    assert session.state["after"] == 2
    assert ctx.state["seed"] == 1


def test_nested_views_wrap_the_stored_objects_instead_of_deep_copying_them() -> None:
    session = make_session(**copy.deepcopy(NESTED))
    state = ReadonlyContext(session).state
    profile = state["profile"]
    # The view's own storage holds the session's objects themselves (one level, no copy below it).
    assert dict.__getitem__(profile, "tags") is session.state["profile"]["tags"]
    tags = profile["tags"]
    assert list.__getitem__(tags, 1) is session.state["profile"]["tags"][1]
    assert type(tags[1]).__name__ == "ReadonlyDict"
    assert tags[1:] == [{"deep": [1]}]
    assert type(tags[1:]).__name__ == "ReadonlyList"
    assert [type(item).__name__ for item in reversed(tags)] == ["ReadonlyDict", "str"]
    assert [type(value).__name__ for value in profile.values()] == ["str", "ReadonlyList"]
    assert [type(value).__name__ for _, value in profile.items()] == ["str", "ReadonlyList"]
    assert profile.get("missing", 0) == 0
    with pytest.raises(TypeError, match="read-only"):
        ([0] + tags)[2]["deep"].append(2)  # noqa: RUF005  # concatenation hands out views, never stored objects
    with pytest.raises(TypeError, match="read-only"):
        (profile | {})["tags"].append(2)
    assert session.state == NESTED


def test_readonly_state_is_json_and_equal_to_plain_data() -> None:
    session = make_session(**copy.deepcopy(NESTED))
    ctx = ReadonlyContext(session)
    assert json.loads(json.dumps(ctx.state)) == NESTED
    assert ctx.state == NESTED
    assert NESTED == ctx.state  # noqa: SIM300  # the plain dict on the left: the view's __eq__ answers
    assert ctx.state["cart"] == NESTED["cart"]
    assert ctx.state != {}
    assert json.loads(jinja("{{ state|tojson }}")(ctx)) == NESTED
    assert json.loads(jinja("{{ cart|tojson }}")(ctx)) == NESTED["cart"]


READ_METHODS = [
    ("dict-get", "{{ profile.get('name') }} {{ profile.get('nope', 'd') }}", "Ada d"),
    (
        "dict-items",
        "{% for k, v in profile.items() %}{{ k }}={{ v }};{% endfor %}",
        'name=Ada;tags=["a", {"deep": [1]}];',
    ),
    ("dict-keys", "{{ profile.keys()|list }}", '["name", "tags"]'),
    ("dict-values", "{{ profile.values()|list }}", '["Ada", ["a", {"deep": [1]}]]'),
    ("list-count", "{{ profile.tags.count('a') }}", "1"),
    ("list-index", "{{ profile.tags.index('a') }} {{ cart.index({'sku': 'b-1'}) }}", "0 0"),
]


@pytest.mark.parametrize(("source", "expected"), [c[1:] for c in READ_METHODS], ids=[c[0] for c in READ_METHODS])
def test_every_allowlisted_read_method_works_through_a_readonly_context(source: str, expected: str) -> None:
    session = make_session(**copy.deepcopy(NESTED))
    assert jinja(source)(ReadonlyContext(session)) == expected
    assert session.state == NESTED


# --- reads cost what they read ----------------------------------------------------------------


class RecordingState(dict[str, Any]):
    """Session state that records every key looked up, and counts every read of the whole of it
    (iterating, listing keys, values or items, its size, a copy): rendering must do none of those."""

    def __init__(self, values: dict[str, Any]) -> None:
        super().__init__(values)
        self.looked_up: list[object] = []
        self.whole_reads = 0

    def get(self, key: str, default: Any = None) -> Any:
        self.looked_up.append(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.looked_up.append(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.looked_up.append(key)
        return super().__contains__(key)

    def _whole(self) -> None:
        self.whole_reads += 1

    def __iter__(self) -> Iterator[str]:
        self._whole()
        return super().__iter__()

    def __len__(self) -> int:
        self._whole()
        return super().__len__()

    def keys(self) -> Any:
        self._whole()
        return super().keys()

    def values(self) -> Any:
        self._whole()
        return super().values()

    def items(self) -> Any:
        self._whole()
        return super().items()

    def copy(self) -> dict[str, Any]:
        self._whole()
        return super().copy()


def recording_session(extra: int = 2_000) -> tuple[Session, RecordingState]:
    """A session whose state (``NESTED``, the keys below and ``extra`` more) records how it is read."""
    values: dict[str, Any] = {f"filler_{n}": {"n": n, "tags": [n]} for n in range(extra)}
    values.update(copy.deepcopy(NESTED))
    values.update({"user:name": "Ada", "status": "shipped", "orders": [{"id": f"A-{n}"} for n in range(500)]})
    state = RecordingState(values)
    # model_construct: a validated Session would store a plain copy instead of the recording dict.
    return Session.model_construct(id="s1", app_name="shop", user_id="ada", state=state), state


READ_SOURCE = "<user:name>: <profile.name> <orders.7.id> <status?> <cart.0.sku> [<nope?>]"
READ_KEYS = {"user:name", "profile", "orders", "status", "cart", "nope"}
READ_RENDERED = "Ada: Ada A-7 shipped b-1 []"
READ_JINJA = "{{ user.name }}: {{ profile.name }} {{ orders[7].id }} {{ state.status }} {{ cart[0].sku }} [{{ nope }}]"

READ_PATHS: list[tuple[str, Callable[[Any], object], str]] = [
    ("template", lambda ctx: Template(READ_SOURCE).render(ctx), READ_RENDERED),
    (
        "template-missing-keep",
        lambda ctx: Template(READ_SOURCE).render(ctx, missing="keep"),
        READ_RENDERED[:-1] + "<nope?>]",
    ),
    ("render-function", lambda ctx: render(READ_SOURCE, ctx), READ_RENDERED),
    ("template-of-the-state-view", lambda ctx: Template(READ_SOURCE).render(ctx.state), READ_RENDERED),
    ("provider", lambda ctx: instruction(READ_SOURCE)(ctx), READ_RENDERED),
    (
        "concat-and-when",
        lambda ctx: concat(when(lambda c: True, Template(READ_SOURCE)), "!", sep="")(ctx),
        READ_RENDERED + "!",
    ),
    ("inject_session_state", lambda ctx: asyncio.run(inject_session_state(READ_SOURCE, ctx)), READ_RENDERED),
    (
        "agent",
        lambda ctx: asyncio.run(Agent(name="a", instruction=READ_SOURCE).canonical_instruction(ctx)),
        READ_RENDERED,
    ),
    (
        "adk-dialect",
        lambda ctx: Template("{user:name}: {status?} {cart} [{nope?}]", dialect="adk").render(ctx),
        "Ada: shipped [{'sku': 'b-1'}] []",
    ),
    ("jinja", lambda ctx: jinja(READ_JINJA.replace("{{ nope }}", "{{ nope | default('') }}"))(ctx), READ_RENDERED),
]


@pytest.mark.parametrize(("path", "expected"), [c[1:] for c in READ_PATHS], ids=[c[0] for c in READ_PATHS])
@pytest.mark.parametrize("make", [c[1] for c in CONTEXTS], ids=[c[0] for c in CONTEXTS])
def test_rendering_through_a_context_reads_only_the_keys_the_template_uses(
    make: Callable[[Session], ReadonlyContext], path: Callable[[Any], object], expected: str
) -> None:
    session, state = recording_session()
    ctx = make(session)
    assert path(ctx) == expected
    assert set(state.looked_up) <= READ_KEYS, "looked up a key the template does not use"
    assert state.whole_reads == 0, "read the whole state"


def test_a_context_with_pending_writes_still_reads_only_the_template_keys() -> None:
    session, state = recording_session()
    ctx = CallbackContext(session)
    ctx.state["status"] = "returned"
    ctx.state["note"] = "unused"
    state.looked_up.clear()
    state.whole_reads = 0
    assert Template(READ_SOURCE).render(ctx) == READ_RENDERED.replace("shipped", "returned")
    assert set(state.looked_up) <= READ_KEYS
    assert state.whole_reads == 0


def test_making_the_read_only_view_reads_nothing_and_a_read_reads_one_key() -> None:
    session, state = recording_session()
    view = ReadonlyContext(session).state
    assert (state.looked_up, state.whole_reads) == ([], 0)
    assert view["user:name"] == "Ada"
    assert view.get("status") == "shipped"
    assert "profile" in view
    assert (state.looked_up, state.whole_reads) == (["user:name", "status", "status", "profile"], 0)


def count_views(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the type of every read-only view made from now on."""
    import templating.sessions.state

    made: list[str] = []
    real = templating.sessions.state.read_only

    def counting(value: Any) -> Any:
        view = real(value)
        if view is not value:
            made.append(type(view).__name__)
        return view

    monkeypatch.setattr(templating.sessions.state, "read_only", counting)
    return made


@pytest.mark.parametrize("make", [c[1] for c in CONTEXTS], ids=[c[0] for c in CONTEXTS])
def test_rendering_wraps_nothing_a_caller_never_sees(
    make: Callable[[Session], ReadonlyContext], monkeypatch: pytest.MonkeyPatch
) -> None:
    session, _ = recording_session()
    ctx = make(session)
    made = count_views(monkeypatch)
    assert Template(READ_SOURCE).render(ctx) == READ_RENDERED
    assert jinja(READ_JINJA.replace("{{ nope }}", ""))(ctx) == READ_RENDERED
    assert made == []


def test_a_caller_gets_a_view_of_exactly_the_values_it_reaches(monkeypatch: pytest.MonkeyPatch) -> None:
    session, _ = recording_session()
    made = count_views(monkeypatch)
    state = ReadonlyContext(session).state
    assert made == []
    tags = state["profile"]["tags"]
    assert made == ["ReadonlyDict", "ReadonlyList"]
    assert tags[1]["deep"] == [1]
    assert made == ["ReadonlyDict", "ReadonlyList", "ReadonlyDict", "ReadonlyList"]


def test_a_formatter_gets_read_only_values_through_every_context() -> None:
    seen: list[Any] = []

    def formatter(value: Any) -> str:
        seen.append(value)
        with pytest.raises(TypeError, match="read-only"):
            value["name"] = "Bob"
        return str(value["name"])

    session = make_session(**copy.deepcopy(NESTED))
    assert Template("<profile>").render(ReadonlyContext(session), formatter=formatter) == "Ada"
    assert type(seen[0]).__name__ == "ReadonlyDict"
    assert session.state == NESTED


def test_json_of_a_view_follows_the_live_state_even_from_empty() -> None:
    session = make_session()
    view = ReadonlyContext(session).state
    assert json.dumps(view) == "{}"
    session.state["b"] = {"c": [1]}
    assert json.dumps(view) == '{"b": {"c": [1]}}'
    assert json.dumps(view, indent=None, sort_keys=True) == '{"b": {"c": [1]}}'
    session.state.clear()
    assert (json.dumps(view), dict(view), len(view), bool(view)) == ("{}", {}, 0, False)


@pytest.mark.parametrize("write", [c[1] for c in WRITES], ids=[c[0] for c in WRITES])
def test_a_view_of_large_state_refuses_every_write_and_copies_nothing(write: Callable[[Any], object]) -> None:
    session, state = recording_session()
    with pytest.raises(TypeError, match=r"ReadonlyContext\.state is read-only"):
        write(ReadonlyContext(session).state)
    assert state.whole_reads == 0
    assert state["status"] == "shipped"
    assert "a" not in state


class OwnStateContext(ReadonlyContext):
    """A subclass that adds a computed key: rendering must read its ``state``, not the session's."""

    @property
    def state(self) -> Mapping[str, Any]:
        return {**super().state, "greeting": "hello"}


def test_a_subclass_that_redefines_state_is_rendered_from_its_own_state() -> None:
    ctx = OwnStateContext(make_session(**{"user:name": "Ada"}))
    assert Template("<greeting> <user:name>").render(ctx) == "hello Ada"
    assert jinja("{{ greeting }} {{ user.name }}")(ctx) == "hello Ada"


def written_then_mutated_in_place(ctx: CallbackContext, session: Session) -> None:
    ctx.state["cart"] = ["book"]
    ctx.state["cart"].append("lamp")  # not tracked: the delta keeps ["book"], the state has both


def session_state_reassigned(ctx: CallbackContext, session: Session) -> None:
    ctx.state["cart"] = [1]
    session.state = {"cart": [2], "profile": {"name": "Max"}}


def written_and_given(ctx: CallbackContext, session: Session) -> None:
    ctx.state["user:name"] = "Bob"
    ctx.actions.state_delta["cart"] = ["given"]


CALLBACK_READS: list[tuple[str, Callable[[CallbackContext, Session], object]]] = [
    ("nothing-written", lambda ctx, session: None),
    ("written", lambda ctx, session: ctx.state.update({"cart": ["book"], "user:name": "Bob"})),
    ("written-then-mutated-in-place", written_then_mutated_in_place),
    ("delta-from-outside", lambda ctx, session: ctx.actions.state_delta.update({"cart": ["given"]})),
    ("written-and-delta-from-outside", written_and_given),
    ("delta-reassigned", lambda ctx, session: setattr(ctx.actions, "state_delta", {"profile": {"name": "Eve"}})),
    ("session-state-reassigned", session_state_reassigned),
]


@pytest.mark.parametrize("change", [c[1] for c in CALLBACK_READS], ids=[c[0] for c in CALLBACK_READS])
def test_a_callback_context_renders_exactly_what_its_state_reads(
    change: Callable[[CallbackContext, Session], object],
) -> None:
    session = make_session(**copy.deepcopy(NESTED), **{"user:name": "Ada"})
    ctx = CallbackContext(session)
    change(ctx, session)
    source = "<user:name?> <profile.name> <cart>"
    assert Template(source).render(ctx) == Template(source).render(dict(ctx.state))
    assert jinja("{{ profile.name }} {{ cart }}")(ctx) == jinja("{{ profile.name }} {{ cart }}")(dict(ctx.state))


names = st.from_regex(r"[a-d][a-d0-9_]{0,2}", fullmatch=True)
leaf_values = st.none() | st.booleans() | st.integers() | st.text(max_size=5)
nested_values = st.recursive(
    leaf_values,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(names, children, max_size=3),
    max_leaves=8,
)


@given(
    values=st.dictionaries(names, nested_values, max_size=8),
    used=st.lists(st.tuples(names, st.lists(names | st.sampled_from(["0", "1"]), max_size=2)), max_size=5),
    make=st.sampled_from([c[1] for c in CONTEXTS]),
)
def test_a_context_renders_what_its_state_holds_reading_only_the_used_keys(
    values: dict[str, Any], used: list[tuple[str, list[str]]], make: Callable[[Session], ReadonlyContext]
) -> None:
    source = " ".join(f"<{'.'.join([name, *path])}?>" for name, path in used)
    state = RecordingState(copy.deepcopy(values))
    session = Session.model_construct(id="s1", app_name="shop", user_id="ada", state=state)
    assert Template(source).render(make(session)) == Template(source).render(values)
    assert set(state.looked_up) <= {name for name, _ in used}
    assert state.whole_reads == 0
    assert state == values
