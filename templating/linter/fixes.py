"""Fixes for findings: text edits computed from a finding and the text of its file, each marked safe or
unsafe. The language server offers them as quick fixes, the one `--fix` applies marked preferred
([`applied_fix`][templating.linter.fixes.applied_fix]); `templating lint --fix` applies the safe ones
(`--unsafe-fixes`: all), file by file through [`fix_file`][templating.linter.fixes.fix_file], again on the
fixed text until nothing is left ([`fix_until_stable`][templating.linter.fixes.fix_until_stable]). A fix
is offered only when it resolves its finding (so T018, which `{artifact.x?}` keeps, gets none).

Each fix is a title and edits `(start, end, new_text)` in character offsets of one file. A fix keeps
the dialect of the instruction it edits: google-adk substitutes only `{key}`, so a fix in an ADK
instruction writes ADK syntax (`{key?}`, `{user_name}`) or is not offered. Suppressing a rule edits
`pyproject.toml` (a comment in a template would be sent to the model): a rule is turned off for a file
in `[tool.templating.per-file-ignores]`, or a snippet is listed in `allow`; the table is added when
the file has none, and the file is created when the project has none."""

from __future__ import annotations

import ast
import difflib
import functools
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import TemplatingError
from ..inputs import DEFAULT_MAX_FILE_SIZE, FileSkipped, read_bytes, write_text_whole
from ..nodes import Dialect, Escaped, Placeholder
from ..template import parse
from .registry import INVALID_SUPPRESSION, UNUSED_SUPPRESSION, Diagnostic

if TYPE_CHECKING:
    from .engine import Project
    from .result import LintResult

__all__ = [
    "MAX_PASSES",
    "FileFix",
    "Fix",
    "FixRun",
    "Region",
    "applied_fix",
    "diff_of",
    "fix_file",
    "fix_until_stable",
    "fixes_for",
    "plan_fixes",
    "regions_of",
    "suppress_fixes",
    "write_fix",
]

# the suggestion ends at the "?" that ends the question (`did you mean <name?>?`)
_DID_YOU_MEAN = re.compile(r"did you mean (.+?)(?:, which is written)?\?(?=\s|$)")
_USES = re.compile(r"this template uses (<[^>]+>)$")
_SITS_IN = re.compile(r"^(?:did you mean .*? Otherwise )?'[^']*' sits in (?:a URL|code)")
_ANGLE_KEY = re.compile(r"<(?:(?:app|user|temp):)?[^\W\d]\w*\??>")
# T030's help names the placeholder that inserts the key; its fix replaces an access written in the prose with it
_WRITE_THE_KEY = re.compile(r"^write (\{[^{}\s]+\}|<[^<>\s]+>) where the value belongs")
_STATE_ACCESS = re.compile(r"(?:\w+\.)*state\s*\[\s*(['\"`])[^'\"`\s]+\1\s*\]")


@dataclass(frozen=True, slots=True)
class Fix:
    title: str
    edits: list[tuple[int, int, str]]
    path: str | None = None  # None: the finding's own file
    codes: tuple[str, ...] = field(default=())
    # False: the fix changes what renders beyond the mistake (a placeholder made optional), never applied
    # by `--fix` alone; True: safe when `fix_file` finds that it adds no required key (see `_keeps_meaning`)
    safe: bool = True


def _replace_word(flagged: str, word: str) -> str | None:
    """`flagged` with the identifier closest to `word` replaced by it."""
    names = re.findall(r"[^\W\d][\w]*", flagged)
    match = difflib.get_close_matches(word.split(":")[-1].split(".")[-1], names, n=1, cutoff=0.0)
    if not match:
        return None
    return re.sub(rf"\b{re.escape(match[0])}\b", word.split(":")[-1].split(".")[-1], flagged, count=1)


# Findings on a required placeholder that a missing value breaks (or may break: the order rules), and that making
# it optional resolves. Not
# T018: google-adk loads `{artifact.x?}` from the artifact service too (ValueError without one), so the
# finding stays; what fixes it is the Runner's artifact service, outside the instruction.
_OPTIONAL = frozenset({"T009", "T014", "T024", "T025", "T026", "T027"})


