"""What the language server knows of a project beyond its findings: where each state key is written
and read, the instructions of each file, and the declared schemas. Built from `pysource.scan` with
the editor's unsaved text, and updated one file at a time."""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..jinja_mode.reads import state_reads
from ..linter.engine import Project
from ..linter.project import FileSkipped, read_bytes, wanted
from ..linter.registry import PYTHON_SYNTAX, SKIPPED_FILE
from ..linter.schema import Schema, SchemaField
from ..nodes import Placeholder
from ..places import line_starts, span_at
from ..pysource import Instruction, Scan, Write, python_text, scan
from ..template import parse

__all__ = ["Index", "Reading", "Written"]

_RELATIVE = re.compile(r"[ \t]*from[ \t]*\.")  # an import line of a relative import


@dataclass(frozen=True, slots=True)
class Reading:
    """A placeholder in a file: its key, where it is (file offsets), and the instruction holding it."""

    path: str
    start: int
    end: int
    node: Placeholder
    dialect: str
    label: str | None  # the instruction's name; None for a template file
    instruction: Instruction | None


@dataclass(frozen=True, slots=True)
class Written:
    """A state write: its key (None: known only at run time), where, and how (the agent of an `output_key=`:
    `Index.agent_of`)."""

    key: str | None
    path: str
    start: int
    end: int
    line: int
    how: str


def _absolute(path: str) -> str:
    return os.path.abspath(path)


