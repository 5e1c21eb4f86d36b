"""Instruction providers: callables that take a read-only context and return the instruction.

A provider is what an agent framework calls each turn to get its instruction (Google ADK's
`LlmAgent(instruction=...)` takes one as it is). The context is anything `Template.render`
accepts: a mapping, or an object with a `.state` mapping. Providers built here stay synchronous
when everything in them is, and return an awaitable as soon as one part is asynchronous.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeAlias, cast

from .errors import NearMiss, TemplateSyntaxError
from .linter import lint
from .renderer import Missing
from .template import Template, parse

__all__ = [
    "DEFINITION_RULES",
    "ConcatProvider",
    "InstructionLike",
    "InstructionProvider",
    "Provider",
    "StaticProvider",
    "WhenProvider",
    "check_near_misses",
    "concat",
    "instruction",
    "read_keys",
    "resolve",
    "static",
    "when",
]

# The lint rules checked when a provider (or an Agent's template string) is defined: text that was
# probably meant as a placeholder but renders as literal text. T004 (unclosed "<name") is left out:
# it fires on legitimate prose and code such as "if x <y" or "return a <b".
DEFINITION_RULES = ("T002", "T003", "T005", "T006")

Provider: TypeAlias = Callable[[Any], str | Awaitable[str]]
"""A callable taking a read-only context and returning the instruction, or an awaitable of it."""

InstructionLike: TypeAlias = str | Template | Provider
"""What an instruction may be: a template source, a parsed `Template`, or a provider."""

Predicate: TypeAlias = Callable[[Any], bool | Awaitable[bool]]

_MODES = ("error", "empty", "keep")


class InstructionProvider:
    """Renders one template against `ctx.state` (or a plain mapping) each time it is called.

    The template is parsed when the provider is made; `keys` lists the keys it uses so a
    definition can be checked before anything runs.
    """

    __slots__ = ("missing", "template")

    template: Template
    missing: Missing

    def __init__(self, source: str | Template, *, missing: Missing = "error", strict: bool = True) -> None:
        if missing not in _MODES:
            raise ValueError(f"missing= must be one of 'error', 'empty' or 'keep', not {missing!r}")
        if not isinstance(strict, bool):
            raise TypeError(f"strict= must be a bool, not {type(strict).__name__}")
        if not isinstance(source, (str, Template)):
            raise TypeError(f"instruction() takes a template source (str) or a Template, not {type(source).__name__}")
        template = source if isinstance(source, Template) else parse(source)
        if strict:
            check_near_misses(template)
        self.template = template
        self.missing = missing

    @property
    def keys(self) -> tuple[str, ...]:
        return self.template.keys

    def __call__(self, ctx: Any) -> str:
        # Template.render without its extra call: this runs on every agent turn.
        template = self.template
        try:
            plan = template._plan
        except AttributeError:  # the template's first render
            plan = template._planned()
        return plan.render(ctx, missing=self.missing)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and (
            self.template,
            self.missing,
        ) == (
            other.template,
            other.missing,
        )

    def __hash__(self) -> int:
        return hash((type(self), self.template, self.missing))

    def __repr__(self) -> str:
        option = "" if self.missing == "error" else f", missing={self.missing!r}"
        return f"instruction({self.template.source!r}{option})"


class StaticProvider:
    """Returns its text exactly: nothing in it is ever looked up."""

    __slots__ = ("text",)

    keys: tuple[str, ...] = ()

    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise TypeError(f"static() takes a str, not {type(text).__name__}")
        self.text = text

    def __call__(self, ctx: Any) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and (self.text,) == (other.text,)

    def __hash__(self) -> int:
        return hash((type(self), self.text))

    def __repr__(self) -> str:
        return f"static({self.text!r})"


class ConcatProvider:
    """The non-empty results of its parts, in order, joined by `sep`."""

    __slots__ = ("parts", "sep")

    def __init__(self, parts: Sequence[Provider], sep: str) -> None:
        self.parts = tuple(parts)
        self.sep = sep

    @property
    def keys(self) -> tuple[str, ...]:
        return _keys_of(self.parts)

    def __call__(self, ctx: Any) -> str | Awaitable[str]:
        results: list[str | Awaitable[str]] = []
        try:
            for part in self.parts:
                results.append(_call(part, ctx))
        except BaseException:
            _close(results)
            raise
        if any(not isinstance(result, str) for result in results):
            return self._join_async(results)
        return self.sep.join(result for result in results if isinstance(result, str) and result)

    async def _join_async(self, results: list[str | Awaitable[str]]) -> str:
        texts: list[str] = []
        for index, result in enumerate(results):
            try:
                texts.append(result if isinstance(result, str) else _checked(await result, "a provider"))
            except BaseException:
                _close(results[index + 1 :])
                raise
        return self.sep.join(text for text in texts if text)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and (
            self.parts,
            self.sep,
        ) == (
            other.parts,
            other.sep,
        )

    def __hash__(self) -> int:
        return hash((type(self), self.parts, self.sep))

    def __repr__(self) -> str:
        return f"concat({', '.join(map(repr, self.parts))}, sep={self.sep!r})"


class WhenProvider:
    """The provider's result when `predicate(ctx)` is true, otherwise the empty string."""

    __slots__ = ("predicate", "provider")

    def __init__(self, predicate: Predicate, provider: Provider) -> None:
        self.predicate = predicate
        self.provider = provider

    @property
    def keys(self) -> tuple[str, ...]:
        return _keys_of((self.provider,))

    def __call__(self, ctx: Any) -> str | Awaitable[str]:
        decision = self.predicate(ctx)
        if inspect.isawaitable(decision):
            return self._decide_async(decision, ctx)
        return _call(self.provider, ctx) if decision else ""

    async def _decide_async(self, decision: Awaitable[bool], ctx: Any) -> str:
        if not await decision:
            return ""
        result = _call(self.provider, ctx)
        return result if isinstance(result, str) else _checked(await result, "a provider")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and (
            self.predicate,
            self.provider,
        ) == (
            other.predicate,
            other.provider,
        )

    def __hash__(self) -> int:
        return hash((type(self), self.predicate, self.provider))

    def __repr__(self) -> str:
        return f"when({self.predicate!r}, {self.provider!r})"