def fixes_for(diag: Diagnostic, text: str, *, dialect: str | None = None) -> list[Fix]:
    """The quick fixes of one finding in `text`, its file's text. `dialect` is the dialect of the
    instruction holding the finding (`"adk"`, `"angle"`, `"jinja"`; None: unknown): a fix never writes
    a placeholder of the other dialect, since whatever reads the instruction (google-adk for `{key}`)
    would send it to the model as written."""
    if diag.span is None:
        return []
    start, end = diag.span.start, diag.span.end
    flagged = text[start:end]
    out: list[Fix] = []
    for source in (diag.message, diag.help or ""):
        m = _DID_YOU_MEAN.search(source)
        if m is None:
            continue
        meant = m.group(1)
        quoted = meant[:1] in "'\"" and meant[-1:] == meant[:1]  # a key: replace the name in the placeholder
        new = _replace_word(flagged, meant[1:-1]) if quoted else meant
        if new and new != flagged:
            out.append(Fix(f"Replace with {new}", [(start, end, new)], codes=(diag.code,)))
        break
    m = _USES.search(diag.message)
    if m and diag.code == "T008":
        out.append(Fix(f"Replace with {m.group(1)}", [(start, end, m.group(1))], codes=(diag.code,)))
    optional = _made_optional(flagged)
    if diag.code == "T014" and _SITS_IN.search(diag.help or ""):  # in a URL or code: escape it, do not drop it
        optional = None
        if _ANGLE_KEY.fullmatch(flagged):
            new = f"<{flagged}>"
            out.append(Fix(f"Escape it: {new}", [(start, end, new)], codes=(diag.code,), safe=False))
    if diag.code in _OPTIONAL and optional is not None:
        out.append(Fix(f"Make it optional: {optional}", [(start, end, optional)], codes=(diag.code,), safe=False))
    if diag.code == "T007" and flagged.startswith("<") and not flagged.startswith("<<"):
        new = f"<{flagged}>"
        out.append(Fix(f"Escape the tag: {new}", [(start, end, new)], codes=(diag.code,)))
    if diag.code == "T029" and _ANGLE_KEY.fullmatch(flagged):  # <plan> -> {plan}: the value, or a KeyError
        new = "{" + flagged[1:-1] + "}"
        out.append(Fix(f"Replace with {new}", [(start, end, new)], codes=(diag.code,), safe=False))
    written = _WRITE_THE_KEY.search(diag.help or "")
    if diag.code == "T030" and written and _STATE_ACCESS.fullmatch(flagged):  # state['plan'] -> {plan}
        new = written.group(1)
        out.append(Fix(f"Insert the value: {new}", [(start, end, new)], codes=(diag.code,), safe=False))
    named = _named_in_help(diag.code, flagged, diag.help or "")
    if named is not None and all(new != named[1] for fix in out for _, _, new in fix.edits):
        title, new, safe = named
        out.append(Fix(title, [(start, end, new)], codes=(diag.code,), safe=safe))
    if diag.code in (UNUSED_SUPPRESSION, INVALID_SUPPRESSION):
        out += _comment_fixes(diag, text)
    return [fix for fix in out if all(_keeps_dialect(new, dialect) for _, _, new in fix.edits)]


_ADK_RUN = re.compile(r"(\{+)([^{}]*)(\}+)")  # google-adk's brace run (convert.ADK_CODE_MATCH, whole)
_DOLLAR_OR_PATH = re.compile(r"\$?\{[ \t]*((?:\w+:)?\w+)(?:\.[\w.]+)?[ \t]*(\??)[ \t]*\}")


