"""`templating lint`: outputs and exit codes, configuration, severities, output files, pre-commit hooks and
the instructions inside Python agent code. `--fix` and `--diff` are in tests/test_cli_lint_fix.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import ROOT, cli, run, write, write_bytes

from templating.cli.parser import build_parser


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
