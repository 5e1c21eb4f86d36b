"""Where things are, as findings show them: offsets in a text as 1-based lines and columns, and a file's
path relative to the current folder.

Below everything that reports a place: the scanner of Python code, the linter and its outputs (which
import these through `templating.linter.util`).
"""

from __future__ import annotations

import bisect
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from .nodes import Span

__all__ = ["LinkedFolders", "end_of", "line_starts", "real_folder", "shown", "span_at", "up"]


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


def up(folder: str, times: int) -> str:
    """`folder` (a path as findings show it, `""`: the current folder) and `times` folders above it, as written (as
    `Path.parent` goes up, but not stopping at the current folder: a relative path that goes above it is made
    absolute, as a relative import from a file named relative to a folder below the project's root goes)."""
    if not times:
        return folder
    above = os.path.normpath(os.path.join(folder or os.curdir, *[os.pardir] * times))
    if above == os.pardir or above.startswith(os.pardir + os.sep):
        above = os.path.abspath(above)
    return above


class LinkedFolders:
    """The links to folders inside a project (`app/sub` -> `real_sub`), for the relative imports that go up out of
    the folder a link points at: Python resolves `from ..memory import remember` in `real_sub/tools.py`, imported
    as `app.sub.tools`, from `app` (the folder holding the link), not from `real_sub`'s parent. The scanner, the
    import graph of a cold run and the editor's reach test all ask this one table."""

    __slots__ = ("_links",)

    def __init__(self, links: Iterable[tuple[str, str]] = ()) -> None:
        """`links`: each link (its path as findings show paths) with the real path of the folder it points at."""
        by_target: dict[str, set[str]] = {}
        for link, target in links:
            by_target.setdefault(target, set()).add(link)
        self._links = tuple(sorted((target, tuple(sorted(names))) for target, names in by_target.items()))

    def __bool__(self) -> bool:
        return bool(self._links)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LinkedFolders) and self._links == other._links

    def __hash__(self) -> int:
        return hash(self._links)

    def __repr__(self) -> str:
        return f"LinkedFolders({list(self)!r})"

    def __iter__(self) -> Iterator[tuple[str, str]]:
        """Each link with the real path of the folder it points at, as given."""
        return iter([(link, target) for target, links in self._links for link in links])

    def bases(self, real: str, level: int) -> list[str]:
        """The folders a relative import of `level` dots (2 or more) in a module of the real folder `real` is
        resolved from when the module is imported through a link: one for each link to `real` or to a folder
        above it that the dots go up out of (the link's folder, or one above it), by the path of the folder
        linked to, then of the link, each once. A relative import that stays inside the folder a link points at
        reaches the same files either way: it gives none. One link deep (a link inside a linked folder is not
        followed here)."""
        out: list[str] = []
        for target, links in self._links:
            if real == target:
                depth = 0
            elif real.startswith(target.rstrip(os.sep) + os.sep):
                depth = real[len(target.rstrip(os.sep)) + 1 :].count(os.sep) + 1
            else:
                continue
            above = level - 1 - depth  # the dots left once at the link's own folder
            if above <= 0:
                continue
            for link in links:
                base = up(os.path.dirname(link), above - 1)
                if base not in out:
                    out.append(base)
        return out
