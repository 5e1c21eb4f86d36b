"""`templating preview`: each agent's first-turn request, compared byte for byte with what google-adk 2.13 really
sends a recording model (tests/adk_truth.py) for the same state, on apps written in their authors' idioms
(tests/fixtures/preview_apps/); the command's formats, messages and exit codes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import linked_project
import pytest
from conftest import installed

if not installed("google.adk"):
    if os.environ.get("TEMPLATING_REQUIRE_ADK") == "1":
        pytest.fail("TEMPLATING_REQUIRE_ADK=1 but google-adk is not installed (pip install '.[adk]')", pytrace=False)
    pytest.skip("google-adk is not installed (pip install '.[adk]')", allow_module_level=True)

import adk_truth
from preview_edits import EDITS

from templating.cli import main
from templating.preview import AgentPreview, PreviewError, build_preview
from templating.preview.load import load_app

APPS = Path(__file__).resolve().parent / "fixtures" / "preview_apps"

# Each app, a state that supplies every key it requires, and the scripted turns that reach the agents only a
# model's choice runs (a transfer, an AgentTool call): agent -> the function its model calls on its first call.
CASES: dict[str, tuple[dict[str, Any], list[dict[str, tuple[str, dict[str, Any]]]]]] = {
    "concierge": (
        {"app:city": "Lyon", "user:name": "Ada"},
        [
            {},
            {"concierge": ("transfer_to_agent", {"agent_name": "greeting_agent"})},
            {"concierge": ("transfer_to_agent", {"agent_name": "booking_agent"})},
        ],
    ),
    "story_loop": ({}, [{}]),
    "research": ({"topic": "solar panels"}, [{}]),
    "tutor_providers": ({"user:name": "Ada", "level": "advanced", "topics": ["loops", "lists"]}, [{}]),
    "shop_workflow": ({"app:shop_name": "Acme", "user:name": "Ada"}, [{}]),
    "travel_tools": (
        {"user:name": "Ada", "origin": "LYS", "flight": "AF123"},
        [
            {"planning_agent": ("flight_search_agent", {"request": "hello"})},
            {"planning_agent": ("seat_selection_agent", {"request": "hello"})},
        ],
    ),
    "support_yaml": (
        {"app:product": "Widgets", "plan": "pro", "known_issue": "none"},
        [
            {},
            {"support_router": ("transfer_to_agent", {"agent_name": "billing_agent"})},
            {"support_router": ("transfer_to_agent", {"agent_name": "tech_agent"})},
        ],
    ),
}


def _truth(target: str, state: dict[str, Any], scripts: list[dict[str, Any]]) -> dict[str, Any]:
    """Each agent's first request over the scripted turns (the first turn that reaches it)."""
    loaded = load_app(target)
    first: dict[str, Any] = {}
    for script in scripts:
        requests, error = adk_truth.run(loaded.root, state, script=script, plugins=list(loaded.plugins))
        assert error is None, error
        for name, request in requests.items():
            first.setdefault(name, request)
    return first


def _check_exact(agent: AgentPreview, request: Any, objects: dict[str, Any]) -> None:
    assert agent.error is None
    assert agent.system_instruction == request.config.system_instruction
    adk_agent = objects[agent.agent]
    if agent.instruction_turn is None:  # google-adk moves the instruction to a user turn only beside a static one
        assert not (adk_agent.static_instruction and adk_agent.instruction)
    else:
        assert agent.instruction_turn in adk_truth.instruction_turns(request)
    assert agent.model == request.model
    assert list(agent.tools) == adk_truth.tool_names(request)


@pytest.mark.parametrize("app", sorted(CASES))
def test_the_run_preview_is_what_google_adk_sends(app: str) -> None:
    state, scripts = CASES[app]
    target = str(APPS / app)
    preview = build_preview(target, state=state, run=True)
    truth = _truth(target, state, scripts)
    objects = {a.name: a for a in adk_truth.agents(load_app(target).root)}
    assert [a.agent for a in preview.agents if a.agent in truth] == [a.agent for a in preview.agents]
    for agent in preview.agents:
        _check_exact(agent, truth[agent.agent], objects)
        assert agent.exact
        assert agent.keys("missing") == []


