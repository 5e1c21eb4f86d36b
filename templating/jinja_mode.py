"""Jinja2 mode: instruction providers for templates that need loops and conditions.

Rendering happens in Jinja2's `ImmutableSandboxedEnvironment` with `StrictUndefined` and no
autoescaping. State is exposed read-only, as `state` (any key: `state["user:name"]`), as the
namespaces `app`, `user` and `temp` (`user.name` reads `user:name`), and, for session
keys that are identifiers, by their own name. Values print as in the angle-bracket syntax
(`None` empty, containers as JSON). Every error is a [`JinjaError`][templating.JinjaError] with the template line.

A render reads only the names the template uses (found once, when it is compiled), so its cost does
not grow with the size of state. Values are read where they are stored: the sandbox, not a wrapper,
is what keeps a template from changing them, exactly as for a plain dict of state.
"""

from __future__ import annotations

import difflib
import inspect
import keyword
import re
import string
import traceback
from collections.abc import Callable, Iterator, Mapping
from types import FunctionType
from typing import Any

from jinja2 import StrictUndefined, TemplateSyntaxError, Undefined, UndefinedError, meta, nodes, pass_eval_context
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.filters import do_batch, do_indent, do_tojson, sync_do_slice
from jinja2.nodes import EvalContext
from jinja2.runtime import BlockReference, Context, LoopContext, Macro, TemplateReference
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Namespace
from markupsafe import Markup

from .errors import TemplatingError
from .nodes import SCOPE_PREFIXES, SCOPES, Span
from .render import format_value, state_reader
from .state import ReadonlyDict, ReadonlyList, ReadonlyState

__all__ = ["JinjaError", "JinjaProvider", "JinjaSecurityError", "JinjaSyntaxError", "JinjaUndefinedError", "jinja"]

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


class ReadOnlyState(Mapping[str, Any]):
    """A read-only view of state, or of one scope of it (`user` reads the `user:` keys)."""

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
# State read through a ReadonlyContext comes as read-only views: the same read methods, reimplemented.
_SAFE_ATTRIBUTES.update({view: _SAFE_ATTRIBUTES[dict] for view in (ReadonlyDict, ReadonlyState)})
_SAFE_ATTRIBUTES[ReadonlyList] = _SAFE_ATTRIBUTES[list]


def _allowed(kind: type, attr: str) -> bool | None:
    """Whether `attr` of a `kind` may be used: allowlisted for the type, or for a base type when the
    subclass did not redefine it (a `defaultdict`'s `get`); `None` for a type outside the allowlist."""
    allowed = _SAFE_ATTRIBUTES.get(kind)
    if allowed is not None:
        return attr in allowed
    for base in kind.__mro__[1:]:
        allowed = _SAFE_ATTRIBUTES.get(base)
        if allowed is not None:
            return attr in allowed and inspect.getattr_static(kind, attr, None) is inspect.getattr_static(base, attr)
    return None


# Jinja's own machinery a template needs: loops, namespace(), macros and caller(), blocks and self.
_MACHINERY = (LoopContext, Namespace, Macro, BlockReference, TemplateReference)
# The largest string, list or tuple an operator may build, and the largest int ``**`` may build (bits).
MAX_SIZE = 100_000
MAX_POWER_BITS = 100_000


