"""The argument parser of `templating`: one sub-command per module of this package, each adding its own
options; help text as wide as the terminal, and `--version`."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from . import convert, diff, keys, lint, lsp, preview, render
from .common import EXIT_USAGE, Formatter

__all__ = ["build_parser", "version"]


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


_DIST_INFO = "agent_prompt_templating-"


def version() -> str:
    """The installed distribution's version, read from its `METADATA` where `importlib.metadata`
    would find it first (the first `sys.path` entry holding its `.dist-info`): importing
    `importlib.metadata` costs more than the rest of `--version`. Falls back to it otherwise."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith(_DIST_INFO) and name.endswith(".dist-info"):
                found = _metadata_version(os.path.join(entry or ".", name, "METADATA"))
                if found:
                    return found
    from importlib import metadata  # slow to import: only when the file above is not there

    try:
        return metadata.version("agent-prompt-templating") or "unknown"
    except metadata.PackageNotFoundError:  # running from a checkout that is not installed
        return "unknown"


def _metadata_version(path: str) -> str | None:
    """The `Version:` header of a distribution's `METADATA` file, or `None`."""
    try:
        with open(path, encoding="utf-8") as file:
            for line in file:
                if not line.strip():
                    return None  # the headers end at the first blank line
                if line.startswith("Version:"):
                    return line.partition(":")[2].strip() or None
    except (OSError, UnicodeDecodeError):
        return None
    return None


class _VersionAction(argparse.Action):
    """`--version`, looking the version up only when asked (every other command starts faster)."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        print(f"{parser.prog} {version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="templating", description="Render and check LLM agent instructions written as templates.")
    parser.add_argument("--version", action=_VersionAction, help="show program's version number and exit")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    for command in (render, keys, convert, lint, preview, diff, lsp):
        command.add_command(commands)
    return parser
