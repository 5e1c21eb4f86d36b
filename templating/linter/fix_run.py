"""Fixing a project: the fixes of one lint run file by file ([`plan_fixes`][templating.linter.fix_run.plan_fixes]),
again on the fixed text until nothing is left
([`fix_until_stable`][templating.linter.fix_run.fix_until_stable], as ruff's `--fix`), shown as a diff
or written whole ([`write_fix`][templating.linter.fix_run.write_fix])."""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import TemplatingError
from ..inputs import DEFAULT_MAX_FILE_SIZE, FileSkipped, read_bytes, write_text_whole
from .fix_regions import FileFix, fix_file, regions_of
from .fixes import Fix, fixes_for
from .registry import Diagnostic

if TYPE_CHECKING:
    from .engine import Project
    from .result import LintResult

__all__ = ["MAX_PASSES", "FixRun", "FixWriteError", "diff_of", "fix_until_stable", "plan_fixes", "write_fix"]


def plan_fixes(project: Project, result: LintResult, *, unsafe: bool = False) -> list[FileFix]:
    """The fixes of every file `result` (a run of `project`) has findings in, each file as the run read
    it; only files a fix changes."""
    dialects = {t.path: t.dialect for t in result.templates if t.name is None}
    out: list[FileFix] = []
    for path, all_findings in result.by_file().items():
        text = result.sources.get(path)
        # the findings some fix is offered for (in any dialect): a file with none is not read for its
        # instructions (in a Python file, a scan of the project's code)
        findings = [d for d in all_findings if d.span is not None and text is not None and fixes_for(d, text)]
        if text is None or not findings:
            continue
        items: list[Any] = []
        if path.endswith(".py"):
            try:
                items, _ = project.instructions(path)
            except TemplatingError:
                continue
        regions = regions_of(path, text, items, dialect=dialects.get(path, project.dialect or "angle"))
        fixed = fix_file(path, text, findings, regions, unsafe=unsafe)
        if fixed.after != fixed.before:
            out.append(fixed)
    return out


# How many times `fix_until_stable` fixes and lints again at most (ruff: 100). A fix resolves its finding, and
# a finding left for a later pass is one whose fix overlapped another: a project settles in two or three.
MAX_PASSES = 10


@dataclass(frozen=True, slots=True)
class FixRun:
    """What fixing a project until it is stable does. `files`: each file changed, from its text on disk
    (`before`) to its text after the last pass (`after`), with every fix applied to it in any pass;
    `passes`: how many passes changed one of them; `unsettled`: the files whose fixes did not settle
    (fixes still to apply after the last pass, or a pass giving back a text an earlier one had), each
    with the codes of the findings fixed there, left out of `files`: such a file is not written."""

    files: list[FileFix]
    passes: int
    unsettled: dict[str, tuple[str, ...]]

    @property
    def count(self) -> int:
        """The number of fixes applied, over all passes."""
        return sum(len(fixed.applied) for fixed in self.files)


Relint = Callable[[dict[str, str]], "tuple[Project, LintResult]"]


def fix_until_stable(
    project: Project, result: LintResult, relint: Relint, *, unsafe: bool = False, passes: int = MAX_PASSES
) -> FixRun:
    """Fix `result` (a run of `project`), lint again with the fixed texts, and fix what that run finds,
    until no fix is left, at most `passes` times (as ruff's `--fix` does). `relint(texts)` lints the
    project again with `texts` (by path) instead of those files' content on disk, and writes nothing.

    Each pass is judged as [`plan_fixes`][templating.linter.fix_run.plan_fixes] judges one run: a fix is
    applied only where it is safe (`unsafe`: acceptable) in the text that pass reads, so what the passes
    do together changes an instruction only where its mistakes were. Nothing is written here."""
    texts: dict[str, str] = {}  # each file changed: its text after the last pass applied to it
    before: dict[str, str] = {}
    applied: dict[str, list[tuple[Diagnostic, Fix]]] = {}
    seen: dict[str, set[str]] = {}
    unsettled: dict[str, tuple[str, ...]] = {}
    last: dict[str, int] = {}  # each file: the last pass that changed it
    for count in range(1, passes + 1):
        planned = [fixed for fixed in plan_fixes(project, result, unsafe=unsafe) if fixed.path not in unsettled]
        if not planned:
            break
        for fixed in planned:
            before.setdefault(fixed.path, fixed.before)
            known = seen.setdefault(fixed.path, {fixed.before})
            if fixed.after in known:  # back to a text an earlier pass had: the fixes go round
                unsettled[fixed.path] = _codes(fixed)
                texts.pop(fixed.path, None)
                continue
            known.add(fixed.after)
            last[fixed.path] = count
            texts[fixed.path] = fixed.after
            applied.setdefault(fixed.path, []).extend(fixed.applied)
        project, result = relint(dict(texts))
    else:
        for fixed in plan_fixes(project, result, unsafe=unsafe):
            if fixed.path not in unsettled:
                unsettled[fixed.path] = _codes(fixed)
                texts.pop(fixed.path, None)
    files = [
        FileFix(path, before[path], text, applied[path])
        for path, text in texts.items()
        if text != before[path] and path not in unsettled
    ]
    return FixRun(files, max((last[fixed.path] for fixed in files), default=0), unsettled)


