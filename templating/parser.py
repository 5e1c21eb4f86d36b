"""Source text to nodes. The only module that imports Lark; Lark's tokens and trees never leave it.

The angle syntax is defined by ``grammar/instruction.lark`` alone, and the ADK dialect (Google
ADK's ``{key}``) by ``grammar/adk.lark`` alone, each compiled by Lark for its LALR parser.
Parsing is total: every string is a template, and text that is not a node is literal.

Each grammar's one rule is a flat sequence of tokens, so the tokens Lark's lexer produces from
the grammar are the parse: we build nodes straight from them and skip the tree, which would only
cost time (the test suite checks that the full LALR parse agrees, token for token).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path

from lark import Lark, Token

from .nodes import SCOPE_PREFIXES, Dialect, Escaped, Literal, Node, Placeholder, Span, check_dialect

__all__ = ["grammar_text", "parse_nodes"]

_GRAMMARS: dict[Dialect, str] = {"angle": "instruction", "adk": "adk"}


def grammar_text(name: str) -> str:
    """The text of ``grammar/<name>.lark``: shipped inside the package, or beside it in a checkout."""
    filename = f"{name}.lark"
    packaged = resources.files("templating").joinpath("grammar").joinpath(filename)
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    checkout = Path(__file__).resolve().parent.parent / "grammar" / filename
    return checkout.read_text(encoding="utf-8")


@cache
def _lark(name: str) -> Lark:
    return Lark(grammar_text(name), parser="lalr", lexer="basic")


def _tokens(source: str, dialect: Dialect) -> Iterator[Token]:
    return _lark(_GRAMMARS[dialect]).lex(source)


def lalr_tokens(source: str, *, dialect: Dialect = "angle") -> list[tuple[str, str]]:
    """The tokens of Lark's full LALR parse as ``(type, text)`` pairs; for tests of the fast path."""
    tree = _lark(_GRAMMARS[check_dialect(dialect)]).parse(source)
    return [(tok.type, str(tok)) for tok in tree.children if isinstance(tok, Token)]


def lexer_tokens(source: str, *, dialect: Dialect = "angle") -> list[tuple[str, str]]:
    """The tokens the fast path builds nodes from, as ``(type, text)`` pairs."""
    return [(tok.type, str(tok)) for tok in _tokens(source, check_dialect(dialect))]


def _valid_key(key: str) -> bool:
    """Python's own rules for the segments the grammar let through (see the grammar's comments)."""
    for prefix in SCOPE_PREFIXES:
        if key.startswith(prefix):
            key = key[len(prefix) :]
            break
    first, *rest = key.split(".")
    if not first.isidentifier():
        return False
    return all(seg.isidentifier() or (seg.isascii() and seg.isdigit()) for seg in rest)


def parse_nodes(source: str, dialect: Dialect = "angle") -> tuple[Node, ...]:
    """Parse ``source``, written in ``dialect``, into nodes.

    Never raises on a string; results are cached per ``(source, dialect)``.
    """
    if not isinstance(source, str):  # checked before the cache, which would only say "unhashable"
        raise TypeError(f"a template source must be a str, not {type(source).__name__}")
    return _cached(source, check_dialect(dialect))


@lru_cache(maxsize=256)
def _cached(source: str, dialect: Dialect) -> tuple[Node, ...]:
    return _build(source, dialect)


def _angle_node(token: Token, span: Span) -> Node | None:
    """The node an ESCAPE or PLACEHOLDER token of the angle syntax stands for, or None if it is text."""
    width = 2 if token.type == "ESCAPE" else 1
    key = token.value[width:-width]
    optional = key.endswith("?")
    if optional:
        key = key[:-1]
    if not _valid_key(key):
        return None
    return Escaped(token.value[1:-1], span) if token.type == "ESCAPE" else Placeholder(key, optional, span)


def _valid_adk_key(key: str) -> bool:
    """ADK's rule: an identifier, or a known scope and an identifier (nothing else: no paths)."""
    for prefix in SCOPE_PREFIXES:
        if key.startswith(prefix):
            key = key[len(prefix) :]
            break
    return key.isidentifier()


def _adk_node(token: Token, span: Span) -> Node | None:
    """The node a PLACEHOLDER token of the ADK dialect stands for, or None if it is text."""
    key = token.value[1:-1].strip()
    optional = key.endswith("?")
    if optional:
        key = key[:-1]
    return Placeholder(key, optional, span) if _valid_adk_key(key) else None


_NODE_OF: dict[Dialect, Callable[[Token, Span], Node | None]] = {"angle": _angle_node, "adk": _adk_node}


def _build(source: str, dialect: Dialect) -> tuple[Node, ...]:
    """Nodes from the dialect's tokens. A token that stands for no node (a key Python's rules
    reject) is text; adjacent text, from TEXT tokens or such tokens, merges into one Literal."""
    node_of = _NODE_OF[dialect]
    nodes: list[Node] = []
    text_start = -1
    text_line = text_column = 0
    for token in _tokens(source, dialect):
        start: int = token.start_pos  # type: ignore[assignment]  # the lexer sets every position
        if token.type != "TEXT":
            node = node_of(token, Span(start, token.end_pos, token.line, token.column))  # type: ignore[arg-type]
            if node is not None:
                if text_start >= 0:
                    nodes.append(Literal(source[text_start:start], Span(text_start, start, text_line, text_column)))
                    text_start = -1
                nodes.append(node)
                continue
        if text_start < 0:
            text_start, text_line, text_column = start, token.line, token.column  # type: ignore[assignment]
    if text_start >= 0:
        end = len(source)
        nodes.append(Literal(source[text_start:end], Span(text_start, end, text_line, text_column)))
    return tuple(nodes)
