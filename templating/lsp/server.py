"""The language server: pygls over stdio, the lint engine underneath.

Each open document's text is the engine's override for its file; an edit is linted again after a
short pause (edits typed during the pause are linted once), with the findings of the other open
documents that depend on it. A change of `pyproject.toml` reloads the configuration."""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from .. import __version__
from ..errors import TemplatingError
from ..lint.discovery import DEFAULT_INCLUDE
from ..lint.engine import Project
from ..lint.project import FileSkipped, read_bytes, wanted
from ..lint.registry import SKIPPED_FILE, Diagnostic, described, rule_url
from ..nodes import SCOPE_PREFIXES
from ..pysource import python_text
from .fixes import Fix, convert_fix, fixes_for, suppress_fixes
from .model import Index, Reading, Written, describe_field
from .positions import Lines

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
    """The server's state: the project, its index, the open documents' findings and pending lints."""

    def __init__(self, ls: LanguageServer) -> None:
        self.ls = ls
        self.root = Path.cwd()
        self.project: Project | None = None
        self.index: Index | None = None
        self.findings: dict[str, list[Diagnostic]] = {}  # by absolute path, as last published
        self.pending: dict[str, asyncio.TimerHandle] = {}
        self.open: dict[str, str] = {}  # absolute path -> uri

    # -- the project

    @property
    def encoding(self) -> str:
        try:
            chosen = self.ls.workspace.position_encoding or "utf-16"
        except RuntimeError:
            return "utf-16"
        return chosen.value if isinstance(chosen, types.PositionEncodingKind) else str(chosen)

    def texts(self) -> dict[str, str]:
        out = {}
        for path, uri in self.open.items():
            out[path] = self.ls.workspace.get_text_document(uri).source
        return out

    def load(self) -> None:
        """Read the configuration and the project again (at start, and when pyproject.toml changes)."""
        os.chdir(self.root)
        self.project = None
        self.index = None
        try:
            project = Project(self.root)
            for path, text in self.texts().items():
                project.overrides[os.path.relpath(path, self.root) if _under(path, self.root) else path] = text
            self.project = project
            self.index = Index(project, self.texts)
        except TemplatingError as exc:
            self.ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"templating: {exc}"))
        except Exception as exc:
            log.exception("loading the project failed")
            self.ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"templating: {exc}"))

    def lintable(self, path: str) -> bool:
        if self.project is None:
            return False
        if path.endswith(".py"):
            return True
        rel = os.path.relpath(path, self.project.config.root)
        return wanted(rel, (*self.project.config.include, *DEFAULT_INCLUDE))

    def text_of(self, path: str) -> str | None:
        uri = self.open.get(path)
        if uri is not None:
            return self.ls.workspace.get_text_document(uri).source
        if self.index is not None and path in self.index.sources:
            return self.index.sources[path]
        try:
            return python_text(read_bytes(path, limit=10_000_000, root=None))
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
        if uri is None or self.project is None:
            return
        text = self.ls.workspace.get_text_document(uri).source
        try:
            if self.lintable(path):
                result = self.project.update(path, text)
                found = [d for d in result.diagnostics if d.path and os.path.abspath(d.path) == path]
            else:
                found = []
            if self.index is not None:
                self.index.update(path)
        except TemplatingError as exc:
            log.warning("linting %s failed: %s", path, exc)
            found = []
        self.publish(path, found, force=others)
        if others and path.endswith(".py"):
            for other in list(self.open):
                if other != path and other.endswith(".py") and other not in self.pending:
                    self.lint_now(other, others=False)

    def publish(self, path: str, found: list[Diagnostic], *, force: bool = True) -> None:
        uri = self.open.get(path) or from_fs_path(path) or path
        if not force and path in self.findings and self.findings[path] == found:
            return  # another document's findings, unchanged by this edit
        self.findings[path] = found
        text = self.text_of(path) or ""
        lines = Lines(text, self.encoding)
        version = None
        if path in self.open:
            version = self.ls.workspace.get_text_document(uri).version
        self.ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri, [self.to_lsp(d, lines) for d in found], version)
        )

    def range_of(self, lines: Lines, start: int, end: int) -> types.Range:
        a, b = lines.position(start), lines.position(end)
        return types.Range(types.Position(*a), types.Position(*b))

    def location(self, path: str, start: int, end: int) -> types.Location | None:
        text = self.text_of(path)
        if text is None:
            return None
        return types.Location(from_fs_path(path) or path, self.range_of(Lines(text, self.encoding), start, end))

    def to_lsp(self, diag: Diagnostic, lines: Lines) -> types.Diagnostic:
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
            related_information=self.related(diag) or None,
        )

    def related(self, diag: Diagnostic) -> list[types.DiagnosticRelatedInformation]:
        if self.index is None or diag.span is None or not diag.path:
            return []
        path = os.path.abspath(diag.path)
        out = []
        if diag.code == "T014":
            reading = self.index.reading_at(path, diag.span.start)
            if reading is not None:
                for other in self.index.readers_of(reading.node.name):
                    if (other.path, other.start) != (path, reading.start):
                        place = self.location(other.path, other.start, other.end)
                        if place is not None:
                            what = f"instruction {other.label}" if other.label else "this template"
                            out.append(types.DiagnosticRelatedInformation(place, f"{what} also reads it"))
        elif diag.code != SKIPPED_FILE:
            write = self.index.write_at(path, diag.span.start)
            if write is not None and write.key is not None:
                for elsewhere in self.index.writes_of(write.key):
                    if (elsewhere.path, elsewhere.start) != (path, write.start):
                        place = self.location(elsewhere.path, elsewhere.start, elsewhere.end)
                        if place is not None:
                            out.append(
                                types.DiagnosticRelatedInformation(place, f"also written here ({elsewhere.how})")
                            )
        return out

    # -- asking

    def where(self, uri: str, position: types.Position) -> tuple[str, str, int] | None:
        path = to_fs_path(uri)
        if path is None:
            return None
        path = os.path.abspath(path)
        self.flush(path)
        text = self.text_of(path)
        if text is None:
            return None
        return path, text, Lines(text, self.encoding).offset(position.line, position.character)

    def shown(self, path: str) -> str:
        return os.path.relpath(path, self.root) if _under(path, self.root) else path

    def describe_write(self, write: Written) -> str:
        place = f"`{self.shown(write.path)}:{write.line}`"
        if write.how == "output_key":
            who = f" of agent `{write.agent}`" if write.agent else ""
            return f"`output_key={write.key!r}`{who} at {place}"
        return f"`{write.how}` at {place}"

    def hover(self, uri: str, position: types.Position) -> types.Hover | None:
        found = self.where(uri, position)
        if found is None or self.index is None:
            return None
        path, text, offset = found
        lines = Lines(text, self.encoding)
        reading = self.index.reading_at(path, offset)
        if reading is not None:
            return types.Hover(
                types.MarkupContent(types.MarkupKind.Markdown, self.describe_reading(reading)),
                self.range_of(lines, reading.start, reading.end),
            )
        write = self.index.write_at(path, offset)
        if write is not None and write.key is not None:
            readers = self.index.readers_of(write.key)
            body = [f"**state key `{write.key}`**, written by {self.describe_write(write)}", ""]
            body.append(f"Read by {len(readers)} placeholder(s):" if readers else "No instruction reads it.")
            body += [f"- {r.label or 'template'} at `{self.shown(r.path)}`" for r in readers]
            return types.Hover(
                types.MarkupContent(types.MarkupKind.Markdown, "\n".join(body)),
                self.range_of(lines, write.start, write.end),
            )
        item = self.index.instruction_at(path, offset)
        if item is not None:
            keys = [r for rs in self.index.readings.values() for r in rs if r.instruction is item]
            required = list(dict.fromkeys(r.node.key for r in keys if not r.node.optional))
            optional = list(dict.fromkeys(r.node.key for r in keys if r.node.optional))
            body = [f"**instruction `{item.label}`** ({item.dialect} syntax)", ""]
            body.append("Keys: " + (", ".join(f"`{k}`" for k in required) or "none"))
            if optional:
                body.append("Optional keys: " + ", ".join(f"`{k}`" for k in optional))
            return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, "\n\n".join(body[0:1] + body[2:])))
        return None

    def describe_reading(self, reading: Reading) -> str:
        node = reading.node
        index = self.index
        assert index is not None
        kind = "optional" if node.optional else "required"
        head = f"**state key `{node.name}`**" + (f" (path `{node.key}`)" if node.key != node.name else "")
        body = [f"{head}: {kind}, {reading.dialect} syntax" + (f", in `{reading.label}`" if reading.label else "")]
        writes = index.writes_of(node.name)
        if writes:
            body.append("Written by:\n" + "\n".join(f"- {self.describe_write(w)}" for w in writes))
        elif node.scope == "temp":
            body.append("A `temp:` key: set earlier in the same turn, if at all.")
        else:
            body.append("Nothing in the project's code writes it.")
        for where, field in index.field(node.key, reading.instruction):
            body.append(f"Declared in {where}: {describe_field(field)}")
        return "\n\n".join(body)

    def completion(self, uri: str, position: types.Position) -> types.CompletionList | None:
        found = self.where(uri, position)
        if found is None or self.index is None or self.project is None:
            return None
        path, text, offset = found
        line_start = text.rfind("\n", 0, offset) + 1
        m = _BEFORE_CURSOR.search(text, line_start, offset)
        if m is None:
            return None
        opener, partial = m.group(1), m.group(2)
        if path.endswith(".py"):
            item = self.index.instruction_at(path, offset)
            if item is None:
                return None
            dialect: str = item.dialect
        else:
            item, dialect = None, self.project.dialect
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
            for _, field in self.index.field(head, item):
                names.update(field.fields or {})
            for name in sorted(names):
                out.append(self.item(name, name + close, lines, start, offset, types.CompletionItemKind.Field))
        else:
            start = m.start(2)
            for key in self.index.known_keys():
                writes = self.index.writes_of(key)
                detail = self.describe_write(writes[0]).replace("`", "") if writes else "declared in a schema"
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
        if found is None or self.index is None:
            return []
        path, _, offset = found
        reading = self.index.reading_at(path, offset)
        if reading is None:
            return []
        places = [self.location(w.path, w.start, w.end) for w in self.index.writes_of(reading.node.name)]
        return [p for p in places if p is not None]

    def references(self, uri: str, position: types.Position, declaration: bool) -> list[types.Location]:
        found = self.where(uri, position)
        if found is None or self.index is None:
            return []
        path, _, offset = found
        write = self.index.write_at(path, offset)
        reading = self.index.reading_at(path, offset)
        key = write.key if write is not None else reading.node.name if reading is not None else None
        if key is None:
            return []
        places = [self.location(r.path, r.start, r.end) for r in self.index.readers_of(key)]
        if declaration:
            places += [self.location(w.path, w.start, w.end) for w in self.index.writes_of(key)]
        return [p for p in places if p is not None]

    def code_actions(self, uri: str, wanted_range: types.Range) -> list[types.CodeAction]:
        path = to_fs_path(uri)
        if path is None or self.project is None:
            return []
        path = os.path.abspath(path)
        self.flush(path)
        text = self.text_of(path)
        if text is None:
            return []
        lines = Lines(text, self.encoding)
        start = lines.offset(wanted_range.start.line, wanted_range.start.character)
        end = lines.offset(wanted_range.end.line, wanted_range.end.character)
        fixes: list[tuple[Fix, Diagnostic | None]] = []
        config = self.project.config
        pyproject = str(config.path) if config.path else None
        pyproject_text = self.text_of(pyproject) if pyproject else None
        for diag in self.findings.get(path, []):
            if diag.span is None or diag.span.end < start or diag.span.start > end:
                continue
            fixes += [(fix, diag) for fix in fixes_for(diag, text)]
            if pyproject and pyproject_text is not None and diag.code in _SUPPRESSIBLE:
                rel = os.path.relpath(path, config.root)
                flagged = text[diag.span.start : diag.span.end]
                fixes += [(fix, diag) for fix in suppress_fixes(diag, rel, flagged, pyproject_text, pyproject)]
        convert = self.convert_action(path, text, start)
        if convert is not None:
            fixes.append((convert, None))
        out = []
        for fix, about in fixes:
            target = fix.path or path
            target_text = text if target == path else (self.text_of(target) or "")
            target_lines = lines if target == path else Lines(target_text, self.encoding)
            edits = [types.TextEdit(self.range_of(target_lines, a, b), new) for a, b, new in fix.edits]
            kind = types.CodeActionKind.QuickFix if about is not None else types.CodeActionKind.RefactorRewrite
            out.append(
                types.CodeAction(
                    title=fix.title,
                    kind=kind,
                    diagnostics=[self.to_lsp(about, lines)] if about is not None else None,
                    is_preferred=fix.preferred or None,
                    edit=types.WorkspaceEdit(changes={from_fs_path(target) or target: edits}),
                )
            )
        return out

    def convert_action(self, path: str, text: str, offset: int) -> Fix | None:
        if self.index is None or self.project is None:
            return None
        if not path.endswith(".py"):
            return convert_fix(text, 0, len(text)) if self.project.dialect == "adk" else None
        item = self.index.instruction_at(path, offset)
        if item is None or item.dialect != "adk":
            return None
        if text[item.span.start : item.span.end] != item.text:  # written with escapes or in pieces
            return None
        return convert_fix(text, item.span.start, item.span.end)

    # -- documents

    def opened(self, uri: str) -> None:
        path = to_fs_path(uri)
        if path is None:
            return
        path = os.path.abspath(path)
        self.open[path] = uri
        self.lint_now(path)

    def changed(self, uri: str) -> None:
        path = to_fs_path(uri)
        if path is not None:
            self.schedule(os.path.abspath(path))

    def closed(self, uri: str) -> None:
        path = to_fs_path(uri)
        if path is None:
            return
        path = os.path.abspath(path)
        self.open.pop(path, None)
        handle = self.pending.pop(path, None)
        if handle is not None:
            handle.cancel()
        self.findings.pop(path, None)
        self.ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))
        if self.project is not None:  # back to the text on disk
            try:
                disk = python_text(read_bytes(path, limit=self.project.config.max_file_size, root=None))
            except (OSError, FileSkipped, UnicodeDecodeError):
                return
            try:
                self.project.update(path, disk)
                if self.index is not None:
                    self.index.update(path)
            except TemplatingError:
                pass

    def files_changed(self, uris: Sequence[str]) -> None:
        paths = [os.path.abspath(p) for uri in uris if (p := to_fs_path(uri))]
        if any(Path(p).name == "pyproject.toml" for p in paths):
            self.reload()
            return
        for path in paths:
            if path in self.open or self.project is None:
                continue
            try:  # a file changed on disk (a git checkout, another tool): read it again
                disk = python_text(read_bytes(path, limit=self.project.config.max_file_size, root=None))
                self.project.update(path, disk)
                if self.index is not None:
                    self.index.update(path)
            except (OSError, FileSkipped, UnicodeDecodeError, TemplatingError):
                continue
        for path in list(self.open):
            self.lint_now(path, others=False)

    def reload(self) -> None:
        self.load()
        self.findings.clear()
        for path in list(self.open):
            self.lint_now(path, others=False)
        if self.project is None:
            for path, uri in self.open.items():
                self.ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))
                del path


