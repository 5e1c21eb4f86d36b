"""`templating preview` and `templating diff` as processes, against `templating lint` of the same app plus importing
google-adk's agents, all measured in this run.

Run: python bench/bench_preview.py [RUNS]

A preview reads the app's code (the scan `templating lint` does too), turns the agent model into google-adk agent
objects and runs google-adk's request processors: so its natural reference is a lint of the same app plus importing
google-adk's agents. Target (issue 34): a preview of a ten-agent app within 3 times that sum. The issue wrote that
import as `python -c "import google.adk.agents"`, but google-adk 2.13's package loads its classes lazily, so that
command no longer imports the agents: the target is measured against `from google.adk.agents import LlmAgent`, and
the literal command is printed as a second row for information. Apps: a generated ten-agent app in authors'
idioms (a prompt module, a Sequential pipeline with a Loop and a Parallel step, transfer sub-agents, a global and a
static instruction, tools writing state), and, when the shared corpus is there, adk-samples' travel-concierge (21
agents, real code). For information: `templating diff HEAD~1` of the generated app (one instruction changed in the
last commit, both sides previewed) against one preview.

Each command runs RUNS times (default 7), interleaved so that a busy machine slows all alike; medians compared. The
processes use the bytecode of an installed package (compiled once into a temporary folder).
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 3.0
CORPUS_APP = ("shared", "corpora", "adk-samples", "python", "agents", "travel-concierge")

PROMPTS = '''"""The shop's prompts."""

GLOBAL = "You work for {app:shop_name}. Today is {current_date?}."
STATIC = "House style: short sentences, no emoji, British spelling."
PLANNER = """You plan a product page for {product}.
Earlier research: {research?}
Write the outline as a numbered list."""
RESEARCHER = "Find three facts about {product} for {user:name?}. Cite each."
PRICER = "Suggest a price for {product} in {user:currency}, given the outline:\\n{outline}"
WRITER = "Write the page from this outline:\\n{outline}\\nPrice: {price}"
CRITIC = "Review the draft below. Reply APPROVED if it needs nothing.\\n<draft>\\n{draft}\\n</draft>"
REFINER = "Improve the draft using the critique.\\nDraft: {draft}\\nCritique: {critique}"
TRANSLATOR = "Translate the final page into {user:language?}: {draft}"
SUPPORT = "Answer questions about order {order_id?} politely."
RETURNS = "Handle a return of {order_id?}; ticket {ticket_id?}."
'''

AGENT = '''"""A ten-agent shop app: a pipeline with a loop and a parallel step, support agents reached by transfer."""

from google.adk.agents import LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from google.adk.tools import ToolContext

from . import prompts

MODEL = "gemini-2.5-flash"


def open_ticket(subject: str, tool_context: ToolContext) -> dict:
    """Opens a support ticket."""
    tool_context.state["ticket_id"] = "T-1"
    return {"ticket_id": "T-1", "subject": subject}


def lookup_price(product: str) -> dict:
    """The list price of a product."""
    return {"product": product, "price": 10}


