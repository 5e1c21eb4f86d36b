"""The language server's answers from the agent model (`templating.lsp.agents`), driven by a real LSP client over
stdio (pytest-lsp): hover on an agent and on a key shows the app's run order, go-to-definition lists the writers
of the instruction's app in run order, completion offers the app's keys. On fixture apps written as ADK authors
write them, and on the shared corpus, a repository of many apps.

Skipped without the `lsp` extra, but failing instead when TEMPLATING_REQUIRE_LSP=1 (as in CI)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

# Every test here starts the language server.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
APPS = ROOT / "tests" / "fixtures" / "agent_apps"
TWO_APPS = ROOT / "tests" / "fixtures" / "adk_truth" / "two_apps_other_writes"
CORPUS = ROOT.parent / "shared" / "corpora"
if not CORPUS.is_dir():
    CORPUS = Path("/work/shared/corpora")

try:
    import pytest_lsp
    from lsprotocol import types
    from pytest_lsp import ClientServerConfig, LanguageClient
    from test_lsp import ENV, _position, edit, open_file, start
except ImportError:
    if os.environ.get("TEMPLATING_REQUIRE_LSP") == "1":
        raise
    pytest.skip(
        "the lsp extra (pygls, lsprotocol) or pytest-lsp is not installed (pip install '.[dev,lsp]')",
        allow_module_level=True,
    )


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "templating", "lsp"], server_env=ENV)
)
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    yield
    await lsp_client.shutdown_session()


# Two apps of one repository, as `adk web .` serves them: billing writes invoice_summary, support only reads it.
# Its caller gives support a customer_tier (declared per app), and a prompt module no agent uses yet.
PYPROJECT = """[project]
name = "acme-agents"
version = "0.1.0"

[tool.templating.initial-state]
support_agent = ["customer_tier"]
billing_agent = []
"""
SPARE = '''"""Prompts being drafted: no agent uses them yet."""

ESCALATION_PROMPT = """Escalate this invoice to a human: {invoice_summary}"""
'''

# An app whose second agent's instruction is a `jinja(...)` template given as a plain string; its root's
# before_agent_callback gives the course.
LESSONS = '''"""A lesson planner: rates the learner's level, then writes a lesson at that level."""

from google.adk.agents import LlmAgent, SequentialAgent
from google.adk.agents.callback_context import CallbackContext

from templating import jinja


def remember_course(callback_context: CallbackContext) -> None:
    """Every session of this app is about the course the learner enrolled in."""
    callback_context.state["course"] = "Python for data analysis"


level_assessor = LlmAgent(
    name="level_assessor",
    model="gemini-2.5-flash",
    instruction="Ask the learner two questions about the course and rate their level in one word.",
    output_key="learner_level",
)

lesson_writer = LlmAgent(
    name="lesson_writer",
    model="gemini-2.5-flash",
    instruction=jinja(
        """Write a lesson of {{ course }} for a {{ learner_level }} learner.
{% if user.goals is defined %}They want to: {{ user.goals }}{% endif %}
Keep every example at the {{learner_level}} level, and end with one exercise on {{ topic }}."""
    ),
)

