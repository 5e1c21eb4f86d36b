"""Glob matching for `include`, `exclude`, `per-file-ignores` and `.gitignore` lines, in linear time.

Why not `re` (or `pathspec`, which compiles to `re`): a glob turned into a regular expression becomes
runs of `.*` and `[^/]*` that the backtracking engine retries against each other, so a `.gitignore`
line such as `*a*a*a*a*a*a*b` against a long name takes exponential time. Here a pattern is compiled
once into per-folder *segments*, each a list of fixed-length *chunks* separated by `*`; a name
matches when the first chunk fits its start, the last its end and each middle chunk is found, leftmost,
after the previous one. Leftmost is always right for `*` (it can absorb any text), so no choice is ever
revisited: at most `len(pattern) * len(name)` character tests per segment. `**` is handled the same
way one level up, with whole folders in place of characters.

The syntax is git's (`gitignore(5)`), as far as a walk needs it:

- `*` any run of characters within one folder name, `?` one character, `[abc]`, `[a-z]`, `[!a-z]`
  (or `[^a-z]`) one character in (or not in) a class; `\\x` is `x` taken literally.
- `**` as a whole folder name: any number of folders (`a/**/b`, `**/b`); a trailing `/**` matches
  everything inside (not the folder itself). A `**` inside a name (`a**b`) is one `*`, as in git.
- A pattern with a `/` at its start or in its middle is anchored at its base folder; one without
  matches a name at any depth. A leading `/` only anchors.
- A `[` with no closing `]` is a literal `[`. A reversed range (`[z-a]`) is an error.

`!` (negation) and a trailing `/` (folders only) belong to a *list* of patterns: see
[`GlobList`][templating.linter.globs.GlobList] and the `.gitignore` reader in `project.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

__all__ = ["Glob", "GlobError", "GlobList", "compile_glob"]


class GlobError(ValueError):
    """A pattern that cannot be compiled (a reversed range `[z-a]`, a trailing lone backslash)."""


# An atom matches exactly one character: a literal (a 1-character str) or a class (a predicate).
Atom = str | Callable[[str], bool]


def _class(body: str, pattern: str) -> Callable[[str], bool]:
    negate = body[:1] in ("!", "^") and len(body) > 1
    if negate:
        body = body[1:]
    singles: set[str] = set()
    ranges: list[tuple[str, str]] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            i += 1
            ch = body[i]
        if i + 2 < len(body) and body[i + 1] == "-":
            end = body[i + 2]
            if end == "\\" and i + 3 < len(body):
                end = body[i + 3]
                i += 1
            if end < ch:
                raise GlobError(f"bad glob {pattern!r}: bad character range {ch}-{end}")
            ranges.append((ch, end))
            i += 3
            continue
        singles.add(ch)
        i += 1
    frozen = frozenset(singles)
    if not ranges:
        return (lambda c: c not in frozen) if negate else frozen.__contains__
    spans = tuple(ranges)

    def member(c: str) -> bool:
        return (c in frozen or any(lo <= c <= hi for lo, hi in spans)) is not negate

    return member


def _atoms(segment: str, pattern: str) -> list[Atom | None]:
    """The atoms of one folder name's pattern; `None` stands for `*`."""
    out: list[Atom | None] = []
    i = 0
    n = len(segment)
    while i < n:
        ch = segment[i]
        if ch == "\\":
            if i + 1 == n:
                raise GlobError(f"bad glob {pattern!r}: it ends with a lone backslash")
            out.append(segment[i + 1])
            i += 2
        elif ch == "*":
            if not out or out[-1] is not None:  # `**` inside a name is one `*`
                out.append(None)
            i += 1
        elif ch == "?":
            out.append(_ANY)
            i += 1
        elif ch == "[":
            close = _class_end(segment, i)
            if close < 0:
                out.append("[")
                i += 1
            else:
                out.append(_class(segment[i + 1 : close], pattern))
                i = close + 1
        else:
            out.append(ch)
            i += 1
    return out


def _class_end(segment: str, start: int) -> int:
    """The index of the `]` closing the class opened at `start`, or -1."""
    i = start + 1
    if i < len(segment) and segment[i] in "!^":
        i += 1
    if i < len(segment) and segment[i] == "]":  # `[]a]`: a leading `]` is a member
        i += 1
    while i < len(segment):
        if segment[i] == "\\":
            i += 2
            continue
        if segment[i] == "]":
            return i
        i += 1
    return -1


