"""The Runner: one turn end to end, from session state to the events it stores. Tests that take ``service``
run once per session service (tests/conftest.py: in memory, a SQLite file, a throw-away PostgreSQL)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from templating import (
    Agent,
    Event,
    EventActions,
    InMemorySessionService,
    InvalidStateError,
    MissingKeyError,
    ReadonlyContext,
    Runner,
    SessionNotFoundError,
    SessionService,
    StaleSessionError,
    Template,
    concat,
    instruction,
    jinja,
    when,
)

APP = "shop"


class Recorder:
    """A fake model: records what it was given and answers with a fixed reply (sync or async)."""

    def __init__(self, reply: Any = "Sure.", *, is_async: bool = False) -> None:
        self.reply = reply
        self.calls: list[tuple[str, str]] = []
        self.is_async = is_async

    def __call__(self, instruction: str, message: str) -> Any:
        self.calls.append((instruction, message))
        if self.is_async:

            async def later() -> Any:
                await asyncio.sleep(0)
                return self.reply

            return later()
        return self.reply


def make_agent(**overrides: Any) -> Agent:
    options: dict[str, Any] = {
        "name": "support",
        "global_instruction": "You work for <app:brand>.",
        "instruction": 'Help <user:name> with order <order_id>. Reply as JSON: {"ok": true}. Step: <temp:step?>',
        "output_key": "last_reply",
    }
    options.update(overrides)
    return Agent(**options)


async def setup(service: SessionService, session_id: str = "s1") -> None:
    await service.create_session(
        app_name=APP,
        user_id="u1",
        session_id=session_id,
        state={"app:brand": "Acme", "user:name": "Ada", "order_id": "A-1"},
    )


@pytest.mark.parametrize("is_async", [False, True], ids=["sync-model", "async-model"])
def test_one_turn(is_async: bool, snapshot: SnapshotAssertion) -> None:
    async def scenario() -> None:
        service = InMemorySessionService()
        await setup(service)
        model = Recorder("Your order ships today.", is_async=is_async)
        runner = Runner(agent=make_agent(), app_name=APP, session_service=service, model=model)
        events = await runner.run(user_id="u1", session_id="s1", message="Where is my order?")

        assert [(e.author, e.content) for e in events] == [
            ("user", "Where is my order?"),
            ("support", "Your order ships today."),
        ]
        assert events[0].invocation_id == events[1].invocation_id
        assert events[1].actions.state_delta == {"last_reply": "Your order ships today."}
        assert len(model.calls) == 1
        rendered, message = model.calls[0]
        assert message == "Where is my order?"
        assert rendered == snapshot

        stored = await service.get_session(app_name=APP, user_id="u1", session_id="s1")
        assert stored is not None
        assert [e.id for e in stored.events] == [e.id for e in events]
        assert stored.state["last_reply"] == "Your order ships today."

    asyncio.run(scenario())


def test_temp_state_lives_for_one_turn(service: SessionService) -> None:
    async def scenario() -> None:
        await setup(service)
        model = Recorder()
        runner = Runner(agent=make_agent(), app_name=APP, session_service=service, model=model)
        first = await runner.run(user_id="u1", session_id="s1", message="hi", state_delta={"temp:step": "triage"})
        await runner.run(user_id="u1", session_id="s1", message="again")

        assert model.calls[0][0].endswith("Step: triage")
        assert model.calls[1][0].endswith("Step: ")
        assert first[0].actions.state_delta == {}  # temp: keys are never stored
        stored = await service.get_session(app_name=APP, user_id="u1", session_id="s1")
        assert stored is not None
        assert "temp:step" not in stored.state

    asyncio.run(scenario())


def test_user_scoped_output_is_shared_with_the_users_other_sessions(service: SessionService) -> None:
    async def scenario() -> None:
        await setup(service, "s1")
        await setup(service, "s2")
        runner = Runner(
            agent=make_agent(output_key="user:summary"), app_name=APP, session_service=service, model=Recorder("noted")
        )
        await runner.run(user_id="u1", session_id="s1", message="remember this")
        other = await service.get_session(app_name=APP, user_id="u1", session_id="s2")
        assert other is not None
        assert other.state["user:summary"] == "noted"

    asyncio.run(scenario())


def test_no_output_key_saves_nothing() -> None:
    async def scenario() -> None:
        service = InMemorySessionService()
        await setup(service)
        runner = Runner(agent=make_agent(output_key=None), app_name=APP, session_service=service, model=Recorder())
        events = await runner.run(user_id="u1", session_id="s1", message="hi")
        assert events[1].actions.state_delta == {}

    asyncio.run(scenario())


def failing_model(instruction: str, message: str) -> str:
    raise RuntimeError("model is down")


FAILED_TURNS = [
    ("missing-key", {"instruction": instruction("Order <nope>.")}, Recorder(), MissingKeyError, "'nope'"),
    ("model-returns-non-str", {}, Recorder(reply=42), TypeError, "the model must return str, not int"),
    ("model-raises", {}, failing_model, RuntimeError, "model is down"),
]


@pytest.mark.parametrize(
    ("overrides", "model", "error", "message"), [c[1:] for c in FAILED_TURNS], ids=[c[0] for c in FAILED_TURNS]
)
def test_a_failed_turn_appends_nothing(
    overrides: dict[str, Any], model: Any, error: type[Exception], message: str, service: SessionService
) -> None:
    async def scenario() -> None:
        await setup(service)
        runner = Runner(agent=make_agent(**overrides), app_name=APP, session_service=service, model=model)
        with pytest.raises(error, match=message):
            await runner.run(user_id="u1", session_id="s1", message="hi", state_delta={"seen": True})
        stored = await service.get_session(app_name=APP, user_id="u1", session_id="s1")
        assert stored is not None
        assert stored.events == []
        assert "seen" not in stored.state

    asyncio.run(scenario())


def test_missing_key_does_not_call_the_model() -> None:
    async def scenario() -> None:
        service = InMemorySessionService()
        await setup(service)
        model = Recorder()
        runner = Runner(agent=make_agent(instruction="<nope>"), app_name=APP, session_service=service, model=model)
        with pytest.raises(MissingKeyError):
            await runner.run(user_id="u1", session_id="s1", message="hi")
        assert model.calls == []

    asyncio.run(scenario())


def test_unknown_session(service: SessionService) -> None:
    async def scenario() -> None:
        runner = Runner(agent=make_agent(), app_name=APP, session_service=service, model=Recorder())
        with pytest.raises(SessionNotFoundError, match="no session 'nope' for user 'u1' in app 'shop'"):
            await runner.run(user_id="u1", session_id="nope", message="hi")

    asyncio.run(scenario())


BAD_RUNNERS = [
    ("agent", {"agent": "support"}, TypeError, "agent must be a templating.Agent, not str"),
    ("app-name", {"app_name": "  "}, ValueError, "app_name must be a non-blank str"),
    (
        "service",
        {"session_service": {}},
        TypeError,
        r"session_service must be a SessionService \(InMemorySessionService, DatabaseSessionService\), not dict",
    ),
    ("model", {"model": "gpt"}, TypeError, r"model must be a callable model\(instruction, message\) -> str"),
]


@pytest.mark.parametrize(
    ("overrides", "error", "message"), [c[1:] for c in BAD_RUNNERS], ids=[c[0] for c in BAD_RUNNERS]
)
def test_bad_runner_arguments(overrides: dict[str, Any], error: type[Exception], message: str) -> None:
    options: dict[str, Any] = {
        "agent": make_agent(),
        "app_name": APP,
        "session_service": InMemorySessionService(),
        "model": Recorder(),
    }
    options.update(overrides)
    with pytest.raises(error, match=message):
        Runner(**options)


def test_message_must_be_text() -> None:
    runner = Runner(agent=make_agent(), app_name=APP, session_service=InMemorySessionService(), model=Recorder())
    with pytest.raises(TypeError, match="message must be a str, not bytes"):
        asyncio.run(runner.run(user_id="u1", session_id="s1", message=b"hi"))  # type: ignore[arg-type]


BAD_DELTAS = [
    ("non-json-value", {"when": object()}, InvalidStateError, "'when' is not plain JSON"),
    ("nested-non-json", {"order": {"items": [1, {2}]}}, InvalidStateError, "order\\['items'\\]\\[1\\]"),
    ("non-str-key", {1: "x"}, InvalidStateError, "state_delta key 1 is a int"),
    ("not-a-mapping", ["x"], TypeError, "state_delta must be a mapping"),
]


@pytest.mark.parametrize(("delta", "error", "match"), [c[1:] for c in BAD_DELTAS], ids=[c[0] for c in BAD_DELTAS])
def test_a_bad_state_delta_is_a_clear_error_and_changes_nothing(delta: Any, error: type[Exception], match: str) -> None:
    async def scenario() -> None:
        service = InMemorySessionService()
        await setup(service)
        model = Recorder()
        runner = Runner(agent=make_agent(), app_name=APP, session_service=service, model=model)
        with pytest.raises(error, match=match) as caught:
            await runner.run(user_id="u1", session_id="s1", message="hi", state_delta=delta)
        assert isinstance(caught.value, ValueError | TypeError)
        assert model.calls == []
        stored = await service.get_session(app_name=APP, user_id="u1", session_id="s1")
        assert stored is not None
        assert stored.events == []

    asyncio.run(scenario())


def test_when_predicate_reads_the_runner_context_state() -> None:
    """A ``when`` predicate gets the Runner's ReadonlyContext (no ``.get``): it reads ``ctx.state``."""
    seen: list[Any] = []

    def is_gold(ctx: Any) -> bool:
        seen.append(ctx)
        return bool(ctx.state.get("user:tier") == "gold")

    async def scenario() -> None:
        service = InMemorySessionService()
        await setup(service)
        model = Recorder()
        agent = make_agent(instruction=concat(instruction("Help <user:name>."), when(is_gold, "Offer free shipping.")))
        runner = Runner(agent=agent, app_name=APP, session_service=service, model=model)
        await runner.run(user_id="u1", session_id="s1", message="hi")
        await runner.run(user_id="u1", session_id="s1", message="hi", state_delta={"user:tier": "gold"})
        assert [call[0] for call in model.calls] == [
            "You work for Acme.\n\nHelp Ada.",
            "You work for Acme.\n\nHelp Ada.\n\nOffer free shipping.",
        ]

    asyncio.run(scenario())
    assert seen
    assert all(isinstance(ctx, ReadonlyContext) for ctx in seen)


