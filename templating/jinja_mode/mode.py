"""Jinja2 mode: instruction providers for templates that need loops and conditions.

Rendering happens in Jinja2's `ImmutableSandboxedEnvironment` with `StrictUndefined` and no
autoescaping. State is exposed read-only, as `state` (any key: `state["user:name"]`), as the
namespaces `app`, `user` and `temp` (`user.name` reads `user:name`), and, for session
keys that are identifiers, by their own name. Values print as in the angle-bracket syntax
(`None` empty, containers as JSON). Every error is a [`JinjaError`][templating.JinjaError] with the template line.

A render reads only the names the template uses (found once, when it is compiled), so its cost does
not grow with the size of state. Values are read where they are stored: the sandbox, not a wrapper,
is what keeps a template from changing them, exactly as for a plain dict of state.

The sandbox itself (state views, allowlists, the budget-charging operators and code generator) is
in `sandbox`; the budgets in `budget`, the size-checked filters in `filters`.
"""

from __future__ import annotations

import keyword
import re
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from jinja2 import TemplateSyntaxError, UndefinedError, meta
from jinja2.exceptions import SecurityError

from ..errors import CyclicValueError, TemplatingError, UnprintableValueError
from ..nodes import SCOPE_PREFIXES, SCOPES, Span
from ..renderer import state_reader, unprintable
from .budget import (
    BUDGET_ENVIRONMENT,
    CURRENT,
    UNITS,
    BudgetExceeded,
    CyclicValue,
    JinjaBudget,
    NotData,
    Spend,
)
from .sandbox import _ENVIRONMENT, _GLOBALS
from .views import ReadOnlyState, bounded, did_you_mean, hinted

__all__ = [
    "JinjaBudget",
    "JinjaBudgetError",
    "JinjaCyclicValueError",
    "JinjaError",
    "JinjaProvider",
    "JinjaSecurityError",
    "JinjaSyntaxError",
    "JinjaUndefinedError",
    "JinjaUnprintableError",
    "jinja",
]

_ABSENT: Any = object()
_NAMES = ("state", *SCOPES)
_TEMPLATE_FILENAME = "<template>"
_CODE = re.compile(r"\{\{.*?(?:\}\}|$)|\{%.*?(?:%\}|$)")


class JinjaError(TemplatingError):
    """A Jinja2 instruction failed to compile or render; `span` points at the template line."""


class JinjaSyntaxError(JinjaError):
    """The Jinja2 source is not valid (raised when the provider is made)."""


class JinjaUndefinedError(JinjaError):
    """The template used a name or state key that is not defined."""


class JinjaSecurityError(JinjaError):
    """The template tried something the sandbox forbids (internal attributes, mutating state)."""


class JinjaBudgetError(JinjaSecurityError):
    """A render went over one of its [`JinjaBudget`][templating.JinjaBudget] limits.

    `budget` names the limit (`"max_loop_steps"`, ...) and `limit` is its value; `span` is the
    template line where the render stopped.
    """

    def __init__(self, message: str, *, budget: str, limit: float, **where: Any) -> None:
        super().__init__(message, **where)
        self.budget = budget
        self.limit = limit


class JinjaUnprintableError(JinjaSecurityError):
    """The template would print, or turn into text, something that is not data: a function, a
    method, a class, a module, an iterator, an object with no data representation."""


class JinjaCyclicValueError(JinjaUnprintableError, CyclicValueError):
    """The template would print a list or dict that contains itself."""


def _bindable(key: str) -> bool:
    """Whether a state key is also bound by its own name: an identifier that is not a keyword, and not
    a name the mode reserves or a global (those win over session keys)."""
    return key.isidentifier() and not keyword.iskeyword(key) and key not in _NAMES and key not in _GLOBALS


