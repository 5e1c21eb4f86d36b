"""Reading a `.py` file as Python does: its bytes decoded as its coding line declares, its text parsed by
`ast` (under Python 3.11, files written with 3.12's type parameters and f-strings too, every position kept),
and each failure a [`PythonSourceError`][templating.pysource.PythonSourceError] placed in the file."""

from __future__ import annotations

import _thread  # a lock without importing threading, which the command line does not need
import ast
import contextlib
import io
import re
import sys
import tokenize
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

from ..errors import TemplatingError
from ..nodes import Span
from ..places import line_starts

# Module constants whose name ends in one of these (in capitals) are instructions even when no call site
# uses them, if they hold a placeholder: `scan(suffixes=...)`'s default, and `constant-suffixes` in
# `[tool.templating]`.
CONSTANT_SUFFIXES: tuple[str, ...] = ("PROMPT", "INSTRUCTION", "INSTR", "TEMPLATE")

# The largest text file an instruction is read from (load_instruction_from_file("writer.txt")).
_MAX_TEXT_BYTES = 1_000_000


class PythonSourceError(TemplatingError):
    """A `.py` file to lint that is not valid Python (nothing of it can be checked).

    `path` names the file; `source` and `span` place the error in it (its first character when
    Python gives no position).
    """

    def __init__(self, reason: str, *, path: str, source: str, span: Span, help: str | None = None) -> None:
        super().__init__(f"{path}:{span.line}:{span.column}: {reason}", source=source, span=span, help=help)
        self.path = path
        self.reason = reason

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as it was made (a lint's worker process sends it back to the project's)."""
        return _rebuilt_error, (self.reason, self.path, self.source or "", self.span, self.help)


def _rebuilt_error(reason: str, path: str, source: str, span: Span | None, help: str | None) -> PythonSourceError:
    return PythonSourceError(reason, path=path, source=source, span=span or _span_at(source, 1, 1), help=help)


def _span_at(text: str, line: int | None, column: int | None) -> Span:
    """The one-character span at 1-based `line`/`column` of `text` (clamped into it)."""
    starts = line_starts(text)
    line = min(max(line or 1, 1), len(starts))
    begin = starts[line - 1]
    row = text[begin : starts[line] - 1 if line < len(starts) else len(text)].rstrip("\r")
    column = min(max(column or 1, 1), len(row) + 1)
    start = begin + column - 1
    return Span(start, min(start + 1, begin + len(row)), line, column)


def _undecodable(path: str, exc: UnicodeDecodeError) -> PythonSourceError:
    """The error for a `.py` file whose bytes are not in its encoding (UTF-8 unless a coding line says
    otherwise), placed at the first bad byte of its text read with that byte replaced."""
    data = bytes(exc.object)
    encoding = exc.encoding
    text = data.decode(encoding, "replace").removeprefix("\ufeff")
    line_start = data.rfind(b"\n", 0, exc.start) + 1
    line = data.count(b"\n", 0, exc.start) + 1
    column = len(data[line_start : exc.start].decode(encoding, "replace").removeprefix("\ufeff")) + 1
    byte = data[exc.start : exc.start + 1].hex()
    if encoding.replace("_", "-").lower() in ("utf-8", "utf8"):
        reason = f"not valid Python: byte 0x{byte} is not UTF-8, and no other encoding is declared"
        help = "save the file as UTF-8, or declare its encoding on line 1 or 2 (# -*- coding: latin-1 -*-, PEP 263)"
    else:
        reason = f"not valid Python: byte 0x{byte} is not valid {encoding}, the encoding its coding line declares"
        help = "save the file in the encoding its coding line declares, or correct that line (PEP 263)"
    return PythonSourceError(reason, path=path, source=text, span=_span_at(text, line, column), help=help)


# --------------------------------------------------------------------------------------------
# Parsing, newer Python syntax included

_NEWER_PYTHON = (
    f"read by Python {sys.version_info[0]}.{sys.version_info[1]}, which does not know this syntax of a newer "
    "Python: if the file is written for a newer Python, run templating under that version"
)


def _newer_python_hint(exc: SyntaxError) -> str | None:
    """The hint to run a newer Python, given only when `exc` comes from syntax a newer Python is known to
    accept: `_parse` marks such an error. An error that Python 3.12 would also report (an unclosed
    bracket, a Jinja-templated `.py` file, parentheses nested beyond the parser's limit) gets none."""
    return _NEWER_PYTHON if getattr(exc, "newer_python", False) else None


# Syntax of Python 3.14 that 3.11 to 3.13 refuse: a template string (PEP 750, `t"..."`), several exception types
# without parentheses (PEP 758, `except A, B:`).
_TSTRING = re.compile(r"(?<![\w.])(?:[tT][rR]?|[rR][tT])$")
_T_PREFIXES = {"t", "rt", "tr"}
_STATEMENT_START = {tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}


def _newer_than_312(exc: SyntaxError, text: str) -> bool:
    """Whether `exc`, raised by this Python on `text`, stands at syntax that Python 3.14 accepts."""
    lines = text.splitlines()
    if not exc.lineno or not 0 < exc.lineno <= len(lines):
        return False
    line = lines[exc.lineno - 1]
    if (exc.msg or "").startswith("multiple exception types must be parenthesized"):
        return " as " not in line
    at = (exc.offset or 1) - 1
    quote = next((k for k in range(max(at - 1, 0), min(at + 2, len(line))) if line[k] in "'\""), None)
    return quote is not None and _TSTRING.search(line[:quote]) is not None


def _as_312(text: str) -> str | None:
    """`text` with Python 3.14's syntax written as older Python's: each template string a plain string of the
    same size (`t"..."` as ` "..."`), each `except A, B:` as `except (A, B):`. None if there is none."""
    try:
        tokens = [tok for tok in tokenize.generate_tokens(io.StringIO(text).readline) if tok.type != tokenize.NL]
    except (tokenize.TokenError, SyntaxError):
        return None
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, int, str]] = []  # (line, start column, end column, new text)
    for i, tok in enumerate(tokens[:-1]):
        after = tokens[i + 1]
        if tok.type == tokenize.NAME and tok.string.lower() in _T_PREFIXES:
            if after.type == tokenize.STRING and after.start == tok.end:
                raw = "r" if "r" in tok.string.lower() else ""
                edits.append((tok.start[0], tok.start[1], tok.end[1], " " * (len(tok.string) - len(raw)) + raw))
        elif (
            tok.type == tokenize.NAME
            and tok.string == "except"
            and after.string not in (":", "*")
            and (i == 0 or tokens[i - 1].type in _STATEMENT_START)  # each statement scanned once: linear
        ):
            depth, comma, named = 0, False, False
            for close in tokens[i + 1 :]:
                if close.string in "([{":
                    depth += 1
                elif close.string in ")]}":
                    depth -= 1
                elif depth == 0 and close.string == ",":
                    comma = True
                elif depth == 0 and close.string == "as":
                    named = True
                elif (depth == 0 and close.string == ":") or close.type == tokenize.NEWLINE:
                    break
            if comma and not named and close.string == ":" and close.start[0] == after.start[0]:
                edits.append((close.start[0], close.start[1], close.start[1], ")"))
                edits.append((after.start[0], after.start[1], after.start[1], "("))
    if not edits:
        return None
    for row, begin, finish, new in sorted(edits, reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:begin] + new + line[finish:]
    return "".join(lines)


