"""templating.linter.fixes: a fix resolves the finding it is offered for, keeps the dialect of its
instruction, and a help that names an edit offers it. Where a fix applies is tested in
tests/test_lint_fix_regions.py, fixing until stable in tests/test_lint_fix_run.py, the command line in
tests/test_cli_lint_fix.py and the server's code actions in tests/test_lsp.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from templating.linter import ADK_ONLY, RULES, lint
from templating.linter.engine import Project
from templating.linter.fix_regions import Region, applied_fix, fix_file
from templating.linter.fix_run import plan_fixes
from templating.linter.fixes import Fix, fixes_for


def _applied(text: str, fix: Fix) -> str:
    for start, end, new in sorted(fix.edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


# What a rule's own example leaves out: a schema (T001, T009, T010), or a project (T014, T011, T015, T021..T023).
_CASES = [
    *[(code, RULES[code].example, None) for code in sorted(RULES) if code not in {"T001", "T009", "T010", "T011"}],
    ("T001", "Hello <nmae>.", ["name"]),
    ("T009", "Call them <nick>.", ["nick?"]),
    ("T010", "Hello <name?>.", ["name"]),
    ("T002", "Thanks < name >, <name>.", None),
    ("T006", "Thanks <name ??>.", None),
    ("T018", "Policy: {artifact.policy}.", None),
    ("T019", "Hello {usr:name ?}.", None),
    ("T017", "Outline: {{PLOT_OUTLINE?}}.", None),
    ("T017", "Story: {{{ current_story }}}.", None),
    ("T016", '{"a": {"b": {key}}}', None),
    ("T013", 'Tag <<a href="x: a y">> here.', None),
    ("T020", "Leg: {trip.leg?}.", None),
    ("T001", "Hello <zzz>.", ["name"]),
]


@pytest.mark.parametrize(("code", "text", "schema"), _CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(_CASES)])
def test_every_fix_resolves_its_finding(code: str, text: str, schema: list[str] | None) -> None:
    """Each fix offered for a finding, applied alone, leaves no finding of that rule on the text it wrote:
    a fix the finding survives (T018's "make optional" did) is not offered."""
    dialect = "adk" if code in ADK_ONLY else "angle"
    found = [d for d in lint(text, dialect=dialect, schema=schema) if d.code == code]
    for diag in found:
        for fix in fixes_for(diag, text, dialect=dialect):
            after = _applied(text, fix)
            (start, end, new), edited = fix.edits[0], fix.edits[0][0]
            left = [
                d
                for d in lint(after, dialect=dialect, schema=schema)
                if d.code == code and d.span is not None and d.span.start <= edited + len(new) and edited <= d.span.end
            ]
            assert not left, (fix.title, after, [d.message for d in left], (start, end))


def test_an_artifact_gets_no_fix() -> None:
    """T018 is about the Runner (an artifact service), which `{artifact.x?}` needs as `{artifact.x}` does."""
    for text in ("Policy: {artifact.policy}.", "Policy: {artifact.policy?}."):
        (diag,) = lint(text, dialect="adk")
        assert diag.code == "T018"
        assert fixes_for(diag, text, dialect="adk") == []


# A fix each help names (`write NEW ...`): (code, text, dialect, schema, title, safe by itself, preferred here).
_NAMED = [
    ("T017", "Story: {{current_story}}.", "adk", None, "Replace with {current_story}", True, False),  # a new key
    ("T017", "Outline: {{PLOT_OUTLINE?}}.", "adk", None, "Replace with {PLOT_OUTLINE?}", True, True),
    ("T017", "{current_story} or {{ current_story }}", "adk", None, "Replace with {current_story}", True, True),
    ("T017", "Story: {{{current_story}}}.", "adk", None, "Replace with {current_story}", True, False),
    ("T016", '{"a": {key}}', "adk", None, "Replace with {key} }", True, True),
    ("T013", "Close with <</a>>.", "angle", None, "Replace with </a>", True, True),
    ("T013", 'Tag <<a href="x: a y">>.', "angle", None, 'Replace with <a href="x: a y">', True, True),
    ("T010", "Hello <name?>.", "angle", ["name"], "Make it required: <name>", True, False),  # a new required key
    ("T010", "Hello {name?}.", "adk", ["name"], "Make it required: {name}", True, False),
    ("T010", "Hi <name>, <name?>.", "angle", ["name"], "Make it required: <name>", True, True),
    ("T001", "Hello <zzz>.", "angle", ["name"], "Escape it: <<zzz>>", False, False),  # or a typo: a guess
    ("T020", "Budget: ${budget}.", "adk", None, "Replace with {budget}", False, False),  # the $ goes
    ("T020", "Leg: {trip.leg?}.", "adk", None, "Replace with {trip?}", False, False),  # the whole value
]


@pytest.mark.parametrize(
    ("code", "text", "dialect", "schema", "title", "safe", "preferred"),
    _NAMED,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(_NAMED)],
)
def test_the_edit_a_help_names_is_a_fix(
    code: str, text: str, dialect: str, schema: list[str] | None, title: str, safe: bool, preferred: bool
) -> None:
    """T017's help says `write {PLOT_OUTLINE?} to insert the value`: that edit is a fix, as is every edit a
    help names that no other fix makes. Safe by itself or not (`Fix.safe`), it is preferred (and applied by
    `--fix`) only when it needs no new key, as every fix."""
    (diag,) = [d for d in lint(text, dialect=dialect, schema=schema) if d.code == code]
    fixes = {fix.title: fix for fix in fixes_for(diag, text, dialect=dialect)}
    assert title in fixes, list(fixes)
    fix = fixes[title]
    ((_, _, new),) = fix.edits
    assert f"write {new}" in (diag.help or ""), diag.help  # the help names it
    assert fix.safe is safe
    regions = [Region.whole(text, dialect)]
    assert (applied_fix(diag, list(fixes.values()), text, regions, path="x.prompt") is fix) is preferred
    applied = [f.title for _, f in fix_file("x.prompt", text, [diag], regions).applied]
    assert (title in applied) is preferred
    assert title in [f.title for _, f in fix_file("x.prompt", text, [diag], regions, unsafe=True).applied]


