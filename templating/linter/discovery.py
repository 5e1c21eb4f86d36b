"""Which files a run lints: the paths named, folders walked for the include globs, minus exclude."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from .config import LintConfig, _matches
from .util import relative as _relative

DEFAULT_INCLUDE = ("*.prompt", "*.prompt.md", "*.prompt.txt", "*.instruction.txt", "**/*.py", "**/root_agent.yaml")


_NEVER_WALKED = frozenset({"node_modules", "__pycache__", "site-packages"})  # besides hidden folders (.git, .venv)


def default_folder(root: Path) -> Path:
    """What a run given no paths walks when `[tool.templating]` has no `include` (or there is none): the
    current folder, as `templating lint .` (and ruff) do, or `root` when the current folder is outside it
    (a caller naming another project's root)."""
    here = Path.cwd().resolve()
    return here if here.is_relative_to(root) else root


def collect_files(paths: Sequence[str], config: LintConfig, *, force_exclude: bool = False) -> list[str]:
    """The files to lint, in order: each file given as is (unless `force_exclude` and it matches
    `exclude`: what a pre-commit hook wants); each folder walked for files matching `include`
    (default `*.prompt`, `*.prompt.md`...) and not `exclude`. No paths: the project's
    `include` globs under the config's root; without `include`, the current folder
    (`default_folder`). Hidden folders (`.git`, `.venv`), `node_modules`
    and excluded folders are not entered. A file named twice (`a.txt ./a.txt`) is linted once.
    An unreadable folder or a bad name (too long) is an `OSError`."""
    include = config.include or DEFAULT_INCLUDE
    found: list[str] = []

    def walk(folder: Path) -> Iterator[Path]:
        items: list[Path] = []

        def fail(exc: OSError) -> None:
            raise exc

        for here, dirs, files in os.walk(folder, onerror=fail):
            base = Path(here)
            dirs[:] = [
                name
                for name in dirs
                if not name.startswith(".")
                and name not in _NEVER_WALKED
                and not _matches(_relative(base / name, config.root), config.exclude)
            ]
            items.extend(base / name for name in files if not name.startswith("."))
        yield from sorted(items)

    def wanted(item: Path) -> bool:
        relative = _relative(item, config.root)
        return _matches(relative, include) and not _matches(relative, config.exclude)

    if not paths and not config.include:
        paths = [str(default_folder(config.root))]
    if not paths:
        cwd = Path.cwd().resolve()
        return [
            str(item.relative_to(cwd) if item.is_relative_to(cwd) else item)
            for item in walk(config.root)
            if wanted(item)
        ]
    for given in paths:
        item = Path(given)
        if given != "-" and item.is_dir():
            found.extend(str(sub) for sub in walk(item) if wanted(sub))
        elif not (force_exclude and given != "-" and _matches(_relative(item, config.root), config.exclude)):
            found.append(given)
    unique: dict[str, str] = {}
    for name in found:
        unique.setdefault(name if name == "-" else str(Path(name).resolve()), name)
    return list(unique.values())