# --- the command ----------------------------------------------------------------------------------------------------


def _files(folder: Path) -> dict[str, float]:
    return {str(path): path.stat().st_mtime for path in folder.rglob("*")}


def test_json_lists_each_agent_in_run_order_with_its_request_and_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"topic": "tides"}), encoding="utf-8")
    assert main(["preview", str(APPS / "research"), "--run", "--state", str(state), "--format", "json"]) == 0
    out, err = capsys.readouterr()
    rows = json.loads(out)
    assert [row["agent"] for row in rows] == ["RenewableEnergyResearcher", "EVResearcher", "SynthesisAgent"]
    first, second, last = rows
    assert first["system_instruction"].startswith("You are an AI Research Assistant specializing in energy.\n")
    assert "'tides'" in first["system_instruction"]
    assert first["instruction_turn"] is None
    assert first["tools"] == ["google_search"]
    assert first["keys"] == {
        "read": ["topic"],
        "given": ["topic"],
        "supplied": {},
        "missing": [],
        "absent_optional": [],
    }
    # a parallel sibling's output is not there yet (a race google-adk loses); after the ParallelAgent, both are
    assert second["keys"]["absent_optional"] == ["renewable_energy_result"]
    assert last["keys"]["supplied"] == {
        "renewable_energy_result": "RenewableEnergyResearcher",
        "ev_technology_result": "EVResearcher",
    }
    assert "\u27e8output of EVResearcher\u27e9" in last["system_instruction"]
    assert (
        err
        == "templating preview: importing "
        + str(APPS / "research")
        + ": this runs the project's code, as `adk run` does\n"
    )


def test_a_key_nobody_supplies_is_a_visible_marker_and_the_command_says_which(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["preview", str(APPS / "travel_tools"), "--run", "--agent", "seat_selection_agent"]) == 0
    out, err = capsys.readouterr()
    assert "\u2502 \u27e8missing: flight\u27e9\n" in out
    assert "flight (MISSING: nobody supplies it, shown as \u27e8missing: flight\u27e9)" in out
    assert "nobody supplies flight (read by seat_selection_agent): the first turn fails there at run time" in err
    # and google-adk does fail there: the seat agent's first request raises the KeyError the preview predicts
    loaded = load_app(str(APPS / "travel_tools"))
    _, error = adk_truth.run(
        loaded.root,
        {"user:name": "Ada", "origin": "LYS"},
        script={"planning_agent": ("seat_selection_agent", {"request": "hello"})},
    )
    assert isinstance(error, KeyError)
    assert "`flight`" in str(error)


def test_markdown_fences_each_text_exactly(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["preview", str(APPS / "concierge"), "--run", "--format", "markdown", "--agent", "booking_agent"]) == 0
    out = capsys.readouterr().out
    preview = build_preview(str(APPS / "concierge"), run=True, agent="booking_agent").agents[0]
    assert f"```text\n{preview.system_instruction}\n```" in out
    assert f"```text\n{preview.instruction_turn}\n```" in out
    assert "**Tools:** `transfer_to_agent`, `get_current_time`" in out


APP_WITHOUT_ROOT = "from google.adk.agents import Agent\nhelper = Agent(name='helper', instruction='hi')\n"