class JinjaProvider:
    """An instruction provider rendered by Jinja2 in a sandbox; compiled once, when it is made."""

    __slots__ = ("_names", "_scopes", "_template", "budget", "source")

    def __init__(self, source: str, *, budget: JinjaBudget | None = None) -> None:
        if not isinstance(source, str):
            raise TypeError(f"jinja() takes a template source (str), not {type(source).__name__}")
        if budget is not None and not isinstance(budget, JinjaBudget):
            raise TypeError(f"budget= takes a JinjaBudget, not {type(budget).__name__}")
        self.source = source
        self.budget = JinjaBudget() if budget is None else budget
        try:
            self._template = _ENVIRONMENT.from_string(source)
            # The names the template reads from its context: only these are looked up in state.
            used = meta.find_undeclared_variables(_ENVIRONMENT.parse(source))
        except TemplateSyntaxError as error:
            raise JinjaSyntaxError(
                f"invalid Jinja2 template: {error.message}",
                source=source,
                span=_line_span(source, error.lineno, error.message or ""),
                help="fix the Jinja2 syntax on that line",
            ) from None
        self._names = tuple(sorted(name for name in used if _bindable(name)))
        self._scopes = tuple(
            (name, prefix) for name, prefix in zip(_NAMES, ("", *SCOPE_PREFIXES), strict=True) if name in used
        )

    def __call__(self, ctx: Any) -> str:
        get = state_reader(ctx)
        keys = _key_lister(ctx)
        context: dict[str, Any] = {}
        for name in self._names:
            value = get(name, _ABSENT)
            if value is not _ABSENT:
                context[name] = bounded(value)
        for name, prefix in self._scopes:
            context[name] = ReadOnlyState(get, keys, prefix, name)
        token = CURRENT.set(Spend(self.budget))
        try:
            return self._template.render(context)
        except TemplatingError as error:
            if isinstance(error, UnprintableValueError) and not isinstance(error, JinjaError):
                raise self._error(error, keys) from None  # from format_value: give it the template line
            raise
        except Exception as error:
            raise self._error(error, keys) from error
        finally:
            CURRENT.reset(token)

    def _error(self, error: Exception, keys: Callable[[], Iterator[str]]) -> JinjaError:
        line = _template_line(error)
        message = str(error)
        undefined_name = re.fullmatch(r"'(\w+)' is undefined", message)
        if undefined_name:
            names = [*(key for key in hinted(keys) if _bindable(key)), *_NAMES, *_ENVIRONMENT.globals]
            message += did_you_mean(undefined_name[1], names)
        where: dict[str, Any] = {"source": self.source, "span": _line_span(self.source, line, message)}
        if isinstance(error, BudgetExceeded):
            limit = f"{error.limit} {UNITS[error.budget]}"
            return JinjaBudgetError(
                f"the Jinja2 template went over its budget: {message} ({error.budget}={error.limit})",
                budget=error.budget,
                limit=error.limit,
                help=f"the {error.budget} budget is {limit}: simplify the template, or raise the limit with "
                f"jinja(..., budget=JinjaBudget({error.budget}=...)) or {BUDGET_ENVIRONMENT[error.budget]}",
                **where,
            )
        if isinstance(error, NotData):
            kind = JinjaCyclicValueError if isinstance(error, CyclicValue) else JinjaUnprintableError
            return kind(
                f"the Jinja2 sandbox refused to print: {message}",
                help="only data prints (text, numbers, true/false, none, lists and dicts of them): call a "
                "function, turn an iterator into a list with |list, and put objects in state as dicts",
                **where,
            )
        if isinstance(error, UnprintableValueError) or (
            isinstance(error, ValueError) and "integer string conversion" in message
        ):
            unprinted = error if isinstance(error, UnprintableValueError) else unprintable(None, error)
            kind = JinjaCyclicValueError if isinstance(error, CyclicValueError) else JinjaUnprintableError
            return kind(
                f"the Jinja2 template cannot print a value: {unprinted.message}",
                help="store the value in state as text (a string), or without a cycle",
                **where,
            )
        if isinstance(error, RecursionError):
            return JinjaBudgetError(
                "the Jinja2 template nests too deeply: a macro or recursive loop that does not stop, "
                "or a value nested too deeply",
                budget="recursion",
                limit=sys.getrecursionlimit(),
                help="make the recursion stop (a macro calling itself needs a condition that ends it)",
                **where,
            )
        if isinstance(error, SecurityError):
            return JinjaSecurityError(
                f"the Jinja2 sandbox refused: {message}",
                source=self.source,
                span=_line_span(self.source, line, message),
                help=(
                    "a template reads state; it cannot reach internal attributes or change state, calls only "
                    "read-only methods of str, numbers, dict, list and tuple, and cannot build huge values"
                ),
            )
        if isinstance(error, UndefinedError):
            return JinjaUndefinedError(
                f"undefined in Jinja2 template: {message}",
                source=self.source,
                span=_line_span(self.source, line, message),
                help="give the key a value in state, or guard it with {% if state['key'] is defined %}",
            )
        return JinjaError(
            f"Jinja2 template failed: {type(error).__name__}: {message}",
            source=self.source,
            span=_line_span(self.source, line, message),
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JinjaProvider) and (other.source, other.budget) == (self.source, self.budget)

    def __hash__(self) -> int:
        return hash((JinjaProvider, self.source, self.budget))

    def __repr__(self) -> str:
        return f"jinja({self.source!r})"


def jinja(source: str, *, budget: JinjaBudget | None = None) -> JinjaProvider:
    """A provider rendering `source` with Jinja2 in a sandbox against the context's state (read-only).

    Each render stays within `budget` (by default [`JinjaBudget()`][templating.JinjaBudget]: the
    built-in limits, or those the `TEMPLATING_JINJA_MAX_*` environment variables set).
    """
    return JinjaProvider(source, budget=budget)


def _key_lister(ctx: Any) -> Callable[[], Iterator[str]]:
    """The keys of whatever holds state, read lazily when needed (a mapping, `ctx.state`, or an ADK
    `State`): a state whose keys never end is read only as far as a budget or a hint's bound goes."""
    holder = ctx if isinstance(ctx, Mapping) else getattr(ctx, "state", ctx)

    def keys() -> Iterator[str]:
        if isinstance(holder, Mapping):
            found: Any = holder.keys()
        elif callable(getattr(holder, "to_dict", None)):
            found = holder.to_dict().keys()
        else:
            found = ()
        return (key for key in found if isinstance(key, str))

    return keys


def _template_line(error: BaseException) -> int | None:
    """The template line Jinja2 records in the traceback of a render error (the innermost one)."""
    line = None
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename == _TEMPLATE_FILENAME:
            line = frame.lineno
    return line


def _line_span(source: str, line: int | None, message: str) -> Span | None:
    """A span on `line`: what `message` quotes, found in the line's Jinja2 code if possible, else the line."""
    if line is None or line < 1:
        return None
    lines = source.split("\n")
    line = min(line, len(lines))
    start = sum(len(text) + 1 for text in lines[: line - 1])
    text = lines[line - 1]
    code = [match.span() for match in _CODE.finditer(text)]
    for quoted in re.findall(r"'([^']+)'", message):
        scope, colon, name = quoted.partition(":")
        needles = [quoted, f"{scope}.{name}", name] if colon else [quoted]
        for needle in needles:
            found = [m.start() for m in re.finditer(re.escape(needle), text)]
            inside = [at for at in found if any(a <= at < b for a, b in code)]
            for column in inside or found:
                return Span(start + column, start + column + len(needle), line, column + 1)
    indent = len(text) - len(text.lstrip())
    return Span(start + indent, start + max(len(text), indent + 1), line, indent + 1)
