"""Nodes: immutable data with spans, and a placeholder's key broken into scope and path."""

from __future__ import annotations

import dataclasses

import pytest

from templating import DIALECTS, Literal, Placeholder, Span
from templating.nodes import check_dialect

SPAN = Span(0, 1, 1, 1)


@pytest.mark.parametrize(
    ("key", "scope", "path", "name"),
    [
        ("name", None, ("name",), "name"),
        ("user:profile.name", "user", ("profile", "name"), "user:profile"),
        ("app:tier", "app", ("tier",), "app:tier"),
        ("temp:step", "temp", ("step",), "temp:step"),
        ("items.1", None, ("items", "1"), "items"),
    ],
    ids=["plain", "user-path", "app", "temp", "index"],
)
def test_placeholder_key_parts(key: str, scope: str | None, path: tuple[str, ...], name: str) -> None:
    node = Placeholder(key, False, SPAN)
    assert (node.scope, node.path, node.name) == (scope, path, name)


@pytest.mark.parametrize(("optional", "source"), [(False, "<a.b>"), (True, "<a.b?>")], ids=["required", "optional"])
def test_placeholder_source(optional: bool, source: str) -> None:
    assert Placeholder("a.b", optional, SPAN).source == source


def test_nodes_are_frozen_and_slotted() -> None:
    node = Literal("x", SPAN)
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.text = "y"  # type: ignore[misc]
    assert not hasattr(node, "__dict__")
    assert hash(node) == hash(Literal("x", SPAN))


@pytest.mark.parametrize("dialect", ["angle", "adk"], ids=["angle", "adk"])
def test_check_dialect_accepts_the_dialects(dialect: str) -> None:
    assert check_dialect(dialect) == dialect
    assert dialect in DIALECTS


@pytest.mark.parametrize(
    "dialect", ["ADK", "jinja", "", None, 1, ["adk"]], ids=["case", "other", "empty", "none", "int", "list"]
)
def test_check_dialect_rejects_anything_else(dialect: object) -> None:
    with pytest.raises(ValueError, match=r"dialect= must be 'angle' or 'adk', not "):
        check_dialect(dialect)
