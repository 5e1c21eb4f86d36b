"""The agent model (templating/agent_model/): apps, run order and the availability of each key an agent reads on
the first turn, on small ADK apps written as their authors write them (tests/fixtures/agent_apps/<case>/), and on
the shared corpus. Each expected kind is what google-adk 2.13 does (tests/test_agent_model_truth.py runs the
fixtures through it)."""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import shutil
from pathlib import Path
from typing import Any

import model_edits
import pytest
from conftest import require_adk, shared_corpora

from templating.agent_model import Agent, AgentModel, App, build
from templating.linter.config import LintConfig, LintConfigError
from templating.linter.engine import Project
from templating.pysource import scan

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "agent_apps"


def files_of(folder: Path) -> tuple[list[str], list[str]]:
    """The Python files and the Agent Config roots (root_agent.yaml) under `folder`."""
    python = sorted(str(p) for p in folder.rglob("*.py"))
    configs = sorted(str(p) for p in folder.rglob("root_agent.yaml"))
    return python, configs


def model_of_folder(folder: Path, config: LintConfig | None = None) -> AgentModel:
    python, configs = files_of(folder)
    found = scan(python, root=str(folder), configs=configs, keep_going=True)
    return build(found, config or LintConfig(root=folder), folder)


@functools.cache
def fixture_model(case: str) -> AgentModel:
    return model_of_folder(FIXTURES / case)


def agent_named(model: AgentModel, name: str) -> Agent:
    (found,) = [a for a in model.agents.values() if a.name == name]
    return found


# (id, fixture, agent, key read, kind, certain, the start of the order in words)
AVAILABILITY = [
    (
        "sequential-read-before-its-writer",
        "blog_writer",
        "writer",
        "critique",
        "later",
        True,
        "`critique` is first written by critic's output_key, which runs after writer in blog_pipeline's sub_agents",
    ),
    ("sequential-written-earlier", "blog_writer", "critic", "draft", "before", True, "`draft` is written by writer's"),
    (
        "its-own-output-key",
        "podcast_studio",
        "narrator",
        "audio_content",
        "later",
        True,
        "`audio_content` is written only by narrator's output_key, after narrator's instruction is read",
    ),
    ("a-later-reader-of-it", "podcast_studio", "publisher", "audio_content", "before", True, "`audio_content` is"),
    ("chain", "podcast_studio", "scriptwriter", "research_notes", "before", True, "`research_notes` is written"),
    (
        "parallel-sibling",
        "market_research",
        "CompetitorResearcher",
        "pricing_result",
        "sibling",
        True,
        "`pricing_result` is written only by PricingResearcher's output_key, which runs alongside",
    ),
    ("after-the-parallel", "market_research", "Synthesis", "pricing_result", "before", True, "`pricing_result`"),
    ("after-the-parallel-2", "market_research", "Synthesis", "competitor_result", "before", True, "`competitor_"),
    (
        "loop-first-iteration",
        "essay_loop",
        "EssayCritic",
        "current_essay",
        "loop",
        True,
        "`current_essay` is first written by EssayRefiner's output_key, later in EssayLoop's sub_agents",
    ),
    ("loop-earlier-in-the-body", "essay_loop", "EssayRefiner", "criticism", "before", True, "`criticism` is"),
    (
        "guarded-before-agent-callback",
        "support_desk",
        "triage",
        "customer_profile",
        "before",
        True,
        "`customer_profile` is written by triage's before_agent_callback load_customer before triage runs",
    ),
    (
        "own-before-model-callback",
        "support_desk",
        "triage",
        "last_request_id",
        "later",
        True,
        "`last_request_id` is written only by triage's before_model_callback stamp_request, after",
    ),
    (
        "a-tool-the-model-may-not-call",
        "support_desk",
        "follow_up",
        "ticket_id",
        "maybe",
        False,
        "`ticket_id` is written only by the tool open_ticket of triage, which runs only if the model calls it",
    ),
    ("an-earlier-output-key", "support_desk", "follow_up", "triage_summary", "before", True, "`triage_summary`"),
    (
        "custom-orchestrator-initial-state",
        "story_flow",
        "StoryGenerator",
        "topic",
        "given",
        True,
        "`topic` is given by create_session(state=...) at",
    ),
    (
        "custom-orchestrator-yielded-write",
        "story_flow",
        "StoryGenerator",
        "style",
        "before",
        True,
        "`style` is written by StoryFlowAgent's _run_async_impl (state_delta) before StoryGenerator runs",
    ),
    ("custom-orchestrator-order", "story_flow", "Critic", "current_story", "before", True, "`current_story`"),
    ("inside-the-loop-it-builds", "story_flow", "Reviser", "criticism", "before", True, "`criticism` is written"),
    ("eval-set-state", "trip_planner", "hotel_finder", "traveller", "given", True, "`traveller` is given by the"),
    (
        "workflow-join",
        "trip_planner",
        "hotel_finder",
        "weather",
        "before",
        True,
        "`weather` is written by the workflow node check_weather of trip_planner before hotel_finder runs",
    ),
    ("workflow-chain", "trip_planner", "planner", "hotels", "before", True, "`hotels` is written by hotel_finder"),
    (
        "agent-tool-reads-its-callers-output",
        "research_desk",
        "paper_search",
        "seminal_paper",
        "later",
        False,
        "`seminal_paper` is first written by research_coordinator's output_key, which runs after paper_search",
    ),
    (
        "written-by-an-agent-tool",
        "research_desk",
        "summary_writer",
        "citing_papers",
        "maybe",
        False,
        "`citing_papers` is written only by paper_search's output_key, which runs only if research_coordinator's",
    ),
    (
        "run-time-key-reaches-only-later-agents",
        "keyed_notes",
        "intake",
        "account_id",
        "nowhere",
        True,
        "nothing in the app keyed_notes writes `account_id`",
    ),
    (
        "run-time-key-weakens-the-agents-after-it",
        "keyed_notes",
        "answerer",
        "preferences",
        "unknown",
        False,
        "`preferences` may be written by the tool remember of note_taker (state[...] = ... with a key known only",
    ),
    (
        "another-apps-writer-does-not-count",
        "shop_duo",
        "shop_a",
        "basket",
        "nowhere",
        True,
        "nothing in the app shop_a writes `basket`",
    ),
    ("its-own-apps-writer", "shop_duo", "shower", "basket", "before", True, "`basket` is written by filler's"),
    (
        "yaml-sequential",
        "yaml_pipeline",
        "writer",
        "critique",
        "later",
        True,
        "`critique` is first written by critic's output_key, which runs after writer in pipeline's sub_agents",
    ),
    (
        "yaml-callback-by-dotted-name",
        "yaml_pipeline",
        "writer",
        "topic",
        "before",
        True,
        "`topic` is written by pipeline's before_agent_callback yaml_pipeline.callbacks.seed_topic before writer",
    ),
    ("yaml-config-path", "yaml_pipeline", "critic", "draft", "before", True, "`draft` is written by writer's"),
]


