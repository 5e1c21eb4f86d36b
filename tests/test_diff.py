"""`templating diff`: what each agent's model sees at a git revision and in the working tree, on throw-away git
repositories with two commits; and the GitHub Actions workflow of docs/preview.md run as its steps say."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import installed

if not installed("google.adk"):
    if os.environ.get("TEMPLATING_REQUIRE_ADK") == "1":
        pytest.fail("TEMPLATING_REQUIRE_ADK=1 but google-adk is not installed (pip install '.[adk]')", pytrace=False)
    pytest.skip("google-adk is not installed (pip install '.[adk]')", allow_module_level=True)

ROOT = Path(__file__).resolve().parent.parent
APPS = ROOT / "tests" / "fixtures" / "preview_apps"
GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


def templating(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "templating", *args], cwd=repo, capture_output=True, text=True, check=False
    )


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose main holds two apps; a branch `feature` changes what some agents see (second commit)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for app in ("concierge", "research"):
        shutil.copytree(APPS / app, repo / app, ignore=shutil.ignore_patterns("__pycache__"))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "Dev")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two apps")
    git(repo, "checkout", "-qb", "feature")
    edit(repo / "concierge" / "agent.py", "Be courteous.", "Be courteous and brief.")
    edit(repo / "concierge" / "agent.py", "Greet {user:name?} warmly", "Greet {user:name} warmly")
    edit(repo / "research" / "agent.py", "advancements in '{topic}'.", "advancements in '{topic}' for {audience}.")
    git(repo, "commit", "-qam", "shorter, and for an audience")
    return repo


def state_of(repo: Path) -> tuple[str, str, list[str]]:
    """What a command could change: the index, the status, and the files of the repository (not .git)."""
    files = sorted(str(p.relative_to(repo)) for p in repo.rglob("*") if ".git" not in p.parts)
    return git(repo, "status", "--porcelain", "--ignored"), (repo / ".git" / "index").read_bytes().hex(), files


def test_each_agent_that_sees_something_else_is_shown_with_its_diff_and_keys(repo: Path) -> None:
    before = state_of(repo)
    result = templating(repo, "diff", "--format", "json")  # BASE: the merge base with main
    assert result.returncode == 0, result.stderr
    assert state_of(repo) == before  # nothing written, in the working tree or in .git
    found = json.loads(result.stdout)
    assert found["base"] == git(repo, "rev-parse", "main").strip()
    assert found["changed"] is True
    apps = {app["app"]: app for app in found["apps"]}
    assert set(apps) == {"concierge", "research"}
    concierge = {agent["agent"]: agent for agent in apps["concierge"]["agents"]}
    assert set(concierge) == {"concierge", "greeting_agent", "booking_agent"}  # the root's global instruction
    greeting = concierge["greeting_agent"]
    assert greeting["made_required"] == ["user:name"]
    assert "-You are the Greeting Agent. Greet  warmly." in greeting["diff"]
    assert "+You are the Greeting Agent. Greet \u27e8missing: user:name\u27e9 warmly." in greeting["diff"]
    research = apps["research"]["agents"]
    assert [(a["agent"], a["keys_added"]) for a in research] == [("RenewableEnergyResearcher", ["audience"])]


def test_agents_added_and_removed_and_exit_code(repo: Path) -> None:
    edit(
        repo / "research" / "agent.py",
        "sub_agents=[researcher_agent_1, researcher_agent_2]",
        "sub_agents=[researcher_agent_1]",
    )
    (repo / "research" / "extra.py").write_text("", encoding="utf-8")  # an untracked file: read as it is
    shutil.rmtree(repo / "concierge")
    result = templating(repo, "diff", "main", "research", "concierge", "--exit-code")
    assert result.returncode == 1, result.stderr
    assert "app research: changed\n" in result.stdout
    assert "  agent EVResearcher: removed\n" in result.stdout
    assert "app concierge: removed\n" in result.stdout
    # the working tree as it was at main: nothing changed, exit 0 even with --exit-code
    git(repo, "checkout", "-q", "--", ".")
    git(repo, "checkout", "-q", "main")
    (repo / "research" / "extra.py").unlink()
    same = templating(repo, "diff", "main", "--exit-code", "--format", "markdown")
    assert same.returncode == 0, same.stderr
    assert "No agent's request changed." in same.stdout


def test_markdown_is_a_pull_request_comment(repo: Path) -> None:
    result = templating(repo, "diff", "main", "concierge", "--format", "markdown")
    assert result.returncode == 0, result.stderr
    short = git(repo, "rev-parse", "--short", "main").strip()
    assert result.stdout.startswith(f"### What the model sees: {short} (main) \u2192 this branch\n")
    assert "**`greeting_agent`**: changed\n\nKeys read: made required user:name\n\n```diff\n" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["diff", "no-such-revision"], "no-such-revision: not a revision of this repository, and no app there"),
        (["diff", "main", "nowhere"], "nowhere: not a revision of this repository, and no app there"),
        (["diff", "main", "../outside"], "../outside: outside the repository"),
    ],
    ids=["bad-revision", "no-such-app", "outside"],
)
def test_bad_input_is_one_line_exit_2(repo: Path, args: list[str], message: str) -> None:
    (repo.parent / "outside").mkdir()
    before = state_of(repo)
    result = templating(repo, *args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert message in result.stderr
    assert state_of(repo) == before


def test_outside_a_git_repository_is_one_line_exit_2(tmp_path: Path) -> None:
    result = templating(tmp_path, "diff")
    assert result.returncode == 2
    assert result.stderr.startswith("templating: error: not a git repository")
    assert result.stderr.count("\n") == 1


# --- the workflow of docs/preview.md, run as its steps say ----------------------------------------------------------


def workflow() -> dict[str, object]:
    import yaml

    text = (ROOT / "docs" / "preview.md").read_text(encoding="utf-8")
    found = re.search(r"```yaml\n(# \.github/workflows/prompt-diff\.yml\n.*?)```", text, re.DOTALL)
    assert found, "docs/preview.md shows the workflow .github/workflows/prompt-diff.yml"
    loaded: dict[str, object] = yaml.safe_load(found.group(1))
    return loaded


def test_the_documented_workflow_posts_the_markdown_diff(repo: Path, tmp_path: Path) -> None:
    """The workflow's `templating diff` step, run in a clone as actions/checkout leaves it for a pull request (the
    base branch fetched as origin/main), writes the comment the next step posts with `gh pr comment`."""
    origin = tmp_path / "origin.git"
    git(repo, "clone", "-q", "--bare", str(repo), str(origin))
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--branch", "feature", str(origin), str(clone))
    steps = workflow()["jobs"]["prompt-diff"]["steps"]  # type: ignore[index]
    runs = [step["run"] for step in steps if "run" in step]
    diff_step = next(run for run in runs if "templating diff" in run)
    post_step = next(run for run in runs if "gh pr comment" in run)
    command = diff_step.replace("${{ github.base_ref }}", "main")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-ec", command], cwd=clone, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    body_file = re.search(r"--body-file (\S+)", post_step)
    assert body_file, post_step
    body = (clone / body_file.group(1)).read_text(encoding="utf-8")
    assert body.startswith("### What the model sees: ")
    assert "**`greeting_agent`**: changed" in body
    assert "permissions" in workflow()