def test_a_write_landing_during_the_turn_leaves_no_half_turn() -> None:
    """Another writer saves the output key while the model answers: neither event of the turn is stored."""

    async def scenario() -> None:
        service = InMemorySessionService()
        await setup(service)

        async def model(instruction: str, message: str) -> str:
            other = await service.get_session(app_name=APP, user_id="u1", session_id="s1")
            assert other is not None
            await service.append_event(
                other, Event(author="elsewhere", actions=EventActions(state_delta={"last_reply": "theirs"}))
            )
            return "mine"

        runner = Runner(agent=make_agent(), app_name=APP, session_service=service, model=model)
        with pytest.raises(StaleSessionError, match="'last_reply'"):
            await runner.run(user_id="u1", session_id="s1", message="hi", state_delta={"note": "x"})
        stored = await service.get_session(app_name=APP, user_id="u1", session_id="s1")
        assert stored is not None
        assert [event.author for event in stored.events] == ["elsewhere"]
        assert stored.state["last_reply"] == "theirs"
        assert "note" not in stored.state

    asyncio.run(scenario())


def test_every_allowlisted_read_method_works_in_a_jinja_instruction_run_by_the_runner() -> None:
    async def scenario() -> str:
        service = InMemorySessionService()
        await service.create_session(
            app_name=APP,
            user_id="u1",
            session_id="s1",
            state={"prefs": {"lang": "en", "tone": "brief"}, "tags": ["a", "b", "a"]},
        )
        source = (
            "{{ prefs.get('lang') }} {{ prefs.get('nope', '-') }} "
            "{% for k, v in prefs.items() %}{{ k }}={{ v }},{% endfor %} "
            "{{ prefs.keys()|list }} {{ prefs.values()|list }} {{ tags.count('a') }} {{ tags.index('b') }}"
        )
        model = Recorder()
        runner = Runner(agent=make_agent(instruction=jinja(source)), app_name=APP, session_service=service, model=model)
        await runner.run(user_id="u1", session_id="s1", message="hi", state_delta={"app:brand": "Acme"})
        return model.calls[0][0]

    assert asyncio.run(scenario()) == (
        'You work for Acme.\n\nen - lang=en,tone=brief, ["lang", "tone"] ["en", "brief"] 2 1'
    )


