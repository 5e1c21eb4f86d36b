"""Jinja2 mode: instruction providers for templates that need loops and conditions.

Rendering happens in Jinja2's ``ImmutableSandboxedEnvironment`` with ``StrictUndefined`` and no
autoescaping. State is exposed read-only, as ``state`` (any key: ``state["user:name"]``), as the
namespaces ``app``, ``user`` and ``temp`` (``user.name`` reads ``user:name``), and, for session
keys that are identifiers, by their own name. Values print as in the angle-bracket syntax
(``None`` empty, containers as JSON). Every error is a :class:`JinjaError` with the template line.
"""

from __future__ import annotations

import difflib
import keyword
import re
import traceback
from collections.abc import Callable, Iterator, Mapping
from types import FunctionType
from typing import Any

from jinja2 import StrictUndefined, TemplateSyntaxError, UndefinedError
from jinja2.exceptions import SecurityError
from jinja2.runtime import BlockReference, Context, LoopContext, Macro, TemplateReference
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Namespace
from markupsafe import Markup

from .errors import TemplatingError
from .nodes import SCOPE_PREFIXES, SCOPES, Span
from .render import format_value, state_getter

__all__ = ["JinjaError", "JinjaProvider", "JinjaSecurityError", "JinjaSyntaxError", "JinjaUndefinedError", "jinja"]

_ABSENT: Any = object()
_NAMES = ("state", *SCOPES)
_TEMPLATE_FILENAME = "<template>"
_CODE = re.compile(r"\{\{.*?(?:\}\}|$)|\{%.*?(?:%\}|$)")


class JinjaError(TemplatingError):
    """A Jinja2 instruction failed to compile or render; ``span`` points at the template line."""


class JinjaSyntaxError(JinjaError):
    """The Jinja2 source is not valid (raised when the provider is made)."""


class JinjaUndefinedError(JinjaError):
    """The template used a name or state key that is not defined."""


class JinjaSecurityError(JinjaError):
    """The template tried something the sandbox forbids (internal attributes, mutating state)."""


class ReadOnlyState(Mapping[str, Any]):
    """A read-only view of state, or of one scope of it (``user`` reads the ``user:`` keys)."""

    __slots__ = ("_get", "_keys", "_label", "_prefix")

    def __init__(self, get: Callable[[str, Any], Any], keys: Callable[[], list[str]], prefix: str, label: str) -> None:
        self._get = get
        self._keys = keys
        self._prefix = prefix
        self._label = label

    def __getitem__(self, key: str) -> Any:
        value = self._get(self._prefix + key, _ABSENT) if isinstance(key, str) else _ABSENT
        if value is _ABSENT:
            raise KeyError(key)
        return value

    def __iter__(self) -> Iterator[str]:
        size = len(self._prefix)
        return iter([key[size:] for key in self._keys() if key.startswith(self._prefix)])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return self._label

    def _lookup(self, environment: _Environment, key: Any) -> Any:
        try:
            return self[key]
        except KeyError:
            full = self._prefix + key if isinstance(key, str) else key
            hint = f"state has no key {full!r}" + _did_you_mean_key(str(full), self._keys())
            return environment.undefined(hint=hint, obj=self, name=str(key))


# What a template may reach on a value: read-only methods and data attributes of the JSON types, by
# exact type (a subclass could redefine a method). Everything else on any other object is refused:
# state read from a plain mapping may hold arbitrary objects, and their methods must not run.
# Padding methods (center, ljust, rjust, zfill, expandtabs) are left out: their width allocates.
_STR_METHODS = frozenset(
    {
        *("capitalize", "casefold", "count", "endswith", "find", "format", "format_map", "index", "isalnum"),
        *("isalpha", "isascii", "isdecimal", "isdigit", "isidentifier", "islower", "isnumeric", "isprintable"),
        *("isspace", "istitle", "isupper", "join", "lower", "lstrip", "partition", "removeprefix", "removesuffix"),
        *("replace", "rfind", "rindex", "rpartition", "rsplit", "rstrip", "split", "splitlines", "startswith"),
        *("strip", "swapcase", "title", "upper"),
    }
)
_NUMBER_ATTRIBUTES = frozenset({"real", "imag", "conjugate", "as_integer_ratio", "is_integer"})
_SAFE_ATTRIBUTES: dict[type, frozenset[str]] = {
    str: _STR_METHODS,
    Markup: _STR_METHODS,
    int: _NUMBER_ATTRIBUTES | {"bit_length", "bit_count", "numerator", "denominator"},
    bool: _NUMBER_ATTRIBUTES | {"bit_length", "bit_count", "numerator", "denominator"},
    float: _NUMBER_ATTRIBUTES | {"hex"},
    dict: frozenset({"get", "items", "keys", "values"}),
    list: frozenset({"count", "index"}),
    tuple: frozenset({"count", "index"}),
}
# Jinja's own machinery a template needs: loops, namespace(), macros and caller(), blocks and self.
_MACHINERY = (LoopContext, Namespace, Macro, BlockReference, TemplateReference)
# The largest string, list or tuple an operator may build, and the largest int ``**`` may build (bits).
MAX_SIZE = 100_000
MAX_POWER_BITS = 100_000