def test_t017_in_agent_code_is_fixed_by_unsafe_fixes_and_renders_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The storyflow sample of google-adk's docs writes `{{current_story}}` in an LlmAgent's instruction, which
    google-adk fills as `{current_story}`: the fix writes that (an unsafe fix: it needs a key the ADK dialect
    read as text); `{{draft?}}` -> `{draft?}` needs none and is applied by `--fix` alone."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.templating]\ninclude = ["*.py"]\n', encoding="utf-8")
    agent = tmp_path / "agent.py"
    agent.write_text(
        "from google.adk.agents import LlmAgent\n\n"
        'writer = LlmAgent(name="writer", model="m", instruction="Write a story.", output_key="current_story")\n'
        "critic = LlmAgent(\n"
        '    name="critic",\n'
        '    model="m",\n'
        '    instruction="""Review the story: {{current_story}}. Earlier draft: {{draft?}}.""",\n'
        ")\n",
        encoding="utf-8",
    )
    project = Project(tmp_path, paths=["agent.py"])
    result = project.lint(["agent.py"])
    assert sorted(d.code for d in result.diagnostics) == ["T017", "T017"]
    (safe,) = plan_fixes(project, result)
    assert "{{current_story}}. Earlier draft: {draft?}." in safe.after
    (everything,) = plan_fixes(project, result, unsafe=True)
    assert '"""Review the story: {current_story}. Earlier draft: {draft?}."""' in everything.after
    assert everything.after.replace("{current_story}", "{{current_story}}").replace("{draft?}", "{{draft?}}") == (
        everything.before
    )