class _Environment(ImmutableSandboxedEnvironment):
    """The sandbox, with state views that answer `x.name` and `x["name"]` from state keys only,
    an allowlist of attributes and callables, and size limits on `*`, `**` and `+`."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if not super().is_safe_attribute(obj, attr, value):
            return False
        allowed = _allowed(type(obj), attr)
        if allowed is not None:
            return allowed
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
        allowed = _allowed(type(owner), name)
        if allowed is not None:
            return allowed
        return isinstance(owner, LoopContext) and name in {"cycle", "changed"}

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str) and getattr(__obj, "__name__", None) == "replace" and len(args) >= 2:
            old, new = args[0], args[1]
            if isinstance(old, str) and isinstance(new, str):
                count = (len(owner) + 1) if old == "" else owner.count(old)
                _check_size(len(owner) + count * max(0, len(new) - len(old)), "str.replace()")
        if isinstance(owner, str) and getattr(__obj, "__name__", None) == "join" and len(args) == 1 and not kwargs:
            items = list(args[0])  # the separator repeats once per item: check before joining
            size = sum(len(item) for item in items if isinstance(item, str)) + len(owner) * max(len(items) - 1, 0)
            _check_size(size, "str.join()")
            args = (items,)
        return super().call(__context, __obj, *args, **kwargs)

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for sequence, times in ((left, right), (right, left)):
                if isinstance(sequence, (str, list, tuple)) and isinstance(times, int):
                    _check_size(len(sequence) * max(times, 0), "'*'")
            if isinstance(left, int) and isinstance(right, int):
                _check_bits(abs(left).bit_length() + abs(right).bit_length(), "'*'")
        elif operator == "%":
            if isinstance(left, str):
                _check_percent(left, right, "'%'")
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

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        wrapper = super().wrap_str_format(value)
        if wrapper is not None:
            _check_format_string(value.__self__, "str.format()")  # the widths a format string asks for
        return wrapper

    def checked_concat(self, parts: tuple[Any, ...]) -> str:
        """`a ~ b`: the strings joined, if the result stays within the size limit."""
        texts = [str(part) for part in parts]
        _check_size(sum(len(text) for text in texts), "'~'")
        return "".join(texts)

    def getitem(self, obj: Any, argument: Any) -> Any:
        if isinstance(obj, ReadOnlyState):
            return obj._lookup(self, argument)
        if isinstance(obj, Mapping) and type(obj) is not dict:
            # ``get``, never ``[]``: a defaultdict (or another mapping with a __missing__) is not written to.
            value = _get(obj, argument)
            if value is not _ABSENT:
                return value
            return (
                super().getitem(_NO_ITEMS, argument)
                if not isinstance(argument, str)
                else self._attribute(obj, argument)
            )
        return super().getitem(obj, argument)

    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, ReadOnlyState):
            if attribute.startswith("_"):
                return self.unsafe_undefined(obj, attribute)
            return obj._lookup(self, attribute)
        if isinstance(obj, Mapping) and type(obj) is not dict:
            if hasattr(obj, attribute):
                return self._attribute(obj, attribute)
            value = _get(obj, attribute)
            return self.undefined(obj=obj, name=attribute) if value is _ABSENT else value
        return super().getattr(obj, attribute)

    def _attribute(self, obj: Any, attribute: str) -> Any:
        """`obj.attribute` if the sandbox allows it, else an undefined that says why."""
        try:
            value = getattr(obj, attribute)
        except AttributeError:
            return self.undefined(obj=obj, name=attribute)
        wrapper = self.wrap_str_format(value)
        if wrapper is not None:
            return wrapper
        return value if self.is_safe_attribute(obj, attribute, value) else self.unsafe_undefined(obj, attribute)


_NO_ITEMS: dict[Any, Any] = {}


def _get(mapping: Mapping[Any, Any], key: Any) -> Any:
    try:
        return mapping.get(key, _ABSENT)
    except TypeError:  # an unhashable key
        return _ABSENT


def _check_size(size: int, what: str) -> None:
    if size > MAX_SIZE:
        raise SecurityError(f"{what} would build a value of {size} items, more than the limit of {MAX_SIZE}")


def _check_bits(bits: int, what: str) -> None:
    if bits > MAX_POWER_BITS:
        raise SecurityError(f"{what} would build a number of more than {MAX_POWER_BITS} bits")


# A printf-style conversion: its width and precision, either of which may be '*' (taken from the arguments).
_PERCENT = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d*)(?:\.(\*|\d*))?[hlL]?(.)", re.DOTALL)


def _check_percent(template: str, args: Any, what: str) -> None:
    """`template % args` stays within the size limit: its widths and precisions, plus the text given."""
    size = len(template)
    for match in _PERCENT.finditer(template):
        for number in match.group(1, 2):
            if number == "*":
                raise SecurityError(f"{what} with a '*' width or precision is not allowed in a template")
            size += int(number or 0)
    values = args if isinstance(args, tuple) else (args.values() if isinstance(args, Mapping) else (args,))
    size += sum(len(value) for value in values if isinstance(value, str))
    _check_size(size, what)


def _check_format_string(template: str, what: str) -> None:
    """A `str.format` template asks for no more than the size limit in widths and precisions."""
    size = len(template)
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError:
        return  # malformed: str.format itself raises
    for _, _, spec, _ in fields:
        if spec and "{" in spec:
            raise SecurityError(f"{what} with a width or precision taken from an argument is not allowed in a template")
        size += sum(int(number) for number in re.findall(r"\d+", spec or ""))
    _check_size(size, what)


_PRINTABLE = (str, int, float, type(None))


def _printable(value: Any) -> bool:
    """Whether `value` is data that may be printed: not a function, class, iterator, or an object that
    would print as `<... at 0x...>` (its address), nor a container holding one."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _PRINTABLE):
            continue
        if isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif callable(item) or isinstance(item, Iterator) or _default_repr(type(item)):
            return False
    return True


def _default_repr(kind: type) -> bool:
    methods: tuple[object, object] = (kind.__str__, kind.__repr__)
    return methods == (object.__str__, object.__repr__)


def _finalize(value: Any) -> str:
    if isinstance(value, Undefined):
        return str(value)  # StrictUndefined: raises, naming what is undefined
    if not _printable(value):
        # A function, a class, an iterator... would print as "<... at 0x7f...>": an address, never an instruction.
        raise SecurityError(
            f"cannot print a {type(value).__name__} value: a template prints state values (text, numbers, "
            "lists and dicts); call the function, or turn an iterator into a list with |list"
        )
    return format_value(value)


def _replace_filter(value: Any, old: Any, new: Any, count: int | None = None) -> str:
    text, old, new = str(value), str(old), str(new)
    times = ((len(text) + 1) if old == "" else text.count(old)) if count is None or count < 0 else count
    _check_size(len(text) + times * max(0, len(new) - len(old)), "the replace filter")
    return text.replace(old, new, -1 if count is None else count)