def _agents_by_output_key(text: str) -> dict[int, str]:
    """The `name=` of each call by the line and column of its `output_key=` value."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    out: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            names = [kw.value for kw in node.keywords if kw.arg == "name"]
            name = names[0].value if names and isinstance(names[0], ast.Constant) else None
            for kw in node.keywords:
                if kw.arg == "output_key" and isinstance(name, str):
                    out[kw.value.lineno * 100_000 + kw.value.col_offset] = name
    return out


class Index:
    """The state keys of a project: writes, reads (placeholders) and schemas, by file.

    `texts`: the editor's unsaved text by absolute path (read before the file on disk); `found`: the
    engine's scan of the whole project with those texts, taken instead of scanning again. A file is
    read only inside the project's root (a link out of it is not followed) and within its size
    limit; one that cannot be read is left out and listed in `unreadable` with the finding's code
    (`E003`, or `E002` for a Python file that is not UTF-8) and the reason."""

    def __init__(self, project: Project, texts: Callable[[], dict[str, str]], *, found: Scan | None = None) -> None:
        self.project = project
        self.texts = texts
        self.writes: dict[str, list[Written]] = {}
        self.readings: dict[str, list[Reading]] = {}
        self.instructions: dict[str, list[Instruction]] = {}
        self.sources: dict[str, str] = {}
        self.unreadable: dict[str, tuple[str, str]] = {}
        self._checked: dict[str, str] = {}
        self._agents: dict[str, tuple[str, dict[int, str]]] = {}
        self._absolutes: dict[str, str] = {}  # by file: its text, its agents by output_key
        entries = project.walker.entries(project.root)
        include = project.config.include
        for entry in entries:  # links the walk leaves unread (out of the root, dangling, a loop): one E003 each
            if entry.skip is not None and (entry.relative.endswith(".py") or wanted(entry.relative, include)):
                self.unreadable[_absolute(entry.path)] = (SKIPPED_FILE, entry.skip)
        self.python_files = [e.path for e in entries if e.skip is None and e.relative.endswith(".py")]
        if found is None:
            self._rescan(self.python_files, full=True)
        else:  # the engine's scan of the whole project (the same files, the same texts): not scanned twice
            # and not read twice: what the engine read of each file (or why it could not) stands
            kept = project.kept_texts(self.python_files)
            pairs = zip(self.python_files, kept, strict=True)
            readable = [path for path, text in pairs if self._readable(path, kept=text)]
            self._checked.clear()
            self._absorb(found, readable, full=True)
            for path in self.unreadable:
                self.sources.pop(path, None)
        if include:
            for entry in entries:
                if entry.skip is None and not entry.relative.endswith(".py") and wanted(entry.relative, include):
                    self.update_template(entry.path)

    # -- reading

    def read(self, path: str) -> str:
        path = _absolute(path)
        text = self.texts().get(path)
        if text is not None:
            return text
        text = self._checked.pop(path, None)  # just read by `_readable`
        if text is not None:
            return text
        return python_text(read_bytes(path, limit=self.project.config.max_file_size, root=self.project.root))

    def _readable(self, path: str, *, kept: str | Exception | None = None) -> bool:
        """Whether `path` can be read; if not, why is kept in `unreadable`. `kept`: the file's text as the
        engine read it, or the error it met (None: not read, read now)."""
        path = _absolute(path)
        try:
            if isinstance(kept, Exception):
                raise kept
            if kept is None:
                self._checked[path] = self.read(path)
        except FileSkipped as exc:
            self.unreadable[path] = (SKIPPED_FILE, exc.reason)
            return False
        except UnicodeDecodeError as exc:
            what = "a Python file" if path.endswith(".py") else "a template file"
            code = PYTHON_SYNTAX if path.endswith(".py") else SKIPPED_FILE
            self.unreadable[path] = (code, f"{what} that is not UTF-8 ({exc.reason} at byte {exc.start}): not read")
            return False
        except OSError as exc:
            self.unreadable[path] = (SKIPPED_FILE, f"cannot be read: {exc.strerror or exc}")
            return False
        self.unreadable.pop(path, None)
        return True

    # -- building

    def _rescan(self, paths: list[str], *, full: bool = False) -> None:
        found = scan(
            [path for path in paths if self._readable(path)],
            suffixes=self.project.config.constant_suffixes,
            read=self.read,
            keep_going=True,
            root=str(self.project.root),
            unsaved=self.texts().keys(),  # open buffers not yet on disk: found as imports all the same
            links=self.project.links,
        )
        self._checked.clear()
        self._absorb(found, paths, full=full)

    def absorb(self, found: Scan, paths: Iterable[str]) -> None:
        """Take what the engine's scan `found` (of the whole project, as `Project.update` left it) says
        of the Python files `paths`, the files an edit may have changed: no second scan of them."""
        paths = [path for path in paths if path.endswith(".py")]
        for path in paths:
            self.unreadable.pop(_absolute(path), None)
        self._absorb(found, paths, full=False)

    def _absolute(self, path: str) -> str:
        """`path` made absolute, worked out once per name: an edit's findings name every file of the
        project, and the server's current folder does not change."""
        known = self._absolutes.get(path)
        if known is None:
            known = self._absolutes[path] = _absolute(path)
        return known

    def _absorb(self, found: Scan, paths: Iterable[str], *, full: bool) -> None:
        # Every file of the scan is gone through at each edit (5,000 on a large workspace): each name's absolute
        # form is looked up inline rather than through `_absolute`.
        absolutes, absolute = self._absolutes, self._absolute
        chosen = {absolute(p) for p in paths}
        if not full:
            for path in chosen:
                self.writes.pop(path, None)
                self.readings.pop(path, None)
                self.instructions.pop(path, None)
        sources = self.sources
        for path, text in found.sources.items():
            name = absolutes.get(path) or absolute(path)
            if full or name in chosen or name not in sources:
                sources[name] = text
        for write in found.writes:
            path = absolutes.get(write.path) or absolute(write.path)
            if path not in chosen:
                continue
            self.writes.setdefault(path, []).append(_written(write, path))
        for item in found.instructions:
            path = absolutes.get(item.path) or absolute(item.path)
            if path not in chosen and not full:
                continue
            if any(i.key == item.key for i in self.instructions.get(path, [])):
                continue  # one instruction reached through two files; two that only share a start stay two
            self.instructions.setdefault(path, []).append(item)
            self.readings.setdefault(path, [])
            try:
                placeholders = _placeholders(item)
            except Exception:
                continue
            for node in placeholders:
                where, span = item.locate(node.span.start, node.span.end)
                self.readings.setdefault(absolute(where), []).append(
                    Reading(absolute(where), span.start, span.end, node, item.dialect, item.label, item)
                )

    def agent_of(self, write: Written) -> str | None:
        """The `name=` of the agent whose `output_key=` is `write`, if it is one (worked out when asked,
        from the file's text as the index has it, once per text)."""
        if write.how != "output_key":
            return None
        text = self.sources.get(write.path, "")
        known = self._agents.get(write.path)
        if known is None or known[0] is not text:
            known = self._agents[write.path] = (text, _agents_by_output_key(text))
        line_start = text.rfind("\n", 0, write.start) + 1
        return known[1].get(write.line * 100_000 + len(text[line_start : write.start].encode("utf-8")))

    def update(self, path: str) -> None:
        """Read a changed Python file again (and the files that import it), or a template file."""
        path = _absolute(path)
        if not path.endswith(".py"):
            self.update_template(path)
            return
        if path not in self.python_files:
            self.python_files.append(path)
        self._rescan([path, *self._importers(path)])

    def update_template(self, path: str) -> None:
        path = _absolute(path)
        self.readings.pop(path, None)
        if not self._readable(path):
            self.sources.pop(path, None)
            return
        text = self.read(path)
        self._checked.clear()
        self.sources[path] = text
        dialect = self.project.dialect
        try:
            template = parse(text, dialect=dialect)
        except Exception:
            return
        self.readings[path] = [
            Reading(path, n.span.start, n.span.end, n, dialect, None, None) for n in template.placeholders
        ]

    def _importers(self, path: str) -> list[str]:
        """The project's Python files that may import `path`: an import line naming its module, in a
        folder at or above its own, or naming its package too (as the engine reads it); with links to folders in
        the project, any relative one naming it (a module of a linked folder imports from next to the link)."""
        item = Path(path)
        module = item.parent if item.stem == "__init__" else item.with_suffix("")
        folder, package = module.parent, module.parent.name
        line = re.compile(rf"^[ \t]*(?:from|import)\b[^\n]*\b{re.escape(module.name)}\b[^\n]*", re.MULTILINE)
        linked = bool(self.project.links)
        out = []
        for other in self.python_files:
            text = self.sources.get(other)
            if other == path or text is None or module.name not in text:
                continue
            found = line.search(text)
            if found is None:
                continue
            here = Path(other).parent
            if (
                here == folder
                or here in folder.parents
                or (package and package in found.group())
                or (linked and _RELATIVE.match(found.group()))
            ):
                out.append(other)
        return out

    # -- asking

    def all_writes(self) -> Iterable[Written]:
        for writes in self.writes.values():
            yield from writes

    def writes_of(self, key: str) -> list[Written]:
        return [w for w in self.all_writes() if w.key == key]

    def readers_of(self, key: str) -> list[Reading]:
        return [r for readings in self.readings.values() for r in readings if r.node.name == key]

    def reading_at(self, path: str, offset: int) -> Reading | None:
        for reading in self.readings.get(_absolute(path), []):
            if reading.start <= offset <= reading.end:
                return reading
        return None

    def write_at(self, path: str, offset: int) -> Written | None:
        for write in self.writes.get(_absolute(path), []):
            if write.start <= offset <= write.end:
                return write
        return None

    def instruction_at(self, path: str, offset: int) -> Instruction | None:
        path = _absolute(path)
        for item in self.instructions.get(path, []):
            if item.span.start <= offset <= item.span.end:
                return item
        return None

    def schemas(self, instruction: Instruction | None = None) -> list[tuple[str, Schema]]:
        """The schemas that declare keys: the project's, then the ADK `state_schema=` models (of the
        agents given `instruction`, or of every instruction)."""
        out: list[tuple[str, Schema]] = []
        if self.project.schema is not None:
            out.append(("the project's schema", self.project.schema))
        items = [instruction] if instruction is not None else [i for items in self.instructions.values() for i in items]
        seen: set[int] = set()
        for item in items:
            for state in item.state_schemas:
                if state.schema is not None and id(state.schema) not in seen:
                    seen.add(id(state.schema))
                    out.append((f"state_schema={state.model} of {state.agent}", state.schema))
        return out

    def field(self, key: str, instruction: Instruction | None = None) -> list[tuple[str, SchemaField]]:
        """Where the schemas declare `key` (a dotted path), with what they say of it."""
        head, *rest = key.split(".")
        out = []
        for where, schema in self.schemas(instruction):
            field = schema.fields.get(head)
            for part in rest:
                if field is not None and part.isdigit():  # `legs.0`: an element of a list
                    field = field.items
                    continue
                if field is None or field.fields is None:
                    field = None
                    break
                field = field.fields.get(part)
            if field is not None:
                out.append((where, field))
        return out

    def known_keys(self) -> list[str]:
        keys = {w.key for w in self.all_writes() if w.key}
        for _, schema in self.schemas():
            keys.update(schema.fields)
        return sorted(keys)


def _placeholders(item: Instruction) -> list[Placeholder]:
    """The keys `item` reads, each where it is written in its text: a `jinja(...)` instruction's variables
    (each read of a state key: `{{ name }}`, `{{ user.tier }}`), else its template's placeholders."""
    if item.dialect != "jinja":
        return list(parse(item.text, dialect=item.dialect).placeholders)
    starts = line_starts(item.text)
    return [
        Placeholder(read.key, not read.required, span_at(starts, read.start, read.end))
        for read in state_reads(item.text, every=True)
    ]


def _written(write: Write, path: str) -> Written:
    return Written(write.key, path, write.span.start, write.span.end, write.span.line, write.how)


def describe_field(field: SchemaField) -> str:
    """A short description of a schema field: its type and default when declared, required or optional,
    object or list."""
    parts = [f"`{field.type}`"] if field.type else []
    if field.default is not None:
        parts.append(f"default `{field.default}`")
    parts.append("required" if field.required else "optional (has a default)")
    if field.is_list:
        parts.append("a list")
    if field.fields:
        parts.append("an object with fields " + ", ".join(f"`{name}`" for name in sorted(field.fields)))
    return ", ".join(parts)
