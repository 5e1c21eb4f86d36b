"""What a lint run gives: a [`LintResult`][templating.linter.engine.LintResult] (the findings, the
templates checked with their keys, the files linted), built by the engine."""

from __future__ import annotations

import dataclasses
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..nodes import Span
from ..template import parse
from .registry import SKIPPED_FILE, Diagnostic

if TYPE_CHECKING:
    from ..pysource import Instruction

__all__ = ["CheckedTemplate", "LintResult"]


@dataclass(frozen=True, slots=True)
class CheckedTemplate:
    """A template a run checked: a template file (`name` is `None`) or an instruction in a Python file
    (`name` is its label), its dialect, where it starts, and the state keys it reads."""

    path: str
    name: str | None
    dialect: str
    span: Span
    keys: tuple[str, ...]
    optional_keys: tuple[str, ...]


@dataclass(slots=True)
class LintResult:
    """What a run found: `diagnostics` (each with its `path`), `templates` checked, and the `files` linted.

    `sources` holds the text of every file a finding points into; `python` counts the instructions
    linted in each Python file linted. With a baseline, `baselined` counts the findings it dropped and
    `stale` those it records that this run did not find (fixed since)."""

    diagnostics: list[Diagnostic]
    templates: list[CheckedTemplate]
    files: list[str]
    sources: MutableMapping[str, str] = field(default_factory=dict)
    python: dict[str, int] = field(default_factory=dict)
    root: Path = field(default_factory=Path.cwd)
    run_findings: list[Diagnostic] = field(default_factory=list)
    # with a baseline (templating.linter.baseline): the findings it dropped, and those it records not found
    baselined: int = 0
    stale: int = 0

    @property
    def errors(self) -> int:
        """How many findings are errors."""
        return sum(d.severity == "error" for d in self.diagnostics)

    def by_file(self) -> dict[str, list[Diagnostic]]:
        """The findings of each file linted (every file, with findings or not), in order."""
        out: dict[str, list[Diagnostic]] = {path: [] for path in self.files}
        for diag in self.diagnostics:
            if diag.span is not None or diag.code == SKIPPED_FILE:
                out.setdefault(diag.path or "<template>", []).append(diag)
        return out


# A file's findings, templates, text and number of instructions (of a Python file), as a run gives them.
FileFindings = tuple[list[Diagnostic], list[CheckedTemplate], str | None, int | None]


def per_file(result: LintResult) -> dict[str, FileFindings]:
    """`result` split by file: what it gives for each file (those it has no findings for included)."""
    out: dict[str, FileFindings] = {}
    for name in {*result.sources, *result.python}:
        out[name] = ([], [], result.sources.get(name), result.python.get(name))
    for diag in result.diagnostics:
        out.setdefault(diag.path or "", ([], [], None, None))[0].append(diag)
    for template in result.templates:
        out.setdefault(template.path, ([], [], None, None))[1].append(template)
    return out


def of_files(found: dict[str, FileFindings], files: list[str], *, root: Path) -> LintResult:
    """The result of the `files` (in that order) from what a run gave for each file (none: no findings)."""
    result = LintResult([], [], files, root=root)
    for name in files:
        diagnostics, templates, source, count = found.get(name, ([], [], None, None))
        result.diagnostics += diagnostics
        result.templates += templates
        if source is not None:
            result.sources[name] = source
        if count is not None:
            result.python[name] = count
    return result


def renamed(result: LintResult, display: dict[str, str]) -> None:
    """Show each Python file as the user named it (`./a.py`, an absolute path), not as scanned."""
    if all(key == value for key, value in display.items()):
        return
    result.diagnostics = [
        dataclasses.replace(d, path=display[d.path]) if d.path in display else d for d in result.diagnostics
    ]
    result.files = [display.get(path, path) for path in result.files]
    result.sources = {display.get(path, path): text for path, text in result.sources.items()}
    result.python = {display.get(path, path): n for path, n in result.python.items()}
    result.templates = [
        dataclasses.replace(t, path=display[t.path]) if t.path in display else t for t in result.templates
    ]


def checked(item: Instruction) -> CheckedTemplate:
    """The template of an instruction, with the keys it reads (a Jinja2 instruction's: its state reads, optional
    when guarded in the template)."""
    if item.dialect == "jinja":
        from ..jinja_mode.reads import state_reads

        reads = state_reads(item.text)
        required = tuple(read.key for read in reads if read.required)
        return CheckedTemplate(
            item.path, item.label, item.dialect, item.span, required, tuple(r.key for r in reads if not r.required)
        )
    keys: list[Any] = list(parse(item.text, dialect=item.dialect).placeholders)
    return CheckedTemplate(
        item.path,
        item.label,
        item.dialect,
        item.span,
        tuple(dict.fromkeys(n.key for n in keys if not n.optional)),
        tuple(dict.fromkeys(n.key for n in keys if n.optional)),
    )


def relative_to_cwd(diag: Diagnostic) -> Diagnostic:
    """`diag` with an absolute path under the current folder made relative (a schema file from the config)."""
    if diag.path and Path(diag.path).is_absolute():
        path = Path(diag.path).resolve()
        cwd = Path.cwd().resolve()
        if path.is_relative_to(cwd):
            return dataclasses.replace(diag, path=path.relative_to(cwd).as_posix())
    return diag