# Rules a user may turn off (the syntax checks E001-E003 are no rules: a file that cannot be read stays reported).
_SUPPRESSIBLE = frozenset(code for code in (f"T{n:03d}" for n in range(1, 100)) if described(code))


def _under(path: str, root: Path) -> bool:
    try:
        return Path(path).resolve().is_relative_to(root.resolve())
    except OSError:
        return False


def build() -> LanguageServer:
    """The pygls server with every feature registered."""
    ls = LanguageServer("templating", __version__)
    state = TemplatingServer(ls)

    @ls.feature(types.INITIALIZE)
    def initialize(ls: LanguageServer, params: types.InitializeParams) -> None:
        folders = params.workspace_folders or []
        uri = folders[0].uri if folders else params.root_uri
        root = to_fs_path(uri) if uri else params.root_path
        state.root = Path(root).resolve() if root else Path.cwd()

    @ls.feature(types.INITIALIZED)
    async def initialized(ls: LanguageServer, params: types.InitializedParams) -> None:
        state.load()
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
            state.reload()

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
    logging.basicConfig(level=logging.WARNING)
    try:
        build().start_io()
    except SystemExit as exc:  # pygls ends with sys.exit: 0 after a shutdown request, else 1
        return exc.code if isinstance(exc.code, int) else 1
    return 0
