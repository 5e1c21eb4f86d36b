"""The preview in the editor: the `templating/preview` request (what each agent of the document's app sees on its
first turn, read from the code with the editor's unsaved text, none of it run) and a "Preview prompt" code lens
on each agent of a document.

A preview is made on a worker thread from a copy of the open documents' text, so the server keeps answering;
nothing outside the workspace folder is read. The first one imports google-adk (seconds): the server starts that
import in the background when a document holding agents gets its code lenses."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from ..linter.project import FileSkipped, read_bytes
from ..pysource import python_text, scan
from .folders import contains
from .positions import Lines
from .state import TemplatingServer

if TYPE_CHECKING:
    from ..preview.shared import Known

__all__ = ["PREVIEW_COMMAND", "PREVIEW_METHOD", "code_lenses", "preview_answer", "request_of", "warm_up"]

PREVIEW_METHOD = "templating/preview"
PREVIEW_COMMAND = "templating.previewPrompt"
_APP_FILES = ("agent.py", "__init__.py", "root_agent.yaml")
_warmed = threading.Event()


def warm_up(*, done: Callable[[], None] | None = None) -> None:
    """Import google-adk on a thread of its own (once), so the first preview does not wait for it; then call
    `done` (on that thread) once it is imported."""
    if _warmed.is_set():
        return
    _warmed.set()
    from ..preview.build import import_adk

    def work() -> None:
        if import_adk() and done is not None:
            done()

    threading.Thread(target=work, name="templating-preview-warm-up", daemon=True).start()


def _field(params: Any, name: str) -> Any:
    if isinstance(params, Mapping):
        return params.get(name)
    return getattr(params, name, None)


def request_of(
    server: TemplatingServer, params: Any
) -> tuple[str, Path, dict[str, str], str | None, Any, Known | None] | str:
    """What a preview request needs, taken on the server's thread: the document's path, its workspace folder's
    root, the open documents' text in that folder, the agent asked for, the state and what the folder's project
    knows (its scan and agent model with those texts, the edits waiting linted first); or why there is none."""
    document = _field(params, "textDocument")
    uri = _field(document, "uri") if document is not None else _field(params, "uri")
    if not isinstance(uri, str):
        return "templating/preview takes {textDocument: {uri}, agent?, state?}"
    raw = to_fs_path(uri)
    if raw is None:
        return f"not a file: {uri}"
    path = os.path.realpath(raw)
    folder = server.ready_folder(path)
    if folder is None:
        return "the preview is made for documents inside a workspace folder"
    texts = {
        open_path: server.ls.workspace.get_text_document(open_uri).source
        for open_path, open_uri in server.open.items()
        if contains(folder.root, open_path)
    }
    agent = _field(params, "agent")
    state = _field(params, "state")
    if state is not None and not isinstance(state, Mapping):
        return "state must be a JSON object (key -> value)"
    asked = agent if isinstance(agent, str) else None
    return path, folder.root, texts, asked, dict(state) if state else None, _known(server, folder, texts)


def _known(server: TemplatingServer, folder: Any, texts: dict[str, str]) -> Known | None:
    """What the folder's project knows now: the edits waiting are linted first (as the other requests do)."""
    from ..preview.shared import Known

    for waiting in [p for p in server.pending if contains(folder.root, p)]:
        server.flush(waiting)
    project = folder.project
    model = server.agent_model(folder)
    if project is None or model is None or project.scan is None:
        return None
    return Known(project, folder.root, project.config, project.scan, model, texts, dict(project.overrides))


