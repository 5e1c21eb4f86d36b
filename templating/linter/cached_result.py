"""A lint result as a cache entry keeps it: JSON made of plain lists and dicts, and read back with every
field checked by type and range before it is used (anything odd raises `_BadEntry`: a miss, never a wrong
result). Apart from `templating.linter.cache`, which decides when an entry is written and when it may be
used (its key, its inputs checked again, its folder), because this is only the shape of a `LintResult` on
disk: it reads no file and knows nothing of runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from ..nodes import Span
from .registry import SEVERITIES, Diagnostic
from .result import CheckedTemplate, LintResult

# -- a result as JSON and back


def _span(span: Span | None) -> list[int] | None:
    return None if span is None else [span.start, span.end, span.line, span.column]


def _diagnostic(d: Diagnostic) -> list[Any]:
    return [d.code, d.severity, d.message, _span(d.span), d.path, d.help, d.origin]


def _payload(result: LintResult, sources: dict[str, str]) -> dict[str, Any]:
    return {
        "diagnostics": [_diagnostic(d) for d in result.diagnostics],
        "run_findings": [_diagnostic(d) for d in result.run_findings],
        "templates": [
            [t.path, t.name, t.dialect, _span(t.span), list(t.keys), list(t.optional_keys)] for t in result.templates
        ],
        "files": result.files,
        "python": result.python,
        "sources": sources,
    }


# -- an entry read back: every field checked before it is used (anything odd is a miss)

_RESULT_FIELDS = {"diagnostics", "run_findings", "templates", "files", "python", "sources"}
_DIALECTS = ("angle", "adk", "jinja")


class _BadEntry(Exception):
    """An entry whose fields are not what this version writes: a miss."""


def _check(condition: bool) -> None:
    if not condition:
        raise _BadEntry


def _is_list(value: Any, size: int) -> bool:
    return type(value) is list and len(value) == size


def _strings(values: Any) -> bool:
    return type(values) is list and all(type(v) is str for v in values)


def _optional_string(value: Any) -> bool:
    return value is None or type(value) is str


def _from_span(value: Any, text: str | None) -> Span:
    """A span: four whole numbers, start <= end within `text` (when known), line and column from 1."""
    _check(_is_list(value, 4) and all(type(v) is int for v in value))
    start, end, line, column = value
    _check(0 <= start <= end and line >= 1 and column >= 1)
    _check(text is None or end <= len(text))
    return Span(start, end, line, column)


def _from_diagnostic(value: Any, sources: Mapping[str, str]) -> Diagnostic:
    _check(_is_list(value, 7))
    code, severity, message, span, path, help, origin = value
    _check(type(code) is str and severity in SEVERITIES and type(message) is str)
    _check(_optional_string(path) and _optional_string(help) and _optional_string(origin))
    where = None if span is None else _from_span(span, sources.get(path or ""))
    return Diagnostic(code, severity, message, where, path, help, origin)


class CachedTexts(MutableMapping[str, str]):
    """The texts of a cached result's files by name: those read while the entry was checked, and those its status
    vouched for, read when first asked for (a warm run printing a few findings reads the files they point into,
    not every file of the project). A file that can no longer be read then is a `LintCacheError`."""

    def __init__(
        self, named: dict[str, str], texts: dict[str, str], later: dict[str, str], read: Callable[[str, str], str]
    ) -> None:
        self._named = named  # name -> path
        self._texts = {name: texts[path] for name, path in named.items() if path in texts}
        self._later = later  # path -> how it is read
        self._read = read

    def __getitem__(self, name: str) -> str:
        text = self._texts.get(name)
        if text is None:
            path = self._named[name]  # (KeyError: not a file of the result)
            text = self._texts[name] = self._read(path, self._later[path])
        return text

    def __setitem__(self, name: str, text: str) -> None:
        self._named[name] = name
        self._texts[name] = text

    def __delitem__(self, name: str) -> None:
        del self._named[name]
        self._texts.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._named)

    def __len__(self) -> int:
        return len(self._named)

    def __contains__(self, name: object) -> bool:
        return name in self._named

    def __repr__(self) -> str:
        return f"CachedTexts({len(self._named)} files, {len(self._texts)} read)"


def _nothing_later(path: str, mode: str) -> str:
    raise KeyError(path)  # (never called: every text was given)


def _result(
    payload: Any,
    texts: dict[str, str],
    root: Path,
    *,
    later: tuple[dict[str, str], Callable[[str, str], str]] | None = None,
) -> LintResult:
    """The result of an entry's `payload`, the texts of its files `texts` (path -> text) or, for those in
    `later[0]` (path -> mode), read with `later[1]` when first asked for."""
    _check(isinstance(payload, dict) and set(payload) == _RESULT_FIELDS)
    named = payload["sources"]
    paths, read = later if later is not None else ({}, _nothing_later)
    _check(isinstance(named, dict) and all(type(name) is str for name in named))
    _check(all(type(path) is str and (path in texts or path in paths) for path in named.values()))
    sources = CachedTexts(dict(named), texts, paths, read)
    files, python = payload["files"], payload["python"]
    _check(_strings(files) and isinstance(python, dict))
    _check(all(type(count) is int and count >= 0 for count in python.values()))
    templates = []
    _check(type(payload["templates"]) is list)
    for item in payload["templates"]:
        _check(_is_list(item, 6))
        path, name, dialect, span, keys, optional = item
        _check(type(path) is str and _optional_string(name) and dialect in _DIALECTS)
        _check(_strings(keys) and _strings(optional))
        templates.append(CheckedTemplate(path, name, dialect, _from_span(span, None), tuple(keys), tuple(optional)))
    found = []
    for field in ("diagnostics", "run_findings"):
        _check(type(payload[field]) is list)
        found.append([_from_diagnostic(d, sources) for d in payload[field]])
    return LintResult(
        found[0], templates, list(files), sources=sources, python=dict(python), root=root, run_findings=found[1]
    )
