"""The state schemas google-adk 2.13 enforces (`templating.linter.rules.enforced_schema`): T028 (a write the
enforced schema does not declare) and T001's level (an error only where google-adk checks the schema), on small
apps written as their authors write them, through the agent model, then through `lint_project`.

What google-adk does in each case is in /work/notes/adk-truth/REPORT.md, section B (and tests/test_adk_truth.py
runs the truth cases through google-adk itself)."""

from __future__ import annotations

from pathlib import Path

import pytest

from templating.agent_model import AgentModel, build
from templating.linter import Diagnostic, lint_project
from templating.linter.adk_schema import schema_findings
from templating.linter.config import load_config
from templating.linter.rules.enforced_schema import schema_levels, undeclared_writes
from templating.pysource import Scan, scan

STATE = '''from pydantic import BaseModel, ConfigDict


class TicketState(BaseModel):
    """The desk's state: google-adk checks every write against it."""

    ticket_text: str = ""
    category: str = ""


class OpenState(TicketState):
    model_config = ConfigDict(extra="allow")
'''

CALLBACKS = """from google.adk.agents.callback_context import CallbackContext


def stamp(callback_context: CallbackContext) -> None:
    callback_context.state["received_at"] = "now"


def count(callback_context: CallbackContext) -> None:
    callback_context.state["user:ticket_count"] = 1
"""

TOOLS = '''from google.adk.tools import ToolContext


def lookup_order(order_id: str, tool_context: ToolContext) -> dict:
    """Looks an order up."""
    tool_context.state["last_order"] = order_id
    return {}


def remember(key: str, tool_context: ToolContext) -> dict:
    """Saves under a key the model chooses."""
    tool_context.state[key] = True
    return {}
'''


def workflow_app(agents: str, edges: str, schema: str = "TicketState", extra: str = "") -> dict[str, str]:
    """A support desk as a google-adk 2.x Workflow: `agents` define the nodes, `edges` chain them."""
    code = (
        "from google.adk import Agent, Event, Workflow\n\n"
        "from .callbacks import count, stamp\n"
        "from .state import OpenState, TicketState\n"
        "from .tools import lookup_order, remember\n\n"
        'MODEL = "gemini-2.5-flash"\n\n\n'
        "def record_ticket(node_input: str):\n"
        '    return Event(state={"ticket_text": node_input})\n\n\n'
        f"{extra}{agents}\n"
        f'root_agent = Workflow(name="support_desk", edges=[("START", {edges})], state_schema={schema})\n'
    )
    return {"desk/__init__.py": "from . import agent\n", "desk/agent.py": code}


def agent(name: str, **fields: str) -> str:
    given = "".join(f", {k}={v}" for k, v in fields.items())
    return f'{name} = Agent(name="{name}", model=MODEL, instruction="Handle {{ticket_text}}."{given})\n'


def tree_app(root: str, extra: str = "") -> dict[str, str]:
    """An app of google-adk's agent classes (`root` builds `root_agent`)."""
    code = (
        "from google.adk.agents import LlmAgent, SequentialAgent\n\n"
        "from .state import OpenState, TicketState\n\n"
        f"{extra}{root}\n"
    )
    return {"desk/__init__.py": "from . import agent\n", "desk/agent.py": code}


def write(folder: Path, files: dict[str, str]) -> Path:
    base = {
        "pyproject.toml": "[project]\nname = 'desk'\n",
        "desk/state.py": STATE,
        "desk/callbacks.py": CALLBACKS,
        "desk/tools.py": TOOLS,
    }
    for name, text in {**base, **files}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def scanned(folder: Path) -> tuple[Scan, AgentModel]:
    found = scan(sorted(str(p) for p in folder.rglob("*.py")), root=str(folder), keep_going=True)
    config = load_config(folder)
    return found, build(found, config, folder)


def shown(folder: Path, finding: Diagnostic) -> tuple[str, str]:
    """Where a finding is: its file, and the text it flags as written there."""
    assert finding.path is not None
    assert finding.span is not None
    text = Path(finding.path).read_text(encoding="utf-8")
    return Path(finding.path).relative_to(folder).as_posix(), text[finding.span.start : finding.span.end]


