"""The run-order findings kept from one agent model to the next (`linter.rules.order_kept`, `agent_model.changes`).

An edit builds the agent model again; the order findings (T014 on an app's agents, T024..T027) of an instruction
whose readers' apps did not change are kept. Each row below edits a workspace of several apps that share modules
and state keys, one edit or several in a row: after each, every file's findings equal a fresh run's, the
instructions of the apps the edit touched are worked out again and those of an app it did not touch are kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from templating.agent_model.changes import ModelChanges
from templating.linter.engine import LintResult, Project
from templating.linter.run import lint_project

_SEQ = "from google.adk.agents import LlmAgent, SequentialAgent\n"

# Three apps: alpha (a researcher from a shared module, then a writer), beta (it reads `draft`, which only alpha
# writes: its T014 names alpha's writer), gamma (on its own: no edit below touches it).
_APPS = {
    "pyproject.toml": "[tool.templating]\n",
    "shared/__init__.py": "",
    "shared/tools.py": "def save_topic(tool_context):\n    tool_context.state['topic'] = 'travel'\n",
    "shared/helpers.py": "from google.adk.agents import LlmAgent\n\nfrom .tools import save_topic\n\n"
    "researcher = LlmAgent(name='researcher', model='m', instruction='Research {topic} for {audience}.',\n"
    "    output_key='research', tools=[save_topic])\n",
    "alpha/__init__.py": "from . import agent\n",
    "alpha/agent.py": _SEQ + "from shared.helpers import researcher\n\n"
    "writer = LlmAgent(name='writer', model='m', instruction='Write from {research} and {draft}.',\n"
    "    output_key='draft')\n"
    "root_agent = SequentialAgent(name='alpha', sub_agents=[researcher, writer])\n",
    "beta/__init__.py": "from . import agent\n",
    "beta/agent.py": _SEQ + "\n"
    "planner = LlmAgent(name='planner', model='m', instruction='Plan for {audience} from {draft}.',\n"
    "    output_key='plan')\n"
    "reviewer = LlmAgent(name='reviewer', model='m', instruction='Review {plan}.')\n"
    "root_agent = SequentialAgent(name='beta', sub_agents=[planner, reviewer])\n",
    "gamma/__init__.py": "from . import agent\n",
    "gamma/agent.py": _SEQ + "\n"
    "summary = LlmAgent(name='summary', model='m', instruction='Sum up {summary} for {audience}.',\n"
    "    output_key='summary')\n"
    "root_agent = SequentialAgent(name='gamma', sub_agents=[summary])\n",
}


def _replaced(path: str, old: str, new: str) -> tuple[str, str]:
    assert old in _APPS[path]
    return path, _APPS[path].replace(old, new)


_BETA_WITH_RESEARCHER = (
    _APPS["beta/agent.py"]
    .replace(_SEQ, _SEQ + "from shared.helpers import researcher\n")
    .replace("[planner, reviewer]", "[researcher, planner, reviewer]")
)

# (id, edits: each (path, new text; None deletes the file), the apps whose instructions are worked out again)
CASES: list[tuple[str, list[tuple[str, str | None]], set[str]]] = [
    (
        "the-only-writer-of-a-key-another-app-reads-removed",  # beta's T014 no longer names alpha's writer
        [_replaced("alpha/agent.py", ",\n    output_key='draft'", "")],
        {"alpha", "beta"},
    ),
    ("an-app-reordered", [_replaced("beta/agent.py", "[planner, reviewer]", "[reviewer, planner]")], {"beta"}),
    (
        "an-instruction-edited-in-an-app-reading-a-key-another-writes",
        [_replaced("beta/agent.py", "Plan for {audience} from {draft}.", "Plan from {draft} and {research}.")],
        {"beta"},
    ),
    (
        "a-key-written-by-a-second-app",  # alpha writes `plan` too: beta's findings on it are its own app's
        [
            _replaced(
                "alpha/agent.py",
                "output_key='draft')",
                "output_key='draft')\nother = LlmAgent(name='o', model='m', output_key='plan')",
            )
        ],
        {"alpha"},
    ),
    (
        "an-agent-moved-between-apps",
        [
            _replaced("alpha/agent.py", "[researcher, writer]", "[writer]"),
            ("beta/agent.py", _BETA_WITH_RESEARCHER),
        ],
        {"alpha", "beta"},
    ),
    (
        "a-shared-tool-module-edited",  # the researcher's tool now writes another key: both apps it is in change
        [
            ("beta/agent.py", _BETA_WITH_RESEARCHER),
            _replaced("shared/tools.py", "state['topic']", "state['subject']"),
        ],
        {"alpha", "beta"},
    ),
    (
        "a-shared-agent-module-edited",
        [_replaced("shared/helpers.py", "Research {topic} for {audience}.", "Research {topic} after {plan}.")],
        {"alpha"},
    ),
    (
        "a-write-no-agent-makes-added",  # the project writes `audience` outside every agent: named in each T014
        [("shared/setup.py", "def seed(state):\n    state['audience'] = 'all'\n")],
        {"alpha", "beta", "gamma"},
    ),
    (
        "an-app-writing-a-key-others-read-added",  # `audience`: beta's T014 now names delta's writer
        [
            ("delta/__init__.py", "from . import agent\n"),
            (
                "delta/agent.py",
                _SEQ + "\nroot_agent = LlmAgent(name='delta', model='m', instruction='Ask.', output_key='audience')\n",
            ),
        ],
        {"alpha", "beta", "gamma"},
    ),
    ("an-app-deleted", [("beta/agent.py", None)], set()),
    (
        "an-app-deleted-whose-writer-another-app-named",  # beta's T014 on `draft` named alpha's writer
        [("alpha/agent.py", None)],
        {"beta"},
    ),
    (
        "an-edit-undone",  # back to the text of the first model: what was worked out for it is worked out again
        [_replaced("alpha/agent.py", "{research} and ", ""), ("alpha/agent.py", _APPS["alpha/agent.py"])],
        {"alpha"},
    ),
]

Published = dict[str, list[tuple[Any, ...]]]


def _rows(result: LintResult, path: str) -> list[tuple[Any, ...]]:
    return sorted(
        (d.code, d.severity, d.message, d.span and (d.span.start, d.span.end), d.help or "")
        for d in result.diagnostics
        if d.path == path
    )


def _publish(published: Published, result: LintResult) -> None:
    for path in {*result.files, *(d.path for d in result.diagnostics if d.path)}:
        published[path] = _rows(result, path)


def _apps_worked_out(project: Project) -> set[str]:
    """The apps whose agents read an instruction whose order findings the last update worked out again."""
    kept, model = project._ordered, project.agent_model
    assert kept is not None
    return {app.name for key in kept.worked_out for agent in model.agents_reading(key) for app in model.apps_of(agent)}


def _write_apps(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The three apps of `_APPS` written under `root`, the current folder."""
    for name, content in _APPS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content, encoding="utf-8")
    monkeypatch.chdir(root)


