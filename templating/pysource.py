"""Instructions where they live: the instruction strings inside Python agent code, found with ``ast``.

A ``.py`` file is parsed, never imported or run. Each instruction string (the template given to
``templating.instruction``/``Template``/``parse``/``render``/``jinja``, an ``Agent``'s
``instruction=``/``global_instruction=``, a Google ADK ``Agent``/``LlmAgent``'s in ADK's ``{key}``
dialect, and module constants named ``*PROMPT``/``*INSTRUCTION`` that hold a placeholder and are
not Python format strings) is
resolved from literals, implicit concatenation, ``+``, ``textwrap.dedent``, ``.strip()`` and
module-level names (in the same module or imported from another one), and every character of it
keeps the place in the ``.py`` file it was written at, so findings point into the Python source.
A call without arguments of a project function that ends in its one ``return`` of such a value
(``instruction=return_instructions_root()``) stands for what it returns. Anything else (an
f-string, another call, a parameter) is skipped, with the reason. The module also
collects the state keys the code writes (``output_key``, ``ctx.state["k"] = ...``, ``state_delta``,
``create_session(state=...)``, a workflow node's ``Event(state=...)``), for the rule that a key read is
written somewhere (T014).
"""

from __future__ import annotations

import ast
import bisect
import io
import os
import stat
import sys
import textwrap
import tokenize
import unicodedata
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal as _Literal
from typing import TypeAlias

from .errors import TemplatingError
from .lint import CONSTANT_SUFFIXES
from .lint.adk_schema import ModelReader, StateSchema
from .nodes import Span
from .template import parse

__all__ = [
    "JINJA_SYNTAX",
    "PYTHON_SYNTAX",
    "Instruction",
    "PythonSourceError",
    "Scan",
    "Skipped",
    "Write",
    "lint_instruction",
    "never_written",
    "python_text",
    "scan",
    "skipped_findings",
]

Kind: TypeAlias = _Literal["angle", "adk", "jinja"]


class PythonSourceError(TemplatingError):
    """A ``.py`` file to lint that is not valid Python (nothing of it can be checked).

    ``path`` names the file; ``source`` and ``span`` place the error in it (its first character when
    Python gives no position).
    """

    def __init__(self, reason: str, *, path: str, source: str, span: Span, help: str | None = None) -> None:
        super().__init__(f"{path}:{span.line}:{span.column}: {reason}", source=source, span=span, help=help)
        self.path = path
        self.reason = reason


def _line_starts(text: str) -> list[int]:
    """The offset each line of ``text`` starts at; lines end at "\n" only, as spans count them."""
    starts = [0]
    find = text.find
    at = find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = find("\n", at + 1)
    return starts


def _span_at(text: str, line: int | None, column: int | None) -> Span:
    """The one-character span at 1-based ``line``/``column`` of ``text`` (clamped into it)."""
    starts = _line_starts(text)
    line = min(max(line or 1, 1), len(starts))
    begin = starts[line - 1]
    row = text[begin : starts[line] - 1 if line < len(starts) else len(text)].rstrip("\r")
    column = min(max(column or 1, 1), len(row) + 1)
    start = begin + column - 1
    return Span(start, min(start + 1, begin + len(row)), line, column)


def _undecodable(path: str, exc: UnicodeDecodeError) -> PythonSourceError:
    """The error for a ``.py`` file whose bytes are not in its encoding (UTF-8 unless a coding line says
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
    """The hint to run a newer Python, when ``exc`` may come from syntax newer than this Python's."""
    if _NEWER_PYTHON is None or isinstance(exc, IndentationError):
        return None
    message = (exc.msg or "").lower()
    return None if any(part in message for part in _NOT_A_VERSION_ERROR) else _NEWER_PYTHON


def _parse(text: str, path: str) -> ast.Module:
    """``text`` parsed by ``ast``. Under Python 3.11, a file that uses 3.12's type parameter syntax
    (``type Alias = ...``, ``def f[T](...)``, ``class C[T]:``) is parsed with those parts written
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
    """``text`` with each f-string that only Python 3.12 reads (its quote reused inside a replacement
    field, ``f"{d["k"]}"``; a backslash or a comment in one) written over by an f-string of the same
    size in UTF-8 (``f"      "``), so it stays an f-string and ast's columns (bytes) stay those of
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
    """Where the string whose quote is at ``quote_at`` starts, and its prefix in lowercase (``rf``)."""
    k = quote_at
    while k > 0 and quote_at - k < 2 and text[k - 1] in "rRbBuUfF":
        k -= 1
    if k > 0 and (text[k - 1].isalnum() or text[k - 1] == "_"):
        return quote_at, ""
    return k, text[k:quote_at].lower()


def _string_end(text: str, i: int, is_f: bool) -> tuple[int, bool] | None:
    """(the index after the string opening at ``i``, whether it is an f-string only 3.12 reads)."""
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
    """(the index after the replacement field whose expression starts at ``j``, whether it holds
    what only 3.12 reads: ``quote`` again, a backslash, a comment, a line end in a one-line string)."""
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
    """``text`` with PEP 695 syntax made valid for Python 3.11 at the same positions: the soft keyword
    of ``type X = ...`` becomes an annotation (``_:  X = ...``), the ``[T]`` of ``def f[T]`` or
    ``class C[T]`` becomes blanks (a backslash at each of its line ends). None if there is none."""
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


# --------------------------------------------------------------------------------------------
# Modules and positions


