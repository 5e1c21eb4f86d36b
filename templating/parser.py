"""Source text to nodes. The only module that imports Lark; Lark's tokens and trees never leave it.

The angle syntax is defined by ``grammar/instruction.lark`` alone, and the ADK dialect (Google
ADK's ``{key}``) by ``grammar/adk.lark`` alone, each compiled by Lark for its LALR parser.
Parsing is total: every string is a template, and text that is not a node is literal.

Each grammar's one rule is a flat sequence of tokens, so the tokens are the parse. We take the
terminals' patterns from the grammar as Lark compiles it, join them into one regular expression
(one named group per terminal), scan with it and build nodes straight from its matches: no Lark
token objects, no tree, which would only cost time. The test suite checks, token for token, that
Lark's full LALR parse agrees.

So that a process does not pay for importing Lark and compiling the grammar (tens of
milliseconds) to parse one template, that expression is also shipped, with a hash of the grammar
it came from, in ``terminals.json`` beside this module (written by ``write_terminals()``). It is
used only while the hash matches the grammar being read; when the grammar changes, the
expression is taken from Lark again (the same result, just slower to start), and a test fails
until the file is rewritten. Nothing is written at run time, so a read-only install and
concurrent processes are no concern.
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Callable
from functools import cache, lru_cache
from hashlib import sha256
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .nodes import SCOPES, Dialect, Escaped, Literal, Node, Placeholder, Span, check_dialect

if TYPE_CHECKING:
    from lark import Lark

__all__ = ["grammar_text", "parse_nodes"]

_GRAMMARS: dict[Dialect, str] = {"angle": "instruction", "adk": "adk"}
TERMINALS_FILE = Path(__file__).with_name("terminals.json")
WRITE_COMMAND = '`python -c "from templating.parser import write_terminals; write_terminals()"`'


def grammar_text(name: str) -> str:
    """The text of ``grammar/<name>.lark``: shipped inside the package, or beside it in a checkout."""
    filename = f"{name}.lark"
    here = Path(__file__).parent
    for path in (here / "grammar" / filename, here.parent / "grammar" / filename):
        if path.is_file():
            return path.read_text(encoding="utf-8")
    # Not on a file system (a zip archive, say): ask the import system for it.
    from importlib import resources

    return resources.files("templating").joinpath("grammar").joinpath(filename).read_text(encoding="utf-8")


def grammar_hash(text: str) -> str:
    """The hash that ties a shipped expression to the grammar text it was compiled from."""
    return sha256(text.encode("utf-8")).hexdigest()


@cache
def _lark(name: str) -> Lark:
    from lark import Lark  # only here: the hot path never needs it (see the module docstring)

    return Lark(grammar_text(name), parser="lalr", lexer="basic")


def lark_terminals(name: str) -> dict[str, str]:
    """The terminals Lark compiles from ``grammar/<name>.lark`` (those its parser uses): name -> pattern."""
    return {terminal.name: terminal.pattern.to_regexp() for terminal in _lark(name).terminals}


def lark_expression(name: str) -> str:
    """One regular expression for the terminals Lark compiles from ``grammar/<name>.lark``.

    One named group per terminal, holding the terminal's pattern as Lark compiled it. The
    grammars' terminals are disjoint (at no offset do two of them match: TEXT stops wherever a
    node could start), so the order they are tried in cannot change a token; the ones that start
    with a fixed character come first and TEXT last, as that is the fastest order for the regular
    expression engine. The tests check the disjointness, and that the tokens agree with Lark's.
    """
    terminals = sorted(lark_terminals(name).items(), key=lambda item: (item[0] == "TEXT", item[0]))
    return "|".join(f"(?P<{terminal}>{pattern})" for terminal, pattern in terminals)


def _shipped() -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads(TERMINALS_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data


@cache
def _scanner(name: str) -> re.Pattern[str]:
    """The compiled expression for ``grammar/<name>.lark``: the shipped one while it matches the grammar."""
    entry = _shipped().get(name)
    if isinstance(entry, dict) and entry.get("grammar_sha256") == grammar_hash(grammar_text(name)):
        return re.compile(entry["pattern"])
    return re.compile(lark_expression(name))


def terminals_data() -> dict[str, Any]:
    """What ``terminals.json`` should hold for the grammars as they are now (compiled by Lark)."""
    data: dict[str, Any] = {
        "comment": f"Generated from grammar/*.lark by {WRITE_COMMAND}; do not edit.",
    }
    for name in sorted(_GRAMMARS.values()):
        data[name] = {"grammar_sha256": grammar_hash(grammar_text(name)), "pattern": lark_expression(name)}
    return data


def lalr_tokens(source: str, *, dialect: Dialect = "angle") -> list[tuple[str, str]]:
    """The tokens of Lark's full LALR parse as ``(type, text)`` pairs; for tests of the fast path."""
    from lark import Token

    tree = _lark(_GRAMMARS[check_dialect(dialect)]).parse(source)
    return [(tok.type, str(tok)) for tok in tree.children if isinstance(tok, Token)]