# (id, files, expected T028s: (file, the write as written, key, writer named in the message, origin))
T028_CASES = [
    (
        "workflow-output-key",
        workflow_app(agent("responder", output_key='"draft_reply"'), "record_ticket, responder"),
        [("desk/agent.py", '"draft_reply"', "draft_reply", "responder's output_key", 'responder").output_key')],
    ),
    (
        "workflow-callback",
        workflow_app(agent("classifier", before_agent_callback="stamp"), "record_ticket, classifier"),
        [
            (
                "desk/callbacks.py",
                '"received_at"',
                "received_at",
                "classifier's before_agent_callback stamp",
                'classifier").before_agent_callback',
            )
        ],
    ),
    (
        "workflow-tool",
        workflow_app(agent("responder", tools="[lookup_order]"), "record_ticket, responder"),
        [("desk/tools.py", '"last_order"', "last_order", "responder's tool", 'responder").tools')],
    ),
    (
        "workflow-function-node",
        workflow_app(
            agent("responder", output_key='"category"'),
            "record_ticket, stamp_node, responder",
            extra='def stamp_node(node_input: str):\n    return Event(state={"stamped": True})\n\n\n',
        ),
        [("desk/agent.py", '"stamped"', "stamped", "the node stamp_node of support_desk", 'support_desk").edges')],
    ),
    (
        "extra-allow-does-not-help",
        workflow_app(agent("responder", output_key='"draft_reply"'), "record_ticket, responder", schema="OpenState"),
        [("desk/agent.py", '"draft_reply"', "draft_reply", "responder's output_key", 'responder").output_key')],
    ),
    (
        "prefixed-keys-bypass",
        workflow_app(
            agent("responder", output_key='"temp:draft_reply"', before_agent_callback="count"),
            "record_ticket, responder",
        ),
        [],
    ),
    ("declared", workflow_app(agent("classifier", output_key='"category"'), "record_ticket, classifier"), []),
    (
        "a-key-known-at-run-time",  # tool_context.state[key]: nothing certain to say
        workflow_app(agent("responder", tools="[remember]"), "record_ticket, responder"),
        [],
    ),
    (
        "llm-node-own-schema",  # enforced even though the Workflow has none
        workflow_app(
            agent("responder", output_key='"draft_reply"', state_schema="TicketState"),
            "record_ticket, responder",
            schema="None",
        ),
        [("desk/agent.py", '"draft_reply"', "draft_reply", "responder's own state_schema", 'responder").output_key')],
    ),
    (
        "root-llm-agent",
        tree_app(
            'root_agent = LlmAgent(name="faq", model="m", instruction="Answer.", state_schema=TicketState,'
            ' output_key="answer")'
        ),
        [("desk/agent.py", '"answer"', "answer", "faq's output_key", 'LlmAgent(name="faq").output_key')],
    ),
    (
        "llm-agent-in-a-sequential-agent",  # the legacy path: google-adk checks no schema there
        tree_app(
            'writer = LlmAgent(name="writer", model="m", instruction="Write.", state_schema=TicketState,'
            ' output_key="post")\nroot_agent = SequentialAgent(name="pipeline", sub_agents=[writer])'
        ),
        [],
    ),
    (
        "schema-on-a-sequential-agent",
        tree_app(
            'writer = LlmAgent(name="writer", model="m", instruction="Write.", output_key="post")\n'
            "root_agent = SequentialAgent(name='pipeline', sub_agents=[writer], state_schema=TicketState)"
        ),
        [],
    ),
    (
        "an-agent-of-no-app",  # not a root, nothing runs it: no schema is enforced
        tree_app(
            'helper = LlmAgent(name="helper", model="m", instruction="Help.", state_schema=TicketState,'
            ' output_key="answer")'
        ),
        [],
    ),
]


@pytest.mark.parametrize(("files", "expected"), [c[1:] for c in T028_CASES], ids=[c[0] for c in T028_CASES])
def test_t028_on_the_agent_model(tmp_path: Path, files: dict[str, str], expected: list[tuple[str, ...]]) -> None:
    folder = write(tmp_path, files)
    _, model = scanned(folder)
    found = undeclared_writes(model)
    assert [(*shown(folder, d), d.severity) for d in found] == [(f, w, "error") for f, w, *_ in expected]
    for finding, (_, _, key, writer, origin) in zip(found, expected, strict=True):
        assert finding.message.startswith(f"`{key}` is written by ")
        assert writer in finding.message
        assert "StateSchemaError" in finding.message
        assert (finding.origin or "").endswith(origin)
        assert f"declare `{key}` as a field of" in (finding.help or "")
    # asked for the files written in (an editor's open files): the same findings, in the same order
    written_in = {w.path for a in model.agents.values() for w in a.writes}
    assert undeclared_writes(model, paths=written_in) == found
    for path in written_in:
        assert undeclared_writes(model, paths=[path]) == [d for d in found if d.path == path]


def test_t028_in_some_files_goes_through_each_app_of_their_writers(tmp_path: Path) -> None:
    """A node agent two Workflow apps share (each with its schema): asked for the callback's file, its write is
    reported under each app's schema, as in a run over every file; asked for another app's file, nothing."""
    files = workflow_app(agent("classifier", before_agent_callback="stamp"), "record_ticket, classifier")
    files["other/__init__.py"] = ""
    files["other/agent.py"] = (
        "from google.adk import Workflow\n\nfrom desk.agent import classifier\nfrom desk.state import OpenState\n\n"
        'root_agent = Workflow(name="other_desk", edges=[("START", classifier)], state_schema=OpenState)\n'
    )
    folder = write(tmp_path, files)
    _, model = scanned(folder)
    callbacks = str(folder / "desk" / "callbacks.py")
    found = undeclared_writes(model)
    assert len(model.apps) == 2
    assert [d.path for d in found] == [callbacks, callbacks]
    assert {"TicketState", "OpenState"} == {m for d in found for m in ("TicketState", "OpenState") if m in d.message}
    assert undeclared_writes(model, paths=[callbacks]) == found
    assert undeclared_writes(model, paths=[str(folder / "other" / "agent.py")]) == []


