"""Where a fix applies in a file: each instruction as a `Region` of the file's text, and the judgement of
a fix there (inside the instruction's literal, no escape needed, the instruction's meaning kept outside
the edit). `fix_file` picks one fix per finding of a file; `applied_fix` is the one `--fix` applies,
which the language server marks preferred."""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from typing import Any

from ..errors import TemplatingError
from ..nodes import Escaped, Placeholder
from ..template import parse
from .fixes import Fix, apply_edits, fixes_for
from .registry import Diagnostic

__all__ = ["FileFix", "Region", "applied_fix", "fix_file", "regions_of"]


@dataclass(frozen=True, slots=True)
class Region:
    """One instruction as a fix sees it: its `text`, its `dialect`, and for each character of the text its
    offset in the file when it is written there as itself (None: an escape, an f-string's `{{`, another
    file). A template file is one region whose every character is written as is; an instruction in Python
    code is the characters of its string literals, and a fix edits nothing else."""

    text: str
    dialect: str
    offsets: tuple[int | None, ...]

    @classmethod
    def whole(cls, text: str, dialect: str) -> Region:
        """A template file: the instruction is the file."""
        return cls(text, dialect, tuple(range(len(text))))

    def inside(self, start: int, end: int) -> tuple[int, int] | None:
        """The span of `text` written as the file's `[start, end)`, character for character; None when
        part of it is not (outside the literal, an escape)."""
        if end <= start:
            return None
        try:
            first = self.offsets.index(start)
        except ValueError:
            return None
        last = first + (end - start)
        if last > len(self.offsets) or self.offsets[first:last] != tuple(range(start, end)):
            return None
        return first, last


@dataclass(frozen=True, slots=True)
class FileFix:
    """What fixing one file does: its text `before` and `after`, and the fixes applied (finding, fix)."""

    path: str
    before: str
    after: str
    applied: list[tuple[Diagnostic, Fix]]


# What may not be written into a Python string literal as is (it would need an escape, or end the literal).
_NEEDS_ESCAPE = re.compile(r"[\\'\"\n\r]")


def fix_file(
    path: str, text: str, findings: list[Diagnostic], regions: list[Region], *, unsafe: bool = False
) -> FileFix:
    """Fix the findings of the file `path` (its `text`): for each finding, its first fix that is safe
    (`unsafe`: or unsafe, safe ones first) in every region (instruction) holding the finding's text,
    its edits inside the literal of each; one fix per finding, none overlapping another. Python files
    (`path` ending in `.py`) take only edits that need no escape in the literal."""
    python = path.endswith(".py")
    chosen: list[tuple[Diagnostic, Fix]] = []
    taken: list[tuple[int, int]] = []
    for diag in sorted(findings, key=lambda d: (d.span.start, d.span.end) if d.span else (-1, -1)):
        holding = _holding(diag, regions)
        if holding is None:
            continue
        for fix in _ranked(fixes_for(diag, text, dialect=holding[0].dialect), unsafe=unsafe):
            if any(a < end and start < b for a, b, _ in fix.edits for start, end in taken):
                break  # another fix edits this text already: the next run takes it
            verdicts = [_judge(fix, text, region, python=python) for region in holding]
            if None in verdicts or (not all(verdicts) and not unsafe):
                continue
            chosen.append((diag, fix))
            taken += [(a, b) for a, b, _ in fix.edits]
            break
    edits = [edit for _, fix in chosen for edit in fix.edits]
    return FileFix(path, text, apply_edits(text, edits), chosen)


def _holding(diag: Diagnostic, regions: list[Region]) -> list[Region] | None:
    """Every instruction holding the text of `diag` (a constant given to two agents, `BASE + QUIZ` and
    `BASE + MEMORY`); None when there is none, or when they read it in two dialects (no fix keeps both)."""
    if diag.span is None:
        return None
    holding = [r for r in regions if r.inside(diag.span.start, diag.span.end) is not None]
    return holding if len({r.dialect for r in holding}) == 1 else None


