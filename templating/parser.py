"""Source text to nodes. The only module that imports Lark; Lark's tokens and trees never leave it.

The angle syntax is defined by ``grammar/instruction.lark`` alone, and the ADK dialect (Google
ADK's ``{key}``) by ``grammar/adk.lark`` alone, each compiled by Lark for its LALR parser.
Parsing is total: every string is a template, and text that is not a node is literal.

Each grammar's one rule is a flat sequence of tokens, so the tokens are the parse. We take the
terminals' patterns from the grammar as Lark compiles it, join them into one regular expression
(one named group per terminal), split the source with it and build nodes straight from the
pieces: no match or Lark token objects, no tree, which would only cost time. The test suite
checks that Lark's full LALR parse agrees, token for token and node for node (``lalr_nodes``).

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

    One capturing group per terminal, named after it and holding its pattern as Lark compiled
    it. The grammars' terminals are disjoint (at no offset do two of them match: TEXT stops
    wherever a node could start), so the order they are tried in cannot change a token; the
    ones that start with a fixed character come first and TEXT last, as that is the fastest
    order for the regular expression engine. The tests check the disjointness, and that the
    tokens agree with Lark's.
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
        scanner = re.compile(entry["pattern"])
    else:
        scanner = re.compile(lark_expression(name))
    if scanner.groups != len(scanner.groupindex):  # split() would hand back the inner groups too
        raise RuntimeError(f"grammar/{name}.lark: a terminal's pattern has a capturing group; use (?:...)")
    return scanner


def terminals_data() -> dict[str, Any]:
    """What ``terminals.json`` should hold for the grammars as they are now (compiled by Lark)."""
    data: dict[str, Any] = {
        "comment": f"Generated from grammar/*.lark by {WRITE_COMMAND}; do not edit.",
    }
    for name in sorted(_GRAMMARS.values()):
        data[name] = {"grammar_sha256": grammar_hash(grammar_text(name)), "pattern": lark_expression(name)}
    return data


def write_terminals() -> None:
    """Rewrite ``terminals.json`` from the grammars (after changing one): see the module docstring."""
    TERMINALS_FILE.write_text(json.dumps(terminals_data(), indent=2) + "\n", encoding="utf-8")


def lalr_tokens(source: str, *, dialect: Dialect = "angle") -> list[tuple[str, str]]:
    """The tokens of Lark's full LALR parse as ``(type, text)`` pairs; for tests of the fast path."""
    return [(kind, text) for kind, text, _, _, _ in _lalr_positioned(source, check_dialect(dialect))]


def _lalr_positioned(source: str, dialect: Dialect) -> list[tuple[str, str, int, int, int]]:
    """Lark's full LALR parse as ``(type, text, offset, line, column)``: plain values, no Lark objects."""
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
    """The tokens the fast path builds nodes from, as ``(type, text)`` pairs."""
    names, parts = _split(source, check_dialect(dialect))
    step = len(names) + 1
    tokens: list[tuple[str, str]] = []
    for index in range(0, len(parts), step):
        gap = parts[index]
        if gap:  # text no terminal matched (the grammars leave none): text all the same
            tokens.append(("TEXT", gap))
        tokens.extend((name, text) for name, text in zip(names, parts[index + 1 : index + step], strict=False) if text)
    return tokens


def _split(source: str, dialect: Dialect) -> tuple[tuple[str, ...], list[str | None]]:
    """The terminals' names in group order, and ``source`` split by the scanner: text no terminal
    matched, then one slot per terminal (the token in its terminal's slot, None in the others),
    repeated, and the text after the last token."""
    scanner, names = _scanner_and_names(_GRAMMARS[dialect])
    return names, scanner.split(source)


