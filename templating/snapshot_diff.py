"""Diffs of snapshot text that show what a terminal does not: invisible characters written out.

Used by the snapshot plugin ([`templating.pytest_plugin`][]) for a failed comparison; plain text in,
lines out, no pytest.
"""

from __future__ import annotations

import difflib
import unicodedata

__all__ = ["marked_diff"]

_LEGEND = "· a space at the start or end of a line, → a tab, \\r a carriage return, <U+XXXX> any other"
_NAMED = {"\t": "→", "\r": "\\r"}
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"})
# Letters and marks that draw nothing: variation selectors, the grapheme joiner, Hangul fillers, braille blank.
_HIDDEN_OTHERS = frozenset("\u034f\u115f\u1160\u3164\uffa0\u2800" + "".join(map(chr, range(0xFE00, 0xFE10))))


def _hidden(ch: str) -> bool:
    """A character a terminal shows as nothing, or as a plain space though it is not one: controls,
    format characters (zero-width ones, bidi marks, a BOM), every space but the ASCII one."""
    if ch.isascii():
        return not ch.isprintable()
    return unicodedata.category(ch) in _HIDDEN_CATEGORIES or ch in _HIDDEN_OTHERS


def _shown(text: str) -> str:
    return "".join(_NAMED.get(ch) or (f"<U+{ord(ch):04X}>" if _hidden(ch) else ch) for ch in text)


def _marked(line: str) -> str:
    """A changed line with its invisible characters written out, and the spaces at its start and end as `·`."""
    core = line.lstrip(" ")
    stripped = core.rstrip(" ")
    return "·" * (len(line) - len(core)) + _shown(stripped) + "·" * (len(core) - len(stripped))


def _looks(line: str) -> str:
    """Roughly what `line` looks like on screen: hidden characters gone, blanks as single spaces, none at
    either end. Two different lines that look alike differ only in what cannot be seen."""
    kept = "".join(" " if ch == "\t" or unicodedata.category(ch) == "Zs" else "" if _hidden(ch) else ch for ch in line)
    return " ".join(kept.split())


def _lines(text: str) -> list[str]:
    """`text` cut at each `\n` only (a `\r`, a form feed or U+2028 stays inside its line, to be shown)."""
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def marked_diff(old: str, new: str) -> list[str]:
    """A unified diff of snapshot text `old` against received text `new` that shows what a terminal
    does not: changed lines have their invisible characters written out (the legend says how). When
    some lines differ only in such characters (whitespace, control, zero-width, no-break, line
    endings), the diff starts with a line saying how many, the legend, and the first of them (an excerpt
    around the change), so that a failure report cut after its first lines still shows the change."""
    old_lines, new_lines = _lines(old), _lines(new)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    unseen: list[str] = []
    marked = False
    body: list[str] = []
    for group in matcher.get_grouped_opcodes(2):
        first, last = group[0], group[-1]
        body.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                body.extend(" " + _shown(line.removesuffix("\n")) + _end(line) for line in old_lines[i1:i2])
                continue
            removed, added = old_lines[i1:i2], new_lines[j1:j2]
            for number, (a, b) in enumerate(zip(removed, added, strict=False)):
                if _looks(a) == _looks(b):
                    unseen.extend(_pair(i1 + number + 1, a, j1 + number + 1, b))
            for sign, lines in (("-", removed), ("+", added)):
                for line in lines:
                    text = line.removesuffix("\n")
                    shown = _marked(text)
                    marked = marked or shown != text
                    body.append(sign + shown + _end(line))
    if not body:
        return []
    header = ["--- snapshot", "+++ received"]
    if unseen:
        count = len(unseen) // 2
        noun = "line differs" if count == 1 else "lines differ"
        more = count - _LEADING_PAIRS
        header[:0] = [
            f"{count} {noun} only in characters you cannot see (whitespace, control, zero-width, no-break, "
            "line endings); below they are marked:",
            f"    {_LEGEND}",
            *unseen[: 2 * _LEADING_PAIRS],
            *([f"  ({more} more such {'line' if more == 1 else 'lines'} in the diff below)"] if more > 0 else []),
        ]
    elif marked:
        header[:0] = ["invisible characters in changed lines are marked:", f"    {_LEGEND}"]
    return [*header, *body]


_LEADING_PAIRS = 2  # lines shown ahead of the diff: within pytest's default cut (8 lines, 640 characters)
_EXCERPT = 60  # characters of a long line shown around its change
_BEFORE = 20  # of which before the change


def _pair(old_number: int, old: str, new_number: int, new: str) -> list[str]:
    """Two lines that show a changed line marked, as it was and as it is: when long, an excerpt
    starting a little before the first difference."""
    a, b = _marked(old.removesuffix("\n")) + _end(old), _marked(new.removesuffix("\n")) + _end(new)
    if max(len(a), len(b)) > _EXCERPT:
        common = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        start = max(0, common - _BEFORE)
        a, b = (_cut(text, start) for text in (a, b))
    return [f"  snapshot line {old_number}: {a}", f"  received line {new_number}: {b}"]


def _cut(text: str, start: int) -> str:
    end = start + _EXCERPT
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def _end(line: str) -> str:
    return "" if line.endswith("\n") else "  (no newline at end)"


def _range(start: int, stop: int) -> str:
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"