def _join_filter(value: Any, separator: Any = "", attribute: Any = None) -> str:
    items = list(value)
    if attribute is not None:
        items = [_ENVIRONMENT.getitem(item, attribute) for item in items]
    texts = [str(item) for item in items]
    sep: str = str(separator)
    _check_size(sum(len(text) for text in texts) + len(sep) * max(len(texts) - 1, 0), "the join filter")
    return sep.join(texts)


def _center_filter(value: Any, width: int = 80) -> str:
    _check_size(width, "the center filter")
    return str(value).center(width)


def _indent_filter(value: Any, width: Any = 4, first: bool = False, blank: bool = False) -> str:
    text = str(value)
    if isinstance(width, int):
        _check_size(len(text) + width * (text.count("\n") + 1), "the indent filter")
    else:
        width = str(width)
        _check_size(len(text) + len(width) * (text.count("\n") + 1), "the indent filter")
    return do_indent(value, width, first, blank)


def _format_filter(value: Any, *args: Any, **kwargs: Any) -> str:
    if args and kwargs:
        raise TypeError("can't handle positional and keyword arguments at the same time")
    _check_percent(str(value), kwargs or args, "the format filter")
    return str(value) % (kwargs or args)


def _batch_filter(value: Any, linecount: int, fill_with: Any = None) -> Any:
    _check_size(linecount, "the batch filter")
    return do_batch(value, linecount, fill_with)


def _slice_filter(value: Any, slices: int, fill_with: Any = None) -> Any:
    _check_size(slices, "the slice filter")
    return sync_do_slice(value, slices, fill_with)


@pass_eval_context
def _tojson_filter(eval_ctx: EvalContext, value: Any, indent: int | None = None) -> Markup:
    if indent is not None:
        _check_size(indent, "the tojson filter's indent")
    return do_tojson(eval_ctx, value, indent)


def _json_default(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


class _CodeGenerator(CodeGenerator):
    """Compiles `a ~ b` to a size-checked join (Jinja2 joins without a limit)."""

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.checked_concat((")
        for argument in node.nodes:
            self.visit(argument, frame)
            self.write(", ")
        self.write("))")


_format_wrapper = _Environment().wrap_str_format("".format)
assert _format_wrapper is not None
_FORMAT_WRAPPER_CODE = _format_wrapper.__code__
_Environment.code_generator_class = _CodeGenerator
_ENVIRONMENT = _Environment(undefined=StrictUndefined, autoescape=False, finalize=_finalize, keep_trailing_newline=True)
# tojson: mappings that are not dicts (``state``, ``user``, a MappingProxyType) are written as objects.
_ENVIRONMENT.policies["json.dumps_kwargs"] = {"sort_keys": True, "default": _json_default}
# Filters that build strings or lists from a number or a repeat count, replaced by size-checked ones.
_ENVIRONMENT.filters.update(
    {
        "replace": _replace_filter,
        "join": _join_filter,
        "center": _center_filter,
        "indent": _indent_filter,
        "format": _format_filter,
        "batch": _batch_filter,
        "slice": _slice_filter,
        "tojson": _tojson_filter,
    }
)
# Only ``range`` (size-limited by the sandbox) and ``namespace`` (for loop counters) stay global.
_ENVIRONMENT.globals = {name: _ENVIRONMENT.globals[name] for name in ("range", "namespace")}
_GLOBALS = frozenset(_ENVIRONMENT.globals)


def _bindable(key: str) -> bool:
    """Whether a state key is also bound by its own name: an identifier that is not a keyword, and not
    a name the mode reserves or a global (those win over session keys)."""
    return key.isidentifier() and not keyword.iskeyword(key) and key not in _NAMES and key not in _GLOBALS


class JinjaProvider:
    """An instruction provider rendered by Jinja2 in a sandbox; compiled once, when it is made."""

    __slots__ = ("_names", "_scopes", "_template", "source")

    def __init__(self, source: str) -> None:
        if not isinstance(source, str):
            raise TypeError(f"jinja() takes a template source (str), not {type(source).__name__}")
        self.source = source
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
                context[name] = value
        for name, prefix in self._scopes:
            context[name] = ReadOnlyState(get, keys, prefix, name)
        try:
            return self._template.render(context)
        except TemplatingError:
            raise
        except Exception as error:
            raise self._error(error, keys) from error

    def _error(self, error: Exception, keys: Callable[[], list[str]]) -> JinjaError:
        line = _template_line(error)
        message = str(error)
        undefined_name = re.fullmatch(r"'(\w+)' is undefined", message)
        if undefined_name:
            names = [*(key for key in keys() if _bindable(key)), *_NAMES, *_ENVIRONMENT.globals]
            message += _did_you_mean(undefined_name[1], names)
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
    """A provider rendering `source` with Jinja2 in a sandbox against the context's state (read-only)."""
    return JinjaProvider(source)


def _key_lister(ctx: Any) -> Callable[[], list[str]]:
    """The keys of whatever holds state, read when needed (a mapping, `ctx.state`, or an ADK `State`)."""
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
    """A close state key, compared within the key's scope so that a shared `user:` does not count as likeness."""
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
