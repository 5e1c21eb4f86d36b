"""The JSON output: a list of findings, each [`Diagnostic.as_dict`][templating.linter.Diagnostic.as_dict]."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..registry import Diagnostic
from .text import escape_control


def format_json(diagnostics: Sequence[Diagnostic]) -> str:
    """The findings as a JSON array (the format `templating lint --format json` has always printed).

    File names are escaped as in the text output (a control character as `\\x1b`, a byte that is
    not UTF-8 as `\\xff`), and so are messages (their line breaks kept): the document is valid UTF-8
    whatever the tree's names."""
    rows = []
    for diag in diagnostics:
        row = diag.as_dict()
        if row["path"] is not None:
            row["path"] = escape_control(row["path"])
        for key in ("message", "help", "origin"):
            if row[key] is not None:
                row[key] = escape_control(row[key], keep_newlines=True)
        rows.append(row)
    return json.dumps(rows, ensure_ascii=False, indent=2)
