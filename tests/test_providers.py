"""Instruction providers: instruction, static, concat, when and resolve, sync and async."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable
from types import MappingProxyType, SimpleNamespace
from typing import Any

import pytest

from templating import (
    InstructionProvider,
    MissingKeyError,
    Template,
    TemplateSyntaxError,
    TemplatingError,
    concat,
    instruction,
    resolve,
    static,
    when,
)
from templating.providers import read_keys

STATE = {"user:name": "Ada", "order_id": "A-1", "vip": True}


class Ctx:
    """An agent-style read-only context: state behind ``.state``, as ADK's ReadonlyContext has it."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.state = MappingProxyType(state)


async def async_part(ctx: Any) -> str:
    return "async <order_id>"


def sync_part(ctx: Any) -> str:
    return "sync <order_id>"


def run(instruction_: Any, ctx: Any = None) -> str:
    return asyncio.run(resolve(instruction_, Ctx(STATE) if ctx is None else ctx))


RESOLVES = [
    ("str-is-a-template", "Hi <user:name>!", "Hi Ada!"),
    ("template", Template("Order <order_id>"), "Order A-1"),
    ("instruction", instruction("Hi <user:name>, {json: true}"), "Hi Ada, {json: true}"),
    ("instruction-empty-mode", instruction("[<nope>]", missing="empty"), "[]"),
    ("instruction-keep-mode", instruction("[<nope>]", missing="keep"), "[<nope>]"),
    ("static-is-verbatim", static("Hi <user:name> <<x>>"), "Hi <user:name> <<x>>"),
    ("sync-result-not-rendered", sync_part, "sync <order_id>"),
    ("async-result-not-rendered", async_part, "async <order_id>"),
    ("lambda", lambda ctx: ctx.state["user:name"], "Ada"),
    ("concat-strings-are-static", concat("<user:name>", instruction("<user:name>")), "<user:name>\n\nAda"),
    ("concat-sep", concat("a", "b", "c", sep=" | "), "a | b | c"),
    ("concat-template-part", concat(Template("<order_id>"), "x", sep="-"), "A-1-x"),
    ("concat-skips-empty", concat("a", when(lambda ctx: False, "b"), static(""), "c"), "a\n\nc"),
    ("concat-async", concat(sync_part, async_part, "end", sep="; "), "sync <order_id>; async <order_id>; end"),
    ("concat-nested", concat("a", concat("b", "c", sep="+"), sep="/"), "a/b+c"),
    ("concat-empty", concat(), ""),
    ("when-true", when(lambda ctx: ctx.state["vip"], "VIP"), "VIP"),
    ("when-false", when(lambda ctx: "nope" in ctx.state, "never"), ""),
    ("when-provider", when(lambda ctx: True, instruction("<user:name>")), "Ada"),
    ("when-async-provider", when(lambda ctx: True, async_part), "async <order_id>"),
]


@pytest.mark.parametrize(("instruction_", "expected"), [c[1:] for c in RESOLVES], ids=[c[0] for c in RESOLVES])
def test_resolve(instruction_: Any, expected: str) -> None:
    assert run(instruction_) == expected


async def async_true(ctx: Any) -> bool:
    return True


async def async_false(ctx: Any) -> bool:
    return False


@pytest.mark.parametrize(
    ("predicate", "expected"), [(async_true, "Ada"), (async_false, "")], ids=["async-true", "async-false"]
)
def test_when_takes_an_async_predicate(predicate: Any, expected: str) -> None:
    provider = when(predicate, instruction("<user:name>"))
    result = provider(Ctx(STATE))
    assert inspect.isawaitable(result)
    assert asyncio.run(_await(result)) == expected


CONTEXTS = [
    ("mapping", STATE),
    ("mapping-proxy", MappingProxyType(STATE)),
    ("object-with-state", SimpleNamespace(state=STATE)),
    ("readonly-context", Ctx(STATE)),
]


@pytest.mark.parametrize("ctx", [c[1] for c in CONTEXTS], ids=[c[0] for c in CONTEXTS])
def test_a_provider_takes_any_read_only_context(ctx: Any) -> None:
    assert instruction("Hi <user:name>")(ctx) == "Hi Ada"


SYNC = [
    ("instruction", instruction("<order_id>")),
    ("static", static("x")),
    ("concat-of-sync", concat("a", sync_part, instruction("<order_id>"))),
    ("when-sync", when(lambda ctx: True, sync_part)),
]


@pytest.mark.parametrize("provider", [c[1] for c in SYNC], ids=[c[0] for c in SYNC])
def test_a_provider_of_sync_parts_is_sync(provider: Any) -> None:
    assert isinstance(provider(STATE), str)


def test_a_provider_with_an_async_part_returns_an_awaitable() -> None:
    result = concat("a", async_part)(STATE)
    assert isinstance(result, Awaitable)
    assert asyncio.run(_await(result)) == "a\n\nasync <order_id>"


async def _await(result: Awaitable[str]) -> str:
    return await result


