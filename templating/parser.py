"""Source text to nodes. The only module that imports Lark; Lark's tokens and trees never leave it.

The angle syntax is defined by `grammar/instruction.lark` alone, and the ADK dialect (Google
ADK's `{key}`) by `grammar/adk.lark` alone, each compiled by Lark for its LALR parser.
Parsing is total: every string is a template, and text that is not a node is literal.

Each grammar's one rule is a flat sequence of tokens, so the tokens are the parse. We take the
terminals' patterns from the grammar as Lark compiles it and join them into one regular
expression, which hands over the tokens as plain strings (`findall`); a second one, of the
node terminals alone, tells once per distinct token which terminal it is. Nodes are built
straight from the strings: no match or Lark token objects per token, no tree, which would only
cost time. The test suite checks that Lark's full LALR parse agrees, token for token and node
for node (`lalr_nodes`).

So that a process does not pay for importing Lark and compiling the grammar (tens of
milliseconds) to parse one template, the terminals' patterns are also shipped, with a hash of the
grammar they came from, in `terminals.json` beside this module (written by `write_terminals()`).
They are used only while the hash matches the grammar being read; when the grammar changes, the
patterns are taken from Lark again (the same result, just slower to start), and a test fails
until the file is rewritten. Nothing is written at run time, so a read-only install and
concurrent processes are no concern.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._collector import paused
from .nodes import SCOPES, Dialect, Escaped, Literal, Node, Placeholder, Span, check_dialect, is_adk_state_name

if TYPE_CHECKING:
    from lark import Lark

__all__ = ["collector_paused", "grammar_text", "parse_nodes"]

_GRAMMARS: dict[Dialect, str] = {"angle": "instruction", "adk": "adk"}
TERMINALS_FILE = Path(__file__).with_name("terminals.json")
WRITE_COMMAND = '`python -c "from templating.parser import write_terminals; write_terminals()"`'


def grammar_text(name: str) -> str:
    """The text of `grammar/<name>.lark`: shipped inside the package, or beside it in a checkout."""
    filename = f"{name}.lark"
    here = Path(__file__).parent
    for path in (here / "grammar" / filename, here.parent / "grammar" / filename):
        if path.is_file():
            return path.read_text(encoding="utf-8")
    # Not on a file system (a zip archive, say): ask the import system for it.
    from importlib import resources

    return resources.files("templating").joinpath("grammar").joinpath(filename).read_text(encoding="utf-8")


def grammar_hash(text: str) -> str:
    """The hash that ties the shipped terminals to the grammar text Lark compiled them from."""
    digest: str = _sha256(text.encode("utf-8")).hexdigest()
    return digest


def _sha256(data: bytes) -> Any:
    """SHA-256 from the interpreter's own module when it has one: `hashlib` loads OpenSSL, about 2 ms of
    every process's start that parses a template (the same digest either way)."""
    for name in ("_sha2", "_sha256"):  # Python 3.12+, 3.11
        try:
            return importlib.import_module(name).sha256(data)
        except (ImportError, AttributeError):
            continue
    import hashlib

    return hashlib.sha256(data)


@cache
def _lark(name: str) -> Lark:
    from lark import Lark  # only here: the hot path never needs it (see the module docstring)

    return Lark(grammar_text(name), parser="lalr", lexer="basic")


def lark_terminals(name: str) -> dict[str, str]:
    """The terminals Lark compiles from `grammar/<name>.lark` (those its parser uses): name -> pattern."""
    return {terminal.name: terminal.pattern.to_regexp() for terminal in _lark(name).terminals}


def scanner_terminals(name: str) -> dict[str, str]:
    """The terminals Lark compiles from `grammar/<name>.lark`, in the order the scanner tries them.

    The grammars' terminals are disjoint (at no offset do two of them match: TEXT stops wherever
    a node could start), so the order cannot change a token; the ones that start with a fixed
    character come first and TEXT last, as that is the fastest order for the regular expression
    engine. The tests check the disjointness, and that the tokens agree with Lark's.
    """
    return dict(sorted(lark_terminals(name).items(), key=lambda item: (item[0] == "TEXT", item[0])))


