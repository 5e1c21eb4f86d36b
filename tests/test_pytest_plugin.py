"""The pytest plugin, run in pytester sandboxes: files written, compared byte for byte, diffs, unused snapshots."""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import installed

from templating.inputs import DEFAULT_MAX_FILE_SIZE
from templating.linter.discovery import DEFAULT_INCLUDE
from templating.pytest_plugin import PromptTextExtension, SnapshotText, extension_for, lint_report

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
    assert sorted(p.name for p in folder.iterdir()) == ["test_greeting.prompt.snap", "test_report.prompt.snap"]
    # the prompt exactly as the model sees it: bytes, CRLF kept, no trailing newline added
    assert (folder / "test_greeting.prompt.snap").read_bytes() == b"Hello Ada,\r\nyour order A-1 is ."
    report = (folder / "test_report.prompt.snap").read_text(encoding="utf-8")
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
    assert not (pytester.path / "__snapshots__" / "test_prompts" / "test_report.prompt.snap").exists()


def test_missing_key_fails_the_test(pytester: pytest.Pytester) -> None:
    make_tests(pytester, state="{}")
    result = pytester.runpytest("--snapshot-update")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*MissingKeyError*"])


def test_ini_option_moves_snapshots(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ntemplating_snapshot_dir = prompts/snaps\n")
    make_tests(pytester)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=2)
    assert (
        pytester.path / "prompts" / "snaps" / "test_prompts" / "test_greeting.prompt.snap"
    ).is_file()  # at the rootdir
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
    assert (snaps / "a" / "test_m" / "test_x.prompt.snap").read_text(encoding="utf-8") == "Hi Ada"
    assert (snaps / "b" / "test_m" / "test_x.prompt.snap").read_text(encoding="utf-8") == "Hi Grace"
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
    assert (
        root / "snapshots" / "tests" / "test_pytest_plugin" / "test_this_projects_prompt_snapshots.prompt.snap"
    ).is_file()


def test_lint_report_clean() -> None:
    assert lint_report("Hello <name>") == "no findings\n"


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
        "test_names.py::test_x[a<b] would share one snapshot file, test_x[ab].prompt.snap"
    ) in result.stdout.str()
    assert "Give these tests ids that still differ after that" in result.stdout.str()
    written = sorted(path.name for path in folder.iterdir()) if folder.exists() else []
    assert written == (
        ["test_alone.prompt.snap", "test_x[other].prompt.snap"] if options == ["--snapshot-update"] else []
    )


def test_long_ids_cut_to_the_same_file_name_collide(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_long='import pytest\n\n@pytest.mark.parametrize("n", ["a", "b"], ids=["x" * 300 + "1", "x" * 300 + "2"])\n'
        "def test_x(lint_snapshot, snapshot, n):\n    assert lint_snapshot(n) == snapshot\n"
    )
    result = pytester.runpytest("--snapshot-update")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*snapshot name collision*is cut at 243 characters*"])
    assert not (pytester.path / "__snapshots__").exists()


# --- invisible changes at pytest's default verbosity ----------------------------------------------

# 30 lines, so that the whole diff is longer than pytest's default cut (8 lines, 640 characters).
LONG = "".join(f"Line {n}: the agent reads this line of its instructions and does what it says.\n" for n in range(30))

# id, the change made to line 12 (old, new), the marked line(s) that must show without -vv
DEFAULT_VERBOSITY = [
    ("trailing-space", ("says.\n", "says. \n"), ["*received line 13: *does what it says.·"]),
    ("no-break-space", ("its instructions", "its\u00a0instructions"), ["*received line 13: *its<U+00A0>instructions*"]),
    ("zero-width-space", ("reads", "re\u200bads"), ["*received line 13: *re<U+200B>ads*"]),
    ("tab-for-space", ("this line", "this\tline"), ["*received line 13: *this→line*"]),
    ("crlf", ("says.\n", "says.\r\n"), ["*received line 13: *does what it says.\\r"]),
]


