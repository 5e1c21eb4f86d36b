"""The baseline: `templating lint --write-baseline FILE` records today's findings, `--baseline FILE`
reports only new ones (templating.linter.baseline), through the command line and `lint_project`."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from templating.cli import main
from templating.linter.baseline import BaselineError, load_baseline, write_baseline
from templating.linter.engine import Project
from templating.linter.result import LintResult
from templating.linter.run import lint_project

PROMPT = "Hello <name??>.\nBye.\n"  # T006, an error: the exit code is 1 without the baseline
AGENT = 'from google.adk.agents import LlmAgent\n\na = LlmAgent(name="a", instruction="Read {plan}.")\n'  # T014


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.templating]\ninclude = ["**/*.py", "**/*.prompt"]\n', encoding="utf-8"
    )
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "a.prompt").write_text(PROMPT, encoding="utf-8")
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def lint(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[tuple[str, str, int]], str]:
    """Exit code, the findings reported (path, code, line) and stderr of `templating lint ARGS --format json`."""
    code = main(["lint", "--format", "json", *args])
    out, err = capsys.readouterr()
    found = json.loads(out) if out.strip() else []
    return code, [(f["path"], f["code"], f["line"]) for f in found], err


def edit(path: str, change: Callable[[str], str]) -> None:
    Path(path).write_text(change(Path(path).read_text(encoding="utf-8")), encoding="utf-8")


EDITS = [
    pytest.param({}, 0, [], 2, 0, id="unchanged"),
    pytest.param(
        {
            "prompts/a.prompt": lambda t: "Intro.\n\n\n" + t,
            "agent.py": lambda t: t.replace("\n\n", "\n\nX = 1\nY = 2\n"),
        },
        0,
        [],
        2,
        0,
        id="moved-down-by-lines-inserted-above",
    ),
    pytest.param(
        {"prompts/a.prompt": lambda t: t + "Again <name??>.\n"},
        1,
        [("prompts/a.prompt", "T006", 3)],
        2,
        0,
        id="a-second-identical-finding-is-new",
    ),
    pytest.param(
        {"agent.py": lambda t: t + 'b = LlmAgent(name="b", instruction="Read {plan}.")\n'},
        0,
        [("agent.py", "T014", 4)],
        2,
        0,
        id="a-second-identical-warning-is-new",
    ),
    pytest.param(
        {"agent.py": lambda t: t.replace("{plan}", "{plan} {notes}")},
        0,
        [("agent.py", "T014", 3)],
        2,
        0,
        id="another-key-is-new",
    ),
    pytest.param({"prompts/a.prompt": lambda t: t.replace("??", "?")}, 0, [], 1, 1, id="one-fixed"),
    pytest.param(
        {"prompts/a.prompt": lambda t: t.replace("<name??>", "<nom??>")},
        1,
        [("prompts/a.prompt", "T006", 1)],
        1,
        1,
        id="flagged-text-changed",
    ),
]


@pytest.mark.parametrize(("edits", "exit_code", "reported", "baselined", "stale"), EDITS)
def test_a_baseline_reports_only_new_findings(
    tree: Path,
    capsys: pytest.CaptureFixture[str],
    edits: dict[str, Callable[[str], str]],
    exit_code: int,
    reported: list[tuple[str, str, int]],
    baselined: int,
    stale: int,
) -> None:
    assert lint([], capsys)[:2] == (1, [("prompts/a.prompt", "T006", 1), ("agent.py", "T014", 3)])
    assert main(["lint", "--write-baseline", "baseline.json"]) == 0
    assert "wrote 2 findings to the baseline baseline.json" in capsys.readouterr().out
    for path, change in edits.items():
        edit(path, change)
    code, found, err = lint(["--baseline", "baseline.json"], capsys)
    assert (code, found) == (exit_code, reported)
    assert f"{baselined} findings left out: recorded in the baseline baseline.json" in err.replace(
        " finding ", " findings "
    )
    assert ("no longer found" in err) == bool(stale)
    if stale:
        assert f"{stale} it records no longer found" in err
    # written again, the baseline is today's findings: a fixed one leaves it, a new one joins it
    before = load_baseline(tree / "baseline.json").total
    assert main(["lint", "--write-baseline", "baseline.json"]) == 0
    capsys.readouterr()
    assert load_baseline(tree / "baseline.json").total == before - stale + len(reported)
    assert lint(["--baseline", "baseline.json"], capsys)[:2] == (0, [])


def test_the_file_is_sorted_stable_and_project_relative(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "prompts" / "b.prompt").write_text("<x??> <x??> <y??>\n", encoding="utf-8")
    assert main(["lint", "prompts", "--write-baseline", "prompts/base.json"]) == 0
    first = (tree / "prompts" / "base.json").read_bytes()
    data = json.loads(first)
    assert data == {
        "version": 1,
        "findings": [
            {"path": "prompts/a.prompt", "code": "T006", "text": "<name??>", "count": 1},
            {"path": "prompts/b.prompt", "code": "T006", "text": "<x??>", "count": 2},
            {"path": "prompts/b.prompt", "code": "T006", "text": "<y??>", "count": 1},
        ],
    }
    assert first.endswith(b"}\n")
    assert b'\n  "findings": [\n    {\n' in first
    (tree / "prompts" / "base.json").unlink()
    assert main(["lint", "prompts/b.prompt", "prompts/a.prompt", "--write-baseline", "prompts/base.json"]) == 0
    assert (tree / "prompts" / "base.json").read_bytes() == first
    capsys.readouterr()
    assert sorted(p.name for p in (tree / "prompts").iterdir()) == ["a.prompt", "b.prompt", "base.json"]  # no temp file


MALFORMED = [
    pytest.param("{", "is not valid JSON (line 1, column 2", id="not-json"),
    pytest.param("[]", "expected an object with 'version' and 'findings', found list", id="a-list"),
    pytest.param('{"findings": []}', "'version' is None", id="no-version"),
    pytest.param('{"version": 2, "findings": []}', "'version' is 2", id="another-version"),
    pytest.param('{"version": 1, "findings": {}}', "'findings' must be a list", id="findings-not-a-list"),
    pytest.param('{"version": 1, "findings": [], "x": 1}', "unknown field 'x'", id="unknown-field"),
    pytest.param('{"version": 1, "findings": [3]}', "finding 1 must be an object", id="entry-not-an-object"),
    pytest.param(
        '{"version": 1, "findings": [{"path": "a", "code": "T001", "text": "x"}]}',
        "finding 1 lacks 'count'",
        id="entry-without-count",
    ),
    pytest.param(
        '{"version": 1, "findings": [{"path": "a", "code": "T001", "text": "x", "count": 0}]}',
        "finding 1: 'count' must be a whole number of at least 1, not 0",
        id="count-zero",
    ),
    pytest.param(
        '{"version": 1, "findings": [{"path": "a", "code": "T001", "text": 5, "count": 1}]}',
        "finding 1: 'text' must be a string",
        id="text-not-a-string",
    ),
    pytest.param(
        '{"version": 1, "findings": [{"path": "a", "code": "T001", "text": "x", "count": 1},'
        ' {"path": "a", "code": "T001", "text": "x", "count": 2}]}',
        "finding 2 repeats an earlier entry",
        id="repeated-entry",
    ),
]


@pytest.mark.parametrize(("text", "message"), MALFORMED)
def test_a_malformed_baseline_is_a_clear_error_and_nothing_is_written(
    tree: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    (tree / "bad.json").write_text(text, encoding="utf-8")
    code = main(["lint", "--baseline", "bad.json", "--output-file", "out.txt", "--html", "report.html"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.startswith("templating: error: baseline bad.json "), err
    assert message in err, err
    assert not (tree / "out.txt").exists()
    assert not (tree / "report.html").exists()
    with pytest.raises(BaselineError, match=r"bad\.json"):
        lint_project(baseline=tree / "bad.json")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--baseline", "missing.json"], "cannot read the baseline missing.json", id="missing-file"),
        pytest.param(["--baseline", "prompts"], "cannot read the baseline prompts", id="a-folder"),
        pytest.param(
            ["--write-baseline", "prompts"], "cannot write the baseline prompts: it is a folder", id="write-to-folder"
        ),
        pytest.param(
            ["--write-baseline", "no/such/b.json"], "cannot write the baseline no/such/b.json", id="no-folder"
        ),
        pytest.param(
            ["--write-baseline", "b.json", "--baseline", "b.json"], "cannot be combined with --baseline", id="both"
        ),
        pytest.param(
            ["--write-baseline", "b.json", "--statistics"], "cannot be combined with --statistics", id="stats"
        ),
    ],
)
def test_bad_baseline_usage_exits_2(
    tree: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["lint", *args]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert message in err
    assert "Traceback" not in err
    assert not (tree / "b.json").exists()


def test_lint_project_takes_a_baseline(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", "--write-baseline", "baseline.json"]) == 0
    edit("prompts/a.prompt", lambda t: t + "<more??>\n")
    result = lint_project(baseline="baseline.json")
    assert [(d.path, d.code) for d in result.diagnostics] == [("prompts/a.prompt", "T006")]
    assert (result.baselined, result.stale, result.errors) == (2, 0, 1)
    loaded = load_baseline("baseline.json")
    assert lint_project(baseline=loaded).baselined == 2


def test_text_output_names_the_baseline(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", "--write-baseline", "baseline.json"]) == 0
    capsys.readouterr()
    assert main(["lint", "--baseline", "baseline.json"]) == 0
    out, _err = capsys.readouterr()
    assert out == "2 templates checked: no findings\n2 findings left out: recorded in the baseline baseline.json\n"


def _everything(result: LintResult) -> tuple[object, ...]:
    return (result.diagnostics, result.run_findings, result.templates, result.files, result.baselined, result.stale)


@pytest.mark.parametrize(
    "options", [pytest.param({}, id="default-levels"), pytest.param({"severity": {"T011": "error"}}, id="level-given")]
)
def test_a_baselined_run_finding_is_left_out_of_a_cached_run_as_of_a_fresh_one(
    tree: Path, monkeypatch: pytest.MonkeyPatch, options: dict[str, Any]
) -> None:
    """T011 reports on the whole run (`run_findings`, which the HTML report lists): a baseline recording it
    leaves it out of a run read from the cache (whose findings are read back from JSON) and of a run with
    `severity` given (whose findings are copied at their level) exactly as of a fresh run."""
    common: dict[str, Any] = {"schema": ["name", "plan", "spare"], "extend_select": ["T011"], **options}
    recorded = lint_project(**common)
    assert [(d.code, d.message) for d in recorded.run_findings] == [
        ("T011", f"schema key '{key}' is not used by any linted template") for key in ("name", "spare")
    ]  # `<name??>` is no placeholder
    write_baseline("baseline.json", recorded)
    fresh = lint_project(baseline="baseline.json", **common)
    assert (fresh.diagnostics, fresh.run_findings, fresh.baselined) == ([], [], len(recorded.diagnostics))
    linted: list[int] = []
    real = Project._lint

    def counted(self: Project, paths: Any) -> LintResult:
        linted.append(1)
        return real(self, paths)

    monkeypatch.setattr(Project, "_lint", counted)
    runs = [lint_project(baseline="baseline.json", cache_dir=tree / "cache", **common) for _ in range(2)]
    assert linted == [1]  # the second run is read from the cache
    assert [_everything(run) for run in runs] == [_everything(fresh)] * 2


def _set_max_file_size(tree: Path, size: int) -> None:
    edit("pyproject.toml", lambda t: t + f"max-file-size = {size}\n")


def _large_baseline(path: Path, size: int) -> bytes:
    """A valid baseline of `size` bytes or more (what --write-baseline writes for a project of ~18,000
    findings), recording the tree's two findings among many others."""
    entries = [
        {"path": "agent.py", "code": "T014", "text": "{plan}", "count": 1},
        {"path": "prompts/a.prompt", "code": "T006", "text": "<name??>", "count": 1},
    ]
    entries += [{"path": f"old/f{i:06}.py", "code": "T014", "text": "{x}", "count": 1} for i in range(size // 100)]
    data = json.dumps({"version": 1, "findings": entries}, indent=2).encode("utf-8")
    assert len(data) >= size
    path.write_bytes(data)
    return data


def test_a_baseline_is_read_within_max_file_size(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The limit on a baseline's size is the project's max-file-size (2,000,000 bytes by default), and
    raising it reads a larger one; over it, the message names the setting and where it is set."""
    data = _large_baseline(tree / "big.json", 2_100_000)
    code, _, err = lint(["--baseline", "big.json"], capsys)
    assert code == 2
    assert err == (
        f"templating: error: cannot read the baseline big.json: it is {len(data)} bytes, more than the limit of "
        f"2000000 bytes ('max-file-size' in [tool.templating] of {tree / 'pyproject.toml'}): raise it to read "
        "this baseline\n"
    )
    _set_max_file_size(tree, 3_000_000)
    assert lint(["--baseline", "big.json"], capsys) == (
        0,
        [],
        "templating: 2 findings left out: recorded in the baseline big.json\n",
    )


def test_a_baseline_that_could_not_be_read_back_is_not_written(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "b.json").write_text("old\n", encoding="utf-8")
    _set_max_file_size(tree, 200)  # the two findings' baseline is more
    assert main(["lint", "--write-baseline", "b.json"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("templating: error: cannot write the baseline b.json: it would be "), err
    assert err.endswith(
        f"bytes, more than the limit of 200 bytes a baseline is read with ('max-file-size' in [tool.templating] of "
        f"{tree / 'pyproject.toml'}): raise it to write this baseline\n"
    )
    assert (tree / "b.json").read_text(encoding="utf-8") == "old\n"


@pytest.mark.skipif(sys.platform != "linux", reason="file names that are not UTF-8, as on Linux")
def test_a_baseline_of_a_name_that_is_not_utf8_is_written_and_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".git").mkdir()
    with open(os.fsencode(tmp_path) + b"/n\xffm.prompt", "wb") as handle:
        handle.write(PROMPT.encode("utf-8"))
    monkeypatch.chdir(tmp_path)
    assert main(["lint", "--no-cache", "--write-baseline", "b.json", "."]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [".git", "b.json", "n\udcffm.prompt"]  # no temporary file
    (tmp_path / "b.json").read_bytes().decode("utf-8")  # the file is UTF-8
    capsys.readouterr()
    assert lint(["--no-cache", "--baseline", "b.json", "."], capsys)[:2] == (0, [])
