"""The placeholder rules: against a schema (T001, T009, T010), markup tags (T007), temp: keys (T012)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ...nodes import TEMP_PREFIX, Escaped, Literal, Placeholder
from ...template import Template
from ..schema import Schema, SchemaField
from ..source import _VOID_TAGS, _Source
from ..util import close_match as _close

_WHY_OPTIONAL = {
    "pydantic": "(it has a default)",
    "json-schema": "(not listed in 'required')",
    "keys": "(listed with a '?')",
}


def _walk(schema: Schema, placeholder: Placeholder) -> tuple[str | None, str | None, bool | None]:
    """(problem, suggestion, required along the whole path) for a placeholder against a schema.

    An open object (extra keys allowed) has no problem with a key it does not list. Where the
    schema says nothing (an unlisted key of an open object, the inside of an object of unknown
    shape) "required" is `None` (unknown) unless the known part of the path is already optional."""
    fields: Mapping[str, SchemaField] | None = schema.fields
    is_open = schema.open
    current: SchemaField | None = None
    required = True
    segments = placeholder.key.split(".")
    for i, segment in enumerate(segments):
        if current is not None and current.is_list and not segment.isdigit():
            parent = ".".join(segments[:i])
            return f"{parent!r} is a list, which has no field {segment!r}", None, required
        if current is not None and segment.isdigit():
            current = current.items
            if current is None:
                return None, None, None if required else False
            fields, is_open = current.fields, current.open
            continue
        if fields is None:
            return None, None, None if required else False
        if segment not in fields:
            if is_open:
                return None, None, None if required else False
            hint = _close(segment, fields)
            if i == 0:
                return f"{segment!r} is not in the schema", hint, required
            parent = ".".join(segments[:i])
            return f"{parent!r} has no field {segment!r} in the schema", f"{parent}.{hint}" if hint else None, required
        current = fields[segment]
        required = required and current.required
        fields, is_open = current.fields, current.open
    return None, None, required


def placeholder_rules(
    tpl: Template, src: _Source, on: frozenset[str], loaded: Schema | None
) -> Iterator[tuple[str, int, int, str, str]]:
    """T007 (markup tags), T012 (temp: keys) and, with a schema, T001/T009/T010: (code, start, end, message, help)."""
    angle = tpl.dialect == "angle"
    temp_seen: set[str] = set()
    opened: dict[str, int] = {}  # tag name -> where its last opening tag (<<name>>, or <name> read as one) starts
    for node in tpl.nodes:
        if isinstance(node, Literal):
            continue
        if isinstance(node, Escaped):
            if node.text[1:-1].isidentifier():  # <<itinerary>>: the literal opening tag <itinerary>
                opened[node.text[1:-1]] = node.span.start
            continue
        if not isinstance(node, Placeholder):
            continue
        start, end = node.span.start, node.span.end
        in_schema = loaded is not None and node.name in loaded.fields
        tag = angle and not node.optional and node.key.isidentifier() and not in_schema
        tag = tag and src.closed_after(node.key, end)
        if tag and node.key in opened and not src.closed_between(node.key, opened[node.key], start):
            # <<itinerary>> <itinerary> </itinerary>: the placeholder inside the tag an escape opened is its
            # value, and the </itinerary> after it closes that tag
            tag = False
        if tag:
            opened[node.key] = start
        if tag and "T007" in on:  # with T007 off, the tag is still checked as a placeholder (T001, T012)
            yield (
                "T007",
                start,
                end,
                f"{node.source!r} looks like an XML-style tag (</{node.key}> follows) but is a placeholder",
                f"write <{node.source}> for the literal tag <{node.key}>",
            )
            continue
        if angle and node.key in _VOID_TAGS and not node.optional and not in_schema and "T007" in on:
            yield (
                "T007",
                start,
                end,
                f"{node.source!r} looks like the HTML element <{node.key}> but is a placeholder (of key {node.key!r})",
                f"write <{node.source}> for the literal tag <{node.key}>",
            )
            continue
        written = tpl.source[start:end]  # as written: <key?>, or { key? } in the ADK dialect
        required_form, optional_form = (
            (f"<{node.key}>", f"<{node.key}?>") if angle else (f"{{{node.key}}}", f"{{{node.key}?}}")
        )
        if node.scope == "temp" and "T012" in on and node.key not in temp_seen:
            temp_seen.add(node.key)
            yield (
                "T012",
                start,
                end,
                f"{written!r} reads a {TEMP_PREFIX} key, which is empty at the start of every turn",
                f"{TEMP_PREFIX} state lives for one invocation; it has a value only if set earlier in the same turn",
            )
        if loaded is None:
            continue
        problem, hint, required = _walk(loaded, node)
        if problem is not None:
            if "T001" in on:
                yield (
                    "T001",
                    start,
                    end,
                    problem + (f"; did you mean {hint!r}?" if hint else ""),
                    "add the key to the schema or fix the name"
                    + (f"; write <{node.source}> for the literal text {node.source}" if angle else ""),
                )
        elif not node.optional and required is False and "T009" in on:
            yield (
                "T009",
                start,
                end,
                f"{written!r} is required, but {node.key!r} is optional in the schema "
                + _WHY_OPTIONAL.get(loaded.origin, ""),
                f"write {optional_form} so a missing value renders empty instead of failing",
            )
        elif node.optional and required is True and "T010" in on:
            yield (
                "T010",
                start,
                end,
                f"{written!r} is optional, but {node.key!r} is required in the schema",
                f"write {required_form} so a missing value is caught",
            )