def _named_in_help(code: str, flagged: str, help_: str) -> tuple[str, str, bool] | None:
    """(title, new text, safe) of the edit `help_` names for the flagged text as `write NEW ...`, for the
    rules whose help names one the other fixes do not make; None when the help names none for this text.
    The new text is worked out from the flagged one and offered only when the help says it verbatim.

    Not safe by themselves: T001's escape (`<<key>>` turns a placeholder the schema lacks into text: a
    typo is as likely) and T020's (`${key}` -> `{key}` drops the `$`, `{a.b}` -> `{a}` inserts the whole
    value). The others are judged as every fix is (`_keeps_meaning`): T017's `{{key}}` -> `{key}` needs
    `key` (google-adk needed it already, but the ADK dialect read the doubled braces as text), unlike
    `{{key?}}` -> `{key?}`; T010's `<key?>` -> `<key>` needs `key`; T013 and T016 need no new key."""
    new: str | None = None
    title, safe = "Replace with {}", True
    if code == "T001" and flagged.startswith("<") and not flagged.startswith("<<"):
        new, title, safe = f"<{flagged}>", "Escape it: {}", False
    elif code == "T010" and flagged.endswith(("?>", "?}", "? }", "? >")):
        inner = flagged[1:-1].strip().removesuffix("?").strip()
        new, title = flagged[0] + inner + flagged[-1], "Make it required: {}"
    elif code == "T013" and flagged.startswith("<<") and flagged.endswith(">>"):
        new = flagged[1:-1]
    elif code in ("T016", "T017") and (run := _ADK_RUN.fullmatch(flagged)) is not None:
        opening, inner, closing = run.groups()
        if code == "T017":
            new = "{" + inner.strip() + "}"
        elif len(opening) == 1:
            new = f"{opening}{inner}{closing[:1]} {closing[1:]}"
    elif code == "T020" and (m := _DOLLAR_OR_PATH.fullmatch(flagged)) is not None:
        new, safe = "{" + m.group(1) + m.group(2) + "}", False
    if new is None or new == flagged or not re.search(rf"(?:^|; )write {re.escape(new)}(?=[ :;]|$)", help_):
        return None
    return title.format(new), new, safe


def _comment_fixes(diag: Diagnostic, text: str) -> list[Fix]:
    """T022 and T023 name edits of a suppression comment: remove a code that silences nothing (or cannot
    be silenced), write a code in capitals or by its code instead of its name. The whole directive goes
    when its only code does (and the line, when the comment was all it held). These edit a comment, not
    an instruction: the editor offers them; `--fix` edits instructions only, and leaves them."""
    if diag.span is None:
        return []
    start, end = diag.span.start, diag.span.end
    code = text[start:end]
    help_ = diag.help or ""
    replaced = re.search(r"(?:codes are written in capitals: |^write )(T\d{3})$", help_)
    if replaced is not None and code != replaced.group(1):
        return [Fix(f"Write {replaced.group(1)}", [(start, end, replaced.group(1))], codes=(diag.code,))]
    if not help_.startswith("remove"):
        return []
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    opened, closed = text.rfind("[", line_start, start), text.find("]", end, line_end)
    directive = next(
        (m for m in _DIRECTIVE_START.finditer(text, line_start, opened + 1) if m.end() == opened + 1), None
    )
    if opened < 0 or closed < 0 or directive is None:
        return []
    codes = [(opened + 1 + m.start(), opened + 1 + m.end()) for m in re.finditer(r"[^,\s]+", text[opened + 1 : closed])]
    at = next((i for i, (a, b) in enumerate(codes) if a <= start and end <= b), None)
    if at is None:
        return []
    title = f"Remove {code} from the comment"
    if len(codes) > 1:  # the code and the comma on one side of it
        a, b = (codes[at - 1][1], codes[at][1]) if at else (codes[0][0], codes[1][0])
        return [Fix(title, [(a, b, "")], codes=(diag.code,))]
    if text[closed + 1 : line_end].strip():
        return []  # words follow the directive in its comment: removing it would leave them as code
    a = directive.start()
    while a > line_start and text[a - 1] in " \t":
        a -= 1
    if a == line_start:  # the comment was the line: the line goes
        return [Fix(title, [(line_start, min(line_end + 1, len(text)), "")], codes=(diag.code,))]
    return [Fix(title, [(a, line_end, "")], codes=(diag.code,))]


# A suppression directive up to the `[` of its codes (suppress._DIRECTIVE).
_DIRECTIVE_START = re.compile(r"#\s*templating:\s*ignore\[")


