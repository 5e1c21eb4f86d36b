"""The grammar and the parser: every row of the syntax table, and properties over all strings."""

from __future__ import annotations

import dataclasses
import gc
import itertools
import json
import re
import re._constants as re_constants  # type: ignore[import-not-found]
import re._parser as re_parser  # type: ignore[import-not-found]  # the re module's own parser: to look inside terminals
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import templating.template
from templating import Escaped, Literal, MissingKeyError, Placeholder, Span, Template
from templating import parser as parser_module
from templating.linter import lint
from templating.parser import (
    TERMINALS_FILE,
    WRITE_COMMAND,
    collector_paused,
    lalr_nodes,
    lalr_tokens,
    lark_terminals,
    lexer_tokens,
    parse_nodes,
    scanner_terminals,
    terminals_data,
    write_terminals,
)

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


@settings(max_examples=400, deadline=None)
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


@settings(max_examples=400, deadline=None)
@given(templates)
def test_full_lalr_parse_agrees_with_the_lexer(source: str) -> None:
    assert lalr_tokens(source) == lexer_tokens(source)


@settings(max_examples=300, deadline=None)
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


def angle_reference(source: str) -> list[tuple[object, ...]]:
    """The angle syntax's rules as a plain left-to-right scan, written independently of the grammar."""

    def valid(key: str) -> bool:
        for scope in ("app:", "user:", "temp:"):
            if key.startswith(scope):
                key = key[len(scope) :]
                break
        first, *rest = key.split(".")
        return first.isidentifier() and all(p.isidentifier() or (p.isascii() and p.isdigit()) for p in rest)

    out: list[tuple[object, ...]] = []
    text = ""
    i = 0
    while i < len(source):
        for width in (2, 1):  # an escape first, then a placeholder, both starting here
            close = source.find(">", i + width)
            inner = source[i + width : close] if close >= 0 else ""
            if (
                source.startswith("<" * width, i)
                and source.startswith(">" * width, close)
                and "<" not in inner
                and valid(inner.removesuffix("?"))
            ):
                if text:
                    out.append(("L", text))
                    text = ""
                if width == 2:
                    out.append(("E", f"<{inner}>"))
                else:
                    out.append(("P", inner.removesuffix("?"), inner.endswith("?")))
                i = close + width
                break
        else:
            text += source[i]
            i += 1
    if text:
        out.append(("L", text))
    return out


@settings(max_examples=500, deadline=None)
@given(templates)
def test_nodes_match_a_plain_scan_of_the_rules(source: str) -> None:
    assert shape(source) == angle_reference(source)


@pytest.mark.parametrize(
    "source",
    ["<" * 50_000, "<<<<a" * 10_000, "<a" * 25_000, "<" + "a." * 25_000, "< " * 25_000, "<a:b>" * 10_000],
    ids=["lt-run", "lt-runs-before-a", "lt-a", "long-dotted-key", "lt-space", "bad-scope"],
)
def test_adversarial_input_parses_to_one_literal(source: str) -> None:
    # Correctness on the inputs the benchmark times; speed itself is measured by bench/, not here.
    assert shape(source) == [("L", source)]