@pytest.mark.parametrize(
    ("case", "agent", "key", "kind", "certain", "text"), [c[1:] for c in AVAILABILITY], ids=[c[0] for c in AVAILABILITY]
)
def test_availability_on_the_first_turn(case: str, agent: str, key: str, kind: str, certain: bool, text: str) -> None:
    model = fixture_model(case)
    reader = agent_named(model, agent)
    assert key in {read.key for read in model.reads(reader)}
    found = model.availability(reader, key)
    assert (found.kind, found.certain) == (kind, certain), found.order_text
    assert found.order_text.startswith(text), found.order_text
    if kind in ("before", "later", "loop", "sibling", "maybe", "unknown"):
        assert found.writer is not None


def test_apps_are_found_and_named(tmp_path: Path) -> None:
    model = fixture_model("shop_duo")
    assert sorted(app.name for app in model.apps) == ["shop_a", "shop_b"]
    shop_b = model.app_named("shop_b")
    assert shop_b is not None
    assert [model.agents[a].name for a in shop_b.agents] == ["shop_b", "filler", "shower"]
    assert model.app_of(agent_named(model, "shower")) is shop_b
    story = fixture_model("story_flow").apps
    assert [a.name for a in story] == ["story_app"]  # the Runner's app_name=


def test_writers_in_run_order() -> None:
    model = fixture_model("story_flow")
    (app,) = model.apps
    writers = model.writers("current_story", app)
    assert [(model.agents[w.agent].name, w.how) for w in writers] == [
        ("StoryGenerator", "output_key"),
        ("Reviser", "output_key"),
    ]
    assert [w.how for w in model.writers("style", app)] == ["_run_async_impl (state_delta)"]


def test_the_first_turn_runs_these_models_in_this_order() -> None:
    def names(case: str) -> list[str | None]:
        model = fixture_model(case)
        (app,) = model.apps
        return [a.name for a in model.first_turn(app)]

    assert names("story_flow") == ["StoryGenerator", "Critic", "Reviser"]
    assert names("market_research") == ["CompetitorResearcher", "PricingResearcher", "Synthesis"]
    assert names("research_desk") == ["research_coordinator"]  # the AgentTool and transfer target: if chosen
    assert names("trip_planner") == ["hotel_finder", "planner"]


