"""The command line as a whole: entry points, help, reading inputs (stdin, pipes, devices, sizes) and writing
outputs, and clear errors instead of tracebacks. Each command has its own file: tests/test_cli_<command>.py."""

from __future__ import annotations

import argparse
import os
import stat
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from cli_support import EXAMPLE, EXAMPLE_STATE, ROOT, cli, run, write, write_bytes

from templating.cli.parser import build_parser
from templating.inputs import DEFAULT_MAX_FILE_SIZE
from templating.linter import DOCS_URL

BAD_INPUT = [
    ("missing-file", lambda p: ["render", str(p / "nope.txt")], "template file not found"),
    ("directory", lambda p: ["keys", str(p)], "template path is a directory"),
    (
        "too-large",
        lambda p: ["render", write(p, "t.txt", "a" * (DEFAULT_MAX_FILE_SIZE + 1))],
        f"2000001 bytes, more than the limit of {DEFAULT_MAX_FILE_SIZE} bytes",
    ),
    (
        "too-large-state",
        lambda p: [
            "render",
            write(p, "t.txt", "<a>"),
            "--state",
            write(p, "s.json", " " * (DEFAULT_MAX_FILE_SIZE + 1)),
        ],
        f"s.json: 2000001 bytes, more than the limit of {DEFAULT_MAX_FILE_SIZE} bytes",
    ),
    ("not-utf8", lambda p: ["keys", write_bytes(p, "t.txt", b"\xff\xfe<a>")], "template file is not valid UTF-8"),
    (
        "bad-json",
        lambda p: ["render", write(p, "t.txt", "<a>"), "--state", write(p, "s.json", "{oops")],
        "state is not valid JSON",
    ),
    (
        "json-not-object",
        lambda p: ["render", write(p, "t.txt", "<a>"), "--state", write(p, "s.json", "[1]")],
        "state must be a JSON object (key -> value), not an array",
    ),
    (
        "missing-state",
        lambda p: ["render", write(p, "t.txt", "<a>"), "--state", str(p / "none.json")],
        "state file not found",
    ),
    ("both-stdin", lambda p: ["render", "-", "--state", "-"], "cannot both be read from stdin"),
    ("bad-missing-choice", lambda p: ["render", write(p, "t.txt", "<a>"), "--missing", "ignore"], "invalid choice"),
    ("no-command", lambda p: [], "the following arguments are required"),
    ("unknown-command", lambda p: ["frobnicate"], "invalid choice"),
]


@pytest.mark.parametrize(("make_args", "message"), [c[1:] for c in BAD_INPUT], ids=[c[0] for c in BAD_INPUT])
def test_bad_input_exits_2_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make_args, message: str
) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run(make_args(tmp_path), capsys)
    assert code == 2
    assert out == ""
    assert message in err
    assert "Traceback" not in err


SUBPROCESS_BAD_INPUT = [
    ("lone-surrogate-in-state", "Hi <a>", b'{"a": "\\ud800"}', 2, "cannot write the output as utf-8"),
    ("deeply-nested-state", "<a>", b"[" * 100_000, 2, "state is nested too deeply"),
    ("huge-integer", "<a>", b'{"a": ' + b"9" * 5000 + b"}", 2, "an integer has more than 4300 digits"),
    ("nan", "<a>", b'{"a": NaN}', 2, "NaN is not JSON"),
    ("float-out-of-range", "<a>", b'{"a": 1e400}', 2, "number 1e400 is out of range"),
    ("duplicate-key", "<a>", b'{"a": 1, "a": 2}', 2, "duplicate key 'a'"),
    ("state-not-object", "<a>", b"null", 2, "state must be a JSON object (key -> value), not null"),
    ("state-not-utf8", "<a>", b'{"a": "\xff"}', 2, "state file is not valid UTF-8"),
]


