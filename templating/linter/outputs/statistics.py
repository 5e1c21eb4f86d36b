"""`--statistics`: how many findings each rule gave, most first (as ruff's `--statistics`), as text or JSON."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..registry import Diagnostic, described


def statistics(diagnostics: Sequence[Diagnostic]) -> list[dict[str, Any]]:
    """One entry per rule (and severity) with findings: `code`, `name`, `severity`, `count`; most first."""
    counts = Counter((d.code, d.severity) for d in diagnostics)
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0][0], item[0][1]))
    return [
        {
            "code": code,
            "name": rule.name if (rule := described(code)) else None,
            "severity": severity,
            "count": count,
        }
        for (code, severity), count in rows
    ]


def format_statistics(diagnostics: Sequence[Diagnostic], *, as_json: bool = False) -> str:
    """The counts per rule as aligned text lines (`  3  T014  warning  key-never-written`), or as JSON."""
    rows = statistics(diagnostics)
    if as_json:
        return json.dumps(rows, indent=2)
    if not rows:
        return ""
    width = max(len(str(row["count"])) for row in rows)
    level = max(len(row["severity"]) for row in rows)
    return "\n".join(
        f"{row['count']:>{width}}  {row['code']}  {row['severity']:<{level}}  {row['name'] or ''}".rstrip()
        for row in rows
    )
