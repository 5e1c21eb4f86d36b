"""The JSON output: a list of findings, each [`Diagnostic.as_dict`][templating.lint.Diagnostic.as_dict]."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..registry import Diagnostic


def format_json(diagnostics: Sequence[Diagnostic]) -> str:
    """The findings as a JSON array (the format `templating lint --format json` has always printed)."""
    return json.dumps([d.as_dict() for d in diagnostics], ensure_ascii=False, indent=2)
