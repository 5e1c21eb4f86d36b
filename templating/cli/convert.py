"""`templating convert FILE --from adk`: an instruction in Google ADK's `{key}` syntax rewritten in the angle
syntax."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import EXIT_FINDINGS, EXIT_OK, RawFormatter, UsageError

__all__ = ["add_command"]

_CONVERT_HELP = """\
Print FILE, an instruction in Google ADK's {key} syntax, rewritten in the angle syntax so that it
renders the same: {key} becomes <key>, {key?} becomes <key?>, and text that would read as a
placeholder or an escape is escaped. On stderr, one line per span that ADK's code (unlike its
documentation and the converted template) would substitute or change: {{key}} (ADK strips the
extra braces), a {key} inside {{ ... }}, {key}} (ADK drops the extra brace), {artifact.name}.
Line endings are kept as written. Values: ADK renders them with
str(), the angle syntax renders dicts, lists and tuples as JSON; strings, numbers and None render
the same. Exit 0 on success, 1 if the text cannot be said exactly in the angle syntax
(<{key}> would read as the escape <<key>>), 2 on bad usage or unreadable input.

FILE.py:NAME converts one instruction written in Python code (a module constant, or the instruction
of the agent with that name=), picked as templating render and templating keys pick it; FILE.py alone
when it holds one instruction. The converted text is printed; the .py file is not changed (a google-adk
agent given the angle syntax would send it as written: give the result to templating's instruction()).
"""


def add_command(commands: Any) -> None:
    convert = commands.add_parser(
        "convert",
        help="rewrite an instruction from Google ADK's {key} syntax into the angle syntax",
        description=_CONVERT_HELP,
        formatter_class=RawFormatter,
    )
    convert.add_argument(
        "file",
        metavar="FILE",
        help="the instruction's text to convert ('-' reads stdin), or FILE.py:NAME: an instruction in Python code, "
        "picked as render and keys pick it (the module constant or the agent's name=)",
    )
    convert.add_argument(
        "--from", dest="source_dialect", required=True, choices=("adk",), help="the syntax FILE is written in"
    )
    convert.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    from ..convert import ConversionError, convert_adk
    from ..inputs import read_text
    from ..linter.pick import pick_instruction, python_target, where

    target = python_target(args.file)  # FILE.py[:NAME]: one instruction of the code, as render and keys pick it
    item: Any = None
    if target is not None:
        item = pick_instruction(*target)
        if item.dialect != "adk":
            raise UsageError(
                f"{where(item)}: {item.label} is read in the {item.dialect} syntax, not ADK's {{key}}: "
                "there is nothing to convert"
            )
        source = item.text
        name = f"{where(item)} ({item.label})"
    else:
        source = read_text(args.file)
        name = "<stdin>" if args.file == "-" else args.file
    try:
        text, differences = convert_adk(source)
    except ConversionError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return EXIT_FINDINGS
    for found in differences:
        place = f"{name}:{found.span.line}:{found.span.column}"
        if item is not None:  # where the span is written in the .py file
            path, span = item.locate(found.span.start, found.span.end)
            place = f"{path}:{span.line}:{span.column}"
        print(f"{place}: warning: {found.text!r}: {found.message}", file=sys.stderr)
    print(text, end="")
    return EXIT_OK
