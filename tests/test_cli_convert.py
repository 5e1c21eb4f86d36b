"""`templating convert`: an ADK instruction written in this project's syntax, the same render, and what
cannot be said."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import ROOT, cli, run, write, write_bytes
from syrupy.assertion import SnapshotAssertion

from templating import Template


def test_convert_keeps_line_endings(tmp_path: Path) -> None:
    (tmp_path / "adk.txt").write_bytes(b"a {x}\r\nb\r\n")
    result = cli(["convert", str(tmp_path / "adk.txt"), "--from", "adk"])
    assert (result.returncode, result.stdout) == (0, b"a <x>\r\nb\r\n")


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