def instruction(source: str | Template, *, missing: Missing = "error", strict: bool = True) -> InstructionProvider:
    """A provider rendering `source` against the context's state; parsed now, so mistakes show at definition.

    With `strict` (the default), text that looks like a mistyped placeholder (`< name >`,
    `<usr:name>`, `<first-name>`, `<name??>`: lint rules T002, T003, T005, T006) raises
    [`TemplateSyntaxError`][templating.TemplateSyntaxError] listing every one; `strict=False` keeps such text as
    literal.
    """
    return InstructionProvider(source, missing=missing, strict=strict)


def check_near_misses(template: str | Template) -> None:
    """Raise [`TemplateSyntaxError`][templating.TemplateSyntaxError] if `template` (angle syntax) has near misses;
    ADK-dialect ones pass."""
    tpl = template if isinstance(template, Template) else parse(template)
    if tpl.dialect != "angle":
        return
    found = [
        NearMiss(d.code, d.message, d.span, d.help) for d in lint(tpl, select=DEFINITION_RULES) if d.span is not None
    ]
    if found:
        raise TemplateSyntaxError(found, source=tpl.source)


def static(text: str) -> StaticProvider:
    """A provider returning `text` exactly, with no injection (for text full of `<...>`)."""
    return StaticProvider(text)


def concat(*parts: str | Template | Provider, sep: str = "\n\n") -> ConcatProvider:
    """A provider joining its parts' results with `sep`; empty results are left out.

    A `str` part is static text (not a template); a `Template` part is rendered strictly.
    """
    if not isinstance(sep, str):
        raise TypeError(f"sep= must be a str, not {type(sep).__name__}")
    return ConcatProvider([_as_provider(part, "concat()") for part in parts], sep)


