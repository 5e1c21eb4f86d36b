"""`templating lsp` driven by a real LSP client over stdio (pytest-lsp), on a copy of the ADK fixture project.

Skipped without the `lsp` extra, but failing instead when TEMPLATING_REQUIRE_LSP=1 (as in CI)."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import require_adk
from linked_project import MEMORY, write_linked

from templating import MissingKeyError, Template, parse
from templating.linter.config import load_config, rules_for

# Every test here starts a process: the language server, or an editor that starts it.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "adk_project"

try:
    import pytest_lsp
    from lsprotocol import types
    from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
except ImportError:
    if os.environ.get("TEMPLATING_REQUIRE_LSP") == "1":
        raise
    pytest.skip(
        "the lsp extra (pygls, lsprotocol) or pytest-lsp is not installed (pip install '.[dev,lsp]')",
        allow_module_level=True,
    )

# An agent module written as ADK code is: an inline instruction reading the planner's output_key with a
# typo, after an emoji (two UTF-16 units, four UTF-8 bytes) and an accented letter.
REVIEWER = '''"""The reviewer: reads the plan the planning agent saved."""

from google.adk.agents import LlmAgent

reviewer_agent = LlmAgent(
    model="gemini-2.5-flash",
    name="reviewer_agent",
    instruction="🧳 Revue détaillée: check {plann} against {itinerary}.",
    output_key="review",
)
'''
REVIEWER_PATH = "travel_concierge/sub_agents/reviewer.py"
TYPO_LINE = 7  # 0-based line of the instruction
TYPO_COLUMN = REVIEWER.splitlines()[TYPO_LINE].index("{plann}")  # in code points

ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(FIXTURE, root)
    (root / "pyproject.toml").write_text('[tool.templating]\ninclude = ["**/*.py", "**/*.prompt"]\n', encoding="utf-8")
    (root / REVIEWER_PATH).write_text(REVIEWER, encoding="utf-8")
    return root


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "templating", "lsp"], server_env=ENV)
)
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    yield
    await lsp_client.shutdown_session()


async def start(client: LanguageClient, root: Path, encodings: list[str] | None = None) -> types.InitializeResult:
    capabilities = client_capabilities("neovim@v0.10.0")
    capabilities.general = types.GeneralClientCapabilities(position_encodings=encodings)  # None: UTF-16
    return await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(root.as_uri(), "project")],
        )
    )


async def published(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    """The next diagnostics published for `uri` (after `client.diagnostics.pop(uri)`). The timeout only turns a
    server that never answers into a failure: it is far above what a busy machine takes."""
    async with asyncio.timeout(300):
        while uri not in client.diagnostics:
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics[uri])


async def open_file(client: LanguageClient, path: Path, text: str | None = None) -> list[types.Diagnostic]:
    uri = path.as_uri()
    client.diagnostics.pop(uri, None)
    language = "python" if path.suffix == ".py" else "markdown"
    body = path.read_text(encoding="utf-8") if text is None else text
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, language, 1, body)))
    return await published(client, uri)


async def edit(client: LanguageClient, path: Path, text: str, version: int = 2) -> list[types.Diagnostic]:
    uri = path.as_uri()
    client.diagnostics.pop(uri, None)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version, uri),
            [types.TextDocumentContentChangeWholeDocument(text)],
        )
    )
    return await published(client, uri)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("encodings", "expected", "column"),
    [
        (None, "utf-16", TYPO_COLUMN + 1),  # the emoji is two UTF-16 units
        (["utf-8"], "utf-8", len(REVIEWER.splitlines()[TYPO_LINE][:TYPO_COLUMN].encode("utf-8"))),
        (["utf-32"], "utf-32", TYPO_COLUMN),
    ],
    ids=["utf-16-default", "utf-8-offered", "utf-32-offered"],
)
async def test_diagnostic_at_the_exact_character_in_the_negotiated_encoding(
    client: LanguageClient, project: Path, encodings: list[str] | None, expected: str, column: int
) -> None:
    result = await start(client, project, encodings)
    assert result.capabilities.position_encoding == expected
    found = await open_file(client, project / REVIEWER_PATH)
    typo = [d for d in found if d.code == "T014"]
    assert len(typo) == 1, found
    diag = typo[0]
    assert (diag.range.start.line, diag.range.start.character) == (TYPO_LINE, column)
    width = len(b"{plann}") if expected == "utf-8" else len("{plann}")
    assert diag.range.end.character - diag.range.start.character == width
    assert diag.severity == types.DiagnosticSeverity.Warning
    assert diag.code_description is not None
    assert diag.code_description.href.endswith("/rules/T014/")
    assert "'plan'" in diag.message  # the did-you-mean: the planning agent's output_key


@pytest.mark.asyncio
async def test_findings_follow_the_unsaved_text_and_other_files(client: LanguageClient, project: Path) -> None:
    await start(client, project)
    reviewer = project / REVIEWER_PATH
    found = await open_file(client, reviewer)
    assert [d.code for d in found] == ["T014"]
    fixed = REVIEWER.replace("{plann}", "{plan}")
    assert await edit(client, reviewer, fixed) == []  # the unsaved buffer, not the file on disk
    # another open file stops writing "plan": the reviewer's finding comes back without editing it
    planning = project / "travel_concierge/sub_agents/planning/agent.py"
    text = planning.read_text(encoding="utf-8")
    await open_file(client, planning)
    client.diagnostics.pop(reviewer.as_uri(), None)
    await edit(client, planning, text.replace('output_key="plan"', 'output_key="draft"'))
    again = await published(client, reviewer.as_uri())
    assert [d.code for d in again] == ["T014"]
    assert "'plan'" in again[0].message


@pytest.mark.asyncio
async def test_t014_lists_the_other_readers_of_the_key(client: LanguageClient, project: Path) -> None:
    other = project / "travel_concierge/sub_agents/second.py"
    other.write_text(REVIEWER.replace("reviewer_agent", "second_agent"), encoding="utf-8")
    await start(client, project)
    found = await open_file(client, project / REVIEWER_PATH)
    related = found[0].related_information or []
    assert [item.location.uri for item in related] == [other.as_uri()]
    assert related[0].location.range.start.line == TYPO_LINE


@pytest.mark.asyncio
async def test_pyproject_change_reloads_the_configuration(client: LanguageClient, project: Path) -> None:
    await start(client, project)
    reviewer = project / REVIEWER_PATH
    assert [d.code for d in await open_file(client, reviewer)] == ["T014"]
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + 'ignore = ["T014"]\n', encoding="utf-8")
    client.diagnostics.pop(reviewer.as_uri(), None)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams([types.FileEvent(pyproject.as_uri(), types.FileChangeType.Changed)])
    )
    assert await published(client, reviewer.as_uri()) == []


@pytest.mark.asyncio
async def test_a_file_deleted_on_disk_is_forgotten_for_open_documents(client: LanguageClient, project: Path) -> None:
    await start(client, project)
    reviewer = project / REVIEWER_PATH
    assert [d.code for d in await open_file(client, reviewer)] == ["T014"]  # {plann}; {itinerary} is written
    planning = project / "travel_concierge" / "sub_agents" / "planning" / "agent.py"
    planning.unlink()  # the writer of itinerary, deleted by another tool
    client.diagnostics.pop(reviewer.as_uri(), None)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams([types.FileEvent(planning.as_uri(), types.FileChangeType.Deleted)])
    )
    found = await published(client, reviewer.as_uri())
    assert sorted(d.code for d in found) == ["T014", "T014"], found  # {itinerary} is now written nowhere


LATE_AGENT = (
    "from google.adk.agents import LlmAgent\n\n"
    "from .late_prompt import RULES\n\n"
    'late_agent = LlmAgent(name="late", model="gemini-2.5-flash", instruction="Answer with {late_answer}. " + RULES)\n'
)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("watching", "told"),
    [
        pytest.param(False, False, id="a-client-that-cannot-watch-files"),
        pytest.param(True, True, id="a-client-watching-tells-the-server"),
    ],
)
async def test_a_module_made_on_disk_by_another_tool_is_read_at_the_next_edit(
    client: LanguageClient, project: Path, watching: bool, told: bool
) -> None:
    capabilities = client_capabilities("neovim@v0.10.0")
    assert capabilities.workspace is not None
    capabilities.workspace.did_change_watched_files = types.DidChangeWatchedFilesClientCapabilities(
        dynamic_registration=watching
    )
    registered: list[types.RegistrationParams] = []

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        registered.append(params)

    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=project.as_uri(),
            workspace_folders=[types.WorkspaceFolder(project.as_uri(), "project")],
        )
    )
    agent = project / "travel_concierge" / "sub_agents" / "late.py"
    agent.write_text(LATE_AGENT, encoding="utf-8")
    assert not [d for d in await open_file(client, agent) if "'late_answer'" in d.message]  # RULES not there yet
    assert bool(registered) is watching
    made = agent.with_name("late_prompt.py")
    made.write_text('RULES = "Be brief."\n', encoding="utf-8")  # by another tool: the instruction is now known
    if told:
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams([types.FileEvent(made.as_uri(), types.FileChangeType.Created)])
        )
    found = await edit(client, agent, LATE_AGENT + "# edited\n")
    assert [d.code for d in found if "'late_answer'" in d.message] == ["T014"], found


def _position(line: str, needle: str, lineno: int, extra: int = 1) -> types.Position:
    """The UTF-16 position of `needle` (+`extra` characters) in `line`."""
    index = line.index(needle) + extra
    return types.Position(lineno, len(line[:index].encode("utf-16-le")) // 2)


@pytest.mark.asyncio
async def test_hover_on_a_placeholder_tells_where_it_is_written(client: LanguageClient, project: Path) -> None:
    await start(client, project)
    reviewer = project / REVIEWER_PATH
    await open_file(client, reviewer)
    line = REVIEWER.splitlines()[TYPO_LINE]
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(reviewer.as_uri()), _position(line, "{itinerary}", TYPO_LINE))
    )
    assert hover is not None
    text = hover.contents.value  # type: ignore[union-attr]
    assert "state key `itinerary`" in text
    assert "required" in text
    assert "adk syntax" in text
    assert (
        "`output_key='itinerary'` of agent `itinerary_agent` at `travel_concierge/sub_agents/planning/agent.py:15`"
        in (text)
    )


@pytest.mark.asyncio
async def test_a_cancel_of_an_answered_request_is_not_logged(
    client: LanguageClient, project: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """VS Code cancels requests whose answers already left (a hover when the mouse moved on): the server ignores
    such a cancel without a line in its log (pygls warned for each). A cancel of an id never sent still gets one,
    which also tells the test that the server has read the first cancel (stderr is written in order)."""
    await start(client, project)
    reviewer = project / REVIEWER_PATH
    await open_file(client, reviewer)
    line = REVIEWER.splitlines()[TYPO_LINE]
    params = types.HoverParams(
        types.TextDocumentIdentifier(reviewer.as_uri()), _position(line, "{itinerary}", TYPO_LINE)
    )
    answered, never = "hover-answered-before-its-cancel", "request-never-sent"
    assert await client.protocol.send_request_async(types.TEXT_DOCUMENT_HOVER, params, msg_id=answered) is not None
    client.cancel_request(types.CancelParams(id=answered))
    client.cancel_request(types.CancelParams(id=never))
    err = ""
    async with asyncio.timeout(60):  # a liveness bound: the server answers in milliseconds
        while never not in err:
            await asyncio.sleep(0.05)
            err += capfd.readouterr().err
    assert answered not in err, err
    assert "Cancel notification for unknown message id" not in err, err
    # the server still answers after both
    assert await client.text_document_hover_async(params) is not None


TRIP_AGENT = "trip_desk/agent.py"
STATE_JSON = {
    "type": "object",
    "properties": {
        "lang": {"type": "string", "default": "en"},
        "order": {"$ref": "#/$defs/Order"},
        "tags": {"type": "array", "items": {"type": "string"}, "default": []},
        "nick": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
    },
    "required": ["order"],
    "$defs": {"Order": {"title": "Order", "type": "object", "properties": {"id": {"type": "integer"}}}},
}
PROMPT = "Answer in <lang> for <order> (number <order.id>) of <nick?>, tagged <tags>.\n"


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("needle", "expected"),
    [
        (
            "{budget}",
            'Declared in state_schema=TripState of Agent(name="trip_planner"): `int`, default `500`, optional',
        ),
        ("{notes?}", "`Optional[str]`, default `None`, optional"),
        ("{itinerary?}", "`str`, required"),
        ("<legs.0.origin>", "`str`, required"),  # through the list's element, a Leg
        ("<traveller.name>", "`str`, required"),
        ("<traveller.email?>", "`str | None`, default `None`, optional"),
    ],
    ids=["default-keyword", "optional-none", "required", "list-element-field", "nested-required", "nested-default"],
)
async def test_hover_shows_the_state_schema_type_and_default(
    client: LanguageClient, tmp_path: Path, needle: str, expected: str
) -> None:
    root = tmp_path / "project"
    shutil.copytree(FIXTURE.parent / "adk2_project", root)
    await start(client, root)
    agent = root / TRIP_AGENT
    await open_file(client, agent)
    lines = agent.read_text(encoding="utf-8").splitlines()
    lineno = next(i for i, line in enumerate(lines) if needle in line)
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(agent.as_uri()), _position(lines[lineno], needle, lineno))
    )
    assert hover is not None
    assert expected in hover.contents.value  # type: ignore[union-attr]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("needle", "expected"),
    [
        ("<lang>", 'Declared in the project\'s schema: `str`, default `"en"`, optional'),
        ("<order>", "`Order`, required"),
        ("<order.id>", "`int`, optional"),
        ("<tags>", "`list[str]`, default `[]`, optional"),
        ("<nick?>", "`str | None`, default `null`, optional"),
    ],
    ids=["string-default", "ref-title", "nested", "array-items", "nullable"],
)
async def test_hover_shows_the_json_schema_type_and_default(
    client: LanguageClient, tmp_path: Path, needle: str, expected: str
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "state.json").write_text(json.dumps(STATE_JSON), encoding="utf-8")
    (root / "pyproject.toml").write_text(
        '[tool.templating]\ninclude = ["**/*.prompt"]\nschema = "state.json"\n', encoding="utf-8"
    )
    prompt = root / "answer.prompt"
    prompt.write_text(PROMPT, encoding="utf-8")
    await start(client, root)
    await open_file(client, prompt)
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(prompt.as_uri()), _position(PROMPT, needle, 0))
    )
    assert hover is not None
    assert expected in hover.contents.value  # type: ignore[union-attr]


@pytest.mark.asyncio
async def test_hover_on_an_instruction_names_it_and_its_keys(client: LanguageClient, project: Path) -> None:
    await start(client, project)
    reviewer = project / REVIEWER_PATH
    await open_file(client, reviewer)
    line = REVIEWER.splitlines()[TYPO_LINE]
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(reviewer.as_uri()), _position(line, "check", TYPO_LINE))
    )
    assert hover is not None
    text = hover.contents.value  # type: ignore[union-attr]
    assert 'LlmAgent(name="reviewer_agent").instruction' in text
    assert "adk syntax" in text
    assert "`plann`, `itinerary`" in text


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("typed", "expected", "absent"),
    [
        ("{it", {"itinerary}", "user_profile}", "user:"}, {"itinerary"}),
        ("{user:", {"user:", "itinerary}"}, set()),
    ],
    ids=["keys-with-closing-brace", "scope-prefixes"],
)
async def test_completion_offers_the_project_keys(
    client: LanguageClient, project: Path, typed: str, expected: set[str], absent: set[str]
) -> None:
    await start(client, project)
    reviewer = project / REVIEWER_PATH
    await open_file(client, reviewer)
    text = REVIEWER.replace("check {plann}", f"check {typed}")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(2, reviewer.as_uri()),
            [types.TextDocumentContentChangeWholeDocument(text)],
        )
    )
    line = text.splitlines()[TYPO_LINE]
    result = await client.text_document_completion_async(
        types.CompletionParams(
            types.TextDocumentIdentifier(reviewer.as_uri()), _position(line, typed, TYPO_LINE, len(typed))
        )
    )
    assert isinstance(result, types.CompletionList)
    inserted = {item.text_edit.new_text for item in result.items if item.text_edit is not None}
    assert expected <= inserted
    assert not absent & inserted
    first = next(i for i in result.items if i.label == "itinerary")
    assert first.text_edit is not None
    assert first.text_edit.range.start == _position(line, typed, TYPO_LINE, 1)  # replaces what follows "{"


@pytest.mark.asyncio
async def test_no_completion_outside_an_instruction(client: LanguageClient, project: Path) -> None:
    await start(client, project)
    reviewer = project / REVIEWER_PATH
    await open_file(client, reviewer)
    line = REVIEWER.splitlines()[1]
    result = await client.text_document_completion_async(
        types.CompletionParams(types.TextDocumentIdentifier(reviewer.as_uri()), types.Position(1, len(line)))
    )
    assert result is None or not result.items  # type: ignore[union-attr]


@pytest.mark.asyncio
async def test_definition_jumps_to_the_output_key_and_references_come_back(
    client: LanguageClient, project: Path
) -> None:
    await start(client, project)
    reviewer = project / REVIEWER_PATH
    await open_file(client, reviewer)
    line = REVIEWER.splitlines()[TYPO_LINE]
    found = await client.text_document_definition_async(
        types.DefinitionParams(
            types.TextDocumentIdentifier(reviewer.as_uri()), _position(line, "{itinerary}", TYPO_LINE)
        )
    )
    assert isinstance(found, list)
    planning = project / "travel_concierge/sub_agents/planning/agent.py"
    assert [loc.uri for loc in found] == [planning.as_uri()]
    target = planning.read_text(encoding="utf-8").splitlines()[found[0].range.start.line]
    assert target[found[0].range.start.character : found[0].range.end.character] == '"itinerary"'
    refs = await client.text_document_references_async(
        types.ReferenceParams(
            context=types.ReferenceContext(include_declaration=False),
            text_document=types.TextDocumentIdentifier(planning.as_uri()),
            position=found[0].range.start,
        )
    )
    assert refs is not None
    assert sorted(loc.uri for loc in refs) == sorted(
        [reviewer.as_uri(), (project / "travel_concierge/sub_agents/booking/prompt.py").as_uri()]
    )


def _apply(text: str, edits: list[types.TextEdit]) -> str:
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def at(pos: types.Position) -> int:  # UTF-16 positions
        line = lines[pos.line] if pos.line < len(lines) else ""
        units = 0
        for i, ch in enumerate(line):
            if units >= pos.character:
                return offsets[pos.line] + i
            units += 2 if ord(ch) > 0xFFFF else 1
        return offsets[pos.line] + len(line)

    for item in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: at(item.range.start)] + item.new_text + text[at(item.range.end) :]
    return text


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("instruction", "title", "fixed"),
    [
        ("check {plann} now.", "Replace with {plan}", "check {plan} now."),
        ("check {plann} now.", "Make it optional: {plann?}", "check {plann?} now."),
        ("check {user-name} now.", "Replace with {user_name}", "check {user_name} now."),
    ],
    ids=["did-you-mean", "make-optional", "adk-near-miss"],
)
async def test_quick_fixes_repair_the_instruction(
    client: LanguageClient, project: Path, instruction: str, title: str, fixed: str
) -> None:
    await start(client, project)
    reviewer = project / REVIEWER_PATH
    text = REVIEWER.replace("check {plann} against {itinerary}.", instruction)
    found = await open_file(client, reviewer, text)
    assert found
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            types.TextDocumentIdentifier(reviewer.as_uri()), found[0].range, types.CodeActionContext(found)
        )
    )
    assert actions is not None
    chosen = [a for a in actions if isinstance(a, types.CodeAction) and a.title == title]
    assert chosen, [a.title for a in actions]
    edit = chosen[0].edit
    assert edit is not None
    assert edit.changes is not None
    assert _apply(text, list(edit.changes[reviewer.as_uri()])) == text.replace(instruction, fixed)


@pytest.mark.asyncio
async def test_angle_fixes_escape_a_tag_and_close_a_spaced_placeholder(client: LanguageClient, project: Path) -> None:
    await start(client, project)
    prompt = project / "support.prompt"
    text = "Answer <name>.\nShow an <example>like this</example>.\nThanks < name >.\n"
    prompt.write_text(text, encoding="utf-8")
    found = await open_file(client, prompt)
    assert sorted(d.code for d in found) == ["T002", "T007"]
    titles = {}
    for diag in found:
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                types.TextDocumentIdentifier(prompt.as_uri()), diag.range, types.CodeActionContext([diag])
            )
        )
        assert actions is not None
        for action in actions:
            assert isinstance(action, types.CodeAction)
            titles[action.title] = action
    escape = titles["Escape the tag: <<example>>"]
    assert escape.edit is not None
    assert escape.edit.changes is not None
    assert _apply(text, list(escape.edit.changes[prompt.as_uri()])) == text.replace("<example>", "<<example>>")
    spaced = titles["Replace with <name>"]
    assert spaced.edit is not None
    assert spaced.edit.changes is not None
    assert _apply(text, list(spaced.edit.changes[prompt.as_uri()])) == text.replace("< name >", "<name>")
    ignore = titles["Turn T007 off for this file (per-file-ignores)"]
    assert ignore.edit is not None
    assert ignore.edit.changes is not None
    pyproject = project / "pyproject.toml"
    new = _apply(pyproject.read_text(encoding="utf-8"), list(ignore.edit.changes[pyproject.as_uri()]))
    assert new.endswith('[tool.templating.per-file-ignores]\n"support.prompt" = ["T007"]\n')


def _instruction(source: str) -> str:
    """The literal `instruction=` of the one agent call in the Python `source`."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg == "instruction":
                    value = ast.literal_eval(keyword.value)
                    assert isinstance(value, str)
                    return value
    raise AssertionError("no instruction= in the source")


