"""Where things are, as findings show them: offsets in a text as 1-based lines and columns, and a file's
path relative to the current folder.

Below everything that reports a place: the scanner of Python code, the linter and its outputs (which
import these through `templating.linter.util`).
"""

from __future__ import annotations

import bisect
import os
import stat
from pathlib import Path

from .nodes import Span

__all__ = ["end_of", "line_starts", "real_folder", "shown", "span_at"]


def line_starts(text: str) -> list[int]:
    """The offset where each line of `text` starts (the first is 0)."""
    starts = [0]
    find = text.find
    i = find("\n")
    while i >= 0:
        starts.append(i + 1)
        i = find("\n", i + 1)
    return starts


def span_at(starts: list[int], start: int, end: int) -> Span:
    """The span of `start`..`end` with the 1-based line and column of `start`; `starts` from `line_starts`."""
    line = bisect.bisect_right(starts, start)
    return Span(start, end, line, start - starts[line - 1] + 1)


def end_of(source: str | None, span: Span) -> tuple[int, int]:
    """The 1-based line and (exclusive) column where `span` stops in `source`."""
    if source is None:
        return span.line, span.column + (span.end - span.start)
    inside = source[span.start : span.end]
    if "\n" not in inside:
        return span.line, span.column + len(inside)
    return span.line + inside.count("\n"), len(inside) - inside.rfind("\n")


_here: tuple[str, Path] = ("", Path())  # the current folder, and it resolved


def _current() -> Path:
    """The current folder resolved: worked out again only when it changes (a scan shows hundreds of paths)."""
    global _here
    folder = os.getcwd()
    known = _here
    if known[0] != folder:
        known = _here = (folder, Path(folder).resolve())
    return known[1]


def shown(path: Path, cwd: Path | None = None) -> str:
    """A path as findings show it: relative to the current folder when under it, else absolute."""
    base = cwd or _current()
    try:
        return str(path.resolve().relative_to(base))
    except (ValueError, OSError, RuntimeError):
        return str(path)


def real_folder(folder: str, known: dict[str, str], absent: set[str] | None = None) -> str:
    """`os.path.realpath(folder)` (`""`: the current folder), `known` holding the folders resolved before (and
    taking this one): a folder below one of them costs one `lstat` (is its own name a link?), not one for each
    name on its path. `absent`, when given, takes the folders found not there (and those below them, then known
    without an `lstat`). Elsewhere than on POSIX (junctions, case), `realpath` whole, as the scan resolves paths."""
    found = known.get(folder)
    if found is None:
        head, tail = os.path.split(folder)
        if os.name != "posix" or not tail or tail in (os.curdir, os.pardir) or head == folder:
            found = os.path.realpath(folder or os.curdir)
        else:
            found = os.path.join(real_folder(head, known, absent), tail)
            if absent is not None and head in absent:
                absent.add(folder)
            else:
                try:
                    link = stat.S_ISLNK(os.lstat(found).st_mode)
                except FileNotFoundError:
                    link = False
                    if absent is not None:
                        absent.add(folder)
                except (OSError, ValueError):
                    link = False
                if link:
                    found = os.path.realpath(found)
        known[folder] = found
    return found
