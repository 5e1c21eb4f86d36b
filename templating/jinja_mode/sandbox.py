"""The Jinja2 sandbox of Jinja2 mode (over the state views of `views`): the allowlist of attributes and
callables, operators and filters that charge the render's budgets, a code generator that prints
only data, and the names of expressions for error messages. `mode` builds providers on it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from types import BuiltinMethodType, FunctionType, MethodType
from typing import Any

from jinja2 import StrictUndefined, Undefined, nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.runtime import BlockReference, Context, LoopContext, Macro, TemplateReference
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedFormatter
from jinja2.utils import Namespace
from markupsafe import Markup

from ..renderer import format_value
from ..sessions.state import ReadonlyDict, ReadonlyList, ReadonlyState
from .budget import Capped, counted, measure, spend
from .filters import MAX_POWER_BITS, check_bits, check_format_string, check_percent, check_size, install, text_of
from .views import ABSENT, Bounded, ReadOnlyState, bounded, bounded_all, get

__all__: list[str] = []  # the environment, for `mode`


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
_SAFE_ATTRIBUTES.update({view: _SAFE_ATTRIBUTES[dict] for view in (ReadonlyDict, ReadonlyState, Bounded)})
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
_COUNTED = "budget_loop"  # the environment attribute every `for` loop iterates through


class _Environment(ImmutableSandboxedEnvironment):
    """The sandbox, with state views that answer `x.name` and `x["name"]` from state keys only,
    an allowlist of attributes and callables, size limits on what operators build, every loop step
    charged to the render's budget, and only data printed."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        for loop in tree.find_all(nodes.For):  # iterate through `counted`: each step is charged
            loop.iter = nodes.Call(nodes.EnvironmentAttribute(_COUNTED), [loop.iter], [], None, None)
        return tree

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
        if __obj is counted:  # a `for` loop starting
            return bounded_all(counted(args[0]))
        current = spend()
        current.check_time()
        args = tuple(bounded(arg) for arg in args)
        kwargs = {name: bounded(arg) for name, arg in kwargs.items()}
        if isinstance(__obj, LoopContext) and len(args) == 1:  # a recursive loop's next level
            args = (bounded_all(counted(args[0])),)
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str) and getattr(__obj, "__name__", None) == "replace" and len(args) >= 2:
            old, new = args[0], args[1]
            if isinstance(old, str) and isinstance(new, str):
                count = (len(owner) + 1) if old == "" else owner.count(old)
                check_size(len(owner) + count * max(0, len(new) - len(old)), "str.replace()")
        if isinstance(owner, str) and getattr(__obj, "__name__", None) == "join" and len(args) == 1 and not kwargs:
            items = list(args[0])  # the separator repeats once per item: check before joining
            size = sum(len(item) for item in items if isinstance(item, str)) + len(owner) * max(len(items) - 1, 0)
            check_size(size, "str.join()")
            args = (items,)
        return bounded(super().call(__context, __obj, *args, **kwargs))

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for sequence, times in ((left, right), (right, left)):
                if isinstance(sequence, (str, list, tuple)) and isinstance(times, int):
                    check_size(len(sequence) * max(times, 0), "'*'")
            if isinstance(left, int) and isinstance(right, int):
                check_bits(abs(left).bit_length() + abs(right).bit_length(), "'*'")
        elif operator == "%":
            if isinstance(left, str):
                check_percent(left, right, "'%'")
        elif operator == "+":
            if isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)):
                check_size(len(left) + len(right), "'+'")
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
        """A str's `format` or `format_map` through a formatter that checks attributes (as the
        sandbox does), prints only data, and checks the widths the format string asks for."""
        if not isinstance(value, (MethodType, BuiltinMethodType)) or value.__name__ not in ("format", "format_map"):
            return None
        template = value.__self__
        if not isinstance(template, str):
            return None
        check_format_string(template, "str.format()")
        formatter = _DataFormatter(self)
        return _format_wrapper(formatter, type(template), template, value.__name__ == "format_map")

    def checked_concat(self, parts: tuple[Any, ...]) -> str:
        """`a ~ b`: the strings joined, if each is data and the result stays within the value budget."""
        size = 0
        for part in parts:
            size += text_of(part, "a value joined with '~'")
        check_size(size, "'~'")
        return "".join([part if type(part) is str else str(part) for part in parts])

    def charge_text(self, size: int) -> None:
        """Template text (and constants) written: charged to the output budget."""
        spend().write(size)

    def print_value(self, value: Any, expression: str) -> str:
        """`{{ expression }}`: the value's text, if it is data and fits in the output budget."""
        current = spend()
        if type(value) is str:
            current.write(len(value))
            return value
        if isinstance(value, Undefined):
            return str(value)  # StrictUndefined: raises, naming what is undefined
        size = measure(value, current.max_output - current.output, f"{{{{ {expression} }}}}")
        if current.output + size > current.max_output:
            current.write(size)  # raises: over the output budget, before the text is made
        text = format_value(value)
        current.write(len(text))
        return text

    def getitem(self, obj: Any, argument: Any) -> Any:
        return bounded(self._getitem(obj, argument))

    def _getitem(self, obj: Any, argument: Any) -> Any:
        if isinstance(obj, ReadOnlyState):
            return obj._lookup(self, argument)
        if isinstance(obj, Mapping) and type(obj) is not dict:
            # `get`, never `[]`: a defaultdict (or another mapping with a __missing__) is not written to.
            value = get(obj, argument)
            if value is not ABSENT:
                return value
            return (
                super().getitem(_NO_ITEMS, argument)
                if not isinstance(argument, str)
                else self._attribute(obj, argument)
            )
        return super().getitem(obj, argument)

    def getattr(self, obj: Any, attribute: str) -> Any:
        return bounded(self._getattr(obj, attribute))

    def _getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, ReadOnlyState):
            if attribute.startswith("_"):
                return self.unsafe_undefined(obj, attribute)
            return obj._lookup(self, attribute)
        if isinstance(obj, Mapping) and type(obj) is not dict:
            if hasattr(obj, attribute):
                return self._attribute(obj, attribute)
            value = get(obj, attribute)
            return self.undefined(obj=obj, name=attribute) if value is ABSENT else value
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