def test_enforced_schemas() -> None:
    model = fixture_model("trip_planner")
    hotel = model.enforced_schema(agent_named(model, "hotel_finder"))
    assert hotel is not None
    assert (hotel.where, hotel.schema.model) == ("workflow", "TripState")
    assert hotel.declares("hotels") is False  # extra="allow" does not help: google-adk checks model_fields
    assert hotel.declares("plan") is True
    assert hotel.declares("user:anything") is True  # a key holding ":" bypasses the check
    assert model.enforced_schema(agent_named(fixture_model("blog_writer"), "writer")) is None


def test_schemas_google_adk_does_not_enforce(tmp_path: Path) -> None:
    code = (
        "from google.adk.agents import LlmAgent, SequentialAgent\n"
        "from pydantic import BaseModel\n\n"
        "class S(BaseModel):\n    topic: str = ''\n\n"
        "inner = LlmAgent(name='inner', instruction='x', state_schema=S, output_key='undeclared')\n"
        "root_agent = SequentialAgent(name='seq', sub_agents=[inner])\n"
        "alone = LlmAgent(name='alone', instruction='x', state_schema=S, output_key='undeclared')\n"
    )
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "agent.py").write_text(code, encoding="utf-8")
    (tmp_path / "app" / "main.py").write_text(
        "from google.adk.runners import InMemoryRunner\n\nfrom .agent import alone\n\n"
        "runner = InMemoryRunner(agent=alone)\n",
        encoding="utf-8",
    )
    model = model_of_folder(tmp_path)
    assert model.enforced_schema(agent_named(model, "inner")) is None  # inside a SequentialAgent
    alone = model.enforced_schema(agent_named(model, "alone"))
    assert alone is not None
    assert alone.where == "root-llm"


def test_a_global_instruction_is_read_by_every_llm_agent_of_its_tree(tmp_path: Path) -> None:
    code = (
        "from google.adk.agents import LlmAgent, SequentialAgent\n"
        "child = LlmAgent(name='child', instruction='Help.', global_instruction='Ignored {ignored}.')\n"
        "root_agent = LlmAgent(name='root', instruction='Route.', global_instruction='User: {user:name}.',"
        " sub_agents=[child])\n"
        "seq_child = LlmAgent(name='seq_child', instruction='Hi.')\n"
        "other = SequentialAgent(name='other', sub_agents=[seq_child])\n"
    )
    (tmp_path / "agent.py").write_text(code, encoding="utf-8")
    model = model_of_folder(tmp_path)
    reads = {a.name: [(r.key, r.role) for r in model.reads(a)] for a in model.agents.values()}
    assert reads["root"] == [("user:name", "global_instruction")]
    assert reads["child"] == [("user:name", "global_instruction")]  # the tree root's; its own is ignored
    assert reads["seq_child"] == []


def test_placeholders_as_google_adk_reads_them(tmp_path: Path) -> None:
    text = "{a} {{b}} { c? } {user:d} {artifact.e} {f.g} {other:h} ${i} \\\\{j} {1k}"
    (tmp_path / "agent.py").write_text(
        f"from google.adk.agents import LlmAgent\nroot_agent = LlmAgent(name='r', instruction={text!r})\n",
        encoding="utf-8",
    )
    model = model_of_folder(tmp_path)
    (agent,) = model.agents.values()
    assert [(r.key, r.optional) for r in model.reads(agent)] == [
        ("a", False),
        ("b", False),
        ("c", True),
        ("user:d", False),
    ]


def test_an_agent_in_no_app_gets_no_order(tmp_path: Path) -> None:
    (tmp_path / "lib.py").write_text(
        "from google.adk.agents import LlmAgent\n"
        "helper = LlmAgent(name='helper', instruction='Use {notes} and {nothing}.')\n"
        "writer = LlmAgent(name='writer', instruction='x', output_key='notes')\n",
        encoding="utf-8",
    )
    model = model_of_folder(tmp_path)
    assert model.apps == ()
    helper = agent_named(model, "helper")
    assert model.app_of(helper) is None
    notes = model.availability(helper, "notes")
    assert (notes.kind, notes.certain, notes.app) == ("maybe", False, None)
    nothing = model.availability(helper, "nothing")
    assert (nothing.kind, nothing.certain) == ("nowhere", False)