root_agent = SequentialAgent(
    name="lesson_pipeline",
    sub_agents=[level_assessor, lesson_writer],
    before_agent_callback=remember_course,
)
'''


@pytest.fixture
def apps(tmp_path: Path) -> Path:
    """blog_writer, podcast_studio, the two Acme apps and the lesson planner, side by side in one workspace
    folder."""
    root = tmp_path / "workspace"
    root.mkdir()
    for name in ("blog_writer", "podcast_studio"):
        shutil.copytree(APPS / name, root / name)
    for name in ("billing_agent", "support_agent"):
        shutil.copytree(TWO_APPS / name, root / name)
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (root / "drafts.py").write_text(SPARE, encoding="utf-8")
    (root / "lesson_planner").mkdir()
    (root / "lesson_planner" / "__init__.py").write_text("from . import agent\n", encoding="utf-8")
    (root / "lesson_planner" / "agent.py").write_text(LESSONS, encoding="utf-8")
    return root


def at(path: Path, needle: str, extra: int = 1, text: str | None = None) -> types.Position:
    lines = (path.read_text(encoding="utf-8") if text is None else text).splitlines()
    lineno = next(i for i, line in enumerate(lines) if needle in line)
    return _position(lines[lineno], needle, lineno, extra)


async def _hover_says(
    client: LanguageClient, root: Path, path: Path, needle: str, expected: list[str], absent: list[str]
) -> None:
    """Started on `root` with `path` open, the hover at `needle` says each of `expected` and none of `absent`."""
    await start(client, root)
    await open_file(client, path)
    text = await hover_text(client, path, at(path, needle))
    for part in expected:
        assert part in text, text
    for part in absent:
        assert part not in text, text


async def hover_text(client: LanguageClient, path: Path, position: types.Position) -> str:
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(path.as_uri()), position)
    )
    assert hover is not None
    assert isinstance(hover.contents, types.MarkupContent)
    return hover.contents.value


async def definitions(client: LanguageClient, path: Path, position: types.Position) -> list[tuple[str, str]]:
    """Each place go-to-definition gives: (file relative to the workspace's parent, the text it spans)."""
    found = await client.text_document_definition_async(
        types.DefinitionParams(types.TextDocumentIdentifier(path.as_uri()), position)
    )
    assert isinstance(found, list)
    out = []
    for loc in found:
        assert isinstance(loc, types.Location)
        target = Path(loc.uri.removeprefix("file://"))
        line = target.read_text(encoding="utf-8").splitlines()[loc.range.start.line]
        assert loc.range.start.line == loc.range.end.line
        out.append((target.name, line[loc.range.start.character : loc.range.end.character]))
    return out


async def completed(client: LanguageClient, path: Path, position: types.Position) -> set[str]:
    result = await client.text_document_completion_async(
        types.CompletionParams(types.TextDocumentIdentifier(path.as_uri()), position)
    )
    assert isinstance(result, types.CompletionList)
    return {item.label for item in result.items if item.kind == types.CompletionItemKind.Variable}


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("file", "needle", "expected", "absent"),
    [
        (
            "blog_writer/sub_agents/critic.py",
            '"critic"',
            [
                "**agent `critic`** (LlmAgent)",
                "App `blog_writer`: runs 2nd of 2 in `blog_pipeline`'s sub_agents, after `writer`.",
                "Model calls on the first turn: `writer` → **`critic`**",
                "- `draft`: `draft` is written by writer's output_key before critic runs",
                "- `critique`: `output_key`, after its reply at `blog_writer/sub_agents/critic.py:10`",
            ],
            ["KeyError"],
        ),
        (
            "blog_writer/agent.py",
            "writer_agent = ",
            [
                "App `blog_writer`: runs 1st of 2 in `blog_pipeline`'s sub_agents.",
                "- `critique`: `critique` is first written by critic's output_key, which runs after writer in"
                " blog_pipeline's sub_agents: **google-adk raises a KeyError on the first turn**",
            ],
            [],
        ),
        (
            "blog_writer/agent.py",
            "critic_agent]",
            ["**agent `critic`**", "runs 2nd of 2 in `blog_pipeline`'s sub_agents, after `writer`"],
            [],
        ),
        (
            "podcast_studio/agent.py",
            '"narrator"',
            [
                "App `podcast_studio`: runs 3rd of 4 in `podcast_pipeline`'s sub_agents, after `scriptwriter`.",
                "- `podcast_script`: `podcast_script` is written by scriptwriter's output_key before narrator runs",
                "- `audio_content`: `audio_content` is written only by narrator's output_key, after narrator's"
                " instruction is read: **google-adk raises a KeyError on the first turn**",
            ],
            [],
        ),
        (
            "podcast_studio/agent.py",
            "root_agent = ",
            ["**agent `podcast_pipeline`** (SequentialAgent)", "the root agent of the app `podcast_studio`"],
            ["Model calls on the first turn"],
        ),
        (
            "support_agent/agent.py",
            "root_agent = ",
            [
                "the root agent of the app `support_agent`",
                "- `invoice_summary`: nothing in the app support_agent writes `invoice_summary`: **google-adk raises",
            ],
            ["billing"],
        ),
    ],
    ids=["name-literal", "bound-variable", "sub-agents-entry", "own-output-key", "root-pipeline", "other-app-writes"],
)
async def test_hover_on_an_agent_shows_its_app_and_run_order(
    client: LanguageClient, apps: Path, file: str, needle: str, expected: list[str], absent: list[str]
) -> None:
    await _hover_says(client, apps, apps / file, needle, expected, absent)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("file", "needle", "expected", "absent"),
    [
        (
            "blog_writer/prompt.py",
            "{critique}",
            [
                "In app `blog_writer`, read by `writer`: runs 1st of 2 in `blog_pipeline`'s sub_agents.",
                "`critique` is first written by critic's output_key, which runs after writer",
                "Written in this app, in run order:\n- `output_key='critique'` of agent `critic` at"
                " `blog_writer/sub_agents/critic.py:10`",
            ],
            [],
        ),
        (
            "blog_writer/prompt.py",
            "{draft}",
            ["read by `critic`: runs 2nd of 2", "`draft` is written by writer's output_key before critic runs"],
            ["KeyError"],
        ),
        (
            "support_agent/agent.py",
            "{invoice_summary}",
            [
                "In app `support_agent`, read by `support_assistant`: the root agent of the app `support_agent`.",
                "nothing in the app support_agent writes `invoice_summary`",
            ],
            ["billing_agent/agent.py", "Written in this app"],
        ),
        (
            "billing_agent/agent.py",
            "{invoice_summary}",
            [
                "read by `dunning_writer`: runs 2nd of 2 in `billing_agent`'s sub_agents, after `invoice_reader`.",
                "- `output_key='invoice_summary'` of agent `invoice_reader` at `billing_agent/agent.py:7`",
            ],
            ["support"],
        ),
        (  # no agent reads it: every writer of the project, as before
            "drafts.py",
            "{invoice_summary}",
            ["Written by:\n- `output_key='invoice_summary'` of agent `invoice_reader` at `billing_agent/agent.py:7`"],
            ["In app"],
        ),
        (  # a Jinja variable of a `jinja(...)` plain string, read again further on
            "lesson_planner/agent.py",
            "learner_level}}",
            [
                "**state key `learner_level`**: required, jinja syntax",
                "In app `lesson_planner`, read by `lesson_writer`: runs 2nd of 2 in `lesson_pipeline`'s sub_agents,"
                " after `level_assessor`.",
                "`learner_level` is written by level_assessor's output_key before lesson_writer runs.",
                "- `output_key='learner_level'` of agent `level_assessor` at `lesson_planner/agent.py:18`",
            ],
            ["KeyError"],
        ),
        (
            "lesson_planner/agent.py",
            "topic }}",
            [
                "nothing in the app lesson_planner writes `topic`: **the Jinja2 instruction raises"
                " JinjaUndefinedError on the first turn**",
            ],
            ["KeyError"],
        ),
        (
            "lesson_planner/agent.py",
            "user.goals }}",
            ["**state key `user:goals`**: optional, jinja syntax", "(guarded in the template: nothing raised)"],
            ["JinjaUndefinedError"],
        ),
    ],
    ids=[
        "read-before-written",
        "written-before",
        "other-app-only",
        "own-app",
        "no-app",
        "jinja-read-again",
        "jinja-written-nowhere",
        "jinja-guarded",
    ],
)
async def test_hover_on_a_key_shows_who_writes_it_before_the_reader(
    client: LanguageClient, apps: Path, file: str, needle: str, expected: list[str], absent: list[str]
) -> None:
    await _hover_says(client, apps, apps / file, needle, expected, absent)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("file", "needle", "expected"),
    [
        ("support_agent/agent.py", "{invoice_summary}", []),  # before: billing's output_key, another app
        ("billing_agent/agent.py", "{invoice_summary}", [("agent.py", '"invoice_summary"')]),
        ("blog_writer/prompt.py", "{critique}", [("critic.py", '"critique"')]),
        ("podcast_studio/agent.py", "{audio_content}", [("agent.py", '"audio_content"')]),
        ("drafts.py", "{invoice_summary}", [("agent.py", '"invoice_summary"')]),  # no app: the project's writers
        ("lesson_planner/agent.py", "course }}", [("agent.py", '"course"')]),  # a Jinja variable
        ("lesson_planner/agent.py", "learner_level}}", [("agent.py", '"learner_level"')]),
    ],
    ids=["other-app-only", "own-app", "across-modules", "own-output-key", "no-app", "jinja", "jinja-read-again"],
)
async def test_definition_lists_the_writers_of_the_readers_app(
    client: LanguageClient, apps: Path, file: str, needle: str, expected: list[tuple[str, str]]
) -> None:
    await start(client, apps)
    path = apps / file
    await open_file(client, path)
    assert await definitions(client, path, at(path, needle)) == expected


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("file", "needle", "expected", "absent"),
    [
        (
            "blog_writer/sub_agents/critic.py",
            '"critique"',
            [
                "**state key `critique`**, written by `output_key='critique'` of agent `critic`",
                "In app `blog_writer`, read by, in run order:\n- `writer` (its instruction `WRITER_PROMPT`): runs 1st"
                " of 2 in `blog_pipeline`'s sub_agents; `critique` is first written by critic's output_key, which"
                " runs after writer in blog_pipeline's sub_agents: **google-adk raises a KeyError on the first turn**",
            ],
            ["drafts.py"],
        ),
        (  # support_agent and drafts.py read invoice_summary too, in another app and in none
            "billing_agent/agent.py",
            '"invoice_summary"',
            [
                "In app `billing_agent`, read by, in run order:\n- `dunning_writer`",
                "runs 2nd of 2 in `billing_agent`'s sub_agents, after `invoice_reader`; `invoice_summary` is written"
                " by invoice_reader's output_key before dunning_writer runs",
            ],
            ["support", "drafts", "ESCALATION_PROMPT", "KeyError"],
        ),
        (  # a callback's write, read by a `jinja(...)` instruction
            "lesson_planner/agent.py",
            '"course"',
            [
                "written by `state[...] = ...` at `lesson_planner/agent.py:11`",
                "In app `lesson_planner`, read by, in run order:\n- `lesson_writer` (its instruction `jinja(...)`)",
                "runs 2nd of 2 in `lesson_pipeline`'s sub_agents, after `level_assessor`; `course` is written by",
            ],
            ["KeyError", "JinjaUndefinedError"],
        ),
        (  # written, read by no agent of its app
            "podcast_studio/agent.py",
            '"audio_content"',
            [
                "In app `podcast_studio`, read by, in run order:\n- `narrator`",
                "**google-adk raises a KeyError on the first turn**\n- `publisher`",
            ],
            ["blog_writer"],
        ),
    ],
    ids=["read-before-written", "other-app-reads", "callback-jinja-reader", "own-output-key"],
)
async def test_hover_on_a_write_lists_the_readers_of_its_app_in_run_order(
    client: LanguageClient, apps: Path, file: str, needle: str, expected: list[str], absent: list[str]
) -> None:
    await _hover_says(client, apps, apps / file, needle, expected, absent)


SEEDED = (
    (
        "scriptwriter = Agent(",
        '''def seed_notes(callback_context):
    """Start every episode from the notes of the last one."""
    callback_context.state["research_notes"] = "No notes yet."