@pytest.mark.parametrize(
    ("template", "state", "code", "message"),
    [c[1:] for c in SUBPROCESS_BAD_INPUT],
    ids=[c[0] for c in SUBPROCESS_BAD_INPUT],
)
def test_bad_state_in_a_real_process(tmp_path: Path, template: str, state: bytes, code: int, message: str) -> None:
    template_file = write(tmp_path, "t.txt", template)
    state_file = tmp_path / "s.json"
    state_file.write_bytes(state)
    result = cli(["render", template_file, "--state", str(state_file)])
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode == code, err
    assert message in err
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1


def _fifo(folder: Path) -> str:
    path = folder / "pipe.txt"
    os.mkfifo(path)
    return str(path)


NOT_REGULAR = [
    ("fifo-template", lambda p: ["render", _fifo(p)]),
    ("fifo-keys", lambda p: ["keys", _fifo(p)]),
    ("device-template", lambda p: ["keys", "/dev/zero"]),
    ("device-state", lambda p: ["render", write(p, "t.txt", "<a>"), "--state", "/dev/zero"]),
]


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"), reason="POSIX pipes and devices")
@pytest.mark.parametrize("make_args", [c[1] for c in NOT_REGULAR], ids=[c[0] for c in NOT_REGULAR])
def test_a_pipe_or_device_is_refused_not_waited_on(tmp_path: Path, make_args) -> None:  # type: ignore[no-untyped-def]
    # A FIFO with no writer would block an open() forever and /dev/zero never ends: neither is read.
    # PYTHONPATH: this checkout's code (the timeout only turns a hang into a failure, it times nothing).
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = cli(make_args(tmp_path), timeout=60, env=env)
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 2, err
    assert err.splitlines() == [err.rstrip("\n")]
    assert "not a regular file (a device, a pipe or a socket): not read" in err
    assert result.stdout == b""