# The ADK dialect (grammar/adk.lark): Google ADK's {key} syntax, following ADK's documentation.
ADK_SYNTAX = [
    ("required", "Hello {name}!", [("L", "Hello "), ("P", "name", False), ("L", "!")]),
    ("optional", "Hi {nick?}.", [("L", "Hi "), ("P", "nick", True), ("L", ".")]),
    ("spaces-inside", "{ name }", [("P", "name", False)]),
    ("spaces-around-optional", "{  nick?  }", [("P", "nick", True)]),
    ("newlines-and-tabs-inside", "{\n\tname\n}", [("P", "name", False)]),
    (
        "scopes",
        "{app:tier} {user:lang} {temp:step}",
        [("P", "app:tier", False), ("L", " "), ("P", "user:lang", False), ("L", " "), ("P", "temp:step", False)],
    ),
    ("json-keeps-its-braces", '{"x": {key}}', [("L", '{"x": '), ("P", "key", False), ("L", "}")]),
    ("extra-close-is-text", "{key}}}", [("P", "key", False), ("L", "}}")]),
    ("brace-space-then-placeholder", "{ {key}", [("L", "{ "), ("P", "key", False)]),
    ("adjacent", "{a}{b?}", [("P", "a", False), ("P", "b", True)]),
    ("unicode-identifier", "{café} {名前}", [("P", "café", False), ("L", " "), ("P", "名前", False)]),
    ("keyword-is-an-identifier", "{class}", [("P", "class", False)]),
    ("angle-brackets-are-text", "<name> {name}", [("L", "<name> "), ("P", "name", False)]),
    ("multiline", "one\n{two}\nthree", [("L", "one\n"), ("P", "two", False), ("L", "\nthree")]),
    ("dollar-elsewhere", "$5 {price}", [("L", "$5 "), ("P", "price", False)]),
    ("empty", "", []),
    ("after-a-double-brace-span", "{{ {a} }} {b}", [("L", "{{ {a} }} "), ("P", "b", False)]),
    ("span-ends-at-the-first-close", "{{ x }} {a} }}", [("L", "{{ x }} "), ("P", "a", False), ("L", " }}")]),
    ("unclosed-double-braces-open-nothing", "{{ {a} ", [("L", "{{ "), ("P", "a", False), ("L", " ")]),
    (
        "double-braces-before-another-open-nothing",
        "{{ {a} {{ b }}",
        [("L", "{{ "), ("P", "a", False), ("L", " {{ b }}")],
    ),
]

ADK_LITERAL = [
    ("double-braces", "{{name}}"),
    ("double-braces-spaces", "{{ name }}"),
    ("triple-braces", "{{{name}}}"),
    ("double-open-only", "{{name}"),
    ("unknown-scope", "{other:key}"),
    ("empty-scope", "{user:}"),
    ("two-scopes", "{user:app:key}"),
    ("path-is-not-adk", "{a.b}"),
    ("artifact", "{artifact.notes}"),
    ("dash", "{bad-name}"),
    ("leading-digit", "{1x}"),
    ("space-inside-key", "{a b}"),
    ("space-before-question", "{name ?}"),
    ("double-question", "{name??}"),
    ("question-only", "{?}"),
    ("empty-braces", "{}"),
    ("blank-braces", "{   }"),
    ("non-identifier-unicode", "{a²}"),
    ("dollar-brace", "${name}"),
    ("backslash-brace", "\\{name}"),
    ("unclosed", "{name"),
    ("json", '{"a": 1, "b": [1, 2]}'),
    ("lone-braces", "{ } {{ }} }{"),
    ("placeholder-inside-double-braces", "{{ {name} }}"),
    ("placeholders-inside-double-braces", "{{ a {name?} b {user:x} }}"),
    ("braces-inside-double-braces", "{{ {} } { }}"),
    ("dollar-double-braces", "${{ {name} }}"),
    ("backslash-double-braces", "\\{{ {name} }}"),
    ("double-braces-then-text", "{{ {name} }}}"),
]


def adk_shape(source: str) -> list[tuple[object, ...]]:
    return [
        ("P", node.key, node.optional) if isinstance(node, Placeholder) else ("L", node.text)
        for node in parse_nodes(source, "adk")
    ]


@pytest.mark.parametrize(
    ("source", "expected"), [case[1:] for case in ADK_SYNTAX], ids=[case[0] for case in ADK_SYNTAX]
)
def test_adk_syntax(source: str, expected: list[tuple[object, ...]]) -> None:
    assert adk_shape(source) == expected


@pytest.mark.parametrize("source", [case[1] for case in ADK_LITERAL], ids=[case[0] for case in ADK_LITERAL])
def test_adk_not_a_placeholder_is_literal(source: str) -> None:
    assert adk_shape(source) == [("L", source)]


