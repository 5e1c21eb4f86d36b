"""Migrating from Google ADK: rewrite an instruction in ADK's `{key}` syntax into the angle syntax.

`convert_adk(source)` gives the angle-bracket template that renders exactly as
`Template(source, dialect="adk")` does (for string values; see below), and the spans where
ADK's own code renders something other than what its documentation, and so the converted
template, says. Values: the ADK dialect renders them with `str()`, as ADK does; the angle syntax
renders dicts, lists and tuples as JSON, so only their formatting can differ after converting.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from .errors import TemplatingError
from .nodes import Escaped, Literal, Node, Placeholder, Span, is_adk_state_name
from .parser import parse_nodes
from .template import escape

__all__ = ["AdkDifference", "ConversionError", "convert_adk"]

# How ADK's code finds a placeholder (google.adk's instruction utilities): a run of "{", text
# without braces, a run of "}", not starting right after "$", "{" or "\". The whole match is
# replaced when the text between, stripped of white space and of one trailing "?", is a state
# name or starts with "artifact.". Used to say where ADK's code differs from its docs, here and
# in the ADK lint rules.
ADK_CODE_MATCH = re.compile(r"(?<![{$\\])(\{+)([^{}]*)(\}+)")


@dataclass(frozen=True, slots=True)
class AdkDifference:
    """A span of an ADK instruction that Google ADK's code renders differently from the converted template.

    `text` is the span as written; `message` says what ADK's code does there and what the
    converted template (like `Template(source, dialect="adk")` and ADK's documentation) does.
    """

    span: Span
    text: str
    message: str


class ConversionError(TemplatingError):
    """An ADK instruction that the angle syntax cannot say exactly; nothing is converted."""


class _Lines:
    """Where each line of a source starts, found once: a span costs a binary search, not a count
    from the start of the source (which made many differences quadratic)."""

    def __init__(self, source: str) -> None:
        self.starts = [0, *(match.end() for match in re.finditer("\n", source))]

    def span(self, start: int, end: int) -> Span:
        line = bisect.bisect_right(self.starts, start)
        return Span(start, end, line, start - self.starts[line - 1] + 1)


def adk_code_differences(source: str) -> tuple[AdkDifference, ...]:
    """Where ADK's code would render `source` otherwise than its documentation says (and we do)."""
    found: list[AdkDifference] = []
    lines: _Lines | None = None
    ours = {(node.span.start, node.span.end) for node in parse_nodes(source, "adk") if isinstance(node, Placeholder)}
    for match in ADK_CODE_MATCH.finditer(source):
        opening, inner, closing = match.groups()
        name = inner.strip()
        if name.endswith("?"):
            name = name[:-1]
        text = match.group()
        if name.startswith("artifact."):
            message = (
                f"ADK loads the artifact {name.removeprefix('artifact.')!r} here; "
                "the ADK dialect has no artifacts, so the converted template keeps the text"
            )
        elif not is_adk_state_name(name) or (match.start(), match.end()) in ours:
            continue  # text in both, or the same placeholder in both
        elif len(opening) > 1:
            message = (
                "ADK's code substitutes this (it strips the extra braces); ADK's documentation, "
                "and the converted template, keep {{...}} as written"
            )
        elif len(closing) > 1:
            extra = "'" + closing[1:] + "'"
            message = f"ADK's code also removes the {extra} after the placeholder; the converted template keeps it"
        else:  # a {key} inside a {{ ... }} span
            message = (
                "ADK's code substitutes this placeholder inside {{ ... }}; ADK's documentation, "
                "and the converted template, keep the whole {{ ... }} span as written"
            )
        lines = lines or _Lines(source)
        found.append(AdkDifference(lines.span(match.start(), match.end()), text, message))
    return tuple(found)


def _rendered_shape(nodes: tuple[Node, ...]) -> list[str | tuple[str, bool]]:
    """Literal text (merged) and placeholders in order: what two templates must share to render alike.
    (Text is gathered in pieces and joined once: adding to a string each time was quadratic.)"""
    shape: list[str | tuple[str, bool]] = []
    text: list[str] = []
    for node in nodes:
        match node:
            case Literal(text=piece) | Escaped(text=piece):
                text.append(piece)
            case Placeholder(key=key, optional=optional):
                if text:
                    shape.append("".join(text))
                    text = []
                shape.append((key, optional))
    if text:
        shape.append("".join(text))
    return shape


def convert_adk(source: str, *, limit: int | None = None) -> tuple[str, tuple[AdkDifference, ...]]:
    """Rewrite `source`, an instruction in Google ADK's `{key}` syntax, into the angle syntax.

    Returns `(text, differences)`: `text` renders as `Template(source, dialect="adk")` does
    (placeholders become `<key>` / `<key?>`; literal text that would read as a placeholder or
    an escape is escaped); `differences` lists the spans that ADK's code, unlike its
    documentation, would substitute or change (`{{name}}`, a `{key}` inside `{{ ... }}`,
    `{name}}`, `{artifact.x}`). Line endings are kept as written (`\\r\\n` stays `\\r\\n`).
    Raises [`ConversionError`][templating.ConversionError] for the one thing the angle syntax cannot say: a placeholder
    with `<` right before it and `>` right after it (`<{key}>`, which would read as the
    escape `<<key>>`), and for a source longer than `limit` characters when one is given (the
    command line converts files of at most `DEFAULT_MAX_FILE_SIZE` bytes, the limit of every file it
    parses; like `parse`, the function itself has none by default). Linear in the size of the source.
    """
    if not isinstance(source, str):
        raise TypeError(f"a template source must be a str, not {type(source).__name__}")
    if limit is not None and len(source) > limit:
        raise ConversionError(
            f"the instruction is {len(source):,} characters long, more than the limit of {limit:,}",
            help="convert it in parts, or pass a larger limit= if you mean to",
        )
    nodes = parse_nodes(source, "adk")
    out: list[str] = []
    for index, node in enumerate(nodes):
        match node:
            case Literal(text=text):
                out.append(escape(text))
            case Placeholder():
                before = nodes[index - 1] if index > 0 else None
                after = nodes[index + 1] if index + 1 < len(nodes) else None
                if (
                    isinstance(before, Literal)
                    and before.text.endswith("<")
                    and isinstance(after, Literal)
                    and after.text.startswith(">")
                ):
                    raise ConversionError(
                        f"cannot convert {source[node.span.start : node.span.end]!r} between '<' and '>': "
                        f"the angle syntax reads {'<' + node.source + '>'!r} as an escape",
                        source=source,
                        span=node.span,
                        help="put a character between the placeholder and the brackets, then convert again",
                    )
                out.append(node.source)
    text = "".join(out)
    # A safety net over the rules above: the result must parse back to the same literal text and
    # placeholders, or it is not returned.
    if _rendered_shape(parse_nodes(text)) != _rendered_shape(nodes):  # a bug if ever true
        raise ConversionError("internal error: the converted template would render differently", source=source)
    return text, adk_code_differences(source)
