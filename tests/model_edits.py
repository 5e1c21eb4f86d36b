"""A workspace of small ADK apps sharing agents, and edits an author makes to it, for the tests that a model (and
the order rules' index) built after an edit from the one before is the one a fresh build gives: the apps the edit
does not touch taken whole, the others worked out again. Each edit: id, file, the text replaced (its first
occurrence), the new text, the apps (by name) taken from the model before, and those not taken."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from templating.agent_model import AgentModel
from templating.linter.engine import Project
from templating.pysource import Scan, scan

_HEAD = "from google.adk.agents import LlmAgent, SequentialAgent\n"

FILES = {
    "pyproject.toml": "[tool.templating]\n",
    "common/__init__.py": "",
    "common/leaf.py": _HEAD
    + 'helper = LlmAgent(name="helper", model="gemini-2.0-flash", instruction="Look up {topic?}.")\n'
    + 'leaf = LlmAgent(\n    name="leaf",\n    model="gemini-2.0-flash",\n'
    + '    instruction="Answer about {topic?}.",\n    sub_agents=[helper],\n)\n',
    "common/writer.py": _HEAD
    + 'writer = LlmAgent(\n    name="writer",\n    model="gemini-2.0-flash",\n'
    + '    instruction="Write the {draft_topic}.",\n    output_key="draft",\n)\n',
    "one/__init__.py": "from . import agent\n",
    "one/agent.py": _HEAD
    + "from common.leaf import leaf\n\n"
    + 'root_agent = LlmAgent(\n    name="one",\n    model="gemini-2.0-flash",\n'
    + '    global_instruction="You serve {user:name}.",\n    instruction="Route the question.",\n'
    + "    sub_agents=[leaf],\n)\n",
    "two/__init__.py": "from . import agent\n",
    "two/agent.py": _HEAD
    + "from common.leaf import leaf\n\n"
    + 'root_agent = LlmAgent(\n    name="two",\n    model="gemini-2.0-flash",\n'
    + '    global_instruction="You work for team {team}.",\n    instruction="Delegate.",\n    sub_agents=[leaf],\n)\n',
    "three/__init__.py": "from . import agent\n",
    "three/agent.py": _HEAD
    + "from common.writer import writer\n\nfrom .reviewer import reviewer\n\n"
    + 'root_agent = SequentialAgent(name="three", sub_agents=[writer, reviewer])\n',
    "common/prompts.py": 'CAREFUL = "Check each {claim?} twice."\n',
    "three/reviewer.py": _HEAD
    + "from google.adk.tools import ToolContext\n\nfrom common.prompts import CAREFUL\n\n\n"
    + "def save_note(note: str, tool_context: ToolContext) -> dict:\n"
    + '    tool_context.state["note"] = note\n    return {"saved": True}\n\n\n'
    + 'reviewer = LlmAgent(\n    name="reviewer",\n    model="gemini-2.0-flash",\n'
    + '    instruction="Review the {draft}.",\n    global_instruction=CAREFUL,\n    tools=[save_note],\n)\n',
    "four/__init__.py": "",
    "four/agent.py": _HEAD
    + "from google.adk.apps import App\n\nfrom common.writer import writer\n\n"
    + 'pipeline = SequentialAgent(name="four", sub_agents=[writer])\napp = App(name="four_app", root_agent=pipeline)\n',
    "five/__init__.py": "",
    "five/agent.py": _HEAD
    + "from common.prompts import CAREFUL\n\n"
    + 'lone = LlmAgent(name="lone", model="gemini-2.0-flash", instruction=CAREFUL + " Say it {mood?}.")\n'
    + 'pipeline = SequentialAgent(name="five", sub_agents=[lone])\n',
    "five/main.py": "from google.adk.runners import Runner\nfrom google.adk.sessions import InMemorySessionService\n\n"
    + "from five.agent import pipeline\n\n"
    + 'runner = Runner(agent=pipeline, app_name="five_app", session_service=InMemorySessionService())\n',
}

_ALL = ("one", "two", "three", "four_app", "five_app")


class Edit(NamedTuple):
    id: str
    file: str
    old: str
    new: str
    taken: tuple[str, ...]  # the apps taken whole from the model before
    made: tuple[str, ...]  # the apps worked out again (or new)


def _but(*made: str) -> tuple[str, ...]:
    return tuple(name for name in _ALL if name not in made)


EDITS = [
    # an edit rescans the edited file, what it imports and what imports those (`two` imports `leaf` too): an agent
    # whose call is read again as it was is taken, and an app all of whose agents are, whole
    Edit(
        "a-root-binding-changes",
        "one/agent.py",
        "root_agent = LlmAgent(",
        "router = LlmAgent(",
        _but("one"),
        (),
    ),
    Edit(
        "a-runner-renames-its-app",
        "five/main.py",
        'app_name="five_app"',
        'app_name="five_live"',
        _but("five_app"),
        ("five_live",),
    ),
    Edit(
        "an-agent-leaves-one-of-two-apps",
        "three/agent.py",
        "sub_agents=[writer, reviewer]",
        "sub_agents=[reviewer]",
        _but("three"),  # (four/agent.py imports the writer too: scanned again, read as it was)
        ("three",),
    ),
    Edit("an-app-is-removed", "two/agent.py", "root_agent = LlmAgent(", "team = LlmAgent(", _but("two"), ()),
    Edit(
        "an-app-is-added",
        "five/agent.py",
        'pipeline = SequentialAgent(name="five"',
        'root_agent = LlmAgent(name="solo", model="gemini-2.0-flash", instruction="Alone {mood}.")\n'
        'pipeline = SequentialAgent(name="five"',
        _but("five_app"),
        ("five_app", "five"),
    ),
    Edit(
        "a-sub-agent-of-two-apps-changes",
        "common/writer.py",
        "Write the {draft_topic}.",
        "Write the {draft_topic} well.",
        _but("three", "four_app"),
        ("three", "four_app"),
    ),
    Edit(  # one instruction constant, read by an agent of each of two apps (not one agent of both)
        "an-instruction-two-apps-read-changes",
        "common/prompts.py",
        "Check each {claim?} twice.",
        "Check each {claim} twice.",
        _but("three", "five_app"),
        ("three", "five_app"),
    ),
    Edit(
        "a-shared-agent-gets-another-tree-root",
        "one/agent.py",
        "sub_agents=[leaf],",
        "sub_agents=[],",
        _but("one"),  # (two reaches the very same agents: the model's reads tell leaf's new tree root)
        ("one",),
    ),
    Edit(
        "a-tree-root-global-instruction-changes",
        "one/agent.py",
        "You serve {user:name}.",
        "You serve {user:title}.",
        _but("one"),
        ("one",),
    ),
]


def _agent(found: Scan, who: str, **changed: Any) -> Scan:
    """`found` with the call of the agent named `who` changed (every other fact the very same object)."""
    agents = [dataclasses.replace(a, **changed) if a.name == who else a for a in found.agents]
    return dataclasses.replace(found, agents=agents)


def _refs(found: Scan, who: str) -> tuple[Any, ...]:
    """The sub-agents of the agent named `who`, as its call names them."""
    (call,) = [a for a in found.agents if a.name == who]
    return tuple(call.sub_agents or ())


def _global(found: Scan, name: str, text: str) -> Scan:
    """`found` with the global instruction of the agent `name` reading `text`."""
    (call,) = [a for a in found.agents if a.name == name]
    given = tuple(
        (role, dataclasses.replace(ref, text=text) if role == "global_instruction" else ref)
        for role, ref in call.instructions
    )
    return _agent(found, name, instructions=given)


def _tool(found: Scan, name: str, facts: Callable[[Any], Any]) -> Scan:
    """`found` with the facts of the function `name` changed (`facts` gives the new ones, None: no such function)."""
    functions = {}
    for key, known in found.functions.items():
        if known.name == name:
            known = facts(known)
        if known is not None:
            functions[key] = known
    return dataclasses.replace(found, functions=functions)


def _runner_named(found: Scan, name: str) -> Scan:
    return dataclasses.replace(found, runners=[dataclasses.replace(r, app_name=name) for r in found.runners])


def _no_root_in(found: Scan, folder: str) -> Scan:
    return dataclasses.replace(found, roots=[b for b in found.roots if f"/{folder}/" not in b.path])


# Edits of the facts of a scan, each other fact the very same object (an edit the scan reads that way: what only
# names an app, a parent that lets a shared agent go): the id, the edit, the apps taken and those made again
SCAN_EDITS: list[tuple[str, Callable[[Scan], Scan], tuple[str, ...], tuple[str, ...]]] = [
    ("a-runner-renames-its-app", lambda f: _runner_named(f, "five_live"), _but("five_app"), ("five_live",)),
    ("an-app-call-is-renamed", lambda f: _agent(f, "four_app", name="four_live"), _but("four_app"), ("four_live",)),
    ("a-root-binding-goes", lambda f: _no_root_in(f, "two"), _but("two"), ()),
    (
        "a-parent-lets-a-shared-agent-go",  # leaf's tree root is now two: it reads two's global instruction
        lambda f: _agent(f, "one", sub_agents=()),
        _but("one"),  # (the app two reaches the very same agents: the model's reads tell leaf's apart)
        ("one",),
    ),
    (
        "an-agent-below-two-apps-gets-a-sub-agent",  # the roots of one and two are the very same: not their walks
        lambda f: _agent(f, "helper", sub_agents=_refs(f, "three")[:1]),
        _but("one", "two"),
        ("one", "two"),
    ),
    (  # the root of three is read before reviewer (whose tool it is), and looks up nothing that changed
        "a-tool-of-an-agent-below-a-root-writes-nothing-now",
        lambda f: _tool(f, "save_note", lambda facts: dataclasses.replace(facts, steps=())),
        _but("three"),
        ("three",),
    ),
    (
        "a-tool-of-an-agent-below-a-root-is-gone",
        lambda f: _tool(f, "save_note", lambda _: None),
        _but("three"),
        ("three",),
    ),
    (
        "a-tree-root-gives-another-global-instruction",  # leaf (the very same agent, in two apps) reads it
        lambda f: _global(f, "one", "You serve {user:title}."),
        _but("one"),
        ("one",),
    ),
]


def scanned(root: Path) -> Scan:
    write(root)
    python = sorted(str(p) for p in root.rglob("*.py"))
    return scan(python, root=str(root), keep_going=True)


def write(root: Path) -> None:
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def edited(root: Path, edit: Edit) -> tuple[Project, AgentModel, AgentModel, AgentModel]:
    """The project after `edit` (an unsaved buffer), with its model before the edit, after it, and a fresh build's
    (a new project linting the edited text). The working directory must be `root`."""
    write(root)
    project = Project(root)
    project.lint(["."])
    before = project.agent_model
    text = (root / edit.file).read_text(encoding="utf-8")
    assert edit.old in text, edit
    text = text.replace(edit.old, edit.new, 1)
    project.update(edit.file, text)
    fresh = Project(root, overrides={edit.file: text})
    fresh.lint(["."])
    return project, before, project.agent_model, fresh.agent_model
