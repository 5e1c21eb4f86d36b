"""The language server: pygls over stdio (framed and checked by `wire`), the lint engine underneath.

Each workspace folder is a project of its own (`folders`), read off the message loop. Each open
document's text is the engine's override for its file; an edit is linted again after a short pause
(edits typed during the pause are linted once), with the findings of the other open documents of
its folder that depend on it. A change of a folder's `pyproject.toml` reads that folder again."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from .. import __version__
from ..errors import TemplatingError
from ..inputs import DEFAULT_MAX_FILE_SIZE
from ..lint.discovery import DEFAULT_INCLUDE
from ..lint.engine import Project
from ..lint.project import FileSkipped, read_bytes, wanted
from ..lint.registry import PYTHON_SYNTAX, SKIPPED_FILE, Diagnostic, described, rule_url
from ..lint.util import shown
from ..nodes import SCOPE_PREFIXES
from ..pysource import python_text
from .fixes import Fix, convert_fix, fixes_for, suppress_fixes
from .folders import FAILED, LOADING, READY, REFUSED, Folder, contains, refused_because
from .model import Index, Reading, Written, describe_field
from .positions import Lines
from .wire import Protocol, run_stdio

__all__ = ["DEBOUNCE_SECONDS", "TemplatingServer", "serve"]

log = logging.getLogger(__name__)

# How long an edit waits for the next keystroke before it is linted: short, as linting one file is fast.
DEBOUNCE_SECONDS = 0.05
_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}
_BEFORE_CURSOR = re.compile(r"(<|\{)((?:[^\W\d]\w*:)?[\w.]*)$")


class TemplatingServer:
    """The server's state: the workspace folders (each a project and its index), the open documents,
    their findings and pending lints.

    Paths are resolved (symbolic links followed), so a file has one name whatever the URI the
    client used, and a link out of a folder is outside it. A document outside every folder that is
    ready (or in a refused one) is linted from its text alone, in a project of its own with an
    empty root: nothing next to it is read. Requests about a file outside every folder open nothing."""

    def __init__(self, ls: LanguageServer) -> None:
        self.ls = ls
        self.folders: dict[Path, Folder] = {}
        self.findings: dict[str, list[Diagnostic]] = {}  # by path, as last published
        self.pending: dict[str, asyncio.TimerHandle] = {}
        self.open: dict[str, str] = {}  # path -> uri
        self.outside_told: set[str] = set()
        self._loose: Project | None = None
        self._loose_root: tempfile.TemporaryDirectory[str] | None = None

    # -- the folders

    @property
    def encoding(self) -> str:
        try:
            chosen = self.ls.workspace.position_encoding or "utf-16"
        except RuntimeError:
            return "utf-16"
        return chosen.value if isinstance(chosen, types.PositionEncodingKind) else str(chosen)

    def owner(self, path: str) -> Folder | None:
        """The innermost workspace folder holding `path` (resolved)."""
        best = None
        for folder in self.folders.values():
            if contains(folder.root, path) and (best is None or len(folder.root.parts) > len(best.root.parts)):
                best = folder
        return best

    def ready_folder(self, path: str) -> Folder | None:
        folder = self.owner(path)
        if folder is not None and folder.ready:
            return folder
        if folder is None and path not in self.outside_told:
            if len(self.outside_told) > 1000:
                self.outside_told.clear()
            self.outside_told.add(path)
            log.warning("%s is outside every workspace folder: not read", path)
        return None

    def texts(self, folder: Folder | None) -> dict[str, str]:
        """The open documents' text in `folder` (None: outside every folder), by path; a buffer over the
        size limit is left out (the file on disk is read instead, within the limit)."""
        out = {}
        for path, uri in self.open.items():
            if self.owner(path) is folder:
                text = self.ls.workspace.get_text_document(uri).source
                limit = folder.project.config.max_file_size if folder and folder.project else DEFAULT_MAX_FILE_SIZE
                if not _too_large(text, limit):
                    out[path] = text
        return out

    def add_folder(self, uri: str) -> None:
        raw = to_fs_path(uri)
        if raw is None:
            return
        root = Path(os.path.realpath(raw))
        if root in self.folders:
            return
        folder = Folder(root, uri)
        self.folders[root] = folder
        reason = refused_because(root)
        if reason is not None:
            folder.state, folder.reason = REFUSED, reason
            self.tell(
                types.MessageType.Warning,
                f"templating: the workspace folder {root} is not read: {reason}. Open a project folder; "
                "files opened from here are linted alone.",
            )
            return
        if not root.is_dir():
            folder.state, folder.reason = FAILED, "not a folder"
            self.tell(types.MessageType.Warning, f"templating: the workspace folder {root} is not a folder")

    def remove_folder(self, uri: str) -> None:
        raw = to_fs_path(uri)
        folder = self.folders.pop(Path(os.path.realpath(raw)), None) if raw else None
        if folder is None:
            return
        for path in folder.unreadable:
            if path not in self.open:
                self.clear(path)
        for path in [p for p in self.open if contains(folder.root, p)]:
            self.lint_now(path, others=False)  # now in another folder, or alone

    def load(self, folder: Folder) -> None:
        """Read `folder`'s configuration and project again, off the message loop."""
        if folder.state == REFUSED or not folder.root.is_dir():
            return
        if folder.state == FAILED:
            folder.state = LOADING
        folder.load(self.texts(folder), self.loaded)

    def loaded(self, folder: Folder, generation: int, project: Project | None, index: Index | None, error: str) -> None:
        if self.folders.get(folder.root) is not folder or generation != folder.generation:
            return  # removed, or read again since
        if project is None or index is None:
            folder.state, folder.reason, folder.project, folder.index = FAILED, error, None, None
            self.tell(types.MessageType.Error, f"templating: {error}")
        else:
            index.texts = lambda: self.texts(folder)
            folder.state, folder.project, folder.index = READY, project, index
        self.findings = {p: f for p, f in self.findings.items() if self.owner(p) is not folder}
        for path in list(self.open):
            if self.owner(path) is folder:
                self.lint_now(path, others=False)
        self.publish_unreadable(folder)

    def publish_unreadable(self, folder: Folder) -> None:
        """One finding on each file of the folder that could not be read (and is not open)."""
        now = dict(folder.index.unreadable) if folder.index is not None else {}
        for path in folder.unreadable:
            if path not in now and path not in self.open:
                self.clear(path)
        for path, (code, reason) in now.items():
            if path not in self.open and folder.unreadable.get(path) != (code, reason):
                if code == PYTHON_SYNTAX:
                    note = Diagnostic(code, "error", reason, None, path)
                else:
                    note = Diagnostic(code, "info", reason, None, path)
                self.publish(path, [note], folder=folder)
        folder.unreadable = now

    def tell(self, kind: types.MessageType, message: str) -> None:
        log.warning("%s", message)
        self.ls.window_show_message(types.ShowMessageParams(kind, message))

    def loose(self) -> Project:
        """The project of documents outside every folder: an empty root, so nothing else is read."""
        if self._loose is None:
            self._loose_root = tempfile.TemporaryDirectory(prefix="templating-lsp-")
            self._loose = Project(self._loose_root.name)
        return self._loose

    def lintable(self, path: str, project: Project, *, alone: bool) -> bool:
        if path.endswith(".py"):
            return True
        if alone:
            return wanted(Path(path).name, DEFAULT_INCLUDE)
        rel = os.path.relpath(path, project.config.root)
        return wanted(rel, (*project.config.include, *DEFAULT_INCLUDE))

    def text_of(self, path: str, folder: Folder | None = None) -> str | None:
        """The text of `path`: its open buffer, else (inside `folder` only) as the index read it or
        from the disk, within the size limit."""
        uri = self.open.get(path)
        if uri is not None:
            return self.ls.workspace.get_text_document(uri).source
        if folder is None or folder.project is None or not contains(folder.root, path):
            return None
        if folder.index is not None and path in folder.index.sources:
            return folder.index.sources[path]
        try:
            data = read_bytes(path, limit=folder.project.config.max_file_size, root=folder.root)
            return python_text(data)
        except (OSError, FileSkipped, UnicodeDecodeError):
            return None

    # -- linting

    def schedule(self, path: str) -> None:
        handle = self.pending.pop(path, None)
        if handle is not None:
            handle.cancel()
        loop = asyncio.get_running_loop()
        self.pending[path] = loop.call_later(DEBOUNCE_SECONDS, self.lint_now, path)

    def flush(self, path: str) -> None:
        """Lint `path` now if an edit of it waits (a request needs its current state)."""
        if path in self.pending:
            self.lint_now(path)

    def lint_now(self, path: str, *, others: bool = True) -> None:
        handle = self.pending.pop(path, None)
        if handle is not None:
            handle.cancel()
        uri = self.open.get(path)
        if uri is None:
            return
        folder = self.owner(path)
        if folder is not None and folder.state == LOADING:
            return  # linted when the folder is read
        if folder is not None and folder.state == FAILED:  # its configuration is broken: said once, not guessed
            self.publish(path, [], folder=folder)
            return
        alone = folder is None or not folder.ready
        project = self.loose() if alone else folder.project  # type: ignore[union-attr]
        index = None if alone else folder.index  # type: ignore[union-attr]
        assert project is not None
        text = self.ls.workspace.get_text_document(uri).source
        limit = project.config.max_file_size
        if _too_large(text, limit):
            project.overrides.pop(shown(Path(path)), None)  # the file on disk, read within the limit
            size = len(text.encode("utf-8", errors="surrogatepass"))
            note = Diagnostic(
                SKIPPED_FILE,
                "info",
                f"this buffer is {size:,} bytes, over max-file-size ({limit:,} bytes): not linted",
                None,
                path,
                "raise max-file-size in [tool.templating] of pyproject.toml to lint it",
            )
            self.publish(path, [note], folder=folder)
            return
        found: list[Diagnostic] = []
        try:
            if self.lintable(path, project, alone=alone):
                result = project.update(path, text)
                found = [d for d in result.diagnostics if d.path and os.path.abspath(d.path) == path]
            if index is not None:
                index.update(path)
        except TemplatingError as exc:
            log.warning("linting %s failed: %s", path, exc)
        self.publish(path, found, force=others, folder=folder)
        if others and path.endswith(".py"):
            for other in list(self.open):
                if other == path or not other.endswith(".py") or other in self.pending:
                    continue
                if self.owner(other) is folder:
                    self.lint_now(other, others=False)

    def publish(self, path: str, found: list[Diagnostic], *, force: bool = True, folder: Folder | None = None) -> None:
        uri = self.open.get(path) or from_fs_path(path) or path
        if not force and path in self.findings and self.findings[path] == found:
            return  # another document's findings, unchanged by this edit
        self.findings[path] = found
        text = "" if all(d.span is None for d in found) else (self.text_of(path, folder) or "")
        lines = Lines(text, self.encoding)
        version = None
        if path in self.open:
            version = self.ls.workspace.get_text_document(uri).version
        self.ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri, [self.to_lsp(d, lines, folder) for d in found], version)
        )

    def clear(self, path: str) -> None:
        self.findings.pop(path, None)
        uri = self.open.get(path) or from_fs_path(path) or path
        self.ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))

    def range_of(self, lines: Lines, start: int, end: int) -> types.Range:
        a, b = lines.position(start), lines.position(end)
        return types.Range(types.Position(*a), types.Position(*b))

    def location(self, folder: Folder, path: str, start: int, end: int) -> types.Location | None:
        text = self.text_of(path, folder)
        if text is None:
            return None
        return types.Location(from_fs_path(path) or path, self.range_of(Lines(text, self.encoding), start, end))

    def to_lsp(self, diag: Diagnostic, lines: Lines, folder: Folder | None) -> types.Diagnostic:
        if diag.span is None:
            where = types.Range(types.Position(0, 0), types.Position(0, 0))
        else:
            where = self.range_of(lines, diag.span.start, diag.span.end)
        message = diag.message + (f"\n{diag.help}" if diag.help else "")
        return types.Diagnostic(
            range=where,
            message=message,
            severity=_SEVERITY.get(diag.severity, types.DiagnosticSeverity.Warning),
            code=diag.code,
            code_description=types.CodeDescription(rule_url(diag.code)) if described(diag.code) else None,
            source="templating",
            related_information=self.related(diag, folder) or None,
        )

    def related(self, diag: Diagnostic, folder: Folder | None) -> list[types.DiagnosticRelatedInformation]:
        index = folder.index if folder is not None and folder.ready else None
        if folder is None or index is None or diag.span is None or not diag.path:
            return []
        path = os.path.abspath(diag.path)
        out = []
        if diag.code == "T014":
            reading = index.reading_at(path, diag.span.start)
            if reading is not None:
                for other in index.readers_of(reading.node.name):
                    if (other.path, other.start) != (path, reading.start):
                        place = self.location(folder, other.path, other.start, other.end)
                        if place is not None:
                            what = f"instruction {other.label}" if other.label else "this template"
                            out.append(types.DiagnosticRelatedInformation(place, f"{what} also reads it"))
        elif diag.code != SKIPPED_FILE:
            write = index.write_at(path, diag.span.start)
            if write is not None and write.key is not None:
                for elsewhere in index.writes_of(write.key):
                    if (elsewhere.path, elsewhere.start) != (path, write.start):
                        place = self.location(folder, elsewhere.path, elsewhere.start, elsewhere.end)
                        if place is not None:
                            out.append(
                                types.DiagnosticRelatedInformation(place, f"also written here ({elsewhere.how})")
                            )
        return out

    # -- asking

    def place(self, uri: str) -> tuple[Folder, Index, str] | None:
        """The ready folder holding the document `uri`, its index and the document's path; None outside
        every folder (nothing is read then)."""
        raw = to_fs_path(uri)
        if raw is None:
            return None
        path = os.path.realpath(raw)
        folder = self.ready_folder(path)
        if folder is None or folder.index is None:
            return None
        self.flush(path)
        return folder, folder.index, path

    def where(self, uri: str, position: types.Position) -> tuple[Folder, Index, str, str, int] | None:
        found = self.place(uri)
        if found is None:
            return None
        folder, index, path = found
        text = self.text_of(path, folder)
        if text is None:
            return None
        return folder, index, path, text, Lines(text, self.encoding).offset(position.line, position.character)

    def describe_write(self, folder: Folder, write: Written) -> str:
        shown_path = os.path.relpath(write.path, folder.root) if contains(folder.root, write.path) else write.path
        place = f"`{shown_path}:{write.line}`"
        if write.how == "output_key":
            who = f" of agent `{write.agent}`" if write.agent else ""
            return f"`output_key={write.key!r}`{who} at {place}"
        return f"`{write.how}` at {place}"

    def hover(self, uri: str, position: types.Position) -> types.Hover | None:
        found = self.where(uri, position)
        if found is None:
            return None
        folder, index, path, text, offset = found
        lines = Lines(text, self.encoding)
        reading = index.reading_at(path, offset)
        if reading is not None:
            return types.Hover(
                types.MarkupContent(types.MarkupKind.Markdown, self.describe_reading(folder, index, reading)),
                self.range_of(lines, reading.start, reading.end),
            )
        write = index.write_at(path, offset)
        if write is not None and write.key is not None:
            readers = index.readers_of(write.key)
            body = [f"**state key `{write.key}`**, written by {self.describe_write(folder, write)}", ""]
            body.append(f"Read by {len(readers)} placeholder(s):" if readers else "No instruction reads it.")
            body += [f"- {r.label or 'template'} at `{os.path.relpath(r.path, folder.root)}`" for r in readers]
            return types.Hover(
                types.MarkupContent(types.MarkupKind.Markdown, "\n".join(body)),
                self.range_of(lines, write.start, write.end),
            )
        item = index.instruction_at(path, offset)
        if item is not None:
            keys = [r for rs in index.readings.values() for r in rs if r.instruction is item]
            required = list(dict.fromkeys(r.node.key for r in keys if not r.node.optional))
            optional = list(dict.fromkeys(r.node.key for r in keys if r.node.optional))
            body = [f"**instruction `{item.label}`** ({item.dialect} syntax)", ""]
            body.append("Keys: " + (", ".join(f"`{k}`" for k in required) or "none"))
            if optional:
                body.append("Optional keys: " + ", ".join(f"`{k}`" for k in optional))
            return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, "\n\n".join(body[0:1] + body[2:])))
        return None

    def describe_reading(self, folder: Folder, index: Index, reading: Reading) -> str:
        node = reading.node
        kind = "optional" if node.optional else "required"
        head = f"**state key `{node.name}`**" + (f" (path `{node.key}`)" if node.key != node.name else "")
        body = [f"{head}: {kind}, {reading.dialect} syntax" + (f", in `{reading.label}`" if reading.label else "")]
        writes = index.writes_of(node.name)
        if writes:
            body.append("Written by:\n" + "\n".join(f"- {self.describe_write(folder, w)}" for w in writes))
        elif node.scope == "temp":
            body.append("A `temp:` key: set earlier in the same turn, if at all.")
        else:
            body.append("Nothing in the project's code writes it.")
        for where, field in index.field(node.key, reading.instruction):
            body.append(f"Declared in {where}: {describe_field(field)}")
        return "\n\n".join(body)

    def completion(self, uri: str, position: types.Position) -> types.CompletionList | None:
        found = self.where(uri, position)
        if found is None:
            return None
        folder, index, path, text, offset = found
        project = index.project
        line_start = text.rfind("\n", 0, offset) + 1
        m = _BEFORE_CURSOR.search(text, line_start, offset)
        if m is None:
            return None
        opener, partial = m.group(1), m.group(2)
        if path.endswith(".py"):
            item = index.instruction_at(path, offset)
            if item is None:
                return None
            dialect: str = item.dialect
        else:
            item, dialect = None, project.dialect
        if (opener == "<") != (dialect == "angle") or dialect == "jinja":
            return None
        closer = ">" if opener == "<" else "}"
        close = "" if text[offset : offset + 1] == closer else closer
        lines = Lines(text, self.encoding)
        out: list[types.CompletionItem] = []
        if "." in partial:
            head, _, _rest = partial.rpartition(".")
            start = m.start(2) + len(head) + 1
            names: set[str] = set()
            for _, field in index.field(head, item):
                names.update(field.fields or {})
            for name in sorted(names):
                out.append(self.item(name, name + close, lines, start, offset, types.CompletionItemKind.Field))
        else:
            start = m.start(2)
            for key in index.known_keys():
                writes = index.writes_of(key)
                detail = self.describe_write(folder, writes[0]).replace("`", "") if writes else "declared in a schema"
                out.append(self.item(key, key + close, lines, start, offset, types.CompletionItemKind.Variable, detail))
            for prefix in SCOPE_PREFIXES:
                out.append(self.item(prefix, prefix, lines, start, offset, types.CompletionItemKind.Module))
        return types.CompletionList(is_incomplete=False, items=out)

    def item(
        self,
        label: str,
        new: str,
        lines: Lines,
        start: int,
        end: int,
        kind: types.CompletionItemKind,
        detail: str | None = None,
    ) -> types.CompletionItem:
        return types.CompletionItem(
            label=label, kind=kind, detail=detail, text_edit=types.TextEdit(self.range_of(lines, start, end), new)
        )

    def definition(self, uri: str, position: types.Position) -> list[types.Location]:
        found = self.where(uri, position)
        if found is None:
            return []
        folder, index, path, _, offset = found
        reading = index.reading_at(path, offset)
        if reading is None:
            return []
        places = [self.location(folder, w.path, w.start, w.end) for w in index.writes_of(reading.node.name)]
        return [p for p in places if p is not None]

    def references(self, uri: str, position: types.Position, declaration: bool) -> list[types.Location]:
        found = self.where(uri, position)
        if found is None:
            return []
        folder, index, path, _, offset = found
        write = index.write_at(path, offset)
        reading = index.reading_at(path, offset)
        key = write.key if write is not None else reading.node.name if reading is not None else None
        if key is None:
            return []
        places = [self.location(folder, r.path, r.start, r.end) for r in index.readers_of(key)]
        if declaration:
            places += [self.location(folder, w.path, w.start, w.end) for w in index.writes_of(key)]
        return [p for p in places if p is not None]

    def code_actions(self, uri: str, wanted_range: types.Range) -> list[types.CodeAction]:
        found = self.place(uri)
        if found is None:
            return []
        folder, index, path = found
        project = index.project
        text = self.text_of(path, folder)
        if text is None:
            return []
        lines = Lines(text, self.encoding)
        start = lines.offset(wanted_range.start.line, wanted_range.start.character)
        end = lines.offset(wanted_range.end.line, wanted_range.end.character)
        fixes: list[tuple[Fix, Diagnostic | None]] = []
        config = project.config
        pyproject = os.path.realpath(config.path) if config.path else None
        pyproject_text = self.text_of(pyproject, folder) if pyproject else None
        for diag in self.findings.get(path, []):
            if diag.span is None or diag.span.end < start or diag.span.start > end:
                continue
            fixes += [(fix, diag) for fix in fixes_for(diag, text)]
            if pyproject and pyproject_text is not None and diag.code in _SUPPRESSIBLE:
                rel = os.path.relpath(path, config.root)
                flagged = text[diag.span.start : diag.span.end]
                fixes += [(fix, diag) for fix in suppress_fixes(diag, rel, flagged, pyproject_text, pyproject)]
        convert = self.convert_action(project, index, path, text, start)
        if convert is not None:
            fixes.append((convert, None))
        out = []
        for fix, about in fixes:
            target = fix.path or path
            target_text = text if target == path else (self.text_of(target, folder) or "")
            target_lines = lines if target == path else Lines(target_text, self.encoding)
            edits = [types.TextEdit(self.range_of(target_lines, a, b), new) for a, b, new in fix.edits]
            kind = types.CodeActionKind.QuickFix if about is not None else types.CodeActionKind.RefactorRewrite
            out.append(
                types.CodeAction(
                    title=fix.title,
                    kind=kind,
                    diagnostics=[self.to_lsp(about, lines, folder)] if about is not None else None,
                    is_preferred=fix.preferred or None,
                    edit=types.WorkspaceEdit(changes={from_fs_path(target) or target: edits}),
                )
            )
        return out

    def convert_action(self, project: Project, index: Index, path: str, text: str, offset: int) -> Fix | None:
        if not path.endswith(".py"):
            return convert_fix(text, 0, len(text)) if project.dialect == "adk" else None
        item = index.instruction_at(path, offset)
        if item is None or item.dialect != "adk":
            return None
        if text[item.span.start : item.span.end] != item.text:  # written with escapes or in pieces
            return None
        return convert_fix(text, item.span.start, item.span.end)

    # -- documents

    def opened(self, uri: str) -> None:
        path = _path_of(uri)
        if path is None:
            return
        self.open[path] = uri
        self.lint_now(path)

    def changed(self, uri: str) -> None:
        path = _path_of(uri)
        if path is not None and path in self.open:
            self.schedule(path)

    def closed(self, uri: str) -> None:
        path = _path_of(uri)
        if path is None:
            return
        self.open.pop(path, None)
        handle = self.pending.pop(path, None)
        if handle is not None:
            handle.cancel()
        self.findings.pop(path, None)
        self.ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))
        folder = self.owner(path)
        if folder is None or not folder.ready:
            if self._loose is not None:
                self._loose.overrides.pop(shown(Path(path)), None)
            return
        self.reread(folder, path)  # back to the text on disk

    def reread(self, folder: Folder, path: str) -> None:
        """Read a file of a ready folder from the disk again (inside the folder, within the limit)."""
        project, index = folder.project, folder.index
        assert project is not None
        assert index is not None
        try:
            disk = python_text(read_bytes(path, limit=project.config.max_file_size, root=folder.root))
        except (OSError, FileSkipped, UnicodeDecodeError):
            project.overrides.pop(shown(Path(path)), None)
            index.update(path)  # now unreadable: out of the index, and reported
            self.publish_unreadable(folder)
            return
        try:
            project.update(path, disk)
            index.update(path)
        except TemplatingError as exc:
            log.warning("reading %s again failed: %s", path, exc)
        self.publish_unreadable(folder)

    def files_changed(self, uris: Sequence[str]) -> None:
        paths = [p for uri in uris if (p := _path_of(uri)) is not None]
        touched: set[Folder] = set()
        for path in paths:
            folder = self.owner(path)
            if folder is None:
                continue
            if Path(path).name == "pyproject.toml":
                self.load(folder)
            elif folder.ready and path not in self.open:  # changed on disk (a checkout, another tool)
                self.reread(folder, path)
                touched.add(folder)
        for path in list(self.open):
            if self.owner(path) in touched:
                self.lint_now(path, others=False)

    def folders_changed(self, added: Sequence[str], removed: Sequence[str]) -> None:
        for uri in removed:
            self.remove_folder(uri)
        for uri in added:
            self.add_folder(uri)
        for folder in self.folders.values():
            if folder.state == LOADING and folder.generation == 0:
                self.load(folder)