@pytest.mark.parametrize(("change", "shown"), [r[1:] for r in DEFAULT_VERBOSITY], ids=[r[0] for r in DEFAULT_VERBOSITY])
def test_an_invisible_change_shows_at_default_verbosity(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, change: tuple[str, str], shown: list[str]
) -> None:
    for variable in ("CI", "BUILD_NUMBER"):  # pytest never cuts its report on CI: make sure it does here
        monkeypatch.delenv(variable, raising=False)
    lines = LONG.splitlines(keepends=True)
    changed = "".join(lines[:12]) + lines[12].replace(*change) + "".join(lines[13:])
    source = "def test_p(prompt_snapshot, snapshot):\n    assert prompt_snapshot(TEXT, {}) == snapshot\n"
    pytester.makepyfile(test_p=f"TEXT = {LONG!r}\n" + source)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=1)
    pytester.makepyfile(test_p=f"TEXT = {changed!r}\n" + source)
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*1 line differs only in characters you cannot see*", "*snapshot line 13: *"])
    result.stdout.fnmatch_lines(shown)
    assert "Full output truncated" in result.stdout.str()  # the report was cut, after the marked line


# --- where snapshots are, and what pytest collects -------------------------------------------------

PROMPT_TEST = "def test_x(prompt_snapshot, snapshot):\n    assert prompt_snapshot(TEXT, {}) == snapshot\n"
SNAP = "__snapshots__/test_m/test_x.prompt.snap"  # as failures name it: relative to the rootdir


def _snapshot(pytester: pytest.Pytester, name: str = "test_x.prompt.snap") -> Path:
    return pytester.path / "__snapshots__" / "test_m" / name


# id, the prompt, bytes written over its snapshot before a plain `pytest` (None: left as written), outcomes
NEVER_COLLECTED: list[tuple[str, str, bytes | None, dict[str, int]]] = [
    ("doctest-prompt", "Example:\n>>> raise SystemExit(3)\n>>> 1/0\n", None, {"passed": 1}),
    ("doctest-prompt-changed", "Example:\n>>> 1/0\n", b"Example:\n>>> import os; os._exit(3)\n", {"failed": 1}),
    ("not-utf-8", "caf\u00e9\n", b"caf\xe9\n\xff\xfe\n", {"failed": 1}),
]


@pytest.mark.parametrize(
    ("text", "written", "outcomes"), [r[1:] for r in NEVER_COLLECTED], ids=[r[0] for r in NEVER_COLLECTED]
)
def test_snapshot_files_are_never_collected_by_pytest(
    pytester: pytest.Pytester, text: str, written: bytes | None, outcomes: dict[str, int]
) -> None:
    pytester.makepyfile(test_m=f"TEXT = {text!r}\n" + PROMPT_TEST)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=1)
    if written is not None:
        _snapshot(pytester).write_bytes(written)
    # pytest's defaults: python_files test_*.py / *_test.py, --doctest-glob test*.txt
    collected = pytester.runpytest("--collect-only", "-q")
    assert [line for line in collected.outlines if "::" in line or ".snap" in line] == ["test_m.py::test_x"]
    assert "1 test collected" in collected.stdout.str()
    assert "error" not in collected.stdout.str().lower()
    result = pytester.runpytest()
    result.assert_outcomes(**outcomes)  # no doctest ran, no collection error
    if outcomes.get("failed"):
        result.stdout.fnmatch_lines(["*--- snapshot", "*+++ received"])


# What collects or reads a file by its name: pytest's defaults (python_files, --doctest-glob), the linter's.
NAME_PATTERNS = [
    ("pytest-python-files", ["test_*.py", "*_test.py"]),
    ("pytest-doctest-glob", ["test*.txt"]),
    ("templating-lint-include", list(DEFAULT_INCLUDE)),
]