def test_instruction_parses_once_and_lists_its_keys() -> None:
    provider = instruction("Hi <user:name>, <order_id> <status?> <user:name>")
    assert isinstance(provider, InstructionProvider)
    assert provider.keys == ("user:name", "order_id", "status")
    assert provider.template == Template("Hi <user:name>, <order_id> <status?> <user:name>")
    assert instruction(provider.template).template is provider.template


def test_composed_providers_list_the_keys_they_know() -> None:
    provider = concat(instruction("<a> <b>"), static("<c>"), when(lambda ctx: True, instruction("<b> <d>")), sync_part)
    assert provider.keys == ("a", "b", "d")


READ_KEYS = [
    ("template-string", "Hi <user:profile.name>, <order_id?> <user:profile.age> <<esc>>", ("user:profile", "order_id")),
    ("template", Template("{user:name} and {order_id?}", dialect="adk"), ("user:name", "order_id")),
    ("instruction", instruction("<a.b.c> <temp:x>"), ("a", "temp:x")),
    ("static", static("<not> <read>"), ()),
    ("concat", concat("<not read>", instruction("<a>"), Template("<b> <a>")), ("a", "b")),
    ("concat-of-a-callable", concat(instruction("<a>"), sync_part), None),
    ("when", when(lambda ctx: True, instruction("<b>")), None),
    ("a-callable", sync_part, None),
    ("empty", "", ()),
]


@pytest.mark.parametrize(("given", "keys"), [c[1:] for c in READ_KEYS], ids=[c[0] for c in READ_KEYS])
def test_read_keys_are_all_the_keys_a_render_may_read_or_none(given: Any, keys: tuple[str, ...] | None) -> None:
    """All or nothing: a callable (or `when`'s predicate) may read any key, so the whole is unknown."""
    assert read_keys(given) == keys


def test_a_missing_key_raises_missing_key_error() -> None:
    with pytest.raises(MissingKeyError) as caught:
        run(concat("ok", instruction("Hi <user:nmae>")))
    assert caught.value.keys == ("user:nmae",)
    assert caught.value.missing[0].suggestion == "user:name"


def test_an_error_in_a_later_part_leaves_no_unawaited_coroutine() -> None:
    # filterwarnings=error turns a "coroutine was never awaited" warning into a failure.
    with pytest.raises(MissingKeyError):
        concat(async_part, instruction("<missing>"))(STATE)
    with pytest.raises(MissingKeyError):
        run(concat(async_part, instruction("<order_id>"), _failing_async, async_part))


async def _failing_async(ctx: Any) -> str:
    raise MissingKeyError([], source="")


DEFINITION_ERRORS = [
    ("bad-missing", lambda: instruction("<a>", missing="ignore"), ValueError, "missing= must be one of"),  # type: ignore[arg-type]
    ("instruction-not-str", lambda: instruction(3), TypeError, "takes a template source"),  # type: ignore[arg-type]
    ("static-not-str", lambda: static(None), TypeError, "static\\(\\) takes a str"),  # type: ignore[arg-type]
    ("concat-bad-part", lambda: concat("a", 3), TypeError, "concat\\(\\) takes strings"),  # type: ignore[arg-type]
    ("concat-bad-sep", lambda: concat("a", sep=None), TypeError, "sep= must be a str"),  # type: ignore[arg-type]
    ("when-not-callable", lambda: when(True, "x"), TypeError, "callable predicate"),  # type: ignore[arg-type]
    ("when-bad-provider", lambda: when(lambda ctx: True, 3), TypeError, "when\\(\\) takes strings"),  # type: ignore[arg-type]
    ("strict-not-bool", lambda: instruction("<a>", strict="no"), TypeError, "strict= must be a bool"),  # type: ignore[arg-type]
    ("strict-positional", lambda: instruction("<a>", "error", True), TypeError, "positional"),  # type: ignore[misc]
]


