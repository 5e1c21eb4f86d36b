"""Our providers as a real Google ADK ``LlmAgent(instruction=...)``: the system instruction ADK builds for the model.

Runs ADK's own ``InMemoryRunner`` (in-memory sessions, no network) with a fake model that records
each ``LlmRequest`` it receives. Needs the ``adk`` extra (``pip install 'templating[adk]'``);
without it the module is skipped, and CI (``.ci/run``) installs it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any, ClassVar

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types

from templating import MissingKeyError, concat, instruction, jinja, static, when

JSON_EXAMPLE = '{"order": {"id": "A-1", "items": [1, 2]}}'
# ADK does not store ``temp:`` keys given when a session is created, so there are none here.
STATE = {"user:name": "Ada", "order_id": "A-1", "app:brand": "Acme"}


class RecordingLlm(BaseLlm):
    """A model that answers "ok" and keeps every request ADK sends it."""

    model: str = "recording-model"
    requests: ClassVar[list[LlmRequest]] = []

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        RecordingLlm.requests.append(llm_request)
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="ok")]))


async def _run(agent_instruction: Any, state: dict[str, Any]) -> tuple[LlmRequest, list[Any]]:
    RecordingLlm.requests.clear()
    agent = LlmAgent(name="support", model=RecordingLlm(), instruction=agent_instruction)
    runner = InMemoryRunner(agent=agent, app_name="templating-test")
    session = await runner.session_service.create_session(app_name="templating-test", user_id="u1", state=state)
    message = types.Content(role="user", parts=[types.Part(text="hello")])
    events = [event async for event in runner.run_async(user_id="u1", session_id=session.id, new_message=message)]
    assert len(RecordingLlm.requests) == 1, "the model was called exactly once"
    return RecordingLlm.requests[0], events


def system_instruction(request: LlmRequest) -> str:
    """The agent's own instruction as ADK sent it: ADK appends its identity line after a blank line."""
    value = request.config.system_instruction
    assert isinstance(value, str), f"ADK sends the system instruction as a str, got {type(value).__name__}"
    ours, sep, identity = value.rpartition("\n\n")
    assert sep, value
    assert identity == 'You are an agent. Your internal name is "support".'
    return ours


PROVIDERS = [
    (
        "instruction",
        instruction("Hi <user:name>. Order <order_id>. Reply as JSON like " + JSON_EXAMPLE),
        f"Hi Ada. Order A-1. Reply as JSON like {JSON_EXAMPLE}",
    ),
    (
        "concat-static-when",
        concat(
            static("Escapes are literal here: <user:name> {order_id}"),
            instruction("Brand <app:brand>, step <temp:step?>."),
            when(lambda ctx: ctx.state["user:name"] == "Ada", instruction("Greet <user:name> by name.")),
            when(lambda ctx: "vip" in ctx.state, "VIP"),
        ),
        "Escapes are literal here: <user:name> {order_id}\n\nBrand Acme, step .\n\nGreet Ada by name.",
    ),
    (
        "jinja",
        jinja('{% for i in [1, 2] %}<{{ i }}>{% endfor %} {{ user.name }} {{ state["order_id"] }} {"k": 1}'),
        '<1><2> Ada A-1 {"k": 1}',
    ),
]


@pytest.mark.parametrize(("provider", "expected"), [c[1:] for c in PROVIDERS], ids=[c[0] for c in PROVIDERS])
def test_adk_sends_our_rendered_instruction_as_the_system_instruction(provider: Any, expected: str) -> None:
    request, _ = asyncio.run(_run(provider, dict(STATE)))
    assert system_instruction(request) == expected


def test_adk_awaits_an_async_provider() -> None:
    async def tail(ctx: Any) -> str:
        return "tail for " + ctx.state["user:name"]

    request, _ = asyncio.run(_run(concat(instruction("<user:name>"), tail, sep=" | "), dict(STATE)))
    assert system_instruction(request) == "Ada | tail for Ada"


def test_a_missing_key_surfaces_as_our_missing_key_error() -> None:
    with pytest.raises(MissingKeyError) as caught:
        asyncio.run(_run(instruction("Hi <user:name>, order <order_idd>."), dict(STATE)))
    assert caught.value.keys == ("order_idd",)
    assert caught.value.missing[0].suggestion == "order_id"
    assert RecordingLlm.requests == [], "the model is never called with a half-rendered instruction"


def test_adk_string_templating_breaks_literal_braces_where_ours_does_not() -> None:
    """ADK's own ``{key}`` injection (a plain string instruction) reads code and JSON braces as placeholders."""
    with pytest.raises(KeyError, match="Context variable not found: `item`"):
        asyncio.run(_run("Answer with a Python set such as {item}.", dict(STATE)))
    request, _ = asyncio.run(_run('Return JSON like {"id": {order_id}}', dict(STATE)))
    assert system_instruction(request) == 'Return JSON like {"id": A-1', "ADK ate the closing brace"

    ours = instruction('Answer with a Python set such as {item}. Return JSON like {"id": "<order_id>"}')
    request, _ = asyncio.run(_run(ours, dict(STATE)))
    assert system_instruction(request) == 'Answer with a Python set such as {item}. Return JSON like {"id": "A-1"}'
