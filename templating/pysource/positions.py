"""Positions: each parsed module with its offsets and module-level names, and strings whose every character
knows where in which file it was written (literals with their escapes, f-strings, `textwrap.dedent`, text files)."""

from __future__ import annotations

import ast
import functools
import re
import textwrap
import unicodedata
from collections.abc import Iterator, Sequence

from ..nodes import Span
from ..places import line_starts, span_at
from .reading import _field_end, kept_walk

_EMPTY_TREE = ast.Module(body=[], type_ignores=[])


class _Module:
    """One parsed `.py` file: its text, its tree, and its module-level names."""

    __slots__ = ("_line_starts", "_lines", "_nodes", "_preorder", "bindings", "key", "linted", "path", "text", "tree")

    def __init__(self, path: str, key: str, text: str, tree: ast.Module, *, linted: bool) -> None:
        self.path, self.key, self.text, self.tree, self.linted = path, key, text, tree, linted
        self._lines: list[str] | None = None
        self._line_starts: list[int] | None = None
        self._nodes: list[ast.AST] | None = None
        self._preorder: _Preorder | None = None
        self.bindings: dict[str, ast.AST] = {}
        for stmt in _top_level(tree.body):
            for name, value in _bound(stmt):
                self.bindings[name] = value

    @property
    def nodes(self) -> list[ast.AST]:
        """Every node of the tree in `ast.walk`'s order (operators and load/store markers left out),
        listed once: the passes over the whole module share it instead of walking the tree again."""
        if self._nodes is None:
            self._nodes = _walk(self.tree)
        return self._nodes

    @property
    def preorder(self) -> _Preorder:
        """The nodes the scan's passes act on (calls, binary operations, assignments, functions), parents
        before children and in the order written, each with the function or lambda it is in: the one walk
        of the whole tree the scan's passes share."""
        if self._preorder is None:
            self._preorder = kept_walk(self.tree, _walk_preorder)  # (a tree parsed again is not walked again)
        return self._preorder

    def forget_walks(self) -> None:
        """Drop the lists of nodes (a scan's result keeps its modules; the lists are for the scan only: the walk of a
        tree `reading.parsed` keeps is kept with the tree, for the next scan)."""
        self._nodes = self._preorder = None

    def __getstate__(self) -> tuple[None, dict[str, object]]:
        """Pickled (a lint's worker sends its facts back) as what a scan's result reads: path, key, text."""
        return None, {"path": self.path, "key": self.key, "text": self.text, "linted": self.linted}

    def __setstate__(self, state: tuple[None, dict[str, object]]) -> None:
        for name, value in state[1].items():
            setattr(self, name, value)
        self.tree, self.bindings = _EMPTY_TREE, {}
        self._lines = self._line_starts = self._nodes = self._preorder = None

    def forget_tree(self) -> None:
        """Drop the syntax tree and the names bound to its nodes, once the scan is done: what a scan's result
        reads of a module is its path, text and lines. Kept, the trees of a large project (millions of
        objects) would be walked by each full pass of the garbage collector for as long as the result lives."""
        self.forget_walks()
        self.tree = _EMPTY_TREE
        self.bindings = {}

    @property
    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            self._line_starts = line_starts(self.text)
        return self._line_starts

    def offset(self, lineno: int, col: int) -> int:
        """The character offset of `ast`'s (1-based line, UTF-8 byte column) position."""
        start = self.line_starts[lineno - 1]
        if self._lines is None:
            self._lines = self.text.split("\n")
        line = self._lines[lineno - 1]
        if not line.isascii():
            col = len(line.encode("utf-8")[:col].decode("utf-8", "replace"))
        return start + col

    def span(self, start: int, end: int) -> Span:
        return span_at(self.line_starts, start, end)

    def node_span(self, node: ast.AST) -> Span:
        if not hasattr(node, "lineno"):  # a name made up here (an unused constant): its binding's place
            binding = self.bindings.get(getattr(node, "id", ""))
            node = binding if binding is not None and hasattr(binding, "lineno") else self.tree
            if node is self.tree:
                return self.span(0, 0)
        line: int = node.lineno
        start = self.offset(line, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return Span(start, end, line, start - self.line_starts[line - 1] + 1)  # the line is the node's: no search


# Fields that hold only markers nothing looks for by walking (Load/Store, operators) or no node at all (names,
# numbers), and the fields of each node class that may hold nodes: children found without `ast.iter_fields`.
_MARKER_FIELDS = frozenset(
    {"ctx", "op", "ops", "id", "attr", "name", "arg", "asname", "module", "level", "kind", "conversion"}
    | {"is_async", "simple", "type_comment", "tag"}
)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: (), ast.Name: ()}
if hasattr(ast, "TypeAlias"):  # Python 3.12: `type X = ...` holds its name as a node
    _CHILD_FIELDS[ast.TypeAlias] = ast.TypeAlias._fields


