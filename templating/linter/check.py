"""`lint()`: one template's findings, from the rule families that apply to its dialect."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..nodes import Dialect, Literal
from ..template import Template, as_template
from .config import select_rules
from .registry import ADK_ONLY, ANGLE_ONLY, RULES, Diagnostic
from .rules.adk import _adk_rules
from .rules.adk_literal import literal_braces, workflow_placeholders
from .rules.angle import _literal_rules
from .rules.placeholders import placeholder_rules
from .schema import load_schema
from .source import _Source


def lint(
    template: str | Template,
    *,
    schema: Any = None,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] = (),
    path: str | None = None,
    allow: Iterable[str] = (),
    markdown: bool | None = None,
    dialect: Dialect | None = None,
) -> list[Diagnostic]:
    """Lint one template; findings sorted by position.

    `schema` (anything `load_schema` takes) turns on the schema rules (T001, T009, T010).
    `select`/`ignore` choose rules by code or name, or a comma-separated string (default: all
    but the opt-in T011, which needs every template of a run: see `unused_keys`). `path` is
    copied into each finding. `allow`: literal snippets (`"<scratch-pad>"`) never reported: a
    finding whose flagged text is one of them is dropped. `markdown`: read indented blocks as code
    (default: when `path` ends in `.md`). `dialect`: the syntax of a string `template`
    (default `"angle"`; a `Template` has its own). An `"adk"` template (Google ADK's `{key}`)
    gets the rules of its dialect (T016 to T020 and T031: what google-adk would do wrong at run time) and
    the placeholder rules (T001, T009, T010, T012); the angle syntax's near-miss rules do not apply.
    """
    tpl = as_template(template, dialect=dialect)
    angle = tpl.dialect == "angle"
    on = select_rules(select=select, ignore=ignore) - (ADK_ONLY if angle else ANGLE_ONLY)
    loaded = load_schema(schema) if schema is not None else None
    if markdown is None:
        markdown = path is not None and path.lower().endswith((".md", ".markdown"))
    src = _Source(tpl.source, markdown=markdown)
    allowed = frozenset(allow)
    found: list[Diagnostic] = []

    def add(code: str, start: int, end: int, message: str, help: str | None) -> None:
        if tpl.source[start:end] in allowed:
            return
        found.append(Diagnostic(code, RULES[code].severity, message, src.span(start, end), path, help))

    if not angle:
        for code, start, end, message, help in _adk_rules(src, on):
            add(code, start, end, message, help)
        for code, start, end, message, help in literal_braces(src, on):
            add(code, start, end, message, help)
        for code, start, end, message, help in workflow_placeholders(src, on):
            add(code, start, end, message, help)
    for node in tpl.nodes:
        if angle and isinstance(node, Literal):
            for code, start, end, message, help in _literal_rules(src, node, on):
                add(code, start, end, message, help)
    for code, start, end, message, help in placeholder_rules(tpl, src, on, loaded):
        add(code, start, end, message, help)
    found.sort(key=lambda d: (d.span.start if d.span else -1, d.code))
    return found
