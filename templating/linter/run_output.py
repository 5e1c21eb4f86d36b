"""What a lint run says and writes: its messages (`Message`, each on its stream), the findings in the format
asked for followed by the notes, the output file and the HTML report (each written whole), and the usage
error (`LintUsageError`, exit 2) a run stops with. Apart from `templating.linter.run`, which decides what a
run does (the options and their rules, linting, the baseline, fixing, the exit code), so that what is
printed can be read and changed without the steps of the run; `run` re-exports the public names, whose
path stays `templating.linter.run`. The formats themselves are `templating.linter.outputs`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..errors import TemplatingError
from ..nodes import Dialect

if TYPE_CHECKING:
    from .result import LintResult

__all__ = ["Format", "LintUsageError", "Message", "Stream", "aside", "report", "write_html"]

Format = Literal["text", "json", "github", "sarif"]

Stream = Literal["stdout", "stderr", "aside"]
"""Where a message goes: `stdout` (results), `stderr` (a note printed there, as `print(file=sys.stderr)`
does), `aside` (a note for stderr only: dropped when stderr is closed, never on stdout)."""


class LintUsageError(TemplatingError):
    """Options that cannot be combined, or paths that give nothing to lint or cannot be read: nothing was
    linted or written (the command line exits with 2)."""


@dataclass(frozen=True, slots=True)
class Message:
    """Something the run says: `text` (followed by `end`) on `stream`."""

    text: str
    stream: Stream = "stdout"
    end: str = "\n"


def report(
    result: LintResult,
    fixed_note: str,
    baseline_note: str,
    say: Callable[[Message], None],
    *,
    format: Format,
    statistics: bool,
    output_file: str | None,
    scope_note: str = "",
) -> None:
    """The findings in the format asked for (printed, or written to the output file), then the notes
    (`scope_note`: what was linted, when the run chose it)."""
    from .outputs import format_github, format_json, format_sarif, format_statistics, format_text, summary

    everything = result.diagnostics
    report = summary(everything, len(result.templates))
    if statistics:
        output = format_statistics(everything, as_json=format == "json")
    elif format == "json":
        output = format_json(everything)
    elif format == "sarif":
        output = format_sarif(everything, result.sources)
    elif format == "github":
        output = format_github(everything, result.sources) if everything else ""
    else:
        output = format_text(everything, result.sources) if everything else ""
    if output_file:
        _write_whole(output_file, output + "\n" if output else "")
    elif output:
        say(Message(output))
    if format == "text":  # the summary: on stdout when it is all there is to say
        notes: Stream = "stderr" if everything or output_file else "stdout"
        if scope_note:
            say(Message(scope_note, notes))
        if fixed_note:
            say(Message(fixed_note, notes))
        say(Message(report, notes))
        if baseline_note:
            say(Message(baseline_note, notes))
    else:
        for note in (scope_note, baseline_note):
            if note:
                say(Message(f"templating: {note}", "aside"))
    if fixed_note and format != "text":
        say(Message(f"templating: {fixed_note}", "aside"))


def write_html(path: str, result: LintResult, *, dialect: Dialect) -> None:
    """`html`: the self-contained HTML report of the run, written to `path`."""
    from .outputs.html import FileReport, render_html

    by_file = result.by_file()
    spans: dict[str, list[Any]] = {}
    for checked in result.templates:  # the instructions of each Python file, where they are written
        if checked.name is not None:
            spans.setdefault(checked.path, []).append(checked.span)
    page = render_html(
        [
            FileReport(
                name,
                result.sources[name],
                tuple(d for d in by_file.get(name, []) if d.span is not None),
                dialect,
                python=name in result.python,
                templates=result.python.get(name, 1),
                instructions=tuple(spans.get(name, ())),
            )
            for name in result.files
            if name in result.sources
        ],
        run_findings=result.run_findings,
    )
    from ..inputs import write_text_whole

    page = page.encode("utf-8", "backslashreplace").decode("utf-8")  # names are escaped already
    try:
        write_text_whole(path, page)
    except OSError as exc:
        raise LintUsageError(f"cannot write HTML report {path}: {exc.strerror or exc}") from None


def _write_whole(path: str, text: str) -> None:
    """Write `text` to `path` whole or not at all (see `templating.inputs.write_text_whole`)."""
    from ..inputs import write_text_whole

    try:
        write_text_whole(path, text, newline="")
    except OSError as exc:
        raise LintUsageError(f"cannot write the output file {path}: {exc.strerror or exc}") from None


def aside(note: str) -> Message:
    """A note naming a file, for stderr: escaped as every output names files (no ESC, no newline)."""
    from .outputs.text import escape_control

    return Message(f"templating: {escape_control(note)}", "aside")