@pytest.mark.parametrize(
    ("source", "spans"),
    [
        ("ab{ c? }d", [Span(0, 2, 1, 1), Span(2, 8, 1, 3), Span(8, 9, 1, 9)]),
        ("x\n  {{y}} {z}", [Span(0, 10, 1, 1), Span(10, 13, 2, 9)]),
        ("{1x} {a}", [Span(0, 5, 1, 1), Span(5, 8, 1, 6)]),
    ],
    ids=["one-line", "double-braces-merge-into-text", "demoted-token-merges-into-text"],
)
def test_adk_spans(source: str, spans: list[Span]) -> None:
    assert [node.span for node in parse_nodes(source, "adk")] == spans


def test_the_same_source_parses_per_dialect() -> None:
    assert adk_shape("<a> {a}") == [("L", "<a> "), ("P", "a", False)]
    assert shape("<a> {a}") == [("P", "a", False), ("L", " {a}")]
    assert parse_nodes("<a> {a}", "adk") is parse_nodes("<a> {a}", "adk")
    assert parse_nodes("<a> {a}", "adk") is not parse_nodes("<a> {a}")


def test_unknown_dialect_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="dialect= must be 'angle' or 'adk', not 'jinja'"):
        parse_nodes("{a}", "jinja")  # type: ignore[arg-type]


adk_templates = st.lists(
    st.sampled_from([*list("{}?:_ab1 \n\t$\\<>.é²-"), "{{", "}}", "user:", "app:", "temp:", "other:"]), max_size=30
).map("".join) | st.text(max_size=40)


@settings(max_examples=400, deadline=None)
@given(adk_templates)
def test_adk_parsing_is_total_and_covers_the_source(source: str) -> None:
    nodes = parse_nodes(source, "adk")
    position = 0
    for node in nodes:
        assert not isinstance(node, Escaped)
        assert node.span.start == position
        assert node.span.end > node.span.start
        position = node.span.end
        before = source[: node.span.start]
        assert node.span.line == before.count("\n") + 1
        assert node.span.column == node.span.start - (before.rfind("\n") + 1) + 1
        text = source[node.span.start : node.span.end]
        if isinstance(node, Literal):
            assert text == node.text
        else:
            # What ADK reads: the text between the braces, stripped, is the key and maybe a "?".
            assert (text[0], text[-1]) == ("{", "}")
            assert text[1:-1].strip() == node.key + ("?" if node.optional else "")
            assert source[node.span.start - 1 : node.span.start] not in ("{", "$", "\\")
    assert position == len(source)
    assert not any(isinstance(a, Literal) and isinstance(b, Literal) for a, b in itertools.pairwise(nodes))


@settings(max_examples=400, deadline=None)
@given(adk_templates)
def test_adk_full_lalr_parse_agrees_with_the_lexer(source: str) -> None:
    assert lalr_tokens(source, dialect="adk") == lexer_tokens(source, dialect="adk")


@pytest.mark.parametrize(
    "source",
    [
        *("{" * 50_000, "{{{{a" * 10_000, "{a" * 25_000, "{ " * 25_000, "{a:b}" * 10_000, "${a}" * 10_000),
        *("{a ?}" * 10_000, "{{a" * 15_000, "{{ {a} }}" * 5_000, "${{a" * 10_000, "{{a}" * 10_000),
    ],
    ids=[
        *("brace-run", "brace-runs-before-a", "brace-a", "brace-space", "bad-scope", "dollar-brace"),
        *("space-question", "unclosed-double-braces", "double-brace-spans", "dollar-unclosed", "double-open-only"),
    ],
)
def test_adk_adversarial_input_parses_to_one_literal(source: str) -> None:
    assert adk_shape(source) == [("L", source)]


def verbatim_spans(source: str) -> list[tuple[int, int]]:
    """The {{ ... }} spans kept verbatim: from the first "{{" of a run of braces to the next "}}",
    when no other "{{" comes first."""
    spans = []
    i = 0
    while i < len(source) - 1:
        if source[i : i + 2] != "{{":
            i += 1
            continue
        k = i + 2
        while k < len(source) - 1 and source[k : k + 2] not in ("{{", "}}"):
            k += 1
        if source[k : k + 2] == "}}":
            spans.append((i, k + 2))
            i = k + 2
        else:
            while i < len(source) and source[i] == "{":
                i += 1
    return spans