async def _adk_renders(instruction: str, state: dict[str, str], artifacts: bool) -> str:
    """What google-adk 2.x's own inject_session_state makes of `instruction` (an empty artifact service
    when `artifacts`)."""
    require_adk()
    from google.adk.agents import LlmAgent
    from google.adk.agents.invocation_context import InvocationContext
    from google.adk.agents.readonly_context import ReadonlyContext
    from google.adk.artifacts import InMemoryArtifactService
    from google.adk.sessions import InMemorySessionService
    from google.adk.utils.instructions_utils import inject_session_state

    sessions = InMemorySessionService()
    session = await sessions.create_session(app_name="demo", user_id="u1", state=state)
    context = InvocationContext(
        session_service=sessions,
        invocation_id="i1",
        agent=LlmAgent(name="demo", model="gemini-2.5-flash"),
        session=session,
        artifact_service=InMemoryArtifactService() if artifacts else None,
    )
    return await inject_session_state(instruction, ReadonlyContext(context))


async def _actions_on(client: LanguageClient, path: Path, found: list[types.Diagnostic]) -> list[types.CodeAction]:
    actions = []
    for diag in found:
        answer = await client.text_document_code_action_async(
            types.CodeActionParams(
                types.TextDocumentIdentifier(path.as_uri()), diag.range, types.CodeActionContext([diag])
            )
        )
        actions += [a for a in answer or [] if isinstance(a, types.CodeAction)]
    return actions


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("instruction", "code", "title", "fixed", "state", "artifacts", "rendered"),
    [
        ("check {plann} now.", "T014", "Make it optional: {plann?}", "check {plann?} now.", {}, False, "check  now."),
        (
            "check {user-name} now.",
            "T019",
            "Replace with {user_name}",
            "check {user_name} now.",
            {"user_name": "Ada"},
            False,
            "check Ada now.",
        ),
        (
            "check {{plan}} now.",
            "T017",
            "Replace with {plan}",
            "check {plan} now.",
            {"plan": "P"},
            False,
            "check P now.",
        ),
    ],
    ids=["t014-make-optional", "t019-near-miss", "t017-doubled-braces"],
)
async def test_quick_fixes_in_a_google_adk_instruction_keep_its_dialect(
    client: LanguageClient,
    project: Path,
    instruction: str,
    code: str,
    title: str,
    fixed: str,
    state: dict[str, str],
    artifacts: bool,
    rendered: str,
) -> None:
    """A google-adk agent's `{key}` instruction: no action rewrites it in the angle syntax (google-adk
    would send `<key>` to the model as written); the fix renders under google-adk's own injection."""
    await start(client, project)
    reviewer = project / REVIEWER_PATH
    text = REVIEWER.replace("check {plann} against {itinerary}.", instruction)
    found = [d for d in await open_file(client, reviewer, text) if d.code == code]
    assert found
    actions = await _actions_on(client, reviewer, found)
    for action in actions:  # every edit of the agent's file keeps the ADK dialect
        assert action.edit is not None
        assert not action.title.startswith("Convert"), action.title
        edits = (action.edit.changes or {}).get(reviewer.as_uri())
        if edits:
            after = _instruction(_apply(text, list(edits)))
            assert not parse(after, dialect="angle").placeholders, (action.title, after)
            # google-adk's own pattern (instructions_utils) still finds every `{...}` the instruction had
            assert len(re.findall(r"{+[^{}]*}+", after)) == len(re.findall(r"{+[^{}]*}+", instruction)), after
    chosen = [a for a in actions if a.title == title]
    assert chosen, [a.title for a in actions]
    assert chosen[0].edit is not None
    assert chosen[0].edit.changes is not None
    new = _apply(text, list(chosen[0].edit.changes[reviewer.as_uri()]))
    assert new == REVIEWER.replace("check {plann} against {itinerary}.", fixed)
    assert await _adk_renders(_instruction(new), state, artifacts) == _instruction(REVIEWER).replace(
        "check {plann} against {itinerary}.", rendered
    )
    if code == "T017":  # google-adk filled the doubled braces already: what it sends is the same
        assert await _adk_renders(_instruction(text), state, artifacts) == await _adk_renders(
            _instruction(new), state, artifacts
        )
    elif code != "T019":  # before the fix, google-adk raises KeyError for the same state
        with pytest.raises(KeyError):
            await _adk_renders(_instruction(text), state, artifacts)