def _hint_or_real_error(error: SyntaxError, text: str, path: str) -> SyntaxError:
    """`error` marked with whether Python 3.14 accepts the file (its syntax at the error, and the file read once
    that syntax is written as 3.12's), or, when the file has another mistake besides, that mistake."""
    error.newer_python = False  # type: ignore[attr-defined]
    if not _newer_than_312(error, text):
        return error
    older = _as_312(text)
    if older is None:
        return error
    try:
        ast.parse(older, filename=path)
    except SyntaxError as exc:
        exc.newer_python = False  # type: ignore[attr-defined]
        return exc  # a mistake 3.14 refuses too (its column may be off by the parentheses added on its line)
    error.newer_python = True  # type: ignore[attr-defined]
    return error


def _parse(text: str, path: str) -> ast.Module:
    """`text` parsed by `ast`. Under Python 3.11, a file written with 3.12's syntax is parsed with those
    parts written over at the same positions (byte for byte, so every other position stays as
    written; nothing in them is an instruction or a state write): its f-strings that 3.11 does not
    read (a quote reused inside a replacement field, a backslash, a comment or a line end in one)
    and its type parameters (`type Alias = ...`, `def f[T](...)`, `class C[T]:`).

    A file still not read raises the `SyntaxError` Python 3.12 would (where it is, after those parts),
    its `newer_python` attribute saying whether a newer Python is known to accept the file (Python 3.14's
    syntax where the error is, and none of 3.12's errors once it is written as 3.12's)."""
    with warnings.catch_warnings():  # an invalid escape such as "\d" warns; it is still a string
        warnings.simplefilter("ignore")
        try:
            return ast.parse(text, filename=path)
        except SyntaxError as exc:
            error = exc
        if sys.version_info < (3, 12):  # 3.12's f-strings rewritten, then its type parameters blanked
            try:
                fstrings = _fstrings_for_311(text) or text
                candidate = _without_type_parameters(fstrings) or fstrings
            except _Unreadable:
                error.newer_python = True  # type: ignore[attr-defined]
                raise error from None
            if candidate != text:
                try:
                    return ast.parse(candidate, filename=path)
                except SyntaxError as exc:
                    error = exc  # the file's own error, where 3.12 finds it
            text = candidate  # positions are the file's
        try:
            raise _hint_or_real_error(error, text, path) from None
        finally:  # this frame, in the error's traceback, no longer holds the error: no cycle left for the collector
            del error


