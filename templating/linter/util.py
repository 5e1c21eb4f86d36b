"""Helpers every part of the linter shares: offsets to lines and columns, paths shown relative, close matches, a
process-wide setting held while scans run."""

from __future__ import annotations

import contextlib
import difflib
import functools
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Generic, TypeVar

# Offsets to lines and columns, and paths as findings show them, live below the linter (the scanner of
# Python code uses them too); the linter imports them from here.
from ..places import end_of as end_of
from ..places import line_starts as line_starts
from ..places import real_folder as real_folder
from ..places import shown as shown
from ..places import span_at as span_at

__all__ = [
    "WhileRunning",
    "close_match",
    "end_of",
    "line_starts",
    "real_folder",
    "relative",
    "running_version",
    "shown",
    "span_at",
]


def close_match(word: str, options: Iterable[str], *, cutoff: float = 0.6) -> str | None:
    """The option closest to `word`, if one is close enough (a did-you-mean)."""
    return _close_match(word, tuple(options), cutoff)


@functools.lru_cache(maxsize=4096)
def _close_match(word: str, options: tuple[str, ...], cutoff: float) -> str | None:
    # kept: an edit asks again for every finding of the project whose inputs did not change
    match = difflib.get_close_matches(word, list(options), n=1, cutoff=cutoff)
    return match[0] if match else None


def relative(path: Path, root: Path) -> str:
    """`path` as a `/`-separated path relative to `root` (resolved), or as given when outside it."""
    try:
        return path.resolve().relative_to(root).as_posix()
    except (ValueError, OSError, RuntimeError):  # outside the root; a symlink loop
        return path.as_posix()


def running_version() -> str:
    """The running package's version (`templating.__version__`, the one place it is written), read
    without importing the package from below it: it is always imported, as every module is part of it."""
    package = sys.modules.get(__name__.split(".")[0])
    version = getattr(package, "__version__", None)
    return version if isinstance(version, str) else "unknown"


_T = TypeVar("_T")


class WhileRunning(Generic[_T]):
    """A process-wide setting (the switch interval, the collector's thresholds) changed while any of the runs that
    ask for it runs, and put back as it was before the first when the last ends: the language server reads folders
    and edits on threads, whose runs overlap and end in any order. `read` gives the setting, `change` changes it
    (given what it was: all or nothing, or else put back by `restore` when it fails), `restore` puts it back."""

    def __init__(self, read: Callable[[], _T], change: Callable[[_T], object], restore: Callable[[_T], object]) -> None:
        self._read, self._change, self._restore = read, change, restore
        self._lock = threading.Lock()
        self._running = 0
        self._before: list[_T] = []  # the setting before the first of the runs now running

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._running == 0:
                before = self._read()
                try:
                    self._change(before)
                except BaseException:
                    self._restore(before)
                    raise
                self._before = [before]
            self._running += 1
        try:
            yield
        finally:
            with self._lock:
                self._running -= 1
                if self._running == 0:
                    self._restore(self._before.pop())