# --- the initial state: [tool.templating] initial-state, eval sets, create_session


def initial_config(tmp_path: Path, setting: str) -> LintConfig:
    from templating.linter.config import load_config

    (tmp_path / "pyproject.toml").write_text(f"[tool.templating]\ninitial-state = {setting}\n", encoding="utf-8")
    return load_config(path=tmp_path / "pyproject.toml")


def copy_case(case: str, tmp_path: Path) -> Path:
    import shutil

    target = tmp_path / case
    shutil.copytree(FIXTURES / case, target)
    return target


INITIAL = [
    # (id, the setting as TOML, a JSON file to write (name, text) or None, the keys expected for blog_pipeline)
    ("a-list-of-keys", '["critique", "user:name"]', None, {"critique", "user:name"}),
    ("a-json-file", '"state.json"', ("state.json", '{"critique": "none", "temp:x": 1}'), {"critique"}),
    ("a-replay-file", '"replay.json"', ("replay.json", '{"state": {"critique": ""}, "queries": ["hi"]}'), {"critique"}),
    ("a-table-by-folder", '{ "blog_writer" = ["critique"] }', None, {"critique"}),
    ("a-table-by-app-name", '{ "blog_pipeline" = ["critique"] }', None, {"critique"}),
]


@pytest.mark.parametrize(("setting", "file", "keys"), [c[1:] for c in INITIAL], ids=[c[0] for c in INITIAL])
def test_the_initial_state_setting(tmp_path: Path, setting: str, file: tuple[str, str] | None, keys: set[str]) -> None:
    folder = copy_case("blog_writer", tmp_path)
    if file is not None:
        (tmp_path / file[0]).write_text(file[1], encoding="utf-8")
    config = initial_config(tmp_path, setting)
    python, _ = files_of(folder)
    model = build(scan(python, root=str(tmp_path)), config, tmp_path)
    (app,) = model.apps
    initial = model.initial_state(app)
    assert initial.declared
    assert initial.keys == keys  # temp: keys dropped, as google-adk drops them from a new session
    writer = agent_named(model, "writer")
    assert model.availability(writer, "critique").kind == "given"


BAD_INITIAL = [
    # (id, the setting as TOML, what the error says)
    ("not-keys", "[1, 2]", "'initial-state' must hold state keys (non-empty strings), not 1"),
    ("an-empty-path", '""', "not an empty path"),
    ("a-number", "3", "'initial-state' must be a list of keys, a JSON file, or a table of those by app"),
    ("a-bad-table-value", "{ shop = 3 }", "'initial-state' of 'shop' must be a list of keys or a JSON file"),
]


@pytest.mark.parametrize(("setting", "message"), [c[1:] for c in BAD_INITIAL], ids=[c[0] for c in BAD_INITIAL])
def test_a_bad_initial_state_setting_is_one_config_error(tmp_path: Path, setting: str, message: str) -> None:
    with pytest.raises(LintConfigError, match=re.escape(message)):
        initial_config(tmp_path, setting)


BAD_FILES = [
    # (id, setting, the file written (or none), what the error names)
    ("missing-file", '"nowhere.json"', None, "'initial-state'"),
    ("not-json", '"state.json"', "{not json", "is not valid JSON"),
    ("not-an-object", '"state.json"', "[1, 2]", "must hold a JSON object"),
    ("an-unknown-app", '{ "no_such_app" = ["k"] }', None, "names the app 'no_such_app', which is not among"),
]


@pytest.mark.parametrize(("setting", "text", "message"), [c[1:] for c in BAD_FILES], ids=[c[0] for c in BAD_FILES])
def test_an_initial_state_that_cannot_be_read_is_one_config_error(
    tmp_path: Path, setting: str, text: str | None, message: str
) -> None:
    folder = copy_case("blog_writer", tmp_path)
    if text is not None:
        (tmp_path / "state.json").write_text(text, encoding="utf-8")
    config = initial_config(tmp_path, setting)
    python, _ = files_of(folder)
    with pytest.raises(LintConfigError, match=re.escape(message)):
        build(scan(python, root=str(tmp_path)), config, tmp_path)


