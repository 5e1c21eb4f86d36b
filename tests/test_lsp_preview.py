"""The preview in the language server (templating/lsp/preview.py), driven by a real LSP client over stdio: the
`templating/preview` request on an app's document, following unsaved edits, and the "Preview prompt" code lens on
each agent. Needs the lsp and adk extras (failing without them when TEMPLATING_REQUIRE_LSP=1 / _ADK=1, as in CI)."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import installed

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
APPS = ROOT / "tests" / "fixtures" / "preview_apps"
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}

try:
    import pytest_lsp
    from lsprotocol import types
    from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
except ImportError:
    if os.environ.get("TEMPLATING_REQUIRE_LSP") == "1":
        raise
    pytest.skip("the lsp extra or pytest-lsp is not installed (pip install '.[dev,lsp]')", allow_module_level=True)

if not installed("google.adk"):
    if os.environ.get("TEMPLATING_REQUIRE_ADK") == "1":
        pytest.fail("TEMPLATING_REQUIRE_ADK=1 but google-adk is not installed (pip install '.[adk]')", pytrace=False)
    pytest.skip("google-adk is not installed (pip install '.[adk]')", allow_module_level=True)

from preview_edits import EDITS  # noqa: E402

from templating.preview import build_preview  # noqa: E402


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.templating]\n", encoding="utf-8")
    for app in ("concierge", "story_loop"):
        shutil.copytree(APPS / app, root / app)
    return root


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "templating", "lsp"], server_env=ENV)
)
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    yield
    await lsp_client.shutdown_session()


async def start(client: LanguageClient, root: Path) -> None:
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("neovim@v0.10.0"),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(root.as_uri(), "project")],
        )
    )


async def open_doc(client: LanguageClient, path: Path, text: str | None = None) -> str:
    """Open `path` and wait for its diagnostics: its folder is then read."""
    uri = path.as_uri()
    body = path.read_text(encoding="utf-8") if text is None else text
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, body)))
    async with asyncio.timeout(300):
        while uri not in client.diagnostics:
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return uri


def plain(value: Any) -> Any:
    """A result as pygls gives a custom request's (objects with attributes), as plain JSON values."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


async def preview(client: LanguageClient, params: dict[str, Any]) -> dict[str, Any]:
    async with asyncio.timeout(300):  # only turns a server that never answers into a failure
        result = await client.protocol.send_request_async("templating/preview", params)
    return plain(result)


@pytest.mark.asyncio
async def test_the_preview_request_gives_each_agent_of_the_documents_app(client: LanguageClient, project: Path) -> None:
    await start(client, project)
    uri = await open_doc(client, project / "concierge" / "agent.py")
    found = await preview(client, {"textDocument": {"uri": uri}})
    assert found["error"] is None
    expected = build_preview(str(project / "concierge")).to_json()
    assert found["agents"] == expected
    assert [a["agent"] for a in found["agents"]] == ["concierge", "greeting_agent", "booking_agent"]
    one = await preview(
        client, {"textDocument": {"uri": uri}, "agent": "greeting_agent", "state": {"app:city": "Lyon"}}
    )
    assert [a["agent"] for a in one["agents"]] == ["greeting_agent"]
    assert one["agents"][0]["system_instruction"].startswith("You work for Chez Nous, a restaurant in Lyon.")


@pytest.mark.asyncio
async def test_the_preview_follows_unsaved_edits(client: LanguageClient, project: Path) -> None:
    await start(client, project)
    path = project / "concierge" / "agent.py"
    uri = await open_doc(client, path)
    text = path.read_text(encoding="utf-8").replace("Be courteous.", "Be brief.")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(2, uri), [types.TextDocumentContentChangeWholeDocument(text)]
        )
    )
    found = await preview(client, {"textDocument": {"uri": uri}, "agent": "concierge"})
    assert "Be brief." in found["agents"][0]["system_instruction"]
    assert "Be courteous." in path.read_text(encoding="utf-8")  # nothing written


