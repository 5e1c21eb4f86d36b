"""`templating render` and `templating keys`: rendering a template or an instruction of a Python file
(FILE.py:NAME picks exactly one), the keys it reads, and missing keys pointed at in the file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import EXAMPLE, EXAMPLE_STATE, cli, run, write


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