def test_a_write_landing_while_the_instruction_renders_makes_the_turn_render_again_from_one_state(
    service: SessionService,
) -> None:
    """A turn that reads the stored state in place (in memory) sees a write landing during the render
    and renders again from a copy; one that reads a copy (a database) renders from the state before
    it. Either way the model never gets half of another writer's delta."""
    renders: list[tuple[Any, Any]] = []

    async def scenario() -> None:
        await setup(service)

        async def provider(ctx: ReadonlyContext) -> str:
            first = ctx.state["order_id"]
            if not renders:  # another writer changes both keys between the two reads of the first render
                other = await service.get_session(app_name=APP, user_id="u1", session_id="s1")
                assert other is not None
                delta = {"order_id": "B-2", "user:name": "Bea"}
                await service.append_event(other, Event(author="elsewhere", actions=EventActions(state_delta=delta)))
            renders.append((first, ctx.state["user:name"]))
            return f"{first} for {ctx.state['user:name']}"

        model = Recorder()
        agent = make_agent(global_instruction="", instruction=provider)
        runner = Runner(agent=agent, app_name=APP, session_service=service, model=model)
        await runner.run(user_id="u1", session_id="s1", message="hi")
        assert model.calls in ([("B-2 for Bea", "hi")], [("A-1 for Ada", "hi")])
        assert model.calls[0][0] == "{} for {}".format(*renders[-1])
        stored = await service.get_session(app_name=APP, user_id="u1", session_id="s1")
        assert stored is not None
        assert [event.author for event in stored.events] == ["elsewhere", "user", "support"]
        assert stored.state["last_reply"] == "Sure."

    asyncio.run(scenario())
    if isinstance(service, InMemorySessionService):  # read in place: the first render saw half, and was redone
        assert renders == [("A-1", "Bea"), ("B-2", "Bea")]