def _children(node: ast.AST) -> list[ast.AST]:
    """The child nodes of `node`, as `ast.iter_child_nodes` gives them, less operators and Load/Store."""
    kind = type(node)
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        fields = _CHILD_FIELDS[kind] = tuple(f for f in kind._fields if f not in _MARKER_FIELDS)
    out: list[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            out.append(value)
        elif isinstance(value, list):
            out += [item for item in value if isinstance(item, ast.AST)]
    return out


def _walk(node: ast.AST) -> list[ast.AST]:
    """`node` and every node below it in `ast.walk`'s order (breadth first), less operators and Load/Store."""
    found = [node]
    i = 0
    while i < len(found):
        found += _children(found[i])
        i += 1
    return found


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# The nodes the scan's passes act on (calls, `%`, assignments, functions); the others are walked through only.
_ACTED_ON = frozenset({ast.Call, ast.BinOp, ast.Assign, ast.AugAssign, ast.AnnAssign, *_FUNCTIONS})
# Nodes that never hold another node: not even put on the walk's stack.
_LEAVES = frozenset({ast.Name, ast.Constant, ast.alias, ast.Load, ast.Store, ast.Del})


class _Preorder:
    """The nodes of a tree the scan's passes act on (`_ACTED_ON`: calls, `%` and other binary
    operations, assignments, functions and lambdas), parents before children and in the order written;
    `owners[i]`: the function or lambda `nodes[i]` is in (None: the module); `depths`: how deep each
    function or lambda is in the tree (by `id`), so a pass can prefer the shallowest as `ast.walk`
    (breadth first) would meet it first."""

    __slots__ = ("depths", "nodes", "owners")

    def __init__(self, nodes: list[ast.AST], owners: list[ast.AST | None], depths: dict[int, int]) -> None:
        self.nodes, self.owners, self.depths = nodes, owners, depths


def _walk_preorder(tree: ast.AST) -> _Preorder:
    """Every node of `tree` walked once (without recursion: any depth), the ones acted on listed. The
    children are read as `_children` reads them, inlined: this walk visits every node of every file."""
    nodes: list[ast.AST] = []
    owners: list[ast.AST | None] = []
    depths: dict[int, int] = {}
    stack: list[tuple[ast.AST, ast.AST | None, int]] = [(tree, None, 0)]
    pop, push = stack.pop, stack.append
    fields_of, acted_on, leaves, functions, node_type = _CHILD_FIELDS.get, _ACTED_ON, _LEAVES, _FUNCTIONS, ast.AST
    while stack:
        node, owner, depth = pop()
        kind = type(node)
        if kind in acted_on:
            nodes.append(node)
            owners.append(owner)
            if kind in functions:
                depths[id(node)] = depth
                owner = node
        fields = fields_of(kind)
        if fields is None:
            fields = _CHILD_FIELDS[kind] = tuple(f for f in kind._fields if f not in _MARKER_FIELDS)
        depth += 1
        for name in reversed(fields):  # pushed last first: popped in the order written
            value = getattr(node, name, None)
            if type(value) is list:
                for item in reversed(value):
                    if isinstance(item, node_type) and type(item) not in leaves:
                        push((item, owner, depth))
            elif isinstance(value, node_type) and type(value) not in leaves:
                push((value, owner, depth))
    return _Preorder(nodes, owners, depths)


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Module-level statements, those inside module-level `if`/`try`/`with` blocks included."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If | ast.With):
            yield from _top_level(stmt.body)
            if isinstance(stmt, ast.If):
                yield from _top_level(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            for block in (stmt.body, stmt.orelse, stmt.finalbody, *(h.body for h in stmt.handlers)):
                yield from _top_level(block)


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

    def __init__(self, text: str, mods: list[_Module], starts: Sequence[int], ends: Sequence[int]) -> None:
        # `starts`/`ends`: lists, or ranges for a run of characters each written as itself (a plain literal)
        self.text, self.mods, self.starts, self.ends = text, mods, starts, ends

    def __add__(self, other: _Mapped) -> _Mapped:
        return _Mapped(
            self.text + other.text,
            self.mods + other.mods,
            [*self.starts, *other.starts],
            [*self.ends, *other.ends],
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

    Reads the literals' source: prefixes, quotes, escapes (`\\n` is two characters of source),
    line continuations, `\\r\\n` line ends. Should the reading ever disagree with Python's
    value, every character is placed on the whole literal instead (never a wrong column)."""
    value = node.value
    assert isinstance(value, str)
    text = module.text
    start = module.offset(node.lineno, node.col_offset)
    end = module.offset(node.end_lineno or node.lineno, node.end_col_offset or 0)
    at = _written_as_is(text, start, end, value)
    if at >= 0:  # each character where it is written, one after another: no list of places to build
        return _Mapped(value, [module] * len(value), range(at, at + len(value)), range(at + 1, at + len(value) + 1))
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


def _written_as_is(text: str, start: int, end: int, value: str) -> int:
    """Where the body of the literal `text[start:end]` starts when it is one literal (no implicit
    concatenation: its quote appears nowhere inside it), not a bytes, f- or t-string, whose body is
    `value` character for character (no escape sequence, line continuation or `\r` changes it): each
    character of `value` is then written at its place in that body. -1 otherwise (read it character by
    character)."""
    i = start
    while i < end and text[i].isalpha():
        i += 1
    if text[start:i].lower() not in ("", "r", "u"):
        return -1
    quote = text[i : i + 3]
    if quote not in ('"""', "'''"):
        quote = text[i : i + 1]
        if quote not in ('"', "'"):
            return -1
    body_start, body_end = i + len(quote), end - len(quote)
    if body_end < body_start or not text.startswith(quote, body_end):
        return -1
    if text.find(quote, body_start, body_end) >= 0 or text[body_start:body_end] != value:
        return -1
    return body_start


@functools.cache
def _plain_run(quote: str, is_f: bool) -> re.Pattern[str]:
    """What ends a run of characters that stand for themselves in a literal quoted by `quote`."""
    return re.compile("[\\\\\r" + quote + ("{}" if is_f else "") + "]")


def _read_literals(
    text: str,
    i: int,
    end: int,
    chars: list[str],
    starts: list[int],
    ends: list[int],
    fields: list[int] | None = None,
) -> None:
    """Read the string literals between `i` and `end`, each character with its place. With `fields`,
    f-strings are read too: `{{`/`}}` are one brace, and each replacement field is skipped, the
    number of characters read before it appended to `fields`."""
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
        plain = _plain_run(quote[0], is_f)
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
            else:  # a run of plain characters, each standing for itself
                found = plain.search(text, j + 1)
                k = found.start() if found is not None else len(text)
                chars += text[j:k]
                starts += range(j, k)
                ends += range(j + 1, k + 1)
                j = k
        i = j + len(quote)


def _dedent(value: _Mapped) -> _Mapped:
    """`textwrap.dedent` that keeps each character's place: whitespace-only lines are emptied, then
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
    """`result` (a subsequence of `value`'s text) placed by greedy matching."""
    keep: list[int] = []
    i = 0
    for ch in result:
        while i < len(value.text) - 1 and value.text[i] != ch:
            i += 1
        keep.append(min(i, len(value.text) - 1))
        i += 1
    return value.pick(keep, result) if value.text else value


def _text_mapped(module: _Module) -> _Mapped:
    """A text file's text as Python's `open()` reads it (`\r\n` and `\r` become `\n`), each character placed."""
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
