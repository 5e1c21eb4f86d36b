"""Errors: what they say, where they point, and that they are what callers already catch."""

from __future__ import annotations

import pickle

import pytest
from syrupy.assertion import SnapshotAssertion

from templating import MissingKeyError, Span, TemplatingError, render
from templating.errors import excerpt


def missing_error(source: str, state: dict[str, object]) -> MissingKeyError:
    with pytest.raises(MissingKeyError) as info:
        render(source, state)
    return info.value


@pytest.mark.parametrize(
    ("source", "state"),
    [
        ("Hello <nmae>!", {"name": "Ada"}),
        (
            "You are <app:assistant>.\nUser: <user:nmae>\nOrder <order_id> is <status?>.\n\t<order_id>",
            {"user:name": "Ada", "app:assistant_name": "Bot"},
        ),
        ("<user:profile.nmae> <user:profile.age?>", {"user:profile": {"name": "Grace"}}),
        ("<items.3>", {"items": ["a"]}),
    ],
    ids=["one-key-did-you-mean", "several-keys-and-lines", "nested-did-you-mean", "index-out-of-range"],
)
def test_missing_key_error_text(source: str, state: dict[str, object], snapshot: SnapshotAssertion) -> None:
    assert str(missing_error(source, state)) == snapshot


def test_missing_key_error_is_a_key_error_with_data() -> None:
    error = missing_error("a <nmae> <x.y> <nmae>", {"name": 1, "x": {"z": 2}})
    assert isinstance(error, KeyError)
    assert isinstance(error, TemplatingError)
    assert error.keys == ("nmae", "x.y")
    assert [(m.key, m.span, m.suggestion) for m in error.missing] == [
        ("nmae", Span(2, 8, 1, 3), "name"),
        ("x.y", Span(9, 14, 1, 10), None),
    ]
    assert error.source == "a <nmae> <x.y> <nmae>"
    assert str(error).endswith(
        "help: give each key a value in state, make a placeholder optional with <key?>, "
        "or write <<key>> for the literal text"
    )
    single = missing_error("<nmae>", {})
    assert str(single).endswith(
        "help: give 'nmae' a value in state, make it optional with <nmae?>, or write <<nmae>> for the literal text"
    )


def test_missing_key_error_lists_every_use_and_keys_as_args() -> None:
    error = missing_error("<a> <b>\n<a> <a>", {})
    assert error.args == ("a", "b")
    assert error.missing[0].also == (Span(8, 11, 2, 1), Span(12, 15, 2, 5))
    assert "  at 1:1: 'a' is missing (also at 2:1, 2:5)" in str(error)


def test_error_text_stays_small_for_huge_lines() -> None:
    source = " ".join(f"<k{i}>" for i in range(2000))
    error = missing_error(source, {})
    assert len(str(error)) < 400 * len(error.keys)  # a window per key, not the whole 13k-character line


def test_errors_survive_pickling() -> None:
    error = missing_error("<nmae>", {"name": 1})
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is MissingKeyError
    assert str(copy) == str(error)
    assert copy.keys == ("nmae",)
    assert copy.args == error.args == ("nmae",)


def test_templating_error_text() -> None:
    error = TemplatingError("bad thing", source="ab\ncd <x> ef", span=Span(6, 9, 2, 4), help="do better")
    assert str(error) == "bad thing\n  at 2:4\n    cd <x> ef\n       ^^^\nhelp: do better"


@pytest.mark.parametrize(
    ("source", "span", "expected"),
    [
        ("abc", Span(1, 2, 1, 2), "    abc\n     ^"),
        ("\tx <y>", Span(3, 6, 1, 4), "    \tx <y>\n    \t  ^^^"),
        ("ab\r\ncd", Span(0, 2, 1, 1), "    ab\n    ^^"),
        ("<a\nb>", Span(0, 5, 1, 1), "    <a\n    ^^"),
        ("", Span(0, 0, 1, 1), "    \n    ^"),
        ("名前は <x>", Span(4, 7, 1, 5), "    名前は <x>\n           ^^^"),
        ("<名前>", Span(0, 4, 1, 1), "    <名前>\n    ^^^^^^"),
        ("cafe\u0301 <x>", Span(6, 9, 1, 7), "    cafe\u0301 <x>\n         ^^^"),
        (
            "a" * 100 + "<x>" + "b" * 100,
            Span(100, 103, 1, 101),
            "    …" + "a" * 60 + "<x>" + "b" * 60 + "…\n" + " " * 65 + "^^^",
        ),
    ],
    ids=[
        "middle",
        "tab-kept",
        "crlf",
        "clipped-to-line",
        "empty",
        "wide-margin",
        "wide-span",
        "combining-mark",
        "long-line-window",
    ],
)
def test_excerpt(source: str, span: Span, expected: str) -> None:
    assert excerpt(source, span) == expected


@pytest.mark.parametrize(
    ("source", "state"),
    [("Hello {nmae}!", {"name": "Ada"}), ("You are {app:assistant}.\nUser: { user:nmae }", {"user:name": "Ada"})],
    ids=["adk-one-key", "adk-several-keys"],
)
def test_adk_missing_key_error_text(source: str, state: dict[str, object], snapshot: SnapshotAssertion) -> None:
    with pytest.raises(MissingKeyError) as info:
        render(source, state, dialect="adk")
    assert str(info.value) == snapshot


def test_adk_missing_key_error_pickles() -> None:
    with pytest.raises(MissingKeyError) as info:
        render("{nmae}", {}, dialect="adk")
    again = pickle.loads(pickle.dumps(info.value))
    assert str(again) == str(info.value)
    assert "{nmae?}" in str(again)
