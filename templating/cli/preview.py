"""`templating preview TARGET`: what google-adk sends each agent's model on its first turn."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import EXIT_OK, error

__all__ = ["add_command"]


def add_command(commands: Any) -> None:
    preview = commands.add_parser(
        "preview",
        help="show what each agent's model sees on its first turn (google-adk's request, no model called)",
        description="For each agent of the app TARGET, in run order, print the system instruction and the "
        "instruction turn google-adk builds on that agent's first turn, the tools offered and where each state key "
        "it reads comes from. No model is called. Without --run the app is read from its code and none of it runs; "
        "with --run it is imported (its code runs, as with `adk run`). Exit 0 on success, 2 on bad usage or an "
        "unreadable target.",
    )
    preview.add_argument(
        "target",
        metavar="TARGET",
        help="the app: a folder or Python file holding root_agent (as `adk run` takes it), module:attribute, "
        "FILE.py:attribute, or an Agent Config YAML file",
    )
    preview.add_argument(
        "--state", metavar="STATE.json", help="a JSON object of session state ('-' reads stdin); default: empty"
    )
    preview.add_argument("--agent", metavar="NAME", help="only the agent(s) of this name")
    preview.add_argument("--format", choices=("text", "json", "markdown"), default="text", help="output format")
    preview.add_argument(
        "--run",
        action="store_true",
        dest="run_app",
        help="import the app and run its callbacks as google-adk would (this runs the project's code)",
    )
    preview.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    from ..inputs import read_state
    from ..preview import build_preview
    from ..preview.formats import as_json, as_markdown, as_text, summary

    state = read_state(args.state) if args.state else {}
    result = build_preview(args.target, state=state, run=args.run_app, agent=args.agent, announce=_say)
    for line in summary(result):
        _say(line)
    out = {"json": as_json, "markdown": as_markdown, "text": as_text}[args.format](result)
    sys.stdout.write(out)
    return EXIT_OK


def _say(line: str) -> None:
    error(f"templating preview: {line}")
