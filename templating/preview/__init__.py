"""`templating preview`: what google-adk sends each agent's model on its first turn, without calling a model.

[`build_preview`][templating.preview.build_preview] takes an app (a folder, a Python file, `module:attribute` or an
Agent Config YAML) and a state, and gives a [`Preview`][templating.preview.Preview]: for each agent in run order,
the exact system instruction and instruction turn google-adk's own request processors build, the tools offered,
and where each key the agent reads comes from. Only this package imports google-adk, and only when a preview
is made.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from .load import PreviewError
from .result import AgentPreview, KeyRead, Preview, marker

__all__ = ["AgentPreview", "KeyRead", "Preview", "PreviewError", "build_preview", "marker"]


def build_preview(
    target: str,
    *,
    state: Mapping[str, Any] | None = None,
    run: bool = False,
    agent: str | None = None,
    announce: Callable[[str], None] | None = None,
) -> Preview:
    """The preview of the app `target` names, for `state` (default: empty).

    `run`: import the app (this runs its code, as `adk run` does) and run its callbacks as google-adk would;
    otherwise the app is read from its code and nothing of it runs. `agent`: only the agents of that name (a
    `PreviewError` when there is none). `announce` is told before the app's code runs."""
    from .load import load_app, quiet
    from .walk import Walk

    if not run:
        raise PreviewError(
            "the preview read from the code (without --run) needs the agent model, which is not there yet: "
            "use --run to import the app"
        )
    loaded = load_app(target, announce=announce)
    walk = Walk(run_code=True, plugins=list(loaded.plugins))
    with quiet():
        previews = asyncio.run(walk.app(loaded.root, dict(state or {})))
    result = Preview(target=target, mode="run", agents=tuple(previews), notes=tuple(walk.notes))
    return _only(result, agent)


def _only(result: Preview, agent: str | None) -> Preview:
    if agent is None:
        return result
    chosen = result.named(agent)
    if not chosen:
        names = ", ".join(dict.fromkeys(a.agent for a in result.agents)) or "none"
        raise PreviewError(f"no agent named {agent!r} in {result.target}; its agents: {names}")
    return Preview(result.target, result.mode, tuple(chosen), result.notes)
