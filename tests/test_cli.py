"""The command line: output, exit codes, and clear errors instead of tracebacks."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

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
    ("huge-integer", "<a>", b'{"a": ' + b"9" * 5000 + b"}", 2, "state is not valid JSON"),
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
    assert (code, out) == (0, f"templating {metadata.version('templating')}\n")


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
                "    help: write <name> (no spaces) for a placeholder, or <<name>> for the literal text",
                "{path}:2:1: T007 '<example>' looks like an XML-style tag (</example> follows) but is a placeholder",
                "    <example>x</example>",
                "    ^^^^^^^^^",
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
    assert [(r["code"], r["severity"], r["line"], r["column"], r["path"]) for r in rows] == [
        ("T002", "warning", 1, 4, path),
        ("T007", "error", 2, 1, path),
    ]
    code, out, _ = run(["lint", path, "--format", "github"], capsys)
    assert code == 1
    assert out.splitlines() == [
        f"::warning file={path},line=1,col=4,title=T002::'< name >' has whitespace inside, so it renders as literal "
        "text; did you mean <name>?",
        f"::error file={path},line=2,col=1,title=T007::'<example>' looks like an XML-style tag (</example> follows) "
        "but is a placeholder",
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
    assert f"{schema}: T011 schema key 'name' is not used by any linted template" in out
    assert f"{schema}: T011 schema key 'spare' is not used by any linted template" in out


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
    assert out.count("T001") == 1
    assert "prompts/a.txt:1:11: T001 'nmae' is not in the schema; did you mean 'name'?" in out
    assert err == "2 templates checked: 1 error\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["lint", "nope.prompt"], "template file not found: nope.prompt"),
        (["lint"], "no paths given and no 'include' globs"),
        (["lint", "x.prompt", "--schema", "missing.json"], "schema file not found"),
        (["lint", "x.prompt", "--select", "T999"], "unknown rule 'T999'"),
        (["lint", "x.prompt", "--extend-select", "T011"], "rule T011 (unused schema keys) needs a schema"),
        (["lint", "empty"], "no template files found to lint in empty"),
        (["lint", "-", "-"], "stdin ('-') can be linted only once"),
        (["lint", "x.prompt", "--format", "xml"], "invalid choice: 'xml'"),
        (["lint", "x.prompt", "--html", "no/such/dir/r.html"], "cannot write HTML report"),
        (["lint", "bad.prompt"], "template file is not valid UTF-8"),
    ],
    ids=[
        "missing-file",
        "no-config",
        "bad-schema",
        "bad-rule",
        "t011-no-schema",
        "empty-dir",
        "stdin-twice",
        "bad-format",
        "bad-html",
        "not-utf8",
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
    assert "Traceback" not in err


def test_lint_html_report(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, "a.prompt", LINT_SOURCE)
    code, _, _ = run(["lint", path, "--html", "report.html"], capsys)
    assert code == 1
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert 'class="ph-required" data-kind="required">&lt;order_id&gt;</span>' in page


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
    assert code == 0
    assert out.startswith("examples/support_agent.txt:5:41: T012 '<temp:last_message?>' reads a temp: key")
    assert err == "1 template checked: 1 warning\n"