@pytest.mark.parametrize("patterns", [r[1] for r in NAME_PATTERNS], ids=[r[0] for r in NAME_PATTERNS])
@pytest.mark.parametrize("test_name", ["test_x", "test_x[a-b]", "x" * 243])
def test_a_snapshot_file_name_matches_no_collecting_pattern(patterns: list[str], test_name: str) -> None:
    name = f"{test_name}.{PromptTextExtension.file_extension}"
    assert not [pattern for pattern in patterns if fnmatch.fnmatch(name, pattern.removeprefix("**/"))]
    assert fnmatch.fnmatch(f"{test_name}.txt", "test*.txt") == test_name.startswith("test")  # the old name did


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _folder(path: Path) -> None:
    path.mkdir()


def _too_large(path: Path) -> None:
    path.write_bytes(b"x" * (DEFAULT_MAX_FILE_SIZE + 1))


def _outside(path: Path, name: str) -> Path:
    """A path beside the pytester project that holds `path` (`__snapshots__/test_m/<file>`), of its own."""
    project = path.parents[2]
    return project.parent / f"{project.name}-{name}"


def _link_out(path: Path) -> None:
    outside = _outside(path, "outside.txt")
    outside.write_text("Hi", encoding="utf-8")
    path.symlink_to(outside)


# id, what is put where the snapshot goes, what the failure says about it, whether a regression could hang
# or exhaust the run (then pytest runs in a process of its own, with a time-out)
NOT_READ: list[tuple[str, Callable[[Path], None], str, bool]] = [
    ("fifo", _fifo, "not a regular file (a device, a pipe or a socket): not read", True),
    ("link-to-dev-zero", _dev_zero, "a symbolic link out of the project root (to /dev/zero): not read", True),
    ("folder", _folder, "a folder, not a file: not read", False),
    ("too-large", _too_large, f"more than the limit of {DEFAULT_MAX_FILE_SIZE} bytes", False),
    ("link-out-of-rootdir", _link_out, "a symbolic link out of the project root", False),
]


@pytest.mark.slow  # a pytest run in a subprocess each (a FIFO must not hang this one)
@pytest.mark.parametrize("update", [False, True], ids=["check", "update"])
@pytest.mark.parametrize(("make", "reason", "hostile"), [r[1:] for r in NOT_READ], ids=[r[0] for r in NOT_READ])
def test_a_snapshot_that_is_not_a_regular_file_fails_naming_it(
    pytester: pytest.Pytester, make: Callable[[Path], None], reason: str, hostile: bool, update: bool
) -> None:
    pytester.makepyfile(test_m="TEXT = 'Hi'\n" + PROMPT_TEST)
    path = _snapshot(pytester)
    path.parent.mkdir(parents=True)
    make(path)
    before = os.lstat(path)
    options = ["--snapshot-update"] if update else []
    # A read that blocked on the FIFO would hang this suite, one of /dev/zero fill its memory: a time-out instead.
    result = pytester.runpytest_subprocess(*options, timeout=300) if hostile else pytester.runpytest(*options)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*SnapshotFileError: snapshot file {SNAP}: *{reason}*; remove or replace it"])
    after = os.lstat(path)
    assert (after.st_mode, after.st_ino, after.st_size) == (before.st_mode, before.st_ino, before.st_size)


def test_a_prompt_too_large_to_read_back_is_not_written() -> None:
    with pytest.raises(ValueError, match=f"a snapshot holds at most {DEFAULT_MAX_FILE_SIZE} bytes"):
        PromptTextExtension().serialize("x" * (DEFAULT_MAX_FILE_SIZE + 1))


# id, the ini value (OUT: a folder beside the rootdir; LINK: a link in the rootdir to it)
OUTSIDE_DIRS = [("parent", "../NAME-outside"), ("absolute", "OUT"), ("link-out", "LINK/snaps")]