class _Unreadable(Exception):
    """3.12 syntax that Python 3.11 cannot be given at the same positions (a one-line f-string whose field
    spans an empty line)."""


def _fstrings_for_311(text: str) -> str | None:
    """`text` with each f-string that only Python 3.12 reads (its quote reused inside a replacement
    field, `f"{d["k"]}"`, `f"{f('a "b"')}"`; a backslash, a comment or a line end in one) written over
    by an f-string of the same size in UTF-8 (`f"      "`; a line end inside a one-line string continued
    by a backslash), so it stays an f-string and ast's columns (bytes) stay those of the file. None if
    there is none, or a string in it is not closed; `_Unreadable` when one cannot be written over."""
    pieces: list[str] = []
    done = 0  # text[:done] is in pieces
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if ch not in "'\"":
            i += 1
            continue
        _, prefix = _string_prefix(text, i)
        found = _string_end(text, i, "f" in prefix)
        if found is None:
            return None
        end, newer = found
        if newer:
            head = text[i : i + 3]
            quote = head if head in ('"""', "'''") else text[i]
            inner = text[i + len(quote) : end - len(quote)]
            body = [c if c in "\r\n" else " " * len(c.encode("utf-8")) for c in inner]
            if len(quote) == 1:  # a field over several lines (3.12): each line end continued by a backslash
                for k, c in enumerate(inner):
                    if c == "\n" and inner[k - 1 : k] == "\r":
                        continue
                    if c in "\r\n":
                        if not k or inner[k - 1] in "\r\n":
                            raise _Unreadable  # an empty line in the field: no place for the backslash
                        body[k - 1] = "\\" + body[k - 1][1:]
            pieces += [text[done:i], quote, "".join(body), quote]  # f"   " is still an f-string (ast.JoinedStr)
            done = end
        i = end
    return "".join([*pieces, text[done:]]) if pieces else None


def _string_prefix(text: str, quote_at: int) -> tuple[int, str]:
    """Where the string whose quote is at `quote_at` starts, and its prefix in lowercase (`rf`)."""
    k = quote_at
    while k > 0 and quote_at - k < 2 and text[k - 1] in "rRbBuUfF":
        k -= 1
    if k > 0 and (text[k - 1].isalnum() or text[k - 1] == "_"):
        return quote_at, ""
    return k, text[k:quote_at].lower()


