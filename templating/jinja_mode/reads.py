"""The state keys a Jinja2 instruction reads, read from Jinja's syntax tree as the mode maps names to keys:
a bare name (`orders`) reads the key of that name, `user.name` and `user["name"]` read `user:name` (so do
`app.` and `temp.`), and `state.x` or `state["user:x"]` read the key given. A read guarded in the template
(`x is defined`, `x | default(...)`) is not required: a missing key then raises nothing.

For the linter (T014, T012, T001 on a `jinja(...)` instruction) and `templating keys`: each read is placed
where it is written in the source, so a finding points at the variable."""

from __future__ import annotations

import re
from dataclasses import dataclass

from jinja2 import TemplateSyntaxError, meta, nodes

from ..nodes import SCOPE_PREFIXES, SCOPES
from .mode import _bindable
from .sandbox import _ENVIRONMENT

__all__ = ["StateRead", "state_reads"]

# The names that read state, and the prefix each gives a key: `state.x` is `x`, `user.x` is `user:x`.
_PREFIXES: dict[str, str] = {"state": "", **dict(zip(SCOPES, SCOPE_PREFIXES, strict=True))}
# Jinja's own names inside loops, macros and call blocks: never state.
_JINJA_NAMES = frozenset({"loop", "caller", "varargs", "kwargs", "self"})
# Tests and filters that make a missing value no error.
_GUARD_TESTS = frozenset({"defined", "undefined"})
_GUARD_FILTERS = frozenset({"default", "d"})


@dataclass(frozen=True, slots=True)
class StateRead:
    """A state key a Jinja2 template reads: `key` (`orders`, `user:name`), where it is first read in the
    source (`start`, `end`: the name, or the whole `user.name` / `state["x"]`), and whether it is
    `required` (read somewhere with no guard: a missing key raises `JinjaUndefinedError`)."""

    key: str
    start: int
    end: int
    required: bool


def _key_of(expr: nodes.Node, undeclared: set[str]) -> tuple[str, str, str | None] | None:
    """(key, the name read, the attribute or item after it) for an expression that reads one state key."""
    if isinstance(expr, nodes.Name) and expr.ctx == "load":
        name = expr.name
        if name in undeclared and name not in _JINJA_NAMES and _bindable(name):
            return name, name, None
        return None
    if isinstance(expr, nodes.Getattr | nodes.Getitem) and isinstance(expr.node, nodes.Name):
        name = expr.node.name
        if name not in _PREFIXES or name not in undeclared:
            return None
        if isinstance(expr, nodes.Getattr):
            return _PREFIXES[name] + expr.attr, name, expr.attr
        if isinstance(expr.arg, nodes.Const) and isinstance(expr.arg.value, str):
            return _PREFIXES[name] + expr.arg.value, name, expr.arg.value
    return None