@pytest.mark.asyncio
async def test_an_artifact_gets_no_edit_of_the_instruction(client: LanguageClient, project: Path) -> None:
    """T018 (an artifact) is about the Runner: google-adk loads `{artifact.x?}` from the artifact service as
    it loads `{artifact.x}` (ValueError without one), so making it optional would leave the finding; the
    server offers only the suppressions, none of which edits the agent's file."""
    await start(client, project)
    reviewer = project / REVIEWER_PATH
    text = REVIEWER.replace("check {plann} against {itinerary}.", "Policy: {artifact.policy}.")
    found = [d for d in await open_file(client, reviewer, text) if d.code == "T018"]
    assert found
    actions = await _actions_on(client, reviewer, found)
    assert sorted(a.title for a in actions) == [
        "Allow {artifact.policy} everywhere (allow)",
        "Turn T018 off for this file (per-file-ignores)",
    ]
    assert all(reviewer.as_uri() not in (a.edit.changes or {}) for a in actions if a.edit is not None)
    optional = _instruction(REVIEWER).replace("check {plann} against {itinerary}.", "Policy: {artifact.policy?}.")
    with pytest.raises(ValueError, match="Artifact service is not initialized"):
        await _adk_renders(optional, {}, artifacts=False)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("name", "text", "code", "preferred"),
    [
        ("support.prompt", "Show an <example>like this</example>.\n", "T007", {"Escape the tag: <<example>>": True}),
        ("support.prompt", "Thanks < name >, <name>.\n", "T002", {"Replace with <name>": True}),
        ("support.prompt", "Thanks < name >.\n", "T002", {"Replace with <name>": False}),  # a new required key
        (
            REVIEWER_PATH,
            REVIEWER.replace("check {plann} against", "hello {user_name}, check {user-name} against"),
            "T019",
            {"Replace with {user_name}": True},
        ),
        (
            REVIEWER_PATH,
            REVIEWER,
            "T014",
            {"Replace with {plan}": False, "Make it optional: {plann?}": False},  # a new key; a missing one empty
        ),
        (REVIEWER_PATH, REVIEWER.replace("{plann}", "{{plann?}}"), "T017", {"Replace with {plann?}": True}),
        (REVIEWER_PATH, REVIEWER.replace("{plann}", "{{itinerary}}"), "T017", {"Replace with {itinerary}": True}),
        (REVIEWER_PATH, REVIEWER.replace("{plann}", "{{plan}}"), "T017", {"Replace with {plan}": False}),
    ],
    ids=[
        "escape-tag",
        "close-required-key",
        "close-new-key",
        "adk-near-miss-key-required",
        "adk-typo",
        "t017-optional",
        "t017-key-required-already",
        "t017-new-required-key",
    ],
)
async def test_the_safe_fix_is_preferred(
    client: LanguageClient, project: Path, name: str, text: str, code: str, preferred: dict[str, bool]
) -> None:
    """`isPreferred` marks the fix `templating lint --fix` applies (safe); an unsafe fix and a suppression are
    not preferred, and a finding has at most one preferred fix (an editor's "fix all" does what --fix does)."""
    from templating.linter.engine import Project
    from templating.linter.fix_run import plan_fixes

    await start(client, project)
    path = project / name
    path.write_text(text, encoding="utf-8")
    found = [d for d in await open_file(client, path) if d.code == code]
    assert len(found) == 1, found
    actions = await _actions_on(client, path, found)
    titles = {a.title: bool(a.is_preferred) for a in actions}
    assert {title: titles.get(title) for title in preferred} == preferred, titles
    suppress = {title for title in titles if title.endswith(("(per-file-ignores)", "(allow)"))}
    assert suppress
    assert not any(titles[title] for title in suppress)
    assert sum(titles.values()) <= 1
    # the preferred action is what --fix applies to the same file
    linted = Project(project, paths=[str(path)])
    planned = plan_fixes(linted, linted.lint([str(path)]))
    applied = [fix.title for fixed in planned for diag, fix in fixed.applied if diag.code == code]
    assert applied == [title for title, chosen in titles.items() if chosen]


