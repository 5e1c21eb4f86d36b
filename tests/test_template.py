"""The public Template API, parse caching and escape()."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import templating
from templating import Placeholder, Template, escape, instruction, parse, render

text = st.lists(st.sampled_from([*list("<>?.:_ab1 \n{}é-"), "user:", "<<", ">>"]), max_size=30).map("".join) | st.text(
    max_size=40
)


def test_template_attributes() -> None:
    template = Template("Hi <user:name>, <nick?> <user:name> <<esc>> <items.0>")
    assert template.source == "Hi <user:name>, <nick?> <user:name> <<esc>> <items.0>"
    assert template.keys == ("user:name", "nick", "items.0")
    assert [p.key for p in template.placeholders] == ["user:name", "nick", "user:name", "items.0"]
    assert all(isinstance(p, Placeholder) for p in template.placeholders)
    assert len(template.nodes) == 10


def test_template_is_immutable_and_compares_by_source() -> None:
    template = Template("<a>")
    with pytest.raises(AttributeError, match="immutable"):
        template.source = "<b>"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        del template.keys
    assert template.keys == ("a",)
    assert template == Template("<a>")
    assert template != Template("<b>")
    assert len({template, Template("<a>")}) == 1
    assert pickle.loads(pickle.dumps(template)) == template
    assert repr(Template("x" * 100)).endswith("...')")


@pytest.mark.parametrize("source", [["<a>"], b"<a>", None], ids=["list", "bytes", "none"])
def test_non_string_sources_are_type_errors(source: object) -> None:
    for make in (parse, Template):
        with pytest.raises(TypeError, match="a template source must be a str"):
            make(source)  # type: ignore[operator]


def test_parse_caches_templates() -> None:
    assert parse("cache <me>") is parse("cache <me>")


def test_render_accepts_a_template() -> None:
    assert render(Template("<a>"), {"a": 1}) == "1"


def test_public_surface() -> None:
    for name in templating.__all__:
        assert hasattr(templating, name), name
    assert {"Template", "parse", "render", "escape", "TemplatingError", "MissingKeyError"} <= set(templating.__all__)


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("<name>", "<<name>>"),
        ("<<name>>", "<<<name>>>"),
        ("<<name>", "<<<name>>"),
        ("plain {x}", "plain {x}"),
        ("<a b>", "<a b>"),
    ],
    ids=["placeholder", "escape", "half", "plain", "not-a-node"],
)
def test_escape_examples(raw: str, escaped: str) -> None:
    assert escape(raw) == escaped
    assert render(escaped, {}) == raw


@settings(max_examples=500)
@given(text)
def test_escape_round_trip(source: str) -> None:
    assert render(escape(source), {}) == source


@settings(max_examples=300)
@given(text)
def test_escaped_text_has_no_placeholders(source: str) -> None:
    assert Template(escape(source)).keys == ()


@settings(max_examples=300)
@given(text)
def test_keys_match_the_placeholders(source: str) -> None:
    template = Template(source)
    assert template.keys == tuple(dict.fromkeys(p.key for p in template.placeholders))
    assert set(template.keys) == {p.key for p in template.placeholders}


@settings(max_examples=300)
@given(text)
def test_render_follows_the_nodes(source: str) -> None:
    template = Template(source)
    state = {p.key: f"[{p.key}]" for p in template.placeholders if p.key == p.name}
    expected = "".join(
        (state.get(node.key, node.source) if isinstance(node, Placeholder) else node.text) for node in template.nodes
    )
    assert template.render(state, missing="keep") == expected


# The ADK dialect through the public API.
def test_adk_template_attributes() -> None:
    template = Template('Hi {user:name}, { nick? } {user:name} {{esc}} {"json": {order_id}}', dialect="adk")
    assert template.dialect == "adk"
    assert Template("<a>").dialect == "angle"
    assert template.keys == ("user:name", "nick", "order_id")
    assert [p.optional for p in template.placeholders] == [False, True, False, False]
    assert template.render({"user:name": "Ada", "order_id": 7}) == 'Hi Ada,  Ada {{esc}} {"json": 7}'


def test_dialect_is_part_of_identity() -> None:
    adk = Template("{a} <a>", dialect="adk")
    angle = Template("{a} <a>")
    assert adk != angle
    assert adk == Template("{a} <a>", dialect="adk")
    assert len({adk, angle, Template("{a} <a>", dialect="adk")}) == 2
    for template in (adk, angle):
        again = pickle.loads(pickle.dumps(template))
        assert again == template
        assert again.dialect == template.dialect
        assert again.render({"a": 1}, missing="keep") == template.render({"a": 1}, missing="keep")
    assert repr(adk) == "Template('{a} <a>', dialect='adk')"
    assert repr(angle) == "Template('{a} <a>')"


def test_parse_caches_per_dialect() -> None:
    assert parse("cache {me}", dialect="adk") is parse("cache {me}", dialect="adk")
    assert parse("cache {me}", dialect="adk") is not parse("cache {me}")
    assert parse("cache {me}", dialect="adk").dialect == "adk"


@pytest.mark.parametrize(
    "call",
    [
        lambda: Template("{a}", dialect="jinja"),
        lambda: parse("{a}", dialect="ADK"),
        lambda: render("{a}", {}, dialect=""),
    ],
    ids=["Template", "parse", "render"],
)
def test_unknown_dialect_is_a_clear_value_error(call: Any) -> None:
    with pytest.raises(ValueError, match="dialect= must be 'angle' or 'adk', not "):
        call()


def test_dialect_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        Template("{a}", "adk")  # type: ignore[misc]


def test_render_with_dialect() -> None:
    assert render("{a} <a>", {"a": 1}, dialect="adk") == "1 <a>"
    assert render("{a} <a>", {"a": 1}) == "{a} 1"
    adk = Template("{a}", dialect="adk")
    assert render(adk, {"a": [1]}) == "[1]"
    assert render(adk, {"a": {"k": "v"}}, dialect="adk") == "{'k': 'v'}"
    with pytest.raises(ValueError, match="dialect='angle' was given for a Template whose dialect is 'adk'"):
        render(adk, {"a": 1}, dialect="angle")


@pytest.mark.parametrize("first", ["render", "provider"], ids=["Template.render", "instruction-provider"])
def test_the_render_plan_is_built_by_the_first_render_and_kept(first: str) -> None:
    # Parsing does not build it (parse(), keys and lint() never need it); the first render does, once.
    template = Template("Hi <a.b>, <c> <d.0?>.")
    assert not hasattr(template, "_plan")
    assert template.keys == ("a.b", "c", "d.0")
    state = {"a": {"b": 1}, "c": "x", "d": [7]}
    render = template.render if first == "render" else instruction(template)
    assert render(state) == "Hi 1, x 7."
    plan = template._plan
    assert template.render(state) == instruction(template)(state) == "Hi 1, x 7."
    assert template._plan is plan
