"""Diffs of snapshot text that mark what cannot be seen (the plugin's reports: tests/test_pytest_plugin.py)."""

from __future__ import annotations

import pytest

from templating.snapshot_diff import marked_diff

ONLY_UNSEEN = "1 line differs only in characters you cannot see"
OLD = "Line 1\nLine 2\nLine 3 stays.\nLine 4\n"

# id, received text (OLD changed on one line), the changed line as the diff shows it
INVISIBLE = [
    ("trailing-space", OLD.replace("stays.", "stays. "), "+Line 3 stays.·"),
    ("trailing-spaces", OLD.replace("stays.", "stays.   "), "+Line 3 stays.···"),
    ("leading-space", OLD.replace("Line 3", " Line 3"), "+·Line 3 stays."),
    ("tab-for-space", OLD.replace("3 stays", "3\tstays"), "+Line 3→stays."),
    ("tab-indent-for-spaces", OLD.replace("Line 3", "\tLine 3"), "+→Line 3 stays."),
    ("carriage-return", OLD.replace("stays.", "stays.\r"), "+Line 3 stays.\\r"),
    ("crlf-line-endings", OLD.replace("\n", "\r\n"), "+Line 3 stays.\\r"),
    ("no-break-space", OLD.replace("3 stays", "3\u00a0stays"), "+Line 3<U+00A0>stays."),
    ("zero-width-space", OLD.replace("stays", "st\u200bays"), "+Line 3 st<U+200B>ays."),
    ("zero-width-joiner", OLD.replace("stays", "stays\u200d"), "+Line 3 stays<U+200D>."),
    ("byte-order-mark", OLD.replace("Line 3", "\ufeffLine 3"), "+<U+FEFF>Line 3 stays."),
    ("right-to-left-mark", OLD.replace("stays", "\u200fstays"), "+Line 3 <U+200F>stays."),
    ("escape-control", OLD.replace("stays", "\x1bstays"), "+Line 3 <U+001B>stays."),
    ("nul", OLD.replace("stays.", "stays.\x00"), "+Line 3 stays.<U+0000>"),
    ("em-space", OLD.replace("3 stays", "3\u2003stays"), "+Line 3<U+2003>stays."),
    ("line-separator", OLD.replace("stays.", "stays.\u2028"), "+Line 3 stays.<U+2028>"),
    ("variation-selector", OLD.replace("stays", "s\ufe0ftays"), "+Line 3 s<U+FE0F>tays."),
]


@pytest.mark.parametrize(("new", "shown"), [c[1:] for c in INVISIBLE], ids=[c[0] for c in INVISIBLE])
def test_a_change_you_cannot_see_is_marked_and_said(new: str, shown: str) -> None:
    diff = marked_diff(OLD, new)
    assert diff[0].startswith(("1 line differs", "4 lines differ"))  # CRLF changes every line
    assert "only in characters you cannot see (whitespace, control, zero-width, no-break, line endings)" in diff[0]
    assert "· a space at the start or end of a line, → a tab" in diff[1]
    assert shown in diff
    assert "-Line 3 stays." in diff


def test_a_visible_change_gets_no_note() -> None:
    diff = marked_diff(OLD, OLD.replace("stays", "goes"))
    assert diff[:2] == ["--- snapshot", "+++ received"]
    assert "-Line 3 stays." in diff
    assert "+Line 3 goes." in diff
    assert marked_diff(OLD, OLD) == []


def test_invisible_characters_in_a_visible_change_are_still_marked() -> None:
    diff = marked_diff(OLD, OLD.replace("stays.", "goes.\u200b "))
    assert diff[0] == "invisible characters in changed lines are marked:"
    assert "+Line 3 goes.<U+200B>·" in diff


def test_spaces_inside_a_line_stay_spaces() -> None:
    diff = marked_diff("a b\n", "a  b\n")
    assert diff[-2:] == ["-a b", "+a  b"]
    assert diff[0].startswith("1 line differs only")


@pytest.mark.parametrize(
    ("new", "lead"),
    [
        (
            "a·\nb·\nc·\n".replace("·", " "),
            [
                "  snapshot line 1: a",
                "  received line 1: a·",
                "  snapshot line 2: b",
                "  received line 2: b·",
                "  (1 more such line in the diff below)",
            ],
        ),
        ("x" * 100 + " \n", ["  snapshot line 1: …" + "x" * 20, "  received line 1: …" + "x" * 20 + "·"]),
        ("x" * 100 + "\u00a0\n", ["  snapshot line 1: …" + "x" * 20, "  received line 1: …" + "x" * 20 + "<U+00A0>"]),
    ],
    ids=["three-lines-two-shown", "long-line-excerpt", "long-line-no-break-space"],
)
def test_lines_that_differ_unseen_lead_the_diff(new: str, lead: list[str]) -> None:
    old = "a\nb\nc\n" if new.startswith("a") else "x" * 100 + "\n"
    diff = marked_diff(old, new)
    assert diff[1].startswith("    · a space at the start or end of a line")
    shown = diff[2 : 2 + len(lead)]
    assert shown == lead
    assert diff[2 + len(lead)] == "--- snapshot"
    assert all(len(line) <= 100 for line in shown)  # an excerpt, never the whole long line
