"""The pytest plugin, run in pytester sandboxes: files written, compared byte for byte, diffs, unused snapshots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from templating.pytest_plugin import PromptTextExtension, SnapshotText, extension_for, lint_report, marked_diff

TEST_FILE = """
def test_greeting(prompt_snapshot, snapshot):
    assert prompt_snapshot("Hello <user:name>,\\r\\nyour order <order_id> is <status?>.", STATE) == snapshot

def test_report(lint_snapshot, snapshot):
    assert lint_snapshot("Hi < name > and <usr:id>", schema=["name"]) == snapshot
"""


def make_tests(pytester: pytest.Pytester, state: str = '{"user:name": "Ada", "order_id": "A-1"}') -> None:
    pytester.makepyfile(test_prompts=f"STATE = {state}\n" + TEST_FILE)


def test_plugin_is_registered_by_entry_point(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--fixtures")
    result.stdout.fnmatch_lines(["*prompt_snapshot*", "*lint_snapshot*"])


def test_snapshots_are_plain_text_files_one_per_test(pytester: pytest.Pytester) -> None:
    make_tests(pytester)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=2)
    folder = pytester.path / "__snapshots__" / "test_prompts"
    assert sorted(p.name for p in folder.iterdir()) == ["test_greeting.txt", "test_report.txt"]
    # the prompt exactly as the model sees it: bytes, CRLF kept, no trailing newline added
    assert (folder / "test_greeting.txt").read_bytes() == b"Hello Ada,\r\nyour order A-1 is ."
    report = (folder / "test_report.txt").read_text(encoding="utf-8")
    assert report.startswith("1:4: T002 warning: '< name >' has whitespace inside")
    assert "1:17: T003 error: unknown scope 'usr:'" in report
    pytester.runpytest().assert_outcomes(passed=2)


def test_a_changed_prompt_fails_with_a_text_diff(pytester: pytest.Pytester) -> None:
    make_tests(pytester)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=2)
    make_tests(pytester, state='{"user:name": "Grace", "order_id": "A-1"}')
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*-Hello Ada,*", "*+Hello Grace,*"])
    result.stdout.fnmatch_lines(["*--- snapshot", "*+++ received", "* your order A-1 is .  (no newline at end)"])


def test_unused_snapshots_are_reported(pytester: pytest.Pytester) -> None:
    make_tests(pytester)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=2)
    pytester.makepyfile(
        test_prompts='STATE = {"user:name": "Ada", "order_id": "A-1"}\n'
        "def test_greeting(prompt_snapshot, snapshot):\n"
        '    assert prompt_snapshot("Hello <user:name>,\\r\\nyour order <order_id> is <status?>.", STATE) == snapshot\n'
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*1 snapshot unused*"])
    assert result.ret == 1  # syrupy fails a run with unused snapshots unless told otherwise
    result = pytester.runpytest("--snapshot-update")
    result.stdout.fnmatch_lines(["*1 unused snapshot deleted*"])
    assert not (pytester.path / "__snapshots__" / "test_prompts" / "test_report.txt").exists()


def test_missing_key_fails_the_test(pytester: pytest.Pytester) -> None:
    make_tests(pytester, state="{}")
    result = pytester.runpytest("--snapshot-update")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*MissingKeyError*"])


def test_ini_option_moves_snapshots(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ntemplating_snapshot_dir = prompts/snaps\n")
    make_tests(pytester)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=2)
    assert (pytester.path / "prompts" / "snaps" / "test_prompts" / "test_greeting.txt").is_file()  # at the rootdir
    assert not (pytester.path / "__snapshots__").exists()
    pytester.runpytest().assert_outcomes(passed=2)


def test_same_file_names_in_different_folders_do_not_collide(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ntemplating_snapshot_dir = snaps\n")
    for folder, name in (("a", "Ada"), ("b", "Grace")):
        (pytester.path / "tests" / folder).mkdir(parents=True)
        (pytester.path / "tests" / folder / "test_m.py").write_text(
            "def test_x(prompt_snapshot, snapshot):\n"
            f"    assert prompt_snapshot('Hi <n>', {{'n': '{name}'}}) == snapshot\n",
            encoding="utf-8",
        )
    pytester.runpytest("--snapshot-update", "-p", "no:cacheprovider", "--import-mode=importlib").assert_outcomes(
        passed=2
    )
    snaps = pytester.path / "snaps" / "tests"
    assert (snaps / "a" / "test_m" / "test_x.txt").read_text(encoding="utf-8") == "Hi Ada"
    assert (snaps / "b" / "test_m" / "test_x.txt").read_text(encoding="utf-8") == "Hi Grace"
    pytester.runpytest("-p", "no:cacheprovider", "--import-mode=importlib").assert_outcomes(passed=2)


@pytest.mark.parametrize("fixture", ["prompt_snapshot", "lint_snapshot"])
def test_snapshot_on_the_left_fails_instead_of_writing_amber(pytester: pytest.Pytester, fixture: str) -> None:
    call = "prompt_snapshot('Hi <n>', {'n': 'Ada'})" if fixture == "prompt_snapshot" else "lint_snapshot('< n >')"
    pytester.makepyfile(test_reversed=f"def test_x({fixture}, snapshot):\n    assert snapshot == {call}\n")
    result = pytester.runpytest("--snapshot-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*TypeError: prompt_snapshot(...) and lint_snapshot(...) go on the left*"])
    assert not list(pytester.path.rglob("*.ambr"))
    assert not (pytester.path / "__snapshots__").exists()


def test_this_projects_prompt_snapshots(prompt_snapshot: Any, snapshot: Any) -> None:
    example = Path(__file__).resolve().parent.parent / "examples"
    state = json.loads((example / "state.json").read_text(encoding="utf-8"))
    assert prompt_snapshot((example / "support_agent.txt").read_text(encoding="utf-8"), state) == snapshot


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [("a", "a", True), ("a", "b", False)],
    ids=["same", "different"],
)
def test_snapshot_text_compares_with_text(left: str, right: str, equal: bool) -> None:
    text = SnapshotText(left, PromptTextExtension, set())
    assert (text == right) is equal
    assert (text == SnapshotText(right, PromptTextExtension, set())) is equal
    assert str(text) == left


def test_extension_serializes_text_only() -> None:
    assert PromptTextExtension().serialize("é\r\n") == "é\r\n".encode()
    with pytest.raises(TypeError, match="prompt snapshots take str"):
        PromptTextExtension().serialize(3)
    assert extension_for("") is PromptTextExtension
    assert extension_for("/x") is extension_for("/x")
    with pytest.raises(TypeError, match="go on the left"):
        _ = SnapshotText("a", PromptTextExtension, set()).wrong_side


def test_this_projects_prompt_snapshots_live_under_their_test_path() -> None:
    root = Path(__file__).resolve().parent.parent
    assert (root / "snapshots" / "tests" / "test_pytest_plugin" / "test_this_projects_prompt_snapshots.txt").is_file()


def test_lint_report_clean() -> None:
    assert lint_report("Hello <name>") == "no findings\n"


# --- invisible changes are shown --------------------------------------------------------------

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
    ("change", "shown"),
    [("stays. ", "*+Line 3 stays.·"), ("st\\u200bays.", "*+Line 3 st<U+200B>ays.")],
    ids=["trailing-space", "zero-width-space"],
)
def test_a_failing_snapshot_shows_the_invisible_change(pytester: pytest.Pytester, change: str, shown: str) -> None:
    source = (
        "def test_p(prompt_snapshot, snapshot):\n"
        '    assert prompt_snapshot("Line 3 <w>\\nLine 4", {"w": W}) == snapshot\n'
    )
    pytester.makepyfile(test_p='W = "stays."\n' + source)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=1)
    pytester.makepyfile(test_p=f'W = "{change}"\n' + source)
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*{ONLY_UNSEEN}*", "*--- snapshot", "*+++ received", "*-Line 3 stays.", shown])


# --- snapshot names that would share a file -----------------------------------------------------

COLLIDING = """
import pytest