class _Environment(ImmutableSandboxedEnvironment):
    """The sandbox, with state views that answer ``x.name`` and ``x["name"]`` from state keys only,
    an allowlist of attributes and callables, and size limits on ``*``, ``**`` and ``+``."""

    intercepted_binops = frozenset({"*", "**", "+"})

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if not super().is_safe_attribute(obj, attr, value):
            return False
        allowed = _SAFE_ATTRIBUTES.get(type(obj))
        if allowed is not None:
            return attr in allowed
        return isinstance(obj, _MACHINERY)

    def is_safe_callable(self, obj: Any) -> bool:
        if not super().is_safe_callable(obj):
            return False
        if obj is Namespace or obj is self.globals.get("range") or isinstance(obj, _MACHINERY):
            return True
        if isinstance(obj, FunctionType) and obj.__code__ is _FORMAT_WRAPPER_CODE:
            return True  # the sandbox's own safe wrapper of a str's format / format_map
        owner = getattr(obj, "__self__", None)
        name = getattr(obj, "__name__", None)
        if owner is None or not isinstance(name, str):
            return False
        allowed = _SAFE_ATTRIBUTES.get(type(owner))
        if allowed is not None:
            return name in allowed
        return isinstance(owner, LoopContext) and name in {"cycle", "changed"}

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str) and getattr(__obj, "__name__", None) == "replace" and len(args) >= 2:
            old, new = args[0], args[1]
            if isinstance(old, str) and isinstance(new, str):
                count = (len(owner) + 1) if old == "" else owner.count(old)
                _check_size(len(owner) + count * max(0, len(new) - len(old)), "str.replace()")
        return super().call(__context, __obj, *args, **kwargs)

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for sequence, times in ((left, right), (right, left)):
                if isinstance(sequence, (str, list, tuple)) and isinstance(times, int):
                    _check_size(len(sequence) * max(times, 0), "'*'")
        elif operator == "+":
            if isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)):
                _check_size(len(left) + len(right), "'+'")
        elif (
            operator == "**"
            and isinstance(left, int)
            and isinstance(right, int)
            and abs(left) > 1
            and max(abs(left).bit_length() - 1, 1) * right > MAX_POWER_BITS
        ):
            raise SecurityError(f"'**' would build a number of more than {MAX_POWER_BITS} bits")
        return super().call_binop(context, operator, left, right)

    def getitem(self, obj: Any, argument: Any) -> Any:
        if isinstance(obj, ReadOnlyState):
            return obj._lookup(self, argument)
        return super().getitem(obj, argument)

    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, ReadOnlyState):
            if attribute.startswith("_"):
                return self.unsafe_undefined(obj, attribute)
            return obj._lookup(self, attribute)
        return super().getattr(obj, attribute)


_format_wrapper = _Environment().wrap_str_format("".format)
assert _format_wrapper is not None
_FORMAT_WRAPPER_CODE = _format_wrapper.__code__


def _check_size(size: int, what: str) -> None:
    if size > MAX_SIZE:
        raise SecurityError(f"{what} would build a value of {size} items, more than the limit of {MAX_SIZE}")


def _finalize(value: Any) -> str:
    return format_value(value)


