"""A small project the lint cache's tests lint, and what they compare (tests/test_lint_cache*.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from templating.linter.engine import Project
from templating.linter.result import LintResult

PROJECT = {
    "pyproject.toml": "[tool.templating]\n",
    "trip/__init__.py": "from . import agent\n",
    "trip/prompt.py": 'PLAN_PROMPT = """Plan for {user:name?} with {plan}, {notes} and {budget}."""\n',
    "trip/agent.py": (
        "from pathlib import Path\n"
        "from google.adk.agents import LlmAgent\n"
        "from .prompt import PLAN_PROMPT\n"
        "def load(name):\n    return (Path(__file__).parent / name).read_text()\n"
        "root_agent = LlmAgent(name='planner', instruction=PLAN_PROMPT, output_key='plan')\n"
        "writer = LlmAgent(name='writer', instruction=load('writer.txt'))\n"
    ),
    "trip/tools.py": "def save(tool_context):\n    tool_context.state['notes'] = 1\n",
    "prompts/greet.prompt": "Hello <user:name>, your <plan>.\n",
}


def build(root: Path, files: dict[str, str] = PROJECT) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def shape(result: LintResult) -> Any:
    """Everything a run gives its callers, to compare a cached run with a fresh one."""
    return (
        [repr(d) for d in result.diagnostics],
        [repr(t) for t in result.templates],
        result.files,
        result.python,
        result.sources,
        [repr(d) for d in result.run_findings],
        result.root,
    )


def fresh_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one each time a run lints afresh (not from the cache)."""
    calls: list[int] = []
    real = Project._lint

    def counted(self: Project, paths: Any) -> LintResult:
        calls.append(1)
        return real(self, paths)

    monkeypatch.setattr(Project, "_lint", counted)
    return calls