def _codes(fixed: FileFix) -> tuple[str, ...]:
    return tuple(sorted({diag.code for diag, _ in fixed.applied}))


def diff_of(fixed: FileFix, *, name: str | None = None) -> str:
    """A unified diff of what fixing the file changes. `name`: the file's name as its `---`/`+++` headers
    show it (default: its path as is; the command line passes it escaped, as every output names files)."""
    shown = fixed.path if name is None else name
    lines = difflib.unified_diff(
        fixed.before.splitlines(keepends=True),
        fixed.after.splitlines(keepends=True),
        fromfile=f"a/{shown}",
        tofile=f"b/{shown}",
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


class FixWriteError(TemplatingError):
    """A fixed file that was not written (why: the message); the file is unchanged."""


def write_fix(fixed: FileFix, *, root: str) -> None:
    """Write the fixed file whole or not at all (a temporary file beside it, then renamed over it,
    keeping its permissions and owner). Refused, with the file left as it is: a link, a file outside
    `root`, a file whose content is no longer what was linted (changed on disk since). (A file found
    through a link by walking is left out before: `LintRun`, `Project.found_through_link`.)"""
    path = fixed.path
    real, top = os.path.realpath(path), os.path.realpath(root)
    if os.path.islink(path):
        raise FixWriteError(f"{path}: not fixed, it is a symbolic link")
    if os.path.commonpath([real, top]) != top:
        raise FixWriteError(f"{path}: not fixed, it is outside the project ({root})")
    try:  # bounded, and never waiting on a pipe put there since
        now = read_bytes(path, limit=max(DEFAULT_MAX_FILE_SIZE, 2 * len(fixed.before)), follow=False)
    except (OSError, FileSkipped) as exc:
        raise FixWriteError(f"{path}: not fixed, it cannot be read again: {exc}") from None
    encoding = _encoding_of(path, now)
    try:
        now_text = now.decode(encoding)
    except UnicodeDecodeError:
        raise FixWriteError(
            f"{path}: not fixed, it changed on disk since it was linted (no longer {encoding})"
        ) from None
    mark = "\ufeff" if now_text.startswith("\ufeff") else ""  # read without it, written back with it
    if now_text.removeprefix("\ufeff") != fixed.before:
        raise FixWriteError(f"{path}: not fixed, it changed on disk since it was linted")
    after = mark + fixed.after
    if encoding != "utf-8" and after.encode("utf-8") != _encoded(after, encoding):
        raise FixWriteError(
            f"{path}: not fixed, it is written in {encoding} (its coding line) and --fix writes UTF-8: "
            "apply the fix by hand (templating lint --diff shows it)"
        )
    try:
        write_text_whole(real, after, newline="")
    except OSError as exc:
        raise FixWriteError(f"{path}: not fixed, it cannot be written: {exc.strerror or exc}") from None


def _encoding_of(path: str, data: bytes) -> str:
    """The encoding a file was linted in: a `.py` file's coding line (PEP 263, as `pysource` reads it), else
    UTF-8; a byte order mark is read as a character (written back as it was)."""
    if not path.endswith(".py"):
        return "utf-8"
    import codecs
    import io
    import tokenize

    try:
        declared, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        name = codecs.lookup(declared).name
    except (SyntaxError, LookupError):
        return "utf-8"
    return "utf-8" if name in ("utf-8", "utf-8-sig") else name


def _encoded(text: str, encoding: str) -> bytes | None:
    try:
        return text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return None