def adk_reference(source: str) -> list[tuple[int, int, str, bool]]:
    """The ADK dialect's placeholders by a plain scan of the rules, independent of the grammar."""
    found = []
    spans = verbatim_spans(source)
    for start, char in enumerate(source):
        if char != "{" or source[start - 1 : start] in ("{", "$", "\\") or source[start + 1 : start + 2] == "{":
            continue
        if any(a <= start < b for a, b in spans):
            continue
        end = source.find("}", start)
        if end < 0 or "{" in source[start + 1 : end]:
            continue
        inner = source[start + 1 : end].strip()
        optional = inner.endswith("?")
        key = inner[:-1] if optional else inner
        scope, sep, rest = key.partition(":")
        valid = rest.isidentifier() and scope in ("app", "user", "temp") if sep else key.isidentifier()
        if valid:
            found.append((start, end + 1, key, optional))
    return found


@settings(max_examples=400, deadline=None)
@given(adk_templates)
def test_adk_placeholders_match_a_plain_scan_of_the_rules(source: str) -> None:
    nodes = [node for node in parse_nodes(source, "adk") if isinstance(node, Placeholder)]
    assert [(n.span.start, n.span.end, n.key, n.optional) for n in nodes] == adk_reference(source)


@pytest.mark.parametrize(
    "unit",
    [
        *("{a", "{ ", "{a:b}", "{{a", "{{{{a", "${a}", "\\{a}", "{{ {a} }}", "{a }", "{user:a?}", "{ {a}"),
        *("{users:b}", "{ xapp:b }", "{\u00a0temp:b}", "{app :b}", "{a:{user:b}", "{a: b}", "{é:b}", "{a:$b}"),
    ],
    ids=[
        "open",
        "open-space",
        "unknown-scope",
        "double-open",
        "open-run",
        "dollar",
        "backslash",
        "verbatim",
        "space-close",
        "scoped-optional",
        "open-then-placeholder",
        "scope-name-longer",
        "scope-name-inside",
        "scope-after-unicode-space",
        "scope-then-space",
        "unknown-scope-then-placeholder",
        "unknown-scope-then-space",
        "unknown-non-ascii-scope",
        "unknown-scope-then-dollar",
    ],
)
def test_adk_repeated_shapes_match_a_plain_scan_of_the_rules(unit: str) -> None:
    # The shapes the benchmark repeats a megabyte of, repeated, then a placeholder, then again.
    source = unit * 7 + "{key}" + unit * 3 + "\n{ user:name? }"
    nodes = [node for node in parse_nodes(source, "adk") if isinstance(node, Placeholder)]
    assert [(n.span.start, n.span.end, n.key, n.optional) for n in nodes] == adk_reference(source)
    assert parse_nodes(source, "adk") == lalr_nodes(source, dialect="adk")


# The fast path against Lark's full LALR parse: node for node, span for span.


@settings(max_examples=400, deadline=None)
@given(templates)
def test_nodes_agree_with_the_full_lalr_parse(source: str) -> None:
    assert parse_nodes(source) == lalr_nodes(source)


@settings(max_examples=400, deadline=None)
@given(adk_templates)
def test_adk_nodes_agree_with_the_full_lalr_parse(source: str) -> None:
    assert parse_nodes(source, "adk") == lalr_nodes(source, dialect="adk")