def test_the_turns_state_reads_like_the_sessions_combined_state(service: SessionService) -> None:
    """What a provider sees of state in a turn (iteration, length, membership, JSON) is the stored
    combined state with the turn's own delta on top, however the service hands it out."""
    seen: list[Any] = []

    async def scenario() -> None:
        await setup(service)

        def provider(ctx: ReadonlyContext) -> str:
            state = ctx.state
            seen.append((sorted(state), len(state), "temp:step" in state, "nope" in state, json.dumps(state)))
            seen.append((dict(state.items()), state.get("temp:other", "default"), state.get("app:brand")))
            return "ok"

        agent = make_agent(global_instruction="", instruction=provider)
        runner = Runner(agent=agent, app_name=APP, session_service=service, model=Recorder())
        await runner.run(user_id="u1", session_id="s1", message="hi", state_delta={"temp:step": 1, "order_id": "A-2"})

    asyncio.run(scenario())
    expected = {"app:brand": "Acme", "user:name": "Ada", "order_id": "A-2", "temp:step": 1}
    keys, length, has_temp, has_nope, text = seen[0]
    assert (keys, length, has_temp, has_nope, json.loads(text)) == (sorted(expected), 4, True, False, expected)
    assert seen[1] == (expected, "default", "Acme")


LARGE = {f"k{n}": {"n": n} if n % 3 else f"v{n}" for n in range(300)}
TURN_READS = [
    # (id, the agent's instruction and global instruction, what the model is given)
    ("templates", ("Help <user:name> with <order_id> (<profile.name>, <nope?>).", "For <app:brand>."), None),
    ("providers", (concat(instruction("Help <user:name>"), "<raw>", Template("<k7.n>")), ""), None),
    ("adk-dialect", (Template("Help {user:name} with {order_id}.", dialect="adk"), ""), None),
    ("a-callable", (lambda ctx: f"{len(ctx.state)} keys, k6={ctx.state['k6']}", ""), "304 keys, k6=v6"),
    ("when", (when(lambda ctx: ctx.state["k8"] == {"n": 8}, "yes"), "<user:name>"), "Ada\n\nyes"),
]


@pytest.mark.parametrize(("instructions", "expected"), [c[1:] for c in TURN_READS], ids=[c[0] for c in TURN_READS])
def test_a_turn_renders_what_the_whole_state_renders_whatever_it_reads(
    instructions: tuple[Any, Any], expected: str | None, service: SessionService
) -> None:
    """A service may read only the keys the instruction reads, when they are all known (templates and this
    package's providers of them); the instruction is the one the whole state renders, and so is what is stored."""
    source, global_source = instructions
    agent = make_agent(instruction=source, global_instruction=global_source)
    model = Recorder()

    async def scenario() -> None:
        state = {**LARGE, "app:brand": "Acme", "user:name": "Ada", "order_id": "A-1", "profile": {"name": "P"}}
        await service.create_session(app_name=APP, user_id="u1", session_id="s1", state=state)
        whole = await service.get_session(app_name=APP, user_id="u1", session_id="s1")
        assert whole is not None
        rendered = await agent.canonical_instruction(ReadonlyContext(whole))
        runner = Runner(agent=agent, app_name=APP, session_service=service, model=model)
        await runner.run(user_id="u1", session_id="s1", message="hi")
        assert model.calls == [(rendered, "hi")]
        if expected is not None:
            assert rendered == expected
        stored = await service.get_session(app_name=APP, user_id="u1", session_id="s1")
        assert stored is not None
        assert stored.state == {**state, "last_reply": "Sure."}

    asyncio.run(scenario())


def test_a_turn_that_fails_to_render_says_what_the_whole_state_says(service: SessionService) -> None:
    """A missing key's suggestion looks at every key, even where the turn read only the instruction's."""

    async def scenario() -> None:
        await setup(service)
        runner = Runner(
            agent=make_agent(instruction="Order <order_ik>."), app_name=APP, session_service=service, model=Recorder()
        )
        with pytest.raises(MissingKeyError, match="did you mean 'order_id'"):
            await runner.run(user_id="u1", session_id="s1", message="hi")

    asyncio.run(scenario())
