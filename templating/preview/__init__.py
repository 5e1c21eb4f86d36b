"""`templating preview`: what google-adk sends each agent's model on its first turn, without calling a model.

[`build_preview`][templating.preview.build_preview] takes an app (a folder, a Python file, `module:attribute` or an
Agent Config YAML) and a state, and gives a [`Preview`][templating.preview.Preview]: for each agent in run order,
the exact system instruction and instruction turn google-adk's own request processors build, the tools offered,
and where each key the agent reads comes from. Only this package imports google-adk, and only when a preview
is made.
"""

from __future__ import annotations

from .build import build_preview
from .load import PreviewError
from .result import AgentPreview, KeyRead, Preview, marker

__all__ = ["AgentPreview", "KeyRead", "Preview", "PreviewError", "build_preview", "marker"]
