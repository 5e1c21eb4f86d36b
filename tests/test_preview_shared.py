"""A static preview taken from a project's own scan and agent model (templating/preview/shared.py), as the language
server makes it after each edit: it is what a fresh `build_preview` of the same text on disk gives, for every kind
of edit an author makes (unsaved text, the project updated one edit at a time as the server updates it); it is
not taken where the project's facts may differ from what `build_preview` reads (then None: the server reads the
app again); and asked again with nothing changed, it is the preview made last."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import installed, shared_corpora

if not installed("google.adk"):
    if os.environ.get("TEMPLATING_REQUIRE_ADK") == "1":
        pytest.fail("TEMPLATING_REQUIRE_ADK=1 but google-adk is not installed (pip install '.[adk]')", pytrace=False)
    pytest.skip("google-adk is not installed (pip install '.[adk]')", allow_module_level=True)

from preview_edits import EDITS, Edit, fresh_on_disk, whole

from templating.linter.engine import Project
from templating.lsp.preview import preview_answer
from templating.preview import build_preview
from templating.preview.shared import Known, preview_from

APPS = Path(__file__).resolve().parent / "fixtures" / "preview_apps"
CORPORA = shared_corpora()
CORPUS_APPS = CORPORA / "adk-samples" / "python" / "agents" if CORPORA is not None else None


pytestmark = pytest.mark.usefixtures("preview_keeps_nothing")


def workspace(tmp_path: Path, *apps: str) -> Path:
    """A project folder (a `pyproject.toml` with a `[tool.templating]` table) holding the fixture apps."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.templating]\n", encoding="utf-8")
    for app in apps:
        shutil.copytree(APPS / app, root / app)
    return root.resolve()


def known_after(root: Path, edits: dict[str, str]) -> tuple[Project, Known]:
    """The project as the language server keeps it: read whole when the folder opens, then one update per edit
    (the editor's unsaved text)."""
    project = Project(root)
    project.read_context()
    for path, text in edits.items():
        project.update(path, text)
    return project, known_of(project, edits)


def known_of(project: Project, texts: dict[str, str]) -> Known:
    """What the language server gives a preview: the project, its scan and agent model, the open documents."""
    root = Path(project.root)
    return Known(project, root, project.config, project.scan, project.agent_model, texts, dict(project.overrides))


CWD = {"the folder": lambda root: root, "elsewhere": lambda root: root.parent}  # the scan's names: relative, absolute