def state_reads(source: str, *, every: bool = False) -> tuple[StateRead, ...]:
    """The state keys `source` reads, each once (where it is first read), in the order of the source. A
    template Jinja2 cannot parse reads nothing here (E001 reports it).

    `every`: each place a key is read instead (for the editor's hover and go-to-definition), except for a name
    the template also sets (`{% set %}`, a loop variable, a macro argument): only its first read is sure to be
    the state's, so only that one is given."""
    text = source.replace("\r\n", "\n").replace("\r", "\n")
    try:
        tree = _ENVIRONMENT.parse(text)
    except TemplateSyntaxError:
        return ()
    undeclared = set(meta.find_undeclared_variables(tree))
    guarded: set[str] = set()
    for check in tree.find_all((nodes.Test, nodes.Filter)):
        guard = check.name in (_GUARD_TESTS if isinstance(check, nodes.Test) else _GUARD_FILTERS)
        read = _key_of(check.node, undeclared) if guard and check.node is not None else None
        if read is not None:
            guarded.add(read[0])
    first: dict[str, tuple[int, str, str | None]] = {}  # key -> (line, name, attribute or item)
    later: list[tuple[str, int, str, str | None]] = []  # every read after the first (`every`)
    inside: set[int] = set()  # the names read as `user.name`: not read again as the bare name `user`
    stored = {n.name for n in tree.find_all(nodes.Name) if n.ctx != "load"} if every else set()
    for node in tree.find_all((nodes.Name, nodes.Getattr, nodes.Getitem)):
        if id(node) in inside:
            continue
        read = _key_of(node, undeclared)
        if read is None:
            continue
        if isinstance(node, nodes.Getattr | nodes.Getitem):
            inside.add(id(node.node))
        key, name, part = read
        line = node.lineno
        if key not in first or line < first[key][0]:
            if key in first and name not in stored:
                later.append((key, *first[key]))
            first[key] = (line, name, part)
        elif every and name not in stored:
            later.append((key, line, name, part))
    places = _Places(text)
    found: set[tuple[str, int, int, int]] = set()  # (key, start, end, line)
    for key, line, name, part in [(k, *v) for k, v in first.items()] + later:
        nth = sum(1 for o in found if o[0] == key and o[3] == line)  # two reads of it on one line: the next one
        found.add((key, *places.find(line, name, part, nth), line))
    reads = {StateRead(key, *_original(source, start, end), key not in guarded) for key, start, end, _ in found}
    return tuple(sorted(reads, key=lambda r: (r.start, r.key)))


class _Places:
    """Where the tokens of a template are, as offsets of its text (Jinja's lexer gives only lines)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[int, str, str, int]] = []  # (line, kind, value, offset)
        at = 0
        try:
            for line, kind, value in _ENVIRONMENT.lexer.tokeniter(text, None):
                found = text.find(value, at) if value else at
                if found < 0 or text[at:found].strip():  # only white space is ever left out of a token
                    self.tokens = []
                    return
                self.tokens.append((line, kind, value, found))
                at = found + len(value)
        except TemplateSyntaxError:
            self.tokens = []

    def find(self, line: int, name: str, part: str | None, nth: int = 0) -> tuple[int, int]:
        """The span of `name` (with `.part` or `[...]` after it when given) written on `line`: the first, or
        the one after `nth` others (the last there is, when fewer)."""
        code = [t for t in self.tokens if t[0] == line and t[1] not in ("whitespace", "data", "comment")]
        spans: list[tuple[int, int]] = []
        for i, (_, kind, value, at) in enumerate(code):
            if kind != "name" or value != name or (i and code[i - 1][2] == "."):
                continue
            following = code[i + 1 : i + 4]
            if part is None:
                spans.append((at, at + len(value)))
            elif len(following) >= 2 and following[0][2] == "." and following[1][2] == part:
                spans.append((at, following[1][3] + len(part)))
            elif len(following) == 3 and following[0][2] == "[" and following[2][2] == "]":
                spans.append((at, following[2][3] + 1))
        return spans[min(nth, len(spans) - 1)] if spans else self._line(line)

    def _line(self, line: int) -> tuple[int, int]:
        """The span of the text of `line` (leading white space left out): where no token is found."""
        starts = [0, *(m.end() for m in re.finditer("\n", self.text))]
        begin = starts[min(line, len(starts)) - 1]
        end = self.text.find("\n", begin)
        end = len(self.text) if end < 0 else end
        indent = len(self.text[begin:end]) - len(self.text[begin:end].lstrip())
        return begin + indent, max(end, begin + indent + 1)


def _original(source: str, start: int, end: int) -> tuple[int, int]:
    """Offsets in `source` of the span `start`..`end` of its text with line ends made `\\n`."""
    if "\r" not in source:
        return start, end
    mapping = []  # the offset in `source` of each character of the normalized text, and of its end
    i = 0
    while i < len(source):
        mapping.append(i)
        i += 2 if source.startswith("\r\n", i) else 1
    mapping.append(len(source))
    return mapping[min(start, len(mapping) - 1)], mapping[min(end, len(mapping) - 1)]
