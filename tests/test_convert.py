"""convert_adk(): ADK's {key} syntax to the angle syntax, rendering the same, and where ADK's code differs."""

from __future__ import annotations

import asyncio
import os
import re
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from templating import AdkDifference, ConversionError, Placeholder, Span, Template, TemplatingError, convert_adk, render
from templating.convert import adk_code_differences

CONVERTS = [
    ("required", "Hello {name}!", "Hello <name>!"),
    ("optional", "Hi { nick? }.", "Hi <nick?>."),
    ("scopes", "{app:a} {user:b} {temp:c}", "<app:a> <user:b> <temp:c>"),
    ("json-kept", '{"x": {key}}', '{"x": <key>}'),
    ("double-braces-kept", "{{key}}", "{{key}}"),
    ("double-brace-span-kept", "{{ {key} }} {key}", "{{ {key} }} <key>"),
    ("crlf-kept", "a\r\n{key}\r\n", "a\r\n<key>\r\n"),
    ("angle-placeholder-escaped", "<name> <user:x?>", "<<name>> <<user:x?>>"),
    ("angle-escape-escaped", "<<name>>", "<<<name>>>"),
    ("angle-text-not-a-node", "a << b, <a b>, </tag>", "a << b, <a b>, </tag>"),
    ("left-bracket-before-placeholder", "<{a}", "<<a>"),
    ("right-bracket-after-placeholder", "{a}>", "<a>>"),
    ("xml-around-placeholder", "<b>{a}</b>", "<<b>><a></b>"),
    ("non-identifiers-stay", "{a.b} {other:x} {1x} ${a} \\{a}", "{a.b} {other:x} {1x} ${a} \\{a}"),
    ("empty", "", ""),
]


@pytest.mark.parametrize(("source", "expected"), [c[1:] for c in CONVERTS], ids=[c[0] for c in CONVERTS])
def test_convert_examples(source: str, expected: str) -> None:
    text, _ = convert_adk(source)
    assert text == expected
    state = {p.key: f"[{p.key}]" for p in Template(source, dialect="adk").placeholders}
    assert render(text, state) == Template(source, dialect="adk").render(state)


DIFFERENCES = [
    ("double-braces", "a {{name}} b", [(2, 10, "{{name}}", "substitutes")]),
    ("double-braces-spaces-optional", "{{ name? }}", [(0, 11, "{{ name? }}", "substitutes")]),
    ("double-open-only", "{{name}", [(0, 7, "{{name}", "substitutes")]),
    ("extra-close", '{"x": {key}}', [(6, 12, "{key}}", "removes the '}'")]),
    ("extra-closes", "{key}}}", [(0, 7, "{key}}}", "removes the '}}'")]),
    ("artifact", "see {artifact.notes?}", [(4, 21, "{artifact.notes?}", "loads the artifact 'notes'")]),
    ("inside-double-brace-span", "{{ {key} }}", [(3, 8, "{key}", "substitutes this placeholder inside {{ ... }}")]),
    (
        "several-inside-a-span",
        "{{ {a} and {user:b?} }} {c}",
        [(3, 6, "{a}", "inside {{ ... }}"), (11, 20, "{user:b?}", "inside {{ ... }}")],
    ),
    ("dollar-span", "${{ {key} }}", [(4, 9, "{key}", "inside {{ ... }}")]),
    ("same-in-both", "{a} { b? } {user:c}", []),
    ("invalid-names-same-in-both", "{{a b}} {{1x}} {{other:x}} {a-b}}", []),
    ("dollar-and-backslash", "${{a}} \\{{a}}", []),
    ("invalid-name-inside-a-span", "{{ {a b} {1x} }}", []),
    ("json", '{"a": {"b": 1}}', []),
]


@pytest.mark.parametrize(("source", "expected"), [c[1:] for c in DIFFERENCES], ids=[c[0] for c in DIFFERENCES])
def test_differences_from_adk_code(source: str, expected: list[tuple[int, int, str, str]]) -> None:
    _, differences = convert_adk(source)
    assert [(d.span.start, d.span.end, d.text) for d in differences] == [e[:3] for e in expected]
    for difference, (*_, phrase) in zip(differences, expected, strict=True):
        assert isinstance(difference, AdkDifference)
        assert phrase in difference.message


def test_difference_spans_have_lines_and_columns() -> None:
    _, differences = convert_adk("line one\n  x {{y}}\n{z}}")
    assert [d.span for d in differences] == [Span(13, 18, 2, 5), Span(19, 23, 3, 1)]


@pytest.mark.parametrize(
    ("source", "column"),
    [("<{a}>", 2), ("x <{ b? }>> y", 4), ("<<{a}>>", 3)],
    ids=["required", "optional-with-spaces", "doubled-brackets"],
)
def test_placeholder_between_angle_brackets_cannot_be_converted(source: str, column: int) -> None:
    with pytest.raises(ConversionError) as info:
        convert_adk(source)
    assert isinstance(info.value, TemplatingError)
    assert info.value.span is not None
    assert info.value.span.column == column
    assert "reads" in str(info.value)
    assert "as an escape" in str(info.value)


# ADK sources rich in what matters: braces, brackets, scopes, and the characters ADK treats specially.
adk_sources = st.lists(
    st.sampled_from(
        [*list("{}<>?:_ab \n$\\.-"), "{{", "}}", "{{ ", " }}", "<<", ">>", "user:", "app:", "artifact.", "{a}", "<a>"]
    ),
    max_size=30,
).map("".join) | st.text(max_size=40)