@pytest.mark.parametrize("value", [r[1] for r in OUTSIDE_DIRS], ids=[r[0] for r in OUTSIDE_DIRS])
def test_a_snapshot_dir_outside_the_rootdir_is_a_usage_error(pytester: pytest.Pytester, value: str) -> None:
    outside = pytester.path.parent / f"{pytester.path.name}-outside"
    outside.mkdir()
    (pytester.path / "LINK").symlink_to(outside)
    value = value.replace("NAME", pytester.path.name).replace("OUT", str(outside))
    pytester.makeini(f"[pytest]\ntemplating_snapshot_dir = {value}\n")
    pytester.makepyfile(test_m="TEXT = 'Hi'\n" + PROMPT_TEST)
    result = pytester.runpytest("--snapshot-update")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*templating_snapshot_dir = '{value}' is outside the rootdir {pytester.path}*name a folder under it*"]
    )
    assert not list(outside.iterdir())


def test_a_test_outside_the_rootdir_has_its_snapshots_refused(pytester: pytest.Pytester) -> None:
    (pytester.path / "root").mkdir()
    (pytester.path / "elsewhere").mkdir()
    (pytester.path / "elsewhere" / "test_m.py").write_text("TEXT = 'Hi'\n" + PROMPT_TEST, encoding="utf-8")
    result = pytester.runpytest("--snapshot-update", "--rootdir=root", "elsewhere/test_m.py")
    result.assert_outcomes(failed=1)
    snap = pytester.path / "elsewhere" / SNAP
    result.stdout.fnmatch_lines(
        [f"*SnapshotFileError: snapshot file {snap} is outside the rootdir {pytester.path / 'root'}: snapshots*"]
    )
    assert not (pytester.path / "elsewhere" / "__snapshots__").exists()


def _link_to_inside(pytester: pytest.Pytester, path: Path) -> list[Path]:
    target = pytester.path / "kept.txt"
    target.write_text("Hello", encoding="utf-8")
    path.parent.mkdir(parents=True)
    path.symlink_to(target)
    return [target]


def _dangling_link_inside(pytester: pytest.Pytester, path: Path) -> list[Path]:
    target = pytester.path / "created.txt"
    path.parent.mkdir(parents=True)
    path.symlink_to(target)
    return [target]


def _dangling_link_out(pytester: pytest.Pytester, path: Path) -> list[Path]:
    target = _outside(path, "created.txt")
    path.parent.mkdir(parents=True)
    path.symlink_to(target)
    return [target]


def _folder_link_out(pytester: pytest.Pytester, path: Path) -> list[Path]:
    outside = _outside(path, "snapshots")
    (outside / "test_m").mkdir(parents=True)
    (pytester.path / "__snapshots__").symlink_to(outside)
    unused = outside / "test_m" / "test_gone.prompt.snap"  # no test reads it: not deleted outside the rootdir
    unused.write_text("Bye", encoding="utf-8")
    return [outside / "test_m" / "test_x.prompt.snap", unused]


# id, what is made where the snapshot goes (it returns the files that must stay as they were), the failure
# (a link out of the rootdir is not even read; one inside is read, and not written through)
THROUGH_LINKS: list[tuple[str, Callable[[pytest.Pytester, Path], list[Path]], str]] = [
    (
        "file-link-inside",
        _link_to_inside,
        " is a symbolic link (to *kept.txt): snapshots are never written through one*",
    ),
    ("dangling-link-inside", _dangling_link_inside, " is a symbolic link (to *created.txt): snapshots are never*"),
    ("dangling-link-out", _dangling_link_out, ": a symbolic link out of the project root (to *created.txt): not read*"),
    ("folder-link-out", _folder_link_out, ": a symbolic link out of the project root (to *snapshots/test_m/test_x*"),
]


