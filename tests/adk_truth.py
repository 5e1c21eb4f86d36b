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


# Placeholder values for environment variables apps of the shared corpus read when imported (no service is reached).
FAKE_ENV = {
    "GOOGLE_API_KEY": "fake-key-never-used",
    "GOOGLE_GENAI_USE_VERTEXAI": "0",
    "GOOGLE_CLOUD_PROJECT": "fake-project",
    "GOOGLE_CLOUD_LOCATION": "us-central1",
    "OTEL_SDK_DISABLED": "true",
    "GITHUB_TOKEN": "fake",
    "OWNER": "google",
    "REPO": "adk-python",
    "GOOGLE_CLOUD_STORAGE_BUCKET": "fake-bucket",
    "GOOGLE_PLACES_API_KEY": "fake",
    "DISABLE_WEB_DRIVER": "1",
}


def scripts_for(preview: Any) -> list[dict[str, tuple[str, dict[str, Any]]]]:
    """One scripted turn per agent that only a model's choice reaches (a transfer, an AgentTool call), making
    each agent on its way take that step on its first call; one plain turn for the rest."""
    by_name = {agent.agent: agent for agent in preview.agents}
    turns: list[dict[str, tuple[str, dict[str, Any]]]] = [{}]
    for agent in preview.agents:
        script: dict[str, tuple[str, dict[str, Any]]] = {}
        current = agent
        while current.reached in ("transfer", "agent_tool") and current.via in by_name:
            if current.reached == "transfer":
                script[current.via] = ("transfer_to_agent", {"agent_name": current.agent})
            else:
                script[current.via] = (current.agent, {"request": "hello"})
            current = by_name[current.via]
        if script and script not in turns:
            turns.append(script)
    return turns


def compare(target: str, state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """For each agent the run preview of `target` shows: whether google-adk's real first request for it (over
    the turns that reach it) has the same system instruction, instruction turn, model and tools."""
    from templating.preview import build_preview
    from templating.preview.load import load_app

    preview = build_preview(target, state=state, run=True)
    loaded = load_app(target)
    first: dict[str, LlmRequest] = {}
    errors: list[str] = []
    for script in scripts_for(preview):
        requests, error = run(loaded.root, state, script=script, plugins=list(loaded.plugins))
        if error is not None:
            errors.append(f"{type(error).__name__}: {error}")
        for name, request in requests.items():
            first.setdefault(name, request)
    static = {a.agent: a for a in build_preview(target, state=state).agents}
    rows = []
    for agent in preview.agents:
        request = first.get(agent.agent)
        row: dict[str, Any] = {"agent": agent.agent, "reached": agent.reached, "ran": request is not None}
        read = static.get(agent.agent)
        row["static"] = read is not None
        if read is not None:
            row["static_exact"] = read.exact
            row["static_same"] = (read.system_instruction, read.instruction_turn, read.tools) == (
                agent.system_instruction,
                agent.instruction_turn,
                agent.tools,
            )
            row["static_notes"] = list(read.notes)
        if request is not None:
            row["system_instruction"] = agent.system_instruction == request.config.system_instruction
            row["instruction_turn"] = agent.instruction_turn is None or agent.instruction_turn in instruction_turns(
                request
            )
            row["model"] = agent.model == request.model
            row["tools"] = list(agent.tools) == tool_names(request)
        row["exact"] = agent.exact
        row["missing"] = agent.keys("missing")
        row["error"] = agent.error
        rows.append(row)
    return [{"errors": errors}, *rows]


if __name__ == "__main__":  # python tests/adk_truth.py TARGET: the comparison as JSON (a process per app)
    import json
    import os
    import sys

    for name, value in FAKE_ENV.items():
        os.environ.setdefault(name, value)
    import logging

    logging.disable(logging.CRITICAL)
    print(json.dumps(compare(sys.argv[1], {})))