def test_t028_names_the_schema_and_its_fields(tmp_path: Path) -> None:
    folder = write(tmp_path, workflow_app(agent("responder", output_key='"draft_reply"'), "record_ticket, responder"))
    _, model = scanned(folder)
    (finding,) = undeclared_writes(model)
    assert "TicketState (the state_schema of the Workflow support_desk" in finding.message
    assert "declared fields: category, ticket_text" in finding.message
    assert "desk/state.py:4" in (finding.help or "")


def test_t028_only_in_the_files_asked_for(tmp_path: Path) -> None:
    folder = write(
        tmp_path, workflow_app(agent("classifier", before_agent_callback="stamp"), "record_ticket, classifier")
    )
    _, model = scanned(folder)
    callbacks = str(folder / "desk" / "callbacks.py")
    assert [d.path for d in undeclared_writes(model, paths=[callbacks])] == [callbacks]
    assert undeclared_writes(model, paths=[str(folder / "desk" / "agent.py")]) == []


def test_a_callback_shared_by_two_nodes_is_one_finding(tmp_path: Path) -> None:
    agents = agent("classifier", before_agent_callback="stamp") + agent("responder", before_agent_callback="stamp")
    folder = write(tmp_path, workflow_app(agents, "record_ticket, classifier, responder"))
    _, model = scanned(folder)
    (finding,) = undeclared_writes(model)
    assert "classifier's before_agent_callback" in finding.message


# --- T001's level: an error only where google-adk enforces the schema

READS_TONE = 'instruction="Write in a {tone} tone about {ticket_text}.", state_schema=TicketState'

# (id, files, [tool.templating] initial-state, the level of T001 on {tone}, the end of its message)
T001_CASES = [
    (
        "root-llm-agent",
        tree_app(f'root_agent = LlmAgent(name="writer", model="m", {READS_TONE})'),
        None,
        "error",
        "desk/state.py:4)",
    ),
    (
        "root-llm-agent-given-by-the-caller",
        tree_app(f'root_agent = LlmAgent(name="writer", model="m", {READS_TONE})'),
        ["tone"],
        "warning",
        "google-adk never checks the initial state)",
    ),
    (
        "in-a-sequential-agent",
        tree_app(
            f'writer = LlmAgent(name="writer", model="m", {READS_TONE})\n'
            'root_agent = SequentialAgent(name="pipeline", sub_agents=[writer])'
        ),
        None,
        "warning",
        "only on a root LlmAgent or a Workflow node)",
    ),
    (
        "of-no-app",
        tree_app(f'writer = LlmAgent(name="writer", model="m", {READS_TONE})'),
        None,
        "warning",
        "only on a root LlmAgent or a Workflow node)",
    ),
    (
        "a-workflow-node",
        workflow_app(
            f'writer = Agent(name="writer", model=MODEL, {READS_TONE})\n', "record_ticket, writer", schema="None"
        ),
        None,
        "error",
        "desk/state.py:4)",
    ),
]


@pytest.mark.parametrize(
    ("files", "initial", "level", "ending"), [c[1:] for c in T001_CASES], ids=[c[0] for c in T001_CASES]
)
def test_t001_is_an_error_only_where_google_adk_enforces_the_schema(
    tmp_path: Path, files: dict[str, str], initial: list[str] | None, level: str, ending: str
) -> None:
    if initial is not None:
        files = {
            **files,
            "pyproject.toml": f"[project]\nname = 'desk'\n\n[tool.templating]\ninitial-state = {initial}\n",
        }
    folder = write(tmp_path, files)
    found, model = scanned(folder)
    (item,) = [i for i in found.instructions if "{tone}" in i.text]
    leveled = schema_levels(model, item.key, schema_findings(item))
    (finding,) = [d for d in leveled if d.code == "T001"]
    assert shown(folder, finding)[1] == "{tone}"
    assert (finding.severity, finding.message.endswith(ending)) == (level, True), finding.message


# --- through the engine


def test_lint_project_reports_t028_in_the_writers_file(tmp_path: Path) -> None:
    folder = write(
        tmp_path, workflow_app(agent("classifier", before_agent_callback="stamp"), "record_ticket, classifier")
    )
    result = lint_project([str(folder)], root=folder)
    (finding,) = [d for d in result.diagnostics if d.code == "T028"]
    assert (finding.severity, Path(finding.path or "").name) == ("error", "callbacks.py")
    alone = lint_project([str(folder / "desk" / "callbacks.py")], root=folder)
    assert [(d.code, d.span) for d in alone.diagnostics] == [("T028", finding.span)]
    assert not [d for d in lint_project([str(folder)], root=folder, ignore=["T028"]).diagnostics if d.code == "T028"]
