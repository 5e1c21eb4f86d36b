"""What a scan finds in Python code: instructions (each character placed in its file), instructions skipped
(with the reason), state writes, and the [`Scan`][templating.pysource.Scan] that holds them."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal as _Literal
from typing import TypeAlias

from ..nodes import Span
from ..schema import Schema
from .positions import _Mapped
from .reading import PythonSourceError

Kind: TypeAlias = _Literal["angle", "adk", "jinja"]

# Module constants whose name ends in one of these (in capitals) are instructions even when no call site
# uses them, if they hold a placeholder: `scan(suffixes=...)`'s default, and `constant-suffixes` in
# `[tool.templating]`.
CONSTANT_SUFFIXES: tuple[str, ...] = ("PROMPT", "INSTRUCTION", "INSTR", "TEMPLATE")


@dataclass(frozen=True, slots=True, eq=False)
class StateSchema:
    """The `state_schema=` of one ADK agent: `agent` names the call (`Agent(name="planner")`),
    `model` the class as written; `path`/`span` are where the class is defined (where the argument is,
    when it cannot be read). `schema` is its fields, or `None` with `reason` saying why it is unknown.
    `given_in`: the Python file of the agent's call (the file whose scan finds it)."""

    agent: str
    model: str
    path: str
    span: Span
    schema: Schema | None
    reason: str | None = None
    given_in: str = ""


@dataclass(frozen=True, slots=True)
class InstructionKey:
    """Which instruction, of all a scan finds: the file its text starts in (`file`, its resolved path), its
    name (`name`, the label: the constant, or the agent's call site), and where it is written there
    (`start`, `end`).

    Two instructions can share all of these: `BASE + QUIZ` and `BASE + MEMORY + QUIZ` given to two
    agents without a `name=` both start where `BASE` does and end where `QUIZ` does. Their `dialect`
    and `text` tell them apart, so the key is exact: two instructions of one scan never share it, and
    the same instruction read by another scan of the same files has the same key.
    """

    file: str
    name: str
    start: int
    end: int
    dialect: Kind
    text: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class Instruction:
    """One instruction string found in Python code.

    `label` names it in findings (the constant `ROOT_PROMPT`, or the call site
    `LlmAgent(name="planner").instruction`); `names` are what `templating render FILE.py:NAME`
    accepts for it; `dialect` is `"angle"`, `"adk"` or `"jinja"`; `text` the string's
    value; `path`/`span` where it starts. `locate` maps a span of `text` into the file.
    `state_schemas`: the `state_schema=` models of the ADK agents given it, read from the code.
    `file`: the resolved path of `path` (computed once, when the file was read); `key` is the
    instruction's identity ([`InstructionKey`][templating.pysource.InstructionKey]); `given_at`: where
    the Python code gives it (each call site's argument, or the constant's value: file and span), and
    `given_in` those files.
    """

    label: str
    names: tuple[str, ...]
    dialect: Kind
    text: str
    path: str
    span: Span
    _mapped: _Mapped = field(repr=False, compare=False)
    # the state_schema= of each google-adk agent given this instruction (read by templating.pysource.models)
    state_schemas: tuple[StateSchema, ...] = ()
    file: str = ""
    # where the code gives this instruction: each call site's argument (the constant's value), file and span
    given_at: tuple[tuple[str, Span], ...] = field(default=(), compare=False)

    @property
    def given_in(self) -> tuple[str, ...]:
        """The Python files whose code gives this instruction (its call sites, the module of its constant)."""
        return tuple(dict.fromkeys(path for path, _ in self.given_at))

    @property
    def key(self) -> InstructionKey:
        """This instruction's identity: its file, name and span, with its dialect and text (see
        [`InstructionKey`][templating.pysource.InstructionKey])."""
        file = self.file or self.path
        return InstructionKey(file, self.label, self.span.start, self.span.end, self.dialect, self.text)

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

    def written_as_is(self, path: str) -> list[int | None]:
        """For each character of `text`, its offset in the `.py` file `path` (any path to it: compared by
        real path) when it is written there as itself, one character of a string literal (no escape
        sequence, no `{{` of an f-string); None for any other (from another file, or written otherwise).
        A fix edits only characters written as is."""
        m = self._mapped
        real = os.path.realpath(path)
        modules = {id(module): module for module in m.mods}  # one per character: each module resolved once
        here = {key: os.path.realpath(module.path) == real for key, module in modules.items()}
        out: list[int | None] = []
        for char, module, start, end in zip(m.text, m.mods, m.starts, m.ends, strict=True):
            ok = here[id(module)] and end - start == 1 and module.text[start:end] == char
            out.append(start if ok else None)
        return out

    def file_text(self, path: str) -> str | None:
        """The text of the `.py` file `path` that part of this instruction was written in (as read)."""
        for module in self._mapped.mods:
            if module.path == path:
                return module.text
        return None


@dataclass(frozen=True, slots=True)
class Skipped:
    """An instruction whose text is not known without running the code (`reason` says why); `names` are
    those `templating render FILE.py:NAME` would know it by (an agent's name, `name.instruction`)."""

    label: str
    path: str
    span: Span
    reason: str
    names: tuple[str, ...] = ()


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
    every Python file read (imported modules outside the given files included). An agent's
    `static_instruction=` is sent as written, so it is no instruction: it is kept apart."""

    instructions: list[Instruction] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    errors: list[PythonSourceError] = field(default_factory=list)
    # every agent's static_instruction= whose text is known: sent to the model as written, never rendered
    static_instructions: list[Instruction] = field(default_factory=list)
    # every google-adk agent's state_schema= met, readable or not (the unreadable ones say why)
    state_schemas: list[StateSchema] = field(default_factory=list)
    # the files the scan looked for and could not read: the text files an instruction reads (missing, too large,
    # not UTF-8, outside the root), and the modules an import could name that are not there (found so with a
    # `stat`, not read): a run that depends on them not being there (the lint cache checks them again)
    unread: list[str] = field(default_factory=list)

    @property
    def written(self) -> frozenset[str] | None:
        """The keys written, or None when some write's key is known only at run time, or a file to
        scan was not valid Python (what it writes is unknown)."""
        if self.errors or any(w.key is None for w in self.writes):
            return None
        return frozenset(w.key for w in self.writes if w.key is not None)
