"""The ``templating`` command: render an instruction, list its keys, convert an ADK instruction.

Exit codes: 0 success, 1 missing keys (or other findings), 2 bad usage or unreadable input.
Errors are one clear message on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from .convert import ConversionError, convert_adk
from .errors import MissingKeyError
from .template import Template

__all__ = ["main"]

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad usage or unreadable input: reported on stderr with exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def read_text(path: str, *, what: str = "template") -> str:
    """The text of ``path`` (``-`` is stdin), or a UsageError saying why it cannot be read."""
    try:
        if path == "-":
            return sys.stdin.read()
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        raise UsageError(f"{what} file not found: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{what} path is a directory, not a file: {path}") from None
    except PermissionError:
        raise UsageError(f"cannot read {what} file (permission denied): {path}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{what} file is not valid UTF-8: {path} (byte {exc.start})") from None
    except OSError as exc:
        raise UsageError(f"cannot read {what} file {path}: {exc.strerror or exc}") from None


def read_state(path: str | None) -> dict[str, Any]:
    """State from a JSON file holding an object; empty state when no file is given."""
    if path is None:
        return {}
    text = read_text(path, what="state")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"state file is not valid JSON: {path}:{exc.lineno}:{exc.colno}: {exc.msg}") from None
    if not isinstance(data, dict):
        raise UsageError(f"state file must hold a JSON object (key -> value), not {type(data).__name__}: {path}")
    return data


def _cmd_render(args: argparse.Namespace) -> int:
    if args.file == "-" and args.state == "-":
        raise UsageError("the template and the state cannot both be read from stdin")
    template = Template(read_text(args.file))
    state = read_state(args.state)
    try:
        text = template.render(state, missing=args.missing)
    except MissingKeyError as exc:
        name = "<stdin>" if args.file == "-" else args.file
        print(f"{name}: {exc}", file=sys.stderr)
        return EXIT_FINDINGS
    sys.stdout.write(text)
    return EXIT_OK


def _cmd_keys(args: argparse.Namespace) -> int:
    template = Template(read_text(args.file))
    if args.format == "json":
        rows = [
            {"key": node.key, "optional": node.optional, "line": node.span.line, "column": node.span.column}
            for node in template.placeholders
        ]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
    else:
        for key in template.keys:
            print(key)
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="templating", description="Render and check LLM agent instructions written as templates.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    render = commands.add_parser("render", help="render an instruction against state from a JSON file")
    render.add_argument("file", metavar="FILE", help="the instruction template ('-' reads stdin)")
    render.add_argument(
        "--state", metavar="STATE.json", help="a JSON object of state ('-' reads stdin); default: empty"
    )
    render.add_argument(
        "--missing",
        choices=("error", "empty", "keep"),
        default="error",
        help="what a missing required key does: error (exit 1, the default), empty, or keep it as written",
    )
    render.set_defaults(run=_cmd_render)

    keys = commands.add_parser("keys", help="list the state keys a template uses, in order of first use")
    keys.add_argument("file", metavar="FILE", help="the instruction template ('-' reads stdin)")
    keys.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text: one key a line; json: every placeholder with its position",
    )
    keys.set_defaults(run=_cmd_keys)
    _add_convert(commands)
    return parser


# templating convert FILE --from adk (issue 4): kept in its own functions.
_CONVERT_HELP = """\
Print FILE, an instruction in Google ADK's {key} syntax, rewritten in the angle syntax so that it
renders the same: {key} becomes <key>, {key?} becomes <key?>, and text that would read as a
placeholder or an escape is escaped. On stderr, one line per span that ADK's code (unlike its
documentation and the converted template) would substitute or change: {{key}} (ADK strips the
extra braces), {key}} (ADK drops the extra brace), {artifact.name}. Values: ADK renders them with
str(), the angle syntax renders dicts, lists and tuples as JSON; strings, numbers and None render
the same. Exit 0 on success, 1 if the text cannot be said exactly in the angle syntax
(<{key}> would read as the escape <<key>>), 2 on bad usage or unreadable input.
"""


def _cmd_convert(args: argparse.Namespace) -> int:
    source = read_text(args.file)
    name = "<stdin>" if args.file == "-" else args.file
    try:
        text, differences = convert_adk(source)
    except ConversionError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return EXIT_FINDINGS
    for item in differences:
        print(f"{name}:{item.span.line}:{item.span.column}: warning: {item.text!r}: {item.message}", file=sys.stderr)
    sys.stdout.write(text)
    return EXIT_OK


def _add_convert(commands: Any) -> None:
    convert = commands.add_parser(
        "convert",
        help="rewrite an instruction from Google ADK's {key} syntax into the angle syntax",
        description=_CONVERT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    convert.add_argument("file", metavar="FILE", help="the instruction to convert ('-' reads stdin)")
    convert.add_argument(
        "--from", dest="source_dialect", required=True, choices=("adk",), help="the syntax FILE is written in"
    )
    convert.set_defaults(run=_cmd_convert)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        code: int = args.run(args)
    except UsageError as exc:
        print(f"templating: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # e.g. piped into `head`
        return EXIT_OK
    return code
