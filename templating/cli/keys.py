"""`templating keys FILE`: the state keys a template uses, or those of each instruction of a Python file."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from typing import Any

from .common import EXIT_OK

__all__ = ["add_command"]


def add_command(commands: Any) -> None:
    keys = commands.add_parser(
        "keys",
        help="list the state keys a template uses, in order of first use",
        description="Print the state keys FILE's template uses, one a line in order of first use; for a Python file, "
        "each instruction it holds with its place and dialect, then its keys. Exit 0 on success, 2 on bad usage or "
        "unreadable input.",
    )
    keys.add_argument(
        "file", metavar="FILE", help="the instruction template ('-' reads stdin), or a Python file (FILE.py[:NAME])"
    )
    keys.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text: one key a line; json: every placeholder with its position",
    )
    keys.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    from ..inputs import read_text
    from ..linter.pick import python_target
    from ..template import Template

    target = python_target(args.file)
    if target is not None:
        return _keys_python(*target, json_output=args.format == "json")
    template = Template(read_text(args.file))
    if args.format == "json":
        rows = [
            {"key": node.key, "optional": node.optional, "line": node.span.line, "column": node.span.column}
            for node in template.placeholders
        ]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
    else:
        for key in _listed((node.key, node.optional) for node in template.placeholders):
            print(key)
    return EXIT_OK


def _listed(uses: Iterable[tuple[str, bool]]) -> list[str]:
    """Each key once, in order of first use, written `key?` when every use of it is optional (a key required
    anywhere must be in state): what the text format prints, for a template file as for a Python file."""
    optional: dict[str, bool] = {}
    for key, is_optional in uses:
        optional[key] = optional.get(key, True) and is_optional
    return [key + ("?" if is_optional else "") for key, is_optional in optional.items()]


def _keys_python(path: str, name: str | None, *, json_output: bool) -> int:
    """The keys of each instruction in a Python file (or of the one `name` names)."""
    from ..jinja_mode.reads import state_reads
    from ..linter.pick import pick_instruction, scan_file, where
    from ..template import Template

    result = scan_file(path)
    found = [pick_instruction(path, name)] if name is not None else result.instructions
    rows = []
    for item in found:
        if item.dialect == "jinja":  # the state keys it reads: optional when guarded in the template
            reads = [(r.key, not r.required, r.start, r.end) for r in state_reads(item.text)]
        else:
            placeholders = Template(item.text, dialect=item.dialect).placeholders
            reads = [(node.key, node.optional, node.span.start, node.span.end) for node in placeholders]
        keys = []
        for key, optional, start, end in reads:
            place, span = item.locate(start, end)
            keys.append({"key": key, "optional": optional, "path": place, "line": span.line, "column": span.column})
        rows.append(
            {
                "instruction": item.label,
                "names": list(item.names),
                "dialect": item.dialect,
                "path": item.path,
                "line": item.span.line,
                "column": item.span.column,
                "keys": keys,
            }
        )
    if json_output:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
    else:
        for row, item in zip(rows, found, strict=True):
            print(f"{row['instruction']} ({where(item)}, {item.dialect})")
            for key in _listed((k["key"], k["optional"]) for k in row["keys"]):
                print(f"    {key}")
    if name is None:
        for skipped in result.skipped:
            print(f"{where(skipped)}: skipped {skipped.label}: {skipped.reason}", file=sys.stderr)
    return EXIT_OK
