"""T020: braces google-adk sends to the model as written, though they look like a placeholder:
`${key}` (ADK substitutes no `{` right after `$`) and a dotted path `{a.b}` (ADK inserts only a
whole state value, named by an identifier). Our ADK dialect keeps both as text too.

T031: the workflow placeholders of ADK's graph documentation and of its other languages,
`{CityTime.time_info}` (a field of the node's input, named by its class) and
`<CityTime.city from lookup_time_function>` (a field of a node's output): Python google-adk (2.13)
has neither and sends both as written. T020 leaves `{Class.field}` to T031 when both are on."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from ..registry import Diagnostic
from ..source import _ID, _Source

if TYPE_CHECKING:
    from ...pysource import Write

__all__ = ["literal_braces", "naming_the_writer", "workflow_placeholders"]

_PATH = rf"(?:(?:app|user|temp):)?{_ID}(?:\.(?:{_ID}|\d+))*"
# `${` or one `{`, a name or a dotted path, an optional `?`, `}`; white space allowed just inside.
_LOOKS_LIKE = re.compile(rf"(\$?)\{{[ \t]*({_PATH})[ \t]*(\??)[ \t]*\}}")
_ARTIFACT = "artifact."
# T031: `<Type.field from node>`, on one line, white space allowed just inside the brackets.
_FROM_NODE = re.compile(rf"<[ \t]*({_ID}(?:\.{_ID})+)[ \t]+from[ \t]+({_ID})[ \t]*>")


def _class_field(name: str) -> bool:
    """Whether a dotted name reads as `Class.field`: a first segment in capitals and small letters
    (`CityTime`), as a pydantic model is named; `{order.id}`, `{A.B}` are not."""
    head, dot, _ = name.partition(".")
    return bool(dot) and head[:1].isupper() and any(ch.islower() for ch in head) and ":" not in head


def _fixed(name: str, optional: bool) -> str:
    head = name.partition(".")[0]
    return "{" + head + ("?" if optional else "") + "}"


def literal_braces(src: _Source, on: frozenset[str]) -> Iterator[tuple[str, int, int, str, str]]:
    """T020 in an ADK-dialect text: (code, start, end, message, help) for each `${...}` around a name
    or path and each `{a.b}`, outside code and math. Names in capitals (`${HOME}`) are left alone: a
    shell variable or a blank for the reader, not a state key."""
    if "T020" not in on:
        return
    text = src.text
    for m in _LOOKS_LIKE.finditer(text):
        dollar, name, question = m.groups()
        start, end, written = m.start(), m.end(), m.group()
        before, after = text[start - 1 : start], text[end : end + 1]
        if after == "}" or (before and (before in "{\\$" or (not dollar and (before.isalnum() or before in "_^%#}/")))):
            continue  # {{...}} (T017), \{x}, $${x}, \text{a.b}, /users/{a.b}
        if not dollar and ("." not in name or name.startswith(_ARTIFACT)):
            continue  # {key} is a placeholder; {artifact.x} is loaded (T018)
        if not dollar and "T031" in on and _class_field(name):
            continue  # {CityTime.time_info}: a workflow placeholder (T031)
        if src.in_code(start) or (not dollar and src.in_math(start)) or not any(ch.islower() for ch in name):
            continue
        key = name.partition(".")[0]
        reasons = []
        if dollar:
            reasons.append("google-adk substitutes no '{' right after '$'")
        if "." in name:
            reasons.append(f"{name!r} is a path; google-adk inserts only a whole state value named by an identifier")
            fix = (
                f"write {_fixed(name, bool(question))} to insert the whole value of {key!r}, or store the part "
                f"you need under a state key of its own and write that key in braces"
            )
        else:
            fix = f"write {_fixed(name, bool(question))} (without '$') to insert the value of {key!r}"
        yield (
            "T020",
            start,
            end,
            f"{written!r} stays literal under google-adk ({'; '.join(reasons)}): the model receives the braces",
            fix,
        )


def workflow_placeholders(src: _Source, on: frozenset[str]) -> Iterator[tuple[str, int, int, str, str]]:
    """T031 in an ADK-dialect text: (code, start, end, message, help) for each `{Class.field}` and each
    `<Type.field from node>`, outside code."""
    if "T031" not in on:
        return
    text = src.text
    found: list[tuple[int, int, str, str]] = []
    for m in _LOOKS_LIKE.finditer(text):
        dollar, name, _ = m.groups()
        start, end = m.start(), m.end()
        before, after = text[start - 1 : start], text[end : end + 1]
        if dollar or after == "}" or (before and (before in "{\\$" or before.isalnum() or before in "_^%#}/")):
            continue
        if _class_field(name) and not src.in_code(start) and not src.in_math(start):
            found.append((start, end, name, ""))
    for m in _FROM_NODE.finditer(text):
        if not src.in_code(m.start()):
            found.append((m.start(), m.end(), m.group(1), m.group(2)))
    for start, end, name, node in sorted(found):
        written = text[start:end]
        field = name.rpartition(".")[2]
        where = f"a field of the output of node {node!r}" if node else "a field of the node's input, named by its class"
        yield (
            "T031",
            start,
            end,
            f"{written!r} reads {where}: a workflow placeholder that Python google-adk does not have, so "
            "the model receives it as written",
            f"write the value to state (the node's output_key, or Event(state={{{field!r}: ...}}) in a function "
            f"node) and insert it with {{{field}}}; an agent given input_schema= receives the node's input as "
            "its message, without a placeholder",
        )


def naming_the_writer(diag: Diagnostic, flagged: str, writes: Iterable[Write]) -> Diagnostic:
    """A T020 finding whose help names where the project writes the state key the braces meant, if known."""
    m = _LOOKS_LIKE.search(flagged)
    if diag.code != "T020" or m is None:
        return diag
    key = m.group(2).partition(".")[0]
    where = next((w for w in writes if w.key == key), None)
    if where is None:
        return diag
    return dataclasses.replace(
        diag, help=f"{key!r} is written by {where.how} at {where.path}:{where.span.line}; {diag.help}"
    )
