"""The error hierarchy. Every error about a template carries its source and span and prints the
offending line with a caret under it, then a line of help."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from .nodes import Dialect, Span

__all__ = [
    "CyclicValueError",
    "MissingKey",
    "MissingKeyError",
    "NearMiss",
    "TemplateSyntaxError",
    "TemplatingError",
    "UnprintableValueError",
    "excerpt",
]


_WINDOW = 60  # characters of context kept on each side of a span in an excerpt


def _cells(text: str) -> int:
    """Terminal columns `text` takes: East Asian wide and fullwidth characters take two,
    combining marks and format characters (such as a zero-width joiner) none."""
    return sum(_width(ch) for ch in text)


def _width(ch: str) -> int:
    if unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 1


def excerpt(source: str, span: Span, *, indent: str = "    ") -> str:
    """The source line `span` starts on, and a caret line under the span (clipped to that line).

    A long line is cut to a window around the span, marked with `…`, so an error about a huge
    one-line template stays readable.
    """
    line_start = source.rfind("\n", 0, span.start) + 1
    line_end = source.find("\n", span.start)
    if line_end < 0:
        line_end = len(source)
    line = source[line_start:line_end].rstrip("\r")
    offset = span.start - line_start
    stop = min(span.end - line_start, len(line))
    left = max(0, offset - _WINDOW)
    right = min(len(line), max(stop, offset + 1) + _WINDOW)
    before = ("…" if left else "") + line[left:offset]
    marked = line[offset:stop]
    after = line[stop:right] + ("…" if right < len(line) else "")
    # Keep tabs in the margin so the caret lines up under the text as a terminal shows it.
    margin = "".join(ch if ch == "\t" else " " * _width(ch) for ch in before)
    return f"{indent}{before}{marked}{after}\n{indent}{margin}{'^' * max(1, _cells(marked))}"


class TemplatingError(Exception):
    """Base of every error this package raises about a template or its state.

    `message` says what was wrong; `source` and `span`, when known, say where; `help`
    says what to do about it.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        span: Span | None = None,
        help: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.source = source
        self.span = span
        self.help = help

    def __str__(self) -> str:
        lines = [self.message]
        if self.source is not None and self.span is not None:
            lines.append(f"  at {self.span.line}:{self.span.column}")
            lines.append(excerpt(self.source, self.span))
        if self.help:
            lines.append(f"help: {self.help}")
        return "\n".join(lines)

    def __reduce__(self) -> tuple[object, ...]:
        # Keyword-only constructors do not survive pickling on their own (pytest-xdist, multiprocessing).
        return (_rebuild, (type(self), self.__dict__, self.args))


def _rebuild(cls: type[TemplatingError], state: dict[str, object], args: tuple[object, ...]) -> TemplatingError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class UnprintableValueError(TemplatingError, ValueError):
    """A state value that cannot be turned into text: it contains itself, it nests deeper than
    Python can walk, or it is an integer with more digits than Python writes out. Raised at once,
    in every syntax, instead of a raw `RecursionError` or `ValueError`. `key` is the state key
    whose value it is, when known; `span` the placeholder that printed it. Also a `ValueError`."""

    def __init__(
        self,
        message: str,
        *,
        key: str | None = None,
        source: str | None = None,
        span: Span | None = None,
        help: str | None = None,
    ) -> None:
        super().__init__(message, source=source, span=span, help=help)
        self.key = key


class CyclicValueError(UnprintableValueError):
    """A value to print contains itself (a list or dict that holds itself): an error at once, in
    every syntax, instead of a render that never ends or prints `[[...]]`. `key` is the state key
    whose value it is, when known. Also a `ValueError`."""


@dataclass(frozen=True, slots=True)
class MissingKey:
    """One required key that state did not have: where it was first used, a close match if any,
    and the spans of its other uses (`also`)."""

    key: str
    span: Span
    suggestion: str | None = None
    also: tuple[Span, ...] = ()


def _missing_help(keys: Sequence[str], dialect: Dialect) -> str:
    if dialect == "adk":  # Google ADK's {key} syntax has no escape
        if len(keys) == 1:
            return f"give {keys[0]!r} a value in state, or make it optional with {{{keys[0]}?}}"
        return "give each key a value in state, or make a placeholder optional with {key?}"
    if len(keys) == 1:
        key = keys[0]
        return f"give {key!r} a value in state, make it optional with <{key}?>, or write <<{key}>> for the literal text"
    return (
        "give each key a value in state, make a placeholder optional with <key?>, or write <<key>> for the literal text"
    )


class MissingKeyError(TemplatingError, KeyError):
    """Required placeholders whose keys are not in state: all of them at once, not just the first.

    Also a `KeyError`, so code that already catches a missing key keeps working. `missing`
    holds each key with its span and suggestion; `keys` just the key names. `dialect` is the
    syntax of `source`, so that the help spells placeholders the way the source does.
    """

    def __init__(self, missing: Sequence[MissingKey], *, source: str, dialect: Dialect = "angle") -> None:
        keys = tuple(item.key for item in missing)
        noun = "key is" if len(keys) == 1 else "keys are"
        listed = ", ".join(repr(key) for key in keys)
        super().__init__(
            f"{len(keys)} required {noun} missing from state: {listed}",
            source=source,
            span=missing[0].span if missing else None,
            help=_missing_help(keys, dialect),
        )
        self.missing = tuple(missing)
        self.keys = keys
        self.args = keys  # as for any KeyError, args[0] is the (first) missing key

    def __str__(self) -> str:
        lines = [self.message]
        for item in self.missing:
            hint = f"; did you mean {item.suggestion!r}?" if item.suggestion else ""
            also = ""
            if item.also:
                also = " (also at " + ", ".join(f"{span.line}:{span.column}" for span in item.also) + ")"
            lines.append(f"  at {item.span.line}:{item.span.column}: {item.key!r} is missing{also}{hint}")
            if self.source is not None:
                lines.append(excerpt(self.source, item.span))
        lines.append(f"help: {self.help}")
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class NearMiss:
    """Text that was probably meant as a placeholder but renders as literal text (a lint finding)."""

    code: str
    message: str
    span: Span
    help: str | None = None


class TemplateSyntaxError(TemplatingError, ValueError):
    """A template whose text has near misses (`< name >`, `<usr:name>`, ...): every one of them at once.

    Raised when a provider or an agent is defined (`strict=True`), so a typo fails before anything
    runs. Also a `ValueError`. `near_misses` holds each finding with its lint code and span.
    """

    def __init__(self, near_misses: Sequence[NearMiss], *, source: str) -> None:
        count = len(near_misses)
        noun = "near miss" if count == 1 else "near misses"
        super().__init__(
            f"template has {count} {noun}: text that looks like a placeholder but renders as literal text",
            source=source,
            span=near_misses[0].span if near_misses else None,
            help="fix each one as its help says, or pass strict=False to keep the text as written",
        )
        self.near_misses = tuple(near_misses)

    def __str__(self) -> str:
        lines = [self.message]
        for item in self.near_misses:
            lines.append(f"  at {item.span.line}:{item.span.column}: {item.message} [{item.code}]")
            if self.source is not None:
                lines.append(excerpt(self.source, item.span))
            if item.help:
                lines.append(f"    help: {item.help}")
        lines.append(f"help: {self.help}")
        return "\n".join(lines)
