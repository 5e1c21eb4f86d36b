"""The benches on real inputs: what they build and compare, never how fast (bench/ prints that).

`bench_lint_corpus --corpus` takes any folder of agent code: a file this Python cannot parse, or a
folder without a `.py` file, is left out and counted, never a crash. `bench_startup` compares each
command with a script doing the same work: the scripts must print what the commands print.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from conftest import require_adk

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCH))


def _module(name: str) -> ModuleType:
    __import__(name)
    return sys.modules[name]


# (relative path, text): a corpus as public ADK code comes, with what Python 3.11 cannot parse in it
CORPUS = {
    "good/app/__init__.py": "",
    "good/app/prompt.py": 'INSTRUCTION = """Answer {question} for {user:name}."""\n',
    "good/app/agent.py": (
        "from google.adk.agents import LlmAgent\n"
        "from app.prompt import INSTRUCTION\n"
        'root_agent = LlmAgent(name="a", instruction=INSTRUCTION, output_key="question")\n'
    ),
    "good/app/pep695.py": "type Pair = tuple[int, int]\n",  # Python 3.12
    "good/app/fstring.py": 'data = {"a": 1}\nmsg = f"{data["a"]}"\n',  # Python 3.12
    "good/app/nul.py": "x = 1\n\0\n",
    "good/app/broken.py": "def broken(:\n",
    "newer/pkg/agent.py": "match = 1\ntype Alias = list[int]\n",  # only newer syntax in it
    "docs_only/README.md": "# no Python here\n",
}
UNPARSABLE_ON_311 = {"good/app/pep695.py", "good/app/fstring.py"}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.mark.usefixtures("bench")
def test_bench_lint_corpus_leaves_out_what_python_cannot_parse_and_folders_without_python(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus_bench = _module("bench_lint_corpus")
    corpus = tmp_path / "corpus"
    _write(corpus, CORPUS)
    ones, many = corpus_bench.build(corpus, tmp_path / "out", 2)
    parsable = {
        name
        for name, text in CORPUS.items()
        if name.endswith(".py") and corpus_bench.parses(text.encode()) and name.startswith("good/")
    }
    assert {"good/app/nul.py", "good/app/broken.py"}.isdisjoint(parsable)
    if sys.version_info < (3, 12):
        assert UNPARSABLE_ON_311.isdisjoint(parsable)
    assert ones == [tmp_path / "out" / "1x" / "good"]
    assert sorted(str(p.relative_to(ones[0])) for p in ones[0].rglob("*.py")) == sorted(
        name.removeprefix("good/") for name in parsable
    )
    copies = sorted(p.name for p in many.iterdir() if p.is_dir())
    assert copies == ["good-c00", "good-c01"]  # nothing of "newer" or "docs_only"
    assert (many / "good-c01" / "app_c01" / "agent.py").read_text(encoding="utf-8").splitlines()[1] == (
        "from app_c01.prompt import INSTRUCTION"
    )
    for path in many.rglob("*.py"):  # what the reference parses, it can
        assert corpus_bench.parses(path.read_bytes()), path
    left_out = sum(name.endswith(".py") for name in CORPUS) - len(parsable)
    printed = capsys.readouterr().out
    assert "1 projects; left out: 2 folders without a .py file this Python parses" in printed
    assert f"{left_out} .py files that are not valid Python" in printed


@pytest.mark.usefixtures("bench")
def test_bench_lint_corpus_says_when_no_folder_holds_python(tmp_path: Path) -> None:
    corpus_bench = _module("bench_lint_corpus")
    _write(tmp_path / "corpus", {"docs/README.md": "# docs\n", "newer/x.py": "type T = int\n"})
    if sys.version_info >= (3, 12):
        pytest.skip("this Python parses the newer syntax")
    with pytest.raises(SystemExit, match=r"no folder of .* holds a \.py file that Python 3\.1[01] parses"):
        corpus_bench.build(tmp_path / "corpus", tmp_path / "out", 0)


@pytest.mark.usefixtures("bench")
def test_bench_lint_corpus_takes_a_single_project_as_its_corpus(tmp_path: Path) -> None:
    corpus_bench = _module("bench_lint_corpus")
    _write(tmp_path / "project", {"agent.py": 'INSTRUCTION = "Hi {name}"\n', "notes/README.md": "x\n"})
    projects, empty = corpus_bench.projects_of(tmp_path / "project")
    assert (projects, empty) == ([tmp_path / "project"], [])


@pytest.mark.usefixtures("bench")
@pytest.mark.parametrize(
    ("command", "script", "files"),
    [
        ("render", "RENDER_SCRIPT", ["examples/support_agent.txt", "examples/state.json"]),
        ("keys", "KEYS_SCRIPT", ["examples/support_agent.txt"]),
        ("lint", "LINT_SCRIPT", ["examples/support_agent.txt"]),
        ("lint", "LINT_SCRIPT", ["near_misses.txt"]),
    ],
    ids=["render", "keys", "lint-clean", "lint-findings"],
)
def test_bench_startup_references_do_the_commands_work(
    tmp_path: Path, command: str, script: str, files: list[str]
) -> None:
    """Each command's reference prints what the command prints (lint: its findings, before its summary)."""
    startup = _module("bench_startup")
    (tmp_path / "near_misses.txt").write_text("Hi < name >, your <usr:plan> plan.\n", encoding="utf-8")
    paths = [str(ROOT / name) if name.startswith("examples/") else name for name in files]
    argv = [paths[0], "--state", paths[1]] if command == "render" else paths
    ran = subprocess.run(
        [sys.executable, "-m", "templating", command, *argv], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    reference = subprocess.run(
        [sys.executable, "-c", getattr(startup, script), *paths], cwd=tmp_path, capture_output=True, text=True
    )
    assert reference.returncode == 0, reference.stderr
    if command == "lint":
        findings = reference.stdout.strip()
        assert ran.stdout.startswith(findings)
        assert ("T002" in findings) is (files == ["near_misses.txt"])
    else:
        assert ran.returncode == 0, ran.stderr
        assert reference.stdout == ran.stdout


# A corpus laid out as the shared one: adk-samples agent folders, adk-python samples (folders and a top-level
# file), adk-docs packages and single files.
APPS_CORPUS = {
    "adk-samples/python/agents/shop/shop/__init__.py": "from . import agent\n",
    "adk-samples/python/agents/shop/shop/agent.py": (
        "from google.adk.agents import LlmAgent\n"
        'root_agent = LlmAgent(name="shop", instruction="Cart: {cart}", output_key="reply")\n'
    ),
    "adk-samples/python/agents/shop/tests/test_shop.py": "def test(): pass\n",
    "adk-samples/python/agents/shop/eval/data/x.evalset.json": '{"eval_set_id": "x", "eval_cases": []}\n',
    "adk-samples/python/agents/broken/broken/agent.py": "def broken(:\n",
    "adk-python/contributing/samples/hello/agent.py": (
        'from google.adk import Agent\nroot_agent = Agent(name="h", instruction="Hi", output_key="cart")\n'
    ),
    "adk-python/contributing/samples/hello/__init__.py": "from . import agent\n",
    "adk-python/contributing/samples/runner.py": "print('hi')\n",
    "adk-docs/examples/python/snippets/team/__init__.py": "",
    "adk-docs/examples/python/snippets/team/step_1/__init__.py": "from . import agent\n",
    "adk-docs/examples/python/snippets/team/step_1/agent.py": (
        'from google.adk import Agent\nroot_agent = Agent(name="t", instruction="Hi {user:name}")\n'
    ),
    "adk-docs/examples/python/snippets/loop.py": (
        'from google.adk.agents import LlmAgent\na = LlmAgent(name="a", instruction="Go on: {topic}", output_key="x")\n'
    ),
    "adk-docs/examples/python/snippets/requirements.txt": "google-adk\n",
}


@pytest.mark.usefixtures("bench")
def test_bench_agent_apps_counts_apps_as_the_corpus_survey_does(tmp_path: Path) -> None:
    apps_bench = _module("bench_agent_apps")
    _write(tmp_path, APPS_CORPUS)
    apps = {app.name: app for app in apps_bench.apps_of(tmp_path)}
    assert sorted(apps) == [
        "adk-docs/examples/python/snippets/loop.py",
        "adk-docs/examples/python/snippets/team",
        "adk-python/contributing/samples/hello",
        "adk-python/contributing/samples/runner.py",
        "adk-samples/python/agents/broken",
        "adk-samples/python/agents/shop",
    ]
    shop = apps["adk-samples/python/agents/shop"]
    assert sorted(str(p.relative_to(shop.base)) for p in shop.files) == [
        "eval/data/x.evalset.json",
        "shop/__init__.py",
        "shop/agent.py",
        "tests/test_shop.py",
    ]
    team = apps["adk-docs/examples/python/snippets/team"]
    assert sorted(str(p.relative_to(team.base)) for p in team.files) == [
        "team/__init__.py",
        "team/step_1/__init__.py",
        "team/step_1/agent.py",
    ]
    assert [p.name for p in apps["adk-docs/examples/python/snippets/loop.py"].files] == ["loop.py"]


@pytest.mark.usefixtures("bench")
def test_bench_agent_apps_lints_each_app_alone_and_reports_per_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each app is linted without the others' writes; an app that is not valid Python is left out, not a crash."""
    apps_bench = _module("bench_agent_apps")
    corpus = tmp_path / "corpus"
    _write(corpus, APPS_CORPUS)
    assert apps_bench.main(["--corpus", str(corpus), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    runs = {run["app"]: run for run in report["apps"]}
    # nothing in the shop's app writes cart (the hello sample's output_key does, in another app)
    assert runs["adk-samples/python/agents/shop"]["findings"] == {"T014": 1}
    assert runs["adk-samples/python/agents/shop"]["details"][0]["path"] == "shop/agent.py"
    assert runs["adk-docs/examples/python/snippets/loop.py"]["findings"] == {"T014": 1}
    assert runs["adk-docs/examples/python/snippets/team"]["findings"] == {"T014": 1}
    broken = runs["adk-samples/python/agents/broken"]
    assert (broken["files"], broken["left_out"], broken["findings"], broken["crash"]) == (0, 1, {}, None)
    rules = report["total"]["rules"]
    assert rules == {"T014": {"name": "key-never-written", "severity": "warning", "findings": 3, "apps": 3}}
    assert report["total"]["apps"] == 6
    assert report["total"]["crashes"] == []
    assert apps_bench.main(["--corpus", str(corpus), "--app", "shop"]) == 0
    text = capsys.readouterr().out
    assert "adk-samples/shop" in text
    assert "T014 key-never-written" in text
    assert "1 apps (1 with findings)" in text


@pytest.mark.usefixtures("bench")
def test_bench_agent_apps_reports_a_crash_and_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    apps_bench = _module("bench_agent_apps")
    corpus = tmp_path / "corpus"
    _write(corpus, APPS_CORPUS)
    real = apps_bench.lint_project

    def crash_on_loop(paths: list[str], **options: object) -> object:
        if any(Path(p, "loop.py").exists() for p in paths):
            raise RecursionError("maximum recursion depth exceeded")
        return real(paths, **options)

    monkeypatch.setattr(apps_bench, "lint_project", crash_on_loop)
    assert apps_bench.main(["--corpus", str(corpus)]) == 1
    text = capsys.readouterr().out
    assert "CRASH RecursionError: maximum recursion depth exceeded" in text
    assert "the linter crashed on 1 app(s): adk-docs/examples/python/snippets/loop.py" in text
    assert "adk-samples/shop" in text  # the apps after it were linted


@pytest.mark.slow  # google-adk's import and a git repository
@pytest.mark.usefixtures("bench")
def test_bench_preview_app_has_ten_agents_and_its_last_commit_changes_one(tmp_path: Path) -> None:
    """bench_preview's generated app is what it says: ten LlmAgents google-adk can preview, exactly (no provider, no
    callback), and `templating diff HEAD~1` sees the critic's instruction changed and nothing else."""
    require_adk()
    from templating.preview import build_preview

    app = _module("bench_preview").write_app(tmp_path / "repo")
    preview = build_preview(str(app))
    llm = [a for a in preview.agents if a.kind == "LlmAgent"]
    assert len(llm) == 10, [a.agent for a in preview.agents]
    assert all(a.exact and a.error is None for a in llm), [(a.agent, a.notes) for a in llm]
    done = subprocess.run(
        [sys.executable, "-m", "templating", "diff", "HEAD~1", "shop", "--format", "json"],
        cwd=tmp_path / "repo",
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (shop,) = json.loads(done.stdout)["apps"]
    assert [(a["agent"], a["status"]) for a in shop["agents"]] == [("critic", "changed")]
    assert "+Review the draft below. Reply APPROVED (in capitals)" in shop["agents"][0]["diff"]
