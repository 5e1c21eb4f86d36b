"""A project on disk: its root, its configuration, its files, and reading them safely.

The root is the nearest folder (at or above the paths named, or the current folder) holding a
`pyproject.toml` with a `[tool.templating]` table; else the nearest with a `pyproject.toml` or a
`.git`; else the folder the paths have in common. Walking it never enters hidden folders,
`node_modules`, `__pycache__`, `site-packages`, folders the config excludes or `.gitignore` files
ignore, and never follows a symbolic link to a folder. A file is read only when it is a regular
file (after links), inside the root unless the user named it, and no larger than the configured
bound; anything else is skipped with the reason.

Without a marker (no `pyproject.toml` or `.git` at or above the paths, and no root given), the root
is the paths' common folder, raised to the topmost Python package holding it (a folder with an
`__init__.py`, as an ADK app is): then the Python context of a file is the whole package it is in
(the app that imports it, its sub-agents), or, outside any package, the Python files of its own folder
(not below; it may be a home folder), and only folders the user names are walked.

`.gitignore` files are read from the root down, with git's syntax (see `templating.linter.globs`):
`!` re-includes, a trailing `/` matches folders only, a pattern with a `/` (other than a trailing
one) is anchored at its file's folder, one without matches a name at any depth below it. A later
matching line wins. As in git, nothing inside an ignored folder can be re-included. Global and
`info/exclude` files are not read.

The tree is walked once ([`Walker`][templating.linter.project.Walker] keeps the walk); a file found by
walking is an [`Entry`][templating.linter.project.Entry] whose resolved path is known without a system
call unless it is a link. A link that leaves the root is never opened. `/` and the user's home
folder are never walked whole ([`is_too_wide`][templating.linter.project.is_too_wide]).
"""

from __future__ import annotations

import os
import tomllib
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..inputs import DEFAULT_MAX_FILE_SIZE, FileSkipped, InputError, read_bytes, read_text
from .config import LintConfig, glob_list, load_config
from .globs import Glob, GlobError, GlobList, _Segment, compile_glob

__all__ = [
    "Entry",
    "FileSkipped",
    "LintInputError",
    "Walker",
    "find_root",
    "has_marker",
    "is_too_wide",
    "read_bytes",
    "read_text",
    "top_package",
]

_NEVER_WALKED = frozenset({"node_modules", "__pycache__", "site-packages"})  # besides hidden folders (.git, .venv)


LintInputError = InputError  # the name the linter's errors were raised under; one class since they were merged