def _any(_: str) -> bool:
    return True


_ANY: Callable[[str], bool] = _any


class _Chunk:
    """A run of atoms with no `*`: it matches text of exactly its length."""

    __slots__ = ("atoms", "literal", "size")

    def __init__(self, atoms: Sequence[Atom]) -> None:
        self.atoms = tuple(atoms)
        self.size = len(atoms)
        self.literal: str | None = (
            "".join(a for a in atoms if isinstance(a, str)) if all(isinstance(a, str) for a in atoms) else None
        )

    def at(self, text: str, pos: int) -> bool:
        if self.literal is not None:
            return text.startswith(self.literal, pos)
        if pos + self.size > len(text):
            return False
        for offset, atom in enumerate(self.atoms):
            ch = text[pos + offset]
            if isinstance(atom, str):
                if atom != ch:
                    return False
            elif not atom(ch):
                return False
        return True

    def find(self, text: str, start: int, stop: int) -> int:
        """The leftmost position `p >= start` where the chunk fits within `text[:stop]`, or -1."""
        if self.literal is not None:
            return text.find(self.literal, start, stop)
        for pos in range(start, stop - self.size + 1):
            if self.at(text, pos):
                return pos
        return -1


class _Segment:
    """One folder name's pattern: chunks separated by `*`."""

    __slots__ = ("chunks", "exact", "star")

    def __init__(self, atoms: list[Atom | None]) -> None:
        self.star = None in atoms
        runs: list[list[Atom]] = [[]]
        for atom in atoms:
            if atom is None:
                runs.append([])
            else:
                runs[-1].append(atom)
        self.chunks = [_Chunk(run) for run in runs]
        first = self.chunks[0]
        self.exact = first.literal if not self.star else None

    def ends(self) -> tuple[str, str]:
        """The literal text every matching name starts with and (when there is a `*`) ends with."""
        head = self.chunks[0]
        tail = self.chunks[-1] if self.star else None
        prefix = head.literal if head.literal is not None else ""
        suffix = tail.literal if tail is not None and tail.literal is not None else ""
        return prefix, suffix

    def match(self, name: str) -> bool:
        if self.exact is not None:
            return name == self.exact
        chunks = self.chunks
        if not self.star:
            return chunks[0].size == len(name) and chunks[0].at(name, 0)
        head, tail = chunks[0], chunks[-1]
        low, high = head.size, len(name) - tail.size
        if high < low or not head.at(name, 0) or not tail.at(name, high):
            return False
        for chunk in chunks[1:-1]:  # each middle chunk at its leftmost place: never revisited
            pos = chunk.find(name, low, high)
            if pos < 0:
                return False
            low = pos + chunk.size
        return True


_DEEP = None  # `**`: any number of folders, in a compiled pattern's list of segments
_SEEN_LIMIT = 4096  # names whose match a pattern keeps


def _fits(group: Sequence[_Segment], parts: Sequence[str], pos: int) -> bool:
    return all(seg.match(parts[pos + k]) for k, seg in enumerate(group))


@dataclass(frozen=True, slots=True, eq=False)
class Glob:
    """One compiled pattern. [`match`][templating.linter.globs.Glob.match] tests a `/`-separated path."""

    pattern: str
    anchored: bool
    groups: tuple[tuple[_Segment, ...], ...]  # segment runs separated by `**`
    deep: bool  # whether there is a `**` at all (then groups[0] is the prefix, groups[-1] the suffix)
    # `**/NAME/**`: whether each folder or file name met matches NAME (a walk meets each folder name many times)
    _seen: dict[str, bool] = field(default_factory=dict, repr=False)

    def name_segment(self) -> _Segment | None:
        """The pattern of the one name it matches at any depth (`*.log`), when that is what it is."""
        if not self.anchored and len(self.groups) == 2 and not self.groups[0] and len(self.groups[1]) == 1:
            return self.groups[1][0]
        return None

    def match(self, path: str) -> bool:
        """Whether the whole of `path` (relative, `/`-separated) matches."""
        return self.match_parts(path.split("/"))

    def part_segment(self) -> _Segment | None:
        """The pattern of a name some part of a matching path has, when that is all the glob asks: `NAME`,
        `**/NAME` or `*.py` compiled with `prefixes` (the usual include and exclude)."""
        groups = self.groups
        if len(groups) == 3 and not groups[0] and not groups[2] and len(groups[1]) == 1:
            return groups[1][0]
        return None

    def match_parts(self, parts: Sequence[str]) -> bool:
        groups = self.groups
        if len(groups) == 3 and not groups[0] and not groups[2] and len(groups[1]) == 1:
            segment = groups[1][0]  # `**/NAME/**`: some part is NAME (the usual include and exclude)
            seen = self._seen
            for part in parts:
                hit = seen.get(part)
                if hit is None:
                    hit = segment.match(part)
                    if len(seen) < _SEEN_LIMIT:
                        seen[part] = hit
                if hit:
                    return True
            return False
        if not self.deep:
            (only,) = groups
            return len(only) == len(parts) and _fits(only, parts, 0)
        head, tail = groups[0], groups[-1]
        low, high = len(head), len(parts) - len(tail)
        if high < low or not _fits(head, parts, 0) or not _fits(tail, parts, high):
            return False
        for group in groups[1:-1]:  # leftmost again, folders in place of characters
            size = len(group)
            for pos in range(low, high - size + 1):
                if _fits(group, parts, pos):
                    low = pos + size
                    break
            else:
                return False
        return True


