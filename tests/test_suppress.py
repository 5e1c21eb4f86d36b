"""Suppression comments (`# templating: ignore[T014]`) in Python code, read by the engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from templating.linter.engine import Project
from templating.linter.run import lint_project
from templating.linter.suppress import read_suppressions

HEAD = "from google.adk.agents import LlmAgent\n\n"


def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], config: str = "") -> Path:
    (tmp_path / "pyproject.toml").write_text(f'[tool.templating]\ninclude = ["**/*.py"]\n{config}', encoding="utf-8")
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def found(tmp_path: Path, paths: tuple[str, ...] = ()) -> list[tuple[str, int, str]]:
    result = lint_project(list(paths), root=tmp_path)
    return [(d.code, d.span.line if d.span else 0, d.path or "") for d in result.diagnostics]


# Each case: the agent module's body (after the import), and the (code, line) of every finding left.
CASES = [
    pytest.param('a = LlmAgent(name="a", instruction="Read {plan}.")\n', [("T014", 3)], id="no-comment"),
    pytest.param(
        'a = LlmAgent(name="a", instruction="Read {plan}.")  # templating: ignore[T014]\n', [], id="same-line"
    ),
    pytest.param(
        'a = LlmAgent(\n    name="a",\n    instruction="Read {plan}.",\n)  # templating: ignore[T014]\n',
        [],
        id="last-line-of-the-call",
    ),
    pytest.param(
        'a = LlmAgent(  # templating: ignore[T014]\n    name="a",\n    instruction="Read {plan}.",\n)\n',
        [],
        id="first-line-of-the-call",
    ),
    pytest.param(
        'PLAN_PROMPT = """You plan.\nRead {plan}.\n"""  # templating: ignore[T014]\n'
        'a = LlmAgent(name="a", instruction=PLAN_PROMPT)\n',
        [],
        id="end-of-a-multiline-constant",
    ),
    pytest.param(
        'PLAN_PROMPT = """You plan.\nRead {plan}.\n"""\n'
        'a = LlmAgent(name="a", instruction=PLAN_PROMPT)  # templating: ignore[T014]\n',
        [],
        id="at-the-agent-call-site-of-the-constant",
    ),
    pytest.param(
        'a = LlmAgent(name="a", instruction="Read {plan}.")\n# templating: ignore[T014]\n',
        [("T014", 3), ("T022", 4)],
        id="own-line-after-the-statement",
    ),
    pytest.param(
        'a = LlmAgent(name="a", instruction="Read {plan}.")  # templating: ignore[T009]\n',
        [("T014", 3), ("T022", 3)],
        id="another-code-is-unused",
    ),
    pytest.param(
        'a = LlmAgent(name="a", instruction="Read {plan}.")  # templating: ignore[T014, T017]\n',
        [("T022", 3)],
        id="one-of-two-codes-unused",
    ),
    pytest.param(
        'a = LlmAgent(name="a", instruction="Read {plan} {user-name}.")  # templating: ignore[T014,T019]\n',
        [],
        id="two-codes-both-used",
    ),
    pytest.param(
        'a = LlmAgent(name="a", instruction="Read {plan}.")  # templating: ignore\n',
        [("T014", 3), ("T023", 3)],
        id="bare-comment-is-refused",
    ),
    pytest.param(
        'a = LlmAgent(name="a", instruction="Read {plan}.")  # templating: ignore[]\n',
        [("T014", 3), ("T023", 3)],
        id="empty-list-is-refused",
    ),
    pytest.param(
        'a = LlmAgent(name="a", instruction="Read {plan}.")  # templating: ignore[T014, T999]\n',
        [("T023", 3)],
        id="unknown-code",
    ),
    pytest.param(
        'a = LlmAgent(name="a", instruction="Read {plan}.")  # templating: ignore[t014]\n',
        [("T014", 3), ("T023", 3)],
        id="lower-case-code",
    ),
    pytest.param(
        'a = LlmAgent(name="a", instruction="Read {plan}.")  # templating: ignore[E002]\n',
        [("T014", 3), ("T023", 3)],
        id="a-syntax-check-cannot-be-silenced",
    ),
    pytest.param(
        'a = LlmAgent(name="a", instruction="Read {plan}. # templating: ignore[T014]")\n',
        [("T014", 3)],
        id="hash-inside-the-string-is-no-comment",
    ),
    pytest.param(
        'a = LlmAgent(name="a", instruction="Read {plan}.")  # type: ignore  # templating: ignore[T014]\n',
        [],
        id="after-another-comment",
    ),
    pytest.param(
        'def make():\n    return LlmAgent(name="a", instruction="Read {plan}.")\n',
        [("T014", 4)],
        id="in-a-function-no-comment",
    ),
    pytest.param(
        'def make():  # templating: ignore[T014]\n    return LlmAgent(name="a", instruction="Read {plan}.")\n',
        [("T022", 3), ("T014", 4)],
        id="a-def-line-does-not-cover-its-body",
    ),
    pytest.param(
        'a = LlmAgent(name="a", instruction="Read {plan}.")\nb = 1  # templating: ignore[T014]\n',
        [("T014", 3), ("T022", 4)],
        id="the-next-statement-does-not-cover",
    ),
]


@pytest.mark.parametrize(("body", "expected"), CASES)
def test_a_comment_silences_the_findings_of_its_statement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, expected: list[tuple[str, int]]
) -> None:
    project(tmp_path, monkeypatch, {"agent.py": HEAD + body})
    assert [(code, line) for code, line, _ in found(tmp_path)] == expected


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        pytest.param("", [("T022", 3)], id="default"),
        pytest.param('ignore = ["T022"]\n', [], id="T022-ignored"),
        pytest.param('ignore = ["T017"]\n', [], id="the-unused-code-is-off"),
        pytest.param('[tool.templating.per-file-ignores]\n"agent.py" = ["T022"]\n', [], id="per-file-ignores"),
    ],
)
def test_unused_is_a_rule_like_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str, expected: list[tuple[str, int]]
) -> None:
    body = 'a = LlmAgent(name="a", instruction="Read {plan}.")  # templating: ignore[T014, T017]\n'
    project(tmp_path, monkeypatch, {"agent.py": HEAD + body}, config)
    assert [(code, line) for code, line, _ in found(tmp_path)] == expected


def test_a_prompt_module_linted_alone_keeps_the_call_sites_comment_quiet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompts = 'PLAN_PROMPT = """You plan.\nRead {plan}.\n"""\n'
    agent = (
        HEAD
        + "from prompts import PLAN_PROMPT\n"
        + 'a = LlmAgent(name="a", instruction=PLAN_PROMPT)  # templating: ignore[T014]\n'
    )
    project(tmp_path, monkeypatch, {"prompts.py": prompts, "agent.py": agent})
    assert found(tmp_path) == []
    assert found(tmp_path, ("prompts.py",)) == []  # silenced by the agent's comment, read for context
    assert found(tmp_path, ("agent.py",)) == []  # the finding is in prompts.py, not linted: the comment is not unused


def test_the_language_servers_path_gets_the_same_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = 'a = LlmAgent(name="a", instruction="Read {plan}.")\n'
    project(tmp_path, monkeypatch, {"agent.py": HEAD + body})
    server = Project(tmp_path)
    assert [d.code for d in server.lint(["agent.py"]).diagnostics] == ["T014"]
    edited = HEAD + body.replace("\n", "  # templating: ignore[T014]\n")
    assert server.update("agent.py", edited).diagnostics == []
    stale = HEAD + 'a = LlmAgent(name="a", instruction="Read {plan?}.")  # templating: ignore[T014]\n'
    assert [d.code for d in server.update("agent.py", stale).diagnostics] == ["T022"]


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        pytest.param("x = 1  # templating: ignore[T014]\n", [["T014"]], id="one"),
        pytest.param('def f():\n    """Doc.\n    # templating: ignore[T014]\n    """\n', [], id="in-a-docstring"),
        pytest.param("class A:\n    x = 1  # templating: ignore[T014]\n", [["T014"]], id="indented"),
        pytest.param("x = 1 +\ny = 2  # templating: ignore[T014]\n", [["T014"]], id="not-parsed-but-tokenized"),
        pytest.param(
            'x = """\nA""" ; y = 1  # templating: ignore[T014]\n', [["T014"]], id="after-a-string-ending-on-its-line"
        ),
        pytest.param("x = 1  # templating: ignore[ T014 ,T009 ]\n", [["T014", "T009"]], id="spaces"),
        pytest.param("x = '# templating: ignore[T014]'\n", [], id="in-a-string"),
        pytest.param('x = """\n# templating: ignore[T014]\n"""\n', [], id="in-a-triple-quoted-string"),
        pytest.param("x = (\n", [], id="not-python"),
        pytest.param("import templating\n", [], id="no-directive"),
    ],
)
def test_directives_are_read_from_comments_only(text: str, codes: list[list[str]]) -> None:
    read = read_suppressions("a.py", text)
    assert [[code for code, _ in d.codes] for d in read.directives] == codes


