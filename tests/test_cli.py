"""The command line: output, exit codes, and clear errors instead of tracebacks."""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from conftest import require_adk
from syrupy.assertion import SnapshotAssertion

from templating import Template
from templating.cli import main
from templating.cli.parser import build_parser
from templating.inputs import DEFAULT_MAX_FILE_SIZE
from templating.linter import DOCS_URL

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "support_agent.txt"
EXAMPLE_STATE = ROOT / "examples" / "state.json"


def run(
    args: list[str],
    capsys: pytest.CaptureFixture[str],
    stdin: str | None = None,
    monkeypatch: pytest.MonkeyPatch | None = None,
) -> tuple[int, str, str]:
    if stdin is not None:
        assert monkeypatch is not None
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    try:
        code = main(args)
    except SystemExit as exc:  # argparse's own usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_render_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["render", str(EXAMPLE), "--state", str(EXAMPLE_STATE)], capsys)
    assert (code, err) == (0, "")
    assert "You are Ada, the support assistant of Northwind Traders." in out
    assert '{"tool": "lookup_order", "args": {"order_id": "..."}}' in out
    assert "refer to the customer's order as <order_id>" in out


def test_render_missing_keys_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = write(tmp_path, "t.txt", "Hi <name>, <nope> <also>")
    state = write(tmp_path, "s.json", '{"name": "Ada", "alse": 1}')
    code, out, err = run(["render", template, "--state", state], capsys)
    assert code == 1
    assert out == ""
    assert err.startswith(f"{template}: 2 required keys are missing from state: 'nope', 'also'")
    assert "did you mean 'alse'?" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(("mode", "expected"), [("empty", "Hi , "), ("keep", "Hi <nope>, <x?>")], ids=["empty", "keep"])
def test_render_missing_modes(tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str, expected: str) -> None:
    template = write(tmp_path, "t.txt", "Hi <nope>, <x?>")
    assert run(["render", template, "--missing", mode], capsys) == (0, expected, "")


def test_render_from_stdin(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    state = write(tmp_path, "s.json", '{"name": "Ada"}')
    assert run(["render", "-", "--state", state], capsys, stdin="Hi <name>", monkeypatch=monkeypatch) == (
        0,
        "Hi Ada",
        "",
    )


def test_state_from_stdin(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    template = write(tmp_path, "t.txt", "Hi <name>")
    assert run(["render", template, "--state", "-"], capsys, stdin='{"name": "Ada"}', monkeypatch=monkeypatch) == (
        0,
        "Hi Ada",
        "",
    )


def test_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = write(tmp_path, "t.txt", "<b> <a?> <b> <<c>> <user:d.0>")
    assert run(["keys", template], capsys) == (0, "b\na?\nuser:d.0\n", "")
    code, out, _ = run(["keys", template, "--format", "json"], capsys)
    assert code == 0
    assert json.loads(out)[1] == {"key": "a", "optional": True, "line": 1, "column": 5}


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


def write_bytes(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


@pytest.mark.parametrize(("make_args", "message"), [c[1:] for c in BAD_INPUT], ids=[c[0] for c in BAD_INPUT])
def test_bad_input_exits_2_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make_args, message: str
) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run(make_args(tmp_path), capsys)
    assert code == 2
    assert out == ""
    assert message in err
    assert "Traceback" not in err


def cli(args: list[str], *, stdin: bytes | None = b"", **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
    """Run the real command in a subprocess, as a user would, from outside the checkout (so that
    ``python -m templating`` imports the installed package, not the source tree)."""
    return subprocess.run(
        [sys.executable, "-m", "templating", *args],
        input=stdin,
        capture_output=True,
        cwd=tempfile.gettempdir(),
        check=False,
        **kwargs,
    )


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


@pytest.mark.skipif(not os.path.exists("/proc/self/fd/1"), reason="/proc/self/fd (Linux)")
def test_an_output_file_that_is_stdout_prints_the_findings(tmp_path: Path) -> None:
    """`--output-file /dev/stdout` (here a link of our own to what /dev/stdout links to: a bug replacing the
    link replaces ours, never the machine's): the findings go to stdout, as ruff's do."""
    prompt = write(tmp_path, "a.prompt", "Hi <name??>")
    stdout = tmp_path / "stdout"
    stdout.symlink_to("/proc/self/fd/1")
    result = cli(["lint", prompt, "--output-file", str(stdout)], env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 1, result.stderr
    assert b": T006 " in result.stdout
    assert result.stderr == b"1 template checked: 1 error\n"
    assert os.readlink(stdout) == "/proc/self/fd/1"


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


@pytest.mark.parametrize("source", ["-", "file"], ids=["stdin", "file"])
def test_text_is_rendered_exactly_as_written(tmp_path: Path, source: str) -> None:
    raw = "\ufeffline one <a>\r\nline two\rthree\n".encode("utf-8")
    state = write(tmp_path, "s.json", '{"a": "A"}')
    if source == "file":
        (tmp_path / "t.txt").write_bytes(raw)
        result = cli(["render", str(tmp_path / "t.txt"), "--state", state])
    else:
        result = cli(["render", "-", "--state", state], stdin=raw)
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"line one A\r\nline two\rthree\n"


def test_convert_keeps_line_endings(tmp_path: Path) -> None:
    (tmp_path / "adk.txt").write_bytes(b"a {x}\r\nb\r\n")
    result = cli(["convert", str(tmp_path / "adk.txt"), "--from", "adk"])
    assert (result.returncode, result.stdout) == (0, b"a <x>\r\nb\r\n")


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


# templating convert FILE --from adk (issue 4)
ADK_EXAMPLE = ROOT / "examples" / "adk_instruction.txt"
ADK_EXAMPLE_STATE = ROOT / "examples" / "adk_state.json"


def test_convert_example(capsys: pytest.CaptureFixture[str], snapshot: SnapshotAssertion) -> None:
    code, out, err = run(["convert", str(ADK_EXAMPLE), "--from", "adk"], capsys)
    assert code == 0
    assert out == snapshot(name="stdout")
    # Paths in the warnings are as given on the command line; show them relative to the checkout.
    assert err.replace(str(ROOT) + "/", "") == snapshot(name="stderr")


def test_converted_example_renders_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, converted, _ = run(["convert", str(ADK_EXAMPLE), "--from", "adk"], capsys)
    state = json.loads(ADK_EXAMPLE_STATE.read_text(encoding="utf-8"))
    expected = Template(ADK_EXAMPLE.read_text(encoding="utf-8"), dialect="adk").render(state)
    converted_file = write(tmp_path, "converted.txt", converted)
    code, out, err = run(["render", converted_file, "--state", str(ADK_EXAMPLE_STATE)], capsys)
    assert (code, err) == (0, "")
    assert out == expected
    assert "Grace Hopper" in out
    assert "<order>NW-10442</order>" in out


def test_convert_from_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    stdin = "Hi {name}, <b>{{raw}}</b>"
    code, out, err = run(["convert", "-", "--from", "adk"], capsys, stdin=stdin, monkeypatch=monkeypatch)
    assert (code, out) == (0, "Hi <name>, <<b>>{{raw}}</b>")
    assert err.startswith("<stdin>:1:15: warning: '{{raw}}': ADK's code substitutes this")


def test_convert_without_differences_is_silent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write(tmp_path, "t.txt", '{user:name} { x? } {"json": 1} ${kept}')
    assert run(["convert", source, "--from", "adk"], capsys) == (0, '<user:name> <x?> {"json": 1} ${kept}', "")


def test_convert_unsayable_text_exits_1_and_prints_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write(tmp_path, "t.txt", "ok {a}\nbad <{b}>")
    code, out, err = run(["convert", source, "--from", "adk"], capsys)
    assert (code, out) == (1, "")
    assert err.startswith(f"{source}: cannot convert '{{b}}' between '<' and '>'")
    assert "at 2:6" in err
    assert "Traceback" not in err


CONVERT_BAD_INPUT = [
    ("missing-from", lambda p: ["convert", write(p, "t.txt", "{a}")], "the following arguments are required: --from"),
    ("unknown-from", lambda p: ["convert", write(p, "t.txt", "{a}"), "--from", "jinja"], "invalid choice: 'jinja'"),
    ("missing-file", lambda p: ["convert", str(p / "nope.txt"), "--from", "adk"], "template file not found"),
    ("directory", lambda p: ["convert", str(p), "--from", "adk"], "template path is a directory"),
    (
        "not-utf8",
        lambda p: ["convert", write_bytes(p, "t.txt", b"\xff{a}"), "--from", "adk"],
        "template file is not valid UTF-8",
    ),
    ("no-file", lambda p: ["convert", "--from", "adk"], "the following arguments are required: FILE"),
]


@pytest.mark.parametrize(
    ("make_args", "message"), [c[1:] for c in CONVERT_BAD_INPUT], ids=[c[0] for c in CONVERT_BAD_INPUT]
)
def test_convert_bad_input_exits_2_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make_args, message: str
) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run(make_args(tmp_path), capsys)
    assert code == 2
    assert out == ""
    assert message in err
    assert "Traceback" not in err


def test_convert_help_names_the_formatting_difference(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["convert", "--help"], capsys)
    assert code == 0
    assert "ADK renders them with\nstr(), the angle syntax renders dicts, lists and tuples as JSON" in out


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


def test_convert_module_entry_point() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "templating", "convert", str(ADK_EXAMPLE), "--from", "adk"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "<<answer>>" in result.stdout
    assert result.stderr.count("warning:") == 3


# --- templating lint ---------------------------------------------------------------------------

LINT_SOURCE = "Hi < name >, order <order_id>.\n<example>x</example>\n"


@pytest.mark.parametrize(
    ("text", "extra", "code", "lines"),
    [
        ("Hello <name>.\n", [], 0, []),
        (
            LINT_SOURCE,
            [],
            1,
            [
                "{path}:1:4: T002 '< name >' has whitespace inside, so it renders as literal text; did you mean",
                "    Hi < name >, order <order_id>.",
                "       ^^^^^^^^",
                "    help: write <name> (no spaces) for a placeholder; as written, < name > already renders unchanged",
                "    docs: https://agent-prompt-templating.github.io/agent-prompt-templating/rules/T002/",
                "{path}:2:1: T007 '<example>' looks like an XML-style tag (</example> follows) but is a placeholder",
                "    <example>x</example>",
                "    ^^^^^^^^^",
                "    help:",
                "    docs: https://agent-prompt-templating.github.io/agent-prompt-templating/rules/T007/",
            ],
        ),
        ("Hi < name >\n", [], 0, ["{path}:1:4: T002 '< name >' has whitespace inside"]),
        (LINT_SOURCE, ["--ignore", "T007,T002"], 0, []),
        (LINT_SOURCE, ["--select", "T002"], 0, ["{path}:1:4: T002"]),
    ],
    ids=["clean", "error-findings", "warnings-only", "ignore", "select"],
)
def test_lint_text_output_and_exit_codes(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    extra: list[str],
    code: int,
    lines: list[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, "agent.prompt", text)
    got, out, err = run(["lint", path, *extra], capsys)
    assert got == code
    out_lines = out.splitlines()
    for i, line in enumerate(lines):
        assert out_lines[i].startswith(line.format(path=path))
    if not lines:
        assert out == "1 template checked: no findings\n"
    assert "Traceback" not in err


def test_lint_json_and_github(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, "a.prompt", LINT_SOURCE)
    code, out, _ = run(["lint", path, "--format", "json"], capsys)
    assert code == 1
    rows = json.loads(out)
    docs = "https://agent-prompt-templating.github.io/agent-prompt-templating/rules/"
    assert [(r["code"], r["severity"], r["line"], r["column"], r["path"], r["url"]) for r in rows] == [
        ("T002", "warning", 1, 4, path, f"{docs}T002/"),
        ("T007", "error", 2, 1, path, f"{docs}T007/"),
    ]
    code, out, _ = run(["lint", path, "--format", "github"], capsys)
    assert code == 1
    # the rule's page follows the message on its own line (%0A is GitHub's escaped newline)
    assert out.splitlines() == [
        f"::warning file={path},line=1,endLine=1,col=4,endColumn=12,title=T002::'< name >' has whitespace inside, "
        f"so it renders as literal text; did you mean <name>?%0A{docs}T002/",
        f"::error file={path},line=2,endLine=2,col=1,endColumn=10,title=T007::'<example>' looks like an XML-style "
        f"tag (</example> follows) but is a placeholder%0A{docs}T007/",
    ]


def test_lint_stdin_and_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    schema = write(tmp_path, "schema.json", '["name", "nick?", "spare"]')
    code, out, _ = run(
        ["lint", "-", "--schema", schema, "--extend-select", "T011"],
        capsys,
        stdin="<nmae> <nick>",
        monkeypatch=monkeypatch,
    )
    assert code == 1
    assert "<stdin>:1:1: T001 'nmae' is not in the schema; did you mean 'name'?" in out
    assert "<stdin>:1:8: T009 '<nick>' is required" in out
    # the schema file is named relative to the current folder
    assert "schema.json: T011 schema key 'name' is not used by any linted template" in out.splitlines()
    assert "schema.json: T011 schema key 'spare' is not used by any linted template" in out.splitlines()


def test_lint_project_from_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.templating]\nschema = "schema.json"\ninclude = ["prompts/*.txt"]\n'
        '[tool.templating.per-file-ignores]\n"prompts/old.txt" = ["T001"]\n',
        encoding="utf-8",
    )
    write(tmp_path, "schema.json", '{"properties": {"name": {"type": "string"}}, "required": ["name"]}')
    (tmp_path / "prompts").mkdir()
    write(tmp_path, "prompts/a.txt", "Hi <name> <nmae>")
    write(tmp_path, "prompts/old.txt", "Hi <nmae>")
    write(tmp_path, "prompts/skip.md", "< name >")
    (tmp_path / "prompts" / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "prompts" / "sub")
    code, out, err = run(["lint"], capsys)
    assert code == 1
    assert out.count(": T001 ") == 1
    assert "prompts/a.txt:1:11: T001 'nmae' is not in the schema; did you mean 'name'?" in out
    assert err == "2 templates checked: 1 error\n"


LINTED_HERE = "no paths given and no 'include' in [tool.templating]: linted the current folder (as `templating lint .`)"


@pytest.mark.parametrize(
    "pyproject",
    [None, '[project]\nname = "x"\n', "[tool.templating]\nignore = ['T012']\n"],
    ids=["no-pyproject", "no-table", "table-without-include"],
)
def test_lint_without_paths_or_include_lints_the_current_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, pyproject: str | None
) -> None:
    """As ruff does: no paths and no `include` lint `.` (not the whole root: from a subfolder, that subfolder),
    and the summary says so; with `include`, the root is walked for it (test_lint_project_from_config)."""
    if pyproject is not None:
        write(tmp_path, "pyproject.toml", pyproject)
    (tmp_path / "agents").mkdir()
    write(tmp_path, "agents/support.prompt", "Hi <name> < order_id >")
    write(tmp_path, "agents/notes.txt", "< not a template file >")
    write(tmp_path, "elsewhere.prompt", "< nick >")
    for here, found in (
        (tmp_path, ["agents/support.prompt", "elsewhere.prompt"]),
        (tmp_path / "agents", ["support.prompt"]),
    ):
        monkeypatch.chdir(here)
        code, out, err = run(["lint"], capsys)
        assert code == 0, err  # T002 is a warning
        assert sorted(line.split(":")[0] for line in out.splitlines() if ": T002 " in line) == found
        noun = "template" if len(found) == 1 else "templates"
        assert err == f"{LINTED_HERE}\n{len(found)} {noun} checked: {len(found)} warning{'s' * (len(found) > 1)}\n"
        code, out, err = run(["lint", "--format", "json"], capsys)
        assert (code, len(json.loads(out))) == (0, len(found))
        assert err == f"templating: {LINTED_HERE}\n"


def test_lint_without_paths_or_include_in_a_folder_without_templates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "notes.txt", "<a>")
    code, out, err = run(["lint"], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("templating: error: no template files found to lint in the current folder (files matching")
    assert err.endswith("from the default patterns; no paths given and no 'include' in [tool.templating])\n")


def test_lint_without_paths_or_include_never_walks_the_home_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "a.prompt", "Hi <name>")
    code, out, err = run(["lint"], capsys)
    assert (code, out) == (2, "")
    assert (
        err == f"templating: error: refusing to walk {tmp_path.resolve()}: it is your home folder (name the project's"
        " folder or its files, or run inside a project: a folder with a pyproject.toml or a .git)\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["lint", "nope.prompt"], "template file not found: nope.prompt"),
        (["lint", "x.prompt", "--schema", "missing.json"], "schema file not found"),
        (["lint", "x.prompt", "--select", "T999"], "unknown rule 'T999'"),
        (["lint", "x.prompt", "--extend-select", "T011"], "rule T011 (unused schema keys) needs a schema"),
        (["lint", "empty"], "no template files found to lint in empty"),
        (["lint", "-", "-"], "stdin ('-') can be linted only once"),
        (["lint", "x.prompt", "--format", "xml"], "invalid choice: 'xml'"),
        (["lint", "x.prompt", "--html", "no/such/dir/r.html"], "cannot write HTML report"),
        (["lint", "bad.prompt"], "template file is not valid UTF-8"),
        (["lint", "x.prompt", "--select", ""], "--select needs at least one rule code"),
        (["lint", "x.prompt", "--select", ",", "--select", " "], "--select needs at least one rule code"),
        (["lint", "x.prompt", "--select", "ALL,T011"], "rule T011 (unused schema keys) needs a schema"),
        (["lint", "x" * 300], "cannot read the paths to lint"),
    ],
    ids=[
        "missing-file",
        "bad-schema",
        "bad-rule",
        "t011-no-schema",
        "empty-dir",
        "stdin-twice",
        "bad-format",
        "bad-html",
        "not-utf8",
        "empty-select",
        "blank-selects",
        "all-and-t011-no-schema",
        "name-too-long",
    ],
)
def test_lint_usage_errors_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "x.prompt", "Hi <name>")
    (tmp_path / "bad.prompt").write_bytes(b"\xff\xfe<")
    (tmp_path / "empty").mkdir()
    code, _, err = run(args, capsys)
    assert code == 2
    assert message in err
    if "invalid choice" not in message:  # argparse's own errors come with a usage line
        assert err.startswith("templating: error: ")
        assert err.count("\n") == 1
    assert "Traceback" not in err


