"""The google-adk objects a static preview keeps for the next preview of the same app (templating/preview/trees.py),
as the language server makes previews after each edit: after every kind of edit, the objects of the agents whose
facts did not change are taken again, those of the edited agents and of every agent holding one are made again,
and the preview is byte for byte a fresh `build_preview` of the text on disk. The app is split into modules as
adk-samples' apps are (each sub-agent in a package of its own, prompts in `prompt.py`), so an edit of one file
leaves the other agents' facts as they were."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NamedTuple

import preview_edits
import pytest
from conftest import installed
from preview_edits import whole

if not installed("google.adk"):
    if os.environ.get("TEMPLATING_REQUIRE_ADK") == "1":
        pytest.fail("TEMPLATING_REQUIRE_ADK=1 but google-adk is not installed (pip install '.[adk]')", pytrace=False)
    pytest.skip("google-adk is not installed (pip install '.[adk]')", allow_module_level=True)

from templating.linter.engine import Project
from templating.preview import Preview, PreviewError, trees
from templating.preview import static as static_module
from templating.preview.build import clear_cache
from templating.preview.shared import Known, preview_from
from templating.preview.walk import REQUESTS

FILES = {
    "__init__.py": "from . import agent\n",
    "notes.py": "NOTES = 'none'\n",
    "prompt.py": (
        'GLOBAL = "You work for Chez Nous, in {app:city?}. Be courteous."\n'
        'ROOT = """You are the concierge.\n'
        'Delegate greetings to greeting_agent and bookings to booking_agent."""\n'
    ),
    "tools.py": (
        "def get_weather(city: str) -> dict:\n"
        '    """Retrieves the weather in a city."""\n'
        '    return {"report": f"Sunny in {city}."}\n\n\n'
        "def take_payment(amount: float) -> dict:\n"
        '    """Takes a payment."""\n'
        '    return {"status": "paid"}\n'
    ),
    "agent.py": (
        "from google.adk.agents import Agent\n"
        "from google.adk.tools.agent_tool import AgentTool\n\n"
        "from . import prompt\n"
        "from .sub_agents.booking.agent import booking_agent\n"
        "from .sub_agents.greeting.agent import greeting_agent\n"
        "from .sub_agents.search.agent import search_agent\n"
        "from .tools import get_weather\n\n"
        "root_agent = Agent(\n"
        '    name="concierge",\n'
        '    model="gemini-2.5-flash",\n'
        '    description="The main coordinator.",\n'
        "    global_instruction=prompt.GLOBAL,\n"
        "    instruction=prompt.ROOT,\n"
        "    tools=[get_weather, AgentTool(agent=search_agent)],\n"
        "    sub_agents=[greeting_agent, booking_agent],\n"
        ")\n"
    ),
    "sub_agents/__init__.py": "",
    "sub_agents/greeting/__init__.py": "",
    "sub_agents/greeting/prompt.py": 'GREETING = "Greet {user:name?} warmly."\n',
    "sub_agents/greeting/agent.py": (
        "from google.adk.agents import Agent\n\n"
        "from .prompt import GREETING\n\n"
        "greeting_agent = Agent(\n"
        '    name="greeting_agent",\n'
        '    model="gemini-2.5-flash",\n'
        '    description="Handles greetings.",\n'
        "    instruction=GREETING,\n"
        ")\n"
    ),
    "sub_agents/search/__init__.py": "",
    "sub_agents/search/agent.py": (
        "from google.adk.agents import Agent\n"
        "from google.adk.tools import google_search\n\n"
        "search_agent = Agent(\n"
        '    name="search_agent",\n'
        '    model="gemini-2.5-flash",\n'
        '    description="Searches the web.",\n'
        '    instruction="Search for what {user:name?} asks.",\n'
        "    tools=[google_search],\n"
        '    output_key="found",\n'
        ")\n"
    ),
    "sub_agents/booking/__init__.py": "",
    "sub_agents/booking/prompt.py": (
        'BOOKING = "The guest is {user:name?}. Their last booking: {last_booking?}."\n'
        'PAYMENT = "Take the payment for {last_booking?}."\n'
    ),
    "sub_agents/booking/agent.py": (
        "from google.adk.agents import Agent\n\n"
        "from ...tools import take_payment\n"
        "from .prompt import BOOKING, PAYMENT\n\n"
        "payment_agent = Agent(\n"
        '    name="payment_agent",\n'
        '    model="gemini-2.5-flash",\n'
        '    description="Takes payments.",\n'
        "    instruction=PAYMENT,\n"
        "    tools=[take_payment],\n"
        ")\n\n"
        "booking_agent = Agent(\n"
        '    name="booking_agent",\n'
        '    model="gemini-2.5-flash",\n'
        '    description="Books tables.",\n'
        "    instruction=BOOKING,\n"
        "    sub_agents=[payment_agent],\n"
        ")\n"
    ),
}
EVERY = frozenset({"concierge", "greeting_agent", "search_agent", "booking_agent", "payment_agent"})