def _string_end(text: str, i: int, is_f: bool) -> tuple[int, bool] | None:
    """(the index after the string opening at `i`, whether it is an f-string only 3.12 reads)."""
    quote = text[i : i + 3] if text[i : i + 3] in ('"""', "'''") else text[i]
    j, n, newer = i + len(quote), len(text), False
    while j < n:
        if text.startswith(quote, j):
            return j + len(quote), newer
        ch = text[j]
        if ch == "\\":
            j += 2
            continue
        if ch == "\n" and len(quote) == 1:
            return None
        if is_f and ch == "{":
            if text.startswith("{{", j):
                j += 2
                continue
            field = _field_end(text, j + 1, quote)
            if field is None:
                return None
            j, inner_newer = field
            newer = newer or inner_newer
            continue
        j += 1
    return None


def _field_end(text: str, j: int, quote: str) -> tuple[int, bool] | None:
    """(the index after the replacement field whose expression starts at `j`, whether it holds
    what only 3.12 reads: `quote` again, a backslash, a comment, a line end in a one-line string)."""
    depth, n, newer = 0, len(text), False
    while j < n:
        ch = text[j]
        if ch in "([{":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "}":
            if depth == 0:
                return j + 1, newer
            depth -= 1
        elif ch == ":" and depth == 0 and not text.startswith(":=", j):  # the format spec
            j += 1
            while j < n and text[j] != "}":
                if text[j] == "{":
                    inner = _field_end(text, j + 1, quote)
                    if inner is None:
                        return None
                    j, inner_newer = inner
                    newer = newer or inner_newer
                    continue
                if text.startswith(quote, j) or (text[j] == "\n" and len(quote) == 1):
                    return None
                j += 1
            continue
        elif ch in "'\"":
            _, prefix = _string_prefix(text, j)
            found = _string_end(text, j, "f" in prefix)
            if found is None:
                return None
            nested = text[j : found[0]]  # f"{d["k"]}", f"{f('a "b"')}", f"{'\n'.join(x)}": only 3.12 reads them
            newer = newer or found[1] or quote in nested or "\\" in nested
            j = found[0]
            continue
        elif ch in "\\#" or (ch == "\n" and len(quote) == 1):
            newer = True
            if ch == "#":
                end = text.find("\n", j)
                j = n if end < 0 else end
                continue
        j += 1
    return None


