"""The groups of a run's files that no import crosses, read from the text of each file's `import` and `from` lines.

The reading is cheap and over-approximated: every module an import could name, in every folder Python could
look for it in (next to the importer for a relative import; the importer's folder and each above it for an
absolute one), links the two files, and so does a package's `__init__.py` with its modules. The groups are the
connected parts (`templating.linter.cold` scans each on its own); the links themselves tell the prefilter
(`templating.linter.prefilter`) which modules a file may hand state to.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence

from ..places import LinkedFolders
from .util import real_folder

__all__ = ["groups", "import_graph"]

_FROM = re.compile(r"\bfrom[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+\Z")  # before an `import`, on its line
_NAMES = re.compile(r"[ \t]+([^\n;#]+)")  # after it
_NAME = re.compile(r"[^\W\d][\w.]*")


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _imports(text: str) -> Iterator[tuple[int, str]]:
    """Each module an `import`/`from` of `text` may name, with its level (leading dots); over-approximated:
    a word after `import` anywhere counts, and so does each name a `from ... import` imports."""
    at = text.find("import")
    while at >= 0:
        end = at + 6
        if (at == 0 or not _word_char(text[at - 1])) and (end == len(text) or not _word_char(text[end])):
            start = text.rfind("\n", 0, at) + 1
            before = _FROM.search(text, start, at)
            if before is not None:
                yield len(before.group(1)), before.group(2)
            names = _NAMES.match(text, end)
            if names is not None:
                for piece in names.group(1).replace("(", ",").replace(")", ",").split(","):
                    name = _NAME.match(piece.strip())
                    if name:
                        yield 0, name.group(0).rstrip(".")
        at = text.find("import", end)


def groups(
    files: Sequence[str], texts: Callable[[str], str | None], *, links: LinkedFolders | None = None
) -> list[list[int]]:
    """`files` (as shown) split into groups no import crosses: each group the indexes of its files, in order,
    the groups in the order of their first file. `texts(name)`: a file's text (None: not known, its imports
    unknown, so every file is one group); `links`: the project's links to folders (a relative import going up out
    of a folder one points at may name a module next to the link, as the scan resolves it)."""
    return import_graph(files, texts, links=links)[0]


def import_graph(
    files: Sequence[str], texts: Callable[[str], str | None], *, links: LinkedFolders | None = None
) -> tuple[list[list[int]], list[list[int]]]:
    """The `groups` of `files`, and for each file the indexes of the files its imports may name (its package's
    `__init__.py` too); a file whose text is not known makes one group of all, and no file then names another."""
    real: dict[str, str] = {}

    at: dict[str, int] = {}  # a file's real path -> its index
    children: dict[str, list[int]] = {}  # a real folder -> the indexes of the files directly in it
    where: list[str] = []
    for i, name in enumerate(files):
        folder, base = os.path.split(name)
        folder = real_folder(folder, real)
        where.append(folder)
        at[os.path.join(folder, base)] = i
        children.setdefault(folder, []).append(i)
    parent = list(range(len(files)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(i: int, j: int) -> None:
        a, b = find(i), find(j)
        if a != b:
            parent[max(a, b)] = min(a, b)

    dirs: set[str] = set()  # every folder holding a file, and the folders above it
    for folder in children:
        while folder not in dirs:
            dirs.add(folder)
            up = os.path.dirname(folder)
            if up == folder:
                break
            folder = up
    above: dict[str, list[str]] = {}  # a folder -> the folders an absolute import is looked for in
    reached: dict[tuple[str, int, str], list[int]] = {}
    sep = os.sep
    # the names a module path of the project can start with: a folder's, a module's (`google`, `os` are not)
    heads = {os.path.basename(d) for d in dirs} | {os.path.splitext(os.path.basename(f))[0] for f in files}
    nowhere: list[int] = []

    def targets(folder: str, level: int, name: str) -> list[int]:
        if not level and name.partition(".")[0] not in heads:
            return nowhere  # a library's module: no file of the project can be it
        memo = (folder, level, name)
        found = reached.get(memo)
        if found is not None:
            return found
        parts = [p for p in name.split(".") if p]
        if level:
            base = folder
            for _ in range(level - 1):
                base = os.path.dirname(base)
            bases = [base]
            if links and level > 1:  # through a link: from the folder holding it too
                bases += [real_folder(linked, real) for linked in links.bases(folder, level)]
        else:
            bases = above.get(folder) or []
            if not bases:
                base = folder
                while len(bases) < 13:
                    bases.append(base)
                    up = os.path.dirname(base)
                    if up == base:
                        break
                    base = up
                above[folder] = bases
        out: list[int] = []
        for base in bases:
            path = base
            for depth, part in enumerate(parts):  # each package on the way (its `__init__.py`), and the module
                path = path + sep + part if path != sep else sep + part
                if path + ".py" in at:
                    out.append(at[path + ".py"])
                elif (level or depth) and path not in dirs:
                    # a linked package folder (`pkg/sub` -> `../real_sub`), looked for below a package found or next
                    # to the importer only (not at each folder an absolute import's top name is looked for in)
                    path = real_folder(path, real)
                if path not in dirs:
                    break
                init = path + sep + "__init__.py"
                if init in at:
                    out.append(at[init])
            else:
                if not parts and base + sep + "__init__.py" in at:
                    out.append(at[base + sep + "__init__.py"])
                out += children.get(path, ())  # `from pkg import module`: any module of the package
        reached[memo] = out
        return out

    edges: list[list[int]] = []
    for i, name in enumerate(files):
        text = texts(name)
        if text is None:
            return [list(range(len(files)))], [[] for _ in files]
        init = os.path.join(where[i], "__init__.py")
        named: list[int] = [at[init]] if init in at else []
        for level, module in _imports(text):
            named += targets(where[i], level, module)
        for j in named:
            union(i, j)
        edges.append(named)
    grouped: dict[int, list[int]] = {}
    for i in range(len(files)):
        grouped.setdefault(find(i), []).append(i)
    return list(grouped.values()), edges
