"""The SARIF 2.1.0 output (`--format sarif`), as GitHub code scanning and other CI tools read it:
one run whose `tool.driver.rules` lists every rule (with its documentation page) and whose results
point at their files with regions (1-based lines and columns, the end column exclusive)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from urllib.parse import quote

from ..registry import RULES, SYNTAX_CHECKS, Diagnostic, rule_url
from ..util import end_of, running_version
from .text import escape_control

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _uri(path: str) -> str:
    """A URI reference for `path`: `file://` for an absolute path; else relative, every character but `/`
    percent-encoded when needed (a `:` would read as a scheme: `a:b.txt`), a byte that is not UTF-8
    as itself (`%FF`)."""
    posix = PurePosixPath(path.replace("\\", "/"))
    raw = os.fsencode(posix.as_posix())  # a name's bytes as they are on disk, even those not UTF-8
    return "file://" + quote(raw, safe="/") if posix.is_absolute() else quote(raw, safe="/")


def format_sarif(diagnostics: Sequence[Diagnostic], sources: Mapping[str, str] | None = None) -> str:
    """The findings as a SARIF 2.1.0 log (a JSON string)."""
    described = {**RULES, **SYNTAX_CHECKS}
    codes = list(described)
    rules = [
        {
            "id": code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "helpUri": rule_url(code),
            "defaultConfiguration": {"level": _LEVEL[rule.severity], "enabled": rule.default},
        }
        for code, rule in described.items()
    ]
    results = []
    for diag in diagnostics:
        result: dict[str, object] = {
            "ruleId": diag.code,
            "level": _LEVEL[diag.severity],
            "message": {
                "text": escape_control(diag.message + (f"\nhelp: {diag.help}" if diag.help else ""), keep_newlines=True)
            },
        }
        if diag.code in described:
            result["ruleIndex"] = codes.index(diag.code)
        if diag.path and diag.path != "<stdin>":
            location: dict[str, object] = {"artifactLocation": {"uri": _uri(diag.path)}}
            if diag.span is not None:
                end_line, end_column = end_of((sources or {}).get(diag.path), diag.span)
                location["region"] = {
                    "startLine": diag.span.line,
                    "startColumn": diag.span.column,
                    "endLine": end_line,
                    "endColumn": max(end_column, diag.span.column + (end_line == diag.span.line)),
                    "charOffset": diag.span.start,
                    "charLength": diag.span.end - diag.span.start,
                }
            result["locations"] = [{"physicalLocation": location}]
        if diag.origin:
            result["properties"] = {"origin": escape_control(diag.origin)}
        results.append(result)
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "templating",
                        "version": running_version(),
                        "informationUri": rule_url("T001").rsplit("rules/", 1)[0],
                        "rules": rules,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(log, ensure_ascii=False, indent=2)
