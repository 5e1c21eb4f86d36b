"""The requests about a document: hover, completion, definition, references and code actions,
answered from the index of the workspace folder holding it; nothing outside the folders is read."""

from __future__ import annotations

import os
import re

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from ..linter.engine import Project
from ..linter.fix_regions import applied_fix, regions_of
from ..linter.fixes import Fix, fixes_for, suppress_fixes
from ..linter.registry import Diagnostic, described
from ..nodes import SCOPE_PREFIXES
from ..pysource import Instruction
from .agents import agent_at, app_keys, describe_agent, describe_key, describe_readers, describe_write, key_writers
from .folders import Folder, contains
from .model import Index, Reading, Written, describe_field
from .positions import Lines
from .state import TemplatingServer

__all__ = ["Answers"]

_BEFORE_CURSOR = re.compile(r"(<|\{)((?:[^\W\d]\w*:)?[\w.]*)$")


class Answers(TemplatingServer):
    """The server's state with the answers to the requests about documents."""

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
            agent = folder.index.agent_of(write) if folder.index is not None else None
            who = f" of agent `{agent}`" if agent else ""
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
        model = self.agent_model(folder) if path.endswith(".py") else None
        if write is not None and write.key is not None:
            body = [f"**state key `{write.key}`**, written by {self.describe_write(folder, write)}", ""]
            in_apps = describe_readers(model, path, write.start, write.key) if model is not None else None
            if in_apps is not None:  # written by agents of apps: the readers in those apps, in run order
                body.append(in_apps)
            else:
                readers = index.readers_of(write.key)
                body.append(f"Read by {len(readers)} placeholder(s):" if readers else "No instruction reads it.")
                body += [f"- {r.label or 'template'} at `{os.path.relpath(r.path, folder.root)}`" for r in readers]
            return types.Hover(
                types.MarkupContent(types.MarkupKind.Markdown, "\n".join(body)),
                self.range_of(lines, write.start, write.end),
            )
        if path.endswith(".py"):
            named = agent_at(model, path, text, offset) if model is not None else None
            if model is not None and named is not None:
                about = "\n\n---\n\n".join(describe_agent(model, agent, folder.root) for agent in named.agents[:2])
                return types.Hover(
                    types.MarkupContent(types.MarkupKind.Markdown, about),
                    self.range_of(lines, named.start, named.end),
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
        model = self.agent_model(folder)
        instruction = reading.instruction.key if reading.instruction is not None else None
        in_apps = describe_key(model, node.name, instruction, folder.root) if model is not None else None
        writes = index.writes_of(node.name)
        if in_apps is not None:  # read by agents of apps: their run order, their app's writers only
            body.append(in_apps)
        elif writes:
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
            for key, detail in self.keys_for(folder, index, item):
                out.append(self.item(key, key + close, lines, start, offset, types.CompletionItemKind.Variable, detail))
            for prefix in SCOPE_PREFIXES:
                out.append(self.item(prefix, prefix, lines, start, offset, types.CompletionItemKind.Module))
        return types.CompletionList(is_incomplete=False, items=out)

    def keys_for(self, folder: Folder, index: Index, item: Instruction | None) -> list[tuple[str, str]]:
        """The keys to offer in `item` (None: a template file), each with where it comes from: those of the apps
        whose agents read it (written by their agents, given by their declared initial state, declared by its
        schemas); for an instruction of no app, every key the project writes or declares."""
        model = self.agent_model(folder) if item is not None else None
        in_apps = app_keys(model, item.key) if model is not None and item is not None else None
        if model is None or in_apps is None:
            out = []
            for key in index.known_keys():
                writes = index.writes_of(key)
                detail = self.describe_write(folder, writes[0]).replace("`", "") if writes else "declared in a schema"
                out.append((key, detail))
            return out
        found = {}
        for key, write in in_apps.items():
            found[key] = describe_write(model, write, folder.root) if write is not None else "in the initial state"
        for _, schema in index.schemas(item):
            for key in schema.fields:
                found.setdefault(key, "declared in a schema")
        return [(key, found[key].replace("`", "")) for key in sorted(found)]

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
        model = self.agent_model(folder)
        instruction = reading.instruction.key if reading.instruction is not None else None
        writers = key_writers(model, reading.node.name, instruction) if model is not None else None
        if writers is not None:  # read by agents of apps: their apps' writers, in run order
            places = [
                self.location(folder, os.path.abspath(w.path), w.span.start, w.span.end)
                for w in writers
                if w.span is not None
            ]
        else:
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
        fixes: list[tuple[Fix, Diagnostic]] = []
        config = project.config
        # The project's pyproject.toml, or the one a suppression creates at the folder's root (only for
        # a client that can create files in a workspace edit).
        pyproject = os.path.realpath(config.path) if config.path else os.path.join(config.root, "pyproject.toml")
        exists = config.path is not None or os.path.lexists(pyproject)
        pyproject_text = self.text_of(pyproject, folder) if exists else None
        can_suppress = pyproject_text is not None if exists else self.can_create_files()
        # preferred: the fix `templating lint --fix` applies (safe), so an editor's "fix all" does what it does
        regions = regions_of(path, text, index.instructions.get(path, []), dialect=project.dialect)
        preferred: set[int] = set()
        for diag in self.findings.get(path, []):
            if diag.span is None or diag.span.end < start or diag.span.start > end:
                continue
            own = fixes_for(diag, text, dialect=self.dialect_at(project, index, path, diag))
            safe = applied_fix(diag, own, text, regions, path=path)
            preferred |= {id(safe)} if safe is not None else set()
            fixes += [(fix, diag) for fix in own]
            if can_suppress and diag.code in _SUPPRESSIBLE:
                rel = os.path.relpath(path, config.root).replace(os.sep, "/")
                flagged = text[diag.span.start : diag.span.end]
                fixes += [(fix, diag) for fix in suppress_fixes(diag, rel, flagged, pyproject_text, pyproject)]
        out = []
        for fix, about in fixes:
            target = fix.path or path
            target_text = text if target == path else (self.text_of(target, folder) or "")
            target_lines = lines if target == path else Lines(target_text, self.encoding)
            edits = [types.TextEdit(self.range_of(target_lines, a, b), new) for a, b, new in fix.edits]
            uri_of = from_fs_path(target) or target
            if target == pyproject and not exists:
                edit = types.WorkspaceEdit(
                    document_changes=[
                        types.CreateFile(
                            uri=uri_of, options=types.CreateFileOptions(overwrite=False, ignore_if_exists=True)
                        ),
                        types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(uri_of, None), edits),
                    ]
                )
            else:
                edit = types.WorkspaceEdit(changes={uri_of: edits})
            out.append(
                types.CodeAction(
                    title=fix.title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[self.to_lsp(about, lines, folder)],
                    is_preferred=id(fix) in preferred or None,
                    edit=edit,
                )
            )
        return out

    def dialect_at(self, project: Project, index: Index, path: str, diag: Diagnostic) -> str | None:
        """The dialect of the instruction holding `diag`: a fix keeps it (google-adk reads `{key}` only)."""
        if not path.endswith(".py"):
            return project.dialect
        item = index.instruction_at(path, diag.span.start) if diag.span is not None else None
        return item.dialect if item is not None else None

    def can_create_files(self) -> bool:
        """Whether the client applies a workspace edit that creates a file."""
        try:
            workspace = self.ls.client_capabilities.workspace
        except RuntimeError:
            return False
        edits = workspace.workspace_edit if workspace is not None else None
        return bool(
            edits is not None
            and edits.document_changes
            and types.ResourceOperationKind.Create in (edits.resource_operations or ())
        )


# Rules a user may turn off (the syntax checks E001-E003 are no rules: a file that cannot be read stays reported).
_SUPPRESSIBLE = frozenset(code for code in (f"T{n:03d}" for n in range(1, 100)) if described(code))
