"""The lint engine: a project's files linted with the whole project's context, from Python."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import shared_corpora

import templating
from templating.inputs import InputError
from templating.linter.config import LintConfigError
from templating.linter.engine import Project
from templating.linter.run import lint_project

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "adk_project"
FILES = sorted(p.relative_to(FIXTURE).as_posix() for p in FIXTURE.rglob("*.py"))


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    shutil.copytree(FIXTURE, root)
    # seed mistakes so the comparison has findings to compare
    booking = root / "travel_concierge/sub_agents/booking/prompt.py"
    booking.write_text(booking.read_text(encoding="utf-8").replace("{plan}", "{plans}"), encoding="utf-8")
    support = root / "customer_service/prompts.py"
    support.write_text(support.read_text(encoding="utf-8").replace("<ticket_id>", "< ticket_id >"), encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def rows(result: templating.LintResult, path: str) -> list[tuple[str, int, int, str]]:
    return [(d.code, d.span.start, d.span.end, d.message) for d in result.diagnostics if d.path == path and d.span]


def test_a_file_named_alone_gets_the_findings_of_the_whole_tree_run(tree: Path) -> None:
    whole = lint_project(["."], root=tree)
    assert {d.code for d in whole.diagnostics} == {"T014", "T002", "T024", "T027"}
    for path in FILES:
        alone = lint_project([path], root=tree)
        assert rows(alone, path) == rows(whole, path), path
        assert {d.path for d in alone.diagnostics} <= {path}


def test_the_result_lists_templates_with_their_keys(tree: Path) -> None:
    result = lint_project(["travel_concierge/sub_agents/booking/prompt.py"], root=tree)
    assert result.files == ["travel_concierge/sub_agents/booking/prompt.py"]
    (booking,) = [t for t in result.templates if t.name == "BOOKING_AGENT_INSTR"]
    assert booking.dialect == "adk"
    assert "plans" in booking.keys
    assert "reservations" in booking.optional_keys
    (finding,) = [d for d in result.diagnostics if d.code == "T014"]  # and T027: keys agents reached by transfer write
    assert (finding.code, finding.path) == ("T014", "travel_concierge/sub_agents/booking/prompt.py")


def test_no_false_key_never_written_for_a_prompt_module_named_alone(tree: Path) -> None:
    planning = "travel_concierge/sub_agents/planning/prompt.py"
    result = lint_project([planning], root=tree)
    assert result.diagnostics == []
    assert len([t for t in result.templates if t.path == planning]) >= 2


def test_overrides_and_update_give_the_findings_of_a_fresh_run(tree: Path) -> None:
    project = Project(tree)
    project.lint(["."])
    for path in FILES:
        text = (tree / path).read_text(encoding="utf-8")
        assert rows(project.update(path, text), path) == rows(lint_project([path], root=tree), path), path
    path = "travel_concierge/prompt.py"
    edited = (tree / path).read_text(encoding="utf-8").replace("{_time}", "{_tme}")
    fresh = lint_project([path], root=tree, overrides={path: edited})
    assert [d.code for d in fresh.diagnostics] == ["T014"]
    assert rows(project.update(path, edited), path) == rows(fresh, path)


def test_the_scan_is_read_through_a_read_only_property(tree: Path) -> None:
    project = Project(tree)
    assert project.scan is None  # nothing linted yet
    project.lint(["."])
    first = project.scan
    assert first is not None
    path = "travel_concierge/prompt.py"
    assert first.sources[path] == (tree / path).read_text(encoding="utf-8")
    edited = first.sources[path].replace("{_time}", "{_tme}")
    project.update(path, edited)
    then = project.scan
    assert then is not None
    assert then is not first  # an edit replaces the scan, with the edit's text
    assert then.sources[path] == edited
    with pytest.raises(AttributeError):
        project.scan = first  # type: ignore[misc]


@pytest.mark.parametrize("jobs", ["1", "2"], ids=["in-process", "pool"])
def test_a_whole_run_keeps_no_syntax_tree_and_an_edit_keeps_those_it_parsed(
    tree: Path, monkeypatch: pytest.MonkeyPatch, jobs: str
) -> None:
    # The trees kept are for the next edit's scan: a whole (cold) run parses each file once and keeps none.
    from templating.linter import cold
    from templating.pysource import reading

    monkeypatch.setattr(reading, "_kept", type(reading._kept)())
    monkeypatch.setattr(reading, "_kept_size", 0)
    monkeypatch.setenv("TEMPLATING_LINT_JOBS", jobs)
    monkeypatch.setattr(cold, "POOL_THRESHOLD", 0)  # with two jobs, the pool however small the project
    monkeypatch.setattr(cold, "_CHUNK", 1)
    project = Project(tree)
    assert project.lint(["."]).python, "Python files were scanned"
    assert not reading._kept
    path = "travel_concierge/sub_agents/planning/agent.py"
    edited = (tree / path).read_text(encoding="utf-8").replace('output_key="plan"', 'output_key="plans"')
    project.update(path, edited)
    scanned = project.scan
    assert scanned is not None
    kept = {name: text for name, text in reading._kept}
    assert kept[path] == edited
    assert set(kept) <= set(scanned.sources)
    assert all(scanned.sources[name] == text for name, text in kept.items())


def test_select_ignore_and_schema_options(tree: Path) -> None:
    assert lint_project(["."], root=tree, ignore=["T014"]).diagnostics[0].code == "T002"
    assert {d.code for d in lint_project(["."], root=tree, select="T014").diagnostics} == {"T014"}
    with_schema = lint_project(["customer_service/agent.py"], root=tree, schema=["user:name?", "ticket_id", "tickets"])
    assert with_schema.diagnostics == []
    # the Jinja2 instruction's state reads are checked against the schema too, at the variable
    (jinja_read,) = lint_project(
        ["customer_service/agent.py"], root=tree, schema=["user:name?", "ticket_id"]
    ).diagnostics
    assert (jinja_read.code, jinja_read.origin, jinja_read.span and jinja_read.span.line) == ("T001", "jinja(...)", 15)


def test_the_root_is_found_from_the_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.templating]\nexclude = ['drafts']\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.prompt").write_text("Hi < name >", encoding="utf-8")
    monkeypatch.chdir(tmp_path / "sub")
    result = lint_project(["a.prompt"])
    assert result.root == tmp_path.resolve()
    assert [d.code for d in result.diagnostics] == ["T002"]


def test_gitignore_and_exclude_leave_files_out_but_a_named_file_is_linted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("build/\n*.tmp.prompt\n!keep.tmp.prompt\n/top.prompt\n", encoding="utf-8")
    for name in ("build/x.prompt", "a.tmp.prompt", "keep.tmp.prompt", "top.prompt", "sub/top.prompt", "ok.prompt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("Hi <name>", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert lint_project(["."]).files == ["keep.tmp.prompt", "ok.prompt", "sub/top.prompt"]
    assert lint_project(["build/x.prompt"]).files == ["build/x.prompt"]


def test_an_explicit_folder_is_linted_whatever_the_include(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.templating]\ninclude = ["examples/*.txt"]\n', encoding="utf-8")
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "a.prompt").write_text("Hi < name >", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert [d.code for d in lint_project(["agents"]).diagnostics] == ["T002"]


def test_lint_project_is_public() -> None:
    assert "lint_project" in templating.__all__
    assert templating.lint_project is lint_project


KEYS_CASES = [
    ("module", "travel_concierge/sub_agents/planning/prompt.py", "PLANNING_AGENT_INSTR (", "origin?"),
    ("by-name", "travel_concierge/sub_agents/planning/prompt.py:PLANNING_AGENT_INSTR", "PLANNING_AGENT_INSTR", None),
]


@pytest.mark.parametrize(("target", "shown", "optional"), [c[1:] for c in KEYS_CASES], ids=[c[0] for c in KEYS_CASES])
def test_keys_of_a_prompt_module_used_elsewhere(tree: Path, target: str, shown: str, optional: str | None) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(templating.__file__).parent.parent)}
    done = subprocess.run(
        [sys.executable, "-m", "templating", "keys", target], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert shown in done.stdout
    done = subprocess.run(
        [sys.executable, "-m", "templating", "keys", target, "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    found = json.loads(done.stdout)
    assert found
    assert all(row["dialect"] == "adk" for row in found)


# --- hostile trees: each built in tmp_path, linted by the CLI in a subprocess with a timeout


def _loop(root: Path) -> None:
    (root / "a.prompt").write_text("Hi <name>", encoding="utf-8")
    os.symlink(root / "loop", root / "loop")
    (root / "d").mkdir()
    os.symlink(root, root / "d" / "up")


def _fifo(root: Path) -> None:
    (root / "a.prompt").write_text("Hi <name>", encoding="utf-8")
    os.mkfifo(root / "b.prompt")


def _dev_zero(root: Path) -> None:
    (root / "a.prompt").write_text("Hi <name>", encoding="utf-8")
    os.symlink("/dev/zero", root / "z.prompt")


def _outside(root: Path) -> None:
    (root / "a.prompt").write_text("Hi <name>", encoding="utf-8")
    secret = root.parent / "secret.prompt"
    secret.write_text("TOP-SECRET <x", encoding="utf-8")
    os.symlink(secret, root / "s.prompt")


def _large(root: Path) -> None:
    (root / "pyproject.toml").write_text("[tool.templating]\nmax-file-size = 100\n", encoding="utf-8")
    (root / "a.prompt").write_text("Hi <name>", encoding="utf-8")
    (root / "big.prompt").write_text("x" * 1000, encoding="utf-8")


def _newline_name(root: Path) -> None:
    (root / "x\n::error file=evil::pwned.prompt").write_text("Hi < name >\x1b[31m", encoding="utf-8")


def _deep_schema(root: Path) -> None:
    (root / "a.prompt").write_text("Hi <name>", encoding="utf-8")
    # 50,000 levels: far too deep to read, and within the 2,000,000 bytes a file may have
    (root / "s.json").write_text('{"properties": {"a": ' * 50_000 + "{}" + "}}" * 50_000, encoding="utf-8")


def _only_fifo(root: Path) -> None:
    os.mkfifo(root / "b.prompt")


def _python_link_out(root: Path) -> None:
    (root / "a.prompt").write_text("Hi <name>", encoding="utf-8")
    secret = root.parent / "outside.py"
    secret.write_text('SECRET_PROMPT = "TOP-SECRET {key}"\n', encoding="utf-8")  # T014 would quote it
    os.symlink(secret, root / "evil.py")


def _dangling(root: Path) -> None:
    (root / "a.prompt").write_text("Hi < name >", encoding="utf-8")
    os.symlink(root / "gone.prompt", root / "dangling.prompt")


def _looping_prompt(root: Path) -> None:
    (root / "a.prompt").write_text("Hi <name>", encoding="utf-8")
    os.symlink(root / "l.prompt", root / "l.prompt")


def _not_utf8(root: Path) -> None:
    (root / "a.prompt").write_text("Hi <name>", encoding="utf-8")
    (root / "bad.prompt").write_bytes(b"Hi \xff\xfe <x>")


def _broken_beside_an_error(root: Path) -> None:
    (root / "bad.prompt").write_bytes(b"\xff")
    os.symlink(root / "gone.py", root / "gone.py")
    (root / "broken.py").write_text("def f(:\n", encoding="utf-8")  # E002, an error: exit code 1


def _glob_bomb(root: Path) -> None:
    # a .gitignore line that makes a regex-based matcher backtrack for ages on a long name
    (root / ".gitignore").write_text("*a*a*a*a*a*a*a*a*a*a*b\n", encoding="utf-8")
    (root / ("a" * 200 + ".prompt")).write_text("Hi < name >", encoding="utf-8")


HOSTILE = [
    # (id, build, extra args, exit code, text that must appear in stdout+stderr, text that must not)
    ("symlink-loop", _loop, [], 0, "1 template checked", "Traceback"),
    ("fifo", _fifo, [], 0, "E003", "Traceback"),
    ("dev-zero", _dev_zero, [], 0, "/dev/zero): not read", "Traceback"),
    ("link-out-of-root", _outside, [], 0, "out of the project root", "TOP-SECRET"),
    ("too-large", _large, [], 0, "max-file-size", "Traceback"),
    ("newline-in-name", _newline_name, ["--format", "github"], 0, "x%0A%3A%3Aerror file=evil%3A%3Apwned", "\n::error"),
    ("escape-in-text", _newline_name, [], 0, "\\x1b[31m", "\x1b"),
    ("deep-schema", _deep_schema, ["--schema", "s.json"], 2, "schema", "Traceback"),
    ("nothing-readable", _only_fifo, ["b.prompt"], 2, "nothing could be linted", "Traceback"),
    ("python-link-out-of-root", _python_link_out, [], 0, "evil.py: E003 a symbolic link out of", "TOP-SECRET"),
    ("dangling-link", _dangling, [], 0, "dangling.prompt: E003", "Traceback"),
    ("looping-link", _looping_prompt, [], 0, "l.prompt: E003", "Traceback"),
    ("not-utf8", _not_utf8, [], 0, "bad.prompt: E003 not valid UTF-8", "Traceback"),
    ("broken-beside-an-error", _broken_beside_an_error, [], 1, "broken.py:1:7: E002", "Traceback"),
    ("glob-bomb", _glob_bomb, [], 0, "T002", "Traceback"),
]


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and symlinks as on POSIX")
@pytest.mark.parametrize(
    ("build", "extra", "code", "present", "absent"), [c[1:] for c in HOSTILE], ids=[c[0] for c in HOSTILE]
)
def test_hostile_trees(tmp_path: Path, build: Any, extra: list[str], code: int, present: str, absent: str) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / ".git").mkdir()
    build(root)
    env = {**os.environ, "PYTHONPATH": str(Path(templating.__file__).parent.parent)}
    paths = [] if extra[:1] == ["b.prompt"] else ["."]
    done = subprocess.run(
        [sys.executable, "-m", "templating", "lint", *paths, *extra],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=60,
    )
    output = done.stdout + done.stderr
    assert done.returncode == code, output
    assert present in output
    assert absent not in output


def _lint_cli(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    base = {**os.environ, "PYTHONPATH": str(Path(templating.__file__).parent.parent)}
    return subprocess.run(
        [sys.executable, "-m", "templating", "lint", *args],
        capture_output=True,
        env={**base, **(env or {})},
        cwd=root,
        timeout=60,
    )


FORMATS = ["text", "json", "sarif", "github"]


@pytest.mark.skipif(not os.path.exists("/proc/self/environ"), reason="a Linux /proc")
@pytest.mark.parametrize("output", FORMATS)
def test_a_link_to_the_environment_is_never_read(tmp_path: Path, output: str) -> None:
    # Links found by walking, a .prompt and a .py, to the process's environment (CI secrets): each is
    # one E003 finding naming the link; the environment is in no output and not in the HTML report.
    root = tmp_path / "project"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "a.prompt").write_text("Hi < name >", encoding="utf-8")
    os.symlink("/proc/self/environ", root / "env.prompt")
    os.symlink("/proc/self/environ", root / "env_prompt.py")
    secret = "templating-test-secret-4f1c9"
    done = _lint_cli(root, ".", "--format", output, "--html", "report.html", env={"CI_TOKEN": secret})
    assert done.returncode == 0, done.stderr
    everything = done.stdout + done.stderr + (root / "report.html").read_bytes()
    assert secret.encode() not in everything
    assert b"CI_TOKEN" not in everything
    text = done.stdout.decode("utf-8")
    if output in ("json", "sarif"):
        data = json.loads(text)
        results = data if output == "json" else data["runs"][0]["results"]
        assert len([r for r in results if (r.get("code") or r.get("ruleId")) == "E003"]) == 2
    else:
        assert "env.prompt" in text
        assert "env_prompt.py" in text


@pytest.mark.skipif(sys.platform != "linux", reason="file names that are not UTF-8, as on Linux")
@pytest.mark.parametrize("output", FORMATS)
def test_hostile_names_are_escaped_in_every_format(tmp_path: Path, output: str) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / ".git").mkdir()
    raw = os.fsencode(root) + b"/n\xffm\x1b[31mx.prompt"
    with open(raw, "wb") as handle:
        handle.write(b"Hi < name >")
    os.symlink(b"/nowhere/\xfe\x1b[2J", os.fsencode(root) + b"/d\x1b]0;t\x07.prompt")  # dangling: E003
    done = _lint_cli(root, ".", "--format", output, "--html", "report.html")
    assert done.returncode == 0, done.stderr
    assert b"\x1b" not in done.stdout + done.stderr
    assert b"\x1b" not in (root / "report.html").read_bytes()
    text = done.stdout.decode("utf-8")  # valid UTF-8 whatever the names
    if output == "json":
        paths = {row["path"] for row in json.loads(text)}
        assert "n\\xffm\\x1b[31mx.prompt" in paths
    elif output == "sarif":
        results = json.loads(text)["runs"][0]["results"]
        uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results]
        assert "n%FFm%1B%5B31mx.prompt" in uris
        assert all(_uri_reference(uri) for uri in uris), uris
    else:
        assert "n\\xffm\\x1b[31mx.prompt" in text
        assert "T002" in text
        assert "E003" in text


@pytest.mark.skipif(sys.platform != "linux", reason="file names that are not UTF-8, as on Linux")
def test_hostile_names_are_escaped_in_the_diff(tmp_path: Path) -> None:
    """`--diff`'s `---`/`+++` headers name files as every output does: no ESC reaches the terminal, no
    newline in a name forges a header line of its own, and the output is UTF-8 whatever the names."""
    root = tmp_path / "project"
    root.mkdir()
    (root / ".git").mkdir()
    for raw in (b"n\xffm\x1b[31mx.prompt", b"x\n+++ forged.prompt"):
        with open(os.fsencode(root) + b"/" + raw, "wb") as handle:
            handle.write(b"Thanks <guest??>.\n")  # T006: a safe fix
    (root / ".hidden").mkdir()  # a link found by walking, named on stderr (its target is not fixed)
    (root / ".hidden" / "t.txt").write_text("Thanks <guest??>.\n", encoding="utf-8")
    os.symlink(root / ".hidden" / "t.txt", os.fsencode(root) + b"/l\x1b[2J.prompt")
    done = _lint_cli(root, "--no-cache", "--diff", ".")
    assert done.returncode == 1, done.stderr
    assert b"\x1b" not in done.stdout + done.stderr
    assert "found through the symbolic link l\\x1b[2J.prompt" in done.stderr.decode("utf-8")
    headers = [line for line in done.stdout.decode("utf-8").splitlines() if line.startswith(("---", "+++"))]
    assert headers == [
        "--- a/n\\xffm\\x1b[31mx.prompt",
        "+++ b/n\\xffm\\x1b[31mx.prompt",
        "--- a/x\\n+++ forged.prompt",
        "+++ b/x\\n+++ forged.prompt",
    ]


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks as on POSIX")
def test_files_named_by_pre_commit_stay_inside_the_root(tmp_path: Path) -> None:
    # With --force-exclude (pre-commit's hook) the names come from a tool, not the user: a link out of
    # the root is an E003 finding, not read; the same file named by the user is read.
    root = tmp_path / "project"
    root.mkdir()
    (root / ".git").mkdir()
    _python_link_out(root)
    done = _lint_cli(root, "--force-exclude", "evil.py", "a.prompt")
    assert done.returncode == 0, done.stderr
    assert b"evil.py: E003 a symbolic link out of the project root" in done.stdout
    assert b"TOP-SECRET" not in done.stdout + done.stderr
    assert b"TOP-SECRET" in _lint_cli(root, "evil.py").stdout


def test_unreadable_walked_files_are_one_finding_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Permission denied (simulated: the tests may run as root, who reads everything) on a template and a
    # Python file found by walking: one E003 each, the rest linted. Named, the same file stops the run.
    (tmp_path / ".git").mkdir()
    (tmp_path / "ok.prompt").write_text("Hi < name >", encoding="utf-8")
    (tmp_path / "locked.prompt").write_text("Hi", encoding="utf-8")
    (tmp_path / "locked_prompt.py").write_text("X_PROMPT = 'Hi {x}'\n", encoding="utf-8")
    real_open = os.open

    def refusing(path: Any, *args: Any, **kwargs: Any) -> int:
        if os.fsdecode(path).endswith(("locked.prompt", "locked_prompt.py")):
            raise PermissionError(13, "Permission denied", os.fsdecode(path))
        return int(real_open(path, *args, **kwargs))

    (tmp_path / "locked_dir").mkdir()
    (tmp_path / "locked_dir" / "x.prompt").write_text("Hi", encoding="utf-8")
    real_scandir = os.scandir

    def refusing_folder(path: Any) -> Any:
        if os.fspath(path).endswith("locked_dir"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "open", refusing)
    monkeypatch.setattr(os, "scandir", refusing_folder)
    monkeypatch.chdir(tmp_path)
    result = lint_project(["."])
    found = sorted((d.path, d.code, d.message) for d in result.diagnostics)
    assert found == [
        ("locked.prompt", "E003", "cannot be read (Permission denied): not read"),
        ("locked_dir", "E003", "cannot read the folder: Permission denied"),
        ("locked_prompt.py", "E003", "cannot be read (Permission denied): not read"),
        ("ok.prompt", "T002", found[3][2]),
    ]
    with pytest.raises(InputError, match="permission denied"):
        lint_project(["locked.prompt"])


def test_an_instruction_kept_in_a_text_file_is_reported_with_its_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # writer.txt is reported when a Python file of its folder (or a folder above) that names it is linted.
    (tmp_path / ".git").mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "agent.py").write_text(
        "import os\nfrom google.adk.agents import LlmAgent\n\n\ndef load(name):\n"
        "    with open(os.path.join(os.path.dirname(__file__), name)) as f:\n        return f.read()\n\n\n"
        'root_agent = LlmAgent(name="a", instruction=load("writer.txt"))\n',
        encoding="utf-8",
    )
    (tmp_path / "sub" / "writer.txt").write_text("Write about {topic}.\n", encoding="utf-8")
    (tmp_path / "other.py").write_text("X = 1\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for paths in (["sub/agent.py"], ["."]):
        assert [(d.path, d.code) for d in lint_project(paths).diagnostics] == [("sub/writer.txt", "T014")]
    assert lint_project(["other.py"]).diagnostics == []


@pytest.mark.parametrize("whole", [True, False], ids=["from-the-root-walk", "folder-walked-alone"])
def test_an_excluded_folder_named_yields_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, whole: bool) -> None:
    # Whether the folder's files come from the root's walk (kept) or from a walk of the folder alone
    # (as without a project marker), an excluded folder named on the command line gives no file.
    (tmp_path / "drafts" / "deep").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text('[tool.templating]\nexclude = ["drafts"]\n', encoding="utf-8")
    (tmp_path / "drafts" / "deep" / "a.prompt").write_text("Hi", encoding="utf-8")
    (tmp_path / "b.prompt").write_text("Hi", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for named in (["drafts"], ["drafts/deep"]):
        project = Project(paths=named)
        project.marked = whole
        assert project.files(named) == ([], [])
    assert Project(paths=["."]).files(["."])[0] == ["b.prompt"]


def test_a_huge_pyproject_is_never_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A 1 GB (sparse) pyproject.toml: found during root discovery, refused by its size, never opened.
    (tmp_path / "pyproject.toml").touch()
    with open(tmp_path / "pyproject.toml", "r+b") as handle:
        handle.truncate(2**30)
    (tmp_path / "a.prompt").write_text("Hi <name>", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    opened: list[str] = []

    def spy(real: Any) -> Any:
        def opening(path: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(path, str | bytes | os.PathLike):
                opened.append(os.fsdecode(path))
            return real(path, *args, **kwargs)

        return opening

    monkeypatch.setattr(os, "open", spy(os.open))
    monkeypatch.setattr(io, "open", spy(io.open))
    with pytest.raises(LintConfigError, match=r"pyproject.toml: 1073741824 bytes, more than the limit"):
        lint_project(["a.prompt"])
    assert not any(name.endswith("pyproject.toml") for name in opened)


def test_the_filesystem_root_is_not_walked(tmp_path: Path) -> None:
    done = _lint_cli(tmp_path, "/")
    assert done.returncode == 2
    assert b"refusing to walk /: it is the filesystem's root" in done.stderr
    assert b"Traceback" not in done.stderr


def test_a_home_folder_is_not_walked_but_its_files_are_linted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / "far" / "deep").mkdir(parents=True)
    (home / ".git").mkdir()  # a dotfiles repository: a marker, but not a project to walk whole
    (home / "pyproject.toml").write_text('[tool.templating]\ninclude = ["**/*.prompt"]\n', encoding="utf-8")
    (home / "a.prompt").write_text("Hi < name >", encoding="utf-8")
    (home / "far" / "deep" / "b.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(home)
    for paths in ([], ["."]):
        with pytest.raises(LintConfigError, match=r"refusing to walk .*: it is your home folder"):
            lint_project(paths)
    project = Project(paths=["a.prompt"])
    assert not project.marked  # the context of a file is its own folder's Python files, not a walk of home
    assert [d.code for d in project.lint(["a.prompt"]).diagnostics] == ["T002"]


def test_a_deep_schema_from_python_is_a_clear_error() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(100_000):
        node["properties"] = {"a": {}}
        node = node["properties"]["a"]
    found = templating.lint("Hi <a.a.b>", schema=deep)
    assert [d.code for d in found] == ["T001"]


def test_sarif_output_is_structurally_sarif_2_1_0(tree: Path) -> None:
    from templating.linter.outputs import format_sarif
    from templating.linter.registry import RULES

    result = lint_project(["."], root=tree)
    log = json.loads(format_sarif(result.diagnostics, result.sources))
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert {rule["id"] for rule in rules} >= set(RULES)
    assert all(rule["helpUri"].startswith("https://") for rule in rules)
    assert len(run["results"]) == len(result.diagnostics)
    for item, diag in zip(run["results"], result.diagnostics, strict=True):
        assert rules[item["ruleIndex"]]["id"] == item["ruleId"] == diag.code
        assert item["level"] in {"error", "warning", "note"}
        region = item["locations"][0]["physicalLocation"]["region"]
        assert diag.span is not None
        assert (region["startLine"], region["startColumn"]) == (diag.span.line, diag.span.column)
        assert region["endLine"] >= region["startLine"]


# --- ADK 2.x agents (state_schema=, Event writes, instructions in files), through the engine and the CLI

ADK2 = Path(__file__).resolve().parent / "fixtures" / "adk2_project"
TUTOR = Path(__file__).resolve().parent / "fixtures" / "tutor_project"
ADK2_FILES = sorted(p.relative_to(ADK2).as_posix() for p in ADK2.rglob("*.py"))


@pytest.fixture
def adk2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "adk2"
    shutil.copytree(ADK2, root)
    (root / ".git").mkdir()
    monkeypatch.chdir(root)
    return root


def found(result: templating.LintResult) -> list[tuple[str, str, int, str]]:
    """(code, path, line, the text flagged) of each finding."""
    return [
        (d.code, d.path or "", d.span.line, result.sources[d.path or ""][d.span.start : d.span.end])
        for d in result.diagnostics
        if d.span
    ]


ADK2_FINDINGS = [
    ("T014", "story_studio/agent.py", 50, "{{current_document}}"),
    ("T019", "story_studio/scriptwriter_instruction.txt", 3, "{visual-style}"),
    ("T001", "trip_desk/agent.py", 15, "{destinaton}"),  # misspelt: T001 with a did-you-mean, no T014
    ("T014", "trip_desk/agent.py", 15, "{budget}"),  # a default in the schema, nothing writes it: KeyError
    ("T014", "trip_desk/agent.py", 16, "{user:lang}"),  # prefixed: not checked against the schema
    ("T012", "trip_desk/agent.py", 16, "{temp:draft?}"),  # and no T010 on {itinerary?}: ADK fills no field
    ("T014", "trip_desk/agent.py", 25, "<legs.0.origin>"),
    ("T014", "trip_desk/agent.py", 25, "<destination>"),  # required in the schema, nothing writes it
    ("T001", "trip_desk/agent.py", 25, "<traveller.nmae>"),
    ("T014", "trip_desk/agent.py", 32, "{sources}"),  # extra="allow": not T001, but nothing writes it
    ("T014", "weekend_planner/agent.py", 33, "{traveller_count}"),
    ("T020", "weekend_planner/agent.py", 39, "${weekend_budget.budget}"),  # literal under google-adk
    ("T020", "weekend_planner/agent.py", 39, "{plan_kind.label?}"),
]


def test_adk2_agents_are_checked_against_their_state_schema(adk2: Path) -> None:
    result = lint_project(["."])
    assert found(result) == ADK2_FINDINGS
    (typo,) = [d for d in result.diagnostics if d.code == "T001" and d.span and d.span.line == 15]
    assert "did you mean 'destination'?" in typo.message
    assert 'TripState, the state_schema of Agent(name="trip_planner")' in typo.message


@pytest.mark.parametrize("path", ADK2_FILES, ids=ADK2_FILES)
def test_an_adk2_file_named_alone_gets_the_findings_of_the_whole_tree_run(adk2: Path, path: str) -> None:
    whole = lint_project(["."])
    alone = lint_project([path])
    here = [row for row in found(whole) if row[1] == path or Path(row[1]).parent == Path(path).parent]
    if not path.endswith("agent.py"):
        here = [row for row in here if row[1] == path]
    assert found(alone) == here


def test_the_cli_gives_the_engine_s_findings(adk2: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(templating.__file__).parent.parent)}
    done = subprocess.run(
        [sys.executable, "-m", "templating", "lint", ".", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    # no error: the T001s are advice, google-adk enforces no state_schema on agents that no app runs
    assert done.returncode == 0, done.stderr
    rows = [(d["code"], d["path"], d["line"], d["severity"]) for d in json.loads(done.stdout)]
    assert [row[:3] for row in rows] == [(code, path, line) for code, path, line, _ in ADK2_FINDINGS]
    assert {severity for code, _, _, severity in rows if code == "T001"} == {"warning"}


UNREAD_SCHEMAS = [
    ("a-call", "state_schema=make_state()", "make_state()", "is not a class name"),
    ("a-library-class", "state_schema=Library", "Library", "imported from a module outside"),
    ("not-a-model", "state_schema=Plain", "Plain", "not a pydantic model"),
]


@pytest.mark.parametrize(
    ("argument", "model", "reason"), [c[1:] for c in UNREAD_SCHEMAS], ids=[c[0] for c in UNREAD_SCHEMAS]
)
def test_an_unread_state_schema_is_an_info_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argument: str, model: str, reason: str
) -> None:
    (tmp_path / ".git").mkdir()
    code = (
        "from google.adk import Agent\nfrom lib import Library\n\nclass Plain:\n    x: int\n\n"
        f"a = Agent(name='a', output_key='topic', {argument}, instruction='Write about {{topic}}.')\n"
    )
    (tmp_path / "agent.py").write_text(code, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = lint_project(["agent.py"])
    (finding,) = result.diagnostics
    assert (finding.code, finding.severity, finding.path) == ("T021", "info", "agent.py")
    assert f'the state_schema {model} of Agent(name="a") is not read' in finding.message
    assert reason in finding.message
    assert finding.span is not None
    assert code[finding.span.start : finding.span.end] == argument.split("=")[1]
    assert lint_project(["agent.py"], ignore="T021").diagnostics == []


SUFFIXES = [
    ("instr", "PLAN_INSTR", ["T019"]),
    ("template", "GREETING_TEMPLATE", ["T019"]),
    ("other", "GREETING_TEXT", []),
]


@pytest.mark.parametrize(("name", "codes"), [c[1:] for c in SUFFIXES], ids=[c[0] for c in SUFFIXES])
def test_constants_named_like_instructions_are_linted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, codes: list[str]
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "prompts.py").write_text(f'{name} = "Hello {{user-name}}, see {{plan?}}."\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert [d.code for d in lint_project(["prompts.py"]).diagnostics] == codes


# --- Project.update: what a fresh run with the override gives, for every file whose findings change

EDITS = [
    # (id, fixture, file, text replaced, by)
    ("output-key-removed", "adk", "travel_concierge/sub_agents/planning/agent.py", 'output_key="plan",', ""),
    ("state-write-removed", "adk", "travel_concierge/tools/memory.py", 'state["_time"]', 'state["_when"]'),
    ("key-misspelt-in-a-prompt", "adk", "travel_concierge/prompt.py", "{_time}", "{_tme}"),
    ("prompt-key-renamed", "adk", "travel_concierge/sub_agents/booking/prompt.py", "{plans}", "{plan}"),
    ("syntax-error", "adk", "travel_concierge/tools/memory.py", "def ", "def def "),
    ("event-write-removed", "adk2", "weekend_planner/agent.py", '"plan_kind": kind', '"kind": kind'),
    ("state-schema-dropped", "adk2", "trip_desk/agent.py", "state_schema=TripState,", ""),
    ("schema-field-renamed", "adk2", "trip_desk/state.py", "destination: str", "destinaton: str"),
    ("instruction-file-reader-changed", "adk2", "story_studio/agent.py", '"scriptwriter_instruction.txt"', '"x.txt"'),
    # two instructions that start at the same character (BASE + QUIZ, BASE + MEMORY + QUIZ): both kept, each its own
    ("same-start-writer-removed", "tutor", "language_tutor/agent.py", 'output_key="topic",', ""),
    ("same-start-one-made-the-other", "tutor", "language_tutor/agent.py", "BASE + prompts.MEMORY +", "BASE +"),
    (
        "same-start-one-made-longer",
        "tutor",
        "language_tutor/agent.py",
        "BASE + prompts.QUIZ,",
        "BASE + prompts.MEMORY,",
    ),
    ("same-start-shared-piece-edited", "tutor", "language_tutor/prompts.py", "{covered}", "{covered?}"),
]


def templates(result: templating.LintResult, path: str) -> list[tuple[str | None, int, int, tuple[str, ...]]]:
    """The instructions checked in `path`: name, span, keys (two starting at one character are two)."""
    return sorted(
        (t.name, t.span.start, t.span.end, t.keys + t.optional_keys) for t in result.templates if t.path == path
    )


@pytest.mark.parametrize(("fixture", "path", "old", "new"), [c[1:] for c in EDITS], ids=[c[0] for c in EDITS])
def test_update_gives_a_fresh_run_s_findings_for_every_file_it_may_change(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixture: str, path: str, old: str, new: str
) -> None:
    root = tree
    if fixture in ("adk2", "tutor"):
        root = tmp_path / fixture
        shutil.copytree(ADK2 if fixture == "adk2" else TUTOR, root)
        (root / ".git").mkdir()
        monkeypatch.chdir(root)
    text = (root / path).read_text(encoding="utf-8")
    assert old in text
    edited = text.replace(old, new)
    before = lint_project(["."], root=root)
    project = Project(root)
    project.lint(["."])
    updated = project.update(path, edited)
    fresh = lint_project(["."], root=root, overrides={path: edited})
    assert path in updated.files
    assert {d.path for d in updated.diagnostics} <= set(updated.files)
    for name in sorted({*before.files, *fresh.files}):
        expected = rows(fresh, name)
        got = rows(updated, name) if name in updated.files else rows(before, name)
        assert got == expected, name
        if name in updated.files:
            assert templates(updated, name) == templates(fresh, name), name
    again = project.update(path, text)  # and back: the first run's findings
    for name in again.files:
        assert rows(again, name) == rows(before, name), name
        assert templates(again, name) == templates(before, name), name


def test_update_reports_the_prompt_module_an_agent_edit_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = tmp_path / "project"
    shutil.copytree(FIXTURE, tree)
    monkeypatch.chdir(tree)
    project = Project(tree, ignore=["T024", "T025", "T026", "T027"])  # (see the tree's own test in test_pysource)
    assert project.lint(["."]).diagnostics == []
    agent = "travel_concierge/sub_agents/planning/agent.py"  # its planner writes plan; booking's prompt reads it
    edited = (tree / agent).read_text(encoding="utf-8").replace('output_key="plan",', "")
    result = project.update(agent, edited)
    booking = "travel_concierge/sub_agents/booking/prompt.py"
    assert booking in result.files
    assert [(d.code, d.path) for d in result.diagnostics if "`plan`" in d.message] == [("T014", booking)]


# --- severity overrides through the engine: lint_project, and Project.update (the language server's path)

ADK_STATE = Path(__file__).resolve().parent / "fixtures" / "adk_state_project"


@pytest.fixture
def trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "trip"
    shutil.copytree(ADK_STATE, root)
    (root / ".git").mkdir()
    monkeypatch.chdir(root)
    return root


# (id, [tool.templating] severity, severity= of lint_project, the level of each T014, errors)
SEVERITIES = [
    ("default", None, None, "error", 2),  # the app's create_session declares its initial state: google-adk raises
    ("config", '{ T014 = "error" }', None, "error", 2),
    ("config-section-by-name", "\n[tool.templating.severity]\nkey-never-written = 'error'", None, "error", 2),
    ("argument", None, {"T014": "error"}, "error", 2),
    ("argument-over-config", '{ T014 = "error" }', {"key-never-written": "info"}, "info", 0),
]


@pytest.mark.parametrize(
    ("config", "given", "level", "errors"), [c[1:] for c in SEVERITIES], ids=[c[0] for c in SEVERITIES]
)
def test_lint_project_reports_each_rule_at_its_configured_severity(
    trip: Path, config: str | None, given: dict[str, str] | None, level: str, errors: int
) -> None:
    if config is not None:
        table = f"severity = {config}" if not config.startswith("\n") else config
        (trip / "pyproject.toml").write_text(f"[tool.templating]\n{table}\n", encoding="utf-8")
    result = lint_project(["."], severity=given)
    assert [(d.code, d.severity) for d in result.diagnostics if d.code == "T014"] == [("T014", level)] * 2
    assert result.errors == errors


def test_project_update_keeps_the_configured_severity(trip: Path) -> None:
    """The language server lints an edited buffer with Project.update: the levels are the configured ones."""
    (trip / "pyproject.toml").write_text('[tool.templating]\nseverity = { T014 = "error" }\n', encoding="utf-8")
    project = Project(trip)
    path = "trip_planner/prompt.py"
    text = (trip / path).read_text(encoding="utf-8")
    result = project.update(path, text.replace("{traveller_name}", "{user:traveller_name}"))
    assert [(d.code, d.severity) for d in result.diagnostics if d.code == "T014"] == [("T014", "error")] * 2
    result = project.update(path, text.replace("{budget_pref}", "{budget_pref?}"))
    assert [(d.code, d.severity) for d in result.diagnostics if d.code == "T014"] == [("T014", "error")]


@pytest.mark.parametrize(
    ("given", "message"),
    [({"T099": "error"}, "unknown rule 'T099'"), ({"T014": "fatal"}, "not 'fatal'")],
    ids=["unknown-rule", "bad-level"],
)
def test_a_bad_severity_argument_is_a_config_error(trip: Path, given: dict[str, str], message: str) -> None:
    from templating.linter.config import LintConfigError

    with pytest.raises(LintConfigError, match=re.escape(message)):
        lint_project(["."], severity=given)


# --- no project marker: the root is the paths' common folder (a home folder, say); context stays bounded

UNMARKED = [
    # (id, paths linted, T014 keys expected in lone.py: `y` is written beside it, `x` only in a subfolder)
    ("a-lone-file", ["lone.py"], ["x"]),
    ("two-files-of-one-folder", ["lone.py", "sibling.py"], ["x"]),
    ("the-folder-named", ["."], []),
]


@pytest.mark.parametrize(("paths", "keys"), [c[1:] for c in UNMARKED], ids=[c[0] for c in UNMARKED])
def test_without_a_project_marker_the_context_is_the_named_files_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, paths: list[str], keys: list[str]
) -> None:
    home = tmp_path / "home"
    (home / "deep" / "er").mkdir(parents=True)
    agent = "from google.adk.agents import LlmAgent\n"
    (home / "lone.py").write_text(agent + "a = LlmAgent(name='a', instruction='Use {x} and {y}.')\n", encoding="utf-8")
    (home / "sibling.py").write_text(agent + "b = LlmAgent(name='b', instruction='Hi', output_key='y')\n", "utf-8")
    (home / "deep" / "er" / "far.py").write_text(agent + "c = LlmAgent(name='c', instruction='', output_key='x')\n")
    monkeypatch.chdir(home)
    project = Project(paths=paths)
    if project.marked:
        pytest.skip(f"a pyproject.toml or .git above {home}: the root is marked")
    result = project.lint(paths)
    assert project.root == home.resolve()
    assert [d.message.split("'")[3] for d in result.diagnostics if d.code == "T014"] == keys


# An unpacked ADK sample (no .git, no pyproject.toml): shop/prompt.py is imported by shop/agent.py, whose
# SequentialAgent runs shop/sub_agents/writer.py's agent, the writer of `summary`. Linted alone, from the folder
# above or inside the package, prompt.py (and the editor's, in a sub-package) sees the app that imports it, as
# `lint .` does (issue 33).
SHOP = {
    "shop/__init__.py": "from . import agent\n",
    "shop/prompt.py": 'ROOT_PROMPT = """You help with the shop. Summary so far: {summary}"""\n',
    "shop/agent.py": (
        "from google.adk.agents import LlmAgent, SequentialAgent\n\nfrom . import prompt\n"
        "from .sub_agents.editor import editor\nfrom .sub_agents.writer import writer\n\n"
        'reader = LlmAgent(name="reader", model="gemini-2.5-flash", instruction=prompt.ROOT_PROMPT)\n'
        'root_agent = SequentialAgent(name="shop", sub_agents=[writer, reader, editor])\n'
    ),
    "shop/sub_agents/editor/__init__.py": "from .agent import editor\n",
    "shop/sub_agents/editor/prompt.py": 'EDITOR_PROMPT = """Tighten this summary: {summary}"""\n',
    "shop/sub_agents/editor/agent.py": (
        "from google.adk.agents import LlmAgent\n\nfrom . import prompt\n\n"
        'editor = LlmAgent(name="editor", instruction=prompt.EDITOR_PROMPT)\n'
    ),
    "shop/sub_agents/__init__.py": "",
    "shop/sub_agents/writer.py": (
        "from google.adk.agents import LlmAgent\n\n"
        'writer = LlmAgent(name="writer", instruction="Summarise the request.", output_key="summary")\n'
    ),
    "shop/sub_agents/reviewer.py": (
        "from google.adk.agents import LlmAgent\n\n"
        'reviewer = LlmAgent(name="reviewer", instruction="Review {draft}.")\n'
    ),
}
UNMARKED_PACKAGE = [
    # (id, folder run from, paths, the T014 keys expected)
    ("prompt-alone-from-above", "", ["shop/prompt.py"], []),
    ("prompt-alone-from-inside", "shop", ["prompt.py"], []),
    ("sub-agent-alone", "shop/sub_agents", ["reviewer.py"], ["draft"]),
    ("sub-agent-prompt-alone", "", ["shop/sub_agents/editor/prompt.py"], []),  # its key written by the app's writer
    ("the-folder-above", "", ["."], ["draft"]),
]


@pytest.mark.parametrize("namespace", [False, True], ids=["sub-agents-a-package", "sub-agents-a-namespace-folder"])
@pytest.mark.parametrize(
    ("where", "paths", "keys"), [c[1:] for c in UNMARKED_PACKAGE], ids=[c[0] for c in UNMARKED_PACKAGE]
)
def test_without_a_project_marker_a_file_of_a_package_sees_the_whole_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, paths: list[str], keys: list[str], namespace: bool
) -> None:
    # google-adk's samples keep sub-agents in a folder with no __init__.py (academic-research, financial-advisor):
    # Python imports shop.sub_agents.writer all the same, and so does the linter's context
    files = {k: v for k, v in SHOP.items() if not (namespace and k == "shop/sub_agents/__init__.py")}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path / where)
    project = Project(paths=paths)
    if project.marked:
        pytest.skip(f"a pyproject.toml or .git above {tmp_path}: the root is marked")
    result = project.lint(paths)
    assert [d.message.split("'")[3] for d in result.diagnostics if d.code == "T014"] == keys
    if paths != ["."]:
        assert project.root == (tmp_path / "shop").resolve()  # the package, raised from the named file's folder


# --- the shared corpus (../shared/corpora): every file linted alone gets exactly the whole tree's findings


CORPORA = shared_corpora()


def corpus_units(corpora: Path | None) -> list[str]:
    """The projects of the corpus, each as its authors lint it (its own folder the root): the adk-samples agents,
    the adk-python samples, the adk-docs example folders."""
    if corpora is None:
        return []
    found = [
        *corpora.glob("adk-samples/python/agents/*"),
        *corpora.glob("adk-python/contributing/samples/*"),
        *corpora.glob("adk-docs/examples/python/*/*"),
    ]
    return sorted(p.relative_to(corpora).as_posix() for p in found if p.is_dir() and any(p.rglob("*.py")))


CORPUS_UNITS = corpus_units(CORPORA) or ["(the shared corpus is absent)"]


def corpus_copy(unit: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the corpus project `unit` (as unpacked: no marker but the project's own), the current folder."""
    if CORPORA is None:
        reason = "the shared corpus (../shared/corpora) is absent"
        if os.environ.get("TEMPLATING_REQUIRE_CORPUS") == "1":
            pytest.fail(f"TEMPLATING_REQUIRE_CORPUS=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    root = tmp_path / unit.rsplit("/", 1)[-1]
    shutil.copytree(CORPORA / unit, root, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    monkeypatch.chdir(root)
    return root


def finding_rows(result: templating.LintResult, path: str) -> list[tuple[Any, ...]]:
    return sorted(
        (d.code, d.severity, d.message, d.span and (d.span.start, d.span.end), d.help or "", d.origin or "")
        for d in result.diagnostics
        if d.path == path
    )


@pytest.mark.slow
@pytest.mark.parametrize("unit", CORPUS_UNITS)
def test_each_corpus_file_linted_alone_gets_the_whole_tree_findings(
    unit: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`templating lint FILE` gives FILE what `templating lint .` gives it, for every Python file of real ADK
    projects nobody here wrote (it did not for sub-agents kept in a folder with no `__init__.py`)."""
    root = corpus_copy(unit, tmp_path, monkeypatch)
    whole = lint_project(["."])
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py"))
    for path in files:
        alone = lint_project([path])
        assert finding_rows(alone, path) == finding_rows(whole, path), path


# --- SARIF 2.1.0: the output checked against a JSON Schema of the part of SARIF it uses
# (written here from the OASIS SARIF 2.1.0 specification: the objects, properties, enumerations and
# minimums it sets for them; every object closed, so a misspelt property fails). URIs are checked
# against RFC 3986 below (jsonschema checks "uri" formats only with extra packages).

_OBJ: dict[str, Any] = {"type": "object", "additionalProperties": False}
_LEVEL = {"enum": ["none", "note", "warning", "error"]}
_POSITIVE = {"type": "integer", "minimum": 1}
SARIF_SUBSET: dict[str, Any] = {
    **_OBJ,
    "required": ["version", "runs"],
    "properties": {
        "$schema": {"type": "string"},
        "version": {"const": "2.1.0"},
        "runs": {"type": "array", "minItems": 1, "items": {"$ref": "#/definitions/run"}},
    },
    "definitions": {
        "message": {**_OBJ, "required": ["text"], "properties": {"text": {"type": "string"}}},
        "run": {
            **_OBJ,
            "required": ["tool"],
            "properties": {
                "tool": {**_OBJ, "required": ["driver"], "properties": {"driver": {"$ref": "#/definitions/driver"}}},
                "columnKind": {"enum": ["utf16CodeUnits", "unicodeCodePoints"]},
                "results": {"type": "array", "items": {"$ref": "#/definitions/result"}},
            },
        },
        "driver": {
            **_OBJ,
            "required": ["name", "version"],
            "properties": {
                "name": {"type": "string"},
                "version": {"type": "string"},
                "informationUri": {"type": "string"},
                "rules": {"type": "array", "uniqueItems": True, "items": {"$ref": "#/definitions/rule"}},
            },
        },
        "rule": {
            **_OBJ,
            "required": ["id"],
            "properties": {
                "id": {"type": "string"},
                "name": {"type": "string"},
                "shortDescription": {"$ref": "#/definitions/message"},
                "helpUri": {"type": "string"},
                "defaultConfiguration": {**_OBJ, "properties": {"level": _LEVEL, "enabled": {"type": "boolean"}}},
            },
        },
        "result": {
            **_OBJ,
            "required": ["message"],
            "properties": {
                "ruleId": {"type": "string"},
                "ruleIndex": {"type": "integer", "minimum": -1},
                "level": _LEVEL,
                "message": {"$ref": "#/definitions/message"},
                "locations": {
                    "type": "array",
                    "items": {**_OBJ, "properties": {"physicalLocation": {"$ref": "#/definitions/physical"}}},
                },
                "properties": {"type": "object"},
            },
        },
        "physical": {
            **_OBJ,
            "required": ["artifactLocation"],
            "properties": {
                "artifactLocation": {**_OBJ, "required": ["uri"], "properties": {"uri": {"type": "string"}}},
                "region": {
                    **_OBJ,
                    "properties": {
                        "startLine": _POSITIVE,
                        "startColumn": _POSITIVE,
                        "endLine": _POSITIVE,
                        "endColumn": _POSITIVE,
                        "charOffset": {"type": "integer", "minimum": -1},
                        "charLength": {"type": "integer", "minimum": 0},
                    },
                },
            },
        },
    },
}
# RFC 3986: a URI reference holds unreserved and reserved characters and %XX escapes only, and a relative
# one has no ':' in its first segment (it would read as a scheme).
_URI_CHARS = re.compile(r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*")


def _uri_reference(uri: str) -> bool:
    if not _URI_CHARS.fullmatch(uri):
        return False
    scheme, colon, _ = uri.partition(":")
    return not colon or ("/" not in scheme and re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", scheme) is not None)


@pytest.mark.skipif(sys.platform == "win32", reason="file names with a newline and FIFOs, as on POSIX")
def test_sarif_output_is_valid_sarif_2_1_0(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import jsonschema

    root = tmp_path / "p"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "x\n::error file=evil::a:b.prompt").write_text("Hi < name >\x1b[31m", encoding="utf-8")
    (root / "ok.prompt").write_text("Hi <a> {user:name}", encoding="utf-8")
    os.mkfifo(root / "f.prompt")
    (root / "agent.py").write_text(
        "from google.adk import Agent\na = Agent(name='a', instruction='Use ${x.y} and {z}.', state_schema=f())\n",
        encoding="utf-8",
    )
    (root / "s.json").write_text('["a", "user:name", "name"]', encoding="utf-8")
    outside = tmp_path / "outside.prompt"
    outside.write_text("<nmae>", encoding="utf-8")
    monkeypatch.chdir(root)
    env = {**os.environ, "PYTHONPATH": str(Path(templating.__file__).parent.parent)}
    done = subprocess.run(
        [sys.executable, "-m", "templating", "lint", ".", str(outside), "--schema", "s.json", "--format", "sarif"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    log = json.loads(done.stdout)
    jsonschema.Draft7Validator(SARIF_SUBSET).validate(log)
    (run,) = log["runs"]
    assert run["tool"]["driver"]["version"] == templating.__version__  # the package's, not a placeholder
    codes = {item["ruleId"] for item in run["results"]}
    assert codes >= {"T002", "E003", "T001", "T020", "T021", "T014"}
    uris = [item["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for item in run["results"]]
    assert all(_uri_reference(uri) for uri in uris), uris
    assert "x%0A%3A%3Aerror%20file%3Devil%3A%3Aa%3Ab.prompt" in uris
    assert outside.as_uri() in uris


# --- instructions that start at the same character are two instructions

TUTOR_INSTRUCTIONS = [
    # (id, files named, templates in prompts.py: name, keys)
    (
        "the-prompt-module",
        ["language_tutor/prompts.py"],
        [
            ('LlmAgent(name="quiz").instruction', ("user:name", "user:language", "topic")),
            ('LlmAgent(name="review").instruction', ("user:name", "user:language", "covered", "topic")),
            ("PLANNER_INSTR", ("user:name",)),
        ],
    ),
    ("the-whole-tree", ["."], None),
    ("the-agent-module", ["language_tutor/agent.py"], []),
]


@pytest.mark.parametrize(
    ("named", "expected"), [c[1:] for c in TUTOR_INSTRUCTIONS], ids=[c[0] for c in TUTOR_INSTRUCTIONS]
)
def test_two_instructions_starting_at_one_character_are_both_linted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named: list[str], expected: list[Any] | None
) -> None:
    root = tmp_path / "tutor"
    shutil.copytree(TUTOR, root)
    (root / ".git").mkdir()
    monkeypatch.chdir(root)
    prompts = "language_tutor/prompts.py"
    result = lint_project(named, root=root)
    whole = lint_project(["."], root=root)
    got = sorted((t.name or "", t.keys) for t in result.templates if t.path == prompts)
    assert got == sorted(expected if expected is not None else got)
    quiz, review = sorted((t for t in whole.templates if t.name and "Agent" in t.name), key=lambda t: len(t.keys))
    assert (quiz.span.start, quiz.span.end) == (review.span.start, review.span.end)  # one place, two instructions
    assert "covered" in review.keys
    assert "covered" not in quiz.keys
    # review's MEMORY reads a key nothing writes: found when the prompt module is linted, never lost
    found = [(d.code, d.path, d.span.line, d.origin) for d in result.diagnostics if d.span]
    if prompts in result.files:
        assert found == [("T014", prompts, 10, 'LlmAgent(name="review").instruction')]
    else:
        assert found == []


def test_an_unsaved_file_not_on_disk_is_followed_by_the_imports_of_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An import's candidates are looked for on disk before they are read; an override (an editor's buffer
    for a file not saved yet) is read all the same, as the file would be once saved."""
    (tmp_path / "pyproject.toml").write_text("[tool.templating]\n", encoding="utf-8")
    (tmp_path / "agent.py").write_text(
        "from google.adk.agents import LlmAgent\nfrom prompts import ROOT\nroot = LlmAgent(instruction=ROOT)\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    prompt = 'ROOT = "Help {user:name} with {order_id}."\n'

    def reached(project: Project) -> list[tuple[str, str, str]]:
        items, _ = project.instructions("agent.py", reached=True)
        return [(item.path, item.label, item.text) for item in items]

    unsaved = reached(Project(tmp_path, overrides={"prompts.py": prompt}))
    assert unsaved == [("prompts.py", "ROOT", "Help {user:name} with {order_id}.")]
    assert reached(Project(tmp_path)) == []  # not on disk, not given: not found
    (tmp_path / "prompts.py").write_text(prompt, encoding="utf-8")
    assert reached(Project(tmp_path)) == unsaved


@pytest.mark.parametrize(
    ("given", "named"),
    [
        pytest.param("relative", "absolute", id="relative-given-absolute-named"),
        pytest.param("absolute", "relative", id="absolute-given-relative-named"),
        pytest.param("link", "real", id="link-given-real-named"),
        pytest.param("real", "link", id="real-given-link-named"),
    ],
)
def test_an_unsaved_text_is_used_however_the_file_is_named_from_outside_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str, named: str
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "a.prompt").write_text("Hello <name>.\n", encoding="utf-8")
    (tmp_path / "link").symlink_to(project)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    names = {
        "relative": "../proj/a.prompt",
        "absolute": str(project / "a.prompt"),
        "link": str(tmp_path / "link" / "a.prompt"),
        "real": str(project / "a.prompt"),
    }
    result = lint_project([names[named]], root=project, overrides={names[given]: "Hello < name >.\n"})
    assert [d.code for d in result.diagnostics] == ["T002"]  # the unsaved text's near miss, not the disk's


def test_a_project_without_a_marker_sees_a_module_created_once_its_files_are_walked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "app"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "agent.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    project = Project(paths=[str(package / "agent.py")])
    assert not project.marked
    named = [str(package / "agent.py")]
    before = project._context_files(named)
    assert [Path(p).name for p in before] == ["__init__.py", "agent.py"]
    (package / "tools.py").write_text("y = 2\n", encoding="utf-8")
    project.walker.forget()  # what an edit creating a file does
    assert [Path(p).name for p in project._context_files(named)] == ["__init__.py", "agent.py", "tools.py"]


TEXTS_CHANGES: dict[str, Callable[[Any], object]] = {
    "set": lambda t: t.__setitem__("b.py", "B = 2\n"),
    "replace": lambda t: t.__setitem__("a.py", "A = 3\n"),
    "delete": lambda t: t.__delitem__("a.py"),
    "pop": lambda t: t.pop("a.py"),
    "setdefault-new": lambda t: t.setdefault("b.py", "B = 2\n"),
    "update": lambda t: t.update({"b.py": "B = 2\n"}),
    "in-place-or": lambda t: t.__ior__({"b.py": "B = 2\n"}),
    "popitem": lambda t: t.popitem(),
    "clear": lambda t: t.clear(),
}
TEXTS_READS: dict[str, Callable[[Any], object]] = {
    "get": lambda t: t.get("a.py"),
    "pop-missing": lambda t: t.pop("z.py", None),
    "setdefault-known": lambda t: t.setdefault("a.py", "other"),
    "items": lambda t: list(t.items()),
}


@pytest.mark.parametrize(
    ("change", "counted"),
    [*((f, True) for f in TEXTS_CHANGES.values()), *((f, False) for f in TEXTS_READS.values())],
    ids=[*TEXTS_CHANGES, *TEXTS_READS],
)
def test_the_texts_read_count_every_change_and_nothing_else(change: Callable[[Any], object], counted: bool) -> None:
    # An edit keeps what it worked out from every file's text while this count stays (`incremental._texts_of`).
    project = Project(Path.cwd())
    project._texts["a.py"] = "A = 1\n"
    version = project._texts.version
    change(project._texts)
    assert (project._texts.version != version) is counted