def _jinja_project(root: Path) -> None:
    (root / ".git").mkdir()
    (root / "agent.py").write_text('from templating import jinja\nP = jinja("Hi {{ name }}")\n', encoding="utf-8")
    (root / "a.prompt").write_text("Hi <name??>\n", encoding="utf-8")


_DEEP = "[" * 50_000 + "]" * 50_000
MALFORMED_SETTINGS: list[tuple[str, dict[str, str], list[str], str]] = [
    # (id, files to write, extra arguments (environment variables as NAME=value), the one line of stderr)
    (
        "max-file-size-overflow",
        {"pyproject.toml": "[tool.templating]\nmax-file-size = 9223372036854775807\n"},
        [],
        "{root}/pyproject.toml [tool.templating]: 'max-file-size' must be a number of bytes from 1 to 1073741824 "
        "(1 GiB), not 9223372036854775807",
    ),
    (
        "nested-arrays-in-the-pyproject",
        {"pyproject.toml": f"[tool.black]\nx = {_DEEP}\n"},
        [],
        "config file is nested too deeply to read: {root}/pyproject.toml",
    ),
    (
        "nested-arrays-in-an-ancestors-pyproject",
        {"../pyproject.toml": f"[tool.other]\nx = {_DEEP}\n"},
        [],
        "config file is nested too deeply to read: {root.parent}/pyproject.toml",
    ),
    (
        "jinja-max-time",
        {},
        ["TEMPLATING_JINJA_MAX_TIME=abc"],
        "TEMPLATING_JINJA_MAX_TIME='abc': expected a positive number of seconds, or 'off' for no limit",
    ),
    (
        "jinja-max-loop-steps",
        {},
        ["TEMPLATING_JINJA_MAX_LOOP_STEPS=-5"],
        "TEMPLATING_JINJA_MAX_LOOP_STEPS='-5': expected a positive whole number, or 'off' for no limit",
    ),
    (
        "cache-dir-a-file",
        {"not-a-folder": "x\n"},
        ["TEMPLATING_CACHE_DIR={root}/not-a-folder"],
        "refusing to use {root}/not-a-folder as the lint cache (TEMPLATING_CACHE_DIR): it is not a folder",
    ),
    (
        "baseline-nested-arrays",
        {"b.json": "[" * 100_000 + "]" * 100_000},
        ["--baseline", "b.json"],
        "baseline b.json is nested too deeply to read",
    ),
    (
        "baseline-count-of-5000-digits",
        {
            "b.json": '{"version": 1, "findings": [{"path": "a", "code": "T001", "text": "x", "count": %s}]}'
            % ("9" * 5000)
        },
        ["--baseline", "b.json"],
        "baseline b.json is not valid JSON: a number has more than 4300 digits",
    ),
]