@pytest.mark.parametrize(("edits", "apps"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_order_findings_kept_for_untouched_apps_equal_a_fresh_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edits: list[tuple[str, str | None]], apps: set[str]
) -> None:
    _write_apps(tmp_path, monkeypatch)
    project = Project(tmp_path)
    published: Published = {}
    _publish(published, project.lint(["."]))
    assert _apps_worked_out(project) == {"alpha", "beta", "gamma"}  # the first model: every app's
    overrides: dict[str, str] = {}
    worked_out: set[str] = set()
    for n, (path, text) in enumerate(edits):
        if text is None:
            (tmp_path / path).unlink()
            overrides.pop(path, None)
        elif (tmp_path / path).exists():
            overrides[path] = text  # an unsaved buffer
        else:
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / path).write_text(text, encoding="utf-8")  # a new file, saved
        _publish(published, project.update(path, text))
        worked_out |= _apps_worked_out(project)
        fresh: Published = {}
        _publish(fresh, lint_project(["."], root=".", overrides=overrides))
        for name in sorted({*published, *fresh}):
            assert published.get(name, []) == fresh.get(name, []), f"findings of {name} after edit {n + 1}"
    assert worked_out == apps
    assert any(rows for rows in published.values()), "the case has order findings"


def test_the_changes_between_two_models_name_the_apps_that_differ(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_apps(tmp_path, monkeypatch)
    project = Project(tmp_path)
    project.lint(["."])
    before = project.agent_model
    ids = {app.name: app.id for app in before.apps}
    assert ModelChanges.between(None, before).everything
    assert ModelChanges.between(before, before).same == frozenset(ids.values())
    project.update("beta/agent.py", _APPS["beta/agent.py"].replace("output_key='plan'", "output_key='notes'"))
    changes = ModelChanges.between(before, project.agent_model)
    assert changes.same == {ids["alpha"], ids["gamma"]}
    assert changes.keys == {"plan", "notes"}  # (as another app's finding would name them: beta's planner)
    assert not changes.everything
