"""The preview without google-adk (templating/preview/partial.py): each agent's instructions as templating renders
them, in run order, marked partial and saying what needs the `adk` extra. Runs where google-adk is missing (the
`.[dev]` venv of .ci/run) and where it is installed: the command-line tests start Python with
tests/without_adk/sitecustomize.py, which makes `google.adk` impossible to import; the in-process ones make the
preview's own check say it is missing. With google-adk, the partial preview is checked against the exact one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import require_adk

import templating.preview.build
from templating.preview import PreviewError, build_preview
from templating.preview.formats import as_markdown, as_text

ROOT = Path(__file__).resolve().parent.parent
APPS = ROOT / "tests" / "fixtures" / "preview_apps"
WITHOUT_ADK = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join([str(ROOT / "tests" / "without_adk"), str(ROOT), os.environ.get("PYTHONPATH", "")]),
}
INSTALL = "pip install 'agent-prompt-templating[adk]'"


@pytest.fixture
def no_adk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(templating.preview.build, "adk_installed", lambda: False)


def _cli(*args: str, cwd: Path = APPS) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "templating", "preview", *args],
        cwd=cwd,
        env=WITHOUT_ADK,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
    )


def test_the_blocker_really_hides_google_adk() -> None:
    found = subprocess.run(
        [sys.executable, "-c", "import google.adk"], env=WITHOUT_ADK, capture_output=True, text=True, timeout=120
    )
    assert found.returncode == 1
    # with google-adk installed, the blocker hides it; in a venv without any google package, there is none to hide
    assert "No module named 'google.adk'" in found.stderr or "No module named 'google'" in found.stderr


def test_without_google_adk_the_command_prints_the_partial_preview_as_json(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    state.write_text('{"app:city": "Lyon"}', encoding="utf-8")
    done = _cli("concierge", "--format", "json", "--state", str(state))
    assert done.returncode == 0, done.stderr
    agents = json.loads(done.stdout)
    assert [a["agent"] for a in agents] == ["concierge", "greeting_agent", "booking_agent"]
    booking = agents[2]
    assert booking["system_instruction"] == (
        "You work for Chez Nous, a restaurant in Lyon. Be courteous.\n\n"
        "You are the booking assistant of Chez Nous.\n"
        "Always confirm the date, the time and the number of guests before booking.\n\n"
        "The guest is \u27e8missing: user:name\u27e9. Their last booking: ."
    )
    assert booking["instruction_turn"] is None
    assert booking["exact"] is False
    assert booking["keys"]["missing"] == ["user:name"]
    assert booking["keys"]["absent_optional"] == ["last_booking"]
    for agent in agents:  # each says which parts of its own request need the extra
        assert agent["partial"].startswith("google-adk is not installed: not the exact request; needs the adk extra")
    assert "the instruction turn" in booking["partial"]
    assert "the tool declarations" in booking["partial"]
    assert "the instruction turn" not in agents[1]["partial"]
    assert "the tool declarations" not in agents[1]["partial"]
    assert "transfer instructions" in agents[1]["partial"]
    # said once for the whole app, with how to get the exact request
    assert done.stderr.count("google-adk is not installed") == 1
    assert INSTALL in done.stderr


def test_without_google_adk_the_text_says_partial_for_each_agent() -> None:
    done = _cli("research")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("PARTIAL: google-adk is not installed") == 3
    assert "system instruction:" not in done.stdout  # the exact text's heading is not used for a partial one
    assert "\u2502     \u27e8output of RenewableEnergyResearcher\u27e9" in done.stdout
    assert "nobody supplies topic (read by RenewableEnergyResearcher)" in done.stderr


def test_without_google_adk_run_still_needs_the_extra() -> None:
    done = _cli("concierge", "--run")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"templating: error: templating preview --run imports the app, which needs google-adk: {INSTALL}"
    ]


# (app, state, agent, what its instructions render to, its reads as (key, source, by))
CASES: list[tuple[str, dict[str, Any] | None, str, str, list[tuple[str, str, str | None]]]] = [
    (
        "research",
        None,
        "SynthesisAgent",
        "You are an AI Assistant responsible for combining research findings into a structured report.\n\n"
        "**Input Summaries:**\n\n*   **Renewable Energy:**\n    \u27e8output of RenewableEnergyResearcher\u27e9\n\n"
        "*   **Electric Vehicles:**\n    \u27e8output of EVResearcher\u27e9\n\nOutput *only* the structured report.\n",
        [
            ("renewable_energy_result", "earlier", "RenewableEnergyResearcher"),
            ("ev_technology_result", "earlier", "EVResearcher"),
        ],
    ),
    (  # a parallel sibling's output is not there yet
        "research",
        {"topic": "solar"},
        "EVResearcher",
        "You are an AI Research Assistant specializing in transportation.\n"
        "Research the latest developments in electric vehicle technology.\n"
        "Also compare with the other researcher's notes: \n",
        [("renewable_energy_result", "absent", None)],
    ),
    (  # templating's own providers (angle, Jinja) render themselves
        "tutor_providers",
        {"user:name": "Ada", "topics": ["loops", "lists"]},
        "quizzer",
        "Write 3 questions about the lesson below.\n- loops\n- lists\n\u27e8output of tutor\u27e9",
        [("count", "absent", None), ("lesson", "earlier", "tutor"), ("topics", "state", None)],
    ),
    (
        "tutor_providers",
        {},
        "tutor",
        "You tutor \u27e8missing: user:name\u27e9. Follow this plan:\n\u27e8output of planner\u27e9\nTheir goal: ",
        [("user:name", "missing", None), ("plan", "earlier", "planner"), ("goal", "absent", None)],
    ),
    (  # a provider function: not run
        "tutor_providers",
        {},
        "planner",
        "\u27e8instruction from lesson_plan, known at run time\u27e9",
        [],
    ),
    (
        "support_yaml",
        {"plan": "pro", "user:name": "Ada"},
        "support_router",
        "You route support requests for \u27e8missing: app:product\u27e9.\nThe customer is Ada; their plan is pro.\n",
        [("app:product", "missing", None), ("user:name", "state", None), ("plan", "state", None)],
    ),
    (
        "shop_workflow",
        {"app:shop_name": "Acme"},
        "answerer",
        "The request is a \u27e8output of classifier\u27e9. Answer it for . Stock notes: ",
        [("category", "earlier", "classifier"), ("user:name", "absent", None), ("stock_notes", "absent", None)],
    ),
    (  # written by a callback the preview does not run
        "story_loop",
        {},
        "InitialWriterAgent",
        "\n    You are a Creative Writing Assistant tasked with starting a story.\n"
        "    Topic: \u27e8set by before_agent_callback set_initial_topic\u27e9\n\n"
        "    Output *only* the story text.\n    ",
        [("initial_topic", "marker", "before_agent_callback set_initial_topic")],
    ),
]


@pytest.mark.usefixtures("no_adk")
@pytest.mark.parametrize(
    ("app", "state", "agent", "text", "reads"), CASES, ids=[f"{c[0]}-{c[2]}-{len(c[1] or {})}" for c in CASES]
)
def test_the_partial_preview_renders_each_agents_instructions(
    app: str, state: dict[str, Any] | None, agent: str, text: str, reads: list[tuple[str, str, str | None]]
) -> None:
    result = build_preview(str(APPS / app), state=state, agent=agent)
    assert result.mode == "partial"
    (one,) = result.agents
    assert one.system_instruction == text
    assert [(r.key, r.source, r.by) for r in one.reads] == reads
    assert one.partial is not None
    assert not one.exact
    assert one.instruction_turn is None


@pytest.mark.usefixtures("no_adk")
def test_the_partial_preview_keeps_the_run_order_and_how_each_agent_runs() -> None:
    result = build_preview(str(APPS / "story_loop"))
    assert [(a.agent, a.reached, a.via) for a in result.agents] == [
        ("InitialWriterAgent", "sequence", "IterativeWritingPipeline"),
        ("CriticAgent", "loop", "RefinementLoop"),
        ("RefinerAgent", "loop", "RefinementLoop"),
    ]
    markdown = as_markdown(result)
    assert markdown.count("**Partial:** google-adk is not installed") == 3
    assert "**Tools:**" not in markdown
    assert "tools:" not in as_text(result)


@pytest.mark.usefixtures("no_adk")
def test_a_caller_needing_the_exact_request_gets_an_error_instead() -> None:
    with pytest.raises(PreviewError, match=r"google-adk's own code: pip install"):
        build_preview(str(APPS / "concierge"), partial=False)


STATES: dict[str, dict[str, Any]] = {
    "concierge": {"app:city": "Lyon", "user:name": "Ada"},
    "research": {"topic": "solar panels"},
    "tutor_providers": {"user:name": "Ada", "level": "advanced", "topics": ["loops", "lists"]},
    "shop_workflow": {"app:shop_name": "Acme", "user:name": "Ada"},
    "travel_tools": {"user:name": "Ada", "origin": "LYS", "flight": "AF123"},
    "support_yaml": {"app:product": "Widgets", "plan": "pro", "known_issue": "none"},
    "story_loop": {},
}


def _agrees(target: str, state: dict[str, Any] | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The partial preview has the exact one's agents in order, the same reads, and each instruction it renders
    is in the exact request as google-adk builds it."""
    exact = build_preview(target, state=state)
    with monkeypatch.context() as patch:
        patch.setattr(templating.preview.build, "adk_installed", lambda: False)
        partial = build_preview(target, state=state)
    assert [a.agent for a in partial.agents] == [a.agent for a in exact.agents]
    for full, part in zip(exact.agents, partial.agents, strict=True):
        whole = f"{full.system_instruction or ''}\n{full.instruction_turn or ''}"
        for chunk in (part.system_instruction or "").split("\n\n"):
            assert chunk in whole, (full.agent, chunk)
        assert sorted((r.key, r.source, r.by) for r in part.reads) == sorted(
            (r.key, r.source, r.by) for r in full.reads
        )


@pytest.mark.parametrize("app", sorted(STATES))
@pytest.mark.parametrize("given", [True, False], ids=["state", "no-state"])
def test_the_partial_preview_is_part_of_the_exact_one(app: str, given: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    require_adk()
    _agrees(str(APPS / app), STATES[app] if given else None, monkeypatch)


@pytest.mark.slow
def test_the_partial_preview_of_the_corpus_apps_is_part_of_the_exact_one(monkeypatch: pytest.MonkeyPatch) -> None:
    require_adk()
    from test_preview import CORPORA, CORPUS_APPS

    if CORPORA is None:
        pytest.skip("the shared corpora are not here (../shared/corpora)")
    for app in CORPUS_APPS:
        _agrees(str(CORPORA / app), None, monkeypatch)