class Edit(NamedTuple):
    file: str
    old: str
    new: str
    made: frozenset[str] | set[str]  # the agents whose google-adk object is made again (the others' are taken)
    undone: frozenset[str] | set[str] | None = None  # those when the edit is undone (None: the same)


EDITS = {
    "the root's instruction": Edit("prompt.py", "You are the concierge.", "You are the head concierge.", {"concierge"}),
    "the root's global_instruction": Edit("prompt.py", "Be courteous.", "Be brief.", {"concierge"}),
    "a sub-agent's instruction": Edit(
        "sub_agents/greeting/prompt.py", "warmly", "briefly", {"greeting_agent", "concierge"}
    ),
    "a sub-agent's sub-agent's instruction": Edit(
        "sub_agents/booking/prompt.py",
        "Take the payment",
        "Take the deposit",
        {"payment_agent", "booking_agent", "concierge"},
    ),
    "an AgentTool's agent": Edit(
        "sub_agents/search/agent.py", 'output_key="found"', 'output_key="results"', {"search_agent", "concierge"}
    ),
    "the sub-agents reordered": Edit(
        "agent.py", "[greeting_agent, booking_agent]", "[booking_agent, greeting_agent]", {"concierge"}
    ),
    "a sub-agent removed": Edit(
        "agent.py",
        "[greeting_agent, booking_agent]",
        "[greeting_agent]",
        {"concierge"},
        {"concierge", "booking_agent", "payment_agent"},  # (its objects left the app's tree: made again)
    ),
    "a sub-agent made an AgentTool": Edit(
        "agent.py",
        "tools=[get_weather, AgentTool(agent=search_agent)],\n    sub_agents=[greeting_agent, booking_agent],",
        "tools=[get_weather, AgentTool(agent=search_agent), AgentTool(agent=booking_agent)],\n"
        "    sub_agents=[greeting_agent],",
        {"concierge"},
    ),
    "an AgentTool's agent made a sub-agent": Edit(
        "agent.py",
        "tools=[get_weather, AgentTool(agent=search_agent)],\n    sub_agents=[greeting_agent, booking_agent],",
        "tools=[get_weather],\n    sub_agents=[greeting_agent, booking_agent, search_agent],",
        {"concierge"},
    ),
    "a tool renamed": Edit(
        "tools.py", "def take_payment(", "def take_deposit(", {"payment_agent", "booking_agent", "concierge"}
    ),
    "a module no agent reads": Edit("notes.py", "'none'", "'some'", frozenset()),
}
# ("a tool renamed": where it is defined, not where it is imported: the function the import names is gone. An
# edit of the module that builds the root scans again every module it imports; an agent read there as it was is the
# very same agent of the model, so its object is taken: the root only is made again, its sub-agents linked anew.)


pytestmark = pytest.mark.usefixtures("preview_keeps_nothing")


def write_app(tmp_path: Path) -> tuple[Path, Path]:
    """A project folder holding the split concierge app: (the project's root, the app's folder)."""
    root = tmp_path / "project"
    app = root / "concierge"
    for name, text in FILES.items():
        (app / name).parent.mkdir(parents=True, exist_ok=True)
        (app / name).write_text(text, encoding="utf-8")
    (root / "pyproject.toml").write_text("[tool.templating]\n", encoding="utf-8")
    return root.resolve(), app.resolve()


def known_of(project: Project, texts: dict[str, str]) -> Known:
    """What the language server gives a preview: the project, its scan and agent model, the open documents."""
    return Known(
        project, Path(project.root), project.config, project._scan, project.agent_model, texts, dict(project.overrides)
    )


def fresh_on_disk(target: str, edits: dict[str, str]) -> Preview:
    """`preview_edits.fresh_on_disk`, and what the previews before it kept kept for the next."""
    objects, requests = dict(trees._KEPT), dict(REQUESTS._kept)
    try:
        return preview_edits.fresh_on_disk(target, edits)
    finally:
        clear_cache()
        trees._KEPT.update(objects)
        REQUESTS._kept.update(requests)


