"""What an instruction or an edit reaches in a project: the text files an instruction is kept in, the
files that may import a module, the instructions that read some keys. Read by the engine."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..places import LinkedFolders
from ..template import parse
from .import_paths import Imports, Parts, Places, import_statements
from .registry import Diagnostic

if TYPE_CHECKING:
    from ..pysource import Instruction, Scan

__all__ = [
    "ImportGraph",
    "affected",
    "flagged",
    "imports_test",
    "reaches",
    "reads_any",
    "reported_in",
]


def reads_any(item: Instruction, keys: frozenset[str] | None) -> bool:
    """Whether the instruction reads one of `keys` (any key, when `keys` is `None`)."""
    if item.dialect == "jinja":
        return False
    if keys is None:
        return True
    return any(node.name in keys for node in parse(item.text, dialect=item.dialect).placeholders)


def flagged(found: Scan, diag: Diagnostic) -> str:
    span = diag.span
    return found.sources.get(diag.path or "", "")[span.start : span.end] if span else ""


def reported_in(found: Scan, named: set[str]) -> set[str]:
    """The `named` files, and the text files an instruction is read from that a named Python file
    of their folder (or a folder above) names (`load_instruction_from_file("writer.txt")`)."""
    out = set(named)
    texts = {item.path for item in found.instructions if not item.path.endswith(".py")} - out
    if not texts:
        return out
    by_folder: dict[Path, list[str]] = {}  # the named files by folder: each text looks up its own folders
    for path in named:
        by_folder.setdefault(Path(path).parent, []).append(path)
    for text in texts:
        item = Path(text)
        if any(
            item.name in found.sources.get(path, "") for folder in item.parents for path in by_folder.get(folder, ())
        ):
            out.add(text)
    return out


def imports_test(target: str) -> Any:
    """A test of whether a file (path, text) may import the module `target`."""
    item = Path(target)
    module = item.parent if item.stem == "__init__" else item.with_suffix("")
    folder = module.parent
    line = re.compile(rf"^[ \t]*(?:from|import)\b[^\n]*\b{re.escape(module.name)}\b[^\n]*", re.MULTILINE)
    package = folder.name

    def test(path: str, text: str) -> bool:
        if module.name not in text:
            return False
        found = line.search(text)
        if found is None:
            return False
        here = Path(path).parent
        return folder == here or here in folder.parents or bool(package and package in found.group())

    return test


def _named_by(module: Parts, candidate: tuple[str, ...]) -> tuple[bool, bool]:
    """By module name only (an import whose top package is none of the project's): whether the dotted
    `candidate` ends `module`'s path, and whether it is a part of the path above it (a package holding it)."""
    size = len(candidate)
    if size and module[-size:] == candidate:
        return True, True
    return False, any(module[i : i + size] == candidate for i in range(len(module) - size))


def reaches(
    path: str,
    text: str,
    target: str,
    *,
    statements: Imports | None = None,
    known: Callable[[Parts], bool] | None = None,
    places: Places | None = None,
) -> bool:
    """Whether the scan of the file `path` (its text `text`) may read the Python file `target`: an import
    statement resolves to `target`'s module (relative: from `path`'s folder; absolute: from a folder above
    `path`, as the scanner resolves it), or to a package holding the module while `text` names the module
    after a dot (`pkg.prompt.ROOT`). An absolute import whose top package or module is found in none of
    those folders among the project's (`known` tells which places are a module or a folder of the project;
    `None`: none known) is taken by name: its dotted name ends the module's path.
    It may be true of a file that does not read `target`, never false of one that does. `statements`: the
    file's, if read; `places`: the real folders resolved so far."""
    places = places if places is not None else Places()
    module = places.module(target)
    name = module[-1] if module else ""
    if name not in text:
        return False
    dotted: bool | None = None  # whether the text names the module after a dot (an attribute chain)
    linked = bool(places.links)
    for base, level, candidates in import_statements(path, text) if statements is None else statements:
        bases = places.bases(path, base, level=level)
        for candidate in candidates:
            resolved = False
            holds = False
            for folder in bases:
                place = places.place(folder, candidate) if linked else folder + candidate
                if place == module:
                    return True
                holds = holds or (len(place) < len(module) and module[: len(place)] == place)
                if known is not None and not resolved:
                    resolved = known(places.place(folder, candidate[:1]) if linked else folder + candidate[:1])
            if base is None and not resolved:  # its top package is none of the project's: by name
                ends, inside = _named_by(module, candidate)
                if ends:
                    return True
                holds = holds or inside
            if holds:
                if dotted is None:
                    dotted = re.search(rf"\.[ \t]*{re.escape(name)}\b", text) is not None
                if dotted:
                    return True
    return False


def _known_places(files: Iterable[str], places: Places) -> Callable[[Parts], bool]:
    """A test of whether a place is a module of `files` or a folder holding one."""
    found: set[Parts] = set()
    for path in files:
        module = places.module(path)
        found.add(module)
        found.update(module[:i] for i in range(1, len(module)))
    return found.__contains__


def affected(
    target: str,
    texts: Mapping[str, str],
    before: str | None,
    given_in: Iterable[tuple[str, ...]],
    memo: MutableMapping[str, tuple[str, Imports]],
    *,
    links: LinkedFolders | None = None,
) -> set[str]:
    """The files whose scan may change when the Python file `target` changes (from `before` to
    `texts[target]`): `target`, the files it reads (with either text) and what they read, every file
    that reads one of those, and every file giving an instruction one of them gives (`given_in`: the
    files giving each instruction of the last scan). A scan of these files gives exactly what a scan of
    the whole project gives for them: no file outside reads one inside. `memo` keeps each file's import
    statements with the text they were read from (one entry a file: an old text is not kept). `links`: the
    project's links to folders (`places.LinkedFolders`)."""
    files = list(texts)
    places = Places(links=links)
    known = _known_places(files, places)

    def reads(importer: str, module: str) -> bool:
        text = texts[importer]
        found = memo.get(importer)
        if found is None or found[0] is not text:
            found = memo[importer] = (text, import_statements(importer, text))
        return reaches(importer, text, module, statements=found[1], known=known, places=places)

    out = {target}
    stack = [target]
    while stack:  # what target reads (with its old and its new text), and what that reads
        here = stack.pop()
        for other in files:
            if other in out:
                continue
            if reads(here, other) or (
                here == target and before is not None and reaches(target, before, other, known=known, places=places)
            ):
                out.add(other)
                stack.append(other)
    groups = [set(group) for group in given_in if len(group) > 1]
    stack = list(out)
    while stack:  # every file reading one of those; and the other givers of an instruction one of them gives
        here = stack.pop()
        more = [other for other in files if other not in out and reads(other, here)]
        for group in groups:
            if here in group:
                more += [other for other in group if other not in out and other not in more]
        for other in more:
            out.add(other)
            stack.append(other)
    return out


class ImportGraph:
    """Which files' scans may read which (the relation [`reaches`][templating.linter.reach.reaches] gives),
    kept between edits: each file's targets are worked out again only when its text changes, each import
    resolved to the module it names (the place it names from each folder it is resolved from, looked up in
    an index of the files by module and folder) rather than by testing every pair of files; an import whose
    top package is none of the project's is looked up by name (indexes by module name and path part).

    [`affected`][templating.linter.reach.ImportGraph.affected] gives exactly what the function `affected`
    gives for the same texts (a test compares them on the corpus); an edit then costs the few files
    it touches, not the square of the project's, and reaches only the files importing that very module
    (`copy7/travel/prompt.py`, not every `prompt` module of the workspace)."""

    def __init__(self) -> None:
        self._files: frozenset[str] = frozenset()
        self._synced: Mapping[str, str] | None = None  # the texts last taken (`sync`)
        self._links = LinkedFolders()  # the project's links to folders, as last taken
        self._places = Places()
        self._by_module: dict[Parts, list[str]] = {}  # a module's real path -> its files (x.py, x/__init__.py)
        self._under: dict[Parts, list[str]] = {}  # a folder -> the files whose module is below it
        self._by_name: dict[str, list[str]] = {}  # a module's name -> its files
        self._by_part: dict[str, list[str]] = {}  # a folder's name in a module's path -> those files
        self._parts: dict[str, Parts] = {}
        self._reads: dict[str, tuple[str, frozenset[str]]] = {}  # file -> (the text read, what it may read)
        self._readers: dict[str, set[str]] = {}  # file -> the files that may read it

    def _index(self, files: frozenset[str]) -> None:
        self._files = files
        self._places = Places(links=self._links)  # folders resolved again: a link may have changed with the files
        self._by_module, self._under, self._by_name, self._by_part, self._parts = {}, {}, {}, {}, {}
        self._reads, self._readers = {}, {}
        for path in sorted(files):
            parts = self._places.module(path)
            self._parts[path] = parts
            self._by_module.setdefault(parts, []).append(path)
            for i in range(1, len(parts)):
                self._under.setdefault(parts[:i], []).append(path)
            if parts:
                self._by_name.setdefault(parts[-1], []).append(path)
            for part in dict.fromkeys(parts[:-1]):
                self._by_part.setdefault(part, []).append(path)

    def _known(self, place: Parts) -> bool:
        return place in self._by_module or place in self._under

    def _targets(self, path: str, text: str) -> frozenset[str]:
        """The files `path` (with `text`) may read: those for which `reaches` is true."""
        out: set[str] = set()
        dotted: dict[str, bool] = {}

        def names_after_dot(name: str) -> bool:  # the text names the module after a dot: pkg.prompt.ROOT
            known = dotted.get(name)
            if known is None:
                known = dotted[name] = re.search(rf"\.[ \t]*{re.escape(name)}\b", text) is not None
            return known

        def holding(files: Iterable[str]) -> Iterator[str]:
            for other in files:
                name = self._parts[other][-1] if self._parts[other] else ""
                if name in text and names_after_dot(name):
                    yield other

        places = self._places
        linked = bool(places.links)  # (none: an import's path is its folder's and its names, as written)
        for base, level, candidates in import_statements(path, text):
            bases = places.bases(path, base, level=level)
            for candidate in candidates:
                resolved = False
                for folder in bases:
                    place = places.place(folder, candidate) if linked else folder + candidate
                    found = self._by_module.get(place)
                    if found:
                        out.update(o for o in found if self._name_in(o, text))
                    below = self._under.get(place)
                    if below:
                        out.update(holding(below))
                    if not resolved:
                        resolved = self._known(
                            places.place(folder, candidate[:1]) if linked else folder + candidate[:1]
                        )
                if base is not None or resolved:
                    continue
                # its top package is no module or folder of the project's (installed, or found on a path the
                # scan does not know): the files whose module path the dotted name ends, by name
                size = len(candidate)
                if size:
                    for other in self._by_name.get(candidate[-1], ()):
                        if self._parts[other][-size:] == candidate and self._name_in(other, text):
                            out.add(other)
                    pool: Iterable[str] = self._by_part.get(candidate[0], ())
                else:  # no module named: every file's path holds it
                    pool = self._files
                held = []
                for other in pool:
                    parts = self._parts[other]
                    if any(parts[i : i + size] == candidate for i in range(len(parts) - size)):
                        held.append(other)
                out.update(holding(held))
        out.discard(path)
        return frozenset(out)

    def _name_in(self, other: str, text: str) -> bool:
        parts = self._parts[other]
        return (parts[-1] if parts else "") in text

    def sync(
        self,
        texts: Mapping[str, str],
        *,
        changed: Collection[str] | None = None,
        links: LinkedFolders | None = None,
    ) -> None:
        """Take `texts` (every file's): the files added or removed index the project again, a file whose
        text changed (another object) has its targets worked out again. `changed`: `texts` is the mapping
        last taken, changed since in these files' texts at most (only they are looked at). `links`: the
        project's links to folders (others than last time: every file's targets worked out again)."""
        links = links if links is not None else LinkedFolders()
        if links != self._links:
            self._links = links
            self._index(frozenset(texts))
            self._synced = None
        if changed is not None and texts is self._synced:
            items: Iterable[tuple[str, str]] = [(path, texts[path]) for path in changed if path in texts]
        else:
            if len(texts) != len(self._files) or not self._files.issuperset(texts):
                self._index(frozenset(texts))
            items = texts.items()
        for path, text in items:
            known = self._reads.get(path)
            if known is not None and known[0] is text:
                continue
            targets = self._targets(path, text)
            if known is not None:
                for gone in known[1] - targets:
                    self._readers[gone].discard(path)
            for other in targets:
                self._readers.setdefault(other, set()).add(path)
            self._reads[path] = (text, targets)
        self._synced = texts  # (once every file is taken: a pass cut short leaves it as it was)

    def reads(self, path: str) -> frozenset[str]:
        """The files `path` may read, with its text as last synced."""
        known = self._reads.get(path)
        return known[1] if known is not None else frozenset()

    def affected(
        self,
        target: str,
        texts: Mapping[str, str],
        before: str | None,
        given_in: Iterable[tuple[str, ...]],
        *,
        changed: Collection[str] | None = None,
        links: LinkedFolders | None = None,
    ) -> set[str]:
        """What the function [`affected`][templating.linter.reach.affected] gives for the same arguments
        (`changed`, `links`: see `sync`)."""
        # what its old text reads, as synced last: not worked out again while the project's files are the same
        known, files = self._reads.get(target), self._files
        self.sync(texts, changed=changed, links=links)
        out = {target}
        stack = [target]
        if before is None:
            earlier: frozenset[str] = frozenset()
        elif known is not None and self._files is files and (known[0] is before or known[0] == before):
            earlier = known[1]
        else:
            earlier = self._targets(target, before)
        while stack:  # what target reads (with its old and its new text), and what that reads
            here = stack.pop()
            more = self.reads(here) | earlier if here == target else self.reads(here)
            for other in more:
                if other not in out:
                    out.add(other)
                    stack.append(other)
        groups = [set(group) for group in given_in if len(group) > 1]
        stack = list(out)
        while stack:  # every file reading one of those; and the other givers of an instruction one of them gives
            here = stack.pop()
            if here in self._files:
                found = [other for other in self._readers.get(here, ()) if other not in out]
            else:  # a file no longer there, giving an instruction of the last scan: tested against each file
                found = [
                    other
                    for other in texts
                    if other not in out and reaches(other, texts[other], here, known=self._known, places=self._places)
                ]
            for group in groups:
                if here in group:
                    found += [other for other in group if other not in out]
            for other in found:
                if other not in out:
                    out.add(other)
                    stack.append(other)
        return out