def _shipped() -> dict[str, Any]:
    try:
        data = json.loads(TERMINALS_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@dataclass(frozen=True, slots=True)
class _Scanner:
    """The two expressions a grammar's terminals make.

    `tokens`: every terminal's pattern, one after another in one expression with no groups, so
    that `findall` hands over the tokens as plain strings (no match objects, no slots for the
    terminals that did not match). Last comes any one character: the grammars leave no text
    unmatched (TEXT takes the rest), and were one to, that text would still be text, where
    `findall` alone would skip it. `nodes`: the terminals other than TEXT, one named group
    each; matched where a token starts, it names the token's terminal (no match: TEXT).
    """

    tokens: re.Pattern[str]
    nodes: re.Pattern[str]


@cache
def _scanner(name: str) -> _Scanner:
    """The scanner for `grammar/<name>.lark`: from the shipped terminals while they match the grammar.

    A shipped entry that is not what `write_terminals()` writes (another format, no node
    terminal, a pattern that does not compile) is passed over for Lark's: slower to start, never wrong.
    """
    entry = _shipped().get(name)
    terminals = entry.get("terminals") if isinstance(entry, dict) else None
    scanner = None
    if (
        isinstance(entry, dict)
        and isinstance(terminals, dict)
        and "TEXT" in terminals
        and len(terminals) > 1
        and all(isinstance(pattern, str) for pattern in terminals.values())
        and entry.get("grammar_sha256") == grammar_hash(grammar_text(name))
    ):
        try:
            scanner = _compile(terminals)
        except re.error:
            scanner = None
    if scanner is None:
        scanner = _compile(scanner_terminals(name))
    if scanner.tokens.groups:  # findall() would hand back the groups instead of the tokens
        raise RuntimeError(f"grammar/{name}.lark: a terminal's pattern has a capturing group; use (?:...)")
    return scanner


def _compile(terminals: dict[str, str]) -> _Scanner:
    tokens = re.compile("|".join(f"(?:{pattern})" for pattern in terminals.values()) + r"|(?s:.)")
    others = [f"(?P<{terminal}>{pattern})" for terminal, pattern in terminals.items() if terminal != "TEXT"]
    return _Scanner(tokens, re.compile("|".join(others)))


def terminals_data() -> dict[str, Any]:
    """What `terminals.json` should hold for the grammars as they are now (compiled by Lark)."""
    data: dict[str, Any] = {
        "comment": f"Generated from grammar/*.lark by {WRITE_COMMAND}; do not edit.",
    }
    for name in sorted(_GRAMMARS.values()):
        data[name] = {"grammar_sha256": grammar_hash(grammar_text(name)), "terminals": scanner_terminals(name)}
    return data


def write_terminals() -> None:
    """Rewrite `terminals.json` from the grammars (after changing one): see the module docstring."""
    TERMINALS_FILE.write_text(json.dumps(terminals_data(), indent=2) + "\n", encoding="utf-8")


def lalr_tokens(source: str, *, dialect: Dialect = "angle") -> list[tuple[str, str]]:
    """The tokens of Lark's full LALR parse as `(type, text)` pairs; for tests of the fast path."""
    return [(kind, text) for kind, text, _, _, _ in _lalr_positioned(source, check_dialect(dialect))]


def _lalr_positioned(source: str, dialect: Dialect) -> list[tuple[str, str, int, int, int]]:
    """Lark's full LALR parse as `(type, text, offset, line, column)`: plain values, no Lark objects."""
    from lark import Token

    tree = _lark(_GRAMMARS[dialect]).parse(source)
    return [
        (tok.type, str(tok), tok.start_pos, tok.line, tok.column)  # type: ignore[misc]
        for tok in tree.children
        if isinstance(tok, Token)
    ]


def lalr_nodes(source: str, *, dialect: Dialect = "angle") -> tuple[Node, ...]:
    """Nodes built the plain way from Lark's full LALR parse (its tokens and their positions).

    The reference the fast path is tested against, node for node and span for span: the same
    rules (a token whose key Python's rules reject is text; adjacent text merges), none of the
    fast path's machinery.
    """
    dialect = check_dialect(dialect)
    nodes: list[Node] = []
    text_at: tuple[int, int, int] | None = None  # (offset, line, column) of pending text
    for kind, text, start, line, column in _lalr_positioned(source, dialect):
        meaning = None if kind == "TEXT" else _MEANING[dialect](kind, text)
        if meaning is None:
            text_at = text_at or (start, line, column)
            continue
        if text_at is not None:
            nodes.append(
                Literal(
                    source[text_at[0] : start], Span(start=text_at[0], end=start, line=text_at[1], column=text_at[2])
                )
            )
            text_at = None
        cls, value, optional = meaning
        span = Span(start=start, end=start + len(text), line=line, column=column)
        nodes.append(Placeholder(value, optional, span) if cls is Placeholder else Escaped(value, span))
    if text_at is not None:
        end = len(source)
        nodes.append(Literal(source[text_at[0] :], Span(start=text_at[0], end=end, line=text_at[1], column=text_at[2])))
    return tuple(nodes)


def lexer_tokens(source: str, *, dialect: Dialect = "angle") -> list[tuple[str, str]]:
    """The tokens the fast path builds nodes from, as `(type, text)` pairs, each typed where it stands."""
    scanner = _scanner(_GRAMMARS[check_dialect(dialect)])
    tokens: list[tuple[str, str]] = []
    position = 0
    for token in scanner.tokens.findall(source):
        match = scanner.nodes.match(source, position)
        tokens.append((match.lastgroup or "TEXT" if match else "TEXT", token))
        position += len(token)
    return tokens


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
    """Parse `source`, written in `dialect`, into nodes.

    Never raises on a string; results are cached per `(source, dialect)`.
    """
    if not isinstance(source, str):  # checked before the cache, which would only say "unhashable"
        raise TypeError(f"a template source must be a str, not {type(source).__name__}")
    return _cached(source, check_dialect(dialect))


# A parse, and the render plan built from it, make only acyclic objects (nodes, spans, strings,
# tuples of them): the cyclic garbage collector has nothing to find in them, but as they pile up it
# passes over them again and again (a third of the time of a megabyte of nodes, and more than half
# of its plan's). The collector is paused while a large source is parsed or planned, and resumed after.
_PAUSE_COLLECTOR_FROM = 100_000  # characters


@contextmanager
def collector_paused(size: int) -> Iterator[None]:
    """The cyclic garbage collector paused while the objects of a source of `size` characters are made,
    when it is large (from `_PAUSE_COLLECTOR_FROM`), for the parser and the render plan alike.

    Safe across threads and nesting, with every other pause of the collector (`templating._collector`).
    """
    if size < _PAUSE_COLLECTOR_FROM:
        yield
        return
    with paused():
        yield


@lru_cache(maxsize=256)
def _cached(source: str, dialect: Dialect) -> tuple[Node, ...]:
    with collector_paused(len(source)):
        return _build(source, dialect)


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


def _adk_meaning(kind: str, text: str) -> _Meaning:
    """A PLACEHOLDER token of the ADK dialect."""
    key = text[1:-1].strip()
    optional = key.endswith("?")
    if optional:
        key = key[:-1]
    return (Placeholder, key, optional) if is_adk_state_name(key) else None


_MEANING: dict[Dialect, Callable[[str, str], _Meaning]] = {"angle": _angle_meaning, "adk": _adk_meaning}


def _parts(cls: type) -> type:
    """A plain class with the same slots as the node class `cls`: see `_build`."""
    return type(f"_{cls.__name__}Parts", (), {"__slots__": vars(cls)["__slots__"], "__module__": __name__})


# Nodes and spans are frozen dataclasses: their generated __init__, and any other way of filling
# their slots from outside, costs a call per field. A parse makes a node and a span for every
# token, so _build fills an instance of a plain class with the same slots (plain attribute
# stores), then makes it the frozen class by assigning __class__, which Python allows between
# classes of the same layout (and refuses with a TypeError otherwise). The result is an ordinary
# instance of the node class (tests check it equals one made by the constructor), at a third of
# the cost.
_SpanParts, _LiteralParts, _PlaceholderParts, _EscapedParts = map(_parts, (Span, Literal, Placeholder, Escaped))


def _token_facts(token: str, source: str, position: int, dialect: Dialect, nodes: re.Pattern[str]) -> tuple[Any, ...]:
    """What _build needs to know about a distinct token, worked out once per parse where it first stands.

    `(parts class, key or text, optional (None for an escape), length, newlines in it, offset
    after its last newline)`; for text (TEXT, or a token whose key Python's rules reject) the
    first three are None. The same string is the same token wherever it stands, because the
    terminals are disjoint and a node terminal decides its match from its own characters alone
    (see the contributing page; the tests check both, and the property itself).
    """
    newlines = after_newline = 0
    if "\n" in token:
        newlines, after_newline = token.count("\n"), token.rfind("\n") + 1
    match = nodes.match(source, position)
    if match is not None and match.lastgroup is not None:
        meaning = _MEANING[dialect](match.lastgroup, token)
        if meaning is not None:
            cls, value, optional = meaning
            if cls is Placeholder:
                return (_PlaceholderParts, value, optional, len(token), newlines, after_newline)
            return (_EscapedParts, value, None, len(token), newlines, after_newline)
    return (None, None, None, len(token), newlines, after_newline)


def _build(source: str, dialect: Dialect) -> tuple[Node, ...]:
    """Nodes from the dialect's tokens. A token that stands for no node (a key Python's rules
    reject) is text; adjacent text, from TEXT tokens or such tokens, merges into one Literal.

    The hot loop of every parse: node-dense input makes one pass per node, so it is written for
    speed. `findall` hands over the tokens as plain strings; each distinct token is looked at
    once; offsets, lines and columns are counted from the lengths. Fields are stored one
    statement each (a tuple assignment of four builds and unpacks a tuple: 7% of a dense parse).
    """
    scanner = _scanner(_GRAMMARS[dialect])
    nodes_expression = scanner.nodes
    facts: dict[str, tuple[Any, ...]] = {}
    known_facts = facts.get
    nodes: list[Node] = []
    append = nodes.append
    span: Any
    node: Any
    position = 0
    line, before_line = 1, -1  # the current line, and the offset before its first character
    text_start = -1  # where pending text starts, if any (and its line and column)
    text_line = text_column = 0
    text: str | None = None

    for token in scanner.tokens.findall(source):
        known = known_facts(token)
        if known is None:
            known = facts[token] = _token_facts(token, source, position, dialect, nodes_expression)
        parts_cls, value, optional, length, newlines, after_newline = known
        if parts_cls is None:  # text
            if text_start < 0:
                text_start, text_line, text_column = position, line, position - before_line
                text = token  # the Literal's text while no other text joins it (no copy to make)
            else:
                text = None
            if newlines:
                line += newlines
                before_line = position + after_newline - 1
            position += length
            continue
        if text_start >= 0:
            span = _SpanParts()
            span.start = text_start
            span.end = position
            span.line = text_line
            span.column = text_column
            span.__class__ = Span
            node = _LiteralParts()
            node.text = source[text_start:position] if text is None else text
            node.span = span
            node.__class__ = Literal
            append(node)
            text_start = -1
        # One new int per offset: a node's end is the next token's start (the same object).
        end = position + length
        span = _SpanParts()
        span.start = position
        span.end = end
        span.line = line
        span.column = position - before_line
        span.__class__ = Span
        node = parts_cls()
        if optional is None:
            node.text = value
            node.span = span
            node.__class__ = Escaped
        else:
            node.key = value
            node.optional = optional
            node.span = span
            node.__class__ = Placeholder
        append(node)
        if newlines:  # a node spread over lines (the ADK dialect allows white space inside the braces)
            line += newlines
            before_line = position + after_newline - 1
        position = end

    if text_start >= 0:
        span = _SpanParts()
        span.start = text_start
        span.end = len(source)
        span.line = text_line
        span.column = text_column
        span.__class__ = Span
        node = _LiteralParts()
        node.text = source[text_start:] if text is None else text
        node.span = span
        node.__class__ = Literal
        append(node)
    return tuple(nodes)