class _Module:
    """One parsed ``.py`` file: its text, its tree, and its module-level names."""

    __slots__ = ("_line_starts", "_lines", "bindings", "key", "linted", "path", "text", "tree")

    def __init__(self, path: str, key: str, text: str, tree: ast.Module, *, linted: bool) -> None:
        self.path, self.key, self.text, self.tree, self.linted = path, key, text, tree, linted
        self._lines: list[str] | None = None
        self._line_starts: list[int] | None = None
        self.bindings: dict[str, ast.AST] = {}
        for stmt in _top_level(tree.body):
            for name, value in _bound(stmt):
                self.bindings[name] = value

    @property
    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            self._line_starts = _line_starts(self.text)
        return self._line_starts

    def offset(self, lineno: int, col: int) -> int:
        """The character offset of ``ast``'s (1-based line, UTF-8 byte column) position."""
        start = self.line_starts[lineno - 1]
        if self._lines is None:
            self._lines = self.text.split("\n")
        line = self._lines[lineno - 1]
        if not line.isascii():
            col = len(line.encode("utf-8")[:col].decode("utf-8", "replace"))
        return start + col

    def span(self, start: int, end: int) -> Span:
        line = bisect.bisect_right(self.line_starts, start)
        return Span(start, end, line, start - self.line_starts[line - 1] + 1)

    def node_span(self, node: ast.AST) -> Span:
        if not hasattr(node, "lineno"):  # a name made up here (an unused constant): its binding's place
            binding = self.bindings.get(getattr(node, "id", ""))
            node = binding if binding is not None and hasattr(binding, "lineno") else self.tree
            if node is self.tree:
                return self.span(0, 0)
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return self.span(start, end)


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Module-level statements, those inside module-level ``if``/``try``/``with`` blocks included."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If | ast.With):
            yield from _top_level(stmt.body)
            if isinstance(stmt, ast.If):
                yield from _top_level(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            for block in (stmt.body, stmt.orelse, stmt.finalbody, *(h.body for h in stmt.handlers)):
                yield from _top_level(block)


@dataclass(frozen=True, slots=True)
class _Dynamic:
    """A binding whose value is known only at run time (a function, a class, ``x += ...``)."""

    what: str


def _bound(stmt: ast.stmt) -> Iterator[tuple[str, ast.AST]]:
    """The names a statement binds, each with what it binds them to (an expression, an import, a marker)."""
    if isinstance(stmt, ast.Assign):
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                yield target.id, stmt.value
            elif isinstance(target, ast.Tuple | ast.List):
                for item in target.elts:
                    if isinstance(item, ast.Name):
                        yield item.id, ast.Name("<unpacked>")
    elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        yield stmt.target.id, stmt.value
    elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        yield stmt.target.id, ast.Name("<augmented>")
    elif isinstance(stmt, ast.Import | ast.ImportFrom):
        for alias in stmt.names:
            if alias.name != "*":
                yield (alias.asname or alias.name.split(".")[0]), stmt
    elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield stmt.name, stmt


# --------------------------------------------------------------------------------------------
# Strings with the place of each character


class _Mapped:
    """A string whose every character knows where it was written: module, start and end offsets."""

    __slots__ = ("ends", "mods", "starts", "text")

    def __init__(self, text: str, mods: list[_Module], starts: list[int], ends: list[int]) -> None:
        self.text, self.mods, self.starts, self.ends = text, mods, starts, ends

    def __add__(self, other: _Mapped) -> _Mapped:
        return _Mapped(
            self.text + other.text, self.mods + other.mods, self.starts + other.starts, self.ends + other.ends
        )

    def pick(self, keep: Sequence[int], text: str) -> _Mapped:
        return _Mapped(text, [self.mods[i] for i in keep], [self.starts[i] for i in keep], [self.ends[i] for i in keep])

    @staticmethod
    def join(parts: Sequence[_Mapped]) -> _Mapped:
        return _Mapped(
            "".join(p.text for p in parts),
            [m for p in parts for m in p.mods],
            [i for p in parts for i in p.starts],
            [i for p in parts for i in p.ends],
        )

    def slice(self, start: int, end: int) -> _Mapped:
        return _Mapped(self.text[start:end], self.mods[start:end], self.starts[start:end], self.ends[start:end])


_SIMPLE_ESCAPES = {
    "\\": "\\",
    "'": "'",
    '"': '"',
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
}
_OCTAL = "01234567"
_HEX_WIDTH = {"x": 2, "u": 4, "U": 8}


def _literal(module: _Module, node: ast.Constant) -> _Mapped:
    """A string constant (implicit concatenation included) with each character's place in the file.

    Reads the literals' source: prefixes, quotes, escapes (``\\n`` is two characters of source),
    line continuations, ``\\r\\n`` line ends. Should the reading ever disagree with Python's
    value, every character is placed on the whole literal instead (never a wrong column)."""
    value = node.value
    assert isinstance(value, str)
    text = module.text
    start = module.offset(node.lineno, node.col_offset)
    end = module.offset(node.end_lineno or node.lineno, node.end_col_offset or 0)
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    try:
        _read_literals(text, start, end, chars, starts, ends)
    except (IndexError, ValueError, KeyError):
        chars = []
    if "".join(chars) != value:
        return _Mapped(value, [module] * len(value), [start] * len(value), [end] * len(value))
    return _Mapped(value, [module] * len(value), starts, ends)


def _read_literals(
    text: str,
    i: int,
    end: int,
    chars: list[str],
    starts: list[int],
    ends: list[int],
    fields: list[int] | None = None,
) -> None:
    """Read the string literals between ``i`` and ``end``, each character with its place. With ``fields``,
    f-strings are read too: ``{{``/``}}`` are one brace, and each replacement field is skipped, the
    number of characters read before it appended to ``fields``."""
    emit_c, emit_s, emit_e = chars.append, starts.append, ends.append
    while i < end:
        ch = text[i]
        if ch in " \t\r\n\f":
            i += 1
            continue
        if ch == "#":  # a comment between the parts of an implicit concatenation
            i = text.index("\n", i)
            continue
        if ch == "\\":  # a line continuation between parts
            i += 1
            continue
        j = i
        while text[j].isalpha():
            j += 1
        prefix = text[i:j].lower()
        is_f = "f" in prefix and fields is not None
        if "b" in prefix or "t" in prefix or ("f" in prefix and not is_f):
            raise ValueError("not a str literal")
        raw = "r" in prefix
        quote = text[j : j + 3] if text[j : j + 3] in ('"""', "'''") else text[j]
        if quote not in ('"', "'", '"""', "'''"):
            raise ValueError("no quote")
        j += len(quote)
        while not text.startswith(quote, j):
            c = text[j]
            if is_f and c in "{}" and fields is not None:
                if text.startswith(c + c, j):  # {{ or }}: one brace of text
                    emit_c(c), emit_s(j), emit_e(j + 2)
                    j += 2
                    continue
                field = _field_end(text, j + 1, quote) if c == "{" else None
                if field is None:
                    raise ValueError("a lone } or an unclosed field")
                fields.append(len(chars))
                j = field[0]
                continue
            if c == "\\":
                nxt = text[j + 1]
                if raw:  # the backslash stays, and so does what follows it
                    emit_c("\\"), emit_s(j), emit_e(j + 1)
                    j += 1
                    if nxt == "\r" and text[j + 1] == "\n":
                        emit_c("\n"), emit_s(j), emit_e(j + 2)
                        j += 2
                    else:
                        emit_c("\n" if nxt == "\r" else nxt), emit_s(j), emit_e(j + 1)
                        j += 1
                    continue
                if nxt == "\n":
                    j += 2
                elif nxt == "\r":
                    j += 3 if text[j + 2] == "\n" else 2
                elif nxt in _SIMPLE_ESCAPES:
                    emit_c(_SIMPLE_ESCAPES[nxt]), emit_s(j), emit_e(j + 2)
                    j += 2
                elif nxt in _OCTAL:
                    k = j + 1
                    while k < j + 4 and text[k] in _OCTAL:
                        k += 1
                    emit_c(chr(int(text[j + 1 : k], 8))), emit_s(j), emit_e(k)
                    j = k
                elif nxt in _HEX_WIDTH:
                    k = j + 2 + _HEX_WIDTH[nxt]
                    emit_c(chr(int(text[j + 2 : k], 16))), emit_s(j), emit_e(k)
                    j = k
                elif nxt == "N":
                    close = text.index("}", j)
                    emit_c(unicodedata.lookup(text[j + 3 : close])), emit_s(j), emit_e(close + 1)
                    j = close + 1
                else:  # an unknown escape such as \d keeps its backslash
                    emit_c("\\"), emit_s(j), emit_e(j + 1)
                    j += 1
            elif c == "\r":
                size = 2 if text[j + 1] == "\n" else 1
                emit_c("\n"), emit_s(j), emit_e(j + size)
                j += size
            else:
                emit_c(c), emit_s(j), emit_e(j + 1)
                j += 1
        i = j + len(quote)


def _dedent(value: _Mapped) -> _Mapped:
    """``textwrap.dedent`` that keeps each character's place: whitespace-only lines are emptied, then
    the margin common to the other lines is removed."""
    text = value.text
    expected = textwrap.dedent(text)
    lines: list[tuple[int, int]] = []  # (start, end) of each line, without its "\n"
    at = 0
    for line in text.split("\n"):
        lines.append((at, at + len(line)))
        at += len(line) + 1
    blank = [not text[a:b].strip(" \t") and a < b for a, b in lines]
    indents = []
    for (a, b), is_blank in zip(lines, blank, strict=True):
        line = text[a:b]
        if is_blank or not line.lstrip(" \t"):
            continue
        indents.append(line[: len(line) - len(line.lstrip(" \t"))])
    margin = indents[0] if indents else ""
    for indent in indents[1:]:
        while not indent.startswith(margin):
            margin = margin[:-1]
    keep: list[int] = []
    for (a, b), is_blank in zip(lines, blank, strict=True):
        if not is_blank:
            skip = len(margin) if margin and text.startswith(margin, a) else 0
            keep.extend(range(a + skip, b))
        if b < len(text):
            keep.append(b)  # the "\n"
    result = "".join(text[i] for i in keep)
    if result != expected:  # cannot happen; if it did, keep the text right and the places approximate
        return _align(value, expected)
    return value.pick(keep, result)


def _align(value: _Mapped, result: str) -> _Mapped:
    """``result`` (a subsequence of ``value``'s text) placed by greedy matching."""
    keep: list[int] = []
    i = 0
    for ch in result:
        while i < len(value.text) - 1 and value.text[i] != ch:
            i += 1
        keep.append(min(i, len(value.text) - 1))
        i += 1
    return value.pick(keep, result) if value.text else value


# --------------------------------------------------------------------------------------------
# What was found


@dataclass(frozen=True, slots=True)
class Instruction:
    """One instruction string found in Python code.

    ``label`` names it in findings (the constant ``ROOT_PROMPT``, or the call site
    ``LlmAgent(name="planner").instruction``); ``names`` are what ``templating render FILE.py:NAME``
    accepts for it; ``dialect`` is ``"angle"``, ``"adk"`` or ``"jinja"``; ``text`` the string's
    value; ``path``/``span`` where it starts. :meth:`locate` maps a span of ``text`` into the file.
    ``state_schemas``: the ``state_schema=`` models of the ADK agents given it, read from the code.
    """

    label: str
    names: tuple[str, ...]
    dialect: Kind
    text: str
    path: str
    span: Span
    _mapped: _Mapped = field(repr=False, compare=False)
    # the state_schema= of each google-adk agent given this instruction (see templating.adk_schema)
    state_schemas: tuple[StateSchema, ...] = ()

    def locate(self, start: int, end: int) -> tuple[str, Span]:
        """The file and the span in it of ``text[start:end]`` (clipped to the file of its first character)."""
        m = self._mapped
        if not m.text:
            return self.path, self.span
        start = min(max(start, 0), len(m.text) - 1)
        last = min(max(end - 1, start), len(m.text) - 1)
        module = m.mods[start]
        while last > start and m.mods[last] is not module:
            last -= 1
        file_start, file_end = m.starts[start], max(m.ends[last], m.starts[start] + 1)
        return module.path, module.span(file_start, file_end)

    def file_text(self, path: str) -> str | None:
        """The text of the ``.py`` file ``path`` that part of this instruction was written in (as read)."""
        for module in self._mapped.mods:
            if module.path == path:
                return module.text
        return None


@dataclass(frozen=True, slots=True)
class Skipped:
    """An instruction whose text is not known without running the code (``reason`` says why)."""

    label: str
    path: str
    span: Span
    reason: str


@dataclass(frozen=True, slots=True)
class Write:
    """A state key the code writes (``key``), or a write whose key is not a literal (``key`` is None)."""

    key: str | None
    path: str
    span: Span
    how: str


@dataclass(slots=True)
class Scan:
    """What :func:`scan` found: the instructions, the skipped ones, the state writes, and the text of
    every Python file read (imported modules outside the given files included)."""

    instructions: list[Instruction] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    errors: list[PythonSourceError] = field(default_factory=list)
    # every google-adk agent's state_schema= met, readable or not (the unreadable ones say why)
    state_schemas: list[StateSchema] = field(default_factory=list)

    @property
    def written(self) -> frozenset[str] | None:
        """The keys written, or None when some write's key is known only at run time, or a file to
        scan was not valid Python (what it writes is unknown)."""
        if self.errors or any(w.key is None for w in self.writes):
            return None
        return frozenset(w.key for w in self.writes if w.key is not None)


# --------------------------------------------------------------------------------------------
# The scan


# The largest text file an instruction is read from (load_instruction_from_file("writer.txt")).
_MAX_TEXT_BYTES = 1_000_000
# How far a chain of names, imports or nested expressions is followed (input cannot reach the recursion limit).
_MAX_HOPS = 40
_TEMPLATING_SOURCES = {"instruction", "Template", "parse", "render", "jinja"}
_AGENT_KWARGS = ("instruction", "global_instruction")
_ADK_AGENTS = {"Agent", "LlmAgent"}
_PROVIDER_CALLS = {"instruction", "Template", "parse", "jinja", "concat", "when", "static"}
# google-adk's State class names its scope prefixes: State.USER_PREFIX + "name" is "user:name".
_STATE_PREFIXES = {"APP_PREFIX": "app:", "USER_PREFIX": "user:", "TEMP_PREFIX": "temp:"}
# The calls whose state= starts a session with those keys (a service's, or a Session made in a test).
_SESSION_MAKERS = {"create_session", "Session"}
# The events whose state= writes those keys: a google-adk 2.x workflow node's `yield Event(state={...})`.
_STATE_EVENTS = {"Event"}
# Constants that Python code fills in itself hold its fields, not state keys: they are no instructions.
# The methods that fill in a str (PROMPT.format(...), PROMPT.replace("{x}", ...)), and the template
# engines that take one (LangChain, Jinja2, string.Template), called by their last name.
_FILLED_BY_METHOD = {"format", "format_map", "replace"}
_TEMPLATE_ENGINES = {"from_template", "PromptTemplate", "ChatPromptTemplate", "Template", "from_string"}


class _Project:
    """The modules of a scan, parsed once each, and name resolution across them."""

    def __init__(self, read: Callable[[str], str], suffixes: Sequence[str], root: str | None = None) -> None:
        self.read = read
        self.root = os.path.realpath(root if root is not None else os.getcwd())
        self.suffixes = tuple(s.upper() for s in suffixes)
        self.modules: dict[str, _Module] = {}
        self.result = Scan()
        self.found: dict[tuple[object, ...], int] = {}  # instruction key -> index in result.instructions
        self.used_constants: set[tuple[str, str]] = set()
        self.unreadable: set[str] = set()
        # function -> its parameters that some caller gives a context's state (save(ctx.state, ...))
        self.given_state: dict[ast.AST, set[str]] = {}
        # constants used as str.format / % templates (PROMPT.format(text=...)): Python's {}, not state keys
        self.formatted: set[tuple[str, str]] = set()
        self.returning: set[ast.AST] = set()  # functions whose return is being resolved (recursion)
        self.models = ModelReader(self.class_named)

    # -- loading

    def load(self, path: str, *, linted: bool) -> _Module:
        key = os.path.realpath(path)
        module = self.modules.get(key)
        if module is not None:
            module.linted = module.linted or linted
            return module
        try:
            text = self.read(path)
        except UnicodeDecodeError as exc:  # Python itself refuses such a file (a SyntaxError)
            raise _undecodable(path, exc) from None
        try:
            tree = _parse(text, path)
        except SyntaxError as exc:
            span = _span_at(text, exc.lineno, exc.offset)
            raise PythonSourceError(
                f"not valid Python: {exc.msg}", path=path, source=text, span=span, help=_newer_python_hint(exc)
            ) from None
        except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting
            span = _span_at(text, None, None)
            raise PythonSourceError(f"cannot be parsed as Python: {exc}", path=path, source=text, span=span) from None
        module = _Module(path, key, text, tree, linted=linted)
        self.modules[key] = module
        self.result.sources[path] = text
        return module

    def find_module(self, importer: _Module, name: str, level: int) -> _Module | None:
        """The module ``name`` imported from ``importer`` (``level`` dots), if it is a file we can read."""
        parts = [p for p in name.split(".") if p]
        if level:
            base = Path(importer.path).parent
            for _ in range(level - 1):
                base = base.parent
            bases = [base]
        else:
            bases = list(Path(importer.path).resolve().parents)[:12]
        for base in bases:
            target = base.joinpath(*parts)
            for candidate in (target.with_suffix(".py") if parts else None, target / "__init__.py"):
                if candidate is None:
                    continue
                shown = str(candidate) if level else _shown(candidate)
                key = os.path.realpath(shown)
                if key in self.modules:
                    return self.modules[key]
                if key in self.unreadable:
                    continue
                try:
                    return self.load(shown, linted=False)
                except Exception:  # a module that cannot be read or parsed is not followed
                    self.unreadable.add(key)
        return None

    # -- qualified names of callees

    def qualify(self, module: _Module, expr: ast.expr) -> str | None:
        """The dotted origin of a name as imported (``google.adk.agents.LlmAgent``), or None."""
        parts: list[str] = []
        while isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name):
            return None
        binding = module.bindings.get(expr.id)
        if isinstance(binding, ast.ImportFrom):
            alias = next(a for a in binding.names if (a.asname or a.name.split(".")[0]) == expr.id)
            base = "." * binding.level + (binding.module or "") + "." + alias.name
        elif isinstance(binding, ast.Import):
            alias = next(a for a in binding.names if (a.asname or a.name.split(".")[0]) == expr.id)
            base = alias.name if alias.asname else alias.name.split(".")[0]
        else:
            return None
        return ".".join([base, *reversed(parts)])

    # -- resolving expressions to strings

    def resolve(self, module: _Module, expr: ast.AST, scope: _Scope | None, depth: int = 0) -> _Mapped | str:
        """The string ``expr`` stands for, with places, or why it cannot be known (a str)."""
        if depth > _MAX_HOPS:
            return "a chain of names too long to follow"
        if isinstance(expr, ast.Constant):
            if isinstance(expr.value, str):
                return _literal(module, expr)
            return f"not a string ({type(expr.value).__name__})"
        if isinstance(expr, ast.JoinedStr):
            return self.fstring(module, expr, scope, depth)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            parts: list[_Mapped] = []
            for operand in _added(expr):  # a + b + c + ...: one level, however long
                value = self.resolve(module, operand, scope, depth + 1)
                if isinstance(value, str):
                    return value
                parts.append(value)
            return _Mapped.join(parts)
        if isinstance(expr, ast.Call):
            return self.resolve_call(module, expr, scope, depth)
        if isinstance(expr, ast.Name):
            return self.resolve_name(module, expr.id, scope, depth)
        if isinstance(expr, ast.Attribute):
            target = self.module_named(module, _chain(expr.value), scope)
            if target is not None:
                return self.resolve_name(target, expr.attr, None, depth + 1)
        return f"{_describe(expr)}: its text is known only at run time"

    def fstring(self, module: _Module, expr: ast.JoinedStr, scope: _Scope | None, depth: int) -> _Mapped | str:
        """An f-string whose every field is a name of a string known here (a module constant) or a literal:
        its text, each character placed where it is written (a field's text where the constant is)."""
        values: list[_Mapped] = []
        for part in expr.values:
            if not isinstance(part, ast.FormattedValue):
                continue
            shown = _short(part.value)
            if part.conversion != -1 or part.format_spec is not None:
                return f"an f-string with a conversion or format spec in {{{shown}}}: known only at run time"
            field = self.resolve(module, part.value, scope, depth + 1)
            if isinstance(field, str):
                return f"an f-string whose field {{{shown}}} is known only at run time ({field})"
            values.append(field)
        unread = "an f-string that could not be read where it is written: its text is known only at run time"
        start = module.offset(expr.lineno, expr.col_offset)
        end = module.offset(expr.end_lineno or expr.lineno, expr.end_col_offset or 0)
        chars: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        fields: list[int] = []
        try:
            _read_literals(module.text, start, end, chars, starts, ends, fields)
        except (IndexError, ValueError, KeyError):
            return unread
        if len(fields) != len(values):
            return unread
        pieces: list[_Mapped] = []
        at = 0
        for cut, inserted in zip([*fields, len(chars)], [*values, None], strict=True):
            pieces.append(_Mapped("".join(chars[at:cut]), [module] * (cut - at), starts[at:cut], ends[at:cut]))
            if inserted is not None:
                pieces.append(inserted)
            at = cut
        result = _Mapped.join(pieces)
        known = iter(values)
        python = "".join(str(p.value) if isinstance(p, ast.Constant) else next(known).text for p in expr.values)
        if result.text != python:  # the source read otherwise than Python did: never a wrong place
            return unread
        return result

    def resolve_call(self, module: _Module, call: ast.Call, scope: _Scope | None, depth: int) -> _Mapped | str:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in ("strip", "lstrip", "rstrip") and not call.args:
            inner = self.resolve(module, func.value, scope, depth + 1)
            if isinstance(inner, str):
                return inner
            text = inner.text
            stripped = getattr(text, func.attr)()
            first = 0 if func.attr == "rstrip" else len(text) - len(text.lstrip())
            return inner.slice(first, first + len(stripped))
        if self.qualify(module, func) in ("textwrap.dedent", ".textwrap.dedent") and len(call.args) == 1:
            inner = self.resolve(module, call.args[0], scope, depth + 1)
            return inner if isinstance(inner, str) else _dedent(inner)
        called = self.function_called(module, func, scope)
        if called is not None:
            if call.args or call.keywords:
                read = self.file_read(module, call, *called, scope, depth)
                if read is not None:
                    return read
                return f"{called[1].name}() is called with arguments: its text is known only when it runs"
            return self.resolve_return(*called, depth)
        return f"{_describe(call)}: its text is known only at run time"

    def file_read(
        self,
        module: _Module,
        call: ast.Call,
        where: _Module,
        func: ast.FunctionDef | ast.AsyncFunctionDef,
        scope: _Scope | None,
        depth: int,
    ) -> _Mapped | str | None:
        """What ``load_instruction_from_file("writer.txt")`` returns when the function reads the file its
        argument names next to its own module (``open(os.path.join(os.path.dirname(__file__), name))``,
        ``(Path(__file__).parent / name).read_text()``): that file's text, each character at its place
        there. None when the function is no such reader; a reason (a str) when the file cannot be read."""
        params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
        if isinstance(func, ast.AsyncFunctionDef) or not params or len(call.args) > 1:
            return None
        given = call.args[0] if call.args else _keyword(call, params[0])
        if given is None or len(call.args) + len(call.keywords) != 1:
            return None
        segments = _file_read_by(func, params[0])
        if segments is None:
            return None
        name = self.resolve(module, given, scope, depth + 1)
        if isinstance(name, str):
            return f"{func.name}() reads a file whose name is known only at run time ({name})"
        parts = [name.text if part is None else part for part in segments]
        path = os.path.normpath(os.path.join(os.path.dirname(where.path), *parts))
        return self.text_file(path, f"{func.name}({name.text!r})")

    def text_file(self, path: str, what: str) -> _Mapped | str:
        """The text of the file ``path`` an instruction is read from, each character placed in it: only a
        regular file inside the scan's root, of at most ``_MAX_TEXT_BYTES``; else why not (a str)."""
        real = os.path.realpath(path)
        if real != self.root and not real.startswith(self.root.rstrip(os.sep) + os.sep):
            return f"{what} reads {path}, which is outside the project: not followed"
        try:
            info = os.stat(real)
            if not stat.S_ISREG(info.st_mode):
                return f"{what} reads {path}, which is not a regular file"
            if info.st_size > _MAX_TEXT_BYTES:
                return f"{what} reads {path}, which is larger than {_MAX_TEXT_BYTES} bytes: not read"
            module = self.modules.get(real)
            if module is None:
                with open(real, "rb") as handle:
                    data = handle.read(_MAX_TEXT_BYTES + 1)
                raw = data.decode("utf-8").removeprefix("\ufeff")
                module = _Module(path, real, raw, ast.Module(body=[], type_ignores=[]), linted=False)
                self.modules[real] = module
                self.result.sources[path] = raw
        except OSError as exc:
            return f"{what} reads {path}, which cannot be read ({exc.strerror or exc})"
        except UnicodeDecodeError:
            return f"{what} reads {path}, which is not UTF-8 text"
        return _text_mapped(module)

    def imported(self, module: _Module, binding: ast.ImportFrom, name: str) -> tuple[_Module, str] | None:
        """Where ``name``, bound in ``module`` by ``from ... import``, is defined: the module (if it is
        a file we can read, holding such a name) and the name there."""
        alias = next(a for a in binding.names if (a.asname or a.name) == name)
        source = self.find_module(module, binding.module or "", binding.level)
        if source is None or alias.name not in source.bindings:
            return None
        return source, alias.name

    def follow(self, module: _Module, name: str) -> tuple[_Module, str] | str:
        """Where the module-level ``name`` of ``module`` is bound, ``from x import name`` followed (re-exports
        too) as far as the project's files go; a cycle of such imports is a reason (a str) instead."""
        seen: set[tuple[str, str]] = set()
        chain: list[str] = []
        while isinstance(binding := module.bindings.get(name), ast.ImportFrom):
            chain.append(module.path)
            if (module.key, name) in seen:
                cycle = " -> ".join(chain[chain.index(module.path) :])
                return f"{name!r} is imported in a cycle ({cycle}): it is bound nowhere"
            if len(seen) >= _MAX_HOPS:
                return f"{name!r} is imported through more than {_MAX_HOPS} modules: not followed"
            seen.add((module.key, name))
            found = self.imported(module, binding, name)
            if found is None:
                break
            module, name = found
        return module, name

    def class_named(self, module: _Module, expr: ast.expr) -> tuple[_Module, ast.ClassDef] | str:
        """The module-level class ``expr`` names (``TripState``, ``state.TripState``, imports followed), or why not."""
        if isinstance(expr, ast.Attribute):
            target = self.module_named(module, _chain(expr.value), None)
            if target is None:
                return f"{_short(expr)!r} is not a module of the project's"
            module, name = target, expr.attr
        elif isinstance(expr, ast.Name):
            name = expr.id
        else:
            return f"{_describe(expr)} is not a class name"
        followed = self.follow(module, name)
        if isinstance(followed, str):
            return followed
        module, name = followed
        binding = module.bindings.get(name)
        if isinstance(binding, ast.ClassDef):
            return module, binding
        if isinstance(binding, ast.ImportFrom | ast.Import):
            return f"{name!r} is imported from a module outside the linted files"
        return f"{name!r} is not a class defined at module level in {module.path}"

    def state_schema(self, module: _Module, expr: ast.expr, agent: str) -> StateSchema:
        """The ``state_schema=`` model ``expr`` of the ADK agent ``agent``, read from the code."""
        found = self.models.schema(module, expr)
        if isinstance(found, str):
            state = StateSchema(agent, _short(expr), module.path, module.node_span(expr), None, found)
        else:
            where, cls, schema = found
            at = where.node_span(cls).start
            named = where.text.find(cls.name, at)  # class TripState(BaseModel): the place of its name
            span = where.span(named, named + len(cls.name)) if named >= 0 else where.span(at, at)
            state = StateSchema(agent, cls.name, where.path, span, schema)
        self.result.state_schemas.append(state)
        return state

    def function_called(
        self, module: _Module, func: ast.expr, scope: _Scope | None
    ) -> tuple[_Module, ast.FunctionDef | ast.AsyncFunctionDef] | None:
        """The module-level function ``func`` names (``prompts.root`` or ``root``, imports followed), if any."""
        if isinstance(func, ast.Attribute):
            target = self.module_named(module, _chain(func.value), scope)
            if target is None:
                return None
            module, name = target, func.attr
        elif isinstance(func, ast.Name) and not (scope is not None and scope.binds(func.id)):
            name = func.id
        else:
            return None
        followed = self.follow(module, name)  # re-exports: from .prompts import root, in a package's __init__.py
        if isinstance(followed, str):
            return None
        module, name = followed
        binding = module.bindings.get(name)
        return (module, binding) if isinstance(binding, ast.FunctionDef | ast.AsyncFunctionDef) else None

    def resolve_return(
        self, module: _Module, func: ast.FunctionDef | ast.AsyncFunctionDef, depth: int
    ) -> _Mapped | str:
        """What a call without arguments of ``func`` returns, when its text is fixed: a function whose
        body ends in its one ``return`` of a string (ADK's ``instruction=return_instructions_root()``)."""
        value = _final_return(func)
        if isinstance(value, str):
            return f"{func.name}() is {value}: its text is known only when it runs"
        if func in self.returning:
            return f"{func.name}() calls itself: its text is known only when it runs"
        self.returning.add(func)
        try:
            returned = self.resolve(module, value, _function_scope(func), depth + 1)
        finally:
            self.returning.discard(func)
        return f"what {func.name}() returns: {returned}" if isinstance(returned, str) else returned

    def module_named(self, module: _Module, names: list[str] | None, scope: _Scope | None) -> _Module | None:
        """The module a name or a dotted chain of names stands for: ``prompt`` after ``from . import
        prompt``, ``p`` after ``import pkg.prompt as p``, ``pkg.prompt`` after ``import pkg.prompt``."""
        if not names or (scope is not None and scope.binds(names[0])):
            return None
        name, rest = names[0], names[1:]
        binding = module.bindings.get(name)
        if isinstance(binding, ast.ImportFrom):
            alias = next(a for a in binding.names if (a.asname or a.name) == name)
            dotted = ".".join([binding.module or "", alias.name, *rest]).strip(".")
            return self.find_module(module, dotted, binding.level)
        if isinstance(binding, ast.Import):
            alias = next(a for a in binding.names if (a.asname or a.name.split(".")[0]) == name)
            return self.find_module(module, ".".join([alias.name if alias.asname else name, *rest]), 0)
        return None

    def resolve_name(self, module: _Module, name: str, scope: _Scope | None, depth: int) -> _Mapped | str:
        if scope is not None and scope.binds(name):
            values = scope.assigned.get(name, [])
            if len(values) != 1:
                why = "a parameter" if name in scope.params else "bound more than once"
                return f"{name!r} is {why} in the function: its text is known only at run time"
            return self.resolve(module, values[0], scope, depth + 1)
        followed = self.follow(module, name)
        if isinstance(followed, str):
            return followed
        module, name = followed
        binding = module.bindings.get(name)
        if binding is None:
            return f"{name!r} is not bound at module level in {module.path}"
        if isinstance(binding, ast.ImportFrom):
            alias = next(a for a in binding.names if (a.asname or a.name) == name)
            sub = self.find_module(module, ((binding.module or "") + "." + alias.name).strip("."), binding.level)
            if sub is not None:
                return f"{name!r} is a module, not a string"
            return f"{name!r} is imported from a module outside the linted files"
        if isinstance(binding, ast.Import):
            return f"{name!r} is a module, not a string"
        if isinstance(binding, ast.FunctionDef | ast.AsyncFunctionDef):
            return f"{name!r} is a function (an instruction provider): its text is known only when it runs"
        if isinstance(binding, ast.ClassDef):
            return f"{name!r} is a class, not a string"
        if isinstance(binding, ast.Name) and binding.id.startswith("<"):
            return f"{name!r} is {binding.id.strip('<>')} at module level: its text is known only at run time"
        self.used_constants.add((module.key, name))
        return self.resolve(module, binding, None, depth + 1)

    def constant(self, module: _Module, expr: ast.AST, scope: _Scope | None) -> tuple[_Module, str] | None:
        """The module constant ``expr`` names (following imports), if it is a plain name of one."""
        alias: tuple[_Module, str] | None = None  # ALIAS = ROOT_PROMPT: ALIAS, should ROOT_PROMPT lead nowhere
        for _ in range(_MAX_HOPS):
            if isinstance(expr, ast.Name):
                if scope is not None and scope.binds(expr.id):
                    values = scope.assigned.get(expr.id, [])
                    if len(values) != 1 or expr.id in scope.params:
                        return alias
                    expr = values[0]  # text = ROOT_PROMPT in the function
                    continue
                followed = self.follow(module, expr.id)
                if isinstance(followed, str):
                    return alias
                module, name = followed
                binding = module.bindings.get(name)
                if isinstance(binding, ast.Name) and not binding.id.startswith("<"):
                    alias, expr, scope = (module, name), binding, None  # ALIAS = ROOT_PROMPT
                    continue
                return (module, name) if isinstance(binding, ast.expr) else alias
            if isinstance(expr, ast.Attribute):
                target = self.module_named(module, _chain(expr.value), scope)
                if target is None:
                    return alias
                module, expr, scope = target, ast.Name(expr.attr), None
                continue
            if isinstance(expr, ast.Call) and not expr.args and not expr.keywords:
                called = self.function_called(module, expr.func, scope)  # a function returning a constant
                value = _final_return(called[1]) if called is not None else None
                if called is None or not isinstance(value, ast.expr):
                    return alias
                module, expr, scope = called[0], value, _function_scope(called[1])
                continue
            return alias
        return alias

    # -- recording

    def add(
        self,
        module: _Module,
        expr: ast.AST,
        scope: _Scope | None,
        *,
        dialect: Kind,
        site: str,
        names: Iterable[str] = (),
        state_schemas: tuple[StateSchema, ...] = (),
    ) -> None:
        value = self.resolve(module, expr, scope)
        where = module.node_span(expr)
        const = self.constant(module, expr, scope)
        label = const[1] if const else site
        if isinstance(value, str):
            self.result.skipped.append(Skipped(site, module.path, where, value))
            return
        all_names = [*names]
        if const:
            self.used_constants.add((const[0].key, const[1]))
            all_names.insert(0, const[1])
            key: tuple[object, ...] = ("const", const[0].key, const[1], dialect)
        elif value.text:
            # keyed by where the text is written: once however many call sites give it (a function's return)
            key = ("text", value.text, value.mods[0].key, value.starts[0], value.mods[-1].key, value.ends[-1], dialect)
        else:
            key = ("site", module.key, where.start, dialect)
        index = self.found.get(key)
        if index is not None:
            old = self.result.instructions[index]
            merged = tuple(dict.fromkeys([*old.names, *all_names]))
            schemas = old.state_schemas + tuple(s for s in state_schemas if s not in old.state_schemas)
            self.result.instructions[index] = Instruction(
                old.label, merged, old.dialect, old.text, old.path, old.span, old._mapped, schemas
            )
            return
        if value.text:
            path, span = value.mods[0].path, value.mods[0].span(value.starts[0], value.ends[-1])
        else:
            path, span = module.path, where
        self.found[key] = len(self.result.instructions)
        self.result.instructions.append(
            Instruction(label, tuple(dict.fromkeys(all_names)), dialect, value.text, path, span, value, state_schemas)
        )

    def add_unused_constants(self, modules: Sequence[_Module]) -> None:
        """Module constants named ``*PROMPT``/``*INSTRUCTION`` that no call site used, holding a placeholder
        (a constant that is part of another such constant is linted as part of it, not twice)."""
        candidates: list[tuple[_Module, str, Kind]] = []
        used_by_call_sites = set(self.used_constants)
        self.used_constants.clear()
        for module in modules:
            for name, binding in module.bindings.items():
                if not isinstance(binding, ast.expr) or not name.upper().endswith(self.suffixes):
                    continue
                if (module.key, name) in used_by_call_sites or (module.key, name) in self.formatted:
                    continue
                before = set(self.used_constants)
                value = self.resolve_name(module, name, None, 0)
                self.used_constants = before | (self.used_constants - {(module.key, name)})
                if isinstance(value, str):
                    continue
                # The dialect is guessed: ADK's {key} when it has such placeholders; the angle syntax only
                # in a module that uses templating (elsewhere <role>...</role> is plain text, not a key).
                dialect: Kind
                if parse(value.text, dialect="adk").placeholders:
                    dialect = "adk"
                elif _uses_templating(module) and parse(value.text).placeholders:
                    dialect = "angle"
                else:
                    continue
                candidates.append((module, name, dialect))
        part_of_another = set(self.used_constants)
        for module, name, dialect in candidates:
            if (module.key, name) not in part_of_another:
                self.add(module, ast.Name(name), None, dialect=dialect, site=name)


