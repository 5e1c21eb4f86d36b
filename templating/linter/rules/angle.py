"""The angle syntax's near-miss rules (T002..T006, T008, T013).

Each flags literal text (it renders unchanged) that looks meant as a placeholder."""

from __future__ import annotations

from collections.abc import Iterator

from ...nodes import Literal
from ..registry import PREFIXES_AND as _PREFIXES_AND
from ..source import (
    _BAD_NAME,
    _BRACES,
    _DOUBLED,
    _ESCAPED_ATTRS,
    _ESCAPED_CLOSING,
    _RIGHT_OPERAND,
    _SCOPED,
    _SPACED,
    _TAG_WORD,
    _UNCLOSED,
    _for_the_reader,
    _scope_meant,
    _Source,
)


def _literal_rules(src: _Source, node: Literal, on: frozenset[str]) -> Iterator[tuple[str, int, int, str, str]]:
    """Near misses in one literal: (code, start, end, message, help)."""
    text, base = node.text, node.span.start
    if "T002" in on:
        for m in _SPACED.finditer(text):
            if not (m.group(1) or m.group(3) or m.group(5)) or src.in_code(base + m.start()):
                continue
            if src.closed_after(m.group(2), base + m.end()):  # <example >x</example>: a tag
                continue
            if m.group(1) and src.comparison_before(base + m.start()) and _RIGHT_OPERAND.match(text, m.end()):
                continue  # a < b > c: a comparison, with operands on both sides
            if m.group(1) and (m.group(3) or m.group(5)) and src.redirection(base + m.start(), base + m.end()):
                continue  # sort < input > output: shell redirection
            fixed = f"<{m.group(2)}{m.group(4)}>"
            yield (
                "T002",
                base + m.start(),
                base + m.end(),
                f"{m.group(0)!r} has whitespace inside, so it renders as literal text; did you mean {fixed}?",
                f"write {fixed} (no spaces) for a placeholder; as written, {m.group(0)} already renders unchanged",
            )
    if "T003" in on:
        for m in _SCOPED.finditer(text):
            prefix = m.group(1)
            scope = _scope_meant(prefix)
            name = f"{prefix}:{m.group(2)}"
            if scope is None or src.closed_anywhere(name) or src.in_code(base + m.start()):
                continue
            fixed = f"<{scope}:{m.group(2)}{m.group(3)}>"
            yield (
                "T003",
                base + m.start(),
                base + m.end(),
                f"unknown scope {prefix + ':'!r}, so {m.group(0)!r} renders as literal text; did you mean {fixed}?",
                f"the scopes are {_PREFIXES_AND}",
            )
    if "T004" in on:
        for m in _UNCLOSED.finditer(text):
            start = base + m.start()
            stop = min(src.line_end(start) - base, len(text))  # the end of this line, within this literal
            next_lt = text.find("<", m.end(), stop)
            stop = next_lt if next_lt >= 0 else stop
            if text.find(">", m.end(), stop) >= 0 or src.in_code(start):
                continue
            key = m.group(1)
            if src.tag_like(base + m.end()) or src.closed_anywhere(key):  # <div\n  class="card">
                continue
            if ":" not in key and src.comparison_before(start):  # x <y, if count <limit
                continue
            fixed = f"<{m.group(1)}{m.group(2)}>"
            yield (
                "T004",
                start,
                base + m.end(),
                f"{m.group(0)!r} is never closed, so it renders as literal text; did you mean {fixed}?",
                f"close it as {fixed} for a placeholder; as written, {m.group(0)} already renders unchanged",
            )
    if "T005" in on:
        for m in _BAD_NAME.finditer(text):
            key = m.group(1)
            first = key.split(":")[-1]
            bad = "-" in key or (first[:1].isdigit() and any(ch.isalpha() for ch in first))
            if not bad or key.startswith(("-", "_-")) or key.endswith("-") or src.in_code(base + m.start()):
                continue
            if not any(ch.islower() for ch in key) and not m.group(2):  # <1-10>, <YYYY-MM-DD>: a range, a format
                continue
            if src.closed_anywhere(key) or _TAG_WORD.match(text, m.end()):  # a custom element: <my-card>
                continue
            if _for_the_reader(key):  # <Ctrl-C>, <your-api-key>
                continue
            plain = key.islower() and "-" in key and not any(ch in key for ch in ":._") and not m.group(2)
            if plain and src.tag_in_prose(base + m.start(), base + m.end()):  # "inside <scratch-pad>"
                continue
            if text[m.start() - 1 : m.start()] == "/" or text[m.end() : m.end() + 1] == "/":  # /users/<user-id>/
                continue
            fixed = key.replace("-", "_")
            good = fixed.split(":")[-1].split(".")[0].isidentifier()
            yield (
                "T005",
                base + m.start(),
                base + m.end(),
                f"{key!r} is not a valid key (keys are identifiers), so {m.group(0)!r} renders as literal text"
                + (f"; did you mean <{fixed}{m.group(2)}>?" if good else ""),
                "a key segment is a Python identifier (letters, digits, _; not starting with a digit)",
            )
    if "T006" in on:
        for m in _DOUBLED.finditer(text):
            if src.in_code(base + m.start()):
                continue
            fixed = f"<{m.group(1)}?>"
            yield (
                "T006",
                base + m.start(),
                base + m.end(),
                f"{m.group(0)!r} has more than one '?', so it renders as literal text; did you mean {fixed}?",
                f"write {fixed} for an optional placeholder",
            )
    if "T008" in on:
        for m in _BRACES.finditer(text):
            if src.in_code(base + m.start()) or src.in_math(base + m.start()):
                continue
            key = m.group(1)
            if len(key) == 1:  # {x}: a set, a math variable; a one-letter state key is rare
                continue
            fixed = f"<{key}{m.group(2)}>"
            yield (
                "T008",
                base + m.start(),
                base + m.end(),
                f"{m.group(0)!r} looks like an ADK-style placeholder; this template uses {fixed}",
                f"write {fixed} to insert the value; braces are plain text here (a template in ADK's own "
                "{key} syntax is linted as such with --dialect adk, or lint(..., dialect='adk'))",
            )

    if "T013" in on:
        for m in _ESCAPED_CLOSING.finditer(text):
            if src.in_code(base + m.start()):
                continue
            tag = f"<{m.group(1)}>"
            yield (
                "T013",
                base + m.start(),
                base + m.end(),
                f"{m.group(0)!r} renders with its doubled brackets; a closing tag needs no escaping",
                f"write {tag}: a closing tag is never a placeholder, so it renders as written",
            )
        for m in _ESCAPED_ATTRS.finditer(text):
            if src.in_code(base + m.start()):
                continue
            tag = f"<{m.group(1)}{m.group(2)}>"
            yield (
                "T013",
                base + m.start(),
                base + m.end(),
                f"{m.group(0)!r} renders with its doubled brackets; a tag with attributes needs no escaping",
                f"write {tag}: a tag with attributes is never a placeholder, so it renders as written",
            )