@pytest.mark.parametrize(("make", "said"), [r[1:] for r in THROUGH_LINKS], ids=[r[0] for r in THROUGH_LINKS])
def test_update_never_writes_through_a_link_or_outside_the_rootdir(
    pytester: pytest.Pytester, make: Callable[[pytest.Pytester, Path], list[Path]], said: str
) -> None:
    pytester.makepyfile(test_m="TEXT = 'Hi'\n" + PROMPT_TEST)
    path = _snapshot(pytester)
    kept = make(pytester, path)
    before = [file.read_bytes() if file.exists() else None for file in kept]
    result = pytester.runpytest("--snapshot-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*SnapshotFileError: snapshot file {SNAP}{said}"])
    assert [file.read_bytes() if file.exists() else None for file in kept] == before


# --- snapshots under their old name (.txt) ------------------------------------------------------------

# id, ini folder ("": __snapshots__ beside the test), the old file's text, options, outcomes, the file after
MIGRATIONS: list[tuple[str, str, str, list[str], dict[str, int], str | None]] = [
    ("check-fails", "", "Hi", [], {"failed": 1}, None),
    ("update-renames", "", "Hi", ["--snapshot-update"], {"passed": 1}, "Hi"),
    ("update-renames-then-updates", "", "Hello", ["--snapshot-update"], {"passed": 1}, "Hi"),
    ("doctest-not-run", "", "Hi\n>>> raise SystemExit(3)\n", [], {"failed": 1}, None),
    ("ini-folder-check-fails", "snaps", "Hi\n>>> 1/0\n", [], {"failed": 1}, None),
    ("ini-folder-update-renames", "snaps", "Hi", ["--snapshot-update"], {"passed": 1}, "Hi"),
]


@pytest.mark.parametrize(
    ("folder", "old_text", "options", "outcomes", "after"),
    [r[1:] for r in MIGRATIONS],
    ids=[r[0] for r in MIGRATIONS],
)
def test_a_snapshot_under_its_old_name_is_migrated(
    pytester: pytest.Pytester,
    folder: str,
    old_text: str,
    options: list[str],
    outcomes: dict[str, int],
    after: str | None,
) -> None:
    if folder:
        pytester.makeini(f"[pytest]\ntemplating_snapshot_dir = {folder}\n")
    pytester.makepyfile(test_m="TEXT = 'Hi'\n" + PROMPT_TEST)
    where = pytester.path / (folder or "__snapshots__") / "test_m"
    where.mkdir(parents=True)
    old, new = where / "test_x.txt", where / "test_x.prompt.snap"
    old.write_text(old_text, encoding="utf-8")
    result = pytester.runpytest(*options)
    result.assert_outcomes(**outcomes)  # a doctest in the old file is not collected either
    if after is None:
        named = f"{folder or '__snapshots__'}/test_m/test_x"
        result.stdout.fnmatch_lines(
            [
                f"*SnapshotFileError: snapshot file {named}.prompt.snap does not exist, but {named}.txt does: "
                "snapshots were renamed from .txt (a doctest file to pytest) to .prompt.snap after templating 0.1. Run "
                "`pytest --snapshot-update` to rename them, or rename them yourself (git mv)"
            ]
        )
        assert old.read_text(encoding="utf-8") == old_text
        assert not new.exists()
    else:
        assert not old.exists()
        assert new.read_text(encoding="utf-8") == after
        pytester.runpytest().assert_outcomes(passed=1)


# --- preview_snapshot: what each agent of an app sees ---------------------------------------------------------------

needs_adk = pytest.mark.skipif(
    os.environ.get("TEMPLATING_REQUIRE_ADK") != "1" and not installed("google.adk"),
    reason="google-adk is not installed (pip install '.[adk]')",
)