# Prompts as authors write them: Markdown, XML-tagged sections, JSON and code, <br>, CRLF, tabs, wide text.
REAL_PROMPTS = [
    (
        "markdown",
        "# Role\n\nYou help <user:name>.\n\n## Rules\n- Reply in <user:lang?>\n- Order <order.id>, item <items.0>\n",
    ),
    (
        "xml-sections",
        "<instructions>\n  Greet <name>.<br>\n  <<name>> is literal.\n</instructions>\n<context><ctx></context>",
    ),
    ("json-example", 'Answer as JSON:\n```json\n{"id": "<order_id>", "items": [<items.1>]}\n```\n'),
    ("crlf-and-tabs", "Line one\r\n\tName:\t<name>\r\n\tPlan: <app:plan?>\r\n"),
    ("wide-characters", "名前: <名前>\n顧客 <user:名前> 様、<状態>です。"),
    ("code-shift", "if x << 2 >> 1 < <limit>:\n    print(<<value>>)"),
]
ADK_REAL_PROMPTS = [
    ("markdown", "# Role\nYou help {user:name}.\n- Reply in { user:lang? }\n"),
    ("json-example", 'Return {"order": {order_id}, "note": "{{ verbatim {x} }}"}\n'),
    ("multiline-placeholder", "Dear {\n  name\n}, your plan is {app:plan}."),
]


@pytest.mark.parametrize(
    ("dialect", "source"),
    [("angle", case[1]) for case in REAL_PROMPTS] + [("adk", case[1]) for case in ADK_REAL_PROMPTS],
    ids=[f"angle-{case[0]}" for case in REAL_PROMPTS] + [f"adk-{case[0]}" for case in ADK_REAL_PROMPTS],
)
def test_real_prompts_agree_with_the_full_lalr_parse(dialect: str, source: str) -> None:
    assert parse_nodes(source, dialect) == lalr_nodes(source, dialect=dialect)  # type: ignore[arg-type]
    assert lexer_tokens(source, dialect=dialect) == lalr_tokens(source, dialect=dialect)  # type: ignore[arg-type]


def errors_and_findings(source: str, dialect: str) -> tuple[str, list[dict[str, object]]]:
    template = Template(source, dialect=dialect)  # type: ignore[arg-type]
    with pytest.raises(MissingKeyError) as caught:
        template.render({})
    findings = [d.as_dict() for d in lint(template)] if dialect == "angle" else []
    return str(caught.value), findings


@pytest.mark.parametrize(
    ("dialect", "source"),
    [("angle", case[1]) for case in REAL_PROMPTS] + [("adk", case[1]) for case in ADK_REAL_PROMPTS],
    ids=[f"angle-{case[0]}" for case in REAL_PROMPTS] + [f"adk-{case[0]}" for case in ADK_REAL_PROMPTS],
)
def test_errors_and_findings_are_the_same_as_from_the_full_lalr_parse(
    dialect: str, source: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Same messages, same line:column, same excerpt and caret, same lint findings and spans.
    fast = errors_and_findings(source + "\nand < name > and <nmae>\n", dialect)
    assert "  at " in fast[0]
    assert "^" in fast[0]
    templating.template._parse.cache_clear()
    monkeypatch.setattr(templating.template, "parse_nodes", lambda src, d: lalr_nodes(src, dialect=d))
    try:
        assert errors_and_findings(source + "\nand < name > and <nmae>\n", dialect) == fast
    finally:
        templating.template._parse.cache_clear()


# The grammar stays the one definition: the fast path's expression is what Lark compiles from it.


def test_shipped_terminals_are_what_lark_compiles_from_the_grammars() -> None:
    shipped = json.loads(TERMINALS_FILE.read_text(encoding="utf-8"))
    assert shipped == terminals_data(), f"grammar changed: regenerate templating/terminals.json with {WRITE_COMMAND}"


def test_write_terminals_writes_what_lark_compiles(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    target = tmp_path / "terminals.json"
    monkeypatch.setattr(parser_module, "TERMINALS_FILE", target)
    write_terminals()
    assert json.loads(target.read_text(encoding="utf-8")) == terminals_data()
    assert WRITE_COMMAND in target.read_text(encoding="utf-8").replace('\\"', '"')


@pytest.mark.parametrize("name", ["instruction", "adk"])
def test_the_scanner_holds_every_terminal_lark_compiles(name: str) -> None:
    terminals = lark_terminals(name)
    assert "TEXT" in terminals
    assert list(scanner_terminals(name))[-1] == "TEXT"  # tried last; the node terminals before it
    scanner = parser_module._scanner(name)
    assert sorted(scanner.nodes.groupindex) == sorted(set(terminals) - {"TEXT"})
    for terminal, pattern in terminals.items():
        assert f"(?:{pattern})" in scanner.tokens.pattern
        if terminal != "TEXT":
            assert f"(?P<{terminal}>{pattern})" in scanner.nodes.pattern


def regex_operations(pattern: object) -> Iterator[str]:
    """The names of every operation in a pattern parsed by the re module's own parser, nested ones included."""
    for item in pattern if isinstance(pattern, (list, tuple, re_parser.SubPattern)) else ():
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], re_constants._NamedIntConstant):
            yield str(item[0])
            yield from regex_operations(item[1])
        else:
            yield from regex_operations(item)