def _has_table(pyproject: Path) -> bool:
    try:  # within the size limit, never waiting on a FIFO
        data = tomllib.loads(read_bytes(str(pyproject), limit=DEFAULT_MAX_FILE_SIZE).decode("utf-8-sig"))
    except (OSError, FileSkipped, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return True  # a broken one (nested too deeply to read too) is still the project's: load_config reports it
    tool = data.get("tool")
    return isinstance(tool, dict) and "templating" in tool


def _common_folder(paths: Sequence[str]) -> Path:
    folders = []
    for given in paths:
        if given == "-":
            continue
        item = Path(os.path.abspath(given))
        folders.append(item if item.is_dir() else item.parent)
    if not folders:
        return Path.cwd().resolve()
    try:
        return Path(os.path.commonpath([str(f) for f in folders]))
    except ValueError:  # different drives
        return Path.cwd().resolve()


def find_root(paths: Sequence[str] = ()) -> Path:
    """The project root of `paths` (see the module's description)."""
    start = _common_folder(paths)
    fallback: Path | None = None
    for folder in (start, *start.parents):
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and _has_table(pyproject):
            return folder
        if fallback is None and (pyproject.is_file() or (folder / ".git").exists()):
            fallback = folder
    return fallback or top_package(start) or start


# How many folders up a package is followed (no real package is deeper).
_MAX_PACKAGE_DEPTH = 32


def top_package(folder: Path) -> Path | None:
    """The topmost folder at or above `folder` that is a Python package (holds an `__init__.py`), the folders
    down to `folder` all packages, or namespace folders (no `__init__.py`) one at a time between packages, as
    google-adk samples keep their sub-agents (`app/__init__.py`, `app/sub_agents/`, `app/sub_agents/writer/
    __init__.py`: Python imports `app.sub_agents.writer`); None when no package is there. Never the
    filesystem's root or a home folder (see [`is_too_wide`][templating.linter.project.is_too_wide])."""
    top: Path | None = None
    here = Path(os.path.abspath(folder))
    gap = 0  # namespace folders climbed since the last package
    for _ in range(_MAX_PACKAGE_DEPTH):
        if is_too_wide(here):
            break
        if (here / "__init__.py").is_file():
            top, gap = here, 0
        else:
            gap += 1
            if gap > 1:
                break
        if here.parent == here:
            break
        here = here.parent
    return top


def has_marker(folder: Path) -> bool:
    """Whether `folder` is marked as a project's root: it holds a `pyproject.toml` or a `.git`."""
    return (folder / "pyproject.toml").is_file() or (folder / ".git").exists()


def locate(
    root: str | Path | None = None, *, paths: Sequence[str] = (), config_path: str | Path | None = None
) -> tuple[Path, LintConfig]:
    """The root and the configuration of the project of `paths` (as `Project` finds them): `root` when
    given, else the folder of `config_path`, else the root found from the paths (`find_root`)."""
    if root is None and config_path is not None:
        root = Path(config_path).resolve().parent
    found = Path(root).resolve() if root is not None else find_root(paths).resolve()
    return found, project_config(found, Path(config_path) if config_path else None)


def project_config(root: Path, config_path: Path | None = None) -> LintConfig:
    """The `[tool.templating]` of `config_path`, or of `root`'s `pyproject.toml`; the defaults without one."""
    if config_path is not None:
        return load_config(path=config_path)
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        return load_config(path=pyproject)
    return LintConfig(root=root.resolve())


_Hit = tuple[int, bool, bool, "_Segment | None"]  # (line index, negate, folders only, the name's pattern)


class _Ignores:
    """The lines of one `.gitignore`, compiled once. `decide` gives the verdict of its last matching
    line (ignored, or re-included by `!`), or None when no line matches.

    Most lines are a name (`build`), or a name's pattern with a fixed start or end (`*.log`,
    `tmp*`, `*.py[co]`): those are found by looking the name's start or end up in a dict, and only
    the lines found are tried. The others (anchored paths, `*a*`) are tried from the last line up,
    down to the best line found so far. The cost per path is at most linear in the lines, and for
    the usual lines independent of their number."""

    __slots__ = ("base", "globs", "heads", "lengths", "names", "tails")

    def __init__(self, base: str, lines: Iterable[str]) -> None:
        self.base = base  # the folder of the .gitignore, relative to the root ("" at the root)
        self.names: dict[str, list[_Hit]] = {}
        self.heads: dict[str, list[_Hit]] = {}  # a name pattern's literal start -> lines
        self.tails: dict[str, list[_Hit]] = {}  # a name pattern's literal end (when it starts with `*`)
        self.lengths: tuple[set[int], set[int]] = (set(), set())  # the lengths of those starts, ends
        self.globs: list[tuple[int, bool, bool, Glob]] = []
        for index, line in enumerate(lines):
            parsed = _gitignore_line(line)
            if parsed is None:
                continue
            negate, dir_only, pattern = parsed
            if "/" not in pattern and not any(ch in pattern for ch in "*?[\\"):
                self.names.setdefault(pattern, []).append((index, negate, dir_only, None))
                continue
            try:
                glob = compile_glob(pattern)
            except GlobError:  # a pattern git would read differently: passed over
                continue
            segment = glob.name_segment()
            head, tail = segment.ends() if segment is not None else ("", "")
            if segment is not None and head:
                self.heads.setdefault(head, []).append((index, negate, dir_only, segment))
                self.lengths[0].add(len(head))
            elif segment is not None and tail:
                self.tails.setdefault(tail, []).append((index, negate, dir_only, segment))
                self.lengths[1].add(len(tail))
            else:
                self.globs.append((index, negate, dir_only, glob))

    def __bool__(self) -> bool:
        return bool(self.names or self.heads or self.tails or self.globs)

    def decide(self, relative: str, is_dir: bool) -> bool | None:
        if self.base:
            if not relative.startswith(self.base + "/"):
                return None
            relative = relative[len(self.base) + 1 :]
        name = relative.rpartition("/")[2]
        best, verdict = -1, None
        candidates: list[_Hit] = list(self.names.get(name, ()))
        for size in self.lengths[0]:
            candidates += self.heads.get(name[:size], ())
        for size in self.lengths[1]:
            if size <= len(name):
                candidates += self.tails.get(name[len(name) - size :], ())
        for index, negate, dir_only, segment in candidates:
            if index > best and (is_dir or not dir_only) and (segment is None or segment.match(name)):
                best, verdict = index, not negate
        parts: list[str] | None = None
        for index, negate, dir_only, glob in reversed(self.globs):
            if index < best:
                break
            if dir_only and not is_dir:
                continue
            parts = parts or relative.split("/")
            if glob.match_parts(parts if glob.anchored else parts[-1:]):
                return not negate
        return verdict


def _gitignore_line(line: str) -> tuple[bool, bool, str] | None:
    """(negate, folders only, pattern) of a `.gitignore` line, or None for a blank line or a comment."""
    line = line.rstrip("\r")
    while line.endswith(" ") and not line.endswith("\\ "):  # trailing spaces, unless escaped
        line = line[:-1]
    if not line or line.startswith("#"):
        return None
    negate = line.startswith("!")
    if negate:
        line = line[1:]
    dir_only = line.endswith("/") and not line.endswith("\\/")
    line = line.rstrip("/") if dir_only else line
    if not line:
        return None
    return negate, dir_only, line


def _gitignore(folder: Path, base: str, root: Path, *, link: bool = True) -> _Ignores | None:
    try:  # bounded, and never through a link out of the project (`link` false: the walk saw a plain file)
        path = str(folder / ".gitignore")
        limit = DEFAULT_MAX_FILE_SIZE
        data = read_bytes(path, limit=limit, root=root) if link else read_bytes(path, limit=limit, follow=False)
    except (OSError, FileSkipped):
        return None
    rules = _Ignores(base, data.decode("utf-8", errors="replace").splitlines())
    return rules if rules else None


def is_too_wide(folder: Path) -> str | None:
    """Why walking `folder` is refused (the filesystem's root, the user's home folder), or None."""
    folder = Path(os.path.abspath(folder))
    if folder == Path(folder.anchor):
        return "it is the filesystem's root"
    home = _home()
    if home is not None and folder == home:
        return "it is your home folder"
    return None


_HOMES: dict[str | None, Path | None] = {}


def _home() -> Path | None:
    """The user's home folder, resolved (None: there is none): worked out once per value of `HOME`, not once per
    folder looked at (finding a package climbs folders one by one)."""
    key = os.environ.get("HOME")
    if key not in _HOMES:
        try:
            _HOMES[key] = Path.home().resolve()
        except (RuntimeError, OSError, KeyError):
            _HOMES[key] = None
    return _HOMES[key]


@dataclass(frozen=True, slots=True)
class Entry:
    """A file found by walking, named once: `relative` to the walk's base ('/'-separated), `real` its
    resolved absolute path (its identity; computed without a system call unless it is a link),
    `link` whether it is a symbolic link, `skip` why it is left unread (a link out of the base,
    dangling, or a loop), if it is."""

    path: str
    relative: str
    real: str
    link: bool = False
    skip: str | None = None


@dataclass
class Walker:
    """Walks the project's folders once: what is left out, and the files found (as paths under the root).

    The whole root's walk is kept: later calls (the files to lint, the Python context, the
    language server's file list) read it instead of walking again."""

    config: LintConfig
    root: Path
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason) of folders left unread
    _walks: dict[tuple[str, bool], list[Entry]] = field(default_factory=dict, repr=False)
    _exclude: GlobList | None = field(default=None, repr=False)
    _any: dict[tuple[str, tuple[str, ...]], bool] = field(default_factory=dict, repr=False)
    # how many times `forget` was called: what else is kept about the project's files (the file-system answers
    # of its scans) is dropped with the walks when it changes
    forgotten: int = field(default=0, repr=False)

    def forget(self) -> None:
        """Drop the walks kept (files were added or removed since): the next call walks again."""
        self._walks.clear()
        self._any.clear()
        self.forgotten += 1

    def any_file(self, folder: Path, suffixes: tuple[str, ...]) -> bool:
        """Whether a file under `folder` that is not left out ends with one of `suffixes`: worked out once per
        walk (an editor asks at each edit)."""
        key = (str(folder), suffixes)
        found = self._any.get(key)
        if found is None:
            found = self._any[key] = any(e.skip is None and e.path.endswith(suffixes) for e in self.entries(folder))
        return found

    def exclude(self) -> GlobList:
        if self._exclude is None:
            self._exclude = GlobList(self.config.exclude, prefixes=False)
        return self._exclude

    def walk(self, folder: Path, *, recursive: bool = True) -> Iterator[Path]:
        """The files under `folder` (sorted), without entering what is ignored or excluded; with
        `recursive` false, the files in `folder` itself only. Links left unread are not listed."""
        for entry in self.entries(folder, recursive=recursive):
            if entry.skip is None:
                yield Path(entry.path)

    def entries(self, folder: Path, *, recursive: bool = True) -> list[Entry]:
        """The files under `folder` as [`Entry`][templating.linter.project.Entry] values, sorted, the
        links left unread included (with why). Walked once per folder; under the root, read from the
        root's walk when there is one."""
        folder = Path(os.path.abspath(folder))
        key = (str(folder), recursive)
        cached = self._walks.get(key)
        if cached is not None:
            return cached
        whole = self._walks.get((str(self.root), True))
        if whole is not None and folder.is_relative_to(self.root):
            rel = folder.relative_to(self.root).as_posix()
            prefix = "" if rel == "." else rel + "/"
            low, high = 0, len(whole)
            if prefix:  # the walk is sorted by parts: the files under a folder are one run of it
                parts = rel.split("/")
                low = bisect_left(whole, parts, key=_parts)
                high = bisect_left(whole, [*parts[:-1], parts[-1] + "\0"], lo=low, key=_parts)
            found = [
                e
                for e in whole[low:high]
                if e.relative.startswith(prefix) and (recursive or "/" not in e.relative[len(prefix) :])
            ]
        else:
            found = self._walk(folder, recursive)
        self._walks[key] = found
        return found

    def _walk(self, folder: Path, recursive: bool) -> list[Entry]:
        root = self.root
        inside = folder.is_relative_to(root)
        base = root if inside else folder  # a named folder outside the root is its own bound
        base_text = str(base)
        base_slash = base_text.rstrip(os.sep) + os.sep
        exclude = self.exclude()
        rules: list[_Ignores] = []
        if inside:
            for parent in reversed([folder, *folder.parents]):  # the .gitignore files above `folder`, root down
                if parent.is_relative_to(root) and parent != folder:
                    rel = parent.relative_to(root).as_posix()
                    found_rules = _gitignore(parent, "" if rel == "." else rel, root)
                    if found_rules is not None:
                        rules.append(found_rules)
        found: list[Entry] = []
        start_rel = folder.relative_to(base).as_posix()
        if inside and start_rel != "." and glob_list(self.config.exclude).match(start_rel):
            return found  # an excluded folder (or one inside it): as the root's walk, which never enters it
        stack: list[tuple[str, str, list[_Ignores]]] = [(str(folder), "" if start_rel == "." else start_rel, rules)]
        while stack:
            here, rel_here, inherited = stack.pop()
            try:
                with os.scandir(here) as listing:
                    entries = list(listing)
            except OSError as exc:
                self.skipped.append((here, f"cannot read the folder: {exc.strerror or exc}"))
                continue
            marker = next((e for e in entries if e.name == ".gitignore"), None) if inside else None
            own = _gitignore(Path(here), rel_here, root, link=marker.is_symlink()) if marker is not None else None
            local = [*inherited, own] if own is not None else inherited
            subfolders: list[tuple[str, str]] = []
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    continue
                relative = f"{rel_here}/{name}" if rel_here else name
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    link = not is_dir and entry.is_symlink()
                except OSError:
                    continue
                if is_dir:
                    if name in _NEVER_WALKED or exclude.match(relative) or _ignored(local, relative, True):
                        continue
                    subfolders.append((entry.path, relative))
                    continue
                if exclude.match(relative) or _ignored(local, relative, False):
                    continue
                if not link:
                    found.append(Entry(entry.path, relative, entry.path))
                    continue
                real = os.path.realpath(entry.path)
                skip = None
                if not real.startswith(base_slash) and real != base_text:
                    skip = f"a symbolic link out of the project root (to {real}): not read"
                else:
                    try:
                        os.stat(entry.path)
                    except OSError as exc:
                        skip = f"a symbolic link that cannot be followed ({exc.strerror or exc}): not read"
                found.append(Entry(entry.path, relative, real, link=True, skip=skip))
            if recursive:
                stack.extend((path, rel, local) for path, rel in subfolders)
        found.sort(key=_parts)
        return found


def _parts(entry: Entry) -> list[str]:
    """What a walk is sorted by: the entry's relative path, folder by folder."""
    return entry.relative.split("/")


def _ignored(chain: list[_Ignores], relative: str, is_dir: bool) -> bool:
    for rules in reversed(chain):  # a deeper .gitignore overrides the ones above it
        verdict = rules.decide(relative, is_dir)
        if verdict is not None:
            return verdict
    return False


def wanted(relative: str, patterns: Sequence[str]) -> bool:
    """Whether a file (relative to the root) matches one of the include `patterns`."""
    return glob_list(tuple(patterns)).match(relative)