def _made_optional(flagged: str) -> str | None:
    """`{key}` as `{key?}`, `<key>` as `<key?>`; None for anything else (an optional one, `{{key}}`,
    `<<escaped>>`, a span that is not one placeholder)."""
    for opener, closer in (("{", "}"), ("<", ">")):
        if len(flagged) < 3 or not (flagged.startswith(opener) and flagged.endswith(closer)):
            continue
        inner = flagged[1:-1]
        if opener in inner or closer in inner or "\n" in inner or not inner.strip() or inner.rstrip().endswith("?"):
            return None
        return flagged[:-1].rstrip() + "?" + closer
    return None


def _keeps_dialect(new: str, dialect: str | None) -> bool:
    """Whether `new`, written into an instruction of `dialect`, holds no placeholder of the other one."""
    other: Dialect | None = "angle" if dialect == "adk" else "adk" if dialect == "angle" else None
    if other is None:
        return True
    try:
        return not parse(new, dialect=other).placeholders
    except TemplatingError:
        return True  # not a template of the other dialect at all


_TABLE = re.compile(r"^\[tool\.templating\][ \t]*(?:#[^\n]*)?$", re.MULTILINE)
_PER_FILE = re.compile(r"^\[tool\.templating\.per-file-ignores\][ \t]*(?:#[^\n]*)?$", re.MULTILINE)
_ALLOW = re.compile(r"^allow[ \t]*=[ \t]*\[", re.MULTILINE)


def _toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def suppress_fixes(diag: Diagnostic, relative: str, flagged: str, pyproject: str | None, path: str) -> list[Fix]:
    """Turn `diag`'s rule off for its file (`relative` to the config's folder), or allow the flagged
    snippet everywhere, by editing the `pyproject.toml` at `path` (its text: `pyproject`; None when the
    file does not exist: the fix then writes a new one holding only the table). A project without a
    `[tool.templating]` table gets one. A fix is offered only when the edited file reads back as TOML
    with the suppression in it; a `pyproject.toml` that is not valid TOML gets none."""
    text = pyproject or ""
    if _read_toml(text) is None:
        return []
    out: list[Fix] = []
    checks: list[tuple[str, str]] = []  # what each fix must do: (file, "") turns the rule off, ("", snippet) allows
    lead = "" if not text or text.endswith("\n") else "\n"
    gap = lead + ("\n" if text else "")
    entry = f"{_toml_string(relative)} = [{_toml_string(diag.code)}]"
    table = _PER_FILE.search(text)
    ignore: tuple[int, int, str] | None = None
    if table is not None:
        if _toml_string(relative) not in text[table.end() :]:
            ignore = (table.end(), table.end(), "\n" + entry)
    else:
        ignore = (len(text), len(text), f"{gap}[tool.templating.per-file-ignores]\n{entry}\n")
    if ignore is not None:
        title = f"Turn {diag.code} off for this file (per-file-ignores)"
        out.append(Fix(title, [ignore], path, codes=(diag.code,)))
        checks.append((relative, ""))
    main = _TABLE.search(text)
    if flagged and "\n" not in flagged:
        if main is None:
            at = len(text)
            allow = (at, at, f"{gap}[tool.templating]\nallow = [{_toml_string(flagged)}]\n")
        else:
            body_end = text.find("\n[", main.end())
            body = text[main.end() : body_end if body_end >= 0 else len(text)]
            listed = _ALLOW.search(body)
            if listed is not None:
                at = main.end() + listed.end()
                allow = (at, at, _toml_string(flagged) + ", ")
            else:
                allow = (main.end(), main.end(), f"\nallow = [{_toml_string(flagged)}]")
        out.append(Fix(f"Allow {flagged} everywhere (allow)", [allow], path, codes=(diag.code,)))
        checks.append(("", flagged))
    if pyproject is None:
        out = [Fix(f"{fix.title}, in a new pyproject.toml", fix.edits, path, codes=fix.codes) for fix in out]
    return [
        fix
        for fix, (file, snippet) in zip(out, checks, strict=True)
        if _suppresses(_applied(text, fix.edits), file, diag.code, snippet)
    ]


def _read_toml(text: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):  # not TOML, or nested too deeply to read
        return None


