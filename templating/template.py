"""The public face of a template: parse once, render many times."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from .nodes import Dialect, Escaped, Literal, Node, Placeholder, check_dialect
from .parser import collector_paused, parse_nodes
from .renderer import Formatter, Missing, Plan

__all__ = ["Template", "escape", "parse", "render"]


class Template:
    """A parsed instruction template.

    `nodes` is the parse; `placeholders` the placeholder nodes in order; `keys` the unique
    keys in order of first use (optional ones included). Parsing never fails: text that is not a
    placeholder or an escape is literal. Templates are immutable and compare by source and dialect.

    `dialect` is the syntax of `source`: `"angle"` (`<key>`, the default) or `"adk"`
    (Google ADK's `{key}`, for migrating; its values render with `str()`, as ADK's do).
    """

    __slots__ = ("_plan", "dialect", "keys", "nodes", "placeholders", "source")

    source: str
    dialect: Dialect
    nodes: tuple[Node, ...]
    placeholders: tuple[Placeholder, ...]
    keys: tuple[str, ...]
    _plan: Plan

    def __init__(self, source: str, *, dialect: Dialect = "angle") -> None:
        dialect = check_dialect(dialect)
        nodes = parse_nodes(source, dialect)
        placeholders = tuple([node for node in nodes if type(node) is Placeholder])
        set_ = object.__setattr__
        set_(self, "source", source)
        set_(self, "dialect", dialect)
        set_(self, "nodes", nodes)
        set_(self, "placeholders", placeholders)
        set_(self, "keys", tuple(dict.fromkeys([node.key for node in placeholders])))
        # The render plan (`_plan`) is built by the first render, not here: parsing is what `parse()`,
        # `lint()` and `keys` need, and the plan costs about as much as the parse itself.

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Template is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Template is immutable; cannot delete {name!r}")

    def render(self, state: Any, *, missing: Missing = "error", formatter: Formatter | None = None) -> str:
        """Render against `state`: a mapping, or any object with a `.state` mapping (an agent context).

        `missing` decides what a required placeholder whose key is absent does: `"error"` raises
        [`MissingKeyError`][templating.MissingKeyError] naming every such key, `"empty"` renders it empty, `"keep"`
        leaves it as written. `formatter` replaces the formatting of every value found (by default
        the dialect's: JSON for containers, or `str()` for `"adk"`). State is only read.
        """
        try:
            plan = self._plan
        except AttributeError:  # the first render
            plan = self._planned()
        return plan.render(state, missing=missing, formatter=formatter)

    def _planned(self) -> Plan:
        """The render plan, built and kept on first use. Two threads may both build it: the plans are equal."""
        with collector_paused(len(self.source)):  # as the parse: a large plan is many acyclic objects
            plan = Plan(self.nodes, self.source, dialect=self.dialect)
        object.__setattr__(self, "_plan", plan)
        return plan

    def __repr__(self) -> str:
        shown = self.source if len(self.source) <= 60 else self.source[:57] + "..."
        if self.dialect == "angle":
            return f"Template({shown!r})"
        return f"Template({shown!r}, dialect={self.dialect!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Template) and other.source == self.source and other.dialect == self.dialect

    def __hash__(self) -> int:
        return hash((Template, self.source, self.dialect))

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.source, self.dialect))


def _rebuild(source: str, dialect: Dialect) -> Template:
    return Template(source, dialect=dialect)


def parse(source: str, *, dialect: Dialect = "angle") -> Template:
    """Parse `source`, written in `dialect`, into a [`Template`][templating.Template]; each is parsed only once."""
    if not isinstance(source, str):  # checked before the cache, which would only say "unhashable"
        raise TypeError(f"a template source must be a str, not {type(source).__name__}")
    return _parse(source, check_dialect(dialect))


@lru_cache(maxsize=256)
def _parse(source: str, dialect: Dialect) -> Template:
    return Template(source, dialect=dialect)


def render(
    source: str | Template,
    state: Any,
    *,
    dialect: Dialect | None = None,
    missing: Missing = "error",
    formatter: Formatter | None = None,
) -> str:
    """Parse (cached) and render in one call. See [`Template.render`][templating.template.Template.render].

    `dialect` is the syntax of a string `source` (default `"angle"`); a [`Template`][templating.Template]
    already has one, and a different `dialect` for it is a ValueError.
    """
    return as_template(source, dialect=dialect).render(state, missing=missing, formatter=formatter)


def as_template(source: str | Template, *, dialect: Dialect | None) -> Template:
    """`source` itself if it is a Template (a different `dialect` for it is a ValueError); else
    `source` parsed (cached) in `dialect`, `"angle"` when None. For render() and lint()."""
    if isinstance(source, Template):
        if dialect is not None and check_dialect(dialect) != source.dialect:
            raise ValueError(f"dialect={dialect!r} was given for a Template whose dialect is {source.dialect!r}")
        return source
    return parse(source, dialect="angle" if dialect is None else dialect)


def escape(text: str) -> str:
    """Text that renders as exactly `text`: every placeholder or escape in it is escaped once more.

    `<name>` becomes `<<name>>` and `<<name>>` becomes `<<<name>>>`, so that
    `render(escape(s), {}) == s` for every string `s`.
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
