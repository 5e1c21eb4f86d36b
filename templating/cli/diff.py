"""`templating diff [BASE] [TARGET...]`: what each agent's model sees at a git revision and in the working tree."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import EXIT_FINDINGS, EXIT_OK

__all__ = ["add_command"]


def add_command(commands: Any) -> None:
    diff = commands.add_parser(
        "diff",
        help="compare what each agent's model sees at a git revision and in the working tree",
        description="Preview each app (read from its code: none of it runs) at BASE and in the working tree, and "
        "show per agent the unified diff of what its model sees, the keys it reads that were added, removed or made "
        "required, and the agents added or removed. BASE's files are read from git into a temporary folder; the "
        "working tree is not touched. Exit 0 (1 with --exit-code when anything changed), 2 on bad usage, a "
        "revision that does not exist or a folder that is not in a git repository.",
    )
    diff.add_argument(
        "args",
        nargs="*",
        metavar="[BASE] [TARGET...]",
        help="BASE: a git revision (default: the merge base of HEAD with the default branch); TARGET: an app as "
        "`templating preview` takes it (default: every app in the repository)",
    )
    diff.add_argument("--format", choices=("text", "markdown", "json"), default="text", help="output format")
    diff.add_argument("--exit-code", action="store_true", help="exit 1 when what any agent sees changed")
    diff.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    import os

    from ..preview.diff import as_json, as_markdown, as_text, run_diff
    from ..preview.git import Repository

    names = list(args.args)
    base = None
    if names and names[0] != "--" and not os.path.exists(names[0]) and Repository().is_revision(names[0]):
        base = names.pop(0)
    elif names and names[0] == "--":
        names.pop(0)
    result = run_diff(base, names)
    out = {"json": as_json, "markdown": as_markdown, "text": as_text}[args.format](result)
    sys.stdout.write(out)
    return EXIT_FINDINGS if args.exit_code and result.changed else EXIT_OK
