"""What the command-line tests share: running the command in process (`run`) or as a process (`cli`),
writing input files, and a small ADK app in Python."""

from __future__ import annotations

import io
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from templating.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "support_agent.txt"
EXAMPLE_STATE = ROOT / "examples" / "state.json"


def run(
    args: list[str],
    capsys: pytest.CaptureFixture[str],
    stdin: str | None = None,
    monkeypatch: pytest.MonkeyPatch | None = None,
) -> tuple[int, str, str]:
    if stdin is not None:
        assert monkeypatch is not None
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    try:
        code = main(args)
    except SystemExit as exc:  # argparse's own usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def write_bytes(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def cli(args: list[str], *, stdin: bytes | None = b"", **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
    """Run the real command in a subprocess, as a user would, from outside the checkout (so that
    ``python -m templating`` imports the installed package, not the source tree)."""
    return subprocess.run(
        [sys.executable, "-m", "templating", *args],
        input=stdin,
        capture_output=True,
        cwd=tempfile.gettempdir(),
        check=False,
        **kwargs,
    )


# A small ADK app in Python: the instructions inside agent code (issue 8)

PY_PROMPT = '''\
"""Prompts."""

ROOT_PROMPT = """
You plan trips for {user:name}.
Use {itinerary}.
"""
'''
PY_AGENT = """\
from google.adk.agents import LlmAgent
from templating import instruction

from .prompt import ROOT_PROMPT

x = 1 << 2 if 1 < 2 > 0 else 3  # Python code is never read as a template
planner = LlmAgent(name="planner", instruction=ROOT_PROMPT, output_key="plan")
helper = LlmAgent(name="helper", instruction="Summarise {plan}, then {extra}.")
support = instruction("Hi < name >,\\n" "see <plan>")
"""