def _applied(text: str, edits: list[tuple[int, int, str]]) -> str:
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _suppresses(text: str, relative: str, code: str, flagged: str) -> bool:
    """Whether the configuration `text` turns `code` off for `relative` (when given), or allows `flagged`
    (when given)."""
    data = _read_toml(text)
    tool = data.get("tool") if data is not None else None
    table = tool.get("templating") if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        return False
    ignores = table.get("per-file-ignores")
    if relative:
        return isinstance(ignores, dict) and code in (ignores.get(relative) or [])
    allow = table.get("allow")
    return isinstance(allow, list) and flagged in allow


# -- applying fixes to a file (`templating lint --fix`, `--diff`)


@dataclass(frozen=True, slots=True)
class Region:
    """One instruction as a fix sees it: its `text`, its `dialect`, and for each character of the text its
    offset in the file when it is written there as itself (None: an escape, an f-string's `{{`, another
    file). A template file is one region whose every character is written as is; an instruction in Python
    code is the characters of its string literals, and a fix edits nothing else."""

    text: str
    dialect: str
    offsets: tuple[int | None, ...]

    @classmethod
    def whole(cls, text: str, dialect: str) -> Region:
        """A template file: the instruction is the file."""
        return cls(text, dialect, tuple(range(len(text))))

    def inside(self, start: int, end: int) -> tuple[int, int] | None:
        """The span of `text` written as the file's `[start, end)`, character for character; None when
        part of it is not (outside the literal, an escape)."""
        if end <= start:
            return None
        try:
            first = self.offsets.index(start)
        except ValueError:
            return None
        last = first + (end - start)
        if last > len(self.offsets) or self.offsets[first:last] != tuple(range(start, end)):
            return None
        return first, last


@dataclass(frozen=True, slots=True)
class FileFix:
    """What fixing one file does: its text `before` and `after`, and the fixes applied (finding, fix)."""

    path: str
    before: str
    after: str
    applied: list[tuple[Diagnostic, Fix]]


# What may not be written into a Python string literal as is (it would need an escape, or end the literal).
_NEEDS_ESCAPE = re.compile(r"[\\'\"\n\r]")


def fix_file(
    path: str, text: str, findings: list[Diagnostic], regions: list[Region], *, unsafe: bool = False
) -> FileFix:
    """Fix the findings of the file `path` (its `text`): for each finding, its first fix that is safe
    (`unsafe`: or unsafe, safe ones first) in every region (instruction) holding the finding's text,
    its edits inside the literal of each; one fix per finding, none overlapping another. Python files
    (`path` ending in `.py`) take only edits that need no escape in the literal."""
    python = path.endswith(".py")
    chosen: list[tuple[Diagnostic, Fix]] = []
    taken: list[tuple[int, int]] = []
    for diag in sorted(findings, key=lambda d: (d.span.start, d.span.end) if d.span else (-1, -1)):
        holding = _holding(diag, regions)
        if holding is None:
            continue
        for fix in _ranked(fixes_for(diag, text, dialect=holding[0].dialect), unsafe=unsafe):
            if any(a < end and start < b for a, b, _ in fix.edits for start, end in taken):
                break  # another fix edits this text already: the next run takes it
            verdicts = [_judge(fix, text, region, python=python) for region in holding]
            if None in verdicts or (not all(verdicts) and not unsafe):
                continue
            chosen.append((diag, fix))
            taken += [(a, b) for a, b, _ in fix.edits]
            break
    edits = [edit for _, fix in chosen for edit in fix.edits]
    return FileFix(path, text, _applied(text, edits), chosen)


def _holding(diag: Diagnostic, regions: list[Region]) -> list[Region] | None:
    """Every instruction holding the text of `diag` (a constant given to two agents, `BASE + QUIZ` and
    `BASE + MEMORY`); None when there is none, or when they read it in two dialects (no fix keeps both)."""
    if diag.span is None:
        return None
    holding = [r for r in regions if r.inside(diag.span.start, diag.span.end) is not None]
    return holding if len({r.dialect for r in holding}) == 1 else None