@pytest.mark.asyncio
@pytest.mark.parametrize("kind", sorted(EDITS))
async def test_a_preview_after_edits_through_the_server_is_the_fresh_preview_of_the_edited_text(
    client: LanguageClient, project: Path, kind: str
) -> None:
    """The server keeps each agent's request between previews: after an unsaved edit, and after it is undone, its
    answer is what a fresh preview (nothing kept, in this process) of that text gives."""
    from templating.preview.build import clear_cache

    edit = EDITS[kind]
    await start(client, project)
    path = project / edit.app / edit.file
    original = path.read_text(encoding="utf-8")
    uri = await open_doc(client, path)
    assert (await preview(client, {"textDocument": {"uri": uri}}))["agents"] == build_preview(
        str(path.parent)
    ).to_json()
    for version, text in ((2, edit.apply(original)), (3, original)):
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version, uri),
                [types.TextDocumentContentChangeWholeDocument(text)],
            )
        )
        found = await preview(client, {"textDocument": {"uri": uri}})
        clear_cache()
        fresh = build_preview(
            str(path.parent), read=lambda file, text=text: text if file == str(path) else Path(file).read_text("utf-8")
        )
        assert found["error"] is None
        assert (found["target"], found["agents"], found["notes"]) == (
            str(path.parent),
            fresh.to_json(),
            list(fresh.notes),
        )
    assert path.read_text(encoding="utf-8") == original  # nothing written


@pytest.mark.asyncio
async def test_a_code_lens_on_each_agent_opens_its_preview(client: LanguageClient, project: Path) -> None:
    await start(client, project)
    path = project / "story_loop" / "agent.py"
    uri = await open_doc(client, path)
    async with asyncio.timeout(300):
        lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
    lines = path.read_text(encoding="utf-8").splitlines()
    shown = [
        (lines[lens.range.start.line].strip(), lens.command.title, list(lens.command.arguments)) for lens in lenses
    ]
    assert shown == [
        ("initial_writer_agent = LlmAgent(", "Preview prompt", [uri, "InitialWriterAgent"]),
        ("critic_agent_in_loop = LlmAgent(", "Preview prompt", [uri, "CriticAgent"]),
        ("refiner_agent_in_loop = LlmAgent(", "Preview prompt", [uri, "RefinerAgent"]),
        ("refinement_loop = LoopAgent(", "Preview prompts", [uri, None]),
        ("root_agent = SequentialAgent(", "Preview prompts", [uri, None]),
    ]
    assert {lens.command.command for lens in lenses} == {"templating.previewPrompt"}


@pytest.mark.asyncio
async def test_no_preview_outside_the_folders_or_without_an_app(
    client: LanguageClient, project: Path, tmp_path: Path
) -> None:
    await start(client, project)
    outside = tmp_path / "elsewhere.py"
    outside.write_text("x = 1\n", encoding="utf-8")
    found = await preview(client, {"textDocument": {"uri": await open_doc(client, outside)}})
    assert found["agents"] == []
    assert found["error"] == "the preview is made for documents inside a workspace folder"
    loose = project / "notes.py"
    loose.write_text("x = 1\n", encoding="utf-8")
    found = await preview(client, {"textDocument": {"uri": await open_doc(client, loose)}})
    assert found["agents"] == []
    assert "no root_agent" in found["error"]
    bad = await preview(client, {"textDocument": {"uri": loose.as_uri()}, "state": [1]})
    assert bad["error"] == "state must be a JSON object (key -> value)"


WITHOUT_ADK = {**ENV, "PYTHONPATH": str(ROOT / "tests" / "without_adk") + os.pathsep + ENV["PYTHONPATH"]}


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "templating", "lsp"], server_env=WITHOUT_ADK)
)
async def client_without_adk(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_without_google_adk_the_preview_request_answers_the_partial_preview(
    client_without_adk: LanguageClient, project: Path
) -> None:
    """A server started where google-adk cannot be imported (tests/without_adk): the same answer as the command's
    partial preview, each agent marked partial, an unsaved edit followed."""
    client = client_without_adk
    await start(client, project)
    path = project / "concierge" / "agent.py"
    uri = await open_doc(client, path)
    found = await preview(client, {"textDocument": {"uri": uri}, "state": {"app:city": "Lyon"}})
    assert found["error"] is None
    assert found["mode"] == "partial"
    assert [a["agent"] for a in found["agents"]] == ["concierge", "greeting_agent", "booking_agent"]
    assert all(a["partial"].startswith("google-adk is not installed") for a in found["agents"])
    assert any("need the adk extra" in note for note in found["notes"])
    text = path.read_text(encoding="utf-8").replace("Be courteous.", "Be brief.")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(2, uri), [types.TextDocumentContentChangeWholeDocument(text)]
        )
    )
    edited = await preview(client, {"textDocument": {"uri": uri}, "agent": "greeting_agent"})
    assert edited["agents"][0]["system_instruction"] == (
        "You work for Chez Nous, a restaurant in \u27e8missing: app:city\u27e9. Be brief.\n\n"
        "You are the Greeting Agent. Greet  warmly. Do not engage in other conversation."
    )
