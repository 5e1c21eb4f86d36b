"""The language server: pygls over stdio (framed and checked by `wire`), every feature registered.

The state (folders, documents, linting) is in `state`, the answers to requests in `answers`."""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path

from .. import __version__
from .answers import Answers
from .folders import LOADING
from .preview import PREVIEW_METHOD, code_lenses, preview_answer, request_of
from .state import TemplatingServer
from .wire import Protocol, run_stdio

__all__ = ["TemplatingServer", "build", "serve"]


def build() -> LanguageServer:
    """The pygls server with every feature registered."""
    ls = LanguageServer("templating", __version__, protocol_cls=Protocol)
    state = Answers(ls)

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
            state.watch_files()

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

    @ls.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    def code_lens(ls: LanguageServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        return code_lenses(state, params.text_document.uri)

    @ls.feature(PREVIEW_METHOD)
    async def preview(ls: LanguageServer, params: Any) -> dict[str, Any]:
        asked = request_of(state, params)
        if isinstance(asked, str):
            return {"target": None, "mode": "static", "agents": [], "notes": [], "error": asked}
        answer = await asyncio.to_thread(preview_answer, *asked)
        if not state.adk_settled:  # a first preview imports google-adk when no code lens did: once it is done
            from ..preview.build import import_adk

            if await asyncio.to_thread(import_adk):
                state.adk_imported()
        return answer

    ls.templating = state  # type: ignore[attr-defined]
    return ls


def serve() -> int:
    """Run the server over stdin and stdout until the client exits; the exit code."""
    logging.basicConfig(level=logging.WARNING, format="templating lsp: %(levelname)s: %(message)s")
    ls = build()
    assert isinstance(ls.protocol, Protocol)
    return run_stdio(ls.protocol, sys.stdin.buffer, sys.stdout.buffer)