scriptwriter = Agent(''',
    ),
    (
        "sub_agents=[researcher, scriptwriter, narrator, publisher])",
        "sub_agents=[researcher, scriptwriter, narrator, publisher],\n    before_agent_callback=seed_notes,\n)",
    ),
)


@pytest.mark.asyncio
async def test_definition_lists_several_writers_in_run_order(client: LanguageClient, apps: Path) -> None:
    """A key written twice in one app, in the editor's unsaved text: the pipeline's before_agent_callback (first
    in the run, later in the file), then researcher's output_key."""
    path = apps / "podcast_studio" / "agent.py"
    text = path.read_text(encoding="utf-8")
    for old, new in SEEDED:
        text = text.replace(old, new)
    await start(client, apps)
    await open_file(client, path)
    await edit(client, path, text)
    found = await client.text_document_definition_async(
        types.DefinitionParams(types.TextDocumentIdentifier(path.as_uri()), at(path, "{research_notes}", text=text))
    )
    assert isinstance(found, list)
    lines = text.splitlines()
    assert [lines[loc.range.start.line].strip() for loc in found] == [
        'callback_context.state["research_notes"] = "No notes yet."',
        'output_key="research_notes",',
    ]
    hover = await hover_text(client, path, at(path, "{research_notes}", text=text))
    assert "`research_notes` is written by podcast_pipeline's before_agent_callback seed_notes before" in hover


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("file", "needle", "expected", "absent"),
    [
        ("support_agent/agent.py", "{invoice_summary}", {"customer_tier"}, {"invoice_summary", "draft", "critique"}),
        ("billing_agent/agent.py", "{invoice_summary}", {"invoice_summary"}, {"customer_tier", "draft"}),
        ("blog_writer/prompt.py", "{critique}", {"draft", "critique"}, {"invoice_summary", "podcast_script"}),
        ("drafts.py", "{invoice_summary}", {"invoice_summary", "draft", "podcast_script"}, set()),  # no app
    ],
    ids=["declared-initial-state", "own-writes", "across-modules", "no-app"],
)
async def test_completion_offers_the_keys_of_the_instructions_app(
    client: LanguageClient, apps: Path, file: str, needle: str, expected: set[str], absent: set[str]
) -> None:
    await start(client, apps)
    path = apps / file
    await open_file(client, path)
    offered = await completed(client, path, at(path, needle))  # right after the `{`
    assert expected <= offered, offered
    assert not absent & offered, offered


# -- a repository of many apps: adk-docs' Python examples (47 apps), two of which write `criticism`

DOCS = CORPUS / "adk-docs"
LOOP = "examples/python/snippets/agents/workflow-agents/loop_agent_doc_improv_agent.py"


@pytest.mark.asyncio
async def test_many_apps_definition_and_completion_stay_in_the_app(client: LanguageClient, tmp_path: Path) -> None:
    """The loop sample's RefinerAgent reads `{{criticism}}` (an f-string: `{criticism}` for google-adk); the
    custom-agent sample's Critic writes `criticism` too. Go-to-definition gives the loop's CriticAgent only, and
    completion offers the loop app's keys, not the story app's."""
    if not DOCS.is_dir():
        pytest.skip(f"the shared corpus is not at {DOCS} (see its README)")
    root = tmp_path / "adk-docs"
    shutil.copytree(DOCS, root)
    await start(client, root)
    path = root / LOOP
    await open_file(client, path)
    found = await definitions(client, path, at(path, "{{criticism}}", 2))
    assert found == [("loop_agent_doc_improv_agent.py", "STATE_CRITICISM")], found
    text = await hover_text(client, path, at(path, "{{criticism}}", 2))
    assert "In app `IterativeWritingPipeline`, read by `RefinerAgent`" in text, text
    assert "storyflow_agent.py" not in text, text
    offered = await completed(client, path, at(path, "{{criticism}}", 2))
    assert {"criticism", "current_document"} <= offered, offered
    assert not {"current_story", "tone_check_result", "grammar_suggestions"} & offered, offered