@pytest.mark.asyncio
async def test_an_unused_suppression_is_removed_by_a_quick_fix(client: LanguageClient, project: Path) -> None:
    """T022's help says `remove T009 from the comment`: the quick fix does, and the whole comment line when the
    code was its only one; `--fix` leaves comments alone, so it is not preferred."""
    await start(client, project)
    module = project / "travel_concierge" / "notes.py"
    text = 'GREETING = "Hello."\n# templating: ignore[T009]\nFAREWELL = "Bye."  # templating: ignore[T014, T009]\n'
    module.write_text(text, encoding="utf-8")
    found = sorted((d for d in await open_file(client, module) if d.code == "T022"), key=lambda d: d.range.start)
    assert [d.range.start.line for d in found] == [1, 2, 2]
    fixed = []
    for diag in found:
        (action,) = [a for a in await _actions_on(client, module, [diag]) if a.title.startswith("Remove")]
        assert not action.is_preferred
        assert action.edit is not None
        assert action.edit.changes is not None
        fixed.append(_apply(text, list(action.edit.changes[module.as_uri()])))
    assert fixed == [
        'GREETING = "Hello."\nFAREWELL = "Bye."  # templating: ignore[T014, T009]\n',
        'GREETING = "Hello."\n# templating: ignore[T009]\nFAREWELL = "Bye."  # templating: ignore[T009]\n',
        'GREETING = "Hello."\n# templating: ignore[T009]\nFAREWELL = "Bye."  # templating: ignore[T014]\n',
    ]


