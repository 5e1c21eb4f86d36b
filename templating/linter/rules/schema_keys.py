"""T011: schema keys that no template of a run uses."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...template import Template
from ..registry import RULES, Diagnostic
from ..schema import load_schema


def unused_keys(schema: Any, templates: Iterable[str | Template]) -> list[Diagnostic]:
    """T011: top-level schema keys that none of `templates` uses (one finding per key, for a whole run)."""
    loaded = load_schema(schema)
    used: set[str] = set()
    for template in templates:
        tpl = template if isinstance(template, Template) else Template(template)
        used.update(node.name for node in tpl.placeholders)
    return [
        Diagnostic(
            "T011",
            RULES["T011"].severity,
            f"schema key {key!r} is not used by any linted template",
            None,
            loaded.source,
            "remove it from the schema, or use it in an instruction",
        )
        for key in loaded.fields
        if key not in used
    ]