def lexer_tokens(source: str, *, dialect: Dialect = "angle") -> list[tuple[str, str]]:
    """The tokens the fast path builds nodes from, as ``(type, text)`` pairs."""
    scanner = _scanner(_GRAMMARS[check_dialect(dialect)])
    return [(match.lastgroup or "", match.group()) for match in scanner.finditer(source)]


def _valid_key(key: str) -> bool:
    """Python's own rules for the segments the grammar let through (see the grammar's comments)."""
    scope, colon, rest = key.partition(":")
    if colon and scope in SCOPES:
        key = rest
    if "." not in key:
        return key.isidentifier()
    first, *others = key.split(".")
    if not first.isidentifier():
        return False
    return all(seg.isidentifier() or (seg.isascii() and seg.isdigit()) for seg in others)


def parse_nodes(source: str, dialect: Dialect = "angle") -> tuple[Node, ...]:
    """Parse ``source``, written in ``dialect``, into nodes.

    Never raises on a string; results are cached per ``(source, dialect)``.
    """
    if not isinstance(source, str):  # checked before the cache, which would only say "unhashable"
        raise TypeError(f"a template source must be a str, not {type(source).__name__}")
    return _cached(source, check_dialect(dialect))


# A parse makes only acyclic objects (nodes, spans, strings): the cyclic garbage collector has
# nothing to find in them, but as they pile up it passes over them again and again (a third of
# the time of a megabyte of nodes). It is paused while a large source is parsed, and resumed
# after, unless something else had paused it.
_PAUSE_COLLECTOR_FROM = 100_000  # characters


@lru_cache(maxsize=256)
def _cached(source: str, dialect: Dialect) -> tuple[Node, ...]:
    if len(source) < _PAUSE_COLLECTOR_FROM or not gc.isenabled():
        return _build(source, dialect)
    gc.disable()
    try:
        return _build(source, dialect)
    finally:
        gc.enable()


# What a token that may be a node stands for: (node class, the node's key or text, optional), or
# None when Python's rules reject its key and it is text after all.
_Meaning = tuple[type[Placeholder] | type[Escaped], str, bool] | None


def _angle_meaning(kind: str, text: str) -> _Meaning:
    """An ESCAPE or PLACEHOLDER token of the angle syntax."""
    width = 2 if kind == "ESCAPE" else 1
    key = text[width:-width]
    optional = key.endswith("?")
    if optional:
        key = key[:-1]
    if not _valid_key(key):
        return None
    return (Escaped, text[1:-1], False) if kind == "ESCAPE" else (Placeholder, key, optional)


def _valid_adk_key(key: str) -> bool:
    """ADK's rule: an identifier, or a known scope and an identifier (nothing else: no paths)."""
    scope, colon, rest = key.partition(":")
    return (rest if colon and scope in SCOPES else key).isidentifier()


def _adk_meaning(kind: str, text: str) -> _Meaning:
    """A PLACEHOLDER token of the ADK dialect."""
    key = text[1:-1].strip()
    optional = key.endswith("?")
    if optional:
        key = key[:-1]
    return (Placeholder, key, optional) if _valid_adk_key(key) else None


_UNSEEN: _Meaning = (Placeholder, "", False)  # a marker: compared by identity only
_MEANING: dict[Dialect, Callable[[str, str], _Meaning]] = {"angle": _angle_meaning, "adk": _adk_meaning}


def _parts(cls: type) -> type:
    """A plain class with the same slots as the node class ``cls``: see ``_build``."""
    return type(f"_{cls.__name__}Parts", (), {"__slots__": vars(cls)["__slots__"], "__module__": __name__})