OUTPUT_OPTIONS = [
    ("output-file", "--output-file", "cannot write the output file"),
    ("write-baseline", "--write-baseline", "cannot write the baseline"),
    ("html", "--html", "cannot write HTML report"),
]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX pipes")
@pytest.mark.parametrize(("option", "message"), [c[1:] for c in OUTPUT_OPTIONS], ids=[c[0] for c in OUTPUT_OPTIONS])
def test_an_output_to_a_fifo_nothing_reads_is_refused_not_waited_on(tmp_path: Path, option: str, message: str) -> None:
    # Opening a FIFO for writing waits for a reader: the output is refused instead, and the FIFO stays.
    # PYTHONPATH: this checkout's code (the timeout only turns a hang into a failure, it times nothing).
    prompt = write(tmp_path, "a.prompt", "Hi <name??>")
    fifo = _fifo(tmp_path)
    result = cli(["lint", prompt, option, fifo], timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 2, err
    assert (
        err == f"templating: error: {message} {fifo}: a FIFO that nothing reads (start its reader first): not written\n"
    )
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_too_much_stdin_is_refused(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = run(["render", "-"], capsys, stdin="a" * (DEFAULT_MAX_FILE_SIZE + 1), monkeypatch=monkeypatch)
    assert (code, out) == (2, "")
    assert (
        err
        == f"templating: error: stdin: more than the limit of {DEFAULT_MAX_FILE_SIZE} bytes (max-file-size): not read\n"
    )


def test_unwritable_output_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    template_file = write(tmp_path, "t.txt", "x" * 100_000)
    with open("/dev/full", "wb") as full:
        result = subprocess.run(
            [sys.executable, "-m", "templating", "render", template_file],
            stdout=full,
            stderr=subprocess.PIPE,
            check=False,
        )
    assert result.returncode == 2
    assert result.stderr.decode() == "templating: error: cannot write the output: No space left on device\n"


def test_closed_stdin() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.stdin.close(); sys.stdin = None; "
            "from templating.cli import main; raise SystemExit(main(['keys', '-']))",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (proc.returncode, proc.stderr) == (2, "templating: error: stdin is closed: there is nothing to read\n")


def test_closed_stdout_is_an_error_not_silence(tmp_path: Path) -> None:
    template_file = write(tmp_path, "t.txt", "Hi")
    proc = subprocess.run(
        f"{sys.executable} -m templating render {template_file} >&-",
        shell=True,
        capture_output=False,
        stderr=subprocess.PIPE,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.decode() == "templating: error: stdout is closed: there is nowhere to write the result\n"


def test_stdin_must_be_utf8() -> None:
    result = cli(["keys", "-"], stdin=b"<a> \xff")
    assert result.returncode == 2
    assert result.stderr.decode() == "templating: error: stdin is not valid UTF-8: - (byte 4)\n"


def test_broken_pipe_exits_quietly(tmp_path: Path) -> None:
    template_file = write(tmp_path, "t.txt", "line\n" * 200_000)
    proc = subprocess.run(
        f"{sys.executable} -m templating render {template_file} | head -c 10",
        shell=True,
        capture_output=True,
        check=False,
    )
    assert proc.stdout == b"line\nline\n"
    assert b"Traceback" not in proc.stderr
    assert b"Exception ignored" not in proc.stderr


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--version"], capsys)
    try:  # the distribution's version, or "unknown" when the code runs from a checkout that is not installed
        installed = metadata.version("agent-prompt-templating")
    except metadata.PackageNotFoundError:
        installed = "unknown"
    assert (code, out) == (0, f"templating {installed}\n")


def test_console_script_and_module_entry_points() -> None:
    result = cli(["render", str(EXAMPLE), "--state", str(EXAMPLE_STATE)])
    assert result.returncode == 0, result.stderr
    assert "Grace Hopper" in result.stdout.decode()
    script = Path(sys.executable).parent / "templating"
    if script.exists():  # the console script of this environment
        direct = subprocess.run([str(script), "keys", str(EXAMPLE)], capture_output=True, text=True, check=False)
        assert (direct.returncode, direct.stdout.splitlines()[0]) == (0, "app:assistant_name")


def subcommands() -> list[str]:
    parser = build_parser()
    (action,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(action.choices)


@pytest.mark.parametrize("command", subcommands())
def test_every_command_says_what_it_does_in_its_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([command, "--help"], capsys)
    assert code == 0
    # argparse prints the description between the usage and the first list of arguments
    description = out.split("\n\n")[1]
    assert not description.startswith(("positional arguments:", "options:")), f"`{command} --help` has no description"
    assert len(description.split()) >= 8, description


def test_lsp_help_says_how_an_editor_starts_the_server(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["lsp", "--help"], capsys)
    assert code == 0
    text = " ".join(out.split())  # argparse keeps the description's line breaks: compare words
    for said in (
        "language server",
        "your editor starts it",
        "`templating lsp`",
        "over stdin and stdout (stdio)",
        "the lsp extra (pygls, lsprotocol; from a checkout: pip install '.[lsp]')",
        f"{DOCS_URL}editors/",
    ):
        assert said in text, said


@pytest.mark.parametrize(
    ("metadata_text", "expected"),
    [
        ("Metadata-Version: 2.1\nName: agent-prompt-templating\nVersion: 9.8.7\n\nVersion: 1.0\n", "9.8.7"),
        ("Metadata-Version: 2.1\n\nVersion: 1.0\n", None),
    ],
    ids=["first-on-the-path", "no-version-header-falls-back"],
)
def test_version_reads_the_metadata_of_the_first_distribution_on_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, metadata_text: str, expected: str | None
) -> None:
    from importlib import metadata as importlib_metadata

    from templating.cli.parser import version

    try:  # what is installed, found before the folder below is on the path
        installed = importlib_metadata.version("agent-prompt-templating")
    except importlib_metadata.PackageNotFoundError:
        installed = "unknown"
    info = tmp_path / "agent_prompt_templating-9.8.7.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(metadata_text, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert version() == (expected or installed)  # a METADATA without a version is passed over
