"""The lint run (templating.linter.run): the option rules, what a run says and writes, and that the command
line, `lint_project` and `LintRun` are one run."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from templating import TemplatingError
from templating.cli import main
from templating.linter import LintRun, LintUsageError, lint_project
from templating.linter.run import LintOutcome, Message

PROMPT = "Thanks <guest??>.\nHi < name >.\n"  # T006 (a safe fix: <guest?>), T002 (an unsafe one)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project of two prompt files, the current folder."""
    (tmp_path / "pyproject.toml").write_text('[tool.templating]\ninclude = ["*.prompt"]\n', encoding="utf-8")
    (tmp_path / "a.prompt").write_text(PROMPT, encoding="utf-8")
    (tmp_path / "b.prompt").write_text("Fine <x>.\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


CLASHES = [
    ("stdin-twice", {"paths": ["-", "-"]}, "stdin ('-') can be linted only once"),
    ("statistics-sarif", {"statistics": True, "format": "sarif"}, "--statistics prints text or json, not sarif"),
    ("select-nothing", {"select": [" , "]}, "--select needs at least one rule code"),
    ("select-empty-string", {"select": ""}, "--select needs at least one rule code"),
    (
        "write-and-apply-baseline",
        {"write_baseline": "b.json", "baseline": "old.json"},
        "cannot be combined with --baseline",
    ),
    (
        "write-baseline-output",
        {"write_baseline": "b.json", "output_file": "o"},
        "cannot be combined with --output-file",
    ),
    ("unsafe-alone", {"unsafe_fixes": True}, "--unsafe-fixes widens --fix or --diff"),
    ("fix-stdin", {"fix": True, "paths": ["-"]}, "--fix fixes files on disk: it cannot be combined with '-' (stdin)"),
    ("diff-baseline", {"diff": True, "write_baseline": "b.json"}, "--diff fixes files on disk"),
    ("diff-html", {"diff": True, "html": "r.html"}, "--diff prints the fixes and nothing else"),
]


@pytest.mark.parametrize(("options", "message"), [c[1:] for c in CLASHES], ids=[c[0] for c in CLASHES])
def test_options_that_cannot_be_combined_are_refused_before_anything_is_read(
    project: Path, options: dict[str, Any], message: str
) -> None:
    before = sorted(p.name for p in project.iterdir())
    with pytest.raises(LintUsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        LintRun(**options).run()
    assert sorted(p.name for p in project.iterdir()) == before
    assert issubclass(LintUsageError, TemplatingError)


def test_options_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        LintRun(["a.prompt"])  # type: ignore[misc]


def test_a_run_says_the_findings_on_stdout_and_the_summary_on_stderr(project: Path) -> None:
    outcome = LintRun().run()
    assert outcome.exit_code == 1  # T006 is an error
    assert [m.stream for m in outcome.messages] == ["stdout", "stderr"]
    assert "a.prompt:1:8: T006" in outcome.messages[0].text
    assert outcome.messages[1].text == "2 templates checked: 1 error, 1 warning"
    assert outcome.result is not None
    assert sorted(d.code for d in outcome.result.diagnostics) == ["T002", "T006"]


def test_a_clean_run_says_its_summary_on_stdout(project: Path) -> None:
    (project / "a.prompt").write_text("Fine <y>.\n", encoding="utf-8")
    assert LintRun().run().messages == [Message("2 templates checked: no findings")]


def test_json_says_only_the_findings(project: Path) -> None:
    (message,) = LintRun(format="json", exit_zero=True).run().messages
    assert message.stream == "stdout"
    assert [row["code"] for row in json.loads(message.text)] == ["T006", "T002"]


def test_each_message_is_said_as_soon_as_it_is_known_and_kept_in_order(project: Path) -> None:
    heard: list[Message] = []
    outcome = LintRun(fix=True).run(say=heard.append)
    assert heard == outcome.messages
    fixed = "applied 1 fix in 1 file; 1 finding left (1 fixable with --unsafe-fixes)"
    assert [m.text for m in heard][-2:] == [fixed, "2 templates checked: 1 warning"]


def test_fix_writes_the_safe_fixes_and_reports_what_is_left(project: Path) -> None:
    outcome = LintRun(fix=True).run()
    assert (project / "a.prompt").read_text(encoding="utf-8") == "Thanks <guest?>.\nHi < name >.\n"
    assert outcome.fixes is not None
    assert outcome.fixes.count == 1
    assert outcome.result is not None
    assert [d.code for d in outcome.result.diagnostics] == ["T002"]
    assert outcome.exit_code == 0


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file to another user needs root")
def test_fix_run_as_root_keeps_the_owner_and_mode_of_the_fixed_file(project: Path) -> None:
    prompt = project / "a.prompt"
    os.chown(prompt, 1234, 5678)
    prompt.chmod(0o640)
    LintRun(fix=True).run()
    assert prompt.read_text(encoding="utf-8").startswith("Thanks <guest?>.")
    info = prompt.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (1234, 5678, 0o640)


def test_diff_writes_nothing_and_exits_1_when_there_is_something_to_fix(project: Path) -> None:
    outcome = LintRun(diff=True, unsafe_fixes=True).run()
    assert outcome.exit_code == 1
    assert (project / "a.prompt").read_text(encoding="utf-8") == PROMPT
    diff, note = outcome.messages
    assert (diff.stream, diff.end) == ("stdout", "")
    assert "-Thanks <guest??>.\n-Hi < name >.\n+Thanks <guest?>.\n+Hi <name>.\n" in diff.text
    assert note == Message("2 fixes would be applied in 1 file", "stderr")


def test_write_baseline_then_a_run_with_it_reports_nothing(project: Path) -> None:
    written = LintRun(write_baseline="baseline.json").run()
    assert written.written is not None
    assert written.written.total == 2
    assert written.messages == [Message("wrote 2 findings to the baseline baseline.json")]
    outcome = LintRun(baseline="baseline.json", format="json").run()
    assert outcome.baselined is not None
    assert outcome.baselined.baselined == 2
    assert outcome.exit_code == 0
    assert json.loads(outcome.messages[0].text) == []
    assert outcome.messages[1] == Message(
        "templating: 2 findings left out: recorded in the baseline baseline.json", "aside"
    )


def test_an_output_file_takes_the_findings_whole(project: Path) -> None:
    outcome = LintRun(output_file="out.txt").run()
    assert "T006" in (project / "out.txt").read_text(encoding="utf-8")
    assert outcome.messages == [Message("2 templates checked: 1 error, 1 warning", "stderr")]


OUTPUTS = [
    ("output-file", "output_file", "T006"),
    ("write-baseline", "write_baseline", '"version": 1'),
    ("html", "html", "<!DOCTYPE html>"),
]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
@pytest.mark.parametrize(("option", "written"), [o[1:] for o in OUTPUTS], ids=[o[0] for o in OUTPUTS])
def test_every_output_goes_into_a_fifo_being_read_and_leaves_it_a_fifo(
    project: Path, option: str, written: str
) -> None:
    """`--output-file /dev/stdout`, `<(...)` and a named pipe: what is there is written in place, never
    replaced by a regular file (the temporary file and rename of a regular file's output)."""
    os.mkfifo(project / "pipe")
    (project / "link").symlink_to(project / "pipe")
    for name in ("pipe", "link"):
        reader = os.open(project / "pipe", os.O_RDONLY | os.O_NONBLOCK)
        try:
            LintRun(**{option: name}).run()
            assert written in os.read(reader, 1 << 16).decode("utf-8")
        finally:
            os.close(reader)
        assert stat.S_ISFIFO((project / "pipe").lstat().st_mode)
        assert (project / "link").is_symlink()


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="a device")
@pytest.mark.parametrize("option", [o[1] for o in OUTPUTS], ids=[o[0] for o in OUTPUTS])
def test_every_output_written_through_a_link_to_a_device_keeps_the_link(project: Path, option: str) -> None:
    (project / "null").symlink_to("/dev/null")
    LintRun(**{option: "null"}).run()
    assert os.readlink(project / "null") == "/dev/null"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_no_files_to_lint_is_a_usage_error_naming_the_patterns(project: Path) -> None:
    (project / "empty").mkdir()
    with pytest.raises(
        LintUsageError, match=r"^no template files found to lint in empty \(files matching \*\.prompt, "
    ):
        LintRun(paths=["empty"]).run()


def test_excluded_files_named_by_pre_commit_are_nothing_to_do(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.templating]\ninclude = ["*.prompt"]\nexclude = ["a.prompt"]\n', encoding="utf-8"
    )
    assert LintRun(paths=["a.prompt"], force_exclude=True).run() == LintOutcome(0)


