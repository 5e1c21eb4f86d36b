"""The lint report as one self-contained HTML page: each template with its placeholders
highlighted by kind and the findings beside them. Rendered with Jinja2, in a sandbox."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from itertools import pairwise
from typing import Any

from jinja2.sandbox import SandboxedEnvironment

from ...nodes import Dialect, Escaped, Literal, Placeholder, Span
from ...template import parse
from ..registry import Diagnostic
from .text import escape_control

__all__ = ["CONTEXT_LINES", "FileReport", "render_html"]


@dataclass(frozen=True, slots=True)
class FileReport:
    """One linted template: where it came from, its text, its findings, and its syntax (`dialect`).

    `python`: the text is a Python file whose instructions were linted, shown as plain text with
    the findings marked (its code is not a template, so no placeholders are highlighted).
    `templates`: how many templates were checked in it (a Python file: its instructions, maybe
    none), for the page's count. `instructions`: where each instruction of a Python file is written;
    the page shows those places and the findings' with a few lines around them
    ([`CONTEXT_LINES`][templating.linter.outputs.html.CONTEXT_LINES]), not the whole file, and nothing of a
    Python file with neither."""

    path: str
    source: str
    diagnostics: tuple[Diagnostic, ...]
    dialect: Dialect = "angle"
    python: bool = False
    templates: int = 1
    instructions: tuple[Span, ...] = ()


CONTEXT_LINES = 3  # lines shown before and after each instruction (and finding) of a Python file


def _kind(node: object, codes: set[str]) -> str:
    if isinstance(node, Escaped):
        return "escaped"
    if isinstance(node, Placeholder):
        if "T001" in codes:
            return "missing"
        if "T007" in codes:
            return "markup"
        return "optional" if node.optional else "required"
    return "text"


# A Python file's findings, classed by rule as a template's are by the node they cover.
_NEAR_MISS = frozenset({"T002", "T003", "T004", "T005", "T006", "T008", "T013", "T016", "T019", "T020"})


def _python_kind(codes: set[str]) -> str:
    if not codes:
        return "text"
    if codes & {"T001", "T014"}:
        return "missing"
    if "T007" in codes:
        return "markup"
    if codes & _NEAR_MISS:
        return "near-miss"
    return "flagged"


def _excerpts(report: FileReport) -> list[tuple[int, int, int, int]]:
    """The parts of the source the page shows, as (start, end, first line, last line): a template
    whole; a Python file's lines holding an instruction or a finding, with `CONTEXT_LINES` around
    each, the parts that touch merged into one."""
    source = report.source
    if not report.python:
        return [(0, len(source), 1, source.count("\n") + 1)]
    starts = [0] + [m.end() for m in re.finditer("\n", source) if m.end() < len(source)]  # each line's offset
    last = len(starts) - 1

    def line_of(offset: int) -> int:  # 0-based
        return max(bisect_right(starts, offset) - 1, 0)

    places = [*report.instructions, *(d.span for d in report.diagnostics if d.span is not None)]
    windows = sorted(
        (max(line_of(span.start) - CONTEXT_LINES, 0), min(line_of(max(span.end - 1, span.start)) + CONTEXT_LINES, last))
        for span in places
    )
    merged: list[list[int]] = []
    for first, final in windows:
        if merged and first <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], final)
        else:
            merged.append([first, final])
    out = []
    for first, final in merged:
        end = starts[final + 1] if final < last else len(source)
        out.append((starts[first], end, first + 1, final + 1))
    return out


def _segments(
    report: FileReport, ids: dict[int, str], start_at: int = 0, end_at: int | None = None
) -> list[dict[str, Any]]:
    """The source (`start_at`..`end_at` of it) cut at every node and finding boundary; each piece knows
    its kind and findings.

    One sweep over the pieces in order, with the findings sorted by start: a finding joins the
    active set where it starts and leaves it where it ends, so the cost grows with pieces plus
    findings (times the few findings that overlap), not with pieces times findings."""
    source = report.source
    lo, hi = start_at, len(source) if end_at is None else end_at
    if report.python:
        nodes: tuple[Any, ...] = (Literal(source, Span(0, len(source), 1, 1)),)
    else:
        nodes = parse(source, dialect=report.dialect).nodes
    located = sorted(
        ((d, d.span) for d in report.diagnostics if d.span is not None and d.span.start < hi and d.span.end >= lo),
        key=lambda item: item[1].start,
    )
    cuts = {lo, hi}
    for item in nodes:
        cuts.update(at for at in (item.span.start, item.span.end) if lo < at < hi)
    for _, span in located:
        cuts.update(at for at in (span.start, min(span.end, len(source))) if lo < at < hi)
    points = sorted(cuts)
    out: list[dict[str, Any]] = []
    index = 0
    waiting = 0  # located[waiting:] have not started yet
    active: list[tuple[int, int, Diagnostic]] = []  # (order, end, finding) of the findings covering the piece
    for start, end in pairwise(points):
        while index < len(nodes) - 1 and nodes[index].span.end <= start:
            index += 1
        node: object = nodes[index] if nodes else None
        while waiting < len(located) and located[waiting][1].start <= start:
            diag, span = located[waiting]
            active.append((waiting, max(span.end, span.start + 1), diag))
            waiting += 1
        if active:
            active = [entry for entry in active if entry[1] > start]
        covering = [diag for _, _, diag in active]
        codes = {d.code for d in covering}
        kind = _python_kind(codes) if report.python else _kind(node, codes)
        if kind == "text" and covering:
            kind = "near-miss"
        out.append(
            {
                "text": source[start:end],
                "kind": kind,
                "codes": sorted(codes),
                "refs": [{"id": ids[id(d)], "code": d.code} for d in covering if d.span and d.span.start == start],
                "title": "; ".join(f"{d.code} {d.message}" for d in covering),
            }
        )
    return out


def render_html(reports: Sequence[FileReport], *, run_findings: Sequence[Diagnostic] = (), title: str = "") -> str:
    """The whole page as a string: one section per template, run-level findings (T011) on top."""
    env = SandboxedEnvironment(autoescape=True, trim_blocks=True, lstrip_blocks=True)
    text = resources.files(__package__).joinpath("report.html.j2").read_text(encoding="utf-8")
    files = []
    counts = {"error": 0, "warning": 0, "info": 0}
    for number, report in enumerate(reports):
        ids = {id(d): f"f{number}-{i}" for i, d in enumerate(report.diagnostics)}
        for d in report.diagnostics:
            counts[d.severity] += 1
        if report.python and not report.diagnostics and not report.instructions:
            continue  # a Python file with no instruction and no finding: nothing to show
        files.append(
            {
                "path": escape_control(report.path),
                "anchor": f"file{number}",
                "python": report.python,
                "excerpts": [
                    {"first": first, "last": last, "segments": _segments(report, ids, start, end)}
                    for start, end, first, last in _excerpts(report)
                ],
                "findings": [
                    {**(row := d.as_dict()), "id": ids[id(d)], "rule": row["name"] or d.code}
                    for d in report.diagnostics
                ],
            }
        )
    for d in run_findings:
        counts[d.severity] += 1
    return env.from_string(text).render(
        title=title or "templating lint report",
        files=files,
        run_findings=[d.as_dict() for d in run_findings],
        counts=counts,
        templates=sum(report.templates for report in reports),
    )
