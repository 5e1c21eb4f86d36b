"""The parsed form of a template: immutable nodes, each with the span of source it came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal as _Literal
from typing import TypeAlias

__all__ = [
    "DIALECTS",
    "Dialect",
    "Escaped",
    "Literal",
    "Node",
    "Placeholder",
    "Scope",
    "Span",
    "SCOPES",
    "SCOPE_PREFIXES",
    "APP_PREFIX",
    "USER_PREFIX",
    "TEMP_PREFIX",
    "MAX_VALUE_SIZE",
    "VALUE_ITEM_SIZE",
    "check_dialect",
    "is_adk_state_name",
]

Scope: TypeAlias = _Literal["app", "user", "temp"]
"""A key's scope, named by its prefix: `app:` (the app), `user:` (one user), `temp:` (one invocation)."""
SCOPES: tuple[Scope, ...] = ("app", "user", "temp")
# The prefixes, defined here once for every stage (parser, lint, convert, state, sessions).
SCOPE_PREFIXES: tuple[str, ...] = tuple(f"{scope}:" for scope in SCOPES)
APP_PREFIX, USER_PREFIX, TEMP_PREFIX = SCOPE_PREFIXES

# The one size budget of state values, for the state contract (sessions) and for printing (render):
# a value's size is about the bytes of its JSON, counted as written out, so a sub-value that appears
# twice counts twice (`v = [v, v]` nested 30 times is small in memory and a gigabyte as JSON).
VALUE_ITEM_SIZE = 8
"""The size of one value (a scalar, a list, a dict); a str adds its length, and a dict key its length."""
MAX_VALUE_SIZE = 64 * 1024 * 1024
"""The largest size, as `VALUE_ITEM_SIZE` counts it, of one state delta, one initial state, or one printed value."""

Dialect: TypeAlias = _Literal["angle", "adk"]
"""The syntax a source is written in: `"angle"` (`<key>`, ours) or `"adk"` (Google ADK's `{key}`)."""
DIALECTS: tuple[Dialect, ...] = ("angle", "adk")


def check_dialect(dialect: object) -> Dialect:
    """`dialect` itself if it names a dialect; a ValueError saying which exist otherwise."""
    if isinstance(dialect, str) and dialect in DIALECTS:
        return dialect
    raise ValueError(f"dialect= must be 'angle' or 'adk', not {dialect!r}")


def is_adk_state_name(name: str) -> bool:
    """Google ADK's test for a state name: an identifier, or a known scope and an identifier (no paths).

    The ADK dialect's parser, `templating convert` and the ADK lint rules all ask it."""
    scope, colon, rest = name.partition(":")
    return (rest if colon and scope in SCOPES else name).isidentifier()


@dataclass(frozen=True, slots=True)
class Span:
    """Where a node stands in its source: character offsets `[start, end)`, 1-based line and column."""

    start: int
    end: int
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class Literal:
    """Text that renders as itself."""

    text: str
    span: Span


@dataclass(frozen=True, slots=True)
class Escaped:
    """An escape such as `<<name>>`; `text` is what it renders as (`<name>`). Never looked up."""

    text: str
    span: Span


@dataclass(frozen=True, slots=True)
class Placeholder:
    """A lookup in state: `<key>` (required) or `<key?>` (optional).

    `key` is the key as written (`"user:profile.name"`); `scope` its prefix, if any;
    `path` its segments (`("profile", "name")`); `name` the state key looked up first
    (`"user:profile"`), the rest of `path` indexing into that value.
    """

    key: str
    optional: bool
    span: Span

    @property
    def scope(self) -> Scope | None:
        head, sep, _ = self.key.partition(":")
        if sep and head in SCOPES:
            return head
        return None

    @property
    def path(self) -> tuple[str, ...]:
        _, _, rest = self.key.rpartition(":")
        return tuple(rest.split("."))

    @property
    def name(self) -> str:
        return self.key.partition(".")[0]

    @property
    def source(self) -> str:
        """The placeholder in the angle syntax, `<key>` or `<key?>`: as written, in an angle-syntax source."""
        return f"<{self.key}?>" if self.optional else f"<{self.key}>"


Node: TypeAlias = Literal | Escaped | Placeholder