SHOP_AGENT = """
from google.adk.agents import Agent, SequentialAgent

writer = Agent(
    name="writer",
    model="gemini-2.5-flash",
    instruction="{INSTRUCTION}",
    output_key="draft",
)
critic = Agent(name="critic", model="gemini-2.5-flash", instruction="Review this draft: {draft}")
root_agent = SequentialAgent(name="shop", sub_agents=[writer, critic])
"""
SHOP_TEXT = "Write a product description of {topic} for {user:name}. " * 4
PREVIEW_TESTS = """
def test_shop(preview_snapshot, snapshot):
    assert preview_snapshot("shop", {"topic": "tea", "user:name": "Ada"}) == snapshot
    assert preview_snapshot("shop", {"topic": "cups", "user:name": "Bo"}) == snapshot
"""


def make_shop(pytester: pytest.Pytester, instruction: str = SHOP_TEXT) -> None:
    (pytester.path / "shop").mkdir(exist_ok=True)
    (pytester.path / "shop" / "__init__.py").write_text("from . import agent\n", encoding="utf-8")
    agent = SHOP_AGENT.replace("{INSTRUCTION}", instruction)
    (pytester.path / "shop" / "agent.py").write_text(agent, encoding="utf-8")
    pytester.makepyfile(test_shop=PREVIEW_TESTS)


@needs_adk
def test_a_preview_snapshot_holds_each_agents_request_for_each_state(pytester: pytest.Pytester) -> None:
    make_shop(pytester)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=1)
    folder = pytester.path / "__snapshots__" / "test_shop"
    assert sorted(p.name for p in folder.iterdir()) == ["test_shop.1.prompt.snap", "test_shop.prompt.snap"]
    first = (folder / "test_shop.prompt.snap").read_text(encoding="utf-8")
    assert "\u2502 Write a product description of tea for Ada. " in first
    critic = (
        "\u2502 Review this draft: \u27e8output of writer\u27e9\n\u2502\n\u2502 You are an agent. Your internal name"
    )
    assert critic in first
    assert "of cups for Bo" in (folder / "test_shop.1.prompt.snap").read_text(encoding="utf-8")
    pytester.runpytest().assert_outcomes(passed=1)
    # what an agent sees changes: the test fails, with a diff of that agent's text
    make_shop(pytester, SHOP_TEXT.replace("product description", "short poem"))
    result = pytester.runpytest("-vv")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*-\u2502 Write a product description of tea*", "*+\u2502 Write a short poem of tea*"])


@needs_adk
def test_an_update_that_empties_an_instruction_is_refused_unless_allowed(pytester: pytest.Pytester) -> None:
    make_shop(pytester)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=1)
    snapshot = pytester.path / "__snapshots__" / "test_shop" / "test_shop.prompt.snap"
    kept = snapshot.read_bytes()
    make_shop(pytester, "Write.")
    result = pytester.runpytest("--snapshot-update")
    result.assert_outcomes(passed=1, errors=1)  # fails as it ends, once all its snapshots are compared
    result.stdout.fnmatch_lines(
        ["*--snapshot-update refused: an agent's instruction would lose more than 50% of its text (writer *"]
    )
    assert snapshot.read_bytes() == kept  # nothing written, nothing deleted
    assert snapshot.with_name("test_shop.1.prompt.snap").is_file()
    # a smaller change passes the guard; the share is configurable; the flag lets anything through
    pytester.makeini("[pytest]\ntemplating_preview_max_loss = 0.99\n")
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=1)
    assert b"\xe2\x94\x82 Write.\n" in snapshot.read_bytes()
    make_shop(pytester, SHOP_TEXT)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=1)
    pytester.makeini("[pytest]\n")
    make_shop(pytester, "Write.")
    pytester.runpytest("--snapshot-update", "--templating-allow-shrink").assert_outcomes(passed=1)
    assert b"\xe2\x94\x82 Write.\n" in snapshot.read_bytes()


@pytest.mark.parametrize("value", ["1.5", "-0.1", "half"])
def test_a_bad_shrink_share_stops_the_run(pytester: pytest.Pytester, value: str) -> None:
    pytester.makeini(f"[pytest]\ntemplating_preview_max_loss = {value}\n")
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*templating_preview_max_loss = '{value}': give a share between 0 and 1*"])
