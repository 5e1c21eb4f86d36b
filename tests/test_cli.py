"""The command line: output, exit codes, and clear errors instead of tracebacks."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from templating import Template
from templating.cli import main

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
    assert run(["keys", template], capsys) == (0, "b\na\nuser:d.0\n", "")
    code, out, _ = run(["keys", template, "--format", "json"], capsys)
    assert code == 0
    assert json.loads(out)[1] == {"key": "a", "optional": True, "line": 1, "column": 5}


BAD_INPUT = [
    ("missing-file", lambda p: ["render", str(p / "nope.txt")], "template file not found"),
    ("directory", lambda p: ["keys", str(p)], "template path is a directory"),
    ("not-utf8", lambda p: ["keys", write_bytes(p, "t.txt", b"\xff\xfe<a>")], "template file is not valid UTF-8"),
    (
        "bad-json",
        lambda p: ["render", write(p, "t.txt", "<a>"), "--state", write(p, "s.json", "{oops")],
        "state file is not valid JSON",
    ),
    (
        "json-not-object",
        lambda p: ["render", write(p, "t.txt", "<a>"), "--state", write(p, "s.json", "[1]")],
        "must hold a JSON object",
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


def test_console_script_and_module_entry_points() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "templating", "render", str(EXAMPLE), "--state", str(EXAMPLE_STATE)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "Grace Hopper" in result.stdout


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