def _path_of(uri: str) -> str | None:
    """The resolved path of a `file:` URI (a link is followed: the file has one name)."""
    raw = to_fs_path(uri)
    return os.path.realpath(raw) if raw else None


def _too_large(text: str, limit: int) -> bool:
    if len(text) > limit:
        return True
    if len(text) * 4 <= limit:
        return False
    return len(text.encode("utf-8", errors="surrogatepass")) > limit


# Rules a user may turn off (the syntax checks E001-E003 are no rules: a file that cannot be read stays reported).
_SUPPRESSIBLE = frozenset(code for code in (f"T{n:03d}" for n in range(1, 100)) if described(code))


def build() -> LanguageServer:
    """The pygls server with every feature registered."""
    ls = LanguageServer("templating", __version__, protocol_cls=Protocol)
    state = TemplatingServer(ls)

    @ls.feature(types.INITIALIZE)
    def initialize(ls: LanguageServer, params: types.InitializeParams) -> None:
        # every workspace folder; without any, the root (a client of LSP before 3.6); else none
        uris = [folder.uri for folder in params.workspace_folders or []]
        if not uris and params.root_uri:
            uris = [params.root_uri]
        elif not uris and params.root_path:
            uris = [from_fs_path(params.root_path) or params.root_path]
        for uri in uris:
            state.add_folder(uri)

    @ls.feature(types.INITIALIZED)
    async def initialized(ls: LanguageServer, params: types.InitializedParams) -> None:
        for folder in list(state.folders.values()):
            if folder.state == LOADING:
                state.load(folder)
        dynamic = ls.client_capabilities.workspace
        watch = dynamic.did_change_watched_files if dynamic else None
        if watch is not None and watch.dynamic_registration:
            watchers = [types.FileSystemWatcher(glob_pattern=g) for g in ("**/pyproject.toml", "**/*.py")]
            await ls.client_register_capability_async(
                types.RegistrationParams(
                    [
                        types.Registration(
                            "templating-watch",
                            types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            types.DidChangeWatchedFilesRegistrationOptions(watchers),
                        )
                    ]
                )
            )

    @ls.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        state.opened(params.text_document.uri)

    @ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: LanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        state.changed(params.text_document.uri)

    @ls.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: LanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        if params.text_document.uri.endswith("pyproject.toml"):
            state.files_changed([params.text_document.uri])

    @ls.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def folders_changed(ls: LanguageServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        event = params.event
        state.folders_changed([f.uri for f in event.added or []], [f.uri for f in event.removed or []])

    @ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: LanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        state.closed(params.text_document.uri)

    @ls.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: LanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
        state.files_changed([change.uri for change in params.changes])

    @ls.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: LanguageServer, params: types.HoverParams) -> types.Hover | None:
        return state.hover(params.text_document.uri, params.position)

    @ls.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=["<", "{", ".", ":"]))
    def completion(ls: LanguageServer, params: types.CompletionParams) -> types.CompletionList | None:
        return state.completion(params.text_document.uri, params.position)

    @ls.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: LanguageServer, params: types.DefinitionParams) -> list[types.Location]:
        return state.definition(params.text_document.uri, params.position)

    @ls.feature(types.TEXT_DOCUMENT_REFERENCES)
    def references(ls: LanguageServer, params: types.ReferenceParams) -> list[types.Location]:
        return state.references(params.text_document.uri, params.position, params.context.include_declaration)

    @ls.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorRewrite]
        ),
    )
    def code_action(ls: LanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return state.code_actions(params.text_document.uri, params.range)

    ls.templating = state  # type: ignore[attr-defined]
    return ls


def serve() -> int:
    """Run the server over stdin and stdout until the client exits; the exit code."""
    logging.basicConfig(level=logging.WARNING, format="templating lsp: %(levelname)s: %(message)s")
    ls = build()
    assert isinstance(ls.protocol, Protocol)
    return run_stdio(ls.protocol, sys.stdin.buffer, sys.stdout.buffer)