def test_lint_is_lint_project(project: Path) -> None:
    LintRun(write_baseline="baseline.json").run()
    (project / "b.prompt").write_text("Hi <name??>\n", encoding="utf-8")
    shared = lint_project(baseline="baseline.json")
    run = LintRun(baseline="baseline.json").lint()
    assert [(d.code, d.path) for d in shared.diagnostics] == [(d.code, d.path) for d in run.diagnostics]
    assert [d.code for d in run.diagnostics] == ["T006"]
    assert (run.baselined, run.stale) == (2, 0)


@pytest.mark.parametrize(
    "argv",
    [[], ["--format", "json"], ["--statistics"], ["--diff", "--unsafe-fixes"], ["--select", "T006"]],
    ids=["text", "json", "statistics", "diff", "select"],
)
def test_the_command_line_prints_what_the_run_says(
    project: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code = main(["lint", *argv])
    out, err = capsys.readouterr()
    options: dict[str, Any] = {"cache": True}
    for flag in argv:
        if flag.startswith("--") and flag[2:] in ("statistics", "diff"):
            options[flag[2:]] = True
        elif flag == "--unsafe-fixes":
            options["unsafe_fixes"] = True
    if "--format" in argv:
        options["format"] = argv[argv.index("--format") + 1]
    if "--select" in argv:
        options["select"] = [argv[argv.index("--select") + 1]]
    outcome = LintRun(**options).run()
    assert code == outcome.exit_code
    assert out == "".join(m.text + m.end for m in outcome.messages if m.stream == "stdout")
    assert err == "".join(m.text + m.end for m in outcome.messages if m.stream != "stdout")