def when(predicate: Predicate, provider: str | Template | Provider) -> WhenProvider:
    """A provider that gives `provider`'s result only when `predicate(ctx)` is true (else `""`).

    `predicate` receives the context exactly as the provider does (an agent context: read state
    as `ctx.state`; a plain mapping when rendered against one) and may be sync or async. A
    `str` is static text.
    """
    if not callable(predicate):
        raise TypeError(f"when() takes a callable predicate, not {type(predicate).__name__}")
    return WhenProvider(predicate, _as_provider(provider, "when()"))


async def resolve(instruction: InstructionLike, ctx: Any) -> str:
    """The final instruction text for `ctx`.

    A `str` is rendered as a template (parsed once, cached), a `Template` is rendered, and a
    provider (sync or async) is called; a provider's result is used as it is, never rendered again.
    """
    if isinstance(instruction, str):
        return parse(instruction).render(ctx)
    if isinstance(instruction, Template):
        return instruction.render(ctx)
    if not callable(instruction):
        raise TypeError(f"an instruction is a str, a Template or a provider, not {type(instruction).__name__}")
    result = instruction(ctx)
    if inspect.isawaitable(result):
        result = await result
    return _checked(result, repr(instruction))


def read_keys(instruction: InstructionLike) -> tuple[str, ...] | None:
    """The state keys resolving `instruction` may read (each placeholder's first key, `user:profile` for
    `<user:profile.name>`), when that is known before it runs: template strings, `Template`s, and this module's
    `instruction`, `static` and `concat` of them; `None` when a part may read anything (another callable,
    `when`'s predicate, a Jinja2 provider). Unlike `keys`, which lists what can be known, this is all or nothing:
    a caller may read only these keys for the render."""
    kind = type(instruction)
    if kind is str:
        return _names(parse(cast(str, instruction)))
    if kind is Template:
        return _names(cast(Template, instruction))
    if kind is InstructionProvider:
        return _names(cast(InstructionProvider, instruction).template)
    if kind is StaticProvider:
        return ()
    if kind is ConcatProvider:
        found: dict[str, None] = {}
        for part in cast(ConcatProvider, instruction).parts:
            keys = read_keys(part)
            if keys is None:
                return None
            found.update(dict.fromkeys(keys))
        return tuple(found)
    return None


def _names(template: Template) -> tuple[str, ...]:
    return tuple(dict.fromkeys([placeholder.name for placeholder in template.placeholders]))


def _as_provider(part: object, where: str) -> Provider:
    if isinstance(part, str):
        return StaticProvider(part)
    if isinstance(part, Template):
        return InstructionProvider(part, strict=False)  # a Template is taken as parsed: the caller chose its text
    if callable(part):
        provider: Provider = part
        return provider
    raise TypeError(f"{where} takes strings, Templates or providers, not {type(part).__name__}")


def _call(provider: Provider, ctx: Any) -> str | Awaitable[str]:
    result = provider(ctx)
    if isinstance(result, str) or inspect.isawaitable(result):
        return result
    return _checked(result, repr(provider))


def _checked(result: object, what: str) -> str:
    if not isinstance(result, str):
        raise TypeError(f"{what} returned {type(result).__name__}; an instruction provider must return a str")
    return result


def _close(results: list[str | Awaitable[str]]) -> None:
    """Close coroutines that will never be awaited, so an error in a later part leaves no warning behind."""
    for result in results:
        close = getattr(result, "close", None)
        if inspect.iscoroutine(result) and callable(close):
            close()


def _keys_of(parts: Sequence[Provider]) -> tuple[str, ...]:
    keys: dict[str, None] = {}
    for part in parts:
        found = getattr(part, "keys", ())
        if isinstance(found, tuple):
            keys.update(dict.fromkeys(key for key in found if isinstance(key, str)))
    return tuple(keys)
