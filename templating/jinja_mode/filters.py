"""Jinja2 mode's filters and size checks: every filter that builds text or a list from a count,
a width or another value is replaced by one that checks the size first, and every filter that
turns a value into text refuses what is not data (it would print an address).

The limits are the running render's [`JinjaBudget`][templating.JinjaBudget] (see `budget`).
"""

from __future__ import annotations

import itertools
import re
import string
import textwrap
from collections.abc import Callable, Iterator, Mapping
from types import CodeType
from typing import Any

from jinja2 import Environment, pass_environment, pass_eval_context
from jinja2.exceptions import SecurityError
from jinja2.filters import do_batch, do_indent, do_tojson, select_or_reject, sync_do_slice, sync_do_unique
from jinja2.nodes import EvalContext
from markupsafe import Markup

from .budget import measure, spend

__all__ = [
    "DRAWN_FROM_INPUT",
    "MAX_POWER_BITS",
    "check_bits",
    "check_format_string",
    "check_percent",
    "check_size",
    "install",
    "text_of",
]

# The largest int `**` or `*` may build, in bits (its decimal text would be longer than Python prints).
MAX_POWER_BITS = 100_000


def check_size(size: int, what: str) -> None:
    spend().check_size(size, what)


def check_bits(bits: int, what: str) -> None:
    if bits > MAX_POWER_BITS:
        raise SecurityError(f"{what} would build a number of more than {MAX_POWER_BITS} bits")


def text_of(value: Any, what: str) -> int:
    """About how long `value` is as text; raises `NotData` for anything that is not data, and the
    value budget for a value whose text would be too long."""
    if type(value) is str:
        return len(value)
    limit = spend().max_value
    size = measure(value, limit, what)
    if size > limit:
        check_size(size, what)
    return size


# A printf-style conversion: its width and precision, either of which may be '*' (taken from the arguments).
_PERCENT = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d*)(?:\.(\*|\d*))?[hlL]?(.)", re.DOTALL)


def check_percent(template: str, args: Any, what: str) -> None:
    """`template % args` stays within the size limit (its widths and precisions, plus the values
    given) and prints only data."""
    size = len(template)
    for match in _PERCENT.finditer(template):
        for number in match.group(1, 2):
            if number == "*":
                raise SecurityError(f"{what} with a '*' width or precision is not allowed in a template")
            size += int(number or 0)
    values = args if isinstance(args, tuple) else (args.values() if isinstance(args, Mapping) else (args,))
    for value in values:
        size += text_of(value, f"a value given to {what}")
    check_size(size, what)


def check_format_string(template: str, what: str) -> None:
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
    check_size(size, what)


def _replace_filter(value: Any, old: Any, new: Any, count: int | None = None) -> str:
    text_of(value, "the value given to the replace filter")
    text, old, new = str(value), str(old), str(new)
    times = ((len(text) + 1) if old == "" else text.count(old)) if count is None or count < 0 else count
    check_size(len(text) + times * max(0, len(new) - len(old)), "the replace filter")
    return text.replace(old, new, -1 if count is None else count)


def _join_filter(environment: Environment, value: Any, separator: Any = "", attribute: Any = None) -> str:
    items = list(value)
    if attribute is not None:
        items = [environment.getitem(item, attribute) for item in items]
    sep = str(separator)
    size = len(sep) * max(len(items) - 1, 0)
    for item in items:
        size += text_of(item, "an item given to the join filter")
        check_size(size, "the join filter")
    return sep.join([str(item) for item in items])


def _center_filter(value: Any, width: int = 80) -> str:
    check_size(max(width, text_of(value, "the value given to the center filter")), "the center filter")
    return str(value).center(width)


def _indent_filter(value: Any, width: Any = 4, first: bool = False, blank: bool = False) -> str:
    text_of(value, "the value given to the indent filter")
    text = str(value)
    size = width if isinstance(width, int) else len(str(width))
    check_size(len(text) + size * (text.count("\n") + 1), "the indent filter")
    return do_indent(value, width if isinstance(width, int) else str(width), first, blank)


def _format_filter(value: Any, *args: Any, **kwargs: Any) -> str:
    if args and kwargs:
        raise TypeError("can't handle positional and keyword arguments at the same time")
    text_of(value, "the value given to the format filter")
    check_percent(str(value), kwargs or args, "the format filter")
    return str(value) % (kwargs or args)


def _batch_filter(value: Any, linecount: int, fill_with: Any = None) -> Any:
    check_size(linecount, "the batch filter")
    return do_batch(value, linecount, fill_with)


def _slice_filter(value: Any, slices: int, fill_with: Any = None) -> Any:
    check_size(slices, "the slice filter")
    return sync_do_slice(value, slices, fill_with)


@pass_eval_context
def _tojson_filter(eval_ctx: EvalContext, value: Any, indent: int | None = None) -> Markup:
    if indent is not None:
        check_size(indent, "the tojson filter's indent")
    size = text_of(value, "the value given to the tojson filter")
    if indent:
        check_size(size * (indent + 1), "the tojson filter")
    return do_tojson(eval_ctx, value, indent)