@pytest.mark.asyncio
async def test_make_optional_in_an_angle_instruction(client: LanguageClient, project: Path) -> None:
    await start(client, project)
    module = project / "travel_concierge" / "greeting.py"
    text = 'from templating import Template\n\nPROMPT = Template("Greet <guest> now.")\n'
    module.write_text(text, encoding="utf-8")
    found = [d for d in await open_file(client, module) if d.code == "T014"]
    assert found
    actions = {a.title: a for a in await _actions_on(client, module, found)}
    chosen = actions["Make it optional: <guest?>"]
    assert chosen.edit is not None
    assert chosen.edit.changes is not None
    new = _apply(text, list(chosen.edit.changes[module.as_uri()]))
    assert new == text.replace("<guest>", "<guest?>")
    with pytest.raises(MissingKeyError):
        Template("Greet <guest> now.").render({})
    fixed = new.split("Template(")[-1].removesuffix(")\n")
    assert Template(ast.literal_eval(fixed)).render({}) == "Greet  now."


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("pyproject", "title"),
    [
        ('[project]\nname = "demo"\n', "Turn T014 off for this file (per-file-ignores)"),
        ('[project]\nname = "demo"', "Turn T014 off for this file (per-file-ignores)"),
        ('[project]\nname = "demo"\n', "Allow {plann} everywhere (allow)"),
        (
            '[project]\nname = "demo"\n\n[tool.templating.severity]\nT014 = "error"\n',
            "Allow {plann} everywhere (allow)",
        ),
        ("[tool.templating]\n", "Turn T014 off for this file (per-file-ignores)"),
    ],
    ids=["no-table", "no-final-newline", "allow-no-table", "allow-after-a-sub-table", "empty-table"],
)
async def test_suppress_adds_the_table_to_pyproject(
    client: LanguageClient, project: Path, pyproject: str, title: str
) -> None:
    """A project whose pyproject.toml has no `[tool.templating]` table: the action adds it, and the
    configuration then silences the finding."""
    config = project / "pyproject.toml"
    config.write_text(pyproject, encoding="utf-8")
    await start(client, project)
    reviewer = project / REVIEWER_PATH
    found = [d for d in await open_file(client, reviewer) if d.code == "T014"]
    assert found
    actions = {a.title: a for a in await _actions_on(client, reviewer, found)}
    assert title in actions, sorted(actions)
    edit = actions[title].edit
    assert edit is not None
    assert edit.changes is not None
    new = _apply(pyproject, list(edit.changes[config.as_uri()]))
    assert new.startswith(pyproject)  # nothing of the user's text is changed
    config.write_text(new, encoding="utf-8")
    settings = load_config(path=config)
    if "per-file" in title:
        assert "T014" not in rules_for(str(reviewer), settings, frozenset({"T014"}))
    else:
        assert settings.allow == ("{plann}",)
    if pyproject.startswith("[project]"):
        assert tomllib.loads(new)["project"] == {"name": "demo"}


@pytest.mark.asyncio
@pytest.mark.parametrize("creates", [True, False], ids=["client-creates-files", "client-cannot"])
async def test_suppress_without_pyproject_creates_it(client: LanguageClient, project: Path, creates: bool) -> None:
    """No pyproject.toml: the action creates one holding only the table, when the client can create
    files in a workspace edit; otherwise no suppression is offered."""
    (project / "pyproject.toml").unlink()
    capabilities = client_capabilities("neovim@v0.10.0")
    assert capabilities.workspace is not None
    capabilities.workspace.workspace_edit = types.WorkspaceEditClientCapabilities(
        document_changes=creates, resource_operations=[types.ResourceOperationKind.Create] if creates else None
    )
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=project.as_uri(),
            workspace_folders=[types.WorkspaceFolder(project.as_uri(), "project")],
        )
    )
    reviewer = project / REVIEWER_PATH
    found = [d for d in await open_file(client, reviewer) if d.code == "T014"]
    assert found
    actions = await _actions_on(client, reviewer, found)
    suppress = [a for a in actions if "pyproject.toml" in a.title]
    if not creates:
        assert suppress == []
        assert not any("per-file-ignores" in a.title or "(allow)" in a.title for a in actions)
        return
    assert sorted(a.title for a in suppress) == [
        "Allow {plann} everywhere (allow), in a new pyproject.toml",
        "Turn T014 off for this file (per-file-ignores), in a new pyproject.toml",
    ]
    config = project / "pyproject.toml"
    for action in suppress:
        assert action.edit is not None
        assert action.edit.changes is None
        create, change = action.edit.document_changes or []
        assert isinstance(create, types.CreateFile)
        assert create.uri == config.as_uri()
        assert create.options is not None
        assert create.options.overwrite is False
        assert isinstance(change, types.TextDocumentEdit)
        new = _apply("", [e for e in change.edits if isinstance(e, types.TextEdit)])
        config.write_text(new, encoding="utf-8")
        settings = load_config(path=config)
        if "per-file" in action.title:
            assert "T014" not in rules_for(str(reviewer), settings, frozenset({"T014"}))
        else:
            assert settings.allow == ("{plann}",)


# -- workspace folders: each its own project, added and removed

WRITER = """from google.adk.agents import LlmAgent

writer_agent = LlmAgent(name="writer_agent", model="m", instruction="Pick a topic.", output_key="topic")
"""
READER = """from google.adk.agents import LlmAgent

reader_agent = LlmAgent(name="reader_agent", model="m", instruction="Write about {topic} now.")
"""


def second_project(tmp_path: Path) -> Path:
    """A second project: the key `topic` is written by one module and read by another."""
    root = tmp_path / "second"
    (root / "agents").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.templating]\n", encoding="utf-8")
    (root / "agents" / "writer.py").write_text(WRITER, encoding="utf-8")
    (root / "agents" / "reader.py").write_text(READER, encoding="utf-8")
    return root


async def start_folders(client: LanguageClient, *roots: Path) -> None:
    capabilities = client_capabilities("neovim@v0.10.0")
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=roots[0].as_uri() if roots else None,
            workspace_folders=[types.WorkspaceFolder(r.as_uri(), r.name) for r in roots],
        )
    )


async def complete_topic(client: LanguageClient, reader: Path) -> set[str]:
    text = READER.replace("{topic} now", "{to")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(9, reader.as_uri()),
            [types.TextDocumentContentChangeWholeDocument(text)],
        )
    )
    line = text.splitlines()[2]
    result = await client.text_document_completion_async(
        types.CompletionParams(types.TextDocumentIdentifier(reader.as_uri()), types.Position(2, line.index("{to") + 3))
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(10, reader.as_uri()),
            [types.TextDocumentContentChangeWholeDocument(READER)],
        )
    )
    async with asyncio.timeout(30):  # its findings, so none of an earlier text arrives later
        while True:
            params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            if params.uri == reader.as_uri() and params.version == 10:
                break
    if not isinstance(result, types.CompletionList):
        return set()
    return {item.text_edit.new_text for item in result.items if item.text_edit is not None}


@pytest.mark.asyncio
async def test_every_workspace_folder_is_its_own_project(client: LanguageClient, project: Path, tmp_path: Path) -> None:
    second = second_project(tmp_path)
    await start_folders(client, project, second)
    assert [d.code for d in await open_file(client, project / REVIEWER_PATH)] == ["T014"]
    reader = second / "agents" / "reader.py"
    assert await open_file(client, reader) == []  # `topic` is written in the second folder: no T014
    assert "topic}" in await complete_topic(client, reader)
    assert "itinerary}" not in await complete_topic(client, reader)  # the first folder's keys stay there


