"""The text output: one finding per line with its place, the source excerpt, help and docs address.

Control characters in file names, messages and excerpts are escaped (a newline as `\\n`, ESC as
`\\x1b`), so no text from a linted tree can start a line of its own or drive the terminal; so are
the bytes of a file name that are not UTF-8 (`\\xff`). Every output format escapes names this way."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ...errors import excerpt
from ..registry import Diagnostic

# Control characters, bidirectional overrides, and lone surrogates (a file name's bytes that are not
# UTF-8, as Python decodes them: `\udcff` for the byte 0xff), which no UTF-8 output can carry.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_CONTROL_AND_NEWLINE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte of a name: shown as that byte
        return f"\\x{code - 0xDC00:02x}"
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def escape_control(text: str, *, keep_newlines: bool = False) -> str:
    """`text` with control characters, bidirectional overrides and undecodable bytes (lone
    surrogates) written as escapes; `keep_newlines`: leave line breaks and tabs (an excerpt's own
    layout)."""
    if keep_newlines:
        return _CONTROL.sub(lambda m: "\t" if m.group() == "\t" else _escaped(m), text)
    return _CONTROL_AND_NEWLINE.sub(_escaped, text)


def format_text(diagnostics: Sequence[Diagnostic], sources: Mapping[str, str]) -> str:
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
