"""What google-adk really sends: an app run through google-adk's own Runner with a model that records every
request and never calls out. The ground truth the preview is compared with (tests/test_preview.py).

Each model answers with the marker the preview shows for an agent's output (`⟨output of NAME⟩`), so an agent
that reads an earlier agent's `output_key` sees the same text in both. `script` makes an agent's model transfer
to a sub-agent, or call an AgentTool, on its first call, so agents only a model's choice reaches are run too.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import AsyncGenerator, Iterator, Mapping
from typing import Any, ClassVar

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.adk.tools.agent_tool import AgentTool
from google.genai import types

from templating.preview import marker


class RecordingLlm(BaseLlm):
    """Keeps the first request of each agent; answers with its output marker, or as `script` says."""

    model: str = "recording"
    first: ClassVar[dict[str, LlmRequest]] = {}
    calls: ClassVar[list[str]] = []
    script: ClassVar[dict[str, tuple[str, dict[str, Any]]]] = {}  # agent -> (function to call, args), first call

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        name = (llm_request.config.labels or {}).get("adk_agent_name", "?")
        first = name not in RecordingLlm.first
        RecordingLlm.first.setdefault(name, llm_request.model_copy(deep=True))
        RecordingLlm.calls.append(name)
        if first and name in RecordingLlm.script:
            function, args = RecordingLlm.script[name]
            call = types.Part(function_call=types.FunctionCall(name=function, args=args))
            yield LlmResponse(content=types.Content(role="model", parts=[call]))
            return
        text = types.Part(text=marker(f"output of {name}"))
        yield LlmResponse(content=types.Content(role="model", parts=[text]))


def agents(root: Any) -> Iterator[Any]:
    """Every agent of the tree: sub-agents, AgentTools' agents, a Workflow's nodes."""
    seen: set[int] = set()
    todo = [root]
    while todo:
        agent = todo.pop()
        if id(agent) in seen:
            continue
        seen.add(id(agent))
        yield agent
        todo.extend(getattr(agent, "sub_agents", None) or [])
        todo.extend(tool.agent for tool in getattr(agent, "tools", None) or [] if isinstance(tool, AgentTool))
        graph = getattr(agent, "graph", None)
        if graph is not None:
            todo.extend(node for node in graph.nodes if hasattr(node, "name"))


def record_models(root: Any) -> None:
    """Give every LlmAgent a recording model of the same name (so google-adk's name-dependent choices stay)."""
    for agent in agents(root):
        if isinstance(agent, LlmAgent) and not isinstance(agent.model, RecordingLlm):
            agent.model = RecordingLlm(model=agent.canonical_model.model)


def run(
    root: Any,
    state: Mapping[str, Any],
    *,
    script: Mapping[str, tuple[str, dict[str, Any]]] | None = None,
    plugins: list[Any] | None = None,
) -> tuple[dict[str, LlmRequest], BaseException | None]:
    """One first turn of the app: each agent's first request, and what the turn raised (None if nothing)."""
    record_models(root)
    RecordingLlm.first = {}
    RecordingLlm.calls = []
    RecordingLlm.script = dict(script or {})
    with warnings.catch_warnings():  # google-adk 2.13 deprecates global_instruction, SequentialAgent, ...
        warnings.simplefilter("ignore")
        return asyncio.run(_turn(root, dict(state), plugins or []))


async def _turn(root: Any, state: dict[str, Any], plugins: list[Any]) -> tuple[dict[str, LlmRequest], Any]:
    if plugins:
        from google.adk.apps import App

        runner = InMemoryRunner(app=App(name="truth", root_agent=root, plugins=plugins))
    else:
        runner = InMemoryRunner(agent=root, app_name="truth")
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="u", state=state)
    message = types.Content(role="user", parts=[types.Part(text="hello")])
    error: BaseException | None = None
    try:
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            pass
    except Exception as exc:  # the exception is what the test looks at
        error = exc
    return dict(RecordingLlm.first), error


def instruction_turns(request: LlmRequest) -> list[str]:
    """The texts of the request's user turns (the preview's instruction turn must be one of them)."""
    texts = []
    for content in request.contents:
        if content.role == "user":
            texts.append("".join(part.text or "" for part in content.parts or []))
    return texts


def tool_names(request: LlmRequest) -> list[str]:
    """The function declarations' names, and the built-in tools' kinds, of the request's tools."""
    names: list[str] = []
    for tool in request.config.tools or []:
        names += [declaration.name for declaration in tool.function_declarations or []]
        names += [kind for kind, value in tool if value is not None and kind != "function_declarations"]
    return names