@pytest.mark.asyncio
async def test_workspace_folders_added_and_removed(client: LanguageClient, project: Path, tmp_path: Path) -> None:
    second = second_project(tmp_path)
    await start_folders(client, project)
    reader = second / "agents" / "reader.py"
    alone = await open_file(client, reader)  # outside every folder: linted from its text alone
    assert [d.code for d in alone] == ["T014"]
    assert await complete_topic(client, reader) == set()
    client.diagnostics.pop(reader.as_uri(), None)
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            types.WorkspaceFoldersChangeEvent(added=[types.WorkspaceFolder(second.as_uri(), "second")], removed=[])
        )
    )
    assert await published(client, reader.as_uri()) == []
    assert "topic}" in await complete_topic(client, reader)
    client.diagnostics.pop(reader.as_uri(), None)
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            types.WorkspaceFoldersChangeEvent(added=[], removed=[types.WorkspaceFolder(second.as_uri(), "second")])
        )
    )
    assert [d.code for d in await published(client, reader.as_uri())] == ["T014"]
    assert await complete_topic(client, reader) == set()


# -- containment: nothing outside the workspace folders is opened

SECRET = """from google.adk.agents import LlmAgent

secret_agent = LlmAgent(name="secret_agent", model="m", instruction="Use {api_token}.", output_key="leaked_key")
"""


@pytest.mark.asyncio
async def test_nothing_outside_the_workspace_is_read(client: LanguageClient, project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.py"
    secret.write_text(SECRET, encoding="utf-8")
    link = project / "travel_concierge" / "linked.py"
    link.symlink_to(secret)
    await start_folders(client, project)
    # the link out of the folder is one finding on the link, and is not read
    found = await published(client, link.as_uri())
    assert [d.code for d in found] == ["E003"]
    assert "out of the project root" in found[0].message
    line = SECRET.splitlines()[2]
    at = types.Position(2, line.index("{api_token}") + 1)
    for uri in (secret.as_uri(), link.as_uri(), "file:///etc/shadow"):
        document = types.TextDocumentIdentifier(uri)
        assert await client.text_document_hover_async(types.HoverParams(document, at)) is None
        assert not await client.text_document_definition_async(types.DefinitionParams(document, at))
        refs = types.ReferenceParams(
            context=types.ReferenceContext(include_declaration=True), text_document=document, position=at
        )
        assert not await client.text_document_references_async(refs)
        assert not await client.text_document_completion_async(types.CompletionParams(document, at))
        actions = types.CodeActionParams(document, types.Range(at, at), types.CodeActionContext([]))
        assert not await client.text_document_code_action_async(actions)
    # what the linked file writes is not known inside the folder
    reviewer = project / REVIEWER_PATH
    await open_file(client, reviewer, REVIEWER.replace("check {plann}", "check {lea"))
    line = REVIEWER.replace("check {plann}", "check {lea").splitlines()[TYPO_LINE]
    result = await client.text_document_completion_async(
        types.CompletionParams(
            types.TextDocumentIdentifier(reviewer.as_uri()), types.Position(TYPO_LINE, line.index("{lea") + 4)
        )
    )
    assert isinstance(result, types.CompletionList)
    labels = {item.label for item in result.items}
    assert "itinerary" in labels
    assert "leaked_key" not in labels


@pytest.mark.asyncio
async def test_a_document_outside_is_linted_alone(client: LanguageClient, project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "writer.py").write_text(SECRET.replace("Use {api_token}.", "Nothing."), encoding="utf-8")
    reader = outside / "reader.py"
    text = READER.replace("{topic}", "{leaked_key}").replace(
        "from google", "from .writer import secret_agent\nfrom google"
    )
    await start_folders(client, project)
    found = await open_file(client, reader, text)
    # its neighbour (which writes leaked_key) is not read: the key is unknown
    assert [d.code for d in found] == ["T014"]


@pytest.mark.asyncio
async def test_a_root_of_the_whole_disk_is_refused_and_the_server_answers(client: LanguageClient) -> None:
    await start_folders(client, Path("/"))
    async with asyncio.timeout(60):  # a liveness bound: reading the disk would take far longer
        while not client.messages:
            await client.wait_for_notification(types.WINDOW_SHOW_MESSAGE)
    assert "is not read: it is the root of the file system" in client.messages[0].message
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier("file:///etc/passwd"), types.Position(0, 0))
    )
    assert hover is None


FAKE_HOME = Path(os.environ.get("TMPDIR", "/tmp")) / f"templating-lsp-home-{os.getpid()}"


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "templating", "lsp"], server_env={**ENV, "HOME": str(FAKE_HOME)}
    )
)
async def home_client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_a_home_folder_is_refused_and_its_files_linted_alone(home_client: LanguageClient) -> None:
    FAKE_HOME.mkdir(exist_ok=True)
    try:
        (FAKE_HOME / "writer.py").write_text(WRITER, encoding="utf-8")
        reader = FAKE_HOME / "reader.py"
        reader.write_text(READER, encoding="utf-8")
        await start_folders(home_client, FAKE_HOME)
        found = await open_file(home_client, reader)
        assert [d.code for d in found] == ["T014"]  # alone: writer.py beside it is not read
        assert home_client.messages
        assert "is not read: it is a home folder" in home_client.messages[0].message
    finally:
        shutil.rmtree(FAKE_HOME, ignore_errors=True)


# -- one bad file is one finding; everything else keeps working


@pytest.mark.asyncio
async def test_bad_files_are_one_finding_each_and_the_rest_works(client: LanguageClient, project: Path) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + "max-file-size = 20000\n", encoding="utf-8")
    tools = project / "travel_concierge" / "tools"
    (tools / "gone.py").symlink_to(project / "nowhere.py")
    (tools / "loop.py").symlink_to(tools / "loop.py")
    (tools / "big.py").write_text("x = 1\n" * 5000, encoding="utf-8")
    (project / "latin1.prompt").write_bytes("Caf\xe9 <name>\n".encode("latin-1"))
    await start_folders(client, project)
    expected = {"gone.py": "E003", "loop.py": "E003", "big.py": "E003", "latin1.prompt": "E003"}
    for name, code in expected.items():
        path = tools / name if name.endswith(".py") else project / name
        found = await published(client, path.as_uri())
        assert [d.code for d in found] == [code], (name, found)
    reviewer = project / REVIEWER_PATH
    assert [d.code for d in await open_file(client, reviewer)] == ["T014"]
    line = REVIEWER.splitlines()[TYPO_LINE]
    at = _position(line, "{itinerary}", TYPO_LINE)
    document = types.TextDocumentIdentifier(reviewer.as_uri())
    hover = await client.text_document_hover_async(types.HoverParams(document, at))
    assert hover is not None
    assert "state key `itinerary`" in hover.contents.value  # type: ignore[union-attr]
    assert await client.text_document_definition_async(types.DefinitionParams(document, at))
    refs = types.ReferenceParams(
        context=types.ReferenceContext(include_declaration=True), text_document=document, position=at
    )
    assert await client.text_document_references_async(refs)
    typo = _position(line, "{plann}", TYPO_LINE)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(document, types.Range(typo, typo), types.CodeActionContext([]))
    )
    assert actions


@pytest.mark.asyncio
async def test_a_buffer_over_the_size_limit_gets_one_note(client: LanguageClient, project: Path) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + "max-file-size = 20000\n", encoding="utf-8")
    await start_folders(client, project)
    reviewer = project / REVIEWER_PATH
    assert [d.code for d in await open_file(client, reviewer)] == ["T014"]
    huge = REVIEWER + "# padding\n" * 3000
    found = await edit(client, reviewer, huge)
    assert len(found) == 1
    assert found[0].code == "E003"
    assert found[0].severity == types.DiagnosticSeverity.Information
    assert "over max-file-size (20,000 bytes): not linted" in found[0].message
    other = project / "travel_concierge" / "prompt.py"  # an edit of another open file leaves the note as it is
    await open_file(client, other)
    await edit(client, other, other.read_text(encoding="utf-8") + "\n")
    await client.text_document_hover_async(  # a round trip: every notification sent before it has arrived
        types.HoverParams(types.TextDocumentIdentifier(other.as_uri()), types.Position(0, 0))
    )
    assert [d.code for d in client.diagnostics[reviewer.as_uri()]] == ["E003"]
    assert [d.code for d in await edit(client, reviewer, REVIEWER, version=3)] == ["T014"]  # back under it


