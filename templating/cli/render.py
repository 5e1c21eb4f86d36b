"""`templating render FILE --state STATE.json`: an instruction rendered against state."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import MissingKeyError
from .common import EXIT_FINDINGS, EXIT_OK, UsageError

__all__ = ["add_command"]


def add_command(commands: Any) -> None:
    render = commands.add_parser(
        "render",
        help="render an instruction against state from a JSON file",
        description="Print FILE, an instruction template (or an instruction in Python code, FILE.py:NAME), rendered "
        "against the state in STATE.json. Exit 0 on success, 1 when a required key is missing (the error on stderr), "
        "2 on bad usage or unreadable input.",
    )
    render.add_argument(
        "file",
        metavar="FILE",
        help="the instruction template ('-' reads stdin), or FILE.py:NAME: an instruction in Python code, "
        "by its constant or its agent's name",
    )
    render.add_argument(
        "--state", metavar="STATE.json", help="a JSON object of state ('-' reads stdin); default: empty"
    )
    render.add_argument(
        "--missing",
        choices=("error", "empty", "keep"),
        default="error",
        help="what a missing required key does: error (exit 1, the default), empty, or keep it as written",
    )
    render.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    from ..inputs import read_state, read_text
    from ..linter.pick import pick_instruction, python_target, where
    from ..template import Template

    if args.file == "-" and args.state == "-":
        raise UsageError("the template and the state cannot both be read from stdin")
    target = python_target(args.file)
    name = "<stdin>" if args.file == "-" else args.file
    if target is not None:
        item = pick_instruction(*target)
        name = f"{where(item)} ({item.label})"
        if item.dialect == "jinja":
            return _render_jinja(item, read_state(args.state), name)
        template = Template(item.text, dialect=item.dialect)
    else:
        template = Template(read_text(args.file))
    state = read_state(args.state)
    try:
        text = template.render(state, missing=args.missing)
    except MissingKeyError as exc:
        print(f"{name}: {exc if target is None else _missing_in_python(exc, item)}", file=sys.stderr)
        return EXIT_FINDINGS
    print(text, end="")
    return EXIT_OK


def _missing_in_python(exc: MissingKeyError, item: Any) -> str:
    """`exc` (about the text of `item`, an instruction in Python code) with every position mapped
    into the `.py` file the placeholder is written in: `path:line:column`, that file's line and a caret."""
    from ..errors import excerpt

    lines = [exc.message]
    for missing in exc.missing:
        path, span = item.locate(missing.span.start, missing.span.end)
        hint = f"; did you mean {missing.suggestion!r}?" if missing.suggestion else ""
        also = ""
        if missing.also:
            places = (item.locate(other.start, other.end) for other in missing.also)
            also = " (also at " + ", ".join(f"{p}:{s.line}:{s.column}" for p, s in places) + ")"
        lines.append(f"  at {path}:{span.line}:{span.column}: {missing.key!r} is missing{also}{hint}")
        source = item.file_text(path)
        if source is not None:
            lines.append(excerpt(source, span))
    lines.append(f"help: {exc.help}")
    return "\n".join(lines)


def _render_jinja(item: Any, state: dict[str, Any], name: str) -> int:
    from ..jinja_mode.mode import JinjaError, jinja

    try:
        text = jinja(item.text)(state)
    except JinjaError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return EXIT_FINDINGS
    print(text, end="")
    return EXIT_OK
