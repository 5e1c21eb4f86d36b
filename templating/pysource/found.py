"""What a scan finds in Python code: instructions (each character placed in its file), instructions skipped
(with the reason), state writes, and the [`Scan`][templating.pysource.Scan] that holds them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal as _Literal
from typing import TypeAlias

# google-adk's state_schema= models: this package's one import of templating.lint.adk_schema (the others import
# these names from here).
from ..lint.adk_schema import ModelReader as ModelReader
from ..lint.adk_schema import StateSchema as StateSchema
from ..nodes import Span
from .positions import _Mapped
from .reading import PythonSourceError

Kind: TypeAlias = _Literal["angle", "adk", "jinja"]


@dataclass(frozen=True, slots=True)
class Instruction:
    """One instruction string found in Python code.

    `label` names it in findings (the constant `ROOT_PROMPT`, or the call site
    `LlmAgent(name="planner").instruction`); `names` are what `templating render FILE.py:NAME`
    accepts for it; `dialect` is `"angle"`, `"adk"` or `"jinja"`; `text` the string's
    value; `path`/`span` where it starts. `locate` maps a span of `text` into the file.
    `state_schemas`: the `state_schema=` models of the ADK agents given it, read from the code.
    """

    label: str
    names: tuple[str, ...]
    dialect: Kind
    text: str
    path: str
    span: Span
    _mapped: _Mapped = field(repr=False, compare=False)
    # the state_schema= of each google-adk agent given this instruction (see templating.lint.adk_schema)
    state_schemas: tuple[StateSchema, ...] = ()

    def locate(self, start: int, end: int) -> tuple[str, Span]:
        """The file and the span in it of `text[start:end]` (clipped to the file of its first character)."""
        m = self._mapped
        if not m.text:
            return self.path, self.span
        start = min(max(start, 0), len(m.text) - 1)
        last = min(max(end - 1, start), len(m.text) - 1)
        module = m.mods[start]
        while last > start and m.mods[last] is not module:
            last -= 1
        file_start, file_end = m.starts[start], max(m.ends[last], m.starts[start] + 1)
        return module.path, module.span(file_start, file_end)

    def file_text(self, path: str) -> str | None:
        """The text of the `.py` file `path` that part of this instruction was written in (as read)."""
        for module in self._mapped.mods:
            if module.path == path:
                return module.text
        return None


@dataclass(frozen=True, slots=True)
class Skipped:
    """An instruction whose text is not known without running the code (`reason` says why)."""

    label: str
    path: str
    span: Span
    reason: str


@dataclass(frozen=True, slots=True)
class Write:
    """A state key the code writes (`key`), or a write whose key is not a literal (`key` is None)."""

    key: str | None
    path: str
    span: Span
    how: str


@dataclass(slots=True)
class Scan:
    """What `scan` found: the instructions, the skipped ones, the state writes, and the text of
    every Python file read (imported modules outside the given files included)."""

    instructions: list[Instruction] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    errors: list[PythonSourceError] = field(default_factory=list)
    # every google-adk agent's state_schema= met, readable or not (the unreadable ones say why)
    state_schemas: list[StateSchema] = field(default_factory=list)
    # the text files an instruction reads that could not be read (missing, too large, not UTF-8, outside the
    # root): a run that depends on them not being there (the lint cache checks them again)
    unread: list[str] = field(default_factory=list)

    @property
    def written(self) -> frozenset[str] | None:
        """The keys written, or None when some write's key is known only at run time, or a file to
        scan was not valid Python (what it writes is unknown)."""
        if self.errors or any(w.key is None for w in self.writes):
            return None
        return frozenset(w.key for w in self.writes if w.key is not None)
