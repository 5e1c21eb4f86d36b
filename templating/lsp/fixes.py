"""Quick fixes for findings: text edits computed from a finding and the text of its file.

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
from ..lint.registry import Diagnostic
from ..nodes import Dialect
from ..template import parse

__all__ = ["Fix", "fixes_for", "suppress_fixes"]

_DID_YOU_MEAN = re.compile(r"did you mean (.+?)(?:, which is written)?\?")
_USES = re.compile(r"this template uses (<[^>]+>)$")


@dataclass(frozen=True, slots=True)
class Fix:
    title: str
    edits: list[tuple[int, int, str]]
    path: str | None = None  # None: the finding's own file
    preferred: bool = False
    codes: tuple[str, ...] = field(default=())


def _replace_word(flagged: str, word: str) -> str | None:
    """`flagged` with the identifier closest to `word` replaced by it."""
    names = re.findall(r"[^\W\d][\w]*", flagged)
    match = difflib.get_close_matches(word.split(":")[-1].split(".")[-1], names, n=1, cutoff=0.0)
    if not match:
        return None
    return re.sub(rf"\b{re.escape(match[0])}\b", word.split(":")[-1].split(".")[-1], flagged, count=1)


_OPTIONAL = frozenset({"T009", "T014", "T018"})  # findings on a required placeholder a missing value breaks


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
            out.append(Fix(f"Replace with {new}", [(start, end, new)], preferred=True, codes=(diag.code,)))
        break
    m = _USES.search(diag.message)
    if m and diag.code == "T008":
        out.append(Fix(f"Replace with {m.group(1)}", [(start, end, m.group(1))], preferred=True, codes=(diag.code,)))
    optional = _made_optional(flagged)
    if diag.code in _OPTIONAL and optional is not None:
        out.append(Fix(f"Make it optional: {optional}", [(start, end, optional)], codes=(diag.code,)))
    if diag.code == "T007" and flagged.startswith("<") and not flagged.startswith("<<"):
        new = f"<{flagged}>"
        out.append(Fix(f"Escape the tag: {new}", [(start, end, new)], preferred=True, codes=(diag.code,)))
    return [fix for fix in out if all(_keeps_dialect(new, dialect) for _, _, new in fix.edits)]


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
    except tomllib.TOMLDecodeError:
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
