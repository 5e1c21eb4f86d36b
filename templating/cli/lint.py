"""`templating lint`: the options of a lint run, parsed and handed to
[`LintRun`][templating.linter.run.LintRun], whose messages are printed as it says them."""

from __future__ import annotations

import argparse
import gc
import sys
from typing import TYPE_CHECKING, Any

from .common import error

if TYPE_CHECKING:
    from ..linter.run import Message

__all__ = ["add_command"]


def add_command(commands: Any) -> None:
    lint = commands.add_parser(
        "lint",
        help="check instructions for likely mistakes (near-miss placeholders, schema mismatches, ...)",
        description="Lint instruction templates. Exit 0 when clean, 1 on error-level findings (none with "
        "--exit-zero; [tool.templating] severity sets each rule's level), 2 on bad usage.",
    )
    lint.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="template files or folders ('-' reads stdin); none: the project's [tool.templating] include globs,"
        " else '.'",
    )
    lint.add_argument("--format", choices=("text", "json", "github", "sarif"), default="text", help="output format")
    lint.add_argument(
        "--dialect",
        choices=("angle", "adk"),
        default="angle",
        help="the syntax the files are written in: angle (<key>, the default) or adk (Google ADK's {key})",
    )
    lint.add_argument("--schema", help="a JSON Schema or JSON list of keys (file), or a pydantic model 'module:Model'")
    lint.add_argument("--html", metavar="REPORT.html", help="also write a self-contained HTML report")
    lint.add_argument("--select", action="append", metavar="CODES", help="rules to run (comma-separated codes)")
    lint.add_argument("--extend-select", action="append", metavar="CODES", help="rules to add, e.g. T011")
    lint.add_argument("--ignore", action="append", metavar="CODES", help="rules to skip")
    lint.add_argument("--config", metavar="PYPROJECT", help="the pyproject.toml to read (default: nearest one)")
    lint.add_argument(
        "--statistics", action="store_true", help="print how many findings each rule gave instead of the findings"
    )
    lint.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even when there are error findings (2 still means bad usage)"
    )
    lint.add_argument(
        "--output-file",
        metavar="FILE",
        help="write the findings (or statistics) to FILE instead of stdout, whole or not at all",
    )
    lint.add_argument(
        "--baseline",
        metavar="FILE",
        help="report only the findings FILE does not record (written by --write-baseline); exit code from those",
    )
    lint.add_argument(
        "--write-baseline",
        metavar="FILE",
        help="record today's findings in FILE (by file, rule and flagged text) and exit 0",
    )
    lint.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply 'exclude' to files named on the command line too (for pre-commit, which names every file)",
    )
    lint.add_argument(
        "--cache-dir",
        metavar="FOLDER",
        help="keep the lint cache in FOLDER (default: $TEMPLATING_CACHE_DIR, 'cache-dir' in [tool.templating],"
        " or .templating_cache at the project root)",
    )
    lint.add_argument(
        "--no-cache", action="store_true", help="neither read nor write the lint cache: lint every file afresh"
    )
    lint.add_argument(
        "--fix",
        action="store_true",
        help="apply the safe fixes to the files (again until none is left), then lint again and report what is left",
    )
    lint.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="with --fix or --diff: also the unsafe fixes (they change what renders, e.g. make a placeholder optional)",
    )
    lint.add_argument(
        "--diff",
        action="store_true",
        help="print what --fix would change as a unified diff and write nothing; exit 1 when there is anything to fix",
    )
    lint.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    """Lint (`templating.linter.run.LintRun`) and print what the run says, as it says it.

    The cyclic garbage collector is paused for the command (and resumed after, when it was on): a lint
    makes millions of objects that live until it ends (every parsed module of the project), which the
    collector would walk again and again to find no cycle among them (a tenth of a large project's run)."""
    from ..linter.run import LintRun

    run = LintRun(
        paths=args.paths,
        config_path=args.config,
        schema=args.schema,
        select=args.select,
        extend_select=args.extend_select,
        ignore=args.ignore,
        dialect=args.dialect,
        force_exclude=args.force_exclude,
        cache=not args.no_cache,
        cache_dir=None if args.no_cache else args.cache_dir,
        baseline=args.baseline,
        write_baseline=args.write_baseline,
        fix=args.fix,
        unsafe_fixes=args.unsafe_fixes,
        diff=args.diff,
        format=args.format,
        statistics=args.statistics,
        html=args.html,
        output_file=args.output_file,
        exit_zero=args.exit_zero,
    )
    collecting = gc.isenabled()
    gc.disable()
    try:
        return run.run(say=_print).exit_code
    finally:
        if collecting:
            gc.enable()


def _print(message: Message) -> None:
    """A message of the run: results on stdout, notes on stderr (an aside only there, never on stdout)."""
    if message.stream == "aside":
        error(message.text)
    else:
        print(message.text, end=message.end, file=sys.stderr if message.stream == "stderr" else sys.stdout)