@cache
def _scanner_and_names(name: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
    scanner = _scanner(name)
    return scanner, tuple(sorted(scanner.groupindex, key=scanner.groupindex.__getitem__))


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


_MEANING: dict[Dialect, Callable[[str, str], _Meaning]] = {"angle": _angle_meaning, "adk": _adk_meaning}


def _parts(cls: type) -> type:
    """A plain class with the same slots as the node class ``cls``: see ``_build``."""
    return type(f"_{cls.__name__}Parts", (), {"__slots__": vars(cls)["__slots__"], "__module__": __name__})


# Nodes and spans are frozen dataclasses: their generated __init__, and any other way of filling
# their slots from outside, costs a call per field. A parse makes a node and a span for every
# token, so _build fills an instance of a plain class with the same slots (plain attribute
# stores), then makes it the frozen class by assigning __class__, which Python allows between
# classes of the same layout (and refuses with a TypeError otherwise). The result is an ordinary
# instance of the node class (tests check it equals one made by the constructor), at a third of
# the cost.
_SpanParts, _LiteralParts, _PlaceholderParts, _EscapedParts = map(_parts, (Span, Literal, Placeholder, Escaped))


def _token_facts(kind: str, token: str, dialect: Dialect) -> tuple[Any, ...]:
    """What _build needs to know about a distinct token, worked out once per parse.

    ``(parts class or None when the token is text after all, node class, key or text, optional,
    length, newlines in it, offset after its last newline)``.
    """
    meaning = _MEANING[dialect](kind, token)
    newlines = token.count("\n")
    after_newline = token.rfind("\n") + 1
    if meaning is None:
        return (None, None, "", False, len(token), newlines, after_newline)
    cls, value, optional = meaning
    parts = _PlaceholderParts if cls is Placeholder else _EscapedParts
    return (parts, cls, value, optional, len(token), newlines, after_newline)


def _build(source: str, dialect: Dialect) -> tuple[Node, ...]:
    """Nodes from the dialect's tokens. A token that stands for no node (a key Python's rules
    reject) is text; adjacent text, from TEXT tokens or such tokens, merges into one Literal.

    The hot loop of every parse: node-dense input makes one pass per node, so it is written for
    speed. ``split`` hands over the tokens as plain strings in their terminals' slots, with no
    match objects; each distinct node token is looked at once; offsets, lines and columns are
    counted from the lengths.
    """
    names, parts = _split(source, dialect)
    step = len(names) + 1
    text_slot = names.index("TEXT")
    unmatched = parts[::step]  # text no terminal matched: empty strings, as TEXT covers the rest
    tokens = zip(*(parts[group::step] for group in range(1, step)), strict=True)
    facts: dict[tuple[str | None, ...], tuple[Any, ...]] = {}
    nodes: list[Node] = []
    append = nodes.append
    span: Any
    node: Any
    position = 0
    line, line_start = 1, 0  # the current line, and the offset it starts at
    text_start = -1  # where pending text starts, if any (and its line and column)
    text_line = text_column = 0

    for gap, token in zip(unmatched, tokens, strict=False):
        lexed_text = token[text_slot]
        text = gap if lexed_text is None else gap + lexed_text if gap else lexed_text
        if text:
            if text_start < 0:
                text_start, text_line, text_column = position, line, position - line_start + 1
            if "\n" in text:
                line += text.count("\n")
                line_start = position + text.rfind("\n") + 1
            position += len(text)
            if lexed_text is not None:
                continue
        known = facts.get(token)
        if known is None:
            index = next(i for i, group in enumerate(token) if group is not None)
            known = facts[token] = _token_facts(names[index], token[index], dialect)
        parts_cls, cls, value, optional, length, newlines, after_newline = known
        if parts_cls is None:  # text after all
            if text_start < 0:
                text_start, text_line, text_column = position, line, position - line_start + 1
        else:
            if text_start >= 0:
                span = _SpanParts()
                span.start, span.end, span.line, span.column = text_start, position, text_line, text_column
                span.__class__ = Span
                node = _LiteralParts()
                node.text, node.span = source[text_start:position], span
                node.__class__ = Literal
                append(node)
                text_start = -1
            span = _SpanParts()
            span.start, span.end, span.line, span.column = position, position + length, line, position - line_start + 1
            span.__class__ = Span
            node = parts_cls()
            if cls is Placeholder:
                node.key, node.optional, node.span = value, optional, span
            else:
                node.text, node.span = value, span
            node.__class__ = cls
            append(node)
        if newlines:
            line += newlines
            line_start = position + after_newline
        position += length

    if unmatched[-1] and text_start < 0:
        text_start, text_line, text_column = position, line, position - line_start + 1
    if text_start >= 0:
        span = _SpanParts()
        span.start, span.end, span.line, span.column = text_start, len(source), text_line, text_column
        span.__class__ = Span
        node = _LiteralParts()
        node.text, node.span = source[text_start:], span
        node.__class__ = Literal
        append(node)
    return tuple(nodes)