def compile_glob(pattern: str, *, prefixes: bool = False) -> Glob:
    """Compile `pattern` (see the module's description). With `prefixes`, the glob also matches a
    path one of whose folders matches (`drafts` matches `drafts/a.txt`), as `exclude` wants.

    Raises [`GlobError`][templating.linter.globs.GlobError] for a pattern that is not valid."""
    body = pattern[:-1] if pattern.endswith("/") and not pattern.endswith("\\/") else pattern
    anchored = "/" in body
    body = body.removeprefix("/")
    pieces: list[_Segment | None] = [] if anchored else [_DEEP]
    for name in body.split("/"):
        if name == "**":
            if not pieces or pieces[-1] is not _DEEP:
                pieces.append(_DEEP)
        else:
            pieces.append(_Segment(_atoms(name, pattern)))
    if pieces and pieces[-1] is _DEEP and anchored and len(pieces) > 1:
        pieces.insert(-1, _Segment([None]))  # a trailing `/**`: something inside, not the folder itself
    if prefixes and (not pieces or pieces[-1] is not _DEEP):
        pieces.append(_DEEP)
    groups: list[list[_Segment]] = [[]]
    for piece in pieces:
        if piece is None:
            groups.append([])
        else:
            groups[-1].append(piece)
    return Glob(pattern, anchored, tuple(tuple(g) for g in groups), len(groups) > 1)


class GlobList:
    """Patterns compiled once, matched as a list: any one matching, or with `!` negations, the last
    one matching wins (`!` re-includes what an earlier pattern matched). `prefixes`: as in
    [`compile_glob`][templating.linter.globs.compile_glob]."""

    __slots__ = ("_seen", "_segments", "globs", "negations")

    def __init__(self, patterns: Iterable[str], *, prefixes: bool = True) -> None:
        globs: list[tuple[bool, Glob]] = []
        for raw in patterns:
            negate = raw.startswith("!")
            globs.append((negate, compile_glob(_clean(raw[1:] if negate else raw), prefixes=prefixes)))
        self.globs = tuple(globs)
        self.negations = any(negate for negate, _ in globs)
        # every pattern a name at any depth (`Glob.part_segment`) and none negated: a path matches when one of
        # its parts matches one of the names, asked once a part (a walk meets the same names many times)
        segments = [glob.part_segment() for _, glob in globs]
        self._segments = None if self.negations or None in segments else tuple(s for s in segments if s)
        self._seen: dict[str, bool] = {}

    def __bool__(self) -> bool:
        return bool(self.globs)

    def match(self, path: str) -> bool:
        """Whether `path` (relative to the base, `/`-separated) is matched."""
        if not self.globs:
            return False
        parts = _clean(path).split("/")
        if self._segments is not None:
            seen = self._seen
            for part in parts:
                hit = seen.get(part)
                if hit is None:
                    hit = any(segment.match(part) for segment in self._segments)
                    if len(seen) < _SEEN_LIMIT:
                        seen[part] = hit
                if hit:
                    return True
            return False
        if not self.negations:
            return any(glob.match_parts(parts) for _, glob in self.globs)
        for negate, glob in reversed(self.globs):
            if glob.match_parts(parts):
                return not negate
        return False


def _clean(pattern: str) -> str:
    """A glob or path written `./a/b` compares as `a/b`."""
    while pattern.startswith("./"):
        pattern = pattern[2:]
    return pattern