@pytest.mark.parametrize(
    ("files", "extra", "message"), [c[1:] for c in MALFORMED_SETTINGS], ids=[c[0] for c in MALFORMED_SETTINGS]
)
def test_a_malformed_setting_is_one_line_exit_2_and_changes_nothing(
    tmp_path: Path, files: dict[str, str], extra: list[str], message: str
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    _jinja_project(root)
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    environment.pop("TEMPLATING_CACHE_DIR", None)
    arguments = []
    for item in extra:
        name, _, value = item.partition("=")
        if name.startswith("TEMPLATING_"):
            environment[name] = value.format(root=root)
        else:
            arguments.append(item)
    before = sorted(p.name for p in root.iterdir())
    commands = [["lint", *arguments, "--output-file", "out.txt", "."]]
    if not arguments:
        commands.append(["render", "agent.py:P", "--state", "-"])
    for command in commands:
        done = subprocess.run(
            [sys.executable, "-m", "templating", *command],
            input=b"{}",
            capture_output=True,
            cwd=root,
            env=environment,
            timeout=120,
            check=False,
        )
        err = done.stderr.decode("utf-8", "replace")
        if command[0] == "render" and "JINJA" not in " ".join(extra):
            continue  # a setting of the linter: render does not read it
        assert (done.returncode, done.stdout) == (2, b""), err
        assert err == f"templating: error: {message.format(root=root)}\n"
    assert sorted(p.name for p in root.iterdir()) == before  # no output, no cache folder


def test_lint_html_report(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, "a.prompt", LINT_SOURCE)
    code, _, _ = run(["lint", path, "--html", "report.html"], capsys)
    assert code == 1
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert 'class="ph-required" data-kind="required">&lt;order_id&gt;</span>' in page


ADK_LINT_SOURCE = 'Hi {user-name}!\nReply as {"id": {order_id}}, for <example> as in </example>.\n'


def test_lint_dialect_adk(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, "agent.prompt", ADK_LINT_SOURCE)
    schema = write(tmp_path, "schema.json", '["order_id", "user_name", "spare"]')
    code, out, _ = run(["lint", path, "--dialect", "adk", "--format", "json"], capsys)
    assert code == 1  # T016 is an error
    rows = json.loads(out)
    assert [(r["code"], r["name"], r["line"], r["column"]) for r in rows] == [
        ("T019", "adk-near-miss-key", 1, 4),
        ("T016", "adk-eaten-braces", 2, 17),
    ]
    # The default dialect is the angle syntax: no ADK rules, and <example> is a placeholder (T007).
    code, out, _ = run(["lint", path, "--format", "json"], capsys)
    assert [r["code"] for r in json.loads(out)] == ["T007"]
    # T011 sees the ADK placeholders; the HTML report highlights them.
    code, out, _ = run(
        ["lint", path, "--dialect", "adk", "--schema", schema, "--extend-select", "T011", "--html", "r.html"], capsys
    )
    assert "schema.json: T011 schema key 'spare' is not used by any linted template" in out.splitlines()
    assert not any("'order_id' is not used" in line for line in out.splitlines())
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert 'class="ph-required" data-kind="required" data-codes="T016"' in page
    assert 'data-codes="T019" title="T019 &#39;{user-name}&#39; is not a state name' in page
    code, _, err = run(["lint", path, "--dialect", "jinja"], capsys)
    assert code == 2
    assert "invalid choice: 'jinja'" in err


def test_lint_as_a_subprocess_never_shows_a_traceback(tmp_path: Path) -> None:
    path = write(tmp_path, "a.prompt", "Hi <usr:name>")
    proc = subprocess.run(
        [sys.executable, "-m", "templating", "lint", path, "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert json.loads(proc.stdout)[0]["code"] == "T003"


def test_lint_this_project(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # pyproject.toml's [tool.templating] lints examples/ against examples/schema.json
    monkeypatch.chdir(ROOT)
    code, out, err = run(["lint"], capsys)
    assert (code, out, err) == (0, "1 template checked: no findings\n", "")


def test_github_format_escapes_names_and_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file name with %, a comma and a colon; a finding message with a newline and %.
    monkeypatch.chdir(tmp_path)
    name = "100%,a:b.prompt"
    write(tmp_path, name, "50% off: <name?>\n")
    code, out, _ = run(["lint", name, "--format", "github", "--schema", write(tmp_path, "k.json", '["name"]')], capsys)
    assert code == 0
    assert out.splitlines() == [
        "::notice file=100%25%2Ca%3Ab.prompt,line=1,endLine=1,col=10,endColumn=17,title=T010::'<name?>' is optional, "
        "but 'name' is required in the schema%0Ahttps://agent-prompt-templating.github.io/agent-prompt-templating/rules/T010/"
    ]
    from templating.linter import Diagnostic
    from templating.linter.outputs import format_github
    from templating.nodes import Span

    diag = Diagnostic("T001", "error", "50% sure\nsecond line\r", Span(0, 5, 1, 1), "a,b:c%.txt")
    assert format_github([diag], {"a,b:c%.txt": "ab\ncd"}) == (
        "::error file=a%2Cb%3Ac%25.txt,line=1,endLine=2,col=1,endColumn=3,title=T001::50%25 sure%0Asecond line%0D%0Ahttps://agent-prompt-templating.github.io/agent-prompt-templating/rules/T001/"
    )


def test_t011_in_json_and_github(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "a.prompt", "Hi <name>")
    schema = write(tmp_path, "keys.json", '["name", "spare"]')
    code, out, _ = run(["lint", "a.prompt", "--schema", schema, "--extend-select", "T011", "--format", "json"], capsys)
    assert code == 0
    assert [(r["code"], r["path"], r["line"], r["severity"]) for r in json.loads(out)] == [
        ("T011", "keys.json", None, "warning")
    ]
    code, out, _ = run(
        ["lint", "a.prompt", "--schema", schema, "--extend-select", "T011", "--format", "github"], capsys
    )
    assert out.splitlines() == [
        "::warning file=keys.json,title=T011::schema key 'spare' is not used by any linted template%0Ahttps://agent-prompt-templating.github.io/agent-prompt-templating/rules/T011/"
    ]
    # A schema that is no file (a model): the annotation names no file.
    (tmp_path / "cli_models_t011.py").write_text("from pydantic import BaseModel\nclass S(BaseModel):\n    zz: int\n")
    code, out, _ = run(
        ["lint", "a.prompt", "--schema", "cli_models_t011:S", "--select", "T011", "--format", "github"], capsys
    )
    sys.modules.pop("cli_models_t011", None)
    assert out.splitlines() == [
        "::warning title=T011::schema key 'zz' is not used by any linted template%0Ahttps://agent-prompt-templating.github.io/agent-prompt-templating/rules/T011/"
    ]


BAD_SCHEMA_MODULE = """\
import dataclasses
from typing import Callable, TypedDict

from pydantic import BaseModel


@dataclasses.dataclass
class DC:
    name: str


class TD(TypedDict):
    name: str


class Plain(BaseModel):
    name: str


inst = Plain(name="x")


class WithCallable(BaseModel):
    fn: Callable[[], int]


class NotDefined(BaseModel):
    x: "Undefined"  # noqa: F821
"""


@pytest.mark.parametrize(
    ("schema", "pyproject", "message"),
    [
        ("cli_bad_schemas:DC", None, "is the class DC, not a pydantic model class"),
        ("cli_bad_schemas:TD", None, "is the class TD, not a pydantic model class"),
        ("cli_bad_schemas:inst", None, "is a Plain object, not a pydantic model class"),
        ("json:loads", None, "is a function object, not a pydantic model class"),
        ("os:path", None, "is a module object, not a pydantic model class"),
        ("cli_bad_schemas:WithCallable", None, "PydanticInvalidForJsonSchema"),
        ("cli_bad_schemas:NotDefined", None, "PydanticUserError"),
        ("required-true.json", None, "must be a list of property names, not True"),
        ("required-number.json", None, "must be a list of property names, not 5"),
        ("required-string.json", None, "must be a list of property names, not 'name'"),
        (None, "tool = 3\n", "'tool' must be a table, not int"),
        (None, "[tool]\ntemplating = 3\n", "[tool.templating] must be a table, not int"),
    ],
    ids=[
        "dataclass",
        "typeddict",
        "instance",
        "function",
        "module",
        "callable-field",
        "not-fully-defined",
        "required-true",
        "required-number",
        "required-string",
        "tool-not-table",
        "templating-not-table",
    ],
)
def test_lint_bad_schema_or_config_exits_2_without_traceback(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    schema: str | None,
    pyproject: str | None,
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    write(tmp_path, "cli_bad_schemas.py", BAD_SCHEMA_MODULE)
    write(tmp_path, "required-true.json", '{"properties": {"name": {}}, "required": true}')
    write(tmp_path, "required-number.json", '{"properties": {"name": {}}, "required": 5}')
    write(tmp_path, "required-string.json", '{"properties": {"name": {}}, "required": "name"}')
    write(tmp_path, "a.prompt", "Hi <name>")
    write(tmp_path, "pyproject.toml", pyproject or "[project]\nname = 'x'\n")
    args = ["lint", "a.prompt"] + (["--schema", schema] if schema else [])
    code, out, err = run(args, capsys)
    sys.modules.pop("cli_bad_schemas", None)
    assert code == 2
    assert out == ""
    assert message in err
    assert err.startswith("templating: error: ")
    assert err.count("\n") == 1  # one line
    assert "Traceback" not in err


def test_a_byte_order_mark_is_not_part_of_the_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_bytes(tmp_path, "bom.prompt", "\ufeffHi < name > <user:name>".encode())
    write_bytes(tmp_path, "state.json", '\ufeff{"user:name": "Ada"}'.encode())
    code, out, _ = run(["lint", "bom.prompt", "--format", "json"], capsys)
    assert [(r["line"], r["column"], r["start"]) for r in json.loads(out)] == [(1, 4, 3)]  # not column 5
    code, out, err = run(["render", "bom.prompt", "--state", "state.json"], capsys)
    assert (code, out, err) == (0, "Hi < name > Ada", "")
    code, out, _ = run(["keys", "bom.prompt", "--format", "json"], capsys)
    assert json.loads(out)[0]["column"] == 13
    code, out, _ = run(["render", "-"], capsys, stdin="\ufeffHi", monkeypatch=monkeypatch)
    assert out == "Hi"
    # Only a leading mark is dropped: one inside the text stays.
    write(tmp_path, "inner.prompt", "a\ufeffb")
    code, out, _ = run(["render", "inner.prompt"], capsys)
    assert out == "a\ufeffb"


def test_force_exclude_applies_exclude_to_named_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "pyproject.toml", '[tool.templating]\nexclude = ["drafts", "./legacy/*.prompt"]\n')
    (tmp_path / "drafts").mkdir()
    (tmp_path / "legacy").mkdir()
    write(tmp_path, "drafts/wip.prompt", "<example>x</example>")
    write(tmp_path, "legacy/old.prompt", "<example>x</example>")
    write(tmp_path, "ok.prompt", "Hi <name>")
    monkeypatch.chdir(tmp_path)
    named = ["drafts/wip.prompt", "legacy/old.prompt", "ok.prompt"]
    code, out, err = run(["lint", *named], capsys)
    assert code == 1  # named files are linted even when excluded
    assert "drafts/wip.prompt:1:1: T007" in out
    assert err == "3 templates checked: 2 errors\n"
    code, out, err = run(["lint", "--force-exclude", *named], capsys)
    assert (code, out) == (0, "1 template checked: no findings\n")
    code, out, err = run(["lint", "--force-exclude", "drafts/wip.prompt"], capsys)
    assert (code, out, err) == (0, "", "")  # pre-commit staged only excluded files: nothing to do
    code, out, err = run(["lint", "."], capsys)
    assert (code, out) == (0, "1 template checked: no findings\n")  # folders never include excluded files


def test_no_template_files_message_names_the_patterns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    code, _, err = run(["lint", "empty"], capsys)
    assert code == 2
    assert "no template files found to lint in empty (files matching *.prompt, *.prompt.md" in err
    assert "from the default patterns)" in err
    write(tmp_path, "pyproject.toml", '[tool.templating]\ninclude = ["prompts/*.txt"]\n')
    code, _, err = run(["lint"], capsys)
    assert code == 2
    assert "no template files found to lint (files matching prompts/*.txt, from 'include' in [tool.templating])" in err


def hook_manifest() -> list[dict[str, str]]:
    """.pre-commit-hooks.yaml read with a minimal reader for its flat shape: a list of `key: value` maps."""
    hooks: list[dict[str, str]] = []
    for number, raw in enumerate((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split(" #", 1)[0].rstrip()
        if not line or line.lstrip().startswith("#"):
            continue
        if line.startswith("- "):
            hooks.append({})
            line = line[2:]
        elif not line.startswith("  ") or not hooks:
            raise AssertionError(f".pre-commit-hooks.yaml:{number}: not a list of hook mappings: {raw!r}")
        key, sep, value = line.strip().partition(": ")
        assert sep, f".pre-commit-hooks.yaml:{number}: not `key: value`: {raw!r}"
        assert key not in hooks[-1], f".pre-commit-hooks.yaml:{number}: {key} twice"
        hooks[-1][key] = value.strip()
    return hooks


def test_pre_commit_manifest() -> None:
    import re

    from templating.linter import DEFAULT_INCLUDE, glob_regex

    hooks = {hook["id"]: hook for hook in hook_manifest()}
    assert set(hooks) == {"agent-prompt-templating", "agent-prompt-templating-fix", "agent-prompt-templating-project"}
    known = {
        "id", "name", "description", "entry", "language", "types", "files", "require_serial", "pass_filenames",
        "always_run",
    }  # fmt: skip
    for hook in hooks.values():
        assert {"id", "name", "entry", "language"} <= set(hook) <= known
        assert hook["language"] == "python"
        program, *args = hook["entry"].split()
        assert program == "templating"
        build_parser().parse_args(args)  # the entry's options exist (argparse exits on an unknown one)
    files = hooks["agent-prompt-templating"]
    assert "--force-exclude" in files["entry"].split()
    pattern = re.compile(files["files"])
    examples = [glob.replace("*", "agent") for glob in DEFAULT_INCLUDE]
    assert all(pattern.search(f"prompts/{name}") for name in examples)
    assert all(glob_regex(glob).match(name) for glob, name in zip(DEFAULT_INCLUDE, examples, strict=True))
    assert not pattern.search("README.md")
    project = hooks["agent-prompt-templating-project"]
    assert project["pass_filenames"] == "false"
    assert project["always_run"] == "true"
    fixing = hooks["agent-prompt-templating-fix"]  # the first hook's files and options, with --fix
    assert fixing["entry"].split() == [*files["entry"].split(), "--fix"]
    assert {k: v for k, v in fixing.items() if k not in {"id", "name", "description", "entry"}} == {
        k: v for k, v in files.items() if k not in {"id", "name", "description", "entry"}
    }


def test_pre_commit_fix_hook(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fix hook's entry on the files pre-commit stages: the safe fixes are written (pre-commit then fails
    the commit on the changed files), an excluded file is left alone, and a second run (the next commit
    attempt) changes nothing and passes when no error is left."""
    hook = next(h for h in hook_manifest() if h["id"] == "agent-prompt-templating-fix")
    program, *entry = hook["entry"].split()
    assert program == "templating"
    write(tmp_path, "pyproject.toml", '[tool.templating]\nexclude = ["drafts"]\n')
    (tmp_path / "drafts").mkdir()
    write(tmp_path, "drafts/wip.prompt", "<example>x</example>\n")
    write(tmp_path, "support.prompt", "Answer <name>.\nShow an <example>like this</example>.\nThanks < name >.\n")
    write(
        tmp_path,
        "prompts.py",
        'from templating import Template\n\nPROMPT = Template("Greet <guest>. An <example>x</example>.")\n',
    )
    monkeypatch.chdir(tmp_path)
    staged = ["drafts/wip.prompt", "support.prompt", "prompts.py"]
    assert all(re.search(hook["files"], name) for name in staged)
    code, out, err = run([*entry, "--no-cache", *staged], capsys)
    assert (tmp_path / "drafts/wip.prompt").read_text(encoding="utf-8") == "<example>x</example>\n"
    fixed = (tmp_path / "support.prompt").read_text(encoding="utf-8")
    assert fixed == "Answer <name>.\nShow an <<example>>like this</example>.\nThanks <name>.\n"
    assert 'Template("Greet <guest>. An <<example>>x</example>.")' in (tmp_path / "prompts.py").read_text(
        encoding="utf-8"
    )
    assert "applied 3 fixes in 2 files; 1 finding left" in out + err  # T014: nothing writes guest
    assert code == 0
    before = {name: (tmp_path / name).read_bytes() for name in staged}
    code, out, err = run([*entry, "--no-cache", *staged], capsys)
    assert {name: (tmp_path / name).read_bytes() for name in staged} == before
    assert "applied 0 fixes in 0 files; 1 finding left" in out + err
    assert code == 0


def test_bad_glob_in_config_exits_2_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "a.prompt", "Hi <name>")
    for table in ('include = ["[z-a].txt"]', '[tool.templating.per-file-ignores]\n"[z-a]" = ["T008"]'):
        write(tmp_path, "pyproject.toml", f"[tool.templating]\n{table}\n")
        code, out, err = run(["lint", "a.prompt"], capsys)
        assert (code, out) == (2, "")
        assert err.startswith("templating: error: ")
        assert err.count("\n") == 1
        assert "bad glob '[z-a]" in err
        assert "bad character range z-a" in err


def test_select_all_without_a_schema_runs_every_rule_that_applies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "a.prompt", "Hi <usr:name>")
    assert run(["lint", "a.prompt", "--select", "ALL", "--format", "json"], capsys)[0] == 1
    write(tmp_path, "pyproject.toml", '[tool.templating]\nselect = ["ALL"]\n')
    code, out, _ = run(["lint", "a.prompt", "--format", "json"], capsys)
    assert code == 1
    assert [d["code"] for d in json.loads(out)] == ["T003"]
    write(tmp_path, "keys.json", '["name", "spare"]')
    code, out, _ = run(["lint", "a.prompt", "--schema", "keys.json", "--format", "json"], capsys)
    assert sorted(d["code"] for d in json.loads(out)) == ["T003", "T011", "T011"]  # with a schema, ALL has T011


def test_a_file_named_twice_is_linted_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "a.txt", "Hi <usr:name>")
    code, out, err = run(["lint", "a.txt", "./a.txt"], capsys)
    assert code == 1
    assert out.count(": T003 ") == 1
    assert err == "1 template checked: 1 error\n"


def test_github_format_on_stdin_names_no_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, _ = run(["lint", "-", "--format", "github"], capsys, stdin="Hi <usr:name>", monkeypatch=monkeypatch)
    assert code == 1
    assert out.startswith("::error line=1,endLine=1,col=4,endColumn=14,title=T003::")
    assert "file=" not in out


def test_allow_in_config(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "a.prompt", "Say <scratch-pad> then <first-name>.")
    write(tmp_path, "pyproject.toml", '[tool.templating]\nallow = ["<scratch-pad>"]\n')
    code, out, _ = run(["lint", "a.prompt", "--format", "json"], capsys)
    assert code == 0
    assert [(d["code"], d["column"]) for d in json.loads(out)] == [("T005", 24)]


NOISY_MODULE = """\
import sys
print("hello from the model module")
if "exit" in __name__:
    sys.exit(3)
from pydantic import BaseModel
class S(BaseModel):
    name: str
"""


def test_schema_module_cannot_exit_or_print_to_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    write(tmp_path, "a.prompt", "Hi <nmae>")
    write(tmp_path, "noisy_models.py", NOISY_MODULE)
    write(tmp_path, "noisy_exit_models.py", NOISY_MODULE)
    try:
        code, out, err = run(["lint", "a.prompt", "--schema", "noisy_models:S", "--format", "json"], capsys)
        assert code == 1
        assert [d["code"] for d in json.loads(out)] == ["T001"]  # stdout is the JSON report only
        assert "hello from the model module" in err
        code, out, err = run(["lint", "a.prompt", "--schema", "noisy_exit_models:S"], capsys)
        assert (code, out) == (2, "")
        assert "templating: error: cannot import schema 'noisy_exit_models:S': importing it called sys.exit(3)" in err
    finally:
        sys.modules.pop("noisy_models", None)
        sys.modules.pop("noisy_exit_models", None)


# --- Python files: the instructions inside agent code (issue 8)

PY_PROMPT = '''\
"""Prompts."""

ROOT_PROMPT = """
You plan trips for {user:name}.
Use {itinerary}.
"""
'''
PY_AGENT = """\
from google.adk.agents import LlmAgent
from templating import instruction

from .prompt import ROOT_PROMPT

x = 1 << 2 if 1 < 2 > 0 else 3  # Python code is never read as a template
planner = LlmAgent(name="planner", instruction=ROOT_PROMPT, output_key="plan")
helper = LlmAgent(name="helper", instruction="Summarise {plan}, then {extra}.")
support = instruction("Hi < name >,\\n" "see <plan>")
"""


@pytest.fixture
def py_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "agents" / "prompt.py").write_text(PY_PROMPT, encoding="utf-8")
    (tmp_path / "agents" / "agent.py").write_text(PY_AGENT, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("data", "code", "expected"),
    [
        (
            b"# -*- coding: latin-1 -*-\nfrom google.adk.agents import Agent\n"
            b'A = Agent(name="a", instruction="Gr\xfc\xdfe {nmae}")\n',
            0,
            "agents/old.py:3:40: T014",
        ),
        (
            b"\xef\xbb\xbffrom google.adk.agents import Agent\n"
            b'A = Agent(name="a", instruction="Gr\xc3\xbc\xc3\x9fe {nmae}")\n',
            0,
            "agents/old.py:2:40: T014",
        ),
        (  # a codec that is no text encoding: Python refuses the file; read as UTF-8, it is linted
            b"# coding: rot13\nfrom google.adk.agents import Agent\n"
            b'A = Agent(name="a", instruction="Gr\xc3\xbc\xc3\x9fe {nmae}")\n',
            0,
            "agents/old.py:3:40: T014",
        ),
        (
            b'A = "Gr\xfc\xdfe"\n',
            1,
            "agents/old.py:1:8: E002 not valid Python: byte 0xfc is not UTF-8, and no other encoding is declared\n"
            '    A = "Gr\ufffd\ufffde"\n'
            "           ^\n"
            "    help: save the file as UTF-8, or declare its encoding on line 1 or 2 (# -*- coding: latin-1 -*-, "
            "PEP 263)\n",
        ),
        (
            b"# coding: ascii\nA = 1\nB = '\xc3\xbc'\n",
            1,
            "agents/old.py:3:6: E002 not valid Python: byte 0xc3 is not valid ascii, the encoding its coding line "
            "declares\n",
        ),
    ],
    ids=[
        "coding-line",
        "utf8-bom",
        "no-text-encoding",
        "not-utf8-without-a-coding-line",
        "not-in-the-declared-encoding",
    ],
)
def test_lint_python_reads_the_declared_encoding(
    py_tree: Path, capsys: pytest.CaptureFixture[str], data: bytes, code: int, expected: str
) -> None:
    (py_tree / "agents" / "old.py").write_bytes(data)
    got, out, err = run(["lint", "agents/old.py"], capsys)
    assert got == code
    assert (out + err).startswith(expected), out + err
    # with other files: the undecodable one is a finding, the others are still linted
    got, out, err = run(["lint", "agents", "--format", "json"], capsys)
    codes = sorted({(row["path"], row["code"]) for row in json.loads(out)})
    assert got == code
    assert ("agents/agent.py", "T002") in codes
    assert ("agents/old.py", "E002") in codes or code == 0


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            b'A = "Gr\xfc\xdfe {x}"\n',
            "Python file is not valid UTF-8 and declares no other encoding (PEP 263): agents/old.py (byte 7)",
        ),
        (
            b"# coding: ascii\nA = '\xc3\xbc {x}'\n",
            "Python file is not valid ascii, as its coding line declares: agents/old.py (byte 21)",
        ),
    ],
    ids=["not-utf8", "not-the-declared-encoding"],
)
@pytest.mark.parametrize("command", [["keys", "agents/old.py"], ["render", "agents/old.py:A"]], ids=["keys", "render"])
def test_keys_and_render_of_an_undecodable_python_file_exit_2(
    py_tree: Path, capsys: pytest.CaptureFixture[str], data: bytes, message: str, command: list[str]
) -> None:
    (py_tree / "agents" / "old.py").write_bytes(data)
    assert run(command, capsys) == (2, "", f"templating: error: {message}; Python itself would refuse it\n")


def test_lint_python_text_output(py_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["lint", "agents"], capsys)
    assert code == 0  # warnings only
    assert out.splitlines()[:3] == [
        "agents/agent.py:8:70: T014 in LlmAgent(name=\"helper\").instruction: '{extra}' reads state key 'extra',"
        " which nothing in the linted files writes (no output_key, state write, state_delta or create_session"
        " state sets it)",
        '    …LlmAgent(name="helper", instruction="Summarise {plan}, then {extra}.")',
        "                                                                 ^^^^^^^",
    ]
    assert "agents/agent.py:9:27: T002 in instruction(...): '< name >' has whitespace inside" in out
    assert "agents/prompt.py:4:20: T014 in ROOT_PROMPT: '{user:name}'" in out
    assert "agents/prompt.py:5:5: T014 in ROOT_PROMPT: '{itinerary}'" in out
    assert "1 << 2" not in out  # the code around the instructions is not linted
    assert err.strip() == "3 templates checked: 4 warnings"


def test_lint_python_json_github_and_html(py_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["lint", "agents", "--format", "json", "--html", "report.html"], capsys)
    rows = json.loads(out)
    assert code == 0
    first = rows[0]
    assert {k: first[k] for k in ("path", "code", "line", "column", "origin")} == {
        "path": "agents/agent.py",
        "code": "T014",
        "line": 8,
        "column": 70,
        "origin": 'LlmAgent(name="helper").instruction',
    }
    source = (py_tree / "agents" / "agent.py").read_text(encoding="utf-8")
    assert all(source[r["start"] : r["end"]] in ("{extra}", "< name >") for r in rows if r["path"] == "agents/agent.py")
    page = (py_tree / "report.html").read_text(encoding="utf-8")
    assert "agents/prompt.py" in page
    assert "ROOT_PROMPT" in page
    code, out, _ = run(["lint", "agents/agent.py", "--format", "github"], capsys)
    assert "::warning file=agents/agent.py,line=9,endLine=9,col=27,endColumn=35,title=T002 (instruction(...))::" in out
    assert "ROOT_PROMPT" not in out  # written in agents/prompt.py, which was not named: its findings are its own
    code, out, _ = run(["lint", "agents/prompt.py", "--format", "github"], capsys)
    assert "title=T014 (ROOT_PROMPT)::" in out


def test_lint_python_rules_config(py_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (py_tree / "pyproject.toml").write_text(
        '[tool.templating]\nconstant-suffixes = ["_TEXT"]\n'
        '[tool.templating.per-file-ignores]\n"agents/prompt.py" = ["T014"]\n',
        encoding="utf-8",
    )
    (py_tree / "agents" / "extra.py").write_text('GREETING_TEXT = "Hi {nmae}"\nOTHER_PROMPT = "Hi {x}"\n', "utf-8")
    code, out, _ = run(["lint", "agents", "--format", "json", "--ignore", "T002"], capsys)
    assert code == 0
    assert sorted((r["path"], r["origin"]) for r in json.loads(out)) == [
        ("agents/agent.py", 'LlmAgent(name="helper").instruction'),
        ("agents/extra.py", "GREETING_TEXT"),
    ]


def test_lint_python_allowed_snippets_as_written_in_the_file(py_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (py_tree / "pyproject.toml").write_text(
        '[tool.templating]\nallow = ["{extra}", "< name >", "{user:name}"]\n', encoding="utf-8"
    )
    code, out, _ = run(["lint", "agents", "--format", "json"], capsys)
    assert code == 0
    assert [(r["code"], r["path"], r["line"], r["column"]) for r in json.loads(out)] == [
        ("T014", "agents/prompt.py", 5, 5)  # {itinerary}: not allowed
    ]


def test_lint_python_with_a_dynamic_write_keeps_t014_silent(py_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (py_tree / "agents" / "tools.py").write_text("def f(tool_context, k):\n    tool_context.state[k] = 1\n", "utf-8")
    code, out, _ = run(["lint", "agents", "--format", "json", "--extend-select", "T015"], capsys)
    assert (code, [r["code"] for r in json.loads(out)]) == (0, ["T002"])


@pytest.mark.parametrize(
    ("broken", "line", "column"),
    [
        ("x = 1\nif x\n", 2, 5),
        ('PROMPT = """Hi {name}\n', 1, 10),  # an unterminated triple-quoted string
        ("def f(:\n    pass\n", 1, 7),
    ],
    ids=["missing-colon", "unterminated-string", "bad-signature"],
)
def test_lint_python_that_does_not_parse_is_a_finding(
    py_tree: Path, capsys: pytest.CaptureFixture[str], broken: str, line: int, column: int
) -> None:
    (py_tree / "agents" / "broken.py").write_text(broken, encoding="utf-8")
    code, out, err = run(["lint", "agents", "--format", "json"], capsys)
    rows = json.loads(out)
    assert code == 1
    assert "Traceback" not in err
    errors = [r for r in rows if r["code"] == "E002"]
    assert [(r["path"], r["line"], r["column"], r["name"]) for r in errors] == [
        ("agents/broken.py", line, column, "python-syntax")
    ]
    assert errors[0]["message"].startswith("not valid Python: ")
    assert errors[0]["url"] == "https://agent-prompt-templating.github.io/agent-prompt-templating/rules/E002/"
    # the other files are still linted; what the broken file writes is unknown, so T014 stays silent
    assert [r["code"] for r in rows if r["code"] != "E002"] == ["T002"]
    code, out, _ = run(["lint", "agents"], capsys)
    assert f"agents/broken.py:{line}:{column}: E002 not valid Python: " in out
    assert "T002" in out
    # rule selections do not turn it off: nothing of the file was checked
    code, out, _ = run(["lint", "agents", "--select", "T001", "--format", "json"], capsys)
    assert code == 1
    assert [r["code"] for r in json.loads(out)] == ["E002"]
    code, out, err = run(["lint", "agents", "--ignore", "E002"], capsys)
    assert (code, out) == (2, "")
    assert "'E002' in ignore is a syntax check, not a rule: no option turns it off" in err


def test_keys_and_render_of_python_that_does_not_parse_exit_2(
    py_tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (py_tree / "agents" / "broken.py").write_text("x = 1\nif x\n", encoding="utf-8")
    for args in (["keys", "agents/broken.py"], ["render", "agents/broken.py:P", "--state", "-"]):
        code, out, err = run(args, capsys)
        assert (code, out) == (2, "")
        assert err.startswith("templating: error: agents/broken.py:2:5: not valid Python: "), err


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("prompt.txt", "Hi <name>, <nick?> <mood?> <name?> <nick?> <<tag>>"),
        (
            "agent.py",
            'from templating import instruction\nHELLO = instruction("Hi <name>, <nick?> <mood?> <name?> <nick?>")\n',
        ),
    ],
    ids=["template-file", "python-file"],
)
def test_keys_marks_optional_keys_the_same_in_every_kind_of_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str, text: str
) -> None:
    """One behaviour: each key once, in order of first use, with `?` when every use of it is optional (a key
    required anywhere must be in state)."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path, name, text)
    code, out, err = run(["keys", name], capsys)
    assert (code, err) == (0, "")
    keys = [line.strip() for line in out.splitlines() if line.startswith("    ") or name.endswith(".txt")]
    assert keys == ["name", "nick?", "mood?"]


def test_keys_of_a_python_file(py_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["keys", "agents/agent.py"], capsys)
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "ROOT_PROMPT (agents/prompt.py:3:18, adk)",
        "    user:name",
        "    itinerary",
        'LlmAgent(name="helper").instruction (agents/agent.py:8:47, adk)',
        "    plan",
        "    extra",
        "instruction(...) (agents/agent.py:9:24, angle)",
        "    plan",
    ]
    code, out, _ = run(["keys", "agents/agent.py:planner", "--format", "json"], capsys)
    (row,) = json.loads(out)
    assert row["names"] == ["ROOT_PROMPT", "planner", "planner.instruction"]
    assert [(k["key"], k["path"], k["line"], k["column"]) for k in row["keys"]] == [
        ("user:name", "agents/prompt.py", 4, 20),
        ("itinerary", "agents/prompt.py", 5, 5),
    ]


RENDER_PY = [
    ("by-constant", "agents/agent.py:ROOT_PROMPT", 0, "\nYou plan trips for Ada.\nUse Rome.\n", ""),
    ("by-agent-name", "agents/agent.py:planner", 0, "\nYou plan trips for Ada.\nUse Rome.\n", ""),
    ("by-agent-field", "agents/agent.py:planner.instruction", 0, "\nYou plan trips for Ada.\nUse Rome.\n", ""),
    ("missing-key", "agents/agent.py:helper", 1, "", "2 required keys are missing from state"),
    (
        "unknown-name",
        "agents/agent.py:nope",
        2,
        "",
        "no instruction named 'nope' in agents/agent.py; its instructions (line:column, label, names):\n"
        '  agents/agent.py:8:47: LlmAgent(name="helper").instruction (helper, helper.instruction)\n'
        "  agents/agent.py:9:24: instruction(...) (support)\n"
        "  agents/prompt.py:3:18: ROOT_PROMPT, given at agents/agent.py:7:48 "
        "(ROOT_PROMPT, planner, planner.instruction)\n",
    ),
    ("no-name-several", "agents/agent.py", 2, "", "agents/agent.py holds 3 instructions: name one as"),
    ("one-instruction", "agents/prompt.py", 0, "\nYou plan trips for Ada.\nUse Rome.\n", ""),
    ("missing-file", "agents/nope.py:X", 2, "", "Python file not found: agents/nope.py"),
]


@pytest.mark.parametrize(("target", "code", "out", "err"), [c[1:] for c in RENDER_PY], ids=[c[0] for c in RENDER_PY])
def test_render_an_instruction_of_a_python_file(
    py_tree: Path, capsys: pytest.CaptureFixture[str], target: str, code: int, out: str, err: str
) -> None:
    state = write(py_tree, "s.json", '{"user:name": "Ada", "itinerary": "Rome"}')
    got = run(["render", target, "--state", state], capsys)
    assert got[:2] == (code, out)
    assert err in got[2]


def test_render_an_ambiguous_name_says_which(py_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (py_tree / "agents" / "two.py").write_text(
        "from google.adk.agents import Agent\n"
        'a = Agent(name="twin", instruction="A {x}")\n'
        'b = Agent(name="twin", instruction="B {y}")\n',
        encoding="utf-8",
    )
    code, out, err = run(["render", "agents/two.py:twin"], capsys)
    assert (code, out) == (2, "")
    assert err == (
        "templating: error: 'twin' names 2 instructions in agents/two.py: pick one by a name only it has "
        "(a, a.instruction, b, b.instruction)\n"
        '  agents/two.py:2:37: Agent(name="twin").instruction (twin, twin.instruction, a, a.instruction)\n'
        '  agents/two.py:3:37: Agent(name="twin").instruction (twin, twin.instruction, b, b.instruction)\n'
    )
    assert run(["render", "agents/two.py:b", "--missing", "keep"], capsys) == (0, "B {y}", "")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("root", "A {x}"),
        ("root.instruction", "A {x}"),
        ("root.global_instruction", "B {y}"),
        ("lone.global_instruction", "G {z}"),
    ],
    ids=["agent-name-is-its-instruction", "instruction", "global-instruction", "the-global-one-by-its-name"],
)
def test_render_an_agent_by_name(py_tree: Path, capsys: pytest.CaptureFixture[str], name: str, expected: str) -> None:
    (py_tree / "agents" / "two.py").write_text(
        "from google.adk.agents import Agent\n"
        'a = Agent(name="root", global_instruction="B {y}", instruction="A {x}")\n'
        'b = Agent(name="lone", global_instruction="G {z}")\n',
        encoding="utf-8",
    )
    code, out, err = run(["render", f"agents/two.py:{name}", "--missing", "keep"], capsys)
    assert (code, out, err) == (0, expected, "")


UNREAD_AGENT = (
    "from google.adk.agents import Agent\n"
    "def provider(ctx):\n    return 'hi'\n"
    'root_agent = Agent(name="root", global_instruction="You serve {user:name}.", instruction=provider)\n'
    'lone = Agent(name="lone", global_instruction="G {z}")\n'
)
# (id, the command's arguments before FILE.py:NAME, NAME, the error)
UNREAD_AGENT_CASES = [
    *(
        (
            f"{command}-{name}",
            [command, *extra],
            name,
            f'Agent(name="root").instruction at agents/three.py:4:90 cannot be rendered from the code: '
            f"'provider' is a function (an instruction provider): its text is known only when it runs; to render "
            f"another of its instructions, name it: agents/three.py:{name}.global_instruction",
        )
        for command, extra in (("render", ["--missing", "keep"]), ("convert", ["--from", "adk"]), ("keys", []))
        for name in ("root", "root_agent")
    ),
    (
        "no-instruction-at-all",
        ["render"],
        "lone",
        "the agent 'lone' in agents/three.py gives no instruction= that can be read; to render another of its "
        "instructions, name it: agents/three.py:lone.global_instruction",
    ),
]


@pytest.mark.parametrize(
    ("args", "name", "error"), [c[1:] for c in UNREAD_AGENT_CASES], ids=[c[0] for c in UNREAD_AGENT_CASES]
)
def test_an_agent_s_unread_instruction_is_never_replaced_by_its_global_one(
    py_tree: Path, capsys: pytest.CaptureFixture[str], args: list[str], name: str, error: str
) -> None:
    """`render`, `convert` and `keys` of `FILE.py:AGENT` pick the agent's instruction or fail (exit 2) saying what
    could not be read and how to name the agent's other instructions: never its global_instruction instead."""
    (py_tree / "agents" / "three.py").write_text(UNREAD_AGENT, encoding="utf-8")
    assert run([*args, f"agents/three.py:{name}"], capsys) == (2, "", f"templating: error: {error}\n")


def test_render_an_agent_whose_instruction_is_a_function_says_why(
    py_tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (py_tree / "agents" / "two.py").write_text(
        "from google.adk.agents import Agent\n"
        "def provider(ctx):\n    return 'hi'\n"
        'a = Agent(name="dyn", instruction=provider)\n',
        encoding="utf-8",
    )
    code, out, err = run(["render", "agents/two.py:dyn"], capsys)
    assert (code, out) == (2, "")
    assert err.startswith(
        'templating: error: Agent(name="dyn").instruction at agents/two.py:4:35 cannot be rendered from the code: '
        "'provider' is a function (an instruction provider)"
    ), err


def test_keys_lists_a_jinja_instruction_s_state_reads(py_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (py_tree / "agents" / "report.py").write_text(
        "from templating import jinja\n\n"
        "REPORT = jinja(\"{{ user.name }}: {% for t in tickets %}{{ t }}{% endfor %}{{ note | default('') }}\")\n",
        encoding="utf-8",
    )
    assert run(["keys", "agents/report.py:REPORT"], capsys) == (
        0,
        "jinja(...) (agents/report.py:3:17, jinja)\n    user:name\n    tickets\n    note?\n",
        "",
    )
    code, out, _ = run(["keys", "agents/report.py:REPORT", "--format", "json"], capsys)
    assert code == 0
    (row,) = json.loads(out)
    assert [(k["key"], k["optional"], k["line"], k["column"]) for k in row["keys"]] == [
        ("user:name", False, 3, 20),
        ("tickets", False, 3, 46),
        ("note", True, 3, 78),
    ]


OWN_PROVIDERS = (
    "from templating import Agent, instruction, jinja\n"
    "\n"
    'GREETING = instruction("## Greeting\\nHi <name>, welcome.")\n'
    'support = Agent(name="sup", instruction=instruction("**Support** for <who>"))\n'
    'REPORT: object = jinja("{% for t in tickets %}- {{ t }}\\n{% endfor %}")\n'
    'loose = [instruction("A <a>"), instruction("B <b>")]\n'
    'greeter = Agent(name="greeter", instruction=GREETING)\n'
)
OWN_PROVIDERS_RENDER = [
    ("constant", "GREETING", 0, "## Greeting\nHi Ada, welcome.", ""),
    ("agent-name", "sup", 0, "**Support** for Bo", ""),
    ("agent-field", "sup.instruction", 0, "**Support** for Bo", ""),
    ("annotated-jinja-constant", "REPORT", 0, "- 1\n- 2\n", ""),
    ("agent-given-the-constant", "greeter", 0, "## Greeting\nHi Ada, welcome.", ""),
    ("unnamed-is-not-a-name", "loose", 2, "", "no instruction named 'loose' in agents/own.py; its instructions"),
]


@pytest.mark.parametrize(
    ("name", "code", "out", "err"), [c[1:] for c in OWN_PROVIDERS_RENDER], ids=[c[0] for c in OWN_PROVIDERS_RENDER]
)
def test_render_templatings_own_instruction_by_its_constant_or_agent(
    py_tree: Path, capsys: pytest.CaptureFixture[str], name: str, code: int, out: str, err: str
) -> None:
    (py_tree / "agents" / "own.py").write_text(OWN_PROVIDERS, encoding="utf-8")
    state = write(py_tree, "s.json", '{"name": "Ada", "who": "Bo", "tickets": [1, 2]}')
    got = run(["render", f"agents/own.py:{name}", "--state", state], capsys)
    assert got[:2] == (code, out), got
    assert err in got[2]


PICK_ERRORS = [
    (
        "several-with-names",
        OWN_PROVIDERS,
        ["render", "agents/own.py"],
        "templating: error: agents/own.py holds 5 instructions: name one as agents/own.py:NAME\n"
        "  agents/own.py:3:25: instruction(...) (GREETING, greeter, greeter.instruction)\n"
        "  agents/own.py:4:54: instruction(...) (sup, sup.instruction, support, support.instruction)\n"
        "  agents/own.py:5:25: jinja(...) (REPORT)\n"
        "  agents/own.py:6:23: instruction(...) (no name to pick it by)\n"
        "  agents/own.py:6:45: instruction(...) (no name to pick it by)\n",
    ),
    (
        "several-without-names",
        'from templating import instruction\nloose = [instruction("A <a>"), instruction("B <b>")]\n',
        ["render", "agents/own.py"],
        "templating: error: agents/own.py holds 2 instructions and none has a name to pick it by: assign one to a "
        "module constant (NAME = instruction(...)) or give it to an agent with name=, then use agents/own.py:NAME\n"
        "  agents/own.py:2:23: instruction(...) (no name to pick it by)\n"
        "  agents/own.py:2:45: instruction(...) (no name to pick it by)\n",
    ),
    (
        "render-empty-name",
        OWN_PROVIDERS,
        ["render", "agents/own.py:", "--state", "s.json"],
        "templating: error: agents/own.py: names no instruction: write agents/own.py:NAME (a module constant or "
        "an agent's name=), or agents/own.py alone if it holds one instruction\n",
    ),
    (
        "keys-empty-name",
        OWN_PROVIDERS,
        ["keys", "agents/own.py:"],
        "templating: error: agents/own.py: names no instruction: write agents/own.py:NAME (a module constant or "
        "an agent's name=), or agents/own.py alone if it holds one instruction\n",
    ),
]


@pytest.mark.parametrize(("source", "args", "err"), [c[1:] for c in PICK_ERRORS], ids=[c[0] for c in PICK_ERRORS])
def test_picking_an_instruction_of_a_python_file_says_how(
    py_tree: Path, capsys: pytest.CaptureFixture[str], source: str, args: list[str], err: str
) -> None:
    (py_tree / "agents" / "own.py").write_text(source, encoding="utf-8")
    write(py_tree, "s.json", "{}")
    assert run(args, capsys) == (2, "", err)


# --- FILE.py:NAME picks exactly one instruction, even where two start at the same character

TUTOR = Path(__file__).resolve().parent / "fixtures" / "tutor_project"
TUTOR_STATE = '{"user:name": "Ada", "user:language": "Italian", "topic": "verbs", "covered": "greetings"}'
TUTOR_BASE = "You are a patient language tutor for Ada, who is learning Italian.\n" + (
    "Answer in short sentences and correct one mistake at a time.\n"
)
TUTOR_QUIZ = "Ask one question about verbs and wait for the answer before you go on.\n"
TUTOR_MEMORY = "Topics covered in earlier sessions: greetings.\nDo not quiz the learner on them again.\n"
QUIZ_KEYS = ['LlmAgent(name="quiz").instruction (language_tutor/prompts.py:3:11, adk)']
QUIZ_KEYS += ["    user:name", "    user:language", "    topic"]
REVIEW_KEYS = ['LlmAgent(name="review").instruction (language_tutor/prompts.py:3:11, adk)']
REVIEW_KEYS += ["    user:name", "    user:language", "    covered", "    topic"]
PLANNER_KEYS = ["PLANNER_INSTR (language_tutor/prompts.py:14:20, adk)", "    user:name"]
TUTOR_CANDIDATES = (
    '  language_tutor/prompts.py:3:11: LlmAgent(name="quiz").instruction, given at language_tutor/agent.py:27:17 '
    "(quiz, quiz.instruction, quiz_agent, quiz_agent.instruction)\n"
    '  language_tutor/prompts.py:3:11: LlmAgent(name="review").instruction, given at language_tutor/agent.py:34:17 '
    "(review, review.instruction, review_agent, review_agent.instruction)\n"
    "  language_tutor/prompts.py:14:20: PLANNER_INSTR, given at language_tutor/agent.py:18:17 "
    "(PLANNER_INSTR, planner, planner.instruction, planner_agent, planner_agent.instruction)\n"
)
TUTOR_PICKS = [
    # (id, command line, exit code, stdout, stderr)
    ("keys-of-the-agents", ["keys", "language_tutor/agent.py"], 0, [*PLANNER_KEYS, *QUIZ_KEYS, *REVIEW_KEYS], ""),
    (
        "keys-of-the-prompt-module",
        ["keys", "language_tutor/prompts.py"],
        0,
        [*PLANNER_KEYS, *QUIZ_KEYS, *REVIEW_KEYS],
        "",
    ),
    ("keys-by-agent-name", ["keys", "language_tutor/agent.py:quiz"], 0, QUIZ_KEYS, ""),
    ("keys-by-the-other-agent-name", ["keys", "language_tutor/agent.py:review"], 0, REVIEW_KEYS, ""),
    ("keys-by-agent-field", ["keys", "language_tutor/agent.py:review.instruction"], 0, REVIEW_KEYS, ""),
    ("keys-by-name-in-the-prompt-module", ["keys", "language_tutor/prompts.py:quiz"], 0, QUIZ_KEYS, ""),
    (
        "render-one",
        ["render", "language_tutor/agent.py:quiz", "--state", "s.json"],
        0,
        (TUTOR_BASE + TUTOR_QUIZ).splitlines(),
        "",
    ),
    (
        "render-the-other",
        ["render", "language_tutor/agent.py:review", "--state", "s.json"],
        0,
        (TUTOR_BASE + TUTOR_MEMORY + TUTOR_QUIZ).splitlines(),
        "",
    ),
    (
        "a-piece-is-no-instruction",
        ["keys", "language_tutor/prompts.py:BASE"],
        2,
        [],
        "templating: error: no instruction named 'BASE' in language_tutor/prompts.py; its instructions "
        "(line:column, label, names):\n" + TUTOR_CANDIDATES,
    ),
    (
        "unknown-name",
        ["render", "language_tutor/agent.py:quizz", "--state", "s.json"],
        2,
        [],
        "templating: error: no instruction named 'quizz' in language_tutor/agent.py; its instructions "
        "(line:column, label, names):\n" + TUTOR_CANDIDATES,
    ),
    (
        "no-name-several",
        ["render", "language_tutor/agent.py", "--state", "s.json"],
        2,
        [],
        "templating: error: language_tutor/agent.py holds 3 instructions: name one as language_tutor/agent.py:NAME\n"
        + TUTOR_CANDIDATES,
    ),
    (
        "one-name-two-agents",
        ["keys", "language_tutor/drills.py:drill"],
        2,
        [],
        "templating: error: 'drill' names 2 instructions in language_tutor/drills.py: pick one by a name only it "
        "has (deep, deep.instruction, warmup, warmup.instruction)\n"
        '  language_tutor/prompts.py:3:11: LlmAgent(name="drill").instruction, given at language_tutor/drills.py:5:71 '
        "(drill, drill.instruction, warmup, warmup.instruction)\n"
        '  language_tutor/prompts.py:3:11: LlmAgent(name="drill").instruction, given at language_tutor/drills.py:6:69 '
        "(drill, drill.instruction, deep, deep.instruction)\n",
    ),
    (
        "by-the-variable-an-agent-is-assigned-to",
        ["keys", "language_tutor/drills.py:deep"],
        0,
        [
            'LlmAgent(name="drill").instruction (language_tutor/prompts.py:3:11, adk)',
            *["    user:name", "    user:language", "    topic", "    covered"],
        ],
        "",
    ),
    (
        "one-name-two-agents-and-no-other",
        ["keys", "language_tutor/drills2.py:drill"],
        2,
        [],
        "templating: error: 'drill' names 2 instructions in language_tutor/drills2.py: give each its own name\n"
        '  language_tutor/prompts.py:3:11: LlmAgent(name="drill").instruction, given at language_tutor/drills2.py:8:70 '
        "(drill, drill.instruction)\n"
        '  language_tutor/prompts.py:3:11: LlmAgent(name="drill").instruction, given at language_tutor/drills2.py:9:70 '
        "(drill, drill.instruction)\n",
    ),
]
TUTOR_DRILLS = """\
from google.adk.agents import LlmAgent

from .prompts import BASE, MEMORY, QUIZ

warmup = LlmAgent(name="drill", model="gemini-2.0-flash", instruction=BASE + MEMORY)
deep = LlmAgent(name="drill", model="gemini-2.0-flash", instruction=BASE + QUIZ + MEMORY)
"""
TUTOR_DRILLS2 = """\
from google.adk.agents import LlmAgent, SequentialAgent

from .prompts import BASE, MEMORY, QUIZ

drills = SequentialAgent(
    name="drills",
    sub_agents=[
        LlmAgent(name="drill", model="gemini-2.0-flash", instruction=BASE + MEMORY),
        LlmAgent(name="drill", model="gemini-2.0-flash", instruction=BASE + QUIZ + MEMORY),
    ],
)
"""


@pytest.fixture
def tutor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "tutor"
    shutil.copytree(TUTOR, root)
    (root / ".git").mkdir()
    write(root, "s.json", TUTOR_STATE)
    monkeypatch.chdir(root)
    return root


@pytest.mark.parametrize(("args", "code", "out", "err"), [c[1:] for c in TUTOR_PICKS], ids=[c[0] for c in TUTOR_PICKS])
def test_file_py_name_picks_exactly_one_instruction(
    tutor: Path, capsys: pytest.CaptureFixture[str], args: list[str], code: int, out: list[str], err: str
) -> None:
    if "drills" in args[1]:  # another module of agents: two named alike
        write(tutor, args[1].partition(":")[0], TUTOR_DRILLS2 if "drills2" in args[1] else TUTOR_DRILLS)
    got = run(args, capsys)
    assert got == (code, "".join(line + "\n" for line in out), err)


def test_keys_json_tells_two_instructions_at_one_place_apart(tutor: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["keys", "language_tutor/agent.py", "--format", "json"], capsys)
    assert (code, err) == (0, "")
    rows = json.loads(out)
    assert [(r["names"][0], r["line"], r["column"], [k["key"] for k in r["keys"]]) for r in rows] == [
        ("PLANNER_INSTR", 14, 20, ["user:name"]),
        ("quiz", 3, 11, ["user:name", "user:language", "topic"]),
        ("review", 3, 11, ["user:name", "user:language", "covered", "topic"]),
    ]


def test_an_ambiguous_name_is_exit_2_without_a_traceback_in_a_real_process(tutor: Path) -> None:
    write(tutor, "language_tutor/drills.py", TUTOR_DRILLS)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    done = subprocess.run(
        [sys.executable, "-m", "templating", "render", "language_tutor/drills.py:drill"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("templating: error: 'drill' names 2 instructions in language_tutor/drills.py")
    assert done.stderr.count("language_tutor/prompts.py:3:11: ") == 2


MISSING_IN_PY = [
    (
        "triple-quoted-own-instruction",
        "from templating import instruction\n\n"
        'P = instruction("""## Task\nHello <name>, order <order>.\nAgain <name>.""")\n',
        "agents/own.py:P",
        [
            "agents/own.py:3:20 (instruction(...)): 2 required keys are missing from state: 'name', 'order'",
            "  at agents/own.py:4:7: 'name' is missing (also at agents/own.py:5:7)",
            "    Hello <name>, order <order>.",
            "          ^^^^^^",
            "  at agents/own.py:4:21: 'order' is missing",
            "    Hello <name>, order <order>.",
            "                        ^^^^^^^",
        ],
    ),
    (
        "escapes-and-concatenation",
        'from google.adk.agents import Agent\na = Agent(name="a", instruction="<b>Hi</b>\\t" "{user:name}")\n',
        "agents/own.py:a",
        [
            "agents/own.py:2:34 (Agent(name=\"a\").instruction): 1 required key is missing from state: 'user:name'",
            "  at agents/own.py:2:48: 'user:name' is missing",
            '    a = Agent(name="a", instruction="<b>Hi</b>\\t" "{user:name}")',
            "    " + " " * 47 + "^" * 11,
        ],
    ),
    (
        "constant-imported-from-another-file",
        None,
        "agents/agent.py:planner",
        [
            "agents/prompt.py:3:18 (ROOT_PROMPT): 2 required keys are missing from state: 'user:name', 'itinerary'",
            "  at agents/prompt.py:4:20: 'user:name' is missing",
            "    You plan trips for {user:name}.",
            "                       ^^^^^^^^^^^",
            "  at agents/prompt.py:5:5: 'itinerary' is missing",
            "    Use {itinerary}.",
            "        ^^^^^^^^^^^",
        ],
    ),
]


@pytest.mark.parametrize(
    ("source", "target", "expected"), [c[1:] for c in MISSING_IN_PY], ids=[c[0] for c in MISSING_IN_PY]
)
def test_render_python_missing_keys_point_into_the_py_file(
    py_tree: Path, capsys: pytest.CaptureFixture[str], source: str | None, target: str, expected: list[str]
) -> None:
    if source is not None:
        (py_tree / "agents" / "own.py").write_text(source, encoding="utf-8")
    code, out, err = run(["render", target], capsys)
    assert (code, out) == (1, "")
    assert err.splitlines()[: len(expected)] == expected
    assert err.splitlines()[-1].startswith("help: ")


CANDIDATES = (
    '  agents/agent.py:8:47: LlmAgent(name="helper").instruction (helper, helper.instruction)\n'
    "  agents/agent.py:9:24: instruction(...) (support)\n"
    "  agents/prompt.py:3:18: ROOT_PROMPT, given at agents/agent.py:7:48 (ROOT_PROMPT, planner, planner.instruction)\n"
)
CONVERT_PY = [
    ("by-agent-name", "agents/agent.py:helper", 0, "Summarise <plan>, then <extra>.", ""),
    ("by-constant", "agents/agent.py:ROOT_PROMPT", 0, "\nYou plan trips for <user:name>.\nUse <itinerary>.\n", ""),
    (
        "by-agent-field",
        "agents/agent.py:planner.instruction",
        0,
        "\nYou plan trips for <user:name>.\nUse <itinerary>.\n",
        "",
    ),
    ("one-instruction", "agents/prompt.py", 0, "\nYou plan trips for <user:name>.\nUse <itinerary>.\n", ""),
    (
        "no-name-several",
        "agents/agent.py",
        2,
        "",
        "templating: error: agents/agent.py holds 3 instructions: name one as agents/agent.py:NAME\n" + CANDIDATES,
    ),
    (
        "unknown-name",
        "agents/agent.py:nope",
        2,
        "",
        "templating: error: no instruction named 'nope' in agents/agent.py; its instructions (line:column, label, "
        "names):\n" + CANDIDATES,
    ),
    (
        "angle-instruction",
        "agents/agent.py:support",
        2,
        "",
        "templating: error: agents/agent.py:9:24: instruction(...) is read in the angle syntax, not ADK's {key}: "
        "there is nothing to convert\n",
    ),
    ("missing-file", "agents/nope.py:X", 2, "", "templating: error: Python file not found: agents/nope.py\n"),
]


@pytest.mark.parametrize(("target", "code", "out", "err"), [c[1:] for c in CONVERT_PY], ids=[c[0] for c in CONVERT_PY])
def test_convert_an_instruction_of_a_python_file(
    py_tree: Path, capsys: pytest.CaptureFixture[str], target: str, code: int, out: str, err: str
) -> None:
    """FILE.py:NAME is picked as render and keys pick it; the .py file itself is never changed."""
    before = {p: p.read_bytes() for p in (py_tree / "agents").iterdir()}
    assert run(["convert", target, "--from", "adk"], capsys) == (code, out, err)
    assert {p: p.read_bytes() for p in (py_tree / "agents").iterdir()} == before
    if code == 0:  # the result renders as the ADK instruction did, in the angle syntax
        state = write(py_tree, "s.json", '{"user:name": "Ada", "itinerary": "Rome", "plan": "P", "extra": "E"}')
        converted = write(py_tree, "converted.txt", out)
        rendered = run(["render", converted, "--state", state], capsys)
        assert rendered == (0, run(["render", target, "--state", state], capsys)[1], "")


def test_convert_a_python_instruction_warns_at_its_place_in_the_file(
    py_tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (py_tree / "agents" / "docs.py").write_text(
        "from google.adk.agents import Agent\n\n"
        'A = Agent(name="docs", instruction="Use {artifact.faq} for {topic}.")\n',
        encoding="utf-8",
    )
    code, out, err = run(["convert", "agents/docs.py:docs", "--from", "adk"], capsys)
    assert (code, out) == (0, "Use {artifact.faq} for <topic>.")
    assert err.startswith("agents/docs.py:3:41: warning: '{artifact.faq}': "), err


TEMPLATE_COUNTS = [
    ("jinja-only", {"agents/j.py": 'from templating import jinja\nJ = jinja("{% if x %}hi")\n'}, ["agents/j.py"], 1),
    (
        "code-without-instructions-counts-none",
        {"agents/plain.py": "x = 1\n", "agents/j.py": 'from templating import jinja\nJ = jinja("{{ x }}")\n'},
        ["agents/plain.py", "agents/j.py", "agents/__init__.py"],
        1,
    ),
    # the fixture's tree: ROOT_PROMPT (prompt.py), two in agent.py; plus a Jinja2 one and a text file
    (
        "tree-with-text-file",
        {"agents/j.py": 'from templating import jinja\nJ = jinja("{{ x }}")\n', "a.txt": "## Hi <name>\n"},
        ["agents", "a.txt"],
        5,
    ),
]


@pytest.mark.parametrize(
    ("files", "paths", "count"), [c[1:] for c in TEMPLATE_COUNTS], ids=[c[0] for c in TEMPLATE_COUNTS]
)
def test_lint_counts_templates_the_same_in_text_and_html(
    py_tree: Path, capsys: pytest.CaptureFixture[str], files: dict[str, str], paths: list[str], count: int
) -> None:
    for name, text in files.items():
        (py_tree / name).write_text(text, encoding="utf-8")
    _, out, err = run(["lint", *paths, "--html", "r.html"], capsys)
    noun = "template" if count == 1 else "templates"
    assert f"\n{count} {noun} checked: " in "\n" + (out + err).splitlines()[-1]
    html = (py_tree / "r.html").read_text(encoding="utf-8")
    assert f"<span>{count} {noun}</span>" in html


# --- templating lint: severity overrides, --statistics, --exit-zero, --output-file (issue 25)
# py_tree gives three T014 warnings and one T002 warning.


def _config(severity: str | None) -> None:
    text = '[tool.templating]\ninclude = ["agents/**/*.py"]\n'
    Path("pyproject.toml").write_text(text + (f"severity = {severity}\n" if severity else ""), encoding="utf-8")


# (id, the severity table, options, exit code, what stdout holds)
LINT_LEVELS = [
    ("warnings-only-exit-0", None, [], 0, "T014"),
    ("t014-as-error-exits-1", '{ T014 = "error" }', [], 1, "T014"),
    ("by-rule-name", '{ key-never-written = "error" }', [], 1, "T014"),
    ("lowercase-code", '{ t014 = "error" }', [], 1, "T014"),
    ("exit-zero", '{ T014 = "error" }', ["--exit-zero"], 0, "T014"),
    ("statistics", '{ T014 = "error" }', ["--statistics"], 1, "3  T014  error    key-never-written\n"),
    (
        "statistics-json",
        '{ T002 = "info" }',
        ["--statistics", "--format", "json"],
        0,
        '"code": "T002",\n    "name": "spaced-placeholder",\n    "severity": "info",\n    "count": 1',
    ),
    ("statistics-exit-zero", '{ T002 = "error" }', ["--statistics", "--exit-zero"], 0, "1  T002  error    "),
    ("demoted-error-exits-0", '{ T014 = "info", T002 = "info" }', ["--select", "T014,T002"], 0, "T014"),
]


@pytest.mark.parametrize(
    ("severity", "options", "code", "shown"), [c[1:] for c in LINT_LEVELS], ids=[c[0] for c in LINT_LEVELS]
)
def test_lint_severity_overrides_and_exit_code(
    py_tree: Path, capsys: pytest.CaptureFixture[str], severity: str | None, options: list[str], code: int, shown: str
) -> None:
    _config(severity)
    exit_code, out, err = run(["lint", *options], capsys)
    assert exit_code == code, err
    assert shown in out
    if "--statistics" in options and "json" not in options:
        assert out.splitlines()[0].split()[:2] == ["3", "T014"]  # most findings first
        assert "agents/agent.py" not in out  # counts, not the findings


def test_lint_statistics_counts_every_finding(py_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _config(None)
    _, out, _ = run(["lint", "--format", "json"], capsys)
    findings = json.loads(out)
    _, out, _ = run(["lint", "--statistics", "--format", "json"], capsys)
    counts = {row["code"]: row["count"] for row in json.loads(out)}
    assert counts == {code: sum(f["code"] == code for f in findings) for code in {f["code"] for f in findings}}
    assert sum(counts.values()) == len(findings) == 4


# (format, what shows each T014 finding at the severity "error")
LEVEL_IN_FORMATS = [
    ("text", None),
    ("json", '"severity": "error"'),
    ("github", "::error file="),
    ("sarif", "error"),
]


@pytest.mark.parametrize(("fmt", "marker"), LEVEL_IN_FORMATS, ids=[c[0] for c in LEVEL_IN_FORMATS])
def test_every_output_format_shows_the_configured_severity(
    py_tree: Path, capsys: pytest.CaptureFixture[str], fmt: str, marker: str | None
) -> None:
    _config('{ T014 = "error" }')
    code, out, err = run(["lint", "--format", fmt, "--html", "report.html"], capsys)
    assert code == 1
    if marker is None:
        assert err.strip().endswith("3 errors, 1 warning")
    elif fmt == "sarif":
        results = json.loads(out)["runs"][0]["results"]
        assert sorted((r["ruleId"], r["level"]) for r in results) == [("T002", "warning")] + [("T014", marker)] * 3
    else:
        assert out.count(marker) == 3
    assert "3 errors" in Path("report.html").read_text(encoding="utf-8")


# (id, the severity table, the error message's end)
BAD_SEVERITIES = [
    ("unknown-code", '{ T099 = "error" }', "unknown rule 'T099' in 'severity' (known: T001, T002,"),
    ("unknown-name", '{ never-written = "error" }', "unknown rule 'never-written' in 'severity'"),
    ("bad-level", '{ T014 = "fatal" }', 'the severity of T014 must be "error", "warning" or "info", not \'fatal\''),
    ("level-in-capitals", '{ T014 = "ERROR" }', "not 'ERROR'"),
    ("level-not-a-string", "{ T014 = 2 }", "the severity of T014 must be"),
    ("syntax-check", '{ E002 = "warning" }', "'E002' in 'severity' is a syntax check, whose severity is fixed"),
    ("not-a-table", '"error"', "'severity' must be a table of rule = level, such as severity = { T014 = \"error\" }"),
]


@pytest.mark.parametrize(("severity", "message"), [c[1:] for c in BAD_SEVERITIES], ids=[c[0] for c in BAD_SEVERITIES])
def test_a_bad_severity_is_a_usage_error_naming_it_and_writes_nothing(
    py_tree: Path, capsys: pytest.CaptureFixture[str], severity: str, message: str
) -> None:
    _config(severity)
    Path("findings.json").write_text("earlier run\n", encoding="utf-8")
    code, out, err = run(["lint", "--format", "json", "--output-file", "findings.json"], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("templating: error: ")
    assert "pyproject.toml [tool.templating]: " in err
    assert message in err
    assert Path("findings.json").read_text(encoding="utf-8") == "earlier run\n"  # a failed lint changes nothing
    assert sorted(p.name for p in py_tree.iterdir()) == ["agents", "findings.json", "pyproject.toml"]


# (id, options): --output-file holds exactly what stdout would
OUTPUT_FILES = [
    ("text", []),
    ("json", ["--format", "json"]),
    ("sarif", ["--format", "sarif"]),
    ("github", ["--format", "github"]),
    ("statistics", ["--statistics"]),
    ("statistics-json", ["--statistics", "--format", "json"]),
]


@pytest.mark.parametrize("options", [c[1] for c in OUTPUT_FILES], ids=[c[0] for c in OUTPUT_FILES])
def test_output_file_holds_what_stdout_would(
    py_tree: Path, capsys: pytest.CaptureFixture[str], options: list[str]
) -> None:
    _config('{ T014 = "error" }')
    code, printed, _ = run(["lint", *options], capsys)
    (py_tree / "out").mkdir()
    target = py_tree / "out" / "findings"
    target.write_text("an older and much longer report\n" * 100, encoding="utf-8")
    target.chmod(0o640)
    assert run(["lint", *options, "--output-file", "out/findings"], capsys)[:2] == (code, "")
    assert target.read_text(encoding="utf-8") == printed
    assert (target.stat().st_mode & 0o777) == 0o640  # the file's permissions are kept
    assert [p.name for p in (py_tree / "out").iterdir()] == ["findings"]  # no temporary file left


def test_output_file_new_and_exit_zero(py_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _config('{ T014 = "error" }')
    code, out, err = run(["lint", "--exit-zero", "--output-file", "report.txt"], capsys)
    assert (code, out) == (0, "")
    assert err.strip() == "3 templates checked: 3 errors, 1 warning"
    assert Path("report.txt").read_text(encoding="utf-8").startswith("agents/agent.py:8:70: T014 ")


@pytest.mark.parametrize(
    ("target", "message"),
    [("missing/findings.txt", "No such file or directory"), ("agents", "it is a folder")],
    ids=["folder-missing", "a-folder"],
)
def test_output_file_that_cannot_be_written_is_a_usage_error(
    py_tree: Path, capsys: pytest.CaptureFixture[str], target: str, message: str
) -> None:
    code, out, err = run(["lint", "agents", "--output-file", target], capsys)
    assert (code, out) == (2, "")
    assert err == f"templating: error: cannot write the output file {target}: {message}\n"
    assert sorted(p.name for p in py_tree.iterdir()) == ["agents"]


@pytest.mark.parametrize("fmt", ["sarif", "github"])
def test_statistics_in_sarif_or_github_is_a_usage_error(
    py_tree: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    code, out, err = run(["lint", "agents", "--statistics", "--format", fmt], capsys)
    assert (code, out) == (2, "")
    assert f"--statistics prints text or json, not {fmt}" in err


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


# --- templating lint --fix / --unsafe-fixes / --diff ------------------------------------------------------------

_ADK_AGENT = 'from google.adk.agents import LlmAgent\n\nroot = LlmAgent(name="r", model="m", instruction="{0}")\n'
_PROMPT_MODULE = 'from templating import Template\n\nPROMPT = Template("{0}")\n'


def _literal_span(source: str) -> tuple[int, int]:
    """The character span of the one string literal holding the instruction (quotes excluded)."""
    import ast

    lines = source.splitlines(keepends=True)
    starts = [sum(len(line) for line in lines[:n]) for n in range(len(lines))]
    for node in ast.walk(ast.parse(source)):
        text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""
        if ("<" in text or "{" in text) and node.end_lineno is not None:  # ASCII sources: columns are characters
            start = starts[node.lineno - 1] + node.col_offset
            end = starts[node.end_lineno - 1] + (node.end_col_offset or 0)
            return start + 1, end - 1
    raise AssertionError("no instruction literal")


def _changed(before: str, after: str) -> tuple[int, int]:
    """The span of `before` an edit replaced (common prefix and suffix left out)."""
    prefix = 0
    while prefix < min(len(before), len(after)) and before[prefix] == after[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(before), len(after)) - prefix and before[-1 - suffix] == after[-1 - suffix]:
        suffix += 1
    return prefix, len(before) - suffix


def _fix_project(tmp_path: Path, name: str, text: str) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.templating]\n", encoding="utf-8")
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "before", "unsafe", "after", "left", "exit_code"),
    [
        (
            "agent.py",
            _ADK_AGENT.format("Hello {user_name}, check {user-name} now."),
            False,
            _ADK_AGENT.format("Hello {user_name}, check {user_name} now."),
            ["T014"],
            0,
        ),
        ("agent.py", _ADK_AGENT.format("check {plann} now."), False, None, ["T014"], 0),
        (
            "agent.py",
            _ADK_AGENT.format("check {plann} now."),
            True,
            _ADK_AGENT.format("check {plann?} now."),
            [],
            0,
        ),
        (
            "prompts.py",
            _PROMPT_MODULE.format("Greet <guest> now, < guest >. An <example>x</example>."),
            False,
            _PROMPT_MODULE.format("Greet <guest> now, <guest>. An <<example>>x</example>."),
            ["T014"],
            0,
        ),
        (
            "prompts.py",
            _PROMPT_MODULE.format(r"Greet <guest>. An <\x65xample>x</example>."),
            False,
            None,
            ["T007", "T014"],
            1,
        ),
        (
            "support.prompt",
            "Answer <name>.\nShow an <example>like this</example>.\nThanks < name >.\n",
            False,
            "Answer <name>.\nShow an <<example>>like this</example>.\nThanks <name>.\n",
            [],
            0,
        ),
        ("support.prompt", "Thanks <guest??>.\n", False, "Thanks <guest?>.\n", [], 0),
        ("support.prompt", "Thanks < guest >.\n", False, None, ["T002"], 0),
        ("support.prompt", "Thanks < guest >.\n", True, "Thanks <guest>.\n", [], 0),
    ],
    ids=[
        "adk-near-miss-safe",
        "adk-make-optional-not-safe",
        "adk-make-optional-unsafe-fixes",
        "prompt-module-close-and-escape",
        "python-escape-sequence-not-edited",
        "prompt-file-close-and-escape",
        "doubled-question-mark",
        "new-required-key-not-safe",
        "new-required-key-unsafe-fixes",
    ],
)
def test_lint_fix(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    before: str,
    unsafe: bool,
    after: str | None,
    left: list[str],
    exit_code: int,
) -> None:
    path = _fix_project(tmp_path, name, before)
    monkeypatch.chdir(tmp_path)
    extra = ["--unsafe-fixes"] if unsafe else []
    # --diff shows the fix and writes nothing
    code, out, err = run(["lint", "--no-cache", "--diff", *extra, name], capsys)
    assert path.read_text(encoding="utf-8") == before
    assert code == (1 if after is not None else 0), err
    assert (f"--- a/{name}" in out) == (after is not None), out
    # --fix writes it, lints again and exits on what is left
    code, out, err = run(["lint", "--no-cache", "--format", "json", "--fix", *extra, name], capsys)
    fixed = path.read_text(encoding="utf-8")
    assert fixed == (after if after is not None else before)
    assert sorted(d["code"] for d in json.loads(out)) == left
    assert code == exit_code, err
    if name.endswith(".py") and after is not None:  # the edit stays inside the instruction's string literal
        start, end = _literal_span(before)
        changed = _changed(before, fixed)
        assert start <= changed[0] <= changed[1] <= end, (changed, (start, end))
    # a fix is never applied twice: a second run changes nothing
    code, _, err = run(["lint", "--no-cache", "--fix", *extra, name], capsys)
    assert path.read_text(encoding="utf-8") == fixed
    assert "applied 0 fixes in 0 files" in err or "applied 0 fixes in 0 files" in _
    code, out, _ = run(["lint", "--no-cache", "--diff", *extra, name], capsys)
    assert (code, out) == (0, "")


@pytest.mark.parametrize(
    ("unsafe", "after", "note"),
    [
        # the spaced placeholder is closed (a new required key), then T009 makes it optional: two passes
        (
            True,
            "Call <nick?>.\nShow <<example>>x</example>.\n",
            "applied 3 fixes in 1 file (2 passes); no findings left",
        ),
        (
            False,
            "Call < nick >.\nShow <<example>>x</example>.\n",
            "applied 1 fix in 1 file; 1 finding left (1 fixable with --unsafe-fixes)",
        ),
    ],
    ids=["unsafe-two-passes", "safe-one-pass"],
)
def test_lint_fix_until_stable(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    unsafe: bool,
    after: str,
    note: str,
) -> None:
    """--fix lints the fixed text again and fixes what that finds, until nothing is left to fix; --diff shows
    the end result of every pass and writes nothing; the note says how many fixes and what is left."""
    before = "Call < nick >.\nShow <example>x</example>.\n"
    path = _fix_project(tmp_path, "support.prompt", before)
    (tmp_path / "keys.json").write_text('["nick?"]', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    args = ["lint", "--no-cache", "--schema", "keys.json", *(["--unsafe-fixes"] if unsafe else [])]
    code, out, err = run([*args, "--diff", "support.prompt"], capsys)
    assert path.read_text(encoding="utf-8") == before
    assert code == 1
    removed = [line[1:] for line in out.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line[1:] for line in out.splitlines() if line.startswith("+") and not line.startswith("+++")]
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True) if a != b]
    assert list(zip(removed, added, strict=True)) == changed
    assert note.removeprefix("applied ").split(";")[0].replace(" in", " would be applied in") in err
    code, out, err = run([*args, "--fix", "support.prompt"], capsys)
    assert path.read_text(encoding="utf-8") == after
    assert note in out + err
    assert code == 0
    code, out, err = run([*args, "--diff", "support.prompt"], capsys)  # stable: nothing left to fix
    assert (code, out) == (0, "")
    assert "nothing to fix" in err


@pytest.mark.parametrize("named", ["./support.prompt", "absolute", "sub/../support.prompt"])
def test_lint_fix_until_stable_whatever_the_path_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, named: str
) -> None:
    """Each pass lints the fixed text, not the file on disk again, however the file was named."""
    path = _fix_project(tmp_path, "support.prompt", "Show <example>x</example>.\n")
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    name = str(path) if named == "absolute" else named
    code, _, err = run(["lint", "--no-cache", "--fix", name], capsys)
    assert path.read_text(encoding="utf-8") == "Show <<example>>x</example>.\n"
    assert "not fixed" not in err
    assert code == 0


@pytest.mark.parametrize("grow", [True, False], ids=["never-settles", "goes-round"])
def test_lint_fix_that_does_not_settle_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, grow: bool
) -> None:
    """A fix that keeps finding something to change (a bug in a fix, simulated here): the file is named with
    the rules involved and left as it is, by --fix and by --diff; the other files are fixed."""
    import importlib

    from templating.linter.fixes import Fix

    fixes = importlib.import_module("templating.linter.fix_regions")
    original = fixes.fixes_for

    def restless(diag: Any, text: str, *, dialect: str | None = None) -> list[Any]:
        if diag.code != "T002":
            return original(diag, text, dialect=dialect)
        flagged = text[diag.span.start : diag.span.end]
        new = flagged.replace(" >", "  >") if grow else ("< name >" if "  " in flagged else "<  name  >")
        return [Fix(f"Replace with {new}", [(diag.span.start, diag.span.end, new)], codes=(diag.code,))]

    monkeypatch.setattr(fixes, "fixes_for", restless)
    path = _fix_project(tmp_path, "support.prompt", "Thanks < name >.\n")
    other = tmp_path / "other.prompt"
    other.write_text("Show <example>x</example>.\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    message = "support.prompt: not fixed, its fixes (T002) do not settle"
    code, out, err = run(["lint", "--no-cache", "--diff", "support.prompt", "other.prompt"], capsys)
    assert message in err
    assert "support.prompt\n" not in out.replace("other.prompt", "")
    assert "+++ b/other.prompt" in out
    assert code == 1
    code, out, err = run(["lint", "--no-cache", "--fix", "support.prompt", "other.prompt"], capsys)
    assert message in err
    assert path.read_text(encoding="utf-8") == "Thanks < name >.\n"
    assert other.read_text(encoding="utf-8") == "Show <<example>>x</example>.\n"
    assert "applied 1 fix in 1 file; 1 finding left" in out + err
    assert code == 0  # what is left is a warning


def test_lint_fix_leaves_an_artifact_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """T018 has no fix: google-adk loads `{artifact.x?}` from the artifact service as it loads `{artifact.x}`,
    so making it optional would leave the finding (it did)."""
    before = _ADK_AGENT.format("Policy: {artifact.policy}.")
    path = _fix_project(tmp_path, "agent.py", before)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["lint", "--no-cache", "--diff", "--unsafe-fixes", "agent.py"], capsys)
    assert (code, out) == (0, "")
    assert "nothing to fix" in err
    code, out, _ = run(["lint", "--no-cache", "--format", "json", "--fix", "--unsafe-fixes", "agent.py"], capsys)
    assert path.read_text(encoding="utf-8") == before
    assert [d["code"] for d in json.loads(out)] == ["T018"]


_LATIN = '# -*- coding: latin-1 -*-\nfrom templating import Template\n\nP = Template("{0}show <example>x</example>.")\n'


@pytest.mark.parametrize(
    ("name", "before", "after", "message"),
    [
        (
            "bom.prompt",
            "\ufeffShow <example>x</example>.\n".encode(),
            "\ufeffShow <<example>>x</example>.\n".encode(),
            "",
        ),
        (
            "bom.py",
            '\ufefffrom templating import Template\n\nP = Template("Show <example>x</example>.")\n'.encode(),
            '\ufefffrom templating import Template\n\nP = Template("Show <<example>>x</example>.")\n'.encode(),
            "",
        ),
        (
            "ascii.py",
            _LATIN.format("").encode("latin-1"),
            _LATIN.format("").replace("<example>x", "<<example>>x").encode(),
            "",
        ),
        (
            "latin.py",
            _LATIN.format("Caf\xe9: ").encode("latin-1"),
            None,
            "latin.py: not fixed, it is written in iso8859-1 (its coding line) and --fix writes UTF-8",
        ),
    ],
    ids=["template-byte-order-mark", "python-byte-order-mark", "latin-1-ascii", "latin-1-not-ascii"],
)
def test_lint_fix_keeps_the_encoding(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    before: bytes,
    after: bytes | None,
    message: str,
) -> None:
    """A byte order mark stays; a Python file in another encoding is fixed only when its bytes do not change
    by being written in UTF-8, else named and left as it is (never read as 'changed on disk')."""
    _fix_project(tmp_path, "other.txt", "")
    path = tmp_path / name
    path.write_bytes(before)
    monkeypatch.chdir(tmp_path)
    code, _, err = run(["lint", "--no-cache", "--fix", name], capsys)
    assert path.read_bytes() == (after if after is not None else before)
    assert "changed on disk" not in err
    if message:
        assert message in err
        assert code == 1
    else:
        assert "not fixed" not in err
        assert code == 0


def test_lint_fix_rendering_changes_only_the_mistake(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "Answer <name>.\nShow an <example>like this</example>.\nThanks < name >.\n"
    path = _fix_project(tmp_path, "support.prompt", text)
    monkeypatch.chdir(tmp_path)
    run(["lint", "--no-cache", "--fix", "support.prompt"], capsys)
    rendered = Template(path.read_text(encoding="utf-8")).render({"name": "Ada"})
    assert rendered == "Answer Ada.\nShow an <example>like this</example>.\nThanks Ada.\n"


def test_lint_fix_edits_only_inside_the_literal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every planned edit of a Python file lies inside the span of the instruction's string literal."""
    from templating.linter.engine import Project
    from templating.linter.fix_run import plan_fixes

    source = _PROMPT_MODULE.format("Greet <guest> now, < guest >. An <example>x</example>.")
    _fix_project(tmp_path, "prompts.py", source)
    monkeypatch.chdir(tmp_path)
    project = Project(paths=["prompts.py"], cache=False)
    for unsafe in (False, True):
        planned = plan_fixes(project, project.lint(["prompts.py"]), unsafe=unsafe)
        assert len(planned) == 1
        start, end = _literal_span(source)
        edits = [edit for _, fix in planned[0].applied for edit in fix.edits]
        assert len(edits) == (3 if unsafe else 2)
        assert all(start <= a <= b <= end for a, b, _ in edits), (edits, (start, end))


def test_lint_fix_leaves_a_file_changed_meanwhile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    fixes = importlib.import_module("templating.linter.fix_run")
    path = _fix_project(tmp_path, "support.prompt", "Show an <example>like this</example>.\n")
    monkeypatch.chdir(tmp_path)
    planner = fixes.plan_fixes
    edited = "Show an <example>like that</example>.\n"

    def plan_then_edit(*args: Any, **kwargs: Any) -> Any:
        planned = planner(*args, **kwargs)
        path.write_text(edited, encoding="utf-8")  # someone saves the file between the lint and the write
        return planned

    monkeypatch.setattr(fixes, "plan_fixes", plan_then_edit)
    code, _, err = run(["lint", "--no-cache", "--fix", "support.prompt"], capsys)
    assert path.read_text(encoding="utf-8") == edited
    assert "support.prompt: not fixed, it changed on disk since it was linted" in err
    assert code == 1  # the T007 error is still there
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".templating-")]  # no temporary file left


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links")
def test_lint_fix_never_writes_through_a_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = _fix_project(tmp_path, "real.txt", "Show an <example>like this</example>.\n")
    (tmp_path / "support.prompt").symlink_to(real)
    monkeypatch.chdir(tmp_path)
    code, _, err = run(["lint", "--no-cache", "--fix", "support.prompt"], capsys)
    assert real.read_text(encoding="utf-8") == "Show an <example>like this</example>.\n"
    assert (tmp_path / "support.prompt").is_symlink()
    assert "support.prompt: not fixed, it is a symbolic link" in err
    assert code == 1, err


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links")
@pytest.mark.parametrize("walked", [["."], []], ids=["folder-named", "no-paths"])
@pytest.mark.parametrize(
    ("link", "target", "text"),
    [
        ("support.prompt", ".shared/base.txt", "Thanks <guest??>.\n"),
        ("agent.py", ".shared/base.py", 'from templating import instruction\nHI = instruction("Thanks <guest??>.")\n'),
    ],
    ids=["template", "python"],
)
def test_lint_fix_never_writes_through_a_link_found_by_walking(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    walked: list[str],
    link: str,
    target: str,
    text: str,
) -> None:
    """A link found by walking, to a file inside the project that is not linted itself (here in a hidden
    folder, never walked): its target is linted but never written, and named on stderr."""
    _fix_project(tmp_path, "plain.prompt", "Thanks <guest??>.\n")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.templating]\ninclude = ["*.prompt", "agent.py"]\n', encoding="utf-8"
    )
    (tmp_path / ".shared").mkdir()
    (tmp_path / target).write_text(text, encoding="utf-8")
    (tmp_path / link).symlink_to(tmp_path / target)
    monkeypatch.chdir(tmp_path)
    message = f"templating: {target}: not fixed, it was found through the symbolic link {link}"
    code, out, err = run(["lint", "--no-cache", "--diff", *walked], capsys)  # what --fix would change
    assert (code, out.count("+++ "), "+++ b/plain.prompt" in out, message in err) == (1, 1, True, True), out + err
    code, _, err = run(["lint", "--no-cache", "--fix", *walked], capsys)
    assert (tmp_path / target).read_text(encoding="utf-8") == text
    assert (tmp_path / link).is_symlink()
    assert (tmp_path / "plain.prompt").read_text(encoding="utf-8") == "Thanks <guest?>.\n"  # the others are fixed
    assert message in err
    assert code == 1, err  # its T006 is left


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--unsafe-fixes", "x.prompt"], "--unsafe-fixes widens --fix or --diff"),
        (["--fix", "-"], "--fix fixes files on disk: it cannot be combined with '-' (stdin)"),
        (["--diff", "--write-baseline", "b.json", "x.prompt"], "--diff fixes files on disk"),
        (["--diff", "--output-file", "out.txt", "x.prompt"], "--diff prints the fixes and nothing else"),
        (["--diff", "--statistics", "x.prompt"], "it cannot be combined with --statistics"),
    ],
    ids=["unsafe-alone", "fix-stdin", "diff-baseline", "diff-output-file", "diff-statistics"],
)
def test_lint_fix_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    path = _fix_project(tmp_path, "x.prompt", "Thanks < guest >.\n")
    monkeypatch.chdir(tmp_path)
    code, _, err = run(["lint", *args], capsys)
    assert code == 2
    assert message in err
    assert path.read_text(encoding="utf-8") == "Thanks < guest >.\n"


