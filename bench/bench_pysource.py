"""Linting Python agent code: 1,000 .py files, against only reading and ``ast.parse``-ing them.

Run: python bench/bench_pysource.py

Builds a tree of 1,000 Python files laid out like ADK agent repositories (per agent: a prompt
module of ~2 KB constants with placeholders, XML-tagged sections and JSON; an agent module
importing it, with sub-agents and output_key; a tools module writing state; a plain helper
module), then times, in this one process, best of three rounds that alternate the two:

- reading every file and ``ast.parse``-ing it (the floor: what any ast-based tool must pay);
- ``templating lint --no-cache`` of the whole tree (``--format json`` to a null stream): a cold run,
  finding the instructions, resolving names across modules, linting each in its dialect, T014. Without
  ``--no-cache`` the second and third rounds would give the first round's result from the lint cache.

It prints both and their ratio. Target: the lint under 5 s on the development machine; the ratio
says how much the linting adds to the parse, so it can be compared across machines.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import tempfile
import time
from pathlib import Path

from templating.cli import main as cli

AGENTS = 250  # four files each

PROMPT = '''\
"""Prompts of agent {n}."""

PLANNER_INSTR = """
You are planning agent number {n}. You help the user plan a trip and you never book anything.

Current user:
  <user_profile>
  {{user_profile}}
  </user_profile>

Current time: {{_time}}

Return the plan as JSON:
{{"origin": "SFO", "destination": "CDG", "days": [{{"day": 1, "items": ["museum", "dinner"]}}]}}

Rules:
- If the user asks for flights, use `flight_search` and show at most 3 options.
- If x < y holds for the budget, say so; never write code such as `a << 2` in the answer.
- Keep each answer under 120 words.<br>
""" + "Remember the itinerary:\\n<itinerary>\\n{{itinerary}}\\n</itinerary>\\n" * 8

WRITER_INSTR = """Write the day-by-day plan for {{user:name}} from {{plan}}.
Use **Markdown** headings and a table:
| day | item |
|-----|------|
"""
'''

AGENT = """\
from google.adk.agents import Agent, LlmAgent

from . import prompt
from .prompt import WRITER_INSTR

writer = LlmAgent(name="writer_{n}", instruction=WRITER_INSTR, output_key="itinerary")
planner = Agent(
    name="planner_{n}",
    model="gemini-2.5-flash",
    instruction=prompt.PLANNER_INSTR,
    sub_agents=[writer],
    output_key="plan",
)
"""

TOOLS = """\
from datetime import datetime


def load_profile(callback_context):
    callback_context.state["user_profile"] = {{"name": "Ada"}}
    callback_context.state["_time"] = datetime.now().isoformat()
    callback_context.state.update({{"user:name": "Ada"}})


def score(values: list[int]) -> int:
    total = 0
    for value in values:
        if value < 10 and value > 2:
            total += value << 1
    return total
"""

HELPER = '''\
"""Plain code, no instruction: parsed and walked all the same."""

import json


class Cache:
    def __init__(self) -> None:
        self.items: dict[str, str] = {{}}

    def get(self, key: str) -> str | None:
        return self.items.get(key)

    def dump(self) -> str:
        return json.dumps(self.items, indent=2)


def helper_{n}(a: int, b: int) -> int:
    return a << 2 if a < b else b >> 1
'''


def build(root: Path) -> list[Path]:
    files = []
    for n in range(AGENTS):
        folder = root / f"agent_{n}"
        folder.mkdir(parents=True)
        for name, text in (("prompt", PROMPT), ("agent", AGENT), ("tools", TOOLS), ("helpers", HELPER)):
            path = folder / f"{name}.py"
            path.write_text(text.format(n=n), encoding="utf-8")
            files.append(path)
    return files


def parse_only(files: list[Path]) -> None:
    for path in files:
        ast.parse(path.read_bytes().decode("utf-8"), filename=str(path))


def lint_tree(root: Path) -> None:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = cli(["lint", str(root), "--format", "json", "--no-cache"])
    if code != 0:
        raise SystemExit(f"the benchmark tree should lint clean, exit code {code}")


def timed(action: object) -> float:
    start = time.perf_counter()
    action()  # type: ignore[operator]
    return time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "agents"
        files = build(root)
        size = sum(path.stat().st_size for path in files)
        here = os.getcwd()
        os.chdir(folder)  # no pyproject.toml around: the default include patterns
        try:
            parse = lint = float("inf")
            for _ in range(3):  # alternated, so that both see the same load of the machine
                parse = min(parse, timed(lambda: parse_only(files)))
                lint = min(lint, timed(lambda: lint_tree(root)))
        finally:
            os.chdir(here)
    print(f"{len(files)} Python files, {size / 1024:.0f} KB")
    print(f"read + ast.parse only:  {parse:7.3f} s")
    print(f"templating lint (cold): {lint:7.3f} s   ({lint / parse:.1f}x the parse)")
    print(f"target: lint under 5 s -> {'met' if lint < 5 else 'NOT met'}")


if __name__ == "__main__":
    main()
