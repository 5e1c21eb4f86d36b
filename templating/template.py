"""The public face of a template: parse once, render many times."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from .nodes import Escaped, Literal, Node, Placeholder
from .parser import parse_nodes
from .render import Formatter, Missing, Plan

__all__ = ["Template", "escape", "parse", "render"]


class Template:
    """A parsed instruction template.

    ``nodes`` is the parse; ``placeholders`` the placeholder nodes in order; ``keys`` the unique
    keys in order of first use (optional ones included). Parsing never fails: text that is not a
    placeholder or an escape is literal. Templates are immutable and compare by source.
    """

    __slots__ = ("_plan", "keys", "nodes", "placeholders", "source")

    source: str
    nodes: tuple[Node, ...]
    placeholders: tuple[Placeholder, ...]
    keys: tuple[str, ...]
    _plan: Plan

    def __init__(self, source: str) -> None:
        nodes = parse_nodes(source)
        placeholders = tuple(node for node in nodes if isinstance(node, Placeholder))
        set_ = object.__setattr__
        set_(self, "source", source)
        set_(self, "nodes", nodes)
        set_(self, "placeholders", placeholders)
        set_(self, "keys", tuple(dict.fromkeys(node.key for node in placeholders)))
        set_(self, "_plan", Plan(nodes, source))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Template is immutable; cannot set {name!r}")

    def render(self, state: Any, *, missing: Missing = "error", formatter: Formatter | None = None) -> str:
        """Render against ``state``: a mapping, or any object with a ``.state`` mapping (an agent context).

        ``missing`` decides what a required placeholder whose key is absent does: ``"error"`` raises
        :class:`MissingKeyError` naming every such key, ``"empty"`` renders it empty, ``"keep"``
        leaves it as written. ``formatter`` replaces the formatting of every value found.
        State is only read.
        """
        plan: Plan = self._plan
        return plan.render(state, missing=missing, formatter=formatter)

    def __repr__(self) -> str:
        shown = self.source if len(self.source) <= 60 else self.source[:57] + "..."
        return f"Template({shown!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Template) and other.source == self.source

    def __hash__(self) -> int:
        return hash((Template, self.source))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Template, (self.source,))


@lru_cache(maxsize=256)
def parse(source: str) -> Template:
    """Parse ``source`` into a :class:`Template`; the same source is parsed only once."""
    return Template(source)


def render(
    source: str | Template,
    state: Any,
    *,
    missing: Missing = "error",
    formatter: Formatter | None = None,
) -> str:
    """Parse (cached) and render in one call. See :meth:`Template.render`."""
    template = source if isinstance(source, Template) else parse(source)
    return template.render(state, missing=missing, formatter=formatter)


def escape(text: str) -> str:
    """Text that renders as exactly ``text``: every placeholder or escape in it is escaped once more.

    ``<name>`` becomes ``<<name>>`` and ``<<name>>`` becomes ``<<<name>>>``, so that
    ``render(escape(s), {}) == s`` for every string ``s``.
    """
    out: list[str] = []
    for node in parse_nodes(text):
        match node:
            case Literal(text=literal):
                out.append(literal)
            case Placeholder():
                out.append(f"<{node.source}>")
            case Escaped(span=span):
                out.append(f"<{text[span.start : span.end]}>")
    return "".join(out)
