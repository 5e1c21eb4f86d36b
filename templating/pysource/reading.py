"""Reading a `.py` file as Python does: its bytes decoded as its coding line declares, its text parsed by
`ast` (under Python 3.11, files written with 3.12's type parameters and f-strings too, every position kept),
and each failure a [`PythonSourceError`][templating.pysource.PythonSourceError] placed in the file."""

from __future__ import annotations

import ast
import io
import sys
import tokenize
import warnings

from ..errors import TemplatingError
from ..nodes import Span
from ..places import line_starts


class PythonSourceError(TemplatingError):
    """A `.py` file to lint that is not valid Python (nothing of it can be checked).

    `path` names the file; `source` and `span` place the error in it (its first character when
    Python gives no position).
    """

    def __init__(self, reason: str, *, path: str, source: str, span: Span, help: str | None = None) -> None:
        super().__init__(f"{path}:{span.line}:{span.column}: {reason}", source=source, span=span, help=help)
        self.path = path
        self.reason = reason


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
    None
    if sys.version_info >= (3, 12)
    else f"read by Python {sys.version_info[0]}.{sys.version_info[1]}: if the file is written for a newer "
    "Python, run templating under that version"
)


# Errors that no newer Python accepts either (an unclosed bracket or string, a null byte, bad
# indentation): for them, the hint to run a newer Python would mislead.
_NOT_A_VERSION_ERROR = (
    "was never closed",
    "unterminated",
    "unmatched",
    "does not match opening parenthesis",
    "null bytes",
    "unexpected eof",
    "unexpected indent",
    "expected an indented block",
    "unindent does not match",
    "inconsistent use of tabs",
)


def _newer_python_hint(exc: SyntaxError) -> str | None:
    """The hint to run a newer Python, when `exc` may come from syntax newer than this Python's."""
    if _NEWER_PYTHON is None or isinstance(exc, IndentationError):
        return None
    message = (exc.msg or "").lower()
    return None if any(part in message for part in _NOT_A_VERSION_ERROR) else _NEWER_PYTHON


def _parse(text: str, path: str) -> ast.Module:
    """`text` parsed by `ast`. Under Python 3.11, a file that uses 3.12's type parameter syntax
    (`type Alias = ...`, `def f[T](...)`, `class C[T]:`) is parsed with those parts written
    over by blanks of the same size, so every other position stays as written (nothing in them is
    an instruction or a state write)."""
    with warnings.catch_warnings():  # an invalid escape such as "\d" warns; it is still a string
        warnings.simplefilter("ignore")
        try:
            return ast.parse(text, filename=path)
        except SyntaxError as exc:
            if sys.version_info >= (3, 12):
                raise
            error = exc
        # Python 3.11: try with 3.12's type parameters blanked, then also its f-strings rewritten.
        blanked = _without_type_parameters(text)
        rewritten = _fstrings_for_311(text)
        tries = [blanked, _without_type_parameters(rewritten) or rewritten if rewritten else None]
        for candidate in tries:
            if candidate is None:
                continue
            try:
                return ast.parse(candidate, filename=path)
            except SyntaxError as exc:
                error = error if candidate is not blanked else exc  # a real error shows where 3.12 shows it
        raise error


def _fstrings_for_311(text: str) -> str | None:
    """`text` with each f-string that only Python 3.12 reads (its quote reused inside a replacement
    field, `f"{d["k"]}"`; a backslash or a comment in one) written over by an f-string of the same
    size in UTF-8 (`f"      "`), so it stays an f-string and ast's columns (bytes) stay those of
    the file. None if there is none, or a string in it is not closed."""
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
            if len(quote) == 1 and "\n" in inner:
                return None
            body = "".join(c if c == "\n" else " " * len(c.encode("utf-8")) for c in inner)
            pieces += [text[done:i], quote, body, quote]  # f"   " is still an f-string (ast.JoinedStr)
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
            newer = newer or text.startswith(quote, j)
            _, prefix = _string_prefix(text, j)
            found = _string_end(text, j, "f" in prefix)
            if found is None:
                return None
            newer = newer or found[1] or "\\" in text[j : found[0]]  # f"{'\n'.join(x)}"
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
    of `type X = ...` becomes an annotation (`_:  X = ...`), the `[T]` of `def f[T]` or
    `class C[T]` becomes blanks (a backslash at each of its line ends). None if there is none."""
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
            changed = True
        elif tok.string in ("def", "class") and after.type == tokenize.NAME and then.string == "[":
            depth = 0
            for close in tokens[i + 2 :]:
                depth += {"[": 1, "(": 1, "{": 1, "]": -1, ")": -1, "}": -1}.get(close.string, 0)
                if depth == 0:
                    break
            else:
                return None
            begin, end = at(then.start), at(close.end)
            if not text[begin:end].isascii():
                return None  # blanks must take the bytes of what they replace
            blank = [ch if ch in "\r\n" else " " for ch in text[begin:end]]
            for k, ch in enumerate(blank):  # parameters across lines: each line end is continued
                if ch == "\n":
                    blank[k - 2 if blank[k - 1] == "\r" else k - 1] = "\\"
            chars[begin:end] = blank
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