def between_brackets(source: str) -> bool:
    """Whether some placeholder has '<' right before it and '>' right after it (what cannot convert)."""
    nodes = Template(source, dialect="adk").nodes
    return any(
        isinstance(node, Placeholder)
        and source[: node.span.start].endswith("<")
        and source[node.span.end :].startswith(">")
        for node in nodes
    )


@settings(max_examples=600, deadline=None)
@given(adk_sources, st.data())
def test_converted_template_renders_the_same(source: str, data: st.DataObject) -> None:
    adk = Template(source, dialect="adk")
    if between_brackets(source):
        with pytest.raises(ConversionError):
            convert_adk(source)
        return
    text, _ = convert_adk(source)
    assert Template(text).keys == adk.keys
    values = st.text(alphabet=st.sampled_from(list("<>{}ab? ")), max_size=5)
    state = {key: data.draw(values) for key in adk.keys}
    assert render(text, state) == adk.render(state)
    partial = {key: value for key, value in state.items() if data.draw(st.booleans())}
    assert render(text, partial, missing="empty") == adk.render(partial, missing="empty")


@settings(max_examples=300, deadline=None)
@given(adk_sources)
def test_differences_are_exactly_where_adk_code_reads_a_placeholder_we_do_not(source: str) -> None:
    ours = {(p.span.start, p.span.end) for p in Template(source, dialect="adk").placeholders}
    reported = set()
    for difference in adk_code_differences(source):
        assert (difference.span.start, difference.span.end) not in ours
        assert difference.text == source[difference.span.start : difference.span.end]
        reported.add((difference.span.start, difference.span.end))
    # Every span ADK's code substitutes (by its own regular expression) that is not ours is reported.
    for match in re.finditer(r"(?<![{$\\])(\{+)([^{}]*)(\}+)", source):
        name = match[2].strip().removesuffix("?")
        scope, colon, rest = name.partition(":")
        substituted = (rest.isidentifier() and scope in ("app", "user", "temp")) if colon else name.isidentifier()
        if (substituted or name.startswith("artifact.")) and (match.start(), match.end()) not in ours:
            assert (match.start(), match.end()) in reported


# Against Google ADK itself, where it is installed (the agent-prompt-templating[adk] extra): with no difference
# reported, ADK's code renders a source exactly as the ADK dialect does; with one, it does not.
AGAINST_ADK = [
    ("plain", "Hi {name}, { nick? } {user:lang}.", False),
    ("not-names", "{a.b} {other:x} {1x} {a b} ${name} \\{name} {}", False),
    ("json-without-placeholder", '{"a": {"b": 1}}', False),
    ("double-braces", "keep {{name}} as written", True),
    ("extra-close", '{"x": {name}}', True),
    ("placeholder-inside-double-braces", "keep {{ {name} }} as written", True),
    ("double-braces-around-text", "keep {{ not a name }} as written, {name}", False),
]


@pytest.mark.parametrize(("source", "differs"), [c[1:] for c in AGAINST_ADK], ids=[c[0] for c in AGAINST_ADK])
def test_differences_match_real_adk(source: str, differs: bool) -> None:
    if os.environ.get("TEMPLATING_REQUIRE_ADK") == "1":  # CI: fail, never skip, without google-adk
        import google.adk.utils.instructions_utils as instructions_utils
    else:
        instructions_utils = pytest.importorskip(
            "google.adk.utils.instructions_utils", reason="google-adk is not installed (pip install '.[adk]')"
        )
    state = {"name": "Ada", "user:lang": "en"}
    # ADK reads state through the context's invocation context; this is the smallest such context.
    session = SimpleNamespace(state=state, app_name="app", user_id="u", id="s")
    context = SimpleNamespace(
        _invocation_context=SimpleNamespace(session=session, artifact_service=None), agent_name="agent"
    )
    adk = asyncio.run(instructions_utils.inject_session_state(source, context))
    _, differences = convert_adk(source)
    assert bool(differences) == differs
    assert (adk != Template(source, dialect="adk").render(state)) == differs


def test_a_source_longer_than_a_limit_given_is_refused_before_parsing() -> None:
    from templating.inputs import DEFAULT_MAX_FILE_SIZE

    with pytest.raises(ConversionError, match=f"more than the limit of {DEFAULT_MAX_FILE_SIZE:,}"):
        convert_adk("x" * (DEFAULT_MAX_FILE_SIZE + 1), limit=DEFAULT_MAX_FILE_SIZE)
    with pytest.raises(ConversionError, match="10 characters long, more than the limit of 9"):
        convert_adk("Hi {name}.", limit=9)
    assert convert_adk("Hi {name}.", limit=10) == ("Hi <name>.", ())


@pytest.mark.parametrize(("piece", "converted"), [("<a>", "<<a>>"), ("{{a}}\n", "{{a}}\n")], ids=["escapes", "braces"])
def test_a_large_source_of_many_escapes_or_differences_converts_whole(piece: str, converted: str) -> None:
    """Each escaped piece and each difference costs the same wherever it is (no quadratic merging)."""
    text, differences = convert_adk(piece * 50_000)
    assert text == converted * 50_000
    if piece.startswith("{"):
        assert len(differences) == 50_000
        assert (differences[-1].span.line, differences[-1].span.column) == (50_000, 1)