@pytest.mark.parametrize("name", ["instruction", "adk"])
def test_node_terminals_read_nothing_past_their_closing_character(name: str) -> None:
    # _build works out what a token is once per distinct string, where it first stands. That is
    # right wherever else the string stands because the terminals are disjoint (tested below) and
    # a node terminal decides its match from its own characters: no lookaround, no anchors, and a
    # fixed last character. (Nor may a possessive run stop on a character after the token; that
    # is left to the property test below, test_a_token_is_of_one_terminal_wherever_it_stands.)
    for terminal, pattern in lark_terminals(name).items():
        parsed = re_parser.parse(pattern)
        operations = set(regex_operations(parsed))
        assert {"BRANCH", "IN"} <= operations  # the walk sees inside groups
        if terminal == "TEXT":
            assert "ASSERT_NOT" in operations  # and it would see a lookahead
            continue
        assert not operations & {"ASSERT", "ASSERT_NOT", "AT", "GROUPREF", "GROUPREF_EXISTS"}, (terminal, operations)
        assert str(parsed[-1][0]) == "LITERAL", (terminal, parsed[-1])


@pytest.mark.parametrize(
    ("source", "tokens"),
    [
        ("<a> <a>", [("PLACEHOLDER", "<a>"), ("TEXT", " "), ("PLACEHOLDER", "<a>")]),
        ("<<a>> <a>", [("ESCAPE", "<<a>>"), ("TEXT", " "), ("PLACEHOLDER", "<a>")]),
        ("<<<a>", [("TEXT", "<<"), ("PLACEHOLDER", "<a>")]),
    ],
    ids=["placeholder-twice", "escape-then-placeholder", "run-of-angles"],
)
def test_lexer_tokens_are_typed_where_they_stand(source: str, tokens: list[tuple[str, str]]) -> None:
    assert lexer_tokens(source) == tokens == lalr_tokens(source)


@pytest.fixture
def fresh_scanner() -> Iterator[None]:
    parser_module._scanner.cache_clear()
    parser_module._cached.cache_clear()
    yield
    parser_module._scanner.cache_clear()
    parser_module._cached.cache_clear()


