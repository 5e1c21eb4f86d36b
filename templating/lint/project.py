"""A project on disk: its root, its configuration, its files, and reading them safely.

The root is the nearest folder (at or above the paths named, or the current folder) holding a
`pyproject.toml` with a `[tool.templating]` table; else the nearest with a `pyproject.toml` or a
`.git`; else the folder the paths have in common. Walking it never enters hidden folders,
`node_modules`, `__pycache__`, `site-packages`, folders the config excludes or `.gitignore` files
ignore, and never follows a symbolic link to a folder. A file is read only when it is a regular
file (after links), inside the root unless the user named it, and no larger than the configured
bound; anything else is skipped with the reason.

Without a marker (no `pyproject.toml` or `.git` at or above the paths, and no root given), the root
is only the paths' common folder, which may be a home folder: then the Python context of a file is
the Python files of its own folder (not below), and only folders the user names are walked.

`.gitignore` support is a subset of git's: every `.gitignore` from the root down is read; blank
lines and `#` comments are skipped; `!` re-includes; a trailing `/` matches folders only; a pattern
with a `/` (other than a trailing one) is anchored at its file's folder, one without matches a name
at any depth below it; `*`, `?`, `[...]` and `**` as in `include`. A later matching line wins. As in
git, nothing inside an ignored folder can be re-included. Global and `info/exclude` files are not read.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import TemplatingError
from ..inputs import DEFAULT_MAX_FILE_SIZE, FileSkipped, InputError, read_bytes, read_text
from .config import LintConfig, _clean, _matches, glob_regex, load_config

__all__ = ["FileSkipped", "LintInputError", "Walker", "find_root", "has_marker", "read_bytes", "read_text"]

_NEVER_WALKED = frozenset({"node_modules", "__pycache__", "site-packages"})  # besides hidden folders (.git, .venv)


LintInputError = InputError  # the name the linter's errors were raised under; one class since they were merged


def _has_table(pyproject: Path) -> bool:
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True  # a broken one is still the project's: load_config reports it
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
    return fallback or start


def has_marker(folder: Path) -> bool:
    """Whether `folder` is marked as a project's root: it holds a `pyproject.toml` or a `.git`."""
    return (folder / "pyproject.toml").is_file() or (folder / ".git").exists()


def project_config(root: Path, config_path: Path | None = None) -> LintConfig:
    """The `[tool.templating]` of `config_path`, or of `root`'s `pyproject.toml`; the defaults without one."""
    if config_path is not None:
        return load_config(path=config_path)
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        return load_config(path=pyproject)
    return LintConfig(root=root.resolve())


@dataclass(frozen=True, slots=True)
class _Ignore:
    base: str  # the folder of the .gitignore, relative to the root ("" at the root)
    pattern: str
    negate: bool
    dir_only: bool
    anchored: bool

    def matches(self, relative: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        if self.base:
            if not relative.startswith(self.base + "/"):
                return False
            relative = relative[len(self.base) + 1 :]
        regex = glob_regex(self.pattern)
        if self.anchored:
            return regex.match(relative) is not None
        return regex.match(relative.rpartition("/")[2]) is not None


def _gitignore(folder: Path, base: str) -> list[_Ignore]:
    try:
        data = read_bytes(str(folder / ".gitignore"), limit=DEFAULT_MAX_FILE_SIZE, root=None)
        lines = data.decode("utf-8", errors="replace").splitlines()
    except (OSError, FileSkipped):
        return []
    rules: list[_Ignore] = []
    for line in lines:
        line = line.rstrip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        line = line[1:] if negate else line.removeprefix("\\")
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        anchored = "/" in line
        line = line.lstrip("/")
        if not line:
            continue
        try:
            glob_regex(line)
        except TemplatingError:  # a pattern git would read differently: passed over
            continue
        rules.append(_Ignore(base, line, negate, dir_only, anchored))
    return rules


@dataclass
class Walker:
    """Walks the project's folders: what is left out, and the files found (as paths under the root)."""

    config: LintConfig
    root: Path
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason) of files left unread

    def ignored(self, relative: str, is_dir: bool, rules: list[_Ignore]) -> bool:
        out = False
        for rule in rules:
            if rule.matches(relative, is_dir):
                out = not rule.negate
        return out

    def walk(self, folder: Path, *, recursive: bool = True) -> Iterator[Path]:
        """The files under `folder` (sorted), without entering what is ignored or excluded; with
        `recursive` false, the files in `folder` itself only."""
        root = self.root
        rules: list[_Ignore] = []
        for parent in reversed([folder, *folder.parents]):  # the .gitignore files above `folder`, root down
            if parent.is_relative_to(root):
                rel = parent.relative_to(root).as_posix()
                rules += _gitignore(parent, "" if rel == "." else rel)
        found: list[Path] = []
        stack: list[tuple[Path, list[_Ignore]]] = [(folder, rules)]
        while stack:
            here, inherited = stack.pop()
            rel_here = here.relative_to(root).as_posix() if here.is_relative_to(root) else None
            local = inherited if here == folder else inherited + _gitignore(here, rel_here or "")
            try:
                entries = sorted(os.scandir(here), key=lambda e: e.name)
            except OSError as exc:
                self.skipped.append((str(here), f"cannot read the folder: {exc.strerror or exc}"))
                continue
            subfolders: list[Path] = []
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                relative = f"{rel_here}/{entry.name}" if rel_here not in (None, ".") else entry.name
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir:
                    if entry.name in _NEVER_WALKED or _matches(relative, self.config.exclude):
                        continue
                    if not self.ignored(relative, True, local):
                        subfolders.append(Path(entry.path))
                    continue
                if _matches(relative, self.config.exclude) or self.ignored(relative, False, local):
                    continue
                found.append(Path(entry.path))
            if recursive:
                stack.extend((sub, local) for sub in reversed(subfolders))
        yield from sorted(found)


def wanted(relative: str, patterns: Sequence[str]) -> bool:
    """Whether a file (relative to the root) matches one of the include `patterns`."""
    return _matches(_clean(relative), patterns)