@pytest.mark.parametrize(
    ("argv", "files", "message"),
    [
        (["preview", "{tmp}/nowhere", "--run"], {}, "{tmp}/nowhere: no such file or folder"),
        (["preview", "{tmp}/app.py", "--run"], {"app.py": APP_WITHOUT_ROOT}, "{tmp}/app.py: no root_agent in app"),
        (
            ["preview", "{tmp}/broken.py", "--run"],
            {"broken.py": "root_agent = (\n"},
            "cannot import {tmp}/broken.py: SyntaxError",
        ),
        (["preview", "{tmp}", "--run"], {"notes.txt": "x"}, "{tmp}: no agent.py, __init__.py or root_agent.yaml"),
        (
            ["preview", "{tmp}/app.py:nope", "--run"],
            {"app.py": APP_WITHOUT_ROOT},
            "{tmp}/app.py:nope: app has no attribute 'nope'",
        ),
        (
            ["preview", "{app}", "--run", "--state", "{tmp}/s.json"],
            {"s.json": "[1, 2]"},
            "state must be a JSON object (key -> value), not an array",
        ),
        (["preview", "{app}", "--run", "--agent", "nobody"], {}, "no agent named 'nobody' in {app}"),
    ],
    ids=[
        "no-such-target",
        "no-root-agent",
        "syntax-error",
        "not-an-app-folder",
        "no-attribute",
        "state-not-object",
        "no-such-agent",
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], files: dict[str, str], message: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    app = str(APPS / "concierge")
    before, apps_before = _files(tmp_path), _files(APPS)
    assert main([a.format(tmp=tmp_path, app=app) for a in argv]) == 2
    out, err = capsys.readouterr()
    errors = [line for line in err.splitlines() if line.startswith("templating: error:")]
    assert out == ""
    assert len(errors) == 1, err
    assert message.format(tmp=tmp_path, app=app) in errors[0]
    assert _files(tmp_path) == before
    assert _files(APPS) == apps_before


@pytest.mark.parametrize(
    ("target", "files", "message"),
    [
        ("{tmp}/nowhere", {}, "{tmp}/nowhere: no such file or folder"),
        ("{tmp}/app.py", {"app.py": APP_WITHOUT_ROOT}, "{tmp}/app.py: no root_agent in app"),
        ("{tmp}/bad.py", {"bad.py": "root_agent = (\n"}, "bad.py"),
        ("{tmp}", {"notes.txt": "x"}, "{tmp}: no agent.py, __init__.py or root_agent.yaml"),
        ("{tmp}/app.py:nope", {"app.py": APP_WITHOUT_ROOT}, "no agent bound to 'nope'"),
    ],
    ids=["no-such-target", "no-root-agent", "syntax-error", "not-an-app-folder", "no-attribute"],
)
def test_bad_input_read_from_the_code_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str, files: dict[str, str], message: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    before = _files(tmp_path)
    assert main(["preview", target.format(tmp=tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1, err
    assert err.startswith("templating: error: ")
    assert message.format(tmp=tmp_path) in err
    assert _files(tmp_path) == before


def test_the_preview_package_imports_google_adk_only_when_a_preview_is_made() -> None:
    code = (
        "import sys, templating.preview, templating.preview.formats, templating.cli.preview; "
        "print(sorted(m for m in sys.modules if m.startswith('google.adk')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


# --- the shared corpus: public apps nobody here wrote ---------------------------------------------------------------


def _corpora() -> Path | None:
    given = os.environ.get("TEMPLATING_CORPORA")
    if given:
        return Path(given)
    for folder in Path(__file__).resolve().parents:
        if (folder / "shared" / "corpora" / "adk-samples").is_dir():
            return folder / "shared" / "corpora"
    return None


CORPORA = _corpora()


def corpus_app_or_skip(app: str) -> Path:
    """The corpus app `app` (a path below the corpus); the test skips without it, or fails under
    TEMPLATING_REQUIRE_CORPUS=1."""
    if CORPORA is None or not (CORPORA / app).exists():
        reason = f"the shared corpus is absent (no {app}; set TEMPLATING_CORPORA)"
        if os.environ.get("TEMPLATING_REQUIRE_CORPUS") == "1":
            pytest.fail(f"TEMPLATING_REQUIRE_CORPUS=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    return CORPORA / app


# The corpus apps that import with google-adk 2.13 and no other package (apps needing LiteLLM, Vertex AI, MCP, ... are
# left out), each as `adk run` takes it: a package folder, or a docs snippet file holding root_agent.
CORPUS_APPS = [
    *(f"adk-samples/python/agents/{app}" for app in ("academic-research/academic_research",)),
    *(f"adk-samples/python/agents/{app}" for app in ("financial-advisor/financial_advisor", "llm-auditor/llm_auditor")),
    "adk-samples/python/agents/marketing-agency/marketing_agency",
    *(
        f"adk-python/contributing/samples/{app}"
        for app in (
            "adk_triaging_agent",
            "artifact_save_text",
            "callbacks",
            "code_execution",
            "fields_output_schema",
            "fields_planner",
            "generate_image",
            "google_search_agent",
            "hello_world",
            "hello_world_ma",
            "human_in_loop",
            "live_bidi_streaming_agent",
            "non_llm_sequential",
            "quickstart",
            "session_state_agent",
            "simple_sequential_agent",
            "telemetry",
            "workflow_agent_seq",
        )
    ),
    "adk-docs/examples/python/agent-samples/youtube_shorts_assistant",
    "adk-docs/examples/python/agent-samples/youtube_shorts_assistant/loop_agent.py",
    "adk-docs/examples/python/snippets/get-started/google_search_agent",
    "adk-docs/examples/python/snippets/get-started/multi_tool_agent",
    "adk-docs/examples/python/snippets/runtime/triggers/event_processing_agent",
    *(
        f"adk-docs/examples/python/snippets/agents/workflow-agents/{name}.py"
        for name in (
            "conditional-routing",
            "loop_agent_doc_improv_agent",
            "parallel_agent_web_research",
            "sequential_agent_code_development_agent",
        )
    ),
]
# Left out: adk-python/contributing/samples/memory, whose instruction shows the time its before_agent_callback
# writes, so no two runs agree.


@pytest.mark.slow
@pytest.mark.parametrize("app", CORPUS_APPS)
def test_the_run_preview_of_a_corpus_app_is_what_google_adk_sends(app: str) -> None:
    """Every agent google-adk reaches on a first turn (and by each transfer or AgentTool call) gets, byte for byte,
    the system instruction and instruction turn the run preview shows, whenever it says it is exact; an agent the
    preview shows a required key missing for never gets its request built (google-adk raises first). The preview
    read from the code shows the same agents, and the same request for each agent it says is exact."""
    corpus_app_or_skip(app)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(
        [sys.executable, str(Path(__file__).parent / "adk_truth.py"), str(CORPORA / app)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    _, *rows = json.loads(result.stdout.splitlines()[-1])
    assert rows, "no LlmAgent previewed"
    for row in rows:
        if row["ran"] and row["exact"]:
            assert all(row[part] for part in ("system_instruction", "instruction_turn", "model", "tools")), row
            assert row["missing"] == [], row
        # read from the code (nothing of the app run): the same agents, and the same request wherever it says exact
        assert row["static"], row
        if row["static_exact"]:
            assert row["static_same"], row
        else:
            assert row["static_notes"], row
    assert any(row["ran"] for row in rows)


# --- read from the code (no --run): the agent model's facts as google-adk objects -----------------------------------

# The agents whose preview read from the code cannot be exact, and why (each says so in its notes).
NOT_EXACT_STATICALLY = {
    ("story_loop", "InitialWriterAgent"): "`initial_topic` (by before_agent_callback set_initial_topic) is set at run",
    ("tutor_providers", "planner"): "its instruction is lesson_plan: a function google-adk calls (a provider)",
}


@pytest.mark.parametrize("app", sorted(CASES))
def test_the_preview_read_from_the_code_is_the_run_preview(app: str) -> None:
    """Without --run no code of the app runs, yet every agent whose instruction the agent model reads gets the same
    system instruction, instruction turn and tools as the imported app, for the same state; the others say why."""
    state, _ = CASES[app]
    target = str(APPS / app)
    static = build_preview(target, state=state)
    run = build_preview(target, state=state, run=True)
    assert static.mode == "static"
    assert [(a.agent, a.path, a.reached) for a in static.agents] == [(a.agent, a.path, a.reached) for a in run.agents]
    for read, ran in zip(static.agents, run.agents, strict=True):
        why = NOT_EXACT_STATICALLY.get((app, read.agent))
        if why is None:
            assert read.exact, read.notes
            assert read.system_instruction == ran.system_instruction
            assert read.instruction_turn == ran.instruction_turn
            assert read.tools == ran.tools
            assert read.model == ran.model
            assert [(r.key, r.source, r.by, r.value) for r in read.reads] == [
                (r.key, r.source, r.by, r.value) for r in ran.reads
            ]
        else:
            assert not read.exact
            assert any(why in note for note in read.notes), read.notes


def test_the_preview_read_from_the_code_runs_none_of_it(tmp_path: Path) -> None:
    """An app whose import would fail (it exits, and raises at import) is still previewed from its code."""
    app = tmp_path / "shop"
    app.mkdir()
    (app / "__init__.py").write_text("from . import agent\n", encoding="utf-8")
    (app / "agent.py").write_text(
        "import sys\nfrom google.adk.agents import Agent\n"
        "sys.exit('this app must not be imported by a preview')\n"
        "root_agent = Agent(name='clerk', model='gemini-2.5-flash', instruction='Serve {user:name}.')\n",
        encoding="utf-8",
    )
    preview = build_preview(str(app), state={"user:name": "Ada"})
    assert preview.agents[0].system_instruction == 'Serve Ada.\n\nYou are an agent. Your internal name is "clerk".'
    with pytest.raises(PreviewError, match="its code called exit"):
        build_preview(str(app), state={}, run=True)


@pytest.mark.skipif(not hasattr(os, "symlink") or os.name != "posix", reason="symbolic links")
def test_the_preview_reads_an_app_module_in_a_linked_folder_as_python_imports_it(tmp_path: Path) -> None:
    """`shop/sub` -> `../shared`, whose tool calls `remember` from `..memory` (`shop.memory` to Python): the preview
    reads the linked folder's modules as the app's and finds the tool's write where google-adk makes it; the first
    turn still misses `topic` (the tool runs after the instruction is read: run with google-adk, a KeyError)."""
    files = {
        "pyproject.toml": "[project]\nname = 'shop'\n",
        "shop/__init__.py": "from . import agent\n",
        "shop/agent.py": linked_project.AGENT,
        "shop/memory.py": linked_project.MEMORY,
        "memory.py": linked_project.FILES["memory.py"],
        "shared/__init__.py": "",
        "shared/tools.py": linked_project.TOOLS,
    }
    linked_project.write_linked(tmp_path, files=files, link="shop/sub", to="../shared")
    from templating.preview.static import read_app

    static = read_app(str(tmp_path / "shop"))
    writes = static.model.writers("topic", static.app)
    assert [(w.how, w.path) for w in writes] == [("tool note_topic", str(tmp_path / "shop/memory.py"))]
    preview = build_preview(str(tmp_path / "shop"), state={})
    assert preview.agents[0].system_instruction.startswith("Talk about \u27e8missing: topic\u27e9.")


@pytest.mark.skipif(not hasattr(os, "symlink") or os.name != "posix", reason="symbolic links")
def test_the_preview_reads_no_linked_folder_holding_the_app_and_bounds_the_linked_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A link to a folder holding the app (`shop/up` -> `..`) adds none of the project's files to the app's; the
    files of the linked folders count towards the limit of an app's files."""
    import templating.preview.static as static

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'shop'\n", encoding="utf-8")
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop/__init__.py").write_text("from . import agent\n", encoding="utf-8")
    (tmp_path / "shop/agent.py").write_text(
        "from google.adk.agents import Agent\nroot_agent = Agent(name='clerk', model='m', instruction='Hi.')\n",
        encoding="utf-8",
    )
    (tmp_path / "vendored").mkdir()
    for i in range(9):  # within the limit alone, over it with the app's two
        (tmp_path / f"vendored/m{i}.py").write_text("X = 1\n", encoding="utf-8")
    (tmp_path / "shop/up").symlink_to("..")
    monkeypatch.setattr(static, "MAX_FILES", 10)
    assert sorted(Path(name).name for name in static.read_app(str(tmp_path / "shop")).sources) == [
        "__init__.py",
        "agent.py",
    ]
    (tmp_path / "shop/vendor").symlink_to("../vendored")
    with pytest.raises(PreviewError, match="more than 10 Python files with its linked folders"):
        static.read_app(str(tmp_path / "shop"))


@pytest.mark.parametrize("app", ["concierge", "shop_workflow", "story_loop"])
def test_what_each_agent_sees_is_kept_in_a_snapshot(app: str, preview_snapshot: Any, snapshot: Any) -> None:
    """This project's own use of the preview_snapshot fixture (snapshots/tests/test_preview/): a change to what
    any agent of these apps sees, in google-adk or here, fails this test with a diff."""
    state, _ = CASES[app]
    assert preview_snapshot(f"tests/fixtures/preview_apps/{app}", state) == snapshot


def test_a_preview_after_an_edit_is_the_fresh_preview_of_the_edited_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Previews are kept by everything they are made of: an unchanged app is not assembled again, and an edit
    (unsaved, as an editor gives it) or another state always gives what a fresh preview gives."""
    import templating.preview.static
    from templating.preview.build import clear_cache

    app = tmp_path / "concierge"
    shutil.copytree(APPS / "concierge", app)
    made = []
    real = templating.preview.static.adk_tree
    monkeypatch.setattr(
        templating.preview.static, "adk_tree", lambda static, **options: made.append(1) or real(static, **options)
    )
    edits = {str(app / "agent.py"): (app / "agent.py").read_text(encoding="utf-8").replace("courteous", "brief")}

    def read(path: str) -> str:
        return edits.get(path) or Path(path).read_text(encoding="utf-8")

    clear_cache()
    first = build_preview(str(app)).to_json()
    assert build_preview(str(app)).to_json() == first
    assert len(made) == 1  # the same inputs: kept
    edited = build_preview(str(app), read=read).to_json()
    lyon = build_preview(str(app), state={"app:city": "Lyon"}).to_json()
    paris = build_preview(str(app), state={"app:city": "Paris"}).to_json()
    assert len(made) == 4
    assert "Be brief." in edited[0]["system_instruction"]
    assert "Lyon" in lyon[0]["system_instruction"]
    assert "Paris" in paris[0]["system_instruction"]
    clear_cache()
    assert build_preview(str(app), read=read).to_json() == edited
    assert build_preview(str(app)).to_json() == first
    assert build_preview(str(app), state={"app:city": "Paris"}).to_json() == paris


@pytest.mark.parametrize("kind", sorted(EDITS))
def test_after_an_edit_only_what_it_touches_is_assembled_again_and_the_preview_is_the_fresh_one(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each agent's request is kept between previews by all google-adk's processors read for it: after an edit
    (unsaved, as an editor gives it) the preview equals a fresh one of the edited text, an edit of one agent's
    instruction assembles that agent's request only, and undoing the edit gives the first preview again."""
    import templating.preview.walk
    from templating.preview.build import clear_cache

    edit = EDITS[kind]
    app = tmp_path / edit.app
    shutil.copytree(APPS / edit.app, app)
    path = app / edit.file
    edited = {str(path): edit.apply(path.read_text(encoding="utf-8"))}

    def read(file: str) -> str:
        return edited.get(file) or Path(file).read_text(encoding="utf-8")

    assembled: list[str] = []
    real = templating.preview.walk.assemble

    async def counted(agent: Any, *args: Any, **kwargs: Any) -> Any:
        assembled.append(agent.name)
        return await real(agent, *args, **kwargs)

    clear_cache()
    first = build_preview(str(app)).to_json()
    monkeypatch.setattr(templating.preview.walk, "assemble", counted)
    after = build_preview(str(app), read=read).to_json()
    if edit.assembled is not None:
        assert set(assembled) == edit.assembled
    assert assembled, "the edit changed nothing assembled"
    clear_cache()
    assert after == build_preview(str(app), read=read).to_json()
    assembled.clear()
    assert build_preview(str(app)).to_json() == first  # the edit undone
    if edit.assembled is not None:
        assert set(assembled) == edit.assembled


@pytest.mark.slow
def test_after_edits_of_a_corpus_app_the_preview_is_the_fresh_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """On adk-samples' travel-concierge (21 agents, real code): unsaved edits of the root's prompt and of a
    sub-agent's assemble only that agent's request again, and each preview is what a fresh one gives."""
    import templating.preview.walk
    from templating.preview.build import clear_cache

    app = "adk-samples/python/agents/travel-concierge"
    corpus_app_or_skip(app)
    target = (CORPORA / app / "travel_concierge").resolve()
    root_prompt, inspiration = target / "prompt.py", target / "sub_agents" / "inspiration" / "prompt.py"
    edits = [
        (root_prompt, "- Please use only the agents", "- Please use only, always, the agents", "root_agent"),
        (inspiration, "You are travel inspiration agent", "You are the travel inspiration agent", "inspiration_agent"),
    ]
    assembled: list[str] = []
    real = templating.preview.walk.assemble

    async def counted(agent: Any, *args: Any, **kwargs: Any) -> Any:
        assembled.append(agent.name)
        return await real(agent, *args, **kwargs)

    clear_cache()
    build_preview(str(target))
    monkeypatch.setattr(templating.preview.walk, "assemble", counted)
    texts: dict[str, str] = {}
    for path, old, new, agent in edits:
        text = path.read_text(encoding="utf-8")
        assert old in text
        texts[str(path)] = text.replace(old, new, 1)

        def read(file: str) -> str:
            return texts.get(file) or Path(file).read_text(encoding="utf-8")

        assembled.clear()
        after = build_preview(str(target), read=read).to_json()
        assert set(assembled) == {agent}
        assert any(new in (a["system_instruction"] or "") for a in after)
        clear_cache()
        assert after == build_preview(str(target), read=read).to_json()


_WARM_UP_RACE = """
import os, sys, threading, time
root, delay = sys.argv[1], float(sys.argv[2])
os.chdir(root)
from templating.linter.engine import Project
from templating.preview import PreviewError
from templating.preview.build import import_adk
from templating.preview.shared import Known, preview_from
project = Project(root)
project.read_context()
known = Known(project, project.root, project.config, project.scan, project.agent_model, {}, dict(project.overrides))
threading.Thread(target=import_adk, name="warm-up").start()  # as the language server warms up at a first code lens
time.sleep(delay)
try:
    print(len(preview_from(known, os.path.join(root, "fomc_research")).agents))
except PreviewError as exc:
    print(exc)
"""


@pytest.mark.slow
def test_a_preview_made_while_google_adk_is_being_imported_is_whole(tmp_path: Path) -> None:
    """The language server imports google-adk on a thread at its first code lens; a preview asked for meanwhile
    (taken from the project it knows, so made at once) used to meet a module that thread was still importing
    ("cannot import name ... from partially initialized module") and answer no app. Each run is a fresh process,
    the preview begun at another moment of the import."""
    app = "adk-samples/python/agents/fomc-research"
    corpus_app_or_skip(app)
    root = tmp_path / "fomc-research"
    shutil.copytree(CORPORA / app, root, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    for delay in ("0.1", "0.2", "0.25", "0.3", "0.35", "0.4", "0.5"):
        done = subprocess.run(
            [sys.executable, "-c", _WARM_UP_RACE, str(root), delay], capture_output=True, text=True, env=env
        )
        said = (done.stdout.strip().splitlines() or [done.stderr.strip()[-300:]])[-1]
        assert done.returncode == 0, f"preview begun {delay} s into the import: {said}"
        assert said == "6", f"preview begun {delay} s into the import: {said}"  # the app's six agents
