"""Where a file's imports lead, read from its text: its import statements (each with the folder a relative one
starts from) and the real folders an import is resolved from, links to folders followed as the scanner follows
them (`pysource.imports`). Read by `reach` (which files' scans may read which)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from ..places import LinkedFolders, up
from .util import real_folder

__all__ = ["Imports", "Parts", "Places", "import_statements"]


# An import statement: `from ..pkg.mod import (a, b as c)` (continued in parentheses), `import a.b`, wherever a
# statement may start: a line, after `;` or after a block's `:` (`if x: import a`); `from.mod import a` needs no
# space. Backslash continuations are joined first (`_CONTINUED`). It may also match what is no import (in a
# string): that only makes a file read again, never one missed.
_CONTINUED = re.compile(r"\\\r?\n")
_IMPORT = re.compile(  # possessive (`*+`): no run of spaces or dots is tried two ways (linear on any text)
    r"(?:^|[;:])[ \t\f]*+(?:from\b[ \t\f]*+(?P<dots>\.*+)[ \t\f]*+(?P<module>\w++(?:\.\w++)*+)?[ \t\f]*+"
    r"(?<!\w)import\b[ \t\f]*+(?P<names>\([^)]*+\)|[^\n;]*+)"
    r"|import[ \t\f]++(?P<plain>[^\n;]*+))",
    re.MULTILINE,
)
_WORD = re.compile(r"[^\W\d]\w*")
_AFTER = re.compile(r"[;:]")  # (an import statement may also start after one of these, on its line)


# What an import statement may load: a module's path from a folder (relative: with its dots) or the end of its
# path (absolute).
Imports = tuple[tuple[PurePosixPath | None, int, tuple[tuple[str, ...], ...]], ...]


def _prefixes(chain: tuple[str, ...]) -> Iterator[int]:
    """The ends of the prefixes of a dotted name kept as candidates: all of them up to 256 parts (no module
    path is deeper), and the whole name; a hostile `import a.a.a...` is not quadratic."""
    yield from range(min(len(chain), 256))
    if len(chain) > 256:
        yield len(chain) - 1


def _imports(text: str) -> Iterator[re.Match[str]]:
    """The matches of `_IMPORT` in `text`, as its `finditer` gives them, tried only where one can start: at the
    start of a line holding the word `import` (an import's keywords are on the line it starts), or after a `;` or
    a `:` on it; each try resumes after the last match (whose parenthesized names may span lines)."""
    resume, at = 0, text.find("import")
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        for place in (start, *(m.start() for m in _AFTER.finditer(text, start, end))):
            if place >= resume and (m := _IMPORT.match(text, place)) is not None:
                resume = m.end()
                yield m
        at = text.find("import", max(end, resume))


def import_statements(path: str, text: str) -> Imports:
    """The import statements of a file, each as the modules it may load: for a relative one, the folder it
    starts from and the paths below it; for an absolute one (folder `None`), the dotted names (`a.b`
    and `a.b.c` for `from a.b import c`; `a`, `a.b` for `import a.b`, whose `a` is bound)."""
    found: list[tuple[PurePosixPath | None, int, tuple[tuple[str, ...], ...]]] = []
    for m in _imports(_CONTINUED.sub(" ", text) if "\\" in text else text):
        names = _WORD.findall(m.group("names") or "")
        module = tuple(_WORD.findall(m.group("module") or ""))
        if m.group("plain") is not None:  # import a.b, c as d
            dotted = [tuple(_WORD.findall(part.split(" as ")[0])) for part in m.group("plain").split(",")]
            found.append((None, 0, tuple(chain[: i + 1] for chain in dotted for i in _prefixes(chain))))
            continue
        candidates = (module, *((*module, name) for name in names if name != "as"))
        if m.group("dots"):
            level = len(m.group("dots"))
            found.append((PurePosixPath(up(os.path.dirname(path), level - 1)), level, candidates))
        else:
            found.append((None, 0, candidates))
    return tuple(found)


_MAX_LINKS = 8  # links followed one after the other in an import's path (a loop of links is not followed further)
Parts = tuple[str, ...]  # a real path (of a folder, or of a module: `x.py` and `x/__init__.py` are `.../x`)


class Places:
    """Where the scanner looks for what a file imports: the real folders of files, resolved once each.

    The scanner resolves a relative import from the importing file's folder, and an absolute one against
    each folder above the file's real path, nearest first (`pysource.imports._Modules.find_module`); here
    every such folder is a candidate, the nearest or not, so an import may be taken to read a module the
    scanner finds elsewhere, never the reverse."""

    def __init__(self, *, links: LinkedFolders | None = None) -> None:
        self.links = links  # the project's links to folders (an import may go through one, or start next to one)
        self._at: dict[Parts, Parts] | None = None  # where each link is (its folder's real path) -> its target
        self._folders: dict[str, Parts] = {}
        self._real: dict[str, str] = {}
        self._above: dict[str, list[Parts]] = {}  # a folder -> it and the folders above it, nearest first

    def folder(self, folder: str) -> Parts:
        """The real path of `folder` (as findings show it), resolved once."""
        known = self._folders.get(folder)
        if known is None:
            known = self._folders[folder] = Path(real_folder(folder, self._real)).parts
        return known

    def module(self, path: str) -> Parts:
        """The module the Python file `path` is: its real path without `.py` (a package's, for `__init__.py`)."""
        folder, name = os.path.split(path)
        stem = os.path.splitext(name)[0]
        parts = self.folder(folder)
        return parts if stem == "__init__" else (*parts, stem)

    def place(self, folder: Parts, names: tuple[str, ...]) -> Parts:
        """`folder` (real) and the `names` below it, a link to a folder on the way (one of `links`) replaced by the
        real folder it points at, as the scanner's real paths of modules have it (`pkg/sub/words` is
        `real_sub/words` when `pkg/sub` -> `../real_sub`)."""
        place = folder + names
        if not self.links:
            return place
        at = self._at
        if at is None:
            at = self._at = {
                (*self.folder(os.path.dirname(link)), os.path.basename(link)): Path(target).parts
                for link, target in self.links
            }
        start = len(folder) + 1  # (`folder` is real: no link in it)
        for _ in range(_MAX_LINKS):
            for end in range(start, len(place) + 1):
                target = at.get(place[:end])
                if target is not None:
                    place, start = target + place[end:], 1
                    break
            else:
                break
        return place

    def bases(self, path: str, base: PurePosixPath | None, *, level: int = 0) -> list[Parts]:
        """The folders an import of the file `path` is resolved from: `base` for a relative one of `level` dots
        (and the folders next to a link it goes up out of: `places.LinkedFolders`), else the folders above the
        file (its package's parent, the project's root, a `src/` folder among them)."""
        if base is not None:
            found = [self.folder(str(base))]
            if self.links and level > 1:
                real = real_folder(os.path.dirname(path), self._real)
                found += [self.folder(linked) for linked in self.links.bases(real, level)]
            return found
        head = os.path.dirname(path)
        above = self._above.get(head)
        if above is None:
            folder = self.folder(head)
            above = self._above[head] = [folder[:i] for i in range(len(folder), 0, -1)]
        return above