def _adk_injects(instruction: str, state: dict[str, Any]) -> str:
    """What google-adk's own inject_session_state sends to the model for `instruction` and `state`."""
    import asyncio

    require_adk()
    from google.adk.agents import LlmAgent
    from google.adk.agents.invocation_context import InvocationContext
    from google.adk.agents.readonly_context import ReadonlyContext
    from google.adk.sessions import InMemorySessionService
    from google.adk.utils.instructions_utils import inject_session_state

    async def inject() -> str:
        sessions = InMemorySessionService()
        session = await sessions.create_session(app_name="demo", user_id="u1", state=state)
        context = InvocationContext(
            session_service=sessions,
            invocation_id="i1",
            agent=LlmAgent(name="demo", model="gemini-2.5-flash"),
            session=session,
        )
        return await inject_session_state(instruction, ReadonlyContext(context))

    return asyncio.run(inject())


def test_lint_fix_in_an_adk_agent_changes_only_the_mistake_google_adk_sends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import ast

    instruction = "Hello {user_name}, check {user-name} now."
    path = _fix_project(tmp_path, "agent.py", _ADK_AGENT.format(instruction))
    monkeypatch.chdir(tmp_path)
    run(["lint", "--no-cache", "--fix", "agent.py"], capsys)
    start, end = _literal_span(path.read_text(encoding="utf-8"))
    fixed = ast.literal_eval('"' + path.read_text(encoding="utf-8")[start:end] + '"')
    state = {"user_name": "Ada"}
    assert _adk_injects(instruction, state) == "Hello Ada, check {user-name} now."  # the mistake: sent as written
    assert _adk_injects(fixed, state) == "Hello Ada, check Ada now."


