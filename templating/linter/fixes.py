"""Fixes for findings: text edits computed from a finding and the text of its file, each marked safe or
unsafe, offered only when they resolve their finding (so T018, which `{artifact.x?}` keeps, gets none).
The language server offers them as quick fixes; `fix_regions` decides where one applies in a file and
`fix_run` applies them until the project is stable (`templating lint --fix`).

Each fix is a title and edits `(start, end, new_text)` in character offsets of one file. A fix keeps
the dialect of the instruction it edits: google-adk substitutes only `{key}`, so a fix in an ADK
instruction writes ADK syntax (`{key?}`, `{user_name}`) or is not offered. Suppressing a rule edits
`pyproject.toml` (a comment in a template would be sent to the model): a rule is turned off for a file
in `[tool.templating.per-file-ignores]`, or a snippet is listed in `allow`; the table is added when
the file has none, and the file is created when the project has none."""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass, field
from typing import Any

from ..errors import TemplatingError
from ..nodes import Dialect
from ..template import parse
from .registry import INVALID_SUPPRESSION, UNUSED_SUPPRESSION, Diagnostic

__all__ = ["Fix", "apply_edits", "fixes_for", "suppress_fixes"]

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
        if _suppresses(apply_edits(text, fix.edits), file, diag.code, snippet)
    ]


def _read_toml(text: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):  # not TOML, or nested too deeply to read
        return None


def apply_edits(text: str, edits: list[tuple[int, int, str]]) -> str:
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