def applied_fix(diag: Diagnostic, fixes: list[Fix], text: str, regions: list[Region], *, path: str) -> Fix | None:
    """The one of `fixes` (those of `diag`, in the file `path` whose text is `text` and whose instructions
    are `regions`) that `templating lint --fix` applies without `--unsafe-fixes`: the first that is safe
    in every instruction holding the finding; None when none is. The language server marks it preferred
    (an editor's "fix all" applies what `--fix` would)."""
    holding = _holding(diag, regions)
    if holding is None:
        return None
    python = path.endswith(".py")
    for fix in _ranked(fixes, unsafe=False):
        if all(_judge(fix, text, region, python=python) for region in holding):
            return fix
    return None


def regions_of(path: str, text: str, instructions: list[Any], *, dialect: str) -> list[Region]:
    """The instructions of the file `path` as fixes see them: a Python file's `instructions` (each with
    `text`, `dialect` and `written_as_is`, as `pysource` finds them), or a template file read in `dialect`."""
    if not path.endswith(".py"):
        return [Region.whole(text, dialect)]
    return [Region(item.text, item.dialect, tuple(item.written_as_is(path))) for item in instructions]


def _ranked(fixes: list[Fix], *, unsafe: bool) -> list[Fix]:
    return [f for f in fixes if f.safe] + ([f for f in fixes if not f.safe] if unsafe else [])


def _judge(fix: Fix, text: str, region: Region, *, python: bool) -> bool | None:
    """Whether `fix` is safe (True), unsafe (False), or not to be applied here (None: an edit outside
    the instruction's literal, one a Python literal would need to escape, or an instruction that no
    longer parses)."""
    if fix.path is not None or len(fix.edits) != 1:
        return None
    start, end, new = fix.edits[0]
    inner = region.inside(start, end)
    if inner is None:
        return None
    flagged = text[start:end]
    if python and (
        _NEEDS_ESCAPE.search(new)
        or (set(new) & {"{", "}"} and not set(flagged) & {"{", "}"} and _in_fstring(text, start))
    ):
        return None  # a brace written into an f-string would be a replacement field
    i, j = inner
    after = region.text[:i] + new + region.text[j:]
    try:
        old_nodes = parse(region.text, dialect=region.dialect).nodes  # type: ignore[arg-type]
        new_nodes = parse(after, dialect=region.dialect).nodes  # type: ignore[arg-type]
    except (TemplatingError, ValueError):
        return None
    return fix.safe and _keeps_meaning(old_nodes, new_nodes, i, j, len(new) - (j - i))


def _in_fstring(text: str, offset: int) -> bool:
    """Whether the character at `offset` of the Python source `text` is inside an f-string (True when the
    source cannot be read: a brace is then not written)."""
    spans = _fstrings(text)
    return spans is None or any(a <= offset < b for a, b in spans)