@pytest.mark.parametrize("where", sorted(CWD))
@pytest.mark.parametrize("kind", sorted(EDITS))
def test_the_preview_from_the_projects_facts_after_an_edit_is_a_fresh_preview_of_the_text_on_disk(
    kind: str, where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    edit = EDITS[kind]
    root = workspace(tmp_path, "concierge", "story_loop", "support_yaml")
    monkeypatch.chdir(CWD[where](root))
    path = root / edit.app / edit.file
    target = str(root / edit.app)
    original = path.read_text(encoding="utf-8")
    for text in (edit.apply(original), original):  # the edit, then undone
        _, known = known_after(root, {str(path): text})
        made = preview_from(known, target)
        assert made is not None, "the project's facts were not used"
        assert whole(made) == whole(fresh_on_disk(target, {str(path): text}))
    assert path.read_text(encoding="utf-8") == original


def test_two_edits_in_a_row_and_an_open_document_of_another_app(tmp_path: Path) -> None:
    root = workspace(tmp_path, "concierge", "story_loop")
    first, second = EDITS["the root's instruction"], EDITS["a sub-agent's instruction"]
    path = root / "concierge" / "agent.py"
    other = root / "story_loop" / "agent.py"
    edited = second.apply(first.apply(path.read_text(encoding="utf-8")))
    unsaved_other = EDITS["an output_key"].apply(other.read_text(encoding="utf-8"))
    edits = {str(other): unsaved_other, str(path): edited}
    for target in (str(root / "concierge"), str(root / "story_loop")):
        _, known = known_after(root, edits)
        made = preview_from(known, target)
        assert made is not None
        assert whole(made) == whole(fresh_on_disk(target, edits))


def test_an_open_document_the_scan_does_not_read_does_not_matter(tmp_path: Path) -> None:
    root = workspace(tmp_path, "concierge")
    readme = root / "README.md"
    readme.write_text("# Concierge\n", encoding="utf-8")
    _, known = known_after(root, {})
    known = known_of(known.owner, {str(readme): "# Concierge, edited\n"})
    made = preview_from(known, str(root / "concierge"))
    assert made is not None
    assert whole(made) == whole(fresh_on_disk(str(root / "concierge"), {}))


def test_the_state_and_the_agent_asked_for_are_those_of_build_preview(tmp_path: Path) -> None:
    root = workspace(tmp_path, "concierge")
    _, known = known_after(root, {})
    target = str(root / "concierge")
    made = preview_from(known, target, state={"app:city": "Lyon"}, agent="greeting_agent")
    assert made is not None
    assert whole(made) == whole(build_preview(target, state={"app:city": "Lyon"}, agent="greeting_agent"))


def test_asked_again_with_nothing_changed_the_preview_made_last_is_given(tmp_path: Path) -> None:
    root = workspace(tmp_path, "concierge")
    path = root / "concierge" / "agent.py"
    project, known = known_after(root, {})
    target = str(root / "concierge")
    made = preview_from(known, target)
    assert made is not None
    assert preview_from(known, target) is made
    assert preview_from(known, target, state={"app:city": "Lyon"}) is not made  # another request
    edited = EDITS["the root's instruction"].apply(path.read_text(encoding="utf-8"))
    project.update(str(path), edited)  # a new scan: the version the previews are kept by
    after = known_of(project, {str(path): edited})
    again = preview_from(after, target)
    assert again is not None
    assert again is not made
    assert "You are the head concierge." in (again.agents[0].system_instruction or "")


def test_the_previews_kept_go_with_the_project(tmp_path: Path) -> None:
    import gc

    from templating.preview import shared

    root = workspace(tmp_path, "concierge")
    project, known = known_after(root, {})
    assert preview_from(known, str(root / "concierge")) is not None
    assert len(shared._KEPT) == 1
    del project, known
    gc.collect()
    assert len(shared._KEPT) == 0


def _session_elsewhere(root: Path) -> None:
    """A script outside the app's folder that starts a session for it with initial state."""
    (root / "run_concierge.py").write_text(
        "from google.adk.runners import InMemoryRunner\n"
        "from concierge.agent import root_agent\n\n"
        'runner = InMemoryRunner(agent=root_agent, app_name="concierge")\n\n\n'
        "async def main():\n"
        "    await runner.session_service.create_session(\n"
        '        app_name="concierge", user_id="u", state={"app:city": "Lyon"}\n'
        "    )\n",
        encoding="utf-8",
    )


def _runner_elsewhere(root: Path) -> None:
    """A test outside the app's folder that runs it under another name."""
    (root / "tests").mkdir()
    (root / "tests" / "test_concierge.py").write_text(
        "from google.adk.runners import Runner\n"
        "from google.adk.sessions import InMemorySessionService\n"
        "from concierge.agent import root_agent\n\n"
        'runner = Runner(agent=root_agent, app_name="concierge_test", session_service=InMemorySessionService())\n',
        encoding="utf-8",
    )


def _eval_set_above(root: Path) -> None:
    """An eval set beside the app's folder (above it): the workspace's agent model reads it, `build_preview`
    (whose root is the app's package here: no pyproject.toml) does not."""
    (root / "pyproject.toml").unlink()
    (root / "eval").mkdir()
    (root / "eval" / "concierge.evalset.json").write_text(
        '{"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [], '
        '"session_input": {"app_name": "concierge", "user_id": "u", "state": {"app:city": "Lyon"}}}]}',
        encoding="utf-8",
    )


WIDER = {
    "a session started with initial state in a script outside the app's folder": _session_elsewhere,
    "a runner of the app in a test outside its folder": _runner_elsewhere,
    "an eval set above the app's package": _eval_set_above,
}


@pytest.mark.parametrize("case", sorted(WIDER))
def test_where_the_workspace_gives_the_app_more_the_preview_is_still_build_previews(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent model is built again from the project's scan as `build_preview` builds it (no code read again)."""
    root = workspace(tmp_path, "concierge")
    monkeypatch.chdir(root)
    WIDER[case](root)
    path = root / "concierge" / "agent.py"
    edits = {str(path): EDITS["the root's instruction"].apply(path.read_text(encoding="utf-8"))}
    _, known = known_after(root, edits)
    made = preview_from(known, str(root / "concierge"))
    assert made is not None
    assert whole(made) == whole(fresh_on_disk(str(root / "concierge"), edits))


def _unsaved_yaml(root: Path) -> dict[str, str]:
    """An Agent Config edited in the editor: the project does not lint it, its scan has the text on disk."""
    path = root / "support_yaml" / "root_agent.yaml"
    return {str(path): path.read_text(encoding="utf-8").replace("support_router", "router")}


def _other_suffixes(root: Path) -> dict[str, str]:
    (root / "pyproject.toml").write_text('[tool.templating]\nconstant-suffixes = ["PROMPT"]\n', encoding="utf-8")
    return {}


NOT_TAKEN = {
    "an unsaved text the project did not read": ("support_yaml", _unsaved_yaml),
    "constants read with other suffixes than build_preview's": ("concierge", _other_suffixes),
}


@pytest.mark.parametrize("case", sorted(NOT_TAKEN))
def test_where_the_projects_facts_may_differ_they_are_not_taken_and_the_server_reads_the_app(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app, make = NOT_TAKEN[case]
    root = workspace(tmp_path, app)
    monkeypatch.chdir(root)
    texts = make(root)
    project = Project(root)
    project.read_context()
    for path, text in texts.items():
        if path.endswith(".py"):
            project.update(path, text)
    known = known_of(project, texts)
    target = str(root / app)
    assert preview_from(known, target) is None
    document = str(root / app / ("agent.py" if app != "support_yaml" else "root_agent.yaml"))
    answer = preview_answer(document, root, texts, None, None, known)
    expected = build_preview(target, read=lambda f: texts.get(f) or Path(f).read_text(encoding="utf-8"))
    assert answer["error"] is None
    assert (answer["target"], answer["agents"], answer["notes"]) == (target, expected.to_json(), list(expected.notes))


CORPUS_EDITS = {
    "travel-concierge: the root's prompt": Edit(
        "travel-concierge",
        "travel_concierge/prompt.py",
        "- Please use only the agents and tools to fulfill all user rquest",
        "- Please use only the agents and tools to fulfill every request",
    ),
    "travel-concierge: a sub-agent's output_key": Edit(
        "travel-concierge",
        "travel_concierge/sub_agents/inspiration/agent.py",
        'output_key="place"',
        'output_key="places_found"',
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(CORPUS_EDITS))
def test_on_real_code_the_preview_from_the_projects_facts_is_the_fresh_one(kind: str, tmp_path: Path) -> None:
    edit = CORPUS_EDITS[kind]
    if CORPUS_APPS is None or not (CORPUS_APPS / edit.app).is_dir():
        pytest.skip("the shared corpus (shared/corpora) is not beside the checkout")
    root = tmp_path / edit.app
    shutil.copytree(CORPUS_APPS / edit.app, root, ignore=shutil.ignore_patterns("*.pyc"))  # its tests and eval sets too
    root = root.resolve()
    path = root / edit.file
    target = str(path.parents[len(Path(edit.file).parts) - 2])
    edits = {str(path): edit.apply(path.read_text(encoding="utf-8"))}
    _, known = known_after(root, edits)
    made = preview_from(known, target)
    assert made is not None
    assert whole(made) == whole(fresh_on_disk(target, edits))