class _DataFormatter(SandboxedFormatter):
    """`str.format`'s fields: attributes through the sandbox, and only data turned into text."""

    def format_field(self, value: Any, format_spec: str) -> Any:
        text_of(value, "a value given to str.format()")
        return super().format_field(value, format_spec)


def _format_wrapper(formatter: _DataFormatter, kind: type[str], template: str, is_map: bool) -> Callable[..., str]:
    def wrapper(*args: Any, **kwargs: Any) -> str:
        if is_map:
            if kwargs:
                raise TypeError("format_map() takes no keyword arguments")
            if len(args) != 1:
                raise TypeError(f"format_map() takes exactly one argument ({len(args)} given)")
            kwargs = args[0]
            args = ()
        text = kind(formatter.vformat(template, args, kwargs))
        check_size(len(text), "str.format()")
        return text

    return wrapper


_NO_ITEMS: dict[Any, Any] = {}


def _finalize(value: Any) -> str:
    """Constants printed by a template, finalized when it is compiled (what a render prints goes
    through `print_value`)."""
    if isinstance(value, Undefined):
        return str(value)
    measure(value, 1 << 62, "a constant")
    return format_value(value)


def _json_default(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    kind = type(value.inner if type(value) is Capped else value).__name__
    raise TypeError(f"Object of type {kind} is not JSON serializable")


class _CodeGenerator(CodeGenerator):
    """Compiles `a ~ b` to a size-checked join, `{{ x }}` to a data-only print charged to the
    output budget, and charges the template's own text to that budget where it is written."""

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.checked_concat((")
        for argument in node.nodes:
            self.visit(argument, frame)
            self.write(", ")
        self.write("))")

    def visit_Output(self, node: nodes.Output, frame: Frame) -> None:
        # The text Jinja2 writes as it is (template text and constants), worked out as it does: charged at once.
        fixed = 0
        finalize = self._make_finalize()
        for child in node.nodes:
            try:
                if not (finalize.const or isinstance(child, nodes.TemplateData)):
                    continue
                fixed += len(self._output_child_to_const(child, frame, finalize))
            except Exception:  # evaluated at runtime instead, through print_value
                continue
        if fixed:
            self.writeline(f"environment.charge_text({fixed})")
        super().visit_Output(node, frame)

    def _output_child_pre(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        self.write("environment.print_value(")

    def _output_child_post(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        self.write(f", {_expression_text(node)!r})")


def _bounding(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` (a filter or a test) given its arguments, and giving its result, through `bounded`
    (Jinja2's `pass_context`-style marks are kept: `functools.wraps` copies them)."""

    passed = 1 if getattr(function, "jinja_pass_arg", None) is not None else 0  # a context, left as it is

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        args = (*args[:passed], *(bounded(arg) for arg in args[passed:]))
        return bounded(function(*args, **{name: bounded(arg) for name, arg in kwargs.items()}))

    return wrapper


_FORMAT_WRAPPER_CODE = _format_wrapper(_DataFormatter(ImmutableSandboxedEnvironment()), str, "", False).__code__
_Environment.code_generator_class = _CodeGenerator
_ENVIRONMENT = _Environment(undefined=StrictUndefined, autoescape=False, finalize=_finalize, keep_trailing_newline=True)
setattr(_ENVIRONMENT, _COUNTED, counted)
# tojson: mappings that are not dicts (`state`, `user`, a MappingProxyType) are written as objects.
_ENVIRONMENT.policies["json.dumps_kwargs"] = {"sort_keys": True, "default": _json_default}
install(_ENVIRONMENT)
for _kind in (_ENVIRONMENT.filters, _ENVIRONMENT.tests):  # what a filter or test is given, and gives, read bounded
    for _name, _function in list(_kind.items()):
        _kind[_name] = _bounding(_function)
# Only `range` (size-limited by the sandbox) and `namespace` (for loop counters) stay global.
_ENVIRONMENT.globals = {name: _ENVIRONMENT.globals[name] for name in ("range", "namespace")}
_GLOBALS = frozenset(_ENVIRONMENT.globals)


def _expression_text(node: nodes.Node) -> str:
    """The Jinja2 source of an expression, near enough to name it in an error message."""
    match node:
        case nodes.Name(name=name):
            return name
        case nodes.Const(value=value):
            return repr(value)
        case nodes.Getattr(node=inner, attr=attr):
            return f"{_expression_text(inner)}.{attr}"
        case nodes.Getitem(node=inner, arg=arg):
            return f"{_expression_text(inner)}[{_expression_text(arg)}]"
        case nodes.Filter(node=inner, name=name) | nodes.Test(node=inner, name=name):
            arguments = _arguments_text(node)
            joint = "|" if isinstance(node, nodes.Filter) else " is "
            return f"{_expression_text(inner) if inner is not None else ''}{joint}{name}{arguments}"
        case nodes.Call(node=inner):
            return f"{_expression_text(inner)}{_arguments_text(node) or '()'}"
        case nodes.Concat(nodes=parts):
            return " ~ ".join(_expression_text(part) for part in parts)
        case nodes.BinExpr(left=left, right=right, operator=operator):
            return f"{_expression_text(left)} {operator} {_expression_text(right)}"
        case nodes.List(items=items):
            return "[" + ", ".join(_expression_text(item) for item in items) + "]"
        case nodes.Tuple(items=items):
            return "(" + ", ".join(_expression_text(item) for item in items) + ")"
        case nodes.Keyword(key=key, value=value):
            return f"{key}={_expression_text(value)}"
        case nodes.Dict(items=pairs):
            return "{" + ", ".join(f"{_expression_text(p.key)}: {_expression_text(p.value)}" for p in pairs) + "}"
        case nodes.UnaryExpr(node=inner, operator=operator):
            return f"{operator}{' ' if operator == 'not' else ''}{_expression_text(inner)}"
        case nodes.CondExpr(test=test, expr1=then, expr2=otherwise):
            tail = f" else {_expression_text(otherwise)}" if otherwise is not None else ""
            return f"{_expression_text(then)} if {_expression_text(test)}{tail}"
    return "…"


def _arguments_text(node: nodes.Call | nodes.Filter | nodes.Test) -> str:
    parts = [_expression_text(arg) for arg in [*node.args, *node.kwargs]]
    return f"({', '.join(parts)})" if parts else ""
