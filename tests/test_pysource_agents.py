"""The agent facts the scan reads in its one walk (templating/pysource/agents.py, agent_refs.py and
agent_functions.py): agent calls of google-adk's classes and of custom `BaseAgent` subclasses, their keywords
resolved across modules, the functions they name with their writes in order, runners, `root_agent` bindings and
sessions. Each case is code written as ADK's samples and users write it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from templating.pysource import AgentCall, Ref, Scan, scan


def scan_files(tmp_path: Path, files: dict[str, str], linted: list[str] | None = None) -> Scan:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    names = linted if linted is not None else [n for n in files if n.endswith(".py")]
    return scan([str(tmp_path / n) for n in names], root=str(tmp_path))


def agent(found: Scan, name: str) -> AgentCall:
    matches = [a for a in found.agents if a.name == name]
    assert len(matches) == 1, [a.name for a in found.agents]
    return matches[0]


def named(found: Scan, refs: tuple[Ref, ...] | None) -> list[str]:
    """Each ref as the name of the agent it names, or its kind and text."""
    by_id = {a.id: a for a in found.agents}
    out = []
    for ref in refs or ():
        if ref.kind == "agent":
            out.append((ref.wrapper + ":" if ref.wrapper else "") + str(by_id[ref.target].name))
        elif ref.kind == "function":
            out.append(f"function:{found.functions[ref.target].name}" if ref.target in found.functions else "function")
        else:
            out.append(f"{ref.kind}:{ref.target or ref.text}")
    return out


PIPELINE = {
    "app/__init__.py": "from . import agent\n",
    "app/prompt.py": """\
        WRITER_PROMPT = "Write about {topic}. Apply the critique: {critique?}"
        CRITIC_PROMPT = "Critique {draft}."
        """,
    "app/keys.py": 'CRITIQUE_KEY = "critique"\n',
    "app/sub_agents/__init__.py": "",
    "app/sub_agents/critic.py": """\
        from google.adk.agents import LlmAgent

        from ..keys import CRITIQUE_KEY
        from ..prompt import CRITIC_PROMPT

        critic = LlmAgent(name="critic", model="gemini-2.5-flash", instruction=CRITIC_PROMPT, output_key=CRITIQUE_KEY)
        """,
    "app/tools.py": """\
        from google.adk.tools import ToolContext

        def save_notes(notes: str, tool_context: ToolContext) -> dict:
            tool_context.state["notes"] = notes
            return {"ok": True}
        """,
    "app/callbacks.py": """\
        def seed(callback_context):
            if "topic" not in callback_context.state:
                callback_context.state["topic"] = "cats"
            if callback_context.state.get("mood") == "bad":
                callback_context.state["tone"] = "careful"
        """,
    "app/agent.py": """\
        from google.adk.agents import LlmAgent, SequentialAgent
        from google.adk.tools import google_search
        from google.adk.tools.agent_tool import AgentTool

        from . import prompt
        from .callbacks import seed
        from .sub_agents.critic import critic
        from .tools import save_notes

        searcher = LlmAgent(name="searcher", instruction="Search.", tools=[google_search])
        writer = LlmAgent(
            name="writer",
            model="gemini-2.5-flash",
            instruction=prompt.WRITER_PROMPT,
            output_key="draft",
            tools=[save_notes, AgentTool(agent=searcher)],
            before_agent_callback=seed,
        )

        def make_pipeline():
            return SequentialAgent(name="pipeline", sub_agents=[writer, critic], description="writes then critiques")

        root_agent = make_pipeline()
        """,
}


def test_a_pipeline_across_modules(tmp_path: Path) -> None:
    found = scan_files(tmp_path, PIPELINE)
    pipeline, writer, critic = agent(found, "pipeline"), agent(found, "writer"), agent(found, "critic")
    assert (pipeline.kind, pipeline.cls) == ("sequential", "google.adk.agents.SequentialAgent")
    assert named(found, pipeline.sub_agents) == ["writer", "critic"]
    assert pipeline.option("description") == "writes then critiques"
    assert pipeline.in_function is not None  # built in make_pipeline()
    assert named(found, writer.tools) == ["function:save_notes", "AgentTool:searcher"]
    assert named(found, agent(found, "searcher").tools) == ["external:google.adk.tools.google_search"]
    assert named(found, writer.callback("before_agent_callback")) == ["function:seed"]
    assert writer.output_key is not None
    assert writer.output_key.key == "draft"
    assert critic.output_key is not None
    assert critic.output_key.key == "critique"
    instruction = critic.instruction()
    assert instruction is not None
    assert instruction.kind == "text"
    assert instruction.text == "Critique {draft}."
    assert instruction.key in {i.key for i in found.instructions}  # linked to what the scan found
    assert writer.bound == ("writer",)
    assert critic.bound == ("critic",)
    # the root: `root_agent = make_pipeline()`, a function returning the agent
    (root,) = found.roots
    assert root.ref.kind == "agent"
    assert root.ref.target == pipeline.id


def test_the_writes_of_the_functions_agents_name(tmp_path: Path) -> None:
    found = scan_files(tmp_path, PIPELINE)
    by_name = {f.name: f for f in found.functions.values()}
    assert [(s.key, s.conditional) for s in by_name["save_notes"].steps] == [("notes", False)]
    # `if "topic" not in state:` guards its own key: the write is certain; the one under another `if` is not
    assert [(s.key, s.conditional) for s in by_name["seed"].steps] == [("topic", False), ("tone", True)]
    writes = {w.key: w.function for w in found.writes}
    assert writes["notes"] == next(f.id for f in found.functions.values() if f.name == "save_notes")


STORY = """\
    from typing import AsyncGenerator

    from google.adk.agents import BaseAgent, LlmAgent, LoopAgent
    from google.adk.events import Event, EventActions


    class StoryFlow(BaseAgent):
        writer: LlmAgent
        critic: LlmAgent
        loop: LoopAgent

        def __init__(self, name: str, writer: LlmAgent, critic: LlmAgent):
            loop = LoopAgent(name="Loop", sub_agents=[critic], max_iterations=2)
            super().__init__(name=name, writer=writer, critic=critic, loop=loop, sub_agents=[writer, loop])

        async def _run_async_impl(self, ctx) -> AsyncGenerator[Event, None]:
            ctx.session.state["audience"] = "kids"
            yield Event(author=self.name, actions=EventActions(state_delta={"style": "short"}))
            Event(author=self.name, actions=EventActions(state_delta={"lost": "never yielded"}))
            async for event in self.writer.run_async(ctx):
                yield event
            if ctx.session.state.get("draft"):
                async for event in self.loop.run_async(ctx):
                    yield event
            for sub in self.sub_agents:
                async for event in sub.run_async(ctx):
                    yield event


    writer = LlmAgent(name="Writer", instruction="Write for {audience}, {style}, on {topic}.", output_key="draft")
    critic = LlmAgent(name="Critic", instruction="Critique {draft}.", output_key="critique")
    story = StoryFlow(name="Story", writer=writer, critic=critic)
    """


def test_a_custom_orchestrator(tmp_path: Path) -> None:
    found = scan_files(tmp_path, {"story.py": STORY})
    story = agent(found, "Story")
    assert story.kind == "custom"
    cls = found.agent_classes[story.cls]
    assert cls.name == "StoryFlow"
    assert cls.init == ("name", "writer", "critic")
    init = dict(cls.init_fields)
    assert [(r.kind, r.target) for r in init["writer"]] == [("param", "writer")]
    assert named(found, init["loop"]) == ["Loop"]  # built in __init__: a template per instance
    loop = agent(found, "Loop")
    assert [(r.kind, r.target) for r in loop.sub_agents or ()] == [("param", "critic")]
    assert named(found, story.field("writer")) == ["Writer"]
    assert cls.run is not None
    steps = [(s.kind, s.key, s.field, s.conditional, s.looped) for s in found.functions[cls.run].steps]
    assert steps == [
        ("write", "audience", None, False, False),
        ("write", "style", None, False, False),  # yielded: applied ("lost" never is)
        ("run", None, "writer", False, False),
        ("run", None, "loop", True, False),
        ("run_all", None, None, True, False),
    ]


WORKFLOW = """\
    from google.adk import Agent, Event, Workflow
    from google.adk.workflow import DEFAULT_ROUTE, START, JoinNode
    from pydantic import BaseModel, ConfigDict


    class Trip(BaseModel):
        model_config = ConfigDict(extra="allow")
        budget: int = 0
        city: str = ""


    def extract(node_input: str):
        return Event(state={"budget": 100}, route="cheap")


    async def plan(node_input=None):
        yield Event(state={"plan": "x"})


    cheap = Agent(name="cheap", instruction="Plan on {budget}.", output_key="cheap_plan")
    premium = Agent(name="premium", instruction="Plan in {city}.")
    join = JoinNode(name="join")
    root_agent = Workflow(
        name="trip",
        state_schema=Trip,
        edges=[
            (START, extract, {"cheap": cheap, DEFAULT_ROUTE: premium}),
            (START, (plan, cheap), join, premium),
        ],
    )
    """


def test_a_workflow_with_edges_routes_and_a_join(tmp_path: Path) -> None:
    found = scan_files(tmp_path, {"trip.py": WORKFLOW})
    trip = agent(found, "trip")
    assert trip.kind == "workflow"
    assert trip.state_schema is not None
    assert trip.state_schema.fields == {"budget", "city"}  # extra="allow" adds nothing google-adk accepts
    assert trip.state_schema.declares("plan") is False
    assert trip.state_schema.declares("user:x") is True
    by_id = {a.id: a.name for a in found.agents}

    def shown(ref: Ref) -> str:
        if ref.kind == "agent":
            return str(by_id[ref.target])
        if ref.kind == "function":
            return found.functions[ref.target].name
        return ref.target

    edges = [(shown(e.source), shown(e.target), e.route, e.routed) for e in trip.edges or ()]
    assert edges == [
        ("START", "extract", None, False),
        ("extract", "cheap", "cheap", True),
        ("extract", "premium", "__DEFAULT__", True),
        ("START", "plan", None, False),
        ("START", "cheap", None, False),
        ("plan", "join", None, False),
        ("cheap", "join", None, False),
        ("join", "premium", None, False),
    ]
    assert agent(found, "join").kind == "join"
    steps = {f.name: [(s.key, s.how) for s in f.steps] for f in found.functions.values()}
    assert steps["extract"] == [("budget", "Event(state=...)")]  # returned: applied
    assert steps["plan"] == [("plan", "Event(state=...)")]  # yielded: applied


SESSIONS = {
    "shop/__init__.py": "",
    "shop/agent.py": """\
        from google.adk.agents import LlmAgent
        from google.adk.apps import App

        root_agent = LlmAgent(name="shop", instruction="Serve {customer}.")
        app = App(name="shop_app", root_agent=root_agent)
        """,
    "main.py": """\
        from google.adk.runners import Runner
        from google.adk.sessions import InMemorySessionService

        from shop.agent import app

        async def main(state):
            service = InMemorySessionService()
            await service.create_session(app_name="shop_app", user_id="u", state={"customer": "Ada"})
            await service.create_session(app_name="shop_app", user_id="u", state=state)
            runner = Runner(app=app, session_service=service)
        """,
}


def test_apps_runners_and_sessions(tmp_path: Path) -> None:
    found = scan_files(tmp_path, SESSIONS)
    app = next(a for a in found.agents if a.kind == "app")
    assert app.name == "shop_app"
    assert named(found, app.field("root_agent")) == ["shop"]
    (runner,) = found.runners
    assert runner.app is not None
    assert runner.app.target == app.id
    assert runner.agent is None
    first, second = found.sessions
    assert first.keys == ("customer",)
    assert second.keys is None
    assert app.id in first.agents  # main.py imports the App: its sessions are the app's


UNKNOWN: list[tuple[str, str, str, str]] = [
    # (id, the code after `from google.adk.agents import LlmAgent, SequentialAgent` (the agent named `root` read),
    #  the keyword, the start of what is recorded for it: the reason, or the parameter a "param" ref names)
    (
        "sub-agents-from-a-call-with-arguments",
        "def build(n):\n    return [LlmAgent(name=str(n))]\nroot = SequentialAgent(name='root', sub_agents=build(3))",
        "sub_agents",
        "what build(...) returns",
    ),
    (
        "a-parameter-outside-any-class",
        "def make(child):\n    return SequentialAgent(name='root', sub_agents=[child])\nx = make(None)",
        "sub_agents",
        "param child",
    ),
    (
        "an-output-key-known-at-run-time",
        "import os\nroot = LlmAgent(name='root', output_key=os.environ['KEY'])",
        "output_key",
        "a Subscript expression",
    ),
    (
        "a-name-known-at-run-time",
        "import os\nroot = SequentialAgent(name=os.environ['NAME'], sub_agents=[])",
        "name",
        "a Subscript expression",
    ),
]


@pytest.mark.parametrize(("code", "keyword", "why"), [c[1:] for c in UNKNOWN], ids=[c[0] for c in UNKNOWN])
def test_what_is_known_only_at_run_time_stays_unknown_with_a_reason(
    tmp_path: Path, code: str, keyword: str, why: str
) -> None:
    found = scan_files(tmp_path, {"a.py": "from google.adk.agents import LlmAgent, SequentialAgent\n" + code})
    root = next(a for a in found.agents if a.name == "root" or (a.kind == "sequential" and a.name is None))
    got: str | None
    if keyword == "sub_agents":
        (ref,) = root.sub_agents or ()
        assert ref.kind in ("unknown", "param")
        got = f"param {ref.target}" if ref.kind == "param" else ref.reason
    elif keyword == "output_key":
        assert root.output_key is not None
        assert root.output_key.key is None
        got = root.output_key.reason
    else:
        got = root.why_unread(keyword)
    assert str(got).startswith(why), got


def test_keywords_unpacked_from_a_mapping_are_unknown(tmp_path: Path) -> None:
    found = scan_files(tmp_path, {"a.py": "from google.adk.agents import LlmAgent\nARGS = {}\nroot = LlmAgent(**ARGS)"})
    (root,) = found.agents
    assert str(root.why_unread("**")).startswith("keywords unpacked from a mapping")


def test_a_module_outside_the_linted_files_is_followed_for_its_agents(tmp_path: Path) -> None:
    """Only app/agent.py is scanned: the agents it imports from other modules are read all the same."""
    found = scan_files(tmp_path, PIPELINE, linted=["app/agent.py"])
    assert named(found, agent(found, "pipeline").sub_agents) == ["writer", "critic"]
    critic = agent(found, "critic")
    instruction = critic.instruction()
    assert instruction is not None
    assert instruction.text == "Critique {draft}."
    assert critic.output_key is not None
    assert critic.output_key.key == "critique"


def test_instruction_kinds(tmp_path: Path) -> None:
    code = """\
        import os

        from google.adk.agents import LlmAgent
        from templating import instruction

        def provide(ctx):
            return "dynamic"

        LOCAL = instruction("Hello <name>.")
        a = LlmAgent(name="a", instruction=provide, global_instruction="Global {g}.", static_instruction="Static.")
        b = LlmAgent(name="b", instruction=instruction("Hi <user:name>."))
        c = LlmAgent(name="c", instruction=LOCAL)
        d = LlmAgent(name="d", instruction=f"Known only {os.getcwd()}")
        """
    found = scan_files(tmp_path, {"kinds.py": code})
    kinds = {(a.name, role): (ref.kind, ref.text) for a in found.agents for role, ref in a.instructions}
    assert kinds[("a", "instruction")] == ("provider", None)
    assert kinds[("a", "global_instruction")] == ("text", "Global {g}.")
    assert kinds[("a", "static_instruction")] == ("text", "Static.")
    assert kinds[("b", "instruction")] == ("templating", "Hi <user:name>.")
    assert kinds[("c", "instruction")] == ("templating", "Hello <name>.")
    assert kinds[("d", "instruction")][0] == "unknown"
