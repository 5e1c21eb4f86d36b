"""A project whose tool module is in a folder reached through a link (`app/sub` -> `../real_sub`) and hands state to
`remember` from `..memory`: `app.memory` to Python, importing `app.sub.tools` (run with google-adk: the tool's
write reaches the session; the first turn raises KeyError for `topic`, the tool running after the instruction is
read). A `memory.py` beside `real_sub` writes another key. Written by the tests of the scan's users: the cold run,
the editor's updates, the cache, the index and the preview."""

from __future__ import annotations

import os
from pathlib import Path

AGENT = (
    "from google.adk.agents import LlmAgent\n\nfrom .sub.tools import note_topic\n\n"
    "root_agent = LlmAgent(name='helper', model='m', instruction='Talk about {topic}.', tools=[note_topic])\n"
)
TOOLS = (
    "from google.adk.tools import ToolContext\n\nfrom ..memory import remember\n\n\n"
    "def note_topic(topic: str, tool_context: ToolContext) -> dict:\n"
    "    remember(tool_context.state, topic)\n    return {'ok': True}\n"
)
MEMORY = 'def remember(memory, topic: str) -> None:\n    memory["topic"] = topic\n'

FILES = {
    "pyproject.toml": "[tool.templating]\n",
    "app/__init__.py": "from . import agent\n",
    "app/agent.py": AGENT,
    "app/memory.py": MEMORY,
    "memory.py": MEMORY.replace('"topic"', '"other"'),
    "real_sub/__init__.py": "",
    "real_sub/tools.py": TOOLS,
}


def write_linked(root: Path, *, files: dict[str, str] = FILES, link: str = "app/sub", to: str = "../real_sub") -> Path:
    """`files` written under `root`, and the link `link` -> `to` made; the current folder left as it is."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    os.symlink(to, root / link)
    return root
