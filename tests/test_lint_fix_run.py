"""templating.linter.fix_run: fixing repeats until the project is stable, bounded, a fix that goes round is
named and left out, and nothing is written. The command line (`templating lint --fix`, `--diff`) is tested in
tests/test_cli_lint_fix.py."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from templating.linter.engine import Project
from templating.linter.fix_regions import Region, fix_file
from templating.linter.fix_run import MAX_PASSES, FixRun, fix_until_stable
from templating.linter.fixes import Fix
from templating.linter.registry import Diagnostic
from templating.linter.result import LintResult

fix_regions_module = importlib.import_module("templating.linter.fix_regions")


def _project(tmp_path: Path, text: str, schema: str | None = None) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.templating]\n", encoding="utf-8")
    if schema is not None:
        (tmp_path / "keys.json").write_text(schema, encoding="utf-8")
    path = tmp_path / "support.prompt"
    path.write_text(text, encoding="utf-8")
    return path


def _run(tmp_path: Path, *, unsafe: bool, schema: bool = False, passes: int = MAX_PASSES) -> tuple[FixRun, int]:
    """Fix support.prompt of `tmp_path` until stable; (the run, how many times the project was linted)."""
    keys = str(tmp_path / "keys.json") if schema else None
    project = Project(tmp_path, paths=["support.prompt"], schema=keys)
    linted = [0]

    def relint(texts: dict[str, str]) -> tuple[Project, LintResult]:
        linted[0] += 1
        again = Project(tmp_path, paths=["support.prompt"], overrides=texts, schema=keys)
        return again, again.lint(["support.prompt"])

    run = fix_until_stable(project, project.lint(["support.prompt"]), relint, unsafe=unsafe, passes=passes)
    return run, linted[0]


@pytest.mark.parametrize(
    ("before", "schema", "unsafe", "after", "passes"),
    [
        (
            "Show an <example>x</example>. Thanks < name >, <name>.\n",
            None,
            False,
            "Show an <<example>>x</example>. Thanks <name>, <name>.\n",
            1,
        ),
        # the spaced placeholder closes (a new required key: unsafe), then T009 makes it optional: two passes
        ("Call < nick >.\n", '["nick?"]', True, "Call <nick?>.\n", 2),
        ("Call < nick >.\n", '["nick?"]', False, None, 0),
        ("Thanks <name>.\n", None, True, None, 0),
    ],
    ids=["one-pass", "two-passes", "unsafe-not-asked", "nothing-to-fix"],
)
def test_fix_until_stable(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    before: str,
    schema: str | None,
    unsafe: bool,
    after: str | None,
    passes: int,
) -> None:
    path = _project(tmp_path, before, schema)
    monkeypatch.chdir(tmp_path)
    run, linted = _run(tmp_path, unsafe=unsafe, schema=schema is not None)
    assert path.read_text(encoding="utf-8") == before  # nothing written
    assert run.passes == passes == linted
    assert run.unsettled == {}
    if after is None:
        assert run.files == []
        return
    (fixed,) = run.files
    assert (fixed.path, fixed.before, fixed.after) == ("support.prompt", before, after)
    # the text reached is stable: linting it finds nothing a fix of this kind would change
    project = Project(
        tmp_path,
        paths=["support.prompt"],
        overrides={"support.prompt": after},
        schema=str(tmp_path / "keys.json") if schema else None,
    )
    again = project.lint(["support.prompt"])
    regions = [Region.whole(after, "angle")]
    assert fix_file("support.prompt", after, again.diagnostics, regions, unsafe=unsafe).applied == []


@pytest.mark.parametrize(("grow", "linted"), [(True, MAX_PASSES), (False, 2)], ids=["never-settles", "goes-round"])
def test_fixes_that_do_not_settle_are_named_and_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, grow: bool, linted: int
) -> None:
    """A fix that keeps finding something to change (a bug in a fix): after MAX_PASSES passes, or as soon as
    a pass gives back a text an earlier one had, the file is named with the rules involved and left out."""
    path = _project(tmp_path, "Thanks < name >.\n")
    monkeypatch.chdir(tmp_path)

    def restless(diag: Diagnostic, text: str, *, dialect: str | None = None) -> list[Fix]:
        assert diag.span is not None
        flagged = text[diag.span.start : diag.span.end]
        new = flagged.replace(" >", "  >") if grow else ("< name >" if "  " in flagged else "<  name  >")
        return [Fix(f"Replace with {new}", [(diag.span.start, diag.span.end, new)], codes=(diag.code,))]

    monkeypatch.setattr(fix_regions_module, "fixes_for", restless)
    run, count = _run(tmp_path, unsafe=False)
    assert run.unsettled == {"support.prompt": ("T002",)}
    assert run.files == []
    assert (run.passes, count) == (0, linted)  # no file kept: no pass changed one
    assert path.read_text(encoding="utf-8") == "Thanks < name >.\n"