# Nodes and spans are frozen dataclasses: their generated __init__, and any other way of filling
# their slots from outside, costs a call per field. A parse makes a node and a span for every
# token, so _build fills an instance of a plain class with the same slots (plain attribute
# stores), then makes it the frozen class by assigning __class__, which Python allows between
# classes of the same layout (and refuses with a TypeError otherwise). The result is an ordinary
# instance of the node class, at a third of the cost.
_SpanParts, _LiteralParts, _PlaceholderParts, _EscapedParts = map(_parts, (Span, Literal, Placeholder, Escaped))


def _literal(source: str, start: int, end: int, line: int, column: int) -> Literal:
    span: Any = _SpanParts()
    span.start, span.end, span.line, span.column = start, end, line, column
    span.__class__ = Span
    node: Any = _LiteralParts()
    node.text, node.span = source[start:end], span
    node.__class__ = Literal
    literal: Literal = node
    return literal


def _build(source: str, dialect: Dialect) -> tuple[Node, ...]:
    """Nodes from the dialect's tokens. A token that stands for no node (a key Python's rules
    reject) is text; adjacent text, from TEXT tokens or such tokens, merges into one Literal.

    The hot loop of every parse: node-dense input makes one pass per node, so it is written for
    speed (plain locals, no per-token helpers, each distinct token's meaning worked out once).
    """
    scanner = _scanner(_GRAMMARS[dialect])
    text_group = scanner.groupindex["TEXT"]
    names = {index: name for name, index in scanner.groupindex.items()}
    meaning_of = _MEANING[dialect]
    meanings: dict[str, _Meaning] = {}  # per distinct token: node-dense input repeats a few keys
    nodes: list[Node] = []
    append = nodes.append
    find, count, rfind = source.find, source.count, source.rfind
    span: Any
    node: Any
    position = 0  # where the next token starts
    text_start = -1  # where the pending text starts, if any
    line, line_start = 1, 0  # the line counted up to, and the offset that line starts at
    next_newline = find("\n")  # the first newline not yet counted (-1: none left)

    for match in scanner.finditer(source):
        end = match.end()
        index = match.lastindex
        if index == text_group:
            if text_start < 0:
                text_start = position
            position = end
            continue
        token = match.group()
        start = end - len(token)
        if start != position and text_start < 0:  # text the grammar left unlexed (none does) stays text
            text_start = position
        position = end
        meaning = meanings.get(token, _UNSEEN)
        if meaning is _UNSEEN:
            meaning = meanings[token] = meaning_of(names[index], token)  # type: ignore[index]
        if meaning is None:
            if text_start < 0:
                text_start = start
            continue
        if text_start >= 0:
            if text_start > next_newline >= 0:
                line += count("\n", next_newline, text_start)
                line_start = rfind("\n", next_newline, text_start) + 1
                next_newline = find("\n", text_start)
            span = _SpanParts()
            span.start, span.end, span.line, span.column = text_start, start, line, text_start - line_start + 1
            span.__class__ = Span
            node = _LiteralParts()
            node.text, node.span = source[text_start:start], span
            node.__class__ = Literal
            append(node)
            text_start = -1
        if start > next_newline >= 0:
            line += count("\n", next_newline, start)
            line_start = rfind("\n", next_newline, start) + 1
            next_newline = find("\n", start)
        span = _SpanParts()
        span.start, span.end, span.line, span.column = start, end, line, start - line_start + 1
        span.__class__ = Span
        cls, value, optional = meaning
        if cls is Placeholder:
            node = _PlaceholderParts()
            node.key, node.optional, node.span = value, optional, span
            node.__class__ = Placeholder
        else:
            node = _EscapedParts()
            node.text, node.span = value, span
            node.__class__ = Escaped
        append(node)

    if position != len(source) and text_start < 0:
        text_start = position
    if text_start >= 0:
        if text_start > next_newline >= 0:
            line += count("\n", next_newline, text_start)
            line_start = rfind("\n", next_newline, text_start) + 1
        append(_literal(source, text_start, len(source), line, text_start - line_start + 1))
    return tuple(nodes)


def write_terminals() -> None:
    """Rewrite ``terminals.json`` from the grammars (after changing one): see the module docstring."""
    TERMINALS_FILE.write_text(json.dumps(terminals_data(), indent=2) + "\n", encoding="utf-8")