def _without_type_parameters(text: str) -> str | None:
    """`text` with PEP 695 syntax made valid for Python 3.11 at the same positions: the soft keyword
    of `type X = ...` becomes an annotation (`_:  X = ...`), the `[T]` of `type X[T]`, `def f[T]` or
    `class C[T]` becomes blanks of its size in UTF-8 (a backslash at each of its line ends). None if there
    is none; `_Unreadable` when it cannot be blanked in place."""
    tokens: list[tokenize.TokenInfo] = []
    try:  # the tokens up to an error (an unclosed bracket): the file's real error then shows as in 3.12
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type not in (tokenize.COMMENT, tokenize.NL):
                tokens.append(tok)
    except (tokenize.TokenError, SyntaxError):
        pass
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    chars = list(text)
    changed = False

    def at(pos: tuple[int, int]) -> int:
        return starts[pos[0] - 1] + pos[1]

    def blank(bracket: int) -> bool:
        """Blanks the `[...]` whose opening token is tokens[bracket] (its bytes kept, each line end continued)."""
        depth = 0
        for close in tokens[bracket:]:
            depth += {"[": 1, "(": 1, "{": 1, "]": -1, ")": -1, "}": -1}.get(close.string, 0)
            if depth == 0:
                break
        else:
            return False
        begin, end = at(tokens[bracket].start), at(close.end)
        part = text[begin:end]
        blanks = [ch if ch in "\r\n" else " " * len(ch.encode("utf-8")) for ch in part]
        for k, ch in enumerate(part):  # parameters across lines: each line end is continued
            if ch == "\n" and part[k - 1 : k] == "\r":
                continue
            if ch in "\r\n":
                if part[k - 1] in "\r\n":
                    raise _Unreadable  # an empty line among the parameters: no place for the backslash
                blanks[k - 1] = "\\" + blanks[k - 1][1:]
        chars[begin:end] = blanks
        return True

    new_statement = {tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    for i, tok in enumerate(tokens[:-2]):
        after, then = tokens[i + 1], tokens[i + 2]
        first = i == 0 or tokens[i - 1].type in new_statement or tokens[i - 1].string == ";"
        if (
            first
            and tok.type == tokenize.NAME
            and tok.string == "type"
            and after.type == tokenize.NAME
            and then.string in ("=", "[")
        ):
            chars[at(tok.start) : at(tok.end)] = "_:  "
            if then.string == "[" and not blank(i + 2):  # type Pair[T = int] (3.13's defaults): blanked
                return None
            changed = True
        elif tok.string in ("def", "class") and after.type == tokenize.NAME and then.string == "[":
            if not blank(i + 2):
                return None
            changed = True
    return "".join(chars) if changed else None


def python_text(data: bytes) -> str:
    """The text of a `.py` file's bytes, read as Python reads them: in the encoding its coding line
    declares (PEP 263; UTF-8 when none does), a leading byte order mark dropped.

    A coding line Python would refuse (an encoding it does not know, a codec that is not a text
    encoding such as rot13, one that contradicts a byte order mark) is passed over and the file read
    as UTF-8, so that an error, if any, says where the bytes fail. Raises `UnicodeDecodeError` when
    the bytes are not in the encoding."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding).removeprefix("\ufeff")
    except (SyntaxError, LookupError):  # LookupError: a codec that does not decode bytes to text
        return data.decode("utf-8").removeprefix("\ufeff")


def _read_python(path: str) -> str:
    with open(path, "rb") as handle:
        return python_text(handle.read())


_T = TypeVar("_T")

# The trees of the files parsed last, by path and text: an edit in the editor scans again the files it reaches and
# the modules they import, nearly all of them unchanged since the scan before (a tree is never changed once made).
# Bounded by their text (a tree takes about 15 times its text's size: some 8 MiB in all, its walk kept with it about
# a tenth more), small files only.
KEPT_TEXT = 1 << 19  # characters of source in all
KEPT_FILE = 1 << 16  # characters of one file: a larger one is parsed each time
_kept: OrderedDict[tuple[str, str], ast.Module] = OrderedDict()
_kept_size = 0
# each kept tree's walk (`kept_walk`), by the tree's id, with the tree: a tree no longer kept is not the one its id
# names (the id of a tree freed is reused)
_walks: dict[int, tuple[ast.Module, object]] = {}
_kept_ids: set[int] = set()  # the ids of the trees `_kept` holds
_kept_lock = _thread.allocate_lock()
_keeping: ContextVar[bool] = ContextVar("templating_keeping_trees", default=True)


@contextlib.contextmanager
def trees_not_kept() -> Iterator[None]:
    """Within it (in this thread or task), `parsed` keeps no new tree: a whole cold run parses each file once, so
    keeping the last ones would only hold memory (those kept before are still given)."""
    token = _keeping.set(False)
    try:
        yield
    finally:
        _keeping.reset(token)


def parsed(text: str, path: str) -> ast.Module:
    """`_parse(text, path)`, the same tree again for the same path and text while it is among the last kept."""
    global _kept_size
    key = (path, text)
    with _kept_lock:
        tree = _kept.get(key)
        if tree is not None:
            _kept.move_to_end(key)
            return tree
    tree = _parse(text, path)
    if len(text) <= KEPT_FILE and _keeping.get():
        with _kept_lock:
            if key not in _kept:
                _kept[key] = tree
                _kept_ids.add(id(tree))
                _kept_size += len(text)
                while _kept_size > KEPT_TEXT:
                    (_, old), gone = _kept.popitem(last=False)
                    _kept_size -= len(old)
                    _walks.pop(id(gone), None)
                    _kept_ids.discard(id(gone))
    return tree


def kept_walk(tree: ast.Module, walk: Callable[[ast.Module], _T]) -> _T:
    """`walk(tree)`, made once for a tree `parsed` keeps (the next scan of the same text walks the same tree)."""
    with _kept_lock:
        known = _walks.get(id(tree))
    if known is not None and known[0] is tree:
        return known[1]  # type: ignore[return-value]
    made = walk(tree)
    with _kept_lock:
        if id(tree) in _kept_ids:
            _walks[id(tree)] = (tree, made)
    return made