@pytest.fixture
def made_again(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the agents whose google-adk object is made (not taken from the last build)."""
    made: list[str] = []
    real = static_module._Converter.build

    def build(self: Any, agent: Any) -> Any:
        made.append(agent.name)
        return real(self, agent)

    monkeypatch.setattr(static_module._Converter, "build", build)
    return made


@pytest.mark.parametrize("kind", sorted(EDITS))
def test_after_an_edit_only_the_objects_it_touches_are_made_again_and_the_preview_is_the_fresh_one(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, made_again: list[str]
) -> None:
    edit = EDITS[kind]
    root, app = write_app(tmp_path)
    monkeypatch.chdir(root)
    path = app / edit.file
    original = path.read_text(encoding="utf-8")
    edited = original.replace(edit.old, edit.new, 1) if edit.old else edit.new
    assert edited != original
    project = Project(root)
    project.read_context()
    first = preview_from(known_of(project, {}), str(app))
    assert first is not None
    assert set(made_again) == EVERY  # nothing kept yet
    undone = edit.made if edit.undone is None else edit.undone
    for text, made in ((edited, edit.made), (original, undone)):  # the edit, then undone
        made_again.clear()
        project.update(str(path), text)
        after = preview_from(known_of(project, {str(path): text}), str(app))
        assert after is not None, "the project's facts were not used"
        assert set(made_again) == made
        assert whole(after) == whole(fresh_on_disk(str(app), {str(path): text}))
    assert whole(after) == whole(first)


def test_an_agent_given_two_parents_by_an_edit_is_refused_as_a_fresh_preview_refuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, app = write_app(tmp_path)
    monkeypatch.chdir(root)
    path = app / "agent.py"
    original = path.read_text(encoding="utf-8")
    # greeting_agent also under a new agent of the root: google-adk refuses a second parent
    edited = original.replace(
        "sub_agents=[greeting_agent, booking_agent],",
        'sub_agents=[booking_agent, greeting_agent, Agent(name="lobby", model="gemini-2.5-flash", '
        'instruction="Wait.", sub_agents=[greeting_agent])],',
    )
    project = Project(root)
    project.read_context()
    assert preview_from(known_of(project, {}), str(app)) is not None
    project.update(str(path), edited)
    with pytest.raises(PreviewError) as kept:
        preview_from(known_of(project, {str(path): edited}), str(app))
    with pytest.raises(PreviewError) as fresh:
        fresh_on_disk(str(app), {str(path): edited})
    assert "google-adk refuses its agents" in kept.value.message
    assert kept.value.message == fresh.value.message
    project.update(str(path), original)  # and undone: the objects are made from nothing again, and right
    again = preview_from(known_of(project, {str(path): original}), str(app))
    assert again is not None
    assert whole(again) == whole(fresh_on_disk(str(app), {}))


def test_the_objects_are_taken_by_one_preview_at_a_time_and_kept_for_a_few_apps() -> None:
    taken = trees.checkout("app")
    assert trees.checkout("app") is not taken  # a second preview meanwhile starts from nothing
    taken.agents["x"] = trees.Kept(None, ())
    trees.keep("app", taken)
    assert trees.checkout("app") is taken
    for number in range(trees.KEPT_APPS + 1):
        trees.keep(number, trees.Trees({"x": trees.Kept(None, ())}))
    assert trees.checkout(0).agents == {}  # the least recently kept, let go
    assert trees.checkout(trees.KEPT_APPS).agents != {}


def test_a_preview_of_another_project_takes_nothing(tmp_path: Path, made_again: list[str]) -> None:
    """Objects are taken for the very agent-model objects they were made for: another project (here, the same
    files read again) makes its own."""
    root, app = write_app(tmp_path)
    for _ in range(2):
        project = Project(root)
        project.read_context()
        made_again.clear()
        assert preview_from(known_of(project, {}), str(app)) is not None
        assert set(made_again) == EVERY


def test_a_taken_object_is_linked_to_its_parent_in_the_new_tree_as_a_fresh_build_links_it(tmp_path: Path) -> None:
    """google-adk links a sub-agent to its parent when the parent is made: an object taken from the last build is
    linked to the object that holds it now, and to none at the top."""
    from dataclasses import replace

    from templating.preview.static import adk_tree, read_app

    _, app = write_app(tmp_path)
    static = read_app(str(app))
    kept = trees.Trees()
    top, _ = adk_tree(static, kept=kept)
    booking = top.sub_agents[1]
    assert (booking.name, booking.parent_agent) == ("booking_agent", top)
    # the booking agent alone (its own tree): its object and its sub-agent's are taken
    alone = replace(static, app=None, top=next(a for a in static.model.agents.values() if a.name == "booking_agent"))
    made, _ = adk_tree(alone, kept=kept)
    assert made is booking
    assert made.parent_agent is None
    assert made.sub_agents[0].parent_agent is made
    # and the whole app again: the booking agent under a root made again
    root = next(a for a in static.model.agents.values() if a.name == "concierge")
    assert root.id not in kept.agents  # the last build was of the booking agent alone
    again, _ = adk_tree(replace(static, top=root), kept=kept)
    assert again is not top
    assert again.sub_agents[1] is booking
    assert booking.parent_agent is again
    assert top.sub_agents[1] is booking  # the old root still lists it: it is no longer walked
