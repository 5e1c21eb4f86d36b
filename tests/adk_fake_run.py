"""Runs one ADK app's first turn through google-adk with a fake model that never calls out (used by
tests/test_agent_model.py, in a process of its own): `python adk_fake_run.py AGENTS_DIR APP STATE_JSON`.

Every model name builds the fake (google-adk's model registry is patched before the app is imported), and every
model object an app builds is replaced by one; the fake replies with text and never calls a tool. It prints one
JSON object: the exception's type and message (null: the turn ended without one), and the agents whose model was
called, in order."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
import warnings
from typing import Any, ClassVar

for _key, _value in {
    "GOOGLE_API_KEY": "fake-key-never-used",
    "GOOGLE_GENAI_USE_VERTEXAI": "0",
    "OTEL_SDK_DISABLED": "true",
}.items():
    os.environ.setdefault(_key, _value)
logging.disable(logging.CRITICAL)
warnings.filterwarnings("ignore")

from google.adk.agents import BaseAgent, LlmAgent  # noqa: E402
from google.adk.models.base_llm import BaseLlm  # noqa: E402
from google.adk.models.llm_response import LlmResponse  # noqa: E402
from google.adk.models.registry import LLMRegistry  # noqa: E402
from google.genai import types  # noqa: E402


class FakeLlm(BaseLlm):
    model: str = "fake"
    calls: ClassVar[list[str]] = []

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
        name = (llm_request.config.labels or {}).get("adk_agent_name", "?")
        FakeLlm.calls.append(name)
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=f"<{name} reply>")]))


def walk(node: Any, seen: set[int]) -> list[Any]:
    if id(node) in seen:
        return []
    seen.add(id(node))
    found = [node]
    children = list(getattr(node, "sub_agents", None) or [])
    with contextlib.suppress(Exception):
        children += list(node._iter_static_children())
    for tool in getattr(node, "tools", None) or []:
        wrapped = getattr(tool, "agent", None)
        if isinstance(wrapped, BaseAgent):
            children.append(wrapped)
    for name in getattr(type(node), "model_fields", {}):
        if name not in ("parent_agent", "sub_agents") and isinstance(getattr(node, name, None), BaseAgent):
            children.append(getattr(node, name))
    for child in children:
        found += walk(child, seen)
    return found


async def main(agents_dir: str, app: str, state: dict[str, Any]) -> dict[str, Any]:
    LLMRegistry.new_llm = staticmethod(lambda model: FakeLlm(model=str(model)))  # type: ignore[method-assign]
    from google.adk.cli.utils.agent_loader import AgentLoader
    from google.adk.runners import InMemoryRunner

    sys.path.insert(0, agents_dir)
    root = AgentLoader(agents_dir).load_agent(app)
    for agent in walk(root, set()):
        if isinstance(agent, LlmAgent) and not isinstance(agent.model, FakeLlm):
            agent.model = FakeLlm(model=agent.model if isinstance(agent.model, str) else "fake")
    runner = InMemoryRunner(agent=root, app_name=app)
    session = await runner.session_service.create_session(app_name=app, user_id="u", state=state)
    message = types.Content(role="user", parts=[types.Part(text="hello")])
    error: dict[str, str] | None = None
    try:
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            pass
    except Exception as exc:  # the exception is what the test compares
        error = {"type": type(exc).__name__, "message": str(exc)}
    return {"error": error, "calls": FakeLlm.calls}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3])))))
