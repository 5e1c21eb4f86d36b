"""What the commands of `templating` share: the exit codes, the error for bad usage, saying something on
stderr, and the help formatters."""

from __future__ import annotations

import argparse
import os
import sys

__all__ = ["EXIT_FINDINGS", "EXIT_OK", "EXIT_USAGE", "RawFormatter", "UsageError", "error"]

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad usage or unreadable input: reported on stderr with exit code 2."""


def error(message: str) -> None:
    """A message on stderr (dropped if stderr is closed: never onto stdout, which carries results)."""
    if sys.stderr is not None:
        print(message, file=sys.stderr)


def _columns() -> int:
    """The terminal's width as `shutil.get_terminal_size` gives it (`COLUMNS`, else the terminal, else
    80), without importing `shutil` (with `bz2` and `lzma`): argparse's formatter imports it for every
    argument added, about 2 ms of each command's start."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class Formatter(argparse.HelpFormatter):
    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


class RawFormatter(Formatter, argparse.RawDescriptionHelpFormatter):
    pass
