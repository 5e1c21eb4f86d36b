"""The language server's state: the workspace folders (each a project and its index, see `folders`),
the open documents, their findings and pending lints.

Each open document's text is the engine's override for its file; an edit is linted again after a
short pause (edits typed during the pause are linted once) by one incremental `Project.update`,
whose result also gives the findings of the other open documents the edit reaches (published when
they changed); nothing else is linted again, and the index takes the engine's scan. A change of a
folder's `pyproject.toml` reads that folder again. The requests about a document (hover,
completion...) are answered by `answers`."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from ..agent_model import AgentModel
from ..errors import TemplatingError
from ..inputs import DEFAULT_MAX_FILE_SIZE
from ..linter.discovery import DEFAULT_INCLUDE
from ..linter.engine import LintResult, Project
from ..linter.project import FileSkipped, read_bytes, wanted
from ..linter.registry import PYTHON_SYNTAX, SKIPPED_FILE, Diagnostic, described, rule_url
from ..linter.util import shown
from ..pysource import Scan, python_text
from .folders import FAILED, LOADING, READY, REFUSED, Folder, contains, refused_because
from .model import Index
from .positions import Lines

__all__ = ["TemplatingServer"]

log = logging.getLogger(__name__)

_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}


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
        self.pending: dict[str, asyncio.Handle] = {}  # the edited documents waiting for their lint
        self.open: dict[str, str] = {}  # path -> uri
        self.outside_told: set[str] = set()
        self._loose: Project | None = None
        self._loose_root: tempfile.TemporaryDirectory[str] | None = None
        self._adk_settled = False
        self.watching = False  # whether the client watches the files on disk for the server (`watch_files`)

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
            project.keep_file_answers = self.watching
            folder.state, folder.project, folder.index = READY, project, index
            self.settle()
            still_open = {shown(Path(path)) for path in self.open}
            for name in [name for name in project.overrides if name not in still_open]:
                self.reread(folder, os.path.abspath(name))  # closed while the folder was read: back to the disk
        self.findings = {p: f for p, f in self.findings.items() if self.owner(p) is not folder}
        for path in list(self.open):
            if self.owner(path) is folder:
                self.lint_now(path, others=False)
        self.publish_unreadable(folder)

    def watch_files(self) -> None:
        """The client now tells the server of Python files created, changed or deleted on disk (a watcher it
        registered): the folders' projects may keep what their scans found on disk between edits. Until then (a
        client that cannot watch), each edit's scan looks at the disk again, so a module made by another tool is
        found at the next edit."""
        self.watching = True
        for folder in self.folders.values():
            if folder.project is not None:
                folder.project.keep_file_answers = True

    def settle(self) -> None:
        """Set the heap apart from the full collection each edit makes (see `_settle`), the ready folders' scans
        considered."""
        _settle(*(folder.project.scan for folder in self.folders.values() if folder.project is not None))

    @property
    def adk_settled(self) -> bool:
        return self._adk_settled

    def adk_imported(self) -> None:
        """Settle the heap once google-adk is imported (the preview's warm-up, or a first preview, tells it once
        the import is done): its hundreds of thousands of objects live as long as the server, and each full
        collection walked them all again (about 140 ms on travel-concierge). Once only."""
        if self._adk_settled:
            return
        self._adk_settled = True
        self.settle()

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

    def agent_model(self, folder: Folder) -> AgentModel | None:
        """The agent model of `folder`'s project with the editor's text: the engine's, built at most once per
        edit, when first asked for (None: it cannot be built, its `initial-state` setting is wrong)."""
        if folder.project is None:
            return None
        try:
            return folder.project.agent_model
        except TemplatingError as exc:
            log.warning("the agent model of %s could not be built: %s", folder.root, exc)
            return None

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
        """Lint `path` once the messages already received are handled, with no pause: a lone keystroke is linted
        at once, and the edits that arrived while a lint ran (a burst of typing) are linted once, at their last
        version. (A pause waiting for the next keystroke would add itself to every edit's latency, and a lint
        takes longer than the time between two keystrokes anyway.)"""
        handle = self.pending.pop(path, None)
        if handle is not None:
            handle.cancel()
        self.pending[path] = asyncio.get_running_loop().call_soon(self.lint_now, path)

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
        found: dict[str, list[Diagnostic]] = {path: []}
        try:
            if self.lintable(path, project, alone=alone):
                # One incremental re-lint: the findings of the open documents only (the server shows no other
                # file's), each as a fresh run gives them.
                result = project.update(path, text, wanted=None if folder is None or alone else self._open_in(folder))
                _by_path(result, found)
                if index is not None and path.endswith(".py") and project.scan is not None:
                    # the engine's scan, not a second one: each file it scanned again (and the open documents)
                    index.absorb(project.scan, {*result.files, *project.scanned_again})
                    index = None
            if index is not None:
                index.update(path)
        except TemplatingError as exc:
            log.warning("linting %s failed: %s", path, exc)
        # A scan that keeps its modules' syntax trees (an agent's state_schema= model reads from them) leaves them
        # in reference cycles, out of the young generations by then: collected now, or the process grew by
        # megabytes an edit until the next full collection. Any other scan leaves no cycle: reference counting
        # frees what the edit replaced, and a full collection (tens of ms on a large workspace) is not made.
        if _keeps_trees(project.scan):
            gc.collect()
        self.publish(path, found[path], force=others, folder=folder)
        if others:  # the other open documents the edit reaches, if their findings changed
            self._publish_others(path, found, folder)

    def _open_in(self, folder: Folder) -> list[str]:
        """The open documents of `folder` it lints (a buffer over max-file-size keeps its note instead)."""
        project = folder.project
        limit = project.config.max_file_size if project is not None else DEFAULT_MAX_FILE_SIZE
        return [
            path
            for path, uri in self.open.items()
            if self.owner(path) is folder and not _too_large(self.ls.workspace.get_text_document(uri).source, limit)
        ]

    def _publish_others(self, path: str, found: dict[str, list[Diagnostic]], folder: Folder | None) -> None:
        """Publish the findings `found` of the open documents of `folder` other than `path` (none waiting for
        an edit of their own to be linted) whose findings changed."""
        for other, theirs in found.items():
            if other != path and other in self.open and other not in self.pending and self.owner(other) is folder:
                self.publish(other, theirs, force=False, folder=folder)

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
            found: dict[str, list[Diagnostic]] = {}
            try:  # deleted, say: linted again as a fresh run finds the project (its walk, its scans' answers)
                _by_path(project.update(path, None, wanted=self._open_in(folder)), found)
            except TemplatingError as exc:
                log.warning("reading %s again failed: %s", path, exc)
            index.update(path)  # now unreadable: out of the index, and reported
            self._publish_others(path, found, folder)
            self.publish_unreadable(folder)
            return
        found = {}
        try:
            result = project.update(path, disk, wanted=self._open_in(folder))
            index.update(path)
        except TemplatingError as exc:
            log.warning("reading %s again failed: %s", path, exc)
        else:
            _by_path(result, found)
            self._publish_others(path, found, folder)  # the open documents reading it (a buffer closed unsaved)
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


def _settle(*scans: Scan | None) -> None:
    """Set the heap of a folder just read (or of a large import) apart from the garbage collector's full collections.

    A project's scan holds large containers (each instruction keeps the place of every character) that
    live as long as the folder; each full collection walked them all again, about 150 ms on a 5,000-file
    workspace, every few edits. Collected once now and frozen, they are skipped (refcounting still frees
    what an edit replaces); what is made later is collected as usual. Unfrozen first: what a folder read
    again leaves behind is collected.

    Not frozen when the scan kept its modules' syntax trees (an agent's `state_schema=` model reads its
    nested models from them): those sit in reference cycles, and once an edit replaces them a frozen copy
    would never be collected (tens of MiB on a large project)."""
    gc.unfreeze()
    gc.collect()
    if not any(_keeps_trees(scan) for scan in scans):
        gc.freeze()


def _keeps_trees(scan: Scan | None) -> bool:
    """Whether `scan` kept its modules' syntax trees (a state_schema= model's nested models are read from them)."""
    return scan is not None and any(state.schema is not None for state in scan.state_schemas)


def _by_path(result: LintResult, found: dict[str, list[Diagnostic]]) -> None:
    """Add to `found` the findings of each file `result` lists, by absolute path (none: cleared)."""
    for name in result.files:
        found.setdefault(os.path.abspath(name), [])
    for diag in result.diagnostics:
        if diag.path:
            found.setdefault(os.path.abspath(diag.path), []).append(diag)


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
