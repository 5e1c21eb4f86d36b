"""The public Template API, parse caching and escape()."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import templating
from templating import Placeholder, Template, escape, parse, render

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
    assert template == Template("<a>")
    assert template != Template("<b>")
    assert len({template, Template("<a>")}) == 1
    assert pickle.loads(pickle.dumps(template)) == template
    assert repr(Template("x" * 100)).endswith("...')")


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