def test_eval_sets_declare_the_state_of_their_app_only(tmp_path: Path) -> None:
    folder = copy_case("trip_planner", tmp_path)
    other = '{"eval_cases": [{"eval_id": "x", "sessionInput": {"appName": "someone_else", "state": {"budget": 1}}}]}'
    (folder / "eval" / "other.test.json").write_text(other, encoding="utf-8")
    camel = '{"evalCases": [{"evalId": "y", "sessionInput": {"appName": "trip_planner", "state": {"weather": "?"}}}]}'
    (folder / "eval" / "camel.test.json").write_text(camel, encoding="utf-8")
    old = '[{"name": "old", "data": [], "initial_session": {"state": {"plan": ""}, "app_name": "trip_planner"}}]'
    (folder / "eval" / "old.test.json").write_text(old, encoding="utf-8")
    model = model_of_folder(folder)
    (app,) = model.apps
    initial = model.initial_state(app)
    assert initial.keys == {"traveller", "weather", "plan"}
    assert sorted(os.path.basename(s.path) for s in initial.sources) == [
        "camel.test.json",
        "old.test.json",
        "trips.evalset.json",
    ]


def test_no_source_leaves_the_initial_state_undeclared() -> None:
    model = fixture_model("blog_writer")
    (app,) = model.apps
    initial = model.initial_state(app)
    assert (initial.declared, initial.keys, initial.sources) == (False, frozenset(), ())


def test_a_session_whose_state_is_known_only_at_run_time_leaves_it_open(tmp_path: Path) -> None:
    folder = copy_case("blog_writer", tmp_path)
    (folder / "main.py").write_text(
        "from google.adk.runners import Runner\nfrom .agent import root_agent\n\n"
        "async def main(service, state):\n"
        "    await service.create_session(app_name='blog', user_id='u', state=state)\n"
        "    runner = Runner(agent=root_agent, app_name='blog', session_service=service)\n",
        encoding="utf-8",
    )
    model = model_of_folder(folder)
    (app,) = model.apps
    initial = model.initial_state(app)
    assert (initial.declared, initial.open) == (True, True)
    found = model.availability(agent_named(model, "writer"), "critique")
    assert (found.kind, found.certain) == ("unknown", False)
    assert found.order_text.startswith("`critique` may be given by create_session(state=...) at")


# --- the shared corpus: every app builds, and the first turn runs what google-adk ran


CORPUS = shared_corpora()