planner = LlmAgent(name="planner", model=MODEL, instruction=prompts.PLANNER, output_key="outline")
researcher = LlmAgent(name="researcher", model=MODEL, instruction=prompts.RESEARCHER, output_key="research")
pricer = LlmAgent(name="pricer", model=MODEL, instruction=prompts.PRICER, tools=[lookup_price], output_key="price")
fan_out = ParallelAgent(name="fan_out", sub_agents=[researcher, pricer])
writer = LlmAgent(
    name="writer", model=MODEL, static_instruction=prompts.STATIC, instruction=prompts.WRITER, output_key="draft"
)
critic = LlmAgent(name="critic", model=MODEL, instruction=prompts.CRITIC, output_key="critique")
refiner = LlmAgent(name="refiner", model=MODEL, instruction=prompts.REFINER, output_key="draft")
refine = LoopAgent(name="refine", sub_agents=[critic, refiner], max_iterations=3)
translator = LlmAgent(name="translator", model=MODEL, instruction=prompts.TRANSLATOR)
pipeline = SequentialAgent(name="pipeline", sub_agents=[planner, fan_out, writer, refine, translator])
returns = LlmAgent(name="returns", model=MODEL, instruction=prompts.RETURNS, description="Handles returns.")
support = LlmAgent(
    name="support",
    model=MODEL,
    instruction=prompts.SUPPORT,
    description="Answers order questions.",
    tools=[open_ticket],
    sub_agents=[returns],
)
root_agent = LlmAgent(
    name="shop",
    model=MODEL,
    global_instruction=prompts.GLOBAL,
    instruction="Route the customer: product pages to pipeline, orders to support.",
    sub_agents=[pipeline, support],
)
'''


def write_app(root: Path) -> Path:
    """The generated app in a git repository of two commits (the last one changes the critic's instruction)."""
    app = root / "shop"
    app.mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "shop"\nversion = "0.1.0"\n', encoding="utf-8")
    (app / "__init__.py").write_text("from . import agent\n", encoding="utf-8")
    (app / "agent.py").write_text(AGENT, encoding="utf-8")
    (app / "prompts.py").write_text(PROMPTS, encoding="utf-8")
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "shop"], cwd=root, check=True)
    text = (app / "prompts.py").read_text(encoding="utf-8")
    (app / "prompts.py").write_text(text.replace("Reply APPROVED", "Reply APPROVED (in capitals)"), encoding="utf-8")
    subprocess.run([*git, "commit", "-q", "-am", "critic"], cwd=root, check=True)
    return app


def time_once(command: list[str], cwd: Path, env: dict[str, str], ok: tuple[int, ...]) -> tuple[float, float]:
    """(wall time, CPU time of the process: user + system) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in ok:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


Commands = dict[str, tuple[list[str], Path, tuple[int, ...]]]


def medians(commands: Commands, env: dict[str, str], runs: int) -> dict[str, tuple[float, float]]:
    """Each command's median wall and CPU time over `runs` interleaved runs (after one uncounted run of each)."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for command, cwd, ok in commands.values():
        time_once(command, cwd, env, ok)
    for _ in range(runs):
        for name, (command, cwd, ok) in commands.items():
            times[name].append(time_once(command, cwd, env, ok))
    return {
        name: (statistics.median(t[0] for t in values), statistics.median(t[1] for t in values))
        for name, values in times.items()
    }


def compile_package(into: Path) -> dict[str, str]:
    """An environment whose processes read compiled bytecode from `into`, as an installed package's."""
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(into), "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "templating")], env=env, check=True)
    subprocess.run([sys.executable, "-c", "import google.adk.agents"], env=env, check=True)
    return env


def bench_app(label: str, target: Path, cwd: Path, env: dict[str, str], runs: int, *, diff: bool) -> bool:
    templating = [sys.executable, "-m", "templating"]
    commands: Commands = {
        "templating preview": ([*templating, "preview", str(target), "--format", "json"], cwd, (0,)),
        "templating lint": ([*templating, "lint", str(target), "--no-cache", "--exit-zero"], cwd, (0,)),
        # the reference: importing google-adk's agent classes (what a preview needs, and what the issue meant)
        "from google.adk.agents import LlmAgent": (
            [sys.executable, "-c", "from google.adk.agents import LlmAgent"],
            cwd,
            (0,),
        ),
        # the issue's literal command: google-adk 2.13's package loads its classes lazily, so this imports little
        "import google.adk.agents": ([sys.executable, "-c", "import google.adk.agents"], cwd, (0,)),
    }
    if diff:
        commands["templating diff HEAD~1"] = (
            [*templating, "diff", "HEAD~1", str(target), "--format", "json"],
            cwd,
            (0,),
        )
    found = medians(commands, env, runs)
    print(label)
    print(f"  {'':40} {'wall':>8} {'CPU':>8}")
    for name, (wall, cpu) in found.items():
        print(f"  {name:40} {wall * 1000:6.0f}ms {cpu * 1000:6.0f}ms")
    preview, lint = found["templating preview"], found["templating lint"]
    good = True
    for reference, target in (("from google.adk.agents import LlmAgent", True), ("import google.adk.agents", False)):
        base = found[reference]
        wall, cpu = preview[0] / (lint[0] + base[0]), preview[1] / (lint[1] + base[1])
        shown = f"{wall:.2f}x wall, {cpu:.2f}x CPU"
        if target:
            verdict = "ok" if wall <= TARGET else "OVER"
            print(f"  preview / (lint + {reference}): {shown} (target <= {TARGET:.0f}x: {verdict})")
            good = good and wall <= TARGET
        else:  # google-adk 2.13 loads its agent classes lazily: this imports none of them
            print(f"  preview / (lint + {reference}): {shown} (information: this import loads no agent class)")
    if diff:
        d = found["templating diff HEAD~1"]
        print(f"  diff / preview: {d[0] / preview[0]:.2f}x wall, {d[1] / preview[1]:.2f}x CPU (information)")
    return good


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    with tempfile.TemporaryDirectory() as folder:
        env = compile_package(Path(folder) / "pycache")
        repo = Path(folder) / "repo"
        app = write_app(repo)
        print(f"bench_preview: {runs} runs each, medians, Python {sys.version.split()[0]}")
        good = bench_app("generated ten-agent app (shop)", app.relative_to(repo), repo, env, runs, diff=True)
        corpus = next((p.joinpath(*CORPUS_APP) for p in ROOT.parents if p.joinpath(*CORPUS_APP).is_dir()), None)
        if corpus is None:
            print("adk-samples' travel-concierge: skipped (no ../shared/corpora)")
        else:
            copy = Path(folder) / "travel-concierge"
            shutil.copytree(corpus, copy, ignore=shutil.ignore_patterns("__pycache__", ".*"))
            label = "adk-samples travel-concierge (21 agents)"
            good &= bench_app(label, Path("travel_concierge"), copy, env, runs, diff=False)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