@functools.lru_cache(maxsize=8)
def _fstrings(text: str) -> tuple[tuple[int, int], ...] | None:
    """The f-strings of the Python source `text`, as character offsets; None when it is not valid Python."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    starts = [0, *(m.end() for m in re.finditer("\n", text))]

    def offset(line: int, column: int) -> int:  # ast's column counts UTF-8 bytes
        begin = starts[line - 1]
        end = starts[line] if line < len(starts) else len(text)
        return begin + len(text[begin:end].encode("utf-8")[:column].decode("utf-8", "ignore"))

    return tuple(
        (offset(node.lineno, node.col_offset), offset(node.end_lineno or node.lineno, node.end_col_offset or 0))
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr)
    )


def _keeps_meaning(old: tuple[Any, ...], new: tuple[Any, ...], start: int, end: int, shift: int) -> bool:
    """Whether an edit of `[start, end)` changes only what renders there: every placeholder and escape
    outside the edit is still there unchanged, and the instruction requires no key it did not (a new
    required key is a `KeyError` the agent did not raise before)."""

    def marks(nodes: tuple[Any, ...], a: int, b: int, moved: int) -> list[tuple[str, str, bool, int, int]]:
        out = []
        for node in nodes:
            if isinstance(node, Placeholder | Escaped) and (node.span.end <= a or node.span.start >= b):
                at = node.span.start - (moved if node.span.start >= b else 0)
                name = node.key if isinstance(node, Placeholder) else node.text
                out.append((type(node).__name__, name, bool(getattr(node, "optional", False)), at, 0))
        return out

    if marks(old, start, end, 0) != marks(new, start, end + shift, shift):
        return False

    def required(nodes: tuple[Any, ...]) -> set[str]:
        return {n.key for n in nodes if isinstance(n, Placeholder) and not n.optional}

    return required(new) <= required(old)


def plan_fixes(project: Project, result: LintResult, *, unsafe: bool = False) -> list[FileFix]:
    """The fixes of every file `result` (a run of `project`) has findings in, each file as the run read
    it; only files a fix changes."""
    dialects = {t.path: t.dialect for t in result.templates if t.name is None}
    out: list[FileFix] = []
    for path, all_findings in result.by_file().items():
        text = result.sources.get(path)
        # the findings some fix is offered for (in any dialect): a file with none is not read for its
        # instructions (in a Python file, a scan of the project's code)
        findings = [d for d in all_findings if d.span is not None and text is not None and fixes_for(d, text)]
        if text is None or not findings:
            continue
        items: list[Any] = []
        if path.endswith(".py"):
            try:
                items, _ = project.instructions(path)
            except TemplatingError:
                continue
        regions = regions_of(path, text, items, dialect=dialects.get(path, project.dialect or "angle"))
        fixed = fix_file(path, text, findings, regions, unsafe=unsafe)
        if fixed.after != fixed.before:
            out.append(fixed)
    return out


# How many times `fix_until_stable` fixes and lints again at most (ruff: 100). A fix resolves its finding, and
# a finding left for a later pass is one whose fix overlapped another: a project settles in two or three.
MAX_PASSES = 10


@dataclass(frozen=True, slots=True)
class FixRun:
    """What fixing a project until it is stable does. `files`: each file changed, from its text on disk
    (`before`) to its text after the last pass (`after`), with every fix applied to it in any pass;
    `passes`: how many passes changed one of them; `unsettled`: the files whose fixes did not settle
    (fixes still to apply after the last pass, or a pass giving back a text an earlier one had), each
    with the codes of the findings fixed there, left out of `files`: such a file is not written."""

    files: list[FileFix]
    passes: int
    unsettled: dict[str, tuple[str, ...]]

    @property
    def count(self) -> int:
        """The number of fixes applied, over all passes."""
        return sum(len(fixed.applied) for fixed in self.files)


Relint = Callable[[dict[str, str]], "tuple[Project, LintResult]"]


def fix_until_stable(
    project: Project, result: LintResult, relint: Relint, *, unsafe: bool = False, passes: int = MAX_PASSES
) -> FixRun:
    """Fix `result` (a run of `project`), lint again with the fixed texts, and fix what that run finds,
    until no fix is left, at most `passes` times (as ruff's `--fix` does). `relint(texts)` lints the
    project again with `texts` (by path) instead of those files' content on disk, and writes nothing.

    Each pass is judged as [`plan_fixes`][templating.linter.fixes.plan_fixes] judges one run: a fix is
    applied only where it is safe (`unsafe`: acceptable) in the text that pass reads, so what the passes
    do together changes an instruction only where its mistakes were. Nothing is written here."""
    texts: dict[str, str] = {}  # each file changed: its text after the last pass applied to it
    before: dict[str, str] = {}
    applied: dict[str, list[tuple[Diagnostic, Fix]]] = {}
    seen: dict[str, set[str]] = {}
    unsettled: dict[str, tuple[str, ...]] = {}
    last: dict[str, int] = {}  # each file: the last pass that changed it
    for count in range(1, passes + 1):
        planned = [fixed for fixed in plan_fixes(project, result, unsafe=unsafe) if fixed.path not in unsettled]
        if not planned:
            break
        for fixed in planned:
            before.setdefault(fixed.path, fixed.before)
            known = seen.setdefault(fixed.path, {fixed.before})
            if fixed.after in known:  # back to a text an earlier pass had: the fixes go round
                unsettled[fixed.path] = _codes(fixed)
                texts.pop(fixed.path, None)
                continue
            known.add(fixed.after)
            last[fixed.path] = count
            texts[fixed.path] = fixed.after
            applied.setdefault(fixed.path, []).extend(fixed.applied)
        project, result = relint(dict(texts))
    else:
        for fixed in plan_fixes(project, result, unsafe=unsafe):
            if fixed.path not in unsettled:
                unsettled[fixed.path] = _codes(fixed)
                texts.pop(fixed.path, None)
    files = [
        FileFix(path, before[path], text, applied[path])
        for path, text in texts.items()
        if text != before[path] and path not in unsettled
    ]
    return FixRun(files, max((last[fixed.path] for fixed in files), default=0), unsettled)


def _codes(fixed: FileFix) -> tuple[str, ...]:
    return tuple(sorted({diag.code for diag, _ in fixed.applied}))


def diff_of(fixed: FileFix, *, name: str | None = None) -> str:
    """A unified diff of what fixing the file changes. `name`: the file's name as its `---`/`+++` headers
    show it (default: its path as is; the command line passes it escaped, as every output names files)."""
    shown = fixed.path if name is None else name
    lines = difflib.unified_diff(
        fixed.before.splitlines(keepends=True),
        fixed.after.splitlines(keepends=True),
        fromfile=f"a/{shown}",
        tofile=f"b/{shown}",
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


class FixWriteError(TemplatingError):
    """A fixed file that was not written (why: the message); the file is unchanged."""


def write_fix(fixed: FileFix, *, root: str) -> None:
    """Write the fixed file whole or not at all (a temporary file beside it, then renamed over it,
    keeping its permissions and owner). Refused, with the file left as it is: a link, a file outside
    `root`, a file whose content is no longer what was linted (changed on disk since). (A file found
    through a link by walking is left out before: `LintRun`, `Project.found_through_link`.)"""
    path = fixed.path
    real, top = os.path.realpath(path), os.path.realpath(root)
    if os.path.islink(path):
        raise FixWriteError(f"{path}: not fixed, it is a symbolic link")
    if os.path.commonpath([real, top]) != top:
        raise FixWriteError(f"{path}: not fixed, it is outside the project ({root})")
    try:  # bounded, and never waiting on a pipe put there since
        now = read_bytes(path, limit=max(DEFAULT_MAX_FILE_SIZE, 2 * len(fixed.before)), follow=False)
    except (OSError, FileSkipped) as exc:
        raise FixWriteError(f"{path}: not fixed, it cannot be read again: {exc}") from None
    encoding = _encoding_of(path, now)
    try:
        now_text = now.decode(encoding)
    except UnicodeDecodeError:
        raise FixWriteError(
            f"{path}: not fixed, it changed on disk since it was linted (no longer {encoding})"
        ) from None
    mark = "\ufeff" if now_text.startswith("\ufeff") else ""  # read without it, written back with it
    if now_text.removeprefix("\ufeff") != fixed.before:
        raise FixWriteError(f"{path}: not fixed, it changed on disk since it was linted")
    after = mark + fixed.after
    if encoding != "utf-8" and after.encode("utf-8") != _encoded(after, encoding):
        raise FixWriteError(
            f"{path}: not fixed, it is written in {encoding} (its coding line) and --fix writes UTF-8: "
            "apply the fix by hand (templating lint --diff shows it)"
        )
    try:
        write_text_whole(real, after, newline="")
    except OSError as exc:
        raise FixWriteError(f"{path}: not fixed, it cannot be written: {exc.strerror or exc}") from None


def _encoding_of(path: str, data: bytes) -> str:
    """The encoding a file was linted in: a `.py` file's coding line (PEP 263, as `pysource` reads it), else
    UTF-8; a byte order mark is read as a character (written back as it was)."""
    if not path.endswith(".py"):
        return "utf-8"
    import codecs
    import io
    import tokenize

    try:
        declared, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        name = codecs.lookup(declared).name
    except (SyntaxError, LookupError):
        return "utf-8"
    return "utf-8" if name in ("utf-8", "utf-8-sig") else name


def _encoded(text: str, encoding: str) -> bytes | None:
    try:
        return text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return None