_ENVIRONMENT = _Environment(undefined=StrictUndefined, autoescape=False, finalize=_finalize, keep_trailing_newline=True)
# Only ``range`` (size-limited by the sandbox) and ``namespace`` (for loop counters) stay global.
_ENVIRONMENT.globals = {name: _ENVIRONMENT.globals[name] for name in ("range", "namespace")}
_GLOBALS = frozenset(_ENVIRONMENT.globals)


class JinjaProvider:
    """An instruction provider rendered by Jinja2 in a sandbox; compiled once, when it is made."""

    __slots__ = ("_template", "source")

    def __init__(self, source: str) -> None:
        if not isinstance(source, str):
            raise TypeError(f"jinja() takes a template source (str), not {type(source).__name__}")
        self.source = source
        try:
            self._template = _ENVIRONMENT.from_string(source)
        except TemplateSyntaxError as error:
            raise JinjaSyntaxError(
                f"invalid Jinja2 template: {error.message}",
                source=source,
                span=_line_span(source, error.lineno, error.message or ""),
                help="fix the Jinja2 syntax on that line",
            ) from None

    def __call__(self, ctx: Any) -> str:
        get = state_getter(ctx)
        keys = _key_lister(ctx)
        context: dict[str, Any] = {}
        for key in keys():
            # The reserved names and Jinja's globals (range, namespace) win over session keys.
            if key.isidentifier() and not keyword.iskeyword(key) and key not in _NAMES and key not in _GLOBALS:
                context[key] = get(key, None)
        context["state"] = ReadOnlyState(get, keys, "", "state")
        for scope, prefix in zip(SCOPES, SCOPE_PREFIXES, strict=True):
            context[scope] = ReadOnlyState(get, keys, prefix, scope)
        try:
            return self._template.render(context)
        except TemplatingError:
            raise
        except Exception as error:
            raise self._error(error, context) from error

    def _error(self, error: Exception, context: dict[str, Any]) -> JinjaError:
        line = _template_line(error)
        message = str(error)
        undefined_name = re.fullmatch(r"'(\w+)' is undefined", message)
        if undefined_name:
            message += _did_you_mean(undefined_name[1], [*context, *_ENVIRONMENT.globals])
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
        return isinstance(other, JinjaProvider) and other.source == self.source

    def __hash__(self) -> int:
        return hash((JinjaProvider, self.source))

    def __repr__(self) -> str:
        return f"jinja({self.source!r})"


def jinja(source: str) -> JinjaProvider:
    """A provider rendering ``source`` with Jinja2 in a sandbox against the context's state (read-only)."""
    return JinjaProvider(source)


def _key_lister(ctx: Any) -> Callable[[], list[str]]:
    """The keys of whatever holds state, read when needed (a mapping, ``ctx.state``, or an ADK ``State``)."""
    holder = ctx if isinstance(ctx, Mapping) else getattr(ctx, "state", ctx)

    def keys() -> list[str]:
        if isinstance(holder, Mapping):
            found: Any = holder.keys()
        elif callable(getattr(holder, "to_dict", None)):
            found = holder.to_dict().keys()
        else:
            found = ()
        return [key for key in found if isinstance(key, str)]

    return keys


def _did_you_mean(name: str, options: list[str]) -> str:
    match = difflib.get_close_matches(name, options, n=1, cutoff=0.6)
    return f"; did you mean {match[0]!r}?" if match else ""


def _did_you_mean_key(key: str, keys: list[str]) -> str:
    """A close state key, compared within the key's scope so that a shared ``user:`` does not count as likeness."""
    scope, colon, name = key.partition(":")
    if colon and scope in SCOPES:
        names = [k[len(scope) + 1 :] for k in keys if k.startswith(scope + ":")]
        match = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
        return f"; did you mean {scope + ':' + match[0]!r}?" if match else ""
    return _did_you_mean(key, [k for k in keys if k.partition(":")[0] not in SCOPES or ":" not in k])


def _template_line(error: BaseException) -> int | None:
    """The template line Jinja2 records in the traceback of a render error (the innermost one)."""
    line = None
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename == _TEMPLATE_FILENAME:
            line = frame.lineno
    return line


def _line_span(source: str, line: int | None, message: str) -> Span | None:
    """A span on ``line``: what ``message`` quotes, found in the line's Jinja2 code if possible, else the line."""
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