def preview_answer(
    path: str,
    root: Path,
    texts: Mapping[str, str],
    agent: str | None,
    state: Mapping[str, Any] | None,
    known: Known | None = None,
) -> dict[str, Any]:
    """The answer to `templating/preview` (run on a worker thread): `agents`, the list `templating preview
    --format json` prints, for the app holding the document (its agents, or those named `agent`); `target`, the
    app; `notes`; `error` (null, or why there is no preview). The app is taken from what the project `known`
    says where it can be (`templating.preview.shared`), else read again."""
    from ..preview import PreviewError, build_preview
    from ..preview.shared import preview_from

    def read(file: str) -> str:
        if file in texts:
            return texts[file]
        if not contains(root, os.path.realpath(file)):
            raise FileNotFoundError(file)
        try:
            return python_text(read_bytes(file, root=root))
        except FileSkipped as exc:
            raise FileNotFoundError(file) from exc

    unsaved = [p for p in texts if not os.path.exists(p)]
    last = "no ADK app holds an agent of this file"
    for target in _targets(path, root):
        try:
            result = preview_from(known, target, state=state) if known is not None else None
            if result is None:
                result = build_preview(target, state=state, read=read, unsaved=unsaved)
        except PreviewError as exc:
            last = exc.message
            continue
        if not _holds(result, path, target):
            continue
        agents = result.agents if agent is None else tuple(a for a in result.agents if a.agent == agent)
        if agent is not None and not agents:
            continue
        return {
            "target": target,
            "mode": result.mode,
            "agents": [a.to_json() for a in agents],
            "notes": list(result.notes),
            "error": None,
        }
    return {"target": None, "mode": "static", "agents": [], "notes": [], "error": last}


def _targets(path: str, root: Path) -> list[str]:
    """The apps that may hold the document's agents: each folder from the document's up to the workspace folder
    that is an ADK app (agent.py, __init__.py or root_agent.yaml), then the document itself."""
    found: list[str] = []
    here = Path(path).parent
    while contains(root, str(here)):
        if any((here / name).is_file() for name in _APP_FILES):
            found.append(str(here))
        if here == root or here.parent == here:
            break
        here = here.parent
    if path.endswith((".py", ".yaml", ".yml")):
        found.append(path)
    return found


def _holds(result: Any, path: str, target: str) -> bool:
    """Whether the app previewed holds the document: the document is the target, or is read to build it."""
    if os.path.realpath(target) == path:
        return True
    return bool(result.agents) and Path(path).is_relative_to(target)


def code_lenses(server: TemplatingServer, uri: str) -> list[types.CodeLens]:
    """A "Preview prompt" lens over each agent the document builds (its call's first line)."""
    raw = to_fs_path(uri)
    if raw is None:
        return []
    path = os.path.realpath(raw)
    folder = server.ready_folder(path)
    if folder is None or not path.endswith(".py"):
        return []
    text = server.text_of(path, folder)
    if text is None:
        return []
    found = scan([path], read=lambda p: text if p == path else _disk(p, folder.root), root=str(folder.root))
    lines = Lines(text, server.encoding)
    lenses = []
    for call in found.agents:
        if call.path != path or call.name is None or call.kind in ("app", "join"):
            continue
        line, character = lines.position(call.span.start)
        where = types.Range(types.Position(line, character), types.Position(line, character))
        title = "Preview prompt" if call.kind == "llm" else "Preview prompts"
        arguments = [uri, call.name if call.kind == "llm" else None]
        command = types.Command(title=title, command=PREVIEW_COMMAND, arguments=arguments)
        lenses.append(types.CodeLens(range=where, command=command))
    if lenses:
        warm_up(done=_on_loop(server.adk_imported))
    return lenses


def _on_loop(call: Callable[[], None]) -> Callable[[], None] | None:
    """`call`, made to run on the running event loop from another thread (none running: nothing)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None

    def later() -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed: the server is exiting
            loop.call_soon_threadsafe(call)

    return later


def _disk(path: str, root: Path) -> str:
    if not contains(root, os.path.realpath(path)):
        raise FileNotFoundError(path)
    try:
        return python_text(read_bytes(path, root=root))
    except FileSkipped as exc:
        raise FileNotFoundError(path) from exc