def applied_fix(diag: Diagnostic, fixes: list[Fix], text: str, regions: list[Region], *, path: str) -> Fix | None:
    """The one of `fixes` (those of `diag`, in the file `path` whose text is `text` and whose instructions
    are `regions`) that `templating lint --fix` applies without `--unsafe-fixes`: the first that is safe
    in every instruction holding the finding; None when none is. The language server marks it preferred
    (an editor's "fix all" applies what `--fix` would)."""
    holding = _holding(diag, regions)
    if holding is None:
        return None
    python = path.endswith(".py")
    for fix in _ranked(fixes, unsafe=False):
        if all(_judge(fix, text, region, python=python) for region in holding):
            return fix
    return None


def regions_of(path: str, text: str, instructions: list[Any], *, dialect: str) -> list[Region]:
    """The instructions of the file `path` as fixes see them: a Python file's `instructions` (each with
    `text`, `dialect` and `written_as_is`, as `pysource` finds them), or a template file read in `dialect`."""
    if not path.endswith(".py"):
        return [Region.whole(text, dialect)]
    return [Region(item.text, item.dialect, tuple(item.written_as_is(path))) for item in instructions]


def _ranked(fixes: list[Fix], *, unsafe: bool) -> list[Fix]:
    return [f for f in fixes if f.safe] + ([f for f in fixes if not f.safe] if unsafe else [])


def _judge(fix: Fix, text: str, region: Region, *, python: bool) -> bool | None:
    """Whether `fix` is safe (True), unsafe (False), or not to be applied here (None: an edit outside
    the instruction's literal, one a Python literal would need to escape, or an instruction that no
    longer parses)."""
    if fix.path is not None or len(fix.edits) != 1:
        return None
    start, end, new = fix.edits[0]
    inner = region.inside(start, end)
    if inner is None:
        return None
    flagged = text[start:end]
    if python and (
        _NEEDS_ESCAPE.search(new)
        or (set(new) & {"{", "}"} and not set(flagged) & {"{", "}"} and _in_fstring(text, start))
    ):
        return None  # a brace written into an f-string would be a replacement field
    i, j = inner
    after = region.text[:i] + new + region.text[j:]
    try:
        old_nodes = parse(region.text, dialect=region.dialect).nodes  # type: ignore[arg-type]
        new_nodes = parse(after, dialect=region.dialect).nodes  # type: ignore[arg-type]
    except (TemplatingError, ValueError):
        return None
    return fix.safe and _keeps_meaning(old_nodes, new_nodes, i, j, len(new) - (j - i))


def _in_fstring(text: str, offset: int) -> bool:
    """Whether the character at `offset` of the Python source `text` is inside an f-string (True when the
    source cannot be read: a brace is then not written)."""
    spans = _fstrings(text)
    return spans is None or any(a <= offset < b for a, b in spans)


@functools.lru_cache(maxsize=8)
def _fstrings(text: str) -> tuple[tuple[int, int], ...] | None:
    """The f-strings of the Python source `text`, as character offsets; None when it is not valid Python."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    starts = [0, *(m.end() for m in re.finditer("\n", text))]

    def offset(line: int, column: int) -> int:  # ast's column counts UTF-8 bytes
        begin = starts[line - 1]
        end = starts[line] if line < len(starts) else len(text)
        return begin + len(text[begin:end].encode("utf-8")[:column].decode("utf-8", "ignore"))

    return tuple(
        (offset(node.lineno, node.col_offset), offset(node.end_lineno or node.lineno, node.end_col_offset or 0))
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr)
    )


def _keeps_meaning(old: tuple[Any, ...], new: tuple[Any, ...], start: int, end: int, shift: int) -> bool:
    """Whether an edit of `[start, end)` changes only what renders there: every placeholder and escape
    outside the edit is still there unchanged, and the instruction requires no key it did not (a new
    required key is a `KeyError` the agent did not raise before)."""

    def marks(nodes: tuple[Any, ...], a: int, b: int, moved: int) -> list[tuple[str, str, bool, int, int]]:
        out = []
        for node in nodes:
            if isinstance(node, Placeholder | Escaped) and (node.span.end <= a or node.span.start >= b):
                at = node.span.start - (moved if node.span.start >= b else 0)
                name = node.key if isinstance(node, Placeholder) else node.text
                out.append((type(node).__name__, name, bool(getattr(node, "optional", False)), at, 0))
        return out

    if marks(old, start, end, 0) != marks(new, start, end + shift, shift):
        return False

    def required(nodes: tuple[Any, ...]) -> set[str]:
        return {n.key for n in nodes if isinstance(n, Placeholder) and not n.optional}

    return required(new) <= required(old)