def test_without_the_extra_the_command_says_which_extra(tmp_path: Path) -> None:
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\nclass Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name in ('pygls', 'lsprotocol'):\n"
        "            raise ImportError(name)\n"
        "sys.meta_path.insert(0, Block())\n",
        encoding="utf-8",
    )
    env = {**ENV, "PYTHONPATH": os.pathsep.join([str(blocker), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-m", "templating", "lsp"], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "templating: error: `templating lsp` needs the lsp extra (pygls, lsprotocol): "
        "pip install 'agent-prompt-templating[lsp]'"
    ]


# Neovim's own LSP client (0.7 or later: vim.lsp.start_client), headless: it opens the agent module, waits
# for the findings, writes them as JSON, applies the "Replace with" quick fix and writes the buffer.
NVIM_INIT = r"""
local out = os.getenv("TEMPLATING_OUT")
vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("TEMPLATING_FILE")))
local bufnr = vim.api.nvim_get_current_buf()
local id = vim.lsp.start_client({
  name = "templating",
  cmd = { os.getenv("TEMPLATING_PYTHON"), "-m", "templating", "lsp" },
  root_dir = os.getenv("TEMPLATING_ROOT"),
})
vim.lsp.buf_attach_client(bufnr, id)
-- Waits (ms) that only bound a hang: a busy machine takes seconds, the test never judges by them.
vim.wait(300000, function() return #vim.diagnostic.get(bufnr) > 0 end, 50)
local found = {}
for _, d in ipairs(vim.diagnostic.get(bufnr)) do
  local lsp = (d.user_data or {}).lsp or {}
  table.insert(found, { lnum = d.lnum, col = d.col, end_col = d.end_col, code = d.code or lsp.code,
                        message = d.message })
end
vim.fn.writefile({ vim.fn.json_encode(found) }, out .. "/diagnostics.json")
local client = vim.lsp.get_client_by_id(id)
local titles = {}
if #found > 0 then
  local params = {
    textDocument = vim.lsp.util.make_text_document_params(bufnr),
    range = { start = { line = found[1].lnum, character = 0 }, ["end"] = { line = found[1].lnum + 1, character = 0 } },
    context = { diagnostics = {} },
  }
  local response = client.request_sync("textDocument/codeAction", params, 300000, bufnr)
  for _, action in ipairs((response or {}).result or {}) do
    table.insert(titles, action.title)
    if action.title:find("^Replace with") then
      vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)
      break
    end
  end
end
vim.fn.writefile({ vim.fn.json_encode(titles) }, out .. "/actions.json")
vim.fn.writefile(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), out .. "/buffer.txt")
vim.lsp.stop_client(id)
vim.cmd("qa!")
"""


def test_neovim_shows_the_findings_and_applies_the_quick_fix(project: Path, tmp_path: Path) -> None:
    nvim = shutil.which("nvim")
    if nvim is None:
        if os.environ.get("TEMPLATING_REQUIRE_NVIM") == "1":
            pytest.fail("TEMPLATING_REQUIRE_NVIM=1 but nvim is not installed")
        pytest.skip("nvim is not installed")
    init = tmp_path / "init.lua"
    init.write_text(NVIM_INIT, encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    agent = project / REVIEWER_PATH
    env = {
        **ENV,
        "TEMPLATING_OUT": str(out),
        "TEMPLATING_FILE": str(agent),
        "TEMPLATING_ROOT": str(project),
        "TEMPLATING_PYTHON": sys.executable,
        "HOME": str(tmp_path),  # no user configuration, no shada in the real home
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    subprocess.run(
        [nvim, "--headless", "--clean", "-u", str(init)],
        cwd=project,
        env=env,
        timeout=900,  # above the waits in NVIM_INIT: a bound on a hang, never a verdict
        check=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )
    found = json.loads((out / "diagnostics.json").read_text(encoding="utf-8"))
    prefix = REVIEWER.splitlines()[TYPO_LINE][:TYPO_COLUMN]
    byte_col = len(prefix.encode("utf-8"))  # Neovim's columns are bytes: the emoji and é shift nothing
    assert [(d["code"], d["lnum"], d["col"], d["end_col"]) for d in found] == [
        ("T014", TYPO_LINE, byte_col, byte_col + len("{plann}"))
    ]
    titles = json.loads((out / "actions.json").read_text(encoding="utf-8"))
    assert "Replace with {plan}" in titles
    buffer = (out / "buffer.txt").read_text(encoding="utf-8")
    assert buffer == REVIEWER.replace("{plann}", "{plan}")


@pytest.mark.parametrize(
    ("key", "agents"),
    [
        pytest.param("covered", ["review"], id="only-the-longer-composition-reads-it"),
        pytest.param("topic", ["quiz", "review"], id="both-compositions-read-it"),
    ],
)
def test_instructions_that_start_at_one_character_are_two(key: str, agents: list[str], tmp_path: Path) -> None:
    # quiz: BASE + QUIZ, review: BASE + MEMORY + QUIZ; both start at BASE's first character
    from templating.linter.engine import Project
    from templating.lsp.model import Index

    root = tmp_path / "tutor"
    shutil.copytree(ROOT / "tests" / "fixtures" / "tutor_project", root)
    readers = Index(Project(root), dict).readers_of(key)
    assert sorted(reading.label for reading in readers) == [f'LlmAgent(name="{agent}").instruction' for agent in agents]


def _edited(project: Path) -> tuple[object, object, str, str]:
    """The fixture's project and index as the server holds them, and its planner module's path and text."""
    from templating.linter.engine import Project
    from templating.lsp.model import Index

    engine = Project(project)
    index = Index(engine, dict)
    engine._full_scan([])
    path = str(project / "travel_concierge/sub_agents/planning/agent.py")
    return engine, index, path, Path(path).read_text(encoding="utf-8")


def _syntax_trees() -> int:
    """The syntax trees alive, but for those `pysource.reading` keeps for the next scan (bounded by their text)."""
    import ast
    import gc

    from templating.pysource import reading

    gc.collect()
    assert reading._kept_size <= reading.KEPT_TEXT
    kept = {id(tree) for tree in reading._kept.values()}
    return sum(1 for item in gc.get_objects() if isinstance(item, ast.Module) and id(item) not in kept)


def test_edits_keep_no_syntax_tree_of_an_earlier_scan(project: Path) -> None:
    # The server's edit path (one Project.update, the index taking the engine's scan): an earlier scan's
    # trees are dropped (a read error kept by the engine held every scan's frames through its traceback).
    engine, index, path, text = _edited(project)

    def type_in(times: int) -> None:
        nonlocal text
        for _ in range(times):
            text = text.replace('output_key="plan"', 'output_key="plan"  # x', 1)
            result = engine.update(path, text)  # type: ignore[attr-defined]
            index.absorb(engine.scan, result.files)

    type_in(2)
    before = _syntax_trees()
    type_in(6)
    assert _syntax_trees() <= before


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [
        pytest.param("agent.py", 'output_key="plan"', 'output_key="draft"', id="a-write-renamed"),
        pytest.param("prompt.py", "{origin}", "{origin} {budget} {plan}", id="placeholders-added"),
    ],
)
def test_the_index_taken_from_the_engine_equals_its_own_scan(project: Path, name: str, old: str, new: str) -> None:
    from templating.lsp.model import Index

    engine, index, _, _ = _edited(project)
    path = str(project / "travel_concierge/sub_agents/planning" / name)
    text = Path(path).read_text(encoding="utf-8")
    assert old in text
    changed = text.replace(old, new)
    result = engine.update(path, changed)  # type: ignore[attr-defined]
    index.absorb(engine.scan, result.files)
    fresh = Index(engine, lambda: {path: changed})  # type: ignore[arg-type]
    for key in ("plan", "draft", "origin", "budget"):
        assert sorted((w.path, w.start, w.key) for w in index.writes_of(key)) == sorted(  # type: ignore[attr-defined]
            (w.path, w.start, w.key) for w in fresh.writes_of(key)
        )
        assert sorted((r.path, r.start, r.label) for r in index.readers_of(key)) == sorted(  # type: ignore[attr-defined]
            (r.path, r.start, r.label) for r in fresh.readers_of(key)
        )
    # the edit is seen: a placeholder added, or a write renamed
    assert fresh.readers_of("budget") if name == "prompt.py" else fresh.writes_of("draft")


@pytest.mark.skipif(not hasattr(os, "symlink") or os.name != "posix", reason="symbolic links")
def test_the_index_reading_a_file_again_follows_a_relative_import_up_out_of_a_linked_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`app/sub` -> `../real_sub`, whose tool hands state to `remember` from `..memory` (`app/memory.py`, as Python
    imports it): the index finds the write, and once the module changes on disk and is read again (`update`, as the
    server does for a file changed outside the editor), it scans the tool's module with it and finds the new one."""
    from templating.linter.engine import Project
    from templating.lsp.model import Index

    write_linked(tmp_path)
    monkeypatch.chdir(tmp_path)
    project = Project(tmp_path)
    index = Index(project, dict, found=project.read_context())
    memory = tmp_path / "app/memory.py"
    assert [Path(w.path) for w in index.writes_of("topic")] == [memory]
    memory.write_text(MEMORY.replace('"topic"', '"subject"'), encoding="utf-8")
    index.update(str(memory))
    assert not index.writes_of("topic")
    assert [Path(w.path) for w in index.writes_of("subject")] == [memory]


def test_the_index_finds_an_imported_module_that_is_only_an_open_buffer(tmp_path: Path) -> None:
    """A module the editor has open but not yet saved is found when another file imports from it."""
    from templating.linter.engine import Project
    from templating.lsp.model import Index

    (tmp_path / "agent.py").write_text(
        "from google.adk.agents import LlmAgent\nfrom prompts import INSTR\n"
        'root_agent = LlmAgent(name="a", model="m", instruction=INSTR)\n',
        encoding="utf-8",
    )
    unsaved = {str(tmp_path / "prompts.py"): 'INSTR = "Plan for {destination}."\n'}
    index = Index(Project(tmp_path), lambda: unsaved)
    assert [r.label for r in index.readers_of("destination")], "the unsaved module's instruction was not found"
    assert not Index(Project(tmp_path), dict).readers_of("destination")


def test_the_index_built_from_the_engine_scan_equals_its_own(project: Path) -> None:
    from templating.linter.engine import Project
    from templating.lsp.model import Index

    (project / "broken.py").write_bytes(b"X = '\xff'\n")  # unreadable: listed by both
    engine = Project(project)
    taken, own = Index(engine, dict, found=engine._full_scan([])), Index(engine, dict)

    def seen(index: Index) -> tuple[object, ...]:
        writes = sorted((w.path, w.start, w.key, index.agent_of(w)) for w in index.all_writes())
        readings = sorted((r.path, r.start, r.label) for rs in index.readings.values() for r in rs)
        instructions = sorted(
            (i.path, i.label or "", i.span.start) for items in index.instructions.values() for i in items
        )
        return writes, readings, instructions, sorted(index.unreadable.items()), sorted(index.sources)

    assert seen(taken) == seen(own)
    assert taken.readings
    assert taken.unreadable
    assert any(index_agent for w in taken.all_writes() if (index_agent := taken.agent_of(w)))


KEYS_MODULE = '"""State keys the tools write."""\n\nNOTES_KEY = "research_notes"\n'
TOOLS_MODULE = """from google.adk.tools import ToolContext

from .keys import NOTES_KEY


def save_notes(notes: str, tool_context: ToolContext) -> dict:
    tool_context.state[NOTES_KEY] = notes
    return {"status": "ok"}
"""


def test_the_index_takes_again_what_an_edit_changes_in_other_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the tool writes the key a constant of another module names: renaming it changes no finding, only the write
    from templating.linter.engine import Project
    from templating.lsp.model import Index

    (tmp_path / ".git").mkdir()
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "app" / "keys.py").write_text(KEYS_MODULE, encoding="utf-8")
    (tmp_path / "app" / "tools.py").write_text(TOOLS_MODULE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    project = Project(tmp_path)
    project.lint(["."])
    index = Index(project, dict, found=project.scan)
    assert [w.key for ws in index.writes.values() for w in ws] == ["research_notes"]
    result = project.update("app/keys.py", KEYS_MODULE.replace("research_notes", "draft_notes"))
    assert result.files == ["app/keys.py"]  # no finding changed elsewhere
    assert project.scan is not None
    index.absorb(project.scan, {*result.files, *project.scanned_again})
    assert [w.key for ws in index.writes.values() for w in ws] == ["draft_notes"]


@pytest.mark.parametrize(
    ("fixture", "frozen"),
    [
        pytest.param("adk2_project", False, id="state-schema-trees-kept-not-frozen"),
        pytest.param("tutor_project", True, id="no-state-schema-frozen"),
    ],
)
def test_a_folder_s_heap_is_frozen_only_when_its_scan_keeps_no_syntax_trees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixture: str, frozen: bool
) -> None:
    # A scan that read a state_schema= model keeps its modules' trees, in reference cycles: frozen, the ones
    # an edit replaces would never be collected.
    import gc

    from templating.linter.engine import Project
    from templating.lsp.state import _settle

    root = tmp_path / fixture
    shutil.copytree(Path(__file__).resolve().parent / "fixtures" / fixture, root)
    monkeypatch.chdir(root)
    project = Project(root)
    scan = project._full_scan([])
    assert any(s.schema is not None for s in scan.state_schemas) is not frozen  # the fixtures are what we say
    try:
        _settle(scan)
        assert (gc.get_freeze_count() > 0) is frozen
    finally:
        gc.unfreeze()


def test_the_heap_is_set_apart_once_google_adk_is_imported() -> None:
    # The preview imports google-adk after the folders were read: unfrozen, its objects were walked again by the
    # full collection after every edit (about 140 ms an edit on travel-concierge).
    import gc

    from templating.lsp.server import build

    state = build().templating  # type: ignore[attr-defined]
    gc.unfreeze()
    try:
        assert not state.adk_settled
        state.adk_imported()
        assert state.adk_settled
        assert gc.get_freeze_count() > 0
        gc.unfreeze()
        state.adk_imported()  # once: later previews leave the heap as it is
        assert gc.get_freeze_count() == 0
    finally:
        gc.unfreeze()


def test_import_adk_says_whether_google_adk_is_imported() -> None:
    # (the warm-up settles the heap only once the import is done, not when another thread has begun it)
    from templating.preview.build import import_adk
    from templating.preview.load import adk_installed

    assert import_adk() is adk_installed()
    assert ("google.adk.agents" in sys.modules) is adk_installed()


@pytest.mark.asyncio
async def test_an_edit_is_linted_once_the_messages_received_are_handled() -> None:
    # No pause waiting for a next keystroke (it added itself to every edit's latency): the lint runs as soon as the
    # loop has handled what it already received, and the edits handled in that time are linted once.
    from templating.lsp.server import build

    state = build().templating  # type: ignore[attr-defined]
    linted: list[str] = []
    state.lint_now = lambda path, **_: (state.pending.pop(path, None), linted.append(path))
    state.open["/p/a.py"] = "file:///p/a.py"
    for _ in range(3):  # a burst: three changes handled in one turn of the loop
        state.changed("file:///p/a.py")
    assert linted == []
    await asyncio.sleep(0)
    assert linted == ["/p/a.py"]
    state.changed("file:///p/a.py")
    await asyncio.sleep(0)
    assert linted == ["/p/a.py", "/p/a.py"]
    assert state.pending == {}
