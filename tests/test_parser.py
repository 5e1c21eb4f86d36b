"""The grammar and the parser: every row of the syntax table, and properties over all strings."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from templating import Escaped, Literal, Placeholder, Span
from templating.parser import lalr_tokens, lexer_tokens, parse_nodes

# (template, expected nodes as (kind, text-or-key, optional)); spans are checked separately.
SYNTAX = [
    ("required", "Hello <name>!", [("L", "Hello "), ("P", "name", False), ("L", "!")]),
    ("optional", "Hi <nick?>.", [("L", "Hi "), ("P", "nick", True), ("L", ".")]),
    (
        "scopes",
        "<user:lang> <app:tier> <temp:step>",
        [("P", "user:lang", False), ("L", " "), ("P", "app:tier", False), ("L", " "), ("P", "temp:step", False)],
    ),
    ("escape", "<<name>>", [("E", "<name>")]),
    ("escape-optional", "<<name?>>", [("E", "<name?>")]),
    ("escape-in-brackets", "<<<name>>>", [("L", "<"), ("E", "<name>"), ("L", ">")]),
    ("extra-open", "<<name>", [("L", "<"), ("P", "name", False)]),
    ("extra-close", "<name>>", [("P", "name", False), ("L", ">")]),
    ("path", "<user:profile.name>", [("P", "user:profile.name", False)]),
    ("index", "<items.1>", [("P", "items.1", False)]),
    ("index-optional", "<items.9?>", [("P", "items.9", True)]),
    ("unicode-identifier", "<café> <名前>", [("P", "café", False), ("L", " "), ("P", "名前", False)]),
    ("underscore", "<_private_1>", [("P", "_private_1", False)]),
    ("adjacent", "<a><b?>", [("P", "a", False), ("P", "b", True)]),
    ("multiline", "one\n<two>\nthree", [("L", "one\n"), ("P", "two", False), ("L", "\nthree")]),
    ("empty", "", []),
]

LITERAL = [
    ("spaces", "< name >"),
    ("space-before", "<name >"),
    ("dash", "<bad-name>"),
    ("leading-digit", "<1x>"),
    ("closing-tag", "</tag>"),
    ("html-attribute", '<a href="x">'),
    ("unknown-scope", "<other:key>"),
    ("empty-scope", "<user:>"),
    ("trailing-dot", "<a.>"),
    ("shift-operators", "x << 2 >> 1"),
    ("unclosed", "<name"),
    ("json-and-braces", '{"a": {name}} {{name}}'),
    ("double-question", "<name??>"),
    ("empty-brackets", "<>"),
    ("bad-segment", "<a.1b>"),
    ("negative-index", "<a.-1>"),
    ("double-dot", "<a..b>"),
    ("scope-only-escape", "<<user:>>"),
    ("non-identifier-unicode", "<a²>"),
    ("lone-brackets", "< > << >> <<<>>>"),
    ("question-inside", "<a?b>"),
    ("tab-inside", "<a\tb>"),
]


def shape(source: str) -> list[tuple[object, ...]]:
    out: list[tuple[object, ...]] = []
    for node in parse_nodes(source):
        match node:
            case Literal(text=text):
                out.append(("L", text))
            case Escaped(text=text):
                out.append(("E", text))
            case Placeholder(key=key, optional=optional):
                out.append(("P", key, optional))
    return out


@pytest.mark.parametrize(("source", "expected"), [case[1:] for case in SYNTAX], ids=[case[0] for case in SYNTAX])
def test_syntax(source: str, expected: list[tuple[object, ...]]) -> None:
    assert shape(source) == expected


@pytest.mark.parametrize("source", [case[1] for case in LITERAL], ids=[case[0] for case in LITERAL])
def test_not_a_placeholder_is_literal(source: str) -> None:
    assert shape(source) == [("L", source)]


@pytest.mark.parametrize(
    ("source", "spans"),
    [
        ("ab<c>d", [Span(0, 2, 1, 1), Span(2, 5, 1, 3), Span(5, 6, 1, 6)]),
        ("x\n  <<y>> <z?>", [Span(0, 4, 1, 1), Span(4, 9, 2, 3), Span(9, 10, 2, 8), Span(10, 14, 2, 9)]),
        ("<1x> <a>", [Span(0, 5, 1, 1), Span(5, 8, 1, 6)]),
    ],
    ids=["one-line", "second-line", "demoted-token-merges-into-text"],
)
def test_spans(source: str, spans: list[Span]) -> None:
    assert [node.span for node in parse_nodes(source)] == spans


def test_parse_is_cached() -> None:
    source = "cached <x> " * 3
    assert parse_nodes(source) is parse_nodes(source)


def test_non_string_source_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="must be a str, not bytes"):
        parse_nodes(b"<x>")  # type: ignore[arg-type]


# Strings rich in the characters that matter, so the properties explore the grammar's edges.
templates = st.lists(st.sampled_from([*list("<>?.:_ab1 \n{}é²-"), "user:", "app:", "temp:"]), max_size=30).map(
    "".join
) | st.text(max_size=40)


@settings(max_examples=400)
@given(templates)
def test_parsing_is_total_and_covers_the_source(source: str) -> None:
    nodes = parse_nodes(source)
    position = 0
    for node in nodes:
        assert node.span.start == position
        assert node.span.end > node.span.start
        position = node.span.end
        # Line and column agree with the offset.
        before = source[: node.span.start]
        assert node.span.line == before.count("\n") + 1
        assert node.span.column == node.span.start - (before.rfind("\n") + 1) + 1
    assert position == len(source)
    # No two literals in a row: text is merged.
    assert not any(isinstance(a, Literal) and isinstance(b, Literal) for a, b in itertools.pairwise(nodes))


@settings(max_examples=400)
@given(templates)
def test_full_lalr_parse_agrees_with_the_lexer(source: str) -> None:
    assert lalr_tokens(source) == lexer_tokens(source)


@settings(max_examples=300)
@given(templates)
def test_placeholders_are_what_the_source_says(source: str) -> None:
    for node in parse_nodes(source):
        text = source[node.span.start : node.span.end]
        match node:
            case Placeholder():
                assert text == node.source
            case Escaped():
                assert text == f"<{node.text}>"
            case Literal():
                assert text == node.text


@pytest.mark.parametrize(
    "source",
    ["<" * 50_000, "<<<<a" * 10_000, "<a" * 25_000, "<" + "a." * 25_000, "< " * 25_000, "<a:b>" * 10_000],
    ids=["lt-run", "lt-runs-before-a", "lt-a", "long-dotted-key", "lt-space", "bad-scope"],
)
def test_adversarial_input_parses_to_one_literal(source: str) -> None:
    # Correctness on the inputs the benchmark times; speed itself is measured by bench/, not here.
    assert shape(source) == [("L", source)]
