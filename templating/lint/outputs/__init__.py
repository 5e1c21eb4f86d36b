"""The formats a lint run prints: text, json, github (workflow commands), sarif (2.1.0) and html."""

from __future__ import annotations

from .github import format_github
from .json import format_json
from .sarif import format_sarif
from .text import escape_control, format_text, summary

__all__ = ["escape_control", "format_github", "format_json", "format_sarif", "format_text", "summary"]
