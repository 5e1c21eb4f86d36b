"""A git revision's files, for `templating diff`: the revision resolved, and the files an app is read from at that
revision exported into a temporary folder outside the working tree (`git archive`), which is removed afterwards.
Nothing in the working tree or the repository is written."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from .load import PreviewError

__all__ = ["Repository", "exported"]

MAX_EXPORT = 256 * 1024 * 1024  # bytes of a revision's files exported for one diff


class Repository:
    """The git repository holding the current folder (`start`): its top folder, and revisions resolved in it."""

    def __init__(self, start: str | Path = ".") -> None:
        self.start = Path(start)
        top = self._git("rev-parse", "--show-toplevel", what="not a git repository")
        self.top = Path(top.strip())

    def _git(self, *args: str, what: str, data: bool = False) -> str:
        try:
            done = subprocess.run(
                ["git", *args],
                cwd=self.start,
                capture_output=True,
                check=False,
                timeout=120,
                env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},  # a read takes no lock and writes no index
            )
        except FileNotFoundError:
            raise PreviewError("templating diff needs git, which is not installed (no `git` on PATH)") from None
        except subprocess.TimeoutExpired:
            raise PreviewError(f"git {' '.join(args)} took more than 120 seconds") from None
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise PreviewError(f"{what}: {said[-1] if said else f'git {args[0]} failed'}")
        return done.stdout.decode("utf-8", "replace")

    def commit(self, revision: str) -> str:
        """The commit `revision` names (its full hash); a `PreviewError` when it names none."""
        if revision.startswith("-"):
            raise PreviewError(f"{revision!r} is not a revision")
        found = self._git(
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            f"{revision}^{{commit}}",
            what=f"{revision!r} is not a revision of this repository",
        )
        return found.strip()

    def is_revision(self, revision: str) -> bool:
        try:
            self.commit(revision)
        except PreviewError:
            return False
        return True

    def default_base(self) -> tuple[str, str]:
        """The merge base of HEAD with the default branch (`origin/HEAD`, else `main`, `master`), and its name."""
        candidates = []
        with contextlib.suppress(PreviewError):
            candidates.append(self._git("symbolic-ref", "--quiet", "refs/remotes/origin/HEAD", what="").strip())
        candidates += ["origin/main", "origin/master", "main", "master"]
        for branch in candidates:
            if branch and self.is_revision(branch):
                base = self._git("merge-base", "HEAD", branch, what=f"no merge base of HEAD and {branch}").strip()
                short = branch.removeprefix("refs/remotes/")
                return base, f"the merge base with {short}"
        raise PreviewError("no default branch (origin/HEAD, main, master) to diff against: name a revision")

    def short(self, commit: str) -> str:
        return self._git("rev-parse", "--short", commit, what="git rev-parse").strip()

    def archive(self, commit: str, paths: Sequence[str]) -> bytes:
        """The tar of `paths` (relative to the top; all files when none) at `commit`."""
        return self._git_bytes("archive", "--format=tar", commit, "--", *paths)

    def _git_bytes(self, *args: str) -> bytes:
        done = subprocess.run(
            ["git", *args],
            cwd=self.top,
            capture_output=True,
            check=False,
            timeout=300,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        )
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise PreviewError(f"git {args[0]}: {said[-1] if said else 'failed'}")
        if len(done.stdout) > MAX_EXPORT:
            raise PreviewError(f"the revision's files take more than {MAX_EXPORT} bytes: name the apps to diff")
        return done.stdout

    def exists_at(self, commit: str, path: str) -> bool:
        done = subprocess.run(
            ["git", "cat-file", "-e", f"{commit}:{path}"], cwd=self.top, capture_output=True, check=False
        )
        return done.returncode == 0


@contextlib.contextmanager
def exported(repository: Repository, commit: str, paths: Sequence[str]) -> Iterator[Path]:
    """A temporary folder (outside the working tree) holding `paths` as they are at `commit`; removed on exit."""
    folder = Path(tempfile.mkdtemp(prefix="templating-diff-"))
    try:
        existing = [p for p in paths if repository.exists_at(commit, p)] if paths else []
        if existing or not paths:
            data = repository.archive(commit, existing)
            with tarfile.open(fileobj=io.BytesIO(data)) as archive:
                archive.extractall(folder, filter="data")  # no link out, no absolute path, no device
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
