"""The workspace folders the server serves, each its own project.

Each folder is a project of its own, as `templating lint` run in it sees it: its `pyproject.toml`,
its files, its state keys. A file belongs to the innermost folder holding it once symbolic links
are resolved, so a link out of a folder is outside it. A folder is read and indexed on a thread of
its own, so the message loop keeps answering (`shutdown` included) however large the folder is,
and the project it builds is handed to the loop whole. The root of the file system and a home
folder (or a folder holding one) are refused: walking them reads every project on the disk."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import TemplatingError
from ..linter.engine import Project
from .model import Index

__all__ = ["Folder", "contains", "refused_because"]

log = logging.getLogger(__name__)

LOADING, READY, REFUSED, FAILED = "loading", "ready", "refused", "failed"


def refused_because(root: Path) -> str | None:
    """Why a workspace folder is not indexed, or None: the root of the file system, a home folder,
    or a folder that holds a home folder."""
    if root == Path(root.anchor):
        return "it is the root of the file system"
    try:
        home = Path.home().resolve()
    except (RuntimeError, OSError, KeyError):
        return None
    if root == home:
        return "it is a home folder"
    if root in home.parents:
        return f"it holds a home folder ({home})"
    return None


def contains(root: Path, path: str) -> bool:
    """Whether `path` (resolved) is `root` or inside it."""
    base = str(root)
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


@dataclass(eq=False)
class Folder:
    """A workspace folder: its project and index once read (`state` is then `ready`), or why not."""

    root: Path  # resolved
    uri: str
    state: str = LOADING
    reason: str = ""  # why refused or failed
    project: Project | None = None
    index: Index | None = None
    generation: int = 0  # of the latest reading started: an older one finishing is dropped
    unreadable: dict[str, tuple[str, str]] = field(default_factory=dict)  # published: path -> (code, reason)

    @property
    def ready(self) -> bool:
        return self.state == READY and self.project is not None and self.index is not None

    def load(
        self,
        texts: dict[str, str],
        done: Callable[[Folder, int, Project | None, Index | None, str], None],
    ) -> None:
        """Read the folder's project and index on a thread, with `texts` (the open documents' text by
        path) over the files; `done(folder, generation, project, index, error)` then runs on the loop.
        The folder stays as it was (ready with its former project, if any) until then."""
        self.generation += 1
        generation = self.generation
        loop = asyncio.get_running_loop()

        def work() -> None:
            project: Project | None = None
            index: Index | None = None
            error = ""
            try:
                project = Project(self.root, overrides=texts)
                # the engine's context and every file's findings, worked out now rather than at the first edit
                # (which then reuses them); the index takes that scan
                index = Index(project, lambda: texts, found=project.read_context())
            except TemplatingError as exc:
                error = str(exc)
            except Exception as exc:  # a bug must not leave the folder loading for ever
                log.exception("reading the workspace folder %s failed", self.root)
                error = f"{type(exc).__name__}: {exc}"
            with contextlib.suppress(RuntimeError):  # the loop closed: the server is exiting
                loop.call_soon_threadsafe(done, self, generation, project, index, error)

        # a daemon thread: an exit never waits for a folder being read
        threading.Thread(target=work, name=f"templating-index-{generation}", daemon=True).start()
