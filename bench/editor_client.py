"""What the language-server benches tell `templating lsp` about their client: an editor that watches the workspace's
files for the server (as VS Code does: it lets the server register a watcher, and answers the registration), so the
server keeps between edits what it found on disk, as it does in such an editor."""

from __future__ import annotations

from lsprotocol import types
from pygls.lsp.client import LanguageClient


def watching(client: LanguageClient) -> types.ClientCapabilities:
    """The capabilities to initialize with; `client` answers the server's registration of its file watcher."""

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def registered(params: types.RegistrationParams) -> None:
        return None

    watch = types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)
    return types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(did_change_watched_files=watch))