@pytest.mark.parametrize(
    ("where", "message"),
    [("outside", "it is outside the project"), ("inside", "")],
    ids=["outside-the-root", "inside-the-root"],
)
def test_a_fix_is_written_only_inside_the_root(tmp_path: Path, where: str, message: str) -> None:
    from templating.linter.fix_regions import FileFix
    from templating.linter.fix_run import FixWriteError, write_fix

    root = tmp_path / "project"
    root.mkdir()
    path = (tmp_path if where == "outside" else root) / "support.prompt"
    path.write_text("<example>x</example>\n", encoding="utf-8")
    path.chmod(0o640)
    fixed = FileFix(str(path), "<example>x</example>\n", "<<example>>x</example>\n", [])
    if message:
        with pytest.raises(FixWriteError, match=message):
            write_fix(fixed, root=str(root))
        assert path.read_text(encoding="utf-8") == "<example>x</example>\n"
    else:
        write_fix(fixed, root=str(root))
        assert path.read_text(encoding="utf-8") == "<<example>>x</example>\n"
        assert path.stat().st_mode & 0o777 == 0o640  # the file keeps its permissions
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".templating-")] == []


_SHARED = (
    'from templating import Template\n\nBASE = "Hi, < guest >."\n'
    'ONE = Template(BASE + " {0}")\nTWO = Template(BASE + " {1}")\n'
)


@pytest.mark.parametrize(
    ("one", "two", "unsafe", "fixed"),
    [
        ("Bye <guest>.", "Bye <guest>.", False, "<guest>"),  # both instructions require guest already
        ("Bye <guest>.", "Bye.", False, "< guest >"),  # TWO would require a key it did not: unsafe there
        # unsafe: closed, then (second pass) made optional, as nothing writes guest (T014)
        ("Bye <guest>.", "Bye.", True, "<guest?>"),
    ],
    ids=["safe-in-both", "unsafe-in-one", "unsafe-fixes"],
)
def test_lint_fix_judges_a_shared_constant_in_every_instruction(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    one: str,
    two: str,
    unsafe: bool,
    fixed: str,
) -> None:
    """A constant given to two instructions is fixed by --fix only when the fix is safe in both."""
    before = _SHARED.format(one, two)
    path = _fix_project(tmp_path, "prompts.py", before)
    monkeypatch.chdir(tmp_path)
    run(["lint", "--no-cache", "--fix", *(["--unsafe-fixes"] if unsafe else []), "prompts.py"], capsys)
    base = path.read_text(encoding="utf-8").splitlines()[2]
    assert base == f'BASE = "Hi, {fixed}."'