def test_the_shipped_terminals_are_used_while_the_grammar_is_unchanged(
    fresh_scanner: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = terminals_data()
    data["instruction"]["terminals"] = {"PLACEHOLDER": "#\\w+#", "TEXT": "[^#]+|#"}  # another syntax, to tell apart
    monkeypatch.setattr(parser_module, "_shipped", lambda: data)
    assert [type(node) for node in parse_nodes("a #b# <c>")] == [Literal, Placeholder, Literal]


def test_a_changed_grammar_is_compiled_by_lark_again(fresh_scanner: None, monkeypatch: pytest.MonkeyPatch) -> None:
    data = terminals_data()
    data["instruction"]["terminals"] = {"PLACEHOLDER": "#\\w+#", "TEXT": "[^#]+|#"}
    data["instruction"]["grammar_sha256"] = "0" * 64  # shipped for some other grammar: not used
    monkeypatch.setattr(parser_module, "_shipped", lambda: data)
    assert parser_module._scanner("instruction").nodes.groupindex.keys() == {"ESCAPE", "PLACEHOLDER"}
    assert shape("a #b# <c>") == [("L", "a #b# "), ("P", "c", False)]


@pytest.mark.parametrize(
    "entry",
    [
        {"pattern": "(?P<PLACEHOLDER>#\\w+#)|(?P<TEXT>[^#]+|#)"},  # an earlier format: one expression
        {"terminals": ["#\\w+#"]},
        {"terminals": {"PLACEHOLDER": "#\\w+#"}},  # no TEXT
        {"terminals": {"PLACEHOLDER": 1, "TEXT": "[^#]+|#"}},
        {"terminals": {"TEXT": "[^#]+|#"}},  # no node terminal: everything would be text
        {"terminals": {"PLACEHOLDER": "#(?:\\w+#", "TEXT": "[^#]+|#"}},  # does not compile
    ],
    ids=["old-format", "not-a-mapping", "no-text", "not-a-pattern", "text-alone", "not-compiling"],
)
def test_a_shipped_entry_of_another_shape_is_not_used(
    entry: dict[str, object], fresh_scanner: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = terminals_data()
    data["instruction"] = {"grammar_sha256": data["instruction"]["grammar_sha256"], **entry}
    monkeypatch.setattr(parser_module, "_shipped", lambda: data)
    assert shape("a #b# <c>") == [("L", "a #b# "), ("P", "c", False)]


def test_a_terminal_with_a_capturing_group_is_refused(fresh_scanner: None, monkeypatch: pytest.MonkeyPatch) -> None:
    data = terminals_data()
    data["instruction"]["terminals"] = {"PLACEHOLDER": "#(\\w+)#", "TEXT": "[^#]+|#"}
    monkeypatch.setattr(parser_module, "_shipped", lambda: data)
    with pytest.raises(RuntimeError, match=r"capturing group; use \(\?:\.\.\.\)"):
        parse_nodes("a #b#")


@pytest.mark.parametrize("content", ["{not json", "[]", "null", '"terminals"', ""], ids=repr)
def test_a_missing_or_broken_terminals_file_falls_back_to_lark(
    content: str, fresh_scanner: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    broken = tmp_path / "terminals.json"
    broken.write_text(content, encoding="utf-8")
    monkeypatch.setattr(parser_module, "TERMINALS_FILE", broken)
    assert parser_module._scanner("adk").nodes.groupindex.keys() == {"PLACEHOLDER"}
    assert adk_shape("{a}") == [("P", "a", False)]


def test_parsing_and_rendering_do_not_import_lark() -> None:
    # A fresh process: the shipped expression is used, no Lark parser is built (fast start).
    code = (
        "import sys, templating; "
        "assert templating.render('<a> <<b>>', {'a': 1}) == '1 <b>'; "
        "assert templating.render('{a}', {'a': 1}, dialect='adk') == '1'; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'lark'))"
    )
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def terminal_matches(name: str, source: str) -> Iterator[tuple[int, list[str]]]:
    compiled = {terminal: re.compile(pattern) for terminal, pattern in lark_terminals(name).items()}
    for offset in range(len(source)):
        yield offset, [terminal for terminal, pattern in compiled.items() if pattern.match(source, offset)]


@settings(max_examples=200, deadline=None)
@given(templates)
def test_angle_terminals_are_disjoint(source: str) -> None:
    # At no offset do two terminals match: the order the scanner tries them in changes nothing.
    for offset, matching in terminal_matches("instruction", source):
        assert len(matching) <= 1, (offset, matching)


@settings(max_examples=200, deadline=None)
@given(adk_templates)
def test_adk_terminals_are_disjoint(source: str) -> None:
    for offset, matching in terminal_matches("adk", source):
        assert len(matching) <= 1, (offset, matching)


def kinds_by_string(source: str, dialect: str) -> dict[str, set[str]]:
    kinds: dict[str, set[str]] = {}
    for kind, text in lexer_tokens(source, dialect=dialect):  # type: ignore[arg-type]
        kinds.setdefault(text, set()).add(kind)
    return kinds


@settings(max_examples=300, deadline=None)
@given(st.lists(templates, min_size=1, max_size=4), st.lists(adk_templates, min_size=1, max_size=4))
def test_a_token_is_of_one_terminal_wherever_it_stands(angle: list[str], adk: list[str]) -> None:
    # What _build assumes when it works out a distinct token once (see _token_facts): typed
    # where each one stands, the same string is always of the same terminal. The pieces are
    # joined in both orders, so that the same strings stand in other company.
    for dialect, pieces in (("instruction", angle), ("adk", adk)):
        name = "angle" if dialect == "instruction" else "adk"
        for source in ("".join(pieces), "".join(reversed(pieces)) + "".join(pieces)):
            for text, kinds in kinds_by_string(source, name).items():
                assert len(kinds) == 1, (text, kinds, source)


# Nodes built by the fast path are ordinary, frozen, slotted instances.

NODE_SAMPLE = "Hi <name>, <<raw>> and <user:items.0?>\n<1x> end"


def test_nodes_are_slotted_frozen_instances_equal_to_constructed_ones() -> None:
    nodes = parse_nodes(NODE_SAMPLE)
    assert {type(node) for node in nodes} == {Literal, Escaped, Placeholder}
    for node, reference in zip(nodes, lalr_nodes(NODE_SAMPLE), strict=True):
        assert type(node) is type(reference)
        assert type(node.span) is Span
        assert not hasattr(node, "__dict__")
        assert not hasattr(node.span, "__dict__")
        assert node == reference
        assert hash(node) == hash(reference)
        assert repr(node) == repr(reference)
        with pytest.raises(dataclasses.FrozenInstanceError):
            node.span = node.span  # type: ignore[misc]
        with pytest.raises(dataclasses.FrozenInstanceError):
            node.span.start = 0  # type: ignore[misc]


@pytest.mark.parametrize("collector_on", [True, False], ids=["collector-on", "collector-off"])
def test_a_large_parse_agrees_and_leaves_the_collector_as_it_was(collector_on: bool) -> None:
    source = ("<a> <<b>> <c?> text\n" * 10_000) + str(collector_on)  # above the size that pauses the collector
    was = gc.isenabled()
    (gc.enable if collector_on else gc.disable)()
    try:
        assert parse_nodes(source) == lalr_nodes(source)
        assert gc.isenabled() is collector_on
    finally:
        (gc.enable if was else gc.disable)()


LARGE = parser_module._PAUSE_COLLECTOR_FROM  # characters: the size from which the collector is paused


@pytest.mark.parametrize(("size", "collector_on"), [(LARGE, True), (LARGE, False), (LARGE - 1, True)])
def test_collector_paused_pauses_only_for_a_large_source_and_restores_it(size: int, collector_on: bool) -> None:
    was = gc.isenabled()
    (gc.enable if collector_on else gc.disable)()
    try:
        with collector_paused(size):
            assert gc.isenabled() is (collector_on and size < LARGE)
        assert gc.isenabled() is collector_on
        with pytest.raises(ValueError, match="inside"), collector_paused(size):
            raise ValueError("inside")
        assert gc.isenabled() is collector_on
    finally:
        (gc.enable if was else gc.disable)()


def test_collector_pauses_overlapping_in_threads_end_with_the_last() -> None:
    """Two parses (or plans) overlapping in two threads: the first to end leaves the collector paused for the other."""
    assert gc.isenabled()
    entered, release = threading.Event(), threading.Event()
    seen: list[bool] = []

    def other() -> None:
        with collector_paused(LARGE):
            entered.set()
            release.wait(10)
        seen.append(gc.isenabled())

    thread = threading.Thread(target=other)
    thread.start()
    assert entered.wait(10)
    with collector_paused(LARGE):
        release.set()
        thread.join(10)
        assert seen == [False]  # the other thread's pause ended inside this one: still paused
        with collector_paused(LARGE):  # nested in the same thread
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