# Suppression comments (T022, T023): the edit the help names, in the comment. (text, code, title, after)
_COMMENTS = [
    ("x = 1  # templating: ignore[T014]\n", "T022", "Remove T014 from the comment", "x = 1\n"),
    ("# templating: ignore[T014]\nx = 1\n", "T022", "Remove T014 from the comment", "x = 1\n"),
    (
        "x = 1  # templating: ignore[T014, T009]\n",
        "T022",
        "Remove T014 from the comment",
        "x = 1  # templating: ignore[T009]\n",
    ),
    ("x = 1  # type: ignore  # templating: ignore[T014]\n", "T022", "Remove T014 from the comment", None),
    ("x = 1  # templating: ignore[T014] (old)\n", "T022", None, None),  # words follow: left to you
    ("x = 1  # templating: ignore[t014]\n", "T023", "Write T014", "x = 1  # templating: ignore[T014]\n"),
    ("x = 1  # templating: ignore[key-never-written]\n", "T023", "Write T014", "x = 1  # templating: ignore[T014]\n"),
    ("x = 1  # templating: ignore[E001]\n", "T023", "Remove E001 from the comment", "x = 1\n"),
    ("x = 1  # templating: ignore[T999]\n", "T023", None, None),  # no edit named
]


@pytest.mark.parametrize(("text", "code", "title", "after"), _COMMENTS, ids=[str(i) for i in range(len(_COMMENTS))])
def test_a_suppression_comment_gets_the_edit_its_finding_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, code: str, title: str | None, after: str | None
) -> None:
    """Offered in the editor; `--fix` edits instructions only and leaves comments as they are."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.templating]\ninclude = ["*.py"]\n', encoding="utf-8")
    (tmp_path / "mod.py").write_text(text, encoding="utf-8")
    project = Project(tmp_path, paths=["mod.py"])
    result = project.lint(["mod.py"])
    diag = next(d for d in result.diagnostics if d.code == code)
    fixes = fixes_for(diag, text)
    if title is None:
        assert fixes == []
        return
    (fix,) = fixes
    assert fix.title == title
    help_ = diag.help or ""
    assert help_.startswith("remove") if title.startswith("Remove") else help_.endswith(title.split()[-1])
    if after is None:
        after = "x = 1  # type: ignore\n"
    fixed = _applied(text, fix)
    assert fixed == after
    (tmp_path / "mod.py").write_text(fixed, encoding="utf-8")
    again = Project(tmp_path, paths=["mod.py"]).lint(["mod.py"])
    assert diag.message not in [d.message for d in again.diagnostics]  # the finding fixed is gone
    assert plan_fixes(project, result) == []  # not a fix of an instruction


_DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules"


@pytest.mark.parametrize(
    ("code", "text", "schema"),
    [("T001", "Hello <nmae>.", ["name"]), ("T009", "Call them <nick>.", ["nick?"]), ("T010", "Hi <name?>.", ["name"])],
    ids=["T001", "T009", "T010"],
)
def test_the_fix_section_of_a_schema_rule_says_what_the_fix_does(code: str, text: str, schema: list[str]) -> None:
    """The rules whose example needs a schema (tests/test_docs.py checks the others): the page's "Fix"
    section names the edit of the first fix and whether it is safe, or starts with "None"."""
    page = (_DOCS / f"{code}.md").read_text(encoding="utf-8")
    section = page.split("## Fix\n", 1)[1].split("\n## ", 1)[0].strip()
    (diag,) = lint(text, schema=schema)
    fixes = fixes_for(diag, text, dialect="angle")
    if not fixes:
        assert section.startswith("None"), section
        return
    start, end, new = fixes[0].edits[0]
    assert f"`{text[start:end]}` -> `{new}`" in section
    assert section.split(":", 1)[1].split()[0].rstrip(".,") == ("safe" if fixes[0].safe else "unsafe") or (
        "otherwise unsafe" in section
    )
