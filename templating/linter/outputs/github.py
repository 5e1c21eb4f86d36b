"""The GitHub Actions output: one workflow command (`::error file=...::message`) per finding.

Every value is escaped as GitHub's runner reads it: `%`, CR and LF in messages; also `:` and `,` in
properties. A file name holding a newline and `::error` therefore stays inside its property."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from ..registry import Diagnostic
from ..util import end_of
from .text import escape_control

_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def github_escape(text: str, *, prop: bool = False) -> str:
    """`text` escaped for a workflow command's message (or, with `prop`, a property value); control
    characters and bytes that are not UTF-8 as the text output writes them (`\\x1b`, `\\xff`)."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    text = escape_control(text, keep_newlines=True)  # no line breaks are left: they were encoded
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def format_github(diagnostics: Sequence[Diagnostic], sources: Mapping[str, str] | None = None) -> str:
    """The findings as workflow commands, with end line and column where the source is known."""
    lines = []
    for diag in diagnostics:
        props = []
        if diag.span is not None:
            if diag.path and diag.path != "<stdin>":  # stdin is no file in the repository: no file= property
                props.append(f"file={github_escape(diag.path, prop=True)}")
            span = diag.span
            end_line, end_column = end_of((sources or {}).get(diag.path or ""), span)
            props += [f"line={span.line}", f"endLine={end_line}", f"col={span.column}", f"endColumn={end_column}"]
        elif diag.path and Path(diag.path).is_file():  # a whole-run finding (T011) about a schema file
            props.append(f"file={github_escape(diag.path, prop=True)}")
        title = f"{diag.code} ({diag.origin})" if diag.origin else diag.code
        props.append(f"title={github_escape(title, prop=True)}")
        message = f"{diag.message}\n{diag.url}" if diag.url else diag.message  # the rule's page, on its own line
        lines.append(f"::{_LEVEL[diag.severity]} {','.join(props)}::{github_escape(message)}")
    return "\n".join(lines)
