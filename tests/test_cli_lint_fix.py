"""`templating lint --fix`, `--unsafe-fixes` and `--diff`: what is written, where, and when nothing is."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_support import run
from conftest import require_adk

from templating import Template

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