@dataclass(slots=True)
class _Scope:
    """The names a function binds, with the expressions assigned to them in its body."""

    params: set[str]
    assigned: dict[str, list[ast.expr]]
    others: set[str]
    # parameters that hold session state: named state, annotated State, or given ctx.state by a caller
    state_params: set[str] = field(default_factory=set)

    def binds(self, name: str) -> bool:
        return name in self.params or name in self.assigned or name in self.others


def _final_return(func: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.expr | str:
    """The value ``func`` returns when its body ends in its one ``return`` of a value, or what it is instead."""
    if isinstance(func, ast.AsyncFunctionDef):
        return "an async function (its call gives a coroutine)"
    if func.decorator_list:
        return "a decorated function"
    returns, yields = _returns_and_yields(func)
    if yields:
        return "a generator"
    if len(returns) != 1 or returns[0] is not func.body[-1] or returns[0].value is None:
        return "a function that does not end in its one return of a value"
    return returns[0].value


def _returns_and_yields(func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[list[ast.Return], bool]:
    """The return statements of ``func`` itself (not of functions or classes inside it), and whether it yields."""
    returns: list[ast.Return] = []
    yields = False
    stack: list[ast.AST] = list(func.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.Return):
            returns.append(node)
        elif isinstance(node, ast.Yield | ast.YieldFrom):
            yields = True
        stack.extend(ast.iter_child_nodes(node))
    return returns, yields


def _function_scope(func: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> _Scope:
    args = func.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    params |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    assigned: dict[str, list[ast.expr]] = {}
    others: set[str] = set()
    body = func.body if isinstance(func.body, list) else []
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            others.add(node.name)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)
                else:
                    stack.append(target)
            stack.append(node.value)
            continue
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            assigned.setdefault(node.target.id, []).append(node.value)
            stack.append(node.value)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            others.add(node.id)  # for targets, with targets, augmented assignments, walrus
        elif isinstance(node, ast.Import | ast.ImportFrom):
            others.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        stack.extend(ast.iter_child_nodes(node))
    for name in list(assigned):
        if name in others:  # also bound another way (a loop, +=): not one known value
            assigned[name].append(ast.Name("<rebound>"))
    state = {
        a.arg
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)
        if (a.arg == "state" or _mentions_state(a.annotation)) and a.arg not in assigned and a.arg not in others
    }
    return _Scope(params, assigned, others - set(assigned), state)


def _mentions_state(annotation: ast.expr | None) -> bool:
    """Whether a parameter's annotation names ADK's ``State`` (``State``, ``State | dict``, ``"State"``)."""
    if annotation is None:
        return False
    for node in ast.walk(annotation):
        if (isinstance(node, ast.Name) and node.id == "State") or (
            isinstance(node, ast.Attribute) and node.attr == "State"
        ):
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "State" in node.value.split():
            return True
    return False


def _uses_templating(module: _Module) -> bool:
    """Whether the module imports anything from ``templating`` (at module level)."""
    for binding in module.bindings.values():
        if (
            isinstance(binding, ast.ImportFrom)
            and not binding.level
            and (binding.module or "").split(".")[0] == "templating"
        ):
            return True
        if isinstance(binding, ast.Import) and any(a.name.split(".")[0] == "templating" for a in binding.names):
            return True
    return False


def _text_mapped(module: _Module) -> _Mapped:
    """A text file's text as Python's ``open()`` reads it (``\r\n`` and ``\r`` become ``\n``), each character placed."""
    text = module.text
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i, n = 0, len(text)
    while i < n:
        ch, size = text[i], 1
        if ch == "\r":
            ch, size = "\n", 2 if text.startswith("\r\n", i) else 1
        chars.append(ch)
        starts.append(i)
        ends.append(i + size)
        i += size
    return _Mapped("".join(chars), [module] * len(chars), starts, ends)


def _is_module_file(expr: ast.AST) -> bool:
    """``__file__``, or it made absolute (``os.path.abspath(__file__)``, ``Path(__file__).resolve()``)."""
    while isinstance(expr, ast.Call) and (expr.args or isinstance(expr.func, ast.Attribute)):
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in ("resolve", "absolute") and not expr.args:
            expr = expr.func.value
        elif _last_of(expr.func) in ("abspath", "realpath", "Path", "PurePath") and len(expr.args) == 1:
            expr = expr.args[0]
        else:
            return False
    return isinstance(expr, ast.Name) and expr.id == "__file__"


def _last_of(expr: ast.AST) -> str:
    return expr.attr if isinstance(expr, ast.Attribute) else expr.id if isinstance(expr, ast.Name) else ""


def _path_parts(expr: ast.AST, param: str, scope: _Scope, *, top: bool = True) -> list[str | None] | None:
    """The parts, after the module's folder, of a path built from ``__file__`` (``None`` stands for the
    parameter ``param``): ``os.path.join(os.path.dirname(__file__), "prompts", name)`` is
    ``["prompts", None]``. None for any other expression."""
    for _ in range(_MAX_HOPS):
        if isinstance(expr, ast.Name) and expr.id != param and len(scope.assigned.get(expr.id, [])) == 1:
            expr = scope.assigned[expr.id][0]  # path = os.path.join(...); open(path)
        elif isinstance(expr, ast.Call) and _last_of(expr.func) in ("Path", "PurePath") and len(expr.args) == 1:
            expr = expr.args[0]  # Path(os.path.join(...))
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "resolve":
            expr = expr.func.value
        else:
            break
    if top and isinstance(expr, ast.Name | ast.Constant):  # open(name): relative to the current folder
        return None
    if isinstance(expr, ast.Name) and expr.id == param:
        return [None]
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return [expr.value]
    if isinstance(expr, ast.Call) and _last_of(expr.func) == "dirname" and len(expr.args) == 1:
        return [] if _is_module_file(expr.args[0]) else None
    if isinstance(expr, ast.Attribute) and expr.attr == "parent":
        return [] if _is_module_file(expr.value) else None
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "with_name":
        if _is_module_file(expr.func.value) and len(expr.args) == 1:
            return _path_parts(expr.args[0], param, scope, top=False)
        return None
    if isinstance(expr, ast.Call) and _last_of(expr.func) == "join" and expr.args and not expr.keywords:
        pieces = [_path_parts(arg, param, scope, top=False) for arg in expr.args[:_MAX_HOPS]]
    elif isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
        operands: list[ast.expr] = []
        node: ast.expr = expr
        while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and len(operands) < _MAX_HOPS:
            operands.append(node.right)
            node = node.left
        base = _path_parts(node, param, scope) if isinstance(node, ast.Attribute | ast.Call) else None
        pieces = [base, *(_leaf(o, param) for o in reversed(operands))]
    else:
        return None
    if pieces[0] != [] or any(p is None for p in pieces):
        return None
    return [part for piece in pieces[1:] if piece is not None for part in piece]


def _leaf(expr: ast.expr, param: str) -> list[str | None] | None:
    if isinstance(expr, ast.Name) and expr.id == param:
        return [None]
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return [expr.value]
    return None


def _file_read_by(func: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> list[str | None] | None:
    """The path parts (see `_path_parts`) of the one file ``func`` reads: ``open(path)`` then ``.read()``,
    or ``path.read_text()``/``path.open()``, the path made of ``__file__``'s folder and ``param``."""
    scope = _function_scope(func)
    if param in scope.assigned or param in scope.others:
        return None
    found: list[list[str | None]] = []
    reads = False
    for node in ast.walk(func):
        if not isinstance(node, ast.Call):
            continue
        target: ast.AST | None = None
        if isinstance(node.func, ast.Name) and node.func.id == "open" and node.args:
            target = node.args[0]
        elif isinstance(node.func, ast.Attribute) and node.func.attr in ("read_text", "open") and not node.args:
            target, reads = node.func.value, reads or node.func.attr == "read_text"
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "read":
            reads = True
        if target is not None:
            parts = _path_parts(target, param, scope)
            if parts is not None and None in parts:
                found.append(parts)
    return found[0] if reads and len(found) == 1 else None


def _added(expr: ast.BinOp) -> list[ast.expr]:
    """The operands of ``a + b + c`` (a left-leaning chain of ``+``), in order, read without recursion."""
    operands: list[ast.expr] = []
    node: ast.expr = expr
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        operands.append(node.right)
        node = node.left
    operands.append(node)
    return operands[::-1]


def _chain(expr: ast.AST) -> list[str] | None:
    """The names of a dotted chain (``pkg.prompt`` -> ``["pkg", "prompt"]``), or None for anything else."""
    names: list[str] = []
    while isinstance(expr, ast.Attribute):
        names.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    names.append(expr.id)
    return names[::-1]


def _describe(expr: ast.AST) -> str:
    if isinstance(expr, ast.Call):
        return f"a call ({_short(expr.func)}(...))"
    if isinstance(expr, ast.Name):
        return f"the name {expr.id!r}"
    if isinstance(expr, ast.Attribute):
        return f"the attribute {_short(expr)!r}"
    if isinstance(expr, ast.BinOp):
        return f"an expression ({type(expr.op).__name__.lower()})"
    return f"a {type(expr).__name__} expression"


def _short(expr: ast.AST) -> str:
    try:
        text = ast.unparse(expr)
    except Exception:  # unparse of a synthetic node: name it by its type
        return type(expr).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def _str_value(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def _source_arg(call: ast.Call, name: str = "source") -> ast.expr | None:
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    return _keyword(call, name)


class _Visitor:
    """Walks one module: call sites of instructions, and state writes; knows the enclosing function."""

    def __init__(self, project: _Project, module: _Module) -> None:
        self.project, self.module = project, module
        self.given_state = project.given_state
        # names for templating's own instruction(...)/jinja(...) calls: the module constant they are
        # assigned to, or the agent they are given to (set when the walk meets the parent, before the call)
        self.names_for: dict[int, list[str]] = {}
        # the state_schema= of the ADK agents such a call is given to
        self.schemas_for: dict[int, tuple[StateSchema, ...]] = {}

    def run(self) -> None:
        self.walk(self.module.tree, None)

    def find_state_arguments(self) -> None:
        """The parameters of this module's functions that a call here gives a context's state:
        ``_set_initial_states(data, callback_context.state)`` makes ``target`` state in
        ``def _set_initial_states(source, target)``."""
        functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        calls: list[ast.Call] = []
        for node in ast.walk(self.module.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                functions.setdefault(node.name, node)
            elif isinstance(node, ast.Call) and any(
                _is_state(a) for a in (*node.args, *(k.value for k in node.keywords))
            ):
                calls.append(node)
        for node in calls:
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            target = self.imported_function(func) or functions.get(name)
            if target is None:
                continue
            positional = [a.arg for a in (*target.args.posonlyargs, *target.args.args)]
            if positional[:1] in (["self"], ["cls"]) and isinstance(func, ast.Attribute):
                positional = positional[1:]
            given = [(positional[i] if i < len(positional) else None, a) for i, a in enumerate(node.args)]
            given += [(kw.arg, kw.value) for kw in node.keywords]
            for param, value in given:
                if param is not None and _is_state(value):
                    self.given_state.setdefault(target, set()).add(param)

    def imported_function(self, func: ast.expr) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The function of another linted module that ``func`` names (``set_state`` after ``from .utils
        import set_state``, ``utils.set_state`` after ``from . import utils``), if it can be found."""
        project, module = self.project, self.module
        if isinstance(func, ast.Name):
            binding = module.bindings.get(func.id)
            if not isinstance(binding, ast.ImportFrom):
                return None
            alias = next(a for a in binding.names if (a.asname or a.name) == func.id)
            source = project.find_module(module, binding.module or "", binding.level)
            name = alias.name
        elif isinstance(func, ast.Attribute):
            source = project.module_named(module, _chain(func.value), None)
            name = func.attr
        else:
            return None
        found = source.bindings.get(name) if source is not None else None
        return found if isinstance(found, ast.FunctionDef | ast.AsyncFunctionDef) else None

    def walk(self, node: ast.AST, scope: _Scope | None) -> None:
        stack: list[tuple[ast.AST, _Scope | None]] = [(node, scope)]
        while stack:
            item, here = stack.pop()
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                inner = _function_scope(item)
                inner.state_params |= self.given_state.get(item, set()) - inner.assigned.keys() - inner.others
                if here is not None:  # names of the enclosing function that this one does not bind
                    inner.state_params |= {s for s in here.state_params if not inner.binds(s)}
                    for name, values in here.assigned.items():
                        if not inner.binds(name):
                            inner.assigned[name] = values
                    inner.params |= {p for p in here.params if not inner.binds(p)}
                    inner.others |= {o for o in here.others if not inner.binds(o)}
                here = inner
            elif isinstance(item, ast.Call):
                self.call(item, here)
            elif isinstance(item, ast.BinOp) and isinstance(item.op, ast.Mod):
                self.formatted(item.left, here)
            elif isinstance(item, ast.Assign | ast.AugAssign | ast.AnnAssign):
                targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                for target in targets:
                    self.assignment(target, item.value, here)
                    if (
                        here is None
                        and isinstance(target, ast.Name)
                        and isinstance(item.value, ast.Call)
                        and self.module.bindings.get(target.id) is item.value
                    ):  # B = instruction("..."): a module constant, named B
                        self.names_for.setdefault(id(item.value), []).append(target.id)
            stack.extend((child, here) for child in reversed(list(ast.iter_child_nodes(item))))

    # -- instructions

    def formatted(self, expr: ast.expr, scope: _Scope | None) -> None:
        """``expr`` is a Python format string (``PROMPT.format(...)``, ``PROMPT % ...``): if it names a
        module constant, that constant's braces are Python's, so it is no instruction of its own."""
        const = self.project.constant(self.module, expr, scope)
        if const is not None:
            self.project.formatted.add((const[0].key, const[1]))

    def call(self, call: ast.Call, scope: _Scope | None) -> None:
        project, module = self.project, self.module
        self.call_writes(call, scope)
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in _FILLED_BY_METHOD:  # PROMPT.format(...)
            if isinstance(func.value, ast.Name) and func.value.id == "str" and call.args:  # str.format(PROMPT, ...)
                self.formatted(call.args[0], scope)
            else:
                self.formatted(func.value, scope)
        origin = project.qualify(module, func)
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if called in _TEMPLATE_ENGINES and (origin or "").lstrip(".").split(".")[0] != "templating":
            for template in [*call.args[:1], *(kw.value for kw in call.keywords if kw.arg in ("template", "source"))]:
                self.formatted(template, scope)  # ChatPromptTemplate.from_template(PROMPT), jinja2.Template(PROMPT)
        if origin is None:
            return
        last = origin.rsplit(".", 1)[-1]
        head = origin.lstrip(".").split(".")[0]
        callee = _short(call.func)
        if head == "templating" and last in _TEMPLATING_SOURCES:
            arg = _source_arg(call)
            if arg is None or self.is_provider(arg):
                return
            dialect: Kind = "jinja" if last == "jinja" else "angle"
            if last in ("Template", "parse", "render"):
                given = _keyword(call, "dialect")
                if given is not None:
                    text = _str_value(given)
                    if text not in ("angle", "adk"):
                        project.result.skipped.append(
                            Skipped(
                                f"{callee}(...)",
                                module.path,
                                module.node_span(given),
                                "a dialect= that is not a literal",
                            )
                        )
                        return
                    dialect = "adk" if text == "adk" else "angle"
            names = self.names_for.get(id(call), []) if last != "render" else []  # render(): a result, no template
            agents_schemas = self.schemas_for.get(id(call), ())
            site = f"{callee}(...)"
            project.add(module, arg, scope, dialect=dialect, site=site, names=names, state_schemas=agents_schemas)
        elif (head == "templating" and last == "Agent") or (head == "google" and last in _ADK_AGENTS):
            dialect = "angle" if head == "templating" else "adk"
            name = _str_value(_keyword(call, "name"))
            shown = f"{callee}(name={name!r})" if name is not None else f"{callee}(...)"
            shown = shown.replace("'", '"')
            given_schema = _keyword(call, "state_schema") if head == "google" else None
            schemas: tuple[StateSchema, ...] = ()
            if given_schema is not None and not (isinstance(given_schema, ast.Constant) and given_schema.value is None):
                schemas = (project.state_schema(module, given_schema, shown),)
            for kwarg in _AGENT_KWARGS:
                value = _keyword(call, kwarg)
                if value is None:
                    continue
                names = [name, f"{name}.{kwarg}"] if name is not None else []
                if self.is_provider(value):  # instruction("..."): linted at its own call site, named here
                    self.names_for.setdefault(id(value), []).extend(names)
                    self.schemas_for[id(value)] = self.schemas_for.get(id(value), ()) + schemas
                    continue
                if self.named_provider(value, scope, names, schemas):  # B = instruction("..."); Agent(instruction=B)
                    continue
                project.add(
                    module, value, scope, dialect=dialect, site=f"{shown}.{kwarg}", names=names, state_schemas=schemas
                )

    def named_provider(
        self, value: ast.expr, scope: _Scope | None, names: list[str], schemas: tuple[StateSchema, ...] = ()
    ) -> bool:
        """If ``value`` names a module constant holding a call of templating's own ``instruction``,
        ``Template``, ``parse`` or ``jinja`` with a literal dialect, give that instruction ``names``
        (it is linted where the constant is) and say so."""
        project = self.project
        const = project.constant(self.module, value, scope)
        if const is None:
            return False
        module, name = const
        call = module.bindings.get(name)
        if not isinstance(call, ast.Call):
            return False
        origin = project.qualify(module, call.func) or ""
        last = origin.rsplit(".", 1)[-1]
        arg = _source_arg(call)
        if origin.lstrip(".").split(".")[0] != "templating" or last not in _TEMPLATING_SOURCES - {"render"}:
            return False
        if arg is None or self.is_provider(arg):
            return False
        dialect: Kind = "jinja" if last == "jinja" else "angle"
        given = _keyword(call, "dialect")
        if given is not None:
            text = _str_value(given)
            if last == "jinja" or text not in ("angle", "adk"):
                return False
            dialect = "adk" if text == "adk" else "angle"
        site = f"{_short(call.func)}(...)"
        project.add(module, arg, None, dialect=dialect, site=site, names=[name, *names], state_schemas=schemas)
        return True

    def is_provider(self, expr: ast.expr) -> bool:
        """A call to one of templating's own providers: linted at its own call site."""
        if not isinstance(expr, ast.Call):
            return False
        origin = self.project.qualify(self.module, expr.func) or ""
        return origin.lstrip(".").split(".")[0] == "templating" and origin.rsplit(".", 1)[-1] in _PROVIDER_CALLS

    # -- state writes

    def write(self, key: str | None, node: ast.AST, how: str) -> None:
        self.project.result.writes.append(Write(key, self.module.path, self.module.node_span(node), how))

    def key_of(self, node: ast.AST | None, scope: _Scope | None, depth: int = 0) -> str | None:
        """The state key ``node`` names: a string literal, or a name bound to one (``KEY``,
        ``constants.ITINERARY_KEY``, imported or not); None when it is known only at run time."""
        if node is None:
            return None
        text = _str_value(node)
        if text is not None:
            return text
        if isinstance(node, ast.Attribute) and node.attr in _STATE_PREFIXES and _chain(node.value) == ["State"]:
            return _STATE_PREFIXES[node.attr]  # google-adk's State.USER_PREFIX
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            if depth >= _MAX_HOPS:
                return None
            keys = [self.key_of(operand, scope, depth + 1) for operand in _added(node)]
            return None if None in keys else "".join(k for k in keys if k is not None)
        if not isinstance(node, ast.Name | ast.Attribute):
            return None
        value = self.project.resolve(self.module, node, scope)
        return None if isinstance(value, str) else value.text

    def dict_keys(self, value: ast.AST, how: str, scope: _Scope | None = None) -> None:
        if isinstance(value, ast.Name):  # state=initial_state: one dict assigned to it in this module...
            name = value.id
            assigned: list[ast.expr] = []
            for node in ast.walk(self.module.tree):
                if isinstance(node, ast.Assign | ast.AnnAssign):
                    for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                        if isinstance(target, ast.Name) and target.id == name and node.value is not None:
                            assigned.append(node.value)
                        elif _names(target, name) and isinstance(target, ast.Subscript):
                            self.write(self.key_of(target.slice, None), target.slice, how)  # ...then name["k"] = v
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and _names(node.func.value, name)
                ):
                    if node.func.attr == "update":  # ...or name.update({...}, k=v)
                        for arg in node.args:
                            if isinstance(arg, ast.Dict):
                                self.dict_keys(arg, how)
                            else:
                                self.write(None, arg, how)
                        for kw in node.keywords:
                            self.write(kw.arg, kw.value, how)
                    elif node.func.attr == "setdefault" and node.args:
                        self.write(self.key_of(node.args[0], None), node.args[0], how)
            if len(assigned) == 1:
                value = assigned[0]
        if isinstance(value, ast.Constant) and value.value is None:
            return
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict":
            for arg in value.args:  # dict({...}, k=v)
                if isinstance(arg, ast.Dict):
                    self.dict_keys(arg, how, scope)
                else:
                    self.write(None, arg, how)
            for kw in value.keywords:  # None for dict(**other): its keys are known only at run time
                self.write(kw.arg, kw.value, how)
            return
        if not isinstance(value, ast.Dict):
            self.write(None, value, how)
            return
        for k in value.keys:
            self.write(self.key_of(k, scope), k if k is not None else value, how)

    def call_writes(self, call: ast.Call, scope: _Scope | None) -> None:
        for kw in call.keywords:
            if kw.arg == "output_key":
                if not (isinstance(kw.value, ast.Constant) and kw.value.value is None):
                    self.write(self.key_of(kw.value, scope), kw.value, "output_key")
            elif kw.arg == "state_delta":
                self.dict_keys(kw.value, "state_delta", scope)
        func = call.func
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if called in _SESSION_MAKERS or called in _STATE_EVENTS:
            state = _keyword(call, "state")
            if state is not None:
                self.dict_keys(state, f"{called}(state=...)", scope)
        if isinstance(func, ast.Attribute) and _is_state(func.value, scope):
            if func.attr == "update":
                for arg in call.args:
                    self.dict_keys(arg, ".state.update(...)", scope)
                for kw in call.keywords:
                    self.write(kw.arg, kw.value, ".state.update(...)")
            elif func.attr == "setdefault" and call.args:
                self.write(self.key_of(call.args[0], scope), call.args[0], ".state.setdefault(...)")

    def assignment(self, target: ast.AST, value: ast.AST | None, scope: _Scope | None) -> None:
        if isinstance(target, ast.Subscript) and _is_state(target.value, scope):
            self.write(self.key_of(target.slice, scope), target.slice, "state[...] = ...")
        elif isinstance(target, ast.Attribute) and target.attr == "state_delta" and value is not None:
            self.dict_keys(value, "state_delta = {...}", scope)
        elif isinstance(target, ast.Tuple | ast.List):
            for item in target.elts:
                self.assignment(item, None, scope)


def _names(expr: ast.AST, name: str) -> bool:
    """Whether ``expr`` is the name ``name``, or a subscript of it (``name["k"]``)."""
    if isinstance(expr, ast.Subscript):
        expr = expr.value
    return isinstance(expr, ast.Name) and expr.id == name


def _is_state(expr: ast.AST, scope: _Scope | None = None) -> bool:
    """``x.state`` or ``x.state_delta`` (a context's, a session's, an event's actions'), a name of
    the enclosing function bound to one (``mem = tool_context.state``), or a parameter that holds
    state (``def set_state(state, ...)``, ``target: State``, or one a caller gives ``ctx.state``)."""
    if isinstance(expr, ast.Name) and scope is not None:
        if expr.id in scope.state_params:
            return True
        return any(_is_state(value) for value in scope.assigned.get(expr.id, ()))
    return isinstance(expr, ast.Attribute) and expr.attr in ("state", "state_delta")


def _shown(path: Path) -> str:
    """A path as shown in findings: relative to the current folder when under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def python_text(data: bytes) -> str:
    """The text of a ``.py`` file's bytes, read as Python reads them: in the encoding its coding line
    declares (PEP 263; UTF-8 when none does), a leading byte order mark dropped.

    A coding line Python would refuse (an encoding it does not know, a codec that is not a text
    encoding such as rot13, one that contradicts a byte order mark) is passed over and the file read
    as UTF-8, so that an error, if any, says where the bytes fail. Raises ``UnicodeDecodeError`` when
    the bytes are not in the encoding."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding).removeprefix("\ufeff")
    except (SyntaxError, LookupError):  # LookupError: a codec that does not decode bytes to text
        return data.decode("utf-8").removeprefix("\ufeff")


def _read_python(path: str) -> str:
    with open(path, "rb") as handle:
        return python_text(handle.read())


def scan(
    paths: Sequence[str],
    *,
    suffixes: Sequence[str] = CONSTANT_SUFFIXES,
    read: Callable[[str], str] = _read_python,
    keep_going: bool = False,
    root: str | None = None,
) -> Scan:
    """Find the instructions and state writes of the Python files ``paths`` (parsed, never run).

        Names imported from other modules are followed into those files when they can be found (next to
        the importer for relative imports, in a folder above it for absolute ones), whether or not they
        are in ``paths``. ``suffixes``: module constants whose name ends in one of them are linted even
        when no call site uses them, if they hold a placeholder. ``read`` reads a file's text (by
    default as Python does: :func:`python_text`, its coding line honoured). A file of
        ``paths`` that is not valid Python is a :class:`PythonSourceError`; with ``keep_going``, it is
        recorded in :attr:`Scan.errors` instead and the other files are scanned (their state writes are then
        not all known, so :attr:`Scan.written` is ``None``). ``root`` (default: the current folder) bounds
        the text files an instruction is read from (``load_instruction_from_file("writer.txt")``): only
        regular files inside it are read.
    """
    project = _Project(read, suffixes, root)
    modules: list[_Module] = []
    for path in paths:
        try:
            modules.append(project.load(path, linted=True))
        except PythonSourceError as exc:
            if not keep_going:
                raise
            project.result.errors.append(exc)
            project.result.sources[path] = exc.source or ""
    visitors = [_Visitor(project, module) for module in modules]
    for visitor in visitors:  # first every call giving state to a function, which may be in another module
        visitor.find_state_arguments()
    for visitor in visitors:
        visitor.run()
    project.add_unused_constants(modules)
    return project.result


# --------------------------------------------------------------------------------------------
# Linting what was found: the rules live in templating.lint.rules.python (imported here for the names
# this module has always offered).

from .lint.rules.python import (  # noqa: E402
    JINJA_SYNTAX,
    PYTHON_SYNTAX,
    lint_instruction,
    never_written,
    skipped_findings,
)