@pytest.mark.parametrize(
    ("make", "error", "match"), [c[1:] for c in DEFINITION_ERRORS], ids=[c[0] for c in DEFINITION_ERRORS]
)
def test_mistakes_fail_at_definition_time(make: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        make()


RESULT_ERRORS = [
    ("provider-returns-none", lambda ctx: None),
    ("provider-returns-int", lambda ctx: 3),
    ("concat-part-returns-none", concat("a", lambda ctx: None)),
]


@pytest.mark.parametrize("provider", [c[1] for c in RESULT_ERRORS], ids=[c[0] for c in RESULT_ERRORS])
def test_a_provider_must_return_a_str(provider: Any) -> None:
    with pytest.raises(TypeError, match="must return a str"):
        run(provider)


def test_resolve_rejects_what_is_not_an_instruction() -> None:
    with pytest.raises(TypeError, match="an instruction is a str, a Template or a provider, not int"):
        run(3)


REPRS = [
    ("instruction", instruction("Hi <a>"), "instruction('Hi <a>')"),
    ("instruction-mode", instruction("<a>", missing="empty"), "instruction('<a>', missing='empty')"),
    ("static", static("x"), "static('x')"),
    ("concat", concat("x", sep="-"), "concat(static('x'), sep='-')"),
]


@pytest.mark.parametrize(("provider", "expected"), [c[1:] for c in REPRS], ids=[c[0] for c in REPRS])
def test_repr(provider: Any, expected: str) -> None:
    assert repr(provider) == expected


EQUAL = [
    ("instruction", instruction("<a>"), instruction("<a>"), instruction("<a>", missing="empty")),
    ("static", static("x"), static("x"), static("y")),
    ("concat", concat("a", "<b>"), concat("a", "<b>"), concat("a", "<b>", sep=" ")),
    ("when", when(sync_part, "x"), when(sync_part, "x"), when(async_part, "x")),
]


@pytest.mark.parametrize(("one", "same", "other"), [c[1:] for c in EQUAL], ids=[c[0] for c in EQUAL])
def test_providers_compare_by_definition(one: Any, same: Any, other: Any) -> None:
    assert one == same
    assert hash(one) == hash(same)
    assert one != other


# Typos that parse as literal text: instruction() refuses them when it is made (strict, the default).
TYPOS = [
    ("issue-example", "Hi <user:name, < order_id >", [("T002", 1, 16)]),
    ("spaced", "Hello < name >!", [("T002", 1, 7)]),
    ("spaced-optional", "Hello <name ?>!", [("T002", 1, 7)]),
    ("unknown-scope", "Hi <usr:name>", [("T003", 1, 4)]),
    ("scope-case", "Hi <User:name>", [("T003", 1, 4)]),
    ("dash-in-name", "Hi <first-name>", [("T005", 1, 4)]),
    ("doubled-question", "Hi <nick??>", [("T006", 1, 4)]),
    ("several-lines", "Line one.\nHi < name >\nand <usr:x>.", [("T002", 2, 4), ("T003", 3, 5)]),
]


@pytest.mark.parametrize(("source", "found"), [c[1:] for c in TYPOS], ids=[c[0] for c in TYPOS])
def test_a_typo_fails_at_definition_time(source: str, found: list[tuple[str, int, int]]) -> None:
    with pytest.raises(TemplateSyntaxError) as caught:
        instruction(source)
    error = caught.value
    assert isinstance(error, TemplatingError)
    assert [(m.code, m.span.line, m.span.column) for m in error.near_misses] == found
    text = str(error)
    lines = source.split("\n")
    for code, line, column in found:
        assert f"at {line}:{column}: " in text
        assert f"[{code}]" in text
        assert f"    {lines[line - 1]}\n" in text, "the source line is shown"
    assert text.count("^") >= len(found), "a caret under each finding"
    assert "help: " in text
    assert "strict=False" in text
    assert instruction(source, strict=False).template.source == source, "strict=False keeps the text"


# Realistic prompts that must not raise: prose comparisons, HTML/XML, code, JSON, generics, e-mail.
LEGITIMATE = [
    ("prose-comparison", "If a < b and c > d, answer yes; 3<5 too."),
    ("prose-unclosed-comparison", "When count <limit, say so. If x <y, stop."),
    ("html", '<div class="card"><p>Hello <name></p><br/><img src="a.png" alt="x"></div>'),
    ("html-custom-element", "<my-card>Hi</my-card> <h1>T</h1>\n<ul>\n<li>one</li>\n</ul>"),
    ("xml", '<?xml version="1.0"?><order id="1"><item qty="2"/></order>'),
    ("xml-namespace", "<xs:element>x</xs:element>"),
    ("fenced-code", "```cpp\nstd::vector< int > v;\nif (a <b) {}\n```\nDone."),
    ("inline-code", "Use `std::map< K >` or `a <b`."),
    ("unfenced-code", "def f(a, b): return a <b\nfor i in range(n): pass"),
    ("json", '{"a": [1, 2], "b": {"c": "<<x>>"}, "d": "a < b"}'),
    ("generics", "List<T>, Optional<user_id>, Dict<str, int>"),
    ("email-and-url", "Write to <support@example.com> or <https://example.com/a-b>."),
    ("arrows-and-comments", "a <- b, a <-> b, <= and >=, <!-- note -->"),
    ("heart", "We <3 our users"),
    ("escapes", "Write <<name>> or <<first-name>> literally, and <name?>."),
]


@pytest.mark.parametrize("source", [c[1] for c in LEGITIMATE], ids=[c[0] for c in LEGITIMATE])
def test_legitimate_text_passes_the_definition_check(source: str) -> None:
    assert instruction(source).template.source == source


def test_a_template_given_to_concat_is_taken_as_parsed() -> None:
    assert run(concat(Template("a < b >"), sep="")) == "a < b >"


def test_near_miss_errors_pickle() -> None:
    import pickle

    with pytest.raises(TemplateSyntaxError) as caught:
        instruction("< name >")
    copy = pickle.loads(pickle.dumps(caught.value))
    assert str(copy) == str(caught.value)