def corpus_or_skip() -> Path:
    if CORPUS is None:
        reason = "the shared corpus (../shared/corpora) is absent"
        if os.environ.get("TEMPLATING_REQUIRE_CORPUS") == "1":
            pytest.fail(f"TEMPLATING_REQUIRE_CORPUS=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    return CORPUS


@functools.cache
def corpus_model() -> AgentModel:
    return model_of_folder(corpus_or_skip())


def test_every_corpus_app_builds() -> None:
    model = corpus_model()
    assert len(model.apps) >= 90
    for app in model.apps:
        assert app.root in app.agents
        for agent in app.agents:
            for read in model.reads(agent):
                model.availability(agent, read.key, app=app)  # never raises


# What google-adk 2.13 ran on each app's first turn with a fake model (/work/notes/adk-truth/corpus-runs.md, its
# "model calls" column, each agent once): (app folder or file under the corpus, the model calls in order).
FIRST_TURNS = [
    ("adk-samples/python/agents/llm-auditor/llm_auditor", ["critic_agent", "reviser_agent"]),
    ("adk-samples/python/agents/academic-research/academic_research", ["academic_coordinator"]),
    ("adk-samples/python/agents/travel-concierge/travel_concierge", ["root_agent"]),
    ("adk-samples/python/agents/financial-advisor/financial_advisor", ["financial_coordinator"]),
    ("adk-python/contributing/samples/simple_sequential_agent", ["roll_agent", "prime_agent"]),
    ("adk-python/contributing/samples/non_llm_sequential", ["sub_agent_1", "sub_agent_2"]),
    (
        "adk-python/contributing/samples/token_usage",
        [
            "roll_agent_with_openai",
            "roll_agent_with_claude",
            "roll_agent_with_litellm_claude",
            "roll_agent_with_gemini",
        ],
    ),
    (
        "adk-python/contributing/samples/workflow_agent_seq",
        ["CodeWriterAgent", "CodeReviewerAgent", "CodeRefactorerAgent"],
    ),
    ("adk-python/contributing/samples/hello_world_ma", ["root_agent"]),
    (
        "adk-docs/examples/python/agent-samples/youtube_shorts_assistant/loop_agent.py",
        ["ShortsScriptwriter", "ShortsVisualizer", "ConceptFormatter"],
    ),
    (
        "adk-docs/examples/python/snippets/agents/custom-agent/storyflow_agent.py",
        ["StoryGenerator", "Critic", "Reviser", "GrammarCheck", "ToneCheck"],
    ),
    ("adk-docs/examples/python/snippets/agents/workflow-agents/conditional-routing.py", ["extract_budget"]),
    (
        "adk-docs/examples/python/snippets/agents/workflow-agents/loop_agent_doc_improv_agent.py",
        ["InitialWriterAgent", "CriticAgent", "RefinerAgent"],
    ),
    (
        "adk-docs/examples/python/snippets/agents/workflow-agents/parallel_agent_web_research.py",
        ["RenewableEnergyResearcher", "EVResearcher", "CarbonCaptureResearcher", "SynthesisAgent"],
    ),
    (
        "adk-docs/examples/python/snippets/agents/workflow-agents/sequential_agent_code_development_agent.py",
        ["CodeWriterAgent", "CodeReviewerAgent", "CodeRefactorerAgent"],
    ),
]


def app_at(model: AgentModel, base: Path, where: str) -> App:
    target = base / where
    found = [
        app
        for app in model.apps
        if (Path(model.agents[app.root].call.file) == target if where.endswith(".py") else Path(app.folder) == target)
    ]
    assert len(found) == 1, [a.name for a in found]
    return found[0]


@pytest.mark.parametrize(("where", "calls"), FIRST_TURNS, ids=[w.rsplit("/", 1)[-1] for w, _ in FIRST_TURNS])
def test_the_first_turn_of_corpus_apps_runs_what_google_adk_ran(where: str, calls: list[str]) -> None:
    base = corpus_or_skip()
    model = corpus_model()
    app = app_at(model, base, where)
    assert [a.name for a in model.first_turn(app)] == calls


# The apps whose first turn google-adk ran without an error, their state empty (corpus-runs.md): no certain error
# is predicted for an agent of their first turn.
RAN_CLEAN = [where for where, _ in FIRST_TURNS if "storyflow" not in where]


@pytest.mark.parametrize("where", RAN_CLEAN, ids=[w.rsplit("/", 1)[-1] for w in RAN_CLEAN])
def test_no_certain_keyerror_where_google_adk_raised_none(where: str) -> None:
    base = corpus_or_skip()
    model = corpus_model()
    app = app_at(model, base, where)
    for agent in model.first_turn(app):
        for read in model.reads(agent):
            if not read.optional:
                found = model.availability(agent, read.key, app=app)
                assert not (found.certain and found.kind in ("later", "loop", "sibling", "nowhere")), found.order_text


def test_the_corpus_agent_tools_that_raised_are_predicted() -> None:
    """academic-research's AgentTools read the coordinator's own output_key: google-adk raised a KeyError when the
    model called them on the first turn (corpus-runs.md's probes); the model says `later`, not certain (the
    model may not call them)."""
    base = corpus_or_skip()
    model = corpus_model()
    app = app_at(model, base, "adk-samples/python/agents/academic-research/academic_research")
    for name in ("academic_websearch_agent", "academic_newresearch_agent"):
        agent = next(model.agents[a] for a in app.agents if model.agents[a].name == name)
        found = model.availability(agent, "seminal_paper", app=app)
        assert (found.kind, found.certain) == ("later", False)


# --- the truth: each fixture app run through google-adk 2.13 with a fake model (tests/adk_fake_run.py)

TRUTH_APPS = [
    # (agents folder under the fixtures, app)
    ("", "blog_writer"),
    ("", "podcast_studio"),
    ("", "market_research"),
    ("", "essay_loop"),
    ("", "support_desk"),
    ("", "story_flow"),
    ("", "trip_planner"),
    ("", "research_desk"),
    ("", "keyed_notes"),
    ("", "yaml_pipeline"),
    ("shop_duo", "shop_a"),
    ("shop_duo", "shop_b"),
]
_RAISES = ("later", "loop", "sibling", "nowhere")


def predicted_error(model: AgentModel, app: App) -> tuple[str, str] | None:
    """The first error google-adk is certain to raise on `app`'s first turn, with its declared initial state:
    (the exception's type, its message)."""
    for agent in model.first_turn(app):
        for read in model.reads(agent):
            found = model.availability(agent, read.key, app=app)
            if not read.optional and found.certain and found.kind in _RAISES:
                return "KeyError", f"\"Context variable not found: `{read.key}` in agent '{agent.name}'.\""
        schema = model.enforced_schema(agent, app=app)
        out = agent.call.output_key
        if schema is not None and out is not None and out.key is not None and schema.declares(out.key) is False:
            fields = sorted(schema.schema.fields or ())
            message = (
                f"Key '{out.key}' is not declared in state schema '{schema.schema.model}'. Declared fields: {fields}"
            )
            return "StateSchemaError", message
    return None


@pytest.mark.slow
@pytest.mark.parametrize(("folder", "name"), TRUTH_APPS, ids=[name for _, name in TRUTH_APPS])
def test_google_adk_raises_what_the_model_predicts(tmp_path: Path, folder: str, name: str) -> None:
    import json
    import subprocess
    import sys

    require_adk()
    agents_dir = FIXTURES / folder if folder else FIXTURES
    model = fixture_model(folder or name)
    app = model.app_named(name)
    assert app is not None
    initial = model.initial_state(app)
    state = {key: "x" for key in initial.keys}
    script = Path(__file__).resolve().parent / "adk_fake_run.py"
    done = subprocess.run(
        [sys.executable, str(script), str(agents_dir), name, json.dumps(state)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        timeout=600,
    )
    ran = json.loads(done.stdout.splitlines()[-1])
    predicted = predicted_error(model, app)
    error = ran["error"]
    if predicted is not None:
        assert error is not None, f"google-adk ran {ran['calls']} without the predicted {predicted}"
        assert (error["type"], error["message"]) == predicted
    elif error is not None:  # only where the model says it may be missing: never for a key it says is there
        assert error["type"] == "KeyError", error
        agent = next(a for a in model.agents.values() if f"in agent '{a.name}'" in error["message"])
        key = error["message"].split("`")[1]
        assert model.availability(agent, key, app=app).kind not in ("given", "before"), error


# --- a model built again after an edit takes the agents made from the very same facts (`build(before=...)`)

REBUILT = [
    # (id, the file edited (under agent_apps/), the app folder whose agents the edit leaves as they were)
    ("a-tool-module", "support_desk/tools.py", "essay_loop"),
    ("a-callback-module", "support_desk/callbacks.py", "blog_writer"),
    ("a-sub-agent-module", "blog_writer/sub_agents/critic.py", "support_desk"),
    ("a-prompt-module", "research_desk/prompt.py", "podcast_studio"),
    ("a-workflow-app", "story_flow/agent.py", "research_desk"),
    ("a-custom-agent-app", "trip_planner/agent.py", "shop_duo"),
    ("an-agent-config-callback", "yaml_pipeline/callbacks.py", "keyed_notes"),
]


@pytest.mark.parametrize(("edited", "untouched"), [c[1:] for c in REBUILT], ids=[c[0] for c in REBUILT])
def test_a_model_built_after_an_edit_equals_a_fresh_one_and_keeps_the_untouched_agents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edited: str, untouched: str
) -> None:
    root = tmp_path / "apps"
    shutil.copytree(FIXTURES, root)
    (root / "pyproject.toml").write_text("[tool.templating]\n", encoding="utf-8")
    monkeypatch.chdir(root)
    project = Project(root)
    project.lint(["."])
    before = project.agent_model
    text = "# edited\n" + (root / edited).read_text(encoding="utf-8")  # every place in the file moves
    project.update(edited, text)
    model = project.agent_model
    fresh = Project(root, overrides={edited: text})
    fresh.lint(["."])
    assert [repr(a) for a in model.agents.values()] == [repr(a) for a in fresh.agent_model.agents.values()]
    assert [repr(a) for a in model.apps] == [repr(a) for a in fresh.agent_model.apps]
    assert [model.reads(a) for a in model.agents.values()] == [
        fresh.agent_model.reads(a) for a in fresh.agent_model.agents.values()
    ]
    kept = [a for a in model.graph.built.values() if a.path.startswith(f"{untouched}/")]
    assert kept
    assert all(before.graph.built.get(a.id) is a for a in kept), "the agents of an app the edit leaves are taken"
    assert not any(before.graph.built.get(a.id) is a for a in model.agents_in(edited)), "an edited file's are made"


def test_an_agent_taken_from_the_model_before_is_in_the_order_a_fresh_build_gives(tmp_path: Path) -> None:
    """`c` was made first for `w`; once `w` no longer runs it, a fresh build makes it for `a`, before `z`: so does
    the build that takes `a` (and `c`) from the model before, everything else being the very same facts."""
    head = "from google.adk.agents import LlmAgent, SequentialAgent\n"
    files = {
        "app/__init__.py": "",
        "app/a_w.py": head + "from .c import c\n\nw = SequentialAgent(name='w', sub_agents=[c])\n",
        "app/b_a.py": head + "from .c import c\n\na = SequentialAgent(name='a', sub_agents=[c])\n"
        "z = LlmAgent(name='z', model='m', instruction='Use {topic}.')\n",
        "app/c.py": head + "\nc = LlmAgent(name='c', model='m', instruction='Note {topic}.', output_key='topic')\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    found = scan(sorted(str(tmp_path / name) for name in files), root=str(tmp_path), keep_going=True)
    before = build(found, LintConfig(root=tmp_path), tmp_path)
    assert [a.name for a in before.agents.values()] == ["w", "c", "a", "z"]
    edited = dataclasses.replace(
        found,
        agents=[dataclasses.replace(a, sub_agents=()) if a.name == "w" else a for a in found.agents],
    )
    model = build(edited, LintConfig(root=tmp_path), tmp_path, before=before)
    fresh = build(edited, LintConfig(root=tmp_path), tmp_path)
    assert [a.name for a in fresh.agents.values()] == ["w", "a", "c", "z"]
    assert [repr(a) for a in model.agents.values()] == [repr(a) for a in fresh.agents.values()]
    taken = [a.name for a in model.agents.values() if before.graph.built.get(a.id) is a]
    assert taken == ["a", "c", "z"]


# --- the apps an edit does not touch are taken whole from the model before (`build(before=...)`, `find_apps`)


def assert_fresh(model: AgentModel, fresh: AgentModel) -> None:
    """`model` (built from the model before an edit) is what a fresh build of the same scan gives."""
    assert [repr(a) for a in model.agents.values()] == [repr(a) for a in fresh.agents.values()]
    assert [repr(a) for a in model.apps] == [repr(a) for a in fresh.apps]
    assert [model.tree_root(a).id for a in model.agents] == [fresh.tree_root(a).id for a in fresh.agents]
    assert [model.reads(a) for a in model.agents] == [fresh.reads(a) for a in fresh.agents]
    assert [model.initial_state(a) for a in model.apps] == [fresh.initial_state(a) for a in fresh.apps]
    assert [repr(model.apps_of(a)) for a in model.agents] == [repr(fresh.apps_of(a)) for a in fresh.agents]


def assert_taken(before: AgentModel, model: AgentModel, taken: tuple[str, ...], made: tuple[str, ...]) -> None:
    was = {app.name: app for app in before.apps}
    now = {app.name: app for app in model.apps}
    assert {name for name, app in now.items() if was.get(name) is app} == set(taken)
    assert set(made) <= set(now) - set(taken)


@pytest.mark.parametrize("edit", model_edits.EDITS, ids=[e.id for e in model_edits.EDITS])
def test_an_edit_takes_the_apps_it_does_not_touch_and_builds_what_a_fresh_build_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: model_edits.Edit
) -> None:
    monkeypatch.chdir(tmp_path)
    _, before, model, fresh = model_edits.edited(tmp_path, edit)
    assert_fresh(model, fresh)
    assert_taken(before, model, edit.taken, edit.made)


@pytest.mark.parametrize(
    ("change", "taken", "made"), [c[1:] for c in model_edits.SCAN_EDITS], ids=[c[0] for c in model_edits.SCAN_EDITS]
)
def test_after_an_edit_of_the_facts_of_a_scan_the_model_is_a_fresh_one(
    tmp_path: Path, change: Any, taken: tuple[str, ...], made: tuple[str, ...]
) -> None:
    """Every other fact of the scan is the very same object: only what names an app, an agent's parent (so its tree
    root, whose global instruction it reads), a fact looked up by an agent below one read first, tells them apart."""
    found = model_edits.scanned(tmp_path)
    config = LintConfig(root=tmp_path)
    before = build(found, config, tmp_path)
    for agent in before.agents:  # (as the linter asks: the reads worked out can be taken)
        before.reads(agent)
    edited = change(found)
    model = build(edited, config, tmp_path, before=before)
    assert_fresh(model, build(edited, config, tmp_path))
    assert_taken(before, model, taken, made)


def test_models_built_one_from_another_over_many_edits_stay_fresh(tmp_path: Path) -> None:
    """Each edit's build takes from the one before, itself built from the one before it (what an editor does)."""
    found = model_edits.scanned(tmp_path)
    config = LintConfig(root=tmp_path)
    model = build(found, config, tmp_path)
    for _, change, _, _ in model_edits.SCAN_EDITS:
        for agent in model.agents:
            model.reads(agent)
        found = change(found)
        model = build(found, config, tmp_path, before=model)
        assert_fresh(model, build(found, config, tmp_path))