def test_a_codes_span_points_at_the_code() -> None:
    text = "x = 1\ny = 2  # templating: ignore[T014, T999]\n"
    read = read_suppressions("a.py", text)
    ((code, span),) = read.directives[0].codes
    assert (code, text[span.start : span.end], span.line, span.column) == ("T014", "T014", 2, 29)
    (bad,) = read.invalid
    assert bad.span is not None
    assert text[bad.span.start : bad.span.end] == "T999"


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        pytest.param("x = (\n    1,  # templating: ignore[T014]\n)\n", (1, 3), id="a-call-over-lines"),
        pytest.param("if x:  # templating: ignore[T014]\n    y = 1\n", (1, 1), id="a-header"),
        pytest.param("@dec(\n  a)  # templating: ignore[T014]\ndef f():\n    pass\n", (1, 3), id="decorated-header"),
        pytest.param("def f():\n    pass\n# templating: ignore[T014]\n", (3, 3), id="between-statements"),
        pytest.param("if x: y = [\n  1]  # templating: ignore[T014]\n", (1, 2), id="one-line-if-body"),
    ],
)
def test_a_directive_covers_its_statements_lines(text: str, lines: tuple[int, int]) -> None:
    (directive,) = read_suppressions("a.py", text).directives
    assert (directive.first, directive.last) == lines


def test_comments_need_no_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = 'a = LlmAgent(name="a", instruction="Read {plan} {x}.")  # templating: ignore[T014]\n'
    (tmp_path / "agent.py").write_text(HEAD + body, encoding="utf-8")  # no pyproject.toml at all
    monkeypatch.chdir(tmp_path)
    assert lint_project(["agent.py"]).diagnostics == []
    (tmp_path / "agent.py").write_text(HEAD + body.replace("  # templating: ignore[T014]", ""), encoding="utf-8")
    assert [d.code for d in lint_project(["agent.py"]).diagnostics] == ["T014", "T014"]