_WORD = re.compile(r"\s+|\S+")
_MAX_WRAP_WORK = 100_000_000  # characters copied breaking long words: about a tenth of a second


@pass_environment
def _wordwrap_filter(
    environment: Environment,
    value: Any,
    width: int = 79,
    break_long_words: bool = True,
    wrapstring: str | None = None,
    break_on_hyphens: bool = True,
) -> str:
    """Jinja2's `wordwrap`, with the size of the result checked before it is joined."""
    text_of(value, "the value given to the wordwrap filter")
    if isinstance(width, int) and width > 0:
        # textwrap breaks a word longer than the width by copying the rest of it once per line: quadratic.
        work = sum(len(word) ** 2 for word in _WORD.findall(str(value)) if len(word) > width) // width
        if work > _MAX_WRAP_WORK:
            spend().check_size(work // 1000, "the wordwrap filter (breaking long words or spaces)")
    separator = environment.newline_sequence if wrapstring is None else str(wrapstring)
    paragraphs = [
        textwrap.wrap(
            line,
            width=width,
            expand_tabs=False,
            replace_whitespace=False,
            break_long_words=break_long_words,
            break_on_hyphens=break_on_hyphens,
        )
        for line in str(value).splitlines()
    ]
    pieces = sum(len(lines) for lines in paragraphs) + len(paragraphs)
    size = sum(len(line) for lines in paragraphs for line in lines) + len(separator) * max(pieces - 1, 0)
    check_size(size, "the wordwrap filter")
    return separator.join(separator.join(lines) for lines in paragraphs)


@pass_environment
def _sum_filter(environment: Environment, iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
    items = list(iterable)
    if attribute is not None:
        items = [environment.getitem(item, attribute) for item in items]
    if isinstance(start, (list, tuple)) and all(type(item) is type(start) for item in items):
        # Concatenation: its length checked first, and done in one pass (sum() copies at every step).
        check_size(len(start) + sum(len(item) for item in items), "the sum filter")
        return type(start)(itertools.chain(start, *items))
    return sum(items, start)


def _list_filter(value: Any) -> list[Any]:
    result = list(value)
    check_size(len(result), "the list filter")
    return result


def _counting(items: Iterator[Any], what: str) -> Iterator[Any]:
    """Pass `items` on, checking that the text they add up to stays within the value budget."""
    current = spend()
    size = 0
    for item in items:
        size += len(item) if isinstance(item, str) else 1
        current.check_size(size, what)
        yield item


def _map_filter(original: Callable[..., Any]) -> Callable[..., Any]:
    def map_filter(context: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
        return _counting(iter(original(context, value, *args, **kwargs)), "the map filter")

    map_filter.jinja_pass_arg = original.jinja_pass_arg  # type: ignore[attr-defined]
    return map_filter


# The generators the filters make that draw only from the value they are given, one item at a time (`map`,
# `select`, `reject`, `selectattr`, `rejectattr`, `unique`, `batch`, `slice`): a value from state reaches them
# already bounded, so they end when it does, and are passed on as they are (no second step per item).
DRAWN_FROM_INPUT: frozenset[CodeType] = frozenset(
    function.__code__ for function in (_counting, select_or_reject, sync_do_unique, do_batch, sync_do_slice)
)


# Filters that turn their value into text (`str()` of a function prints its address): they get data only.
_TEXT_FILTERS = (
    "capitalize",
    "e",
    "escape",
    "forceescape",
    "lower",
    "pprint",
    "safe",
    "string",
    "striptags",
    "title",
    "trim",
    "truncate",
    "upper",
    "urlencode",
    "urlize",
    "wordcount",
    "xmlattr",
)


def _text_filter(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    what = f"the value given to the {name} filter"
    pass_arg = getattr(original, "jinja_pass_arg", None)
    if pass_arg is None:

        def text_filter(value: Any, *args: Any, **kwargs: Any) -> Any:
            text_of(value, what)
            return _checked_result(original(value, *args, **kwargs), name)

    else:

        def text_filter(first: Any, value: Any, *args: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
            text_of(value, what)
            return _checked_result(original(first, value, *args, **kwargs), name)

        text_filter.jinja_pass_arg = pass_arg  # type: ignore[attr-defined]
    return text_filter


def _checked_result(result: Any, name: str) -> Any:
    if isinstance(result, str):
        check_size(len(result), f"the {name} filter")
    return result


def install(environment: Environment) -> None:
    """Replace the environment's filters that build values with size- and data-checked ones."""
    filters = environment.filters
    for name in _TEXT_FILTERS:
        filters[name] = _text_filter(name, filters[name])
    filters.update(
        {
            "replace": _replace_filter,
            "join": pass_environment(_join_filter),
            "center": _center_filter,
            "indent": _indent_filter,
            "format": _format_filter,
            "batch": _batch_filter,
            "slice": _slice_filter,
            "tojson": _tojson_filter,
            "wordwrap": _wordwrap_filter,
            "sum": _sum_filter,
            "list": _list_filter,
            "map": _map_filter(filters["map"]),
        }
    )