@pytest.mark.parametrize("name", ["a/b", "ab", "a<b", "other"])
def test_x(prompt_snapshot, snapshot, name):
    assert prompt_snapshot("Hi <n>", {"n": name}) == snapshot

def test_alone(prompt_snapshot, snapshot):
    assert prompt_snapshot("Hi", {}) == snapshot
"""


@pytest.mark.parametrize(
    "options", [["--snapshot-update"], [], ["--snapshot-update", "-k", "a/b"]], ids=["update", "check", "update-one"]
)
def test_ids_that_would_share_a_snapshot_file_fail_naming_each_other(
    pytester: pytest.Pytester, options: list[str]
) -> None:
    pytester.makepyfile(test_names=COLLIDING)
    result = pytester.runpytest(*options)
    folder = pytester.path / "__snapshots__" / "test_names"
    if options == ["--snapshot-update"]:
        result.assert_outcomes(passed=2, errors=3)  # the others are written
    elif options:
        result.assert_outcomes(errors=1)  # -k keeps one of them: it still may not take the shared file
    else:
        result.assert_outcomes(failed=2, errors=3)  # no snapshots yet
    assert (
        "snapshot name collision: test_names.py::test_x[a/b], test_names.py::test_x[ab], "
        "test_names.py::test_x[a<b] would share one snapshot file, test_x[ab].txt"
    ) in result.stdout.str()
    assert "Give these tests ids that still differ after that" in result.stdout.str()
    written = sorted(path.name for path in folder.iterdir()) if folder.exists() else []
    assert written == (["test_alone.txt", "test_x[other].txt"] if options == ["--snapshot-update"] else [])


def test_long_ids_cut_to_the_same_file_name_collide(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_long='import pytest\n\n@pytest.mark.parametrize("n", ["a", "b"], ids=["x" * 300 + "1", "x" * 300 + "2"])\n'
        "def test_x(lint_snapshot, snapshot, n):\n    assert lint_snapshot(n) == snapshot\n"
    )
    result = pytester.runpytest("--snapshot-update")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*snapshot name collision*is cut at 251 characters*"])
    assert not (pytester.path / "__snapshots__").exists()
