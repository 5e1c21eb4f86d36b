"""Quick fixes for findings: text edits computed from a finding and the text of its file.

Each fix is a title and edits `(start, end, new_text)` in character offsets of one file. Suppressing
a rule edits `pyproject.toml`: the linter has no inline marker (a comment in a template would be sent
to the model), so a rule is turned off for a file in `[tool.templating.per-file-ignores]`, or a
snippet is listed in `allow`."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from ..convert import ConversionError, convert_adk
from ..lint.registry import Diagnostic

__all__ = ["Fix", "convert_fix", "fixes_for", "suppress_fixes"]

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


def fixes_for(diag: Diagnostic, text: str) -> list[Fix]:
    """The quick fixes of one finding in `text`, its file's text."""
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
    if diag.code in {"T014", "T009"} and not flagged.rstrip(">}").endswith("?"):
        closer = flagged[-1:]
        if closer in {">", "}"}:
            new = flagged[:-1].rstrip() + "?" + closer
            out.append(Fix(f"Make it optional: {new}", [(start, end, new)], codes=(diag.code,)))
    if diag.code == "T007" and flagged.startswith("<") and not flagged.startswith("<<"):
        new = f"<{flagged}>"
        out.append(Fix(f"Escape the tag: {new}", [(start, end, new)], preferred=True, codes=(diag.code,)))
    return out


def convert_fix(text: str, start: int, end: int) -> Fix | None:
    """Rewrite an ADK `{key}` instruction written at `start`..`end` of `text` in the angle syntax."""
    try:
        converted, _ = convert_adk(text[start:end])
    except ConversionError:
        return None
    if converted == text[start:end]:
        return None
    return Fix("Convert this instruction to the <key> syntax (templating convert)", [(start, end, converted)])


_TABLE = re.compile(r"^\[tool\.templating\][ \t]*(?:#[^\n]*)?$", re.MULTILINE)
_PER_FILE = re.compile(r"^\[tool\.templating\.per-file-ignores\][ \t]*(?:#[^\n]*)?$", re.MULTILINE)
_ALLOW = re.compile(r"^allow[ \t]*=[ \t]*\[", re.MULTILINE)


def _toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def suppress_fixes(diag: Diagnostic, relative: str, flagged: str, pyproject: str, path: str) -> list[Fix]:
    """Turn `diag`'s rule off for its file (`relative` to the config's folder), or allow the flagged
    snippet everywhere, by editing the `pyproject.toml` at `path` (its text: `pyproject`)."""
    out: list[Fix] = []
    entry = f"{_toml_string(relative)} = [{_toml_string(diag.code)}]\n"
    table = _PER_FILE.search(pyproject)
    if table is not None:
        if _toml_string(relative) not in pyproject[table.end() :]:
            at = table.end() + 1
            out.append(Fix(f"Turn {diag.code} off for this file (per-file-ignores)", [(at, at, entry)], path))
    elif _TABLE.search(pyproject) is not None:
        at = len(pyproject)
        lead = "" if pyproject.endswith("\n") else "\n"
        block = f"{lead}\n[tool.templating.per-file-ignores]\n{entry}"
        out.append(Fix(f"Turn {diag.code} off for this file (per-file-ignores)", [(at, at, block)], path))
    main = _TABLE.search(pyproject)
    if main is not None and flagged and "\n" not in flagged:
        body_end = pyproject.find("\n[", main.end())
        body = pyproject[main.end() : body_end if body_end >= 0 else len(pyproject)]
        allow = _ALLOW.search(body)
        if allow is not None:
            at = main.end() + allow.end()
            new = _toml_string(flagged) + ", "
        else:
            at = main.end() + 1
            new = f"allow = [{_toml_string(flagged)}]\n"
        out.append(Fix(f"Allow {flagged} everywhere (allow)", [(at, at, new)], path))
    return out
