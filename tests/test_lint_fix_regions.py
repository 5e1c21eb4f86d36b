"""templating.linter.fix_regions: the fix `--fix` applies (`fix_file`) is the one the language server prefers
(`applied_fix`), and an unsafe fix is never it."""

from __future__ import annotations

import pytest

from templating.linter import lint
from templating.linter.fix_regions import Region, applied_fix, fix_file
from templating.linter.fixes import fixes_for


@pytest.mark.parametrize(
    ("text", "code", "title", "preferred"),
    [
        ("Show an <example>x</example>.", "T007", "Escape the tag: <<example>>", True),
        ("Thanks < name >, <name>.", "T002", "Replace with <name>", True),  # name is required already
        ("Thanks < name >.", "T002", "Replace with <name>", False),  # a new required key
        ("Thanks <name??>.", "T006", "Replace with <name?>", True),
    ],
    ids=["escape-tag", "close-known-key", "close-new-key", "doubled-question-mark"],
)
def test_the_fix_applied_is_the_safe_one(text: str, code: str, title: str, preferred: bool) -> None:
    """`applied_fix` (the server's preferred fix) is the fix `fix_file` applies without --unsafe-fixes."""
    (diag,) = [d for d in lint(text) if d.code == code]
    regions = [Region.whole(text, "angle")]
    fixes = fixes_for(diag, text, dialect="angle")
    assert [fix.title for fix in fixes][:1] == [title]
    chosen = applied_fix(diag, fixes, text, regions, path="support.prompt")
    assert (chosen is not None and chosen.title == title) == preferred
    applied = fix_file("support.prompt", text, [diag], regions).applied
    assert [fix for _, fix in applied] == ([chosen] if chosen is not None else [])


def test_the_unsafe_fix_is_never_the_one_applied() -> None:
    text = "Call them <nick>."
    (diag,) = lint(text, schema=["nick?"])
    fixes = fixes_for(diag, text, dialect="angle")
    assert [fix.title for fix in fixes] == ["Make it optional: <nick?>"]
    assert applied_fix(diag, fixes, text, [Region.whole(text, "angle")], path="support.prompt") is None
