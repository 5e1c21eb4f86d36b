"""The formats a lint run prints: text, json, github (workflow commands), sarif (2.1.0) and html, and the counts
per rule of `--statistics`. `html` (the self-contained report, on Jinja2) is imported from its module, so that
the other formats do not load Jinja2."""

from __future__ import annotations

from .github import format_github
from .json import format_json
from .sarif import format_sarif
from .statistics import format_statistics
from .text import escape_control, format_text, summary

__all__ = [
    "escape_control",
    "format_github",
    "format_json",
    "format_sarif",
    "format_statistics",
    "format_text",
    "summary",
]
