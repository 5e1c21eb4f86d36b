"""The text output: one finding per line with its place, the source excerpt, help and docs address.

Control characters in file names, messages and excerpts are escaped (a newline as `\\n`, ESC as
`\\x1b`), so no text from a linted tree can start a line of its own or drive the terminal."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...errors import excerpt
from ..registry import Diagnostic

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_CONTROL_AND_NEWLINE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char) or (
        f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"
    )


def escape_control(text: str, *, keep_newlines: bool = False) -> str:
    """`text` with control characters (and bidirectional overrides) written as escapes; `keep_newlines`:
    leave line breaks and tabs (an excerpt's own layout)."""
    if keep_newlines:
        return _CONTROL.sub(lambda m: "\t" if m.group() == "\t" else _escaped(m), text)
    return _CONTROL_AND_NEWLINE.sub(_escaped, text)


def format_text(diagnostics: Sequence[Diagnostic], sources: dict[str, str]) -> str:
    """The findings as text lines."""
    lines: list[str] = []
    for diag in diagnostics:
        where = escape_control(diag.path or "<template>")
        message = escape_control(diag.message)
        if diag.span is None:
            lines.append(f"{where}: {diag.code} {message}")
        else:
            origin = f"in {escape_control(diag.origin)}: " if diag.origin else ""
            lines.append(f"{where}:{diag.span.line}:{diag.span.column}: {diag.code} {origin}{message}")
            source = sources.get(diag.path or "")
            if source is not None:
                lines.append(escape_control(excerpt(source, diag.span), keep_newlines=True))
        if diag.help:
            lines.append(f"    help: {escape_control(diag.help)}")
        if diag.url:
            lines.append(f"    docs: {diag.url}")
    return "\n".join(lines)


def summary(diagnostics: Sequence[Diagnostic], templates: int) -> str:
    """`N templates checked: ...` with the count of each severity."""
    counts = {severity: sum(d.severity == severity for d in diagnostics) for severity in ("error", "warning", "info")}
    noun = "template" if templates == 1 else "templates"
    if not diagnostics:
        return f"{templates} {noun} checked: no findings"
    parts = ", ".join(f"{n} {severity}{'' if n == 1 else 's'}" for severity, n in counts.items() if n)
    return f"{templates} {noun} checked: {parts}"
