"""The `templating` command: render an instruction, list its keys, lint instructions, convert an ADK
instruction.

Exit codes: 0 success, 1 missing keys (or other findings), 2 bad usage or unreadable input.
Errors are one clear message on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from .errors import MissingKeyError, TemplatingError
from .linter.registry import DOCS_URL

# Each command imports what it uses when it runs (`lint` the linter, `render` the renderer, ...), so that
# starting one does not pay for the others: `import templating.cli` loads only argparse and the errors.

__all__ = ["main"]

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad usage or unreadable input: reported on stderr with exit code 2."""


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


class _Formatter(argparse.HelpFormatter):
    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


class _RawFormatter(_Formatter, argparse.RawDescriptionHelpFormatter):
    pass


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _cmd_render(args: argparse.Namespace) -> int:
    from .inputs import read_state, read_text
    from .linter.pick import pick_instruction, python_target, where
    from .template import Template

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
    from .errors import excerpt

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
    from .jinja_mode.mode import JinjaError, jinja

    try:
        text = jinja(item.text)(state)
    except JinjaError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return EXIT_FINDINGS
    print(text, end="")
    return EXIT_OK


def _cmd_keys(args: argparse.Namespace) -> int:
    from .inputs import read_text
    from .linter.pick import python_target
    from .template import Template

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
        for key in template.keys:
            print(key)
    return EXIT_OK


def _keys_python(path: str, name: str | None, *, json_output: bool) -> int:
    """The keys of each instruction in a Python file (or of the one `name` names)."""
    from .linter.pick import pick_instruction, scan_file, where
    from .template import Template

    result = scan_file(path)
    found = [pick_instruction(path, name)] if name is not None else result.instructions
    rows = []
    for item in found:
        placeholders = [] if item.dialect == "jinja" else Template(item.text, dialect=item.dialect).placeholders
        keys = []
        for node in placeholders:
            place, span = item.locate(node.span.start, node.span.end)
            keys.append(
                {"key": node.key, "optional": node.optional, "path": place, "line": span.line, "column": span.column}
            )
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
            note = " (Jinja2: keys are not listed)" if item.dialect == "jinja" else ""
            print(f"{row['instruction']} ({where(item)}, {item.dialect}){note}")
            for key in dict.fromkeys(k["key"] + ("?" if k["optional"] else "") for k in row["keys"]):
                print(f"    {key}")
    if name is None:
        for skipped in result.skipped:
            print(f"{where(skipped)}: skipped {skipped.label}: {skipped.reason}", file=sys.stderr)
    return EXIT_OK


# --- templating lint -------------------------------------------------------------------------


def _lint_once(args: argparse.Namespace, overrides: dict[str, str] | None = None) -> tuple[Any, Any]:
    """One run of the engine over the paths of `args`: the project and its result (None: every file named
    is excluded, nothing to do). `overrides`: texts to lint instead of those files' (fixes not written yet)."""
    from .linter.engine import Project
    from .linter.project import LintInputError

    try:
        project = Project(
            paths=args.paths,
            config_path=args.config,
            overrides=overrides,
            schema=args.schema,
            select=args.select,
            extend_select=args.extend_select,
            ignore=args.ignore,
            dialect=args.dialect,
            force_exclude=args.force_exclude,
            cache=not args.no_cache,
            cache_dir=None if args.no_cache else args.cache_dir,
        )
        files, _ = project.files(args.paths)
        if not files:
            if args.force_exclude and args.paths and not any(os.path.isdir(p) for p in args.paths):
                return project, None  # pre-commit passed only excluded files: nothing to do
            from .linter.discovery import DEFAULT_INCLUDE

            config = project.config
            patterns = ", ".join(dict.fromkeys((*config.include, *DEFAULT_INCLUDE)) if args.paths else config.include)
            where = f" in {', '.join(args.paths)}" if args.paths else ""
            if not args.paths:
                source = "'include' in [tool.templating]"
            elif config.include:
                source = "'include' in [tool.templating] and the default patterns"
            else:
                source = "the default patterns"
            raise UsageError(f"no template files found to lint{where} (files matching {patterns}, from {source})")
        result = project.lint(args.paths)
    except LintInputError as exc:
        raise UsageError(exc.message) from None
    except TemplatingError as exc:
        raise UsageError(exc.message) from None
    except OSError as exc:  # a name too long, a folder that cannot be read
        where = f": {exc.filename}" if exc.filename else ""
        raise UsageError(f"cannot read the paths to lint{where}: {exc.strerror or exc}") from None
    if not result.files:
        raise UsageError("nothing could be linted: " + "; ".join(d.message for d in result.diagnostics[:3]))
    return project, result


def _fix_run(args: argparse.Namespace, project: Any, result: Any) -> Any:
    """Fix until stable (`templating.linter.fixes.fix_until_stable`), each pass linted again in memory;
    a file whose fixes do not settle is said on stderr and left out."""
    from .linter.fixes import MAX_PASSES, fix_until_stable

    def relint(texts: dict[str, str]) -> tuple[Any, Any]:
        again = _lint_once(args, texts)
        return again if again[1] is not None else (project, result)

    run = fix_until_stable(project, result, relint, unsafe=args.unsafe_fixes)
    for path, codes in run.unsettled.items():
        _error(
            f"templating: {path}: not fixed, its fixes ({', '.join(codes)}) do not settle (a pass gave back an "
            f"earlier text, or there were fixes left after {MAX_PASSES} passes): fix it by hand"
        )
    return run


def _print_diff(args: argparse.Namespace, project: Any, result: Any) -> int:
    """`--diff`: the unified diff of what fixing until stable changes, nothing written; exit 1 when there
    is anything to fix."""
    from .linter.fixes import diff_of

    run = _fix_run(args, project, result)
    for fixed in run.files:
        sys.stdout.write(diff_of(fixed))
    files = "file" if len(run.files) == 1 else "files"
    note = f"{run.count} {_fixes(run.count)} would be applied in {len(run.files)} {files}" if run.count else ""
    print(note + _passes(run.passes) if note else "nothing to fix", file=sys.stderr)
    return EXIT_FINDINGS if run.count or run.unsettled else EXIT_OK


def _apply_fixes(args: argparse.Namespace, project: Any, result: Any) -> str:
    """`--fix`: fix until stable, then write the files, each whole; a file that cannot be written is said on
    stderr and left as is. What was applied, for the summary."""
    from .linter.fixes import FixWriteError, write_fix

    run = _fix_run(args, project, result)
    count = files = 0
    for fixed in run.files:
        try:
            write_fix(fixed, root=str(project.config.root))
        except FixWriteError as exc:
            _error(f"templating: {exc.message}")
            continue
        count += len(fixed.applied)
        files += 1
    return f"applied {count} {_fixes(count)} in {files} {'file' if files == 1 else 'files'}" + _passes(run.passes)


def _left(project: Any, result: Any, everything: list[Any], *, unsafe: bool) -> str:
    """`--fix`'s note on what is left: the findings, and how many of them `--unsafe-fixes` would fix."""
    from .linter.fixes import plan_fixes

    noun = "finding" if len(everything) == 1 else "findings"
    note = f"; {len(everything)} {noun} left" if everything else "; no findings left"
    if everything and not unsafe:  # those only an unsafe fix fixes (a safe one left is a file not written)
        counts = [sum(len(f.applied) for f in plan_fixes(project, result, unsafe=u)) for u in (True, False)]
        more = counts[0] - counts[1]
        note += f" ({more} fixable with --unsafe-fixes)" if more > 0 else ""
    return note


def _passes(passes: int) -> str:
    return f" ({passes} passes)" if passes > 1 else ""


def _fixes(count: int) -> str:
    return "fix" if count == 1 else "fixes"


def _cmd_lint(args: argparse.Namespace) -> int:
    """Lint with the engine (templating.linter.engine) and print the result in the format asked for; with
    `--fix`, write the fixes first and report what is left.

    The cyclic garbage collector is paused for the command (and resumed after, when it was on): a lint
    makes millions of objects that live until it ends (every parsed module of the project), which the
    collector would walk again and again to find no cycle among them (a tenth of a large project's run)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _lint_command(args)
    finally:
        if collecting:
            gc.enable()


def _lint_command(args: argparse.Namespace) -> int:
    from .linter.outputs import format_github, format_json, format_sarif, format_statistics, format_text, summary

    if args.paths.count("-") > 1:
        raise UsageError("stdin ('-') can be linted only once")
    if args.statistics and args.format in ("sarif", "github"):
        raise UsageError(f"--statistics prints text or json, not {args.format}: drop one of the two options")
    if args.select is not None and not [c for v in args.select for c in v.split(",") if c.strip()]:
        raise UsageError("--select needs at least one rule code (to turn rules off, use --ignore)")
    if args.write_baseline is not None:
        clash = [opt for opt, on in (("--baseline", args.baseline), ("--statistics", args.statistics)) if on]
        clash += ["--output-file"] if args.output_file else []
        if clash:
            raise UsageError(f"--write-baseline records every finding: it cannot be combined with {clash[0]}")
    if args.unsafe_fixes and not (args.fix or args.diff):
        raise UsageError("--unsafe-fixes widens --fix or --diff: add one of them")
    if args.fix or args.diff:
        option = "--diff" if args.diff else "--fix"
        clash = [
            o
            for o, on in (("--write-baseline", args.write_baseline is not None), ("'-' (stdin)", "-" in args.paths))
            if on
        ]
        if clash:
            raise UsageError(f"{option} fixes files on disk: it cannot be combined with {clash[0]}")
    if args.diff:
        shown = (("--html", args.html), ("--output-file", args.output_file), ("--statistics", args.statistics))
        clash = [o for o, on in shown if on]
        if clash:
            raise UsageError(f"--diff prints the fixes and nothing else: it cannot be combined with {clash[0]}")
    recorded = None
    if args.baseline is not None:
        from .linter.baseline import load_baseline

        recorded = load_baseline(args.baseline)  # read before linting: a bad file stops the run, nothing written
    project, result = _lint_once(args)
    if result is None:
        return EXIT_OK
    if args.diff:
        return _print_diff(args, project, result)
    fixed_note = ""
    if args.fix:
        fixed_note = _apply_fixes(args, project, result)
        project, result = _lint_once(args)  # what is left, read again from disk
        if result is None:
            return EXIT_OK
    if args.write_baseline is not None:
        from .linter.baseline import write_baseline

        written = write_baseline(args.write_baseline, result)
        noun = "finding" if written.total == 1 else "findings"
        print(f"wrote {written.total} {noun} to the baseline {args.write_baseline}")
        return EXIT_OK
    baseline_note = ""
    if recorded is not None:
        from .linter.baseline import apply_baseline

        applied = apply_baseline(result, recorded)
        noun = "finding" if applied.baselined == 1 else "findings"
        baseline_note = f"{applied.baselined} {noun} left out: recorded in the baseline {args.baseline}"
        if applied.stale:
            baseline_note += (
                f"; {applied.stale} it records no longer found (fixed): drop them with --write-baseline {args.baseline}"
            )
    everything = result.diagnostics
    if fixed_note:
        fixed_note += _left(project, result, everything, unsafe=args.unsafe_fixes)
    if args.html:
        _write_html(args, result)
    report = summary(everything, len(result.templates))
    if args.statistics:
        output = format_statistics(everything, as_json=args.format == "json")
    elif args.format == "json":
        output = format_json(everything)
    elif args.format == "sarif":
        output = format_sarif(everything, result.sources)
    elif args.format == "github":
        output = format_github(everything, result.sources) if everything else ""
    else:
        output = format_text(everything, result.sources) if everything else ""
    if args.output_file:
        _write_atomically(args.output_file, output + "\n" if output else "")
    elif output:
        print(output)
    if args.format == "text":  # the summary: on stdout when it is all there is to say
        if fixed_note:
            print(fixed_note, file=sys.stderr if everything or args.output_file else sys.stdout)
        print(report, file=sys.stderr if everything or args.output_file else sys.stdout)
        if baseline_note:
            print(baseline_note, file=sys.stderr if everything or args.output_file else sys.stdout)
    elif baseline_note:
        _error(f"templating: {baseline_note}")
    if fixed_note and args.format != "text":
        _error(f"templating: {fixed_note}")
    return EXIT_FINDINGS if result.errors and not args.exit_zero else EXIT_OK


def _write_atomically(path: str, text: str) -> None:
    """Write `text` to `path` whole or not at all (see `templating.inputs.write_text_whole`)."""
    from .inputs import write_text_whole

    try:
        write_text_whole(path, text, newline="")
    except OSError as exc:
        raise UsageError(f"cannot write the output file {path}: {exc.strerror or exc}") from None


def _write_html(args: argparse.Namespace, result: Any) -> None:
    from pathlib import Path

    from .report import FileReport, render_html

    by_file = result.by_file()
    spans: dict[str, list[Any]] = {}
    for checked in result.templates:  # the instructions of each Python file, where they are written
        if checked.name is not None:
            spans.setdefault(checked.path, []).append(checked.span)
    page = render_html(
        [
            FileReport(
                path,
                result.sources[path],
                tuple(d for d in by_file.get(path, []) if d.span is not None),
                args.dialect,
                python=path in result.python,
                templates=result.python.get(path, 1),
                instructions=tuple(spans.get(path, ())),
            )
            for path in result.files
            if path in result.sources
        ],
        run_findings=result.run_findings,
    )
    try:
        Path(args.html).write_text(page, encoding="utf-8", errors="backslashreplace")  # names are escaped already
    except OSError as exc:
        raise UsageError(f"cannot write HTML report {args.html}: {exc.strerror or exc}") from None


def _format_github(diagnostics: list[Any], sources: dict[str, str] | None = None) -> str:
    from .linter.outputs import format_github

    return format_github(diagnostics, sources)


def _add_lint_command(commands: Any) -> None:
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
        help="template files or folders ('-' reads stdin); none: the project's [tool.templating] include globs",
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
    lint.set_defaults(run=_cmd_lint)


_DIST_INFO = "agent_prompt_templating-"


def _version() -> str:
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
        print(f"{parser.prog} {_version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="templating", description="Render and check LLM agent instructions written as templates.")
    parser.add_argument("--version", action=_VersionAction, help="show program's version number and exit")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

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
    render.set_defaults(run=_cmd_render)

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
    keys.set_defaults(run=_cmd_keys)
    _add_convert(commands)
    _add_lint_command(commands)
    lsp = commands.add_parser(
        "lsp",
        help="run the language server over stdio, for editors (needs the lsp extra)",
        description=_LSP_HELP,
        formatter_class=_RawFormatter,
    )
    lsp.set_defaults(run=_cmd_lsp)
    return parser


_LSP_HELP = f"""\
Run templating's language server: the linter's findings on prompt files and on the instructions in
Python agent code, shown by the editor as you type, with hover, completion of state keys,
go-to-definition and quick fixes. It reads the [tool.templating] settings of the workspace's
pyproject.toml, as `templating lint` does.

You do not run it by hand: your editor starts it. Give the command `templating lsp` (or
`python -m templating lsp`) to the editor's LSP client (Neovim's lspconfig, Emacs' eglot, ...),
which talks to it over stdin and stdout (stdio); it takes no options. Set-ups for each editor:
{DOCS_URL}editors/

It needs the lsp extra (pygls, lsprotocol; from a checkout: pip install '.[lsp]'). Without it the
command prints which extra to install and exits with status 2.
"""


# templating convert FILE --from adk (issue 4): kept in its own functions.
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


def _cmd_convert(args: argparse.Namespace) -> int:
    from .convert import ConversionError, convert_adk
    from .inputs import read_text
    from .linter.pick import pick_instruction, python_target, where

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


def _cmd_lsp(args: argparse.Namespace) -> int:
    from .lsp import main as serve  # pygls is imported by this command only

    return serve()


def _add_convert(commands: Any) -> None:
    convert = commands.add_parser(
        "convert",
        help="rewrite an instruction from Google ADK's {key} syntax into the angle syntax",
        description=_CONVERT_HELP,
        formatter_class=_RawFormatter,
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
    convert.set_defaults(run=_cmd_convert)


def _quiet_stdout() -> None:
    """Point stdout at the null device, so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, AttributeError, ValueError):
        pass


def _error(message: str) -> None:
    """A message on stderr (dropped if stderr is closed: never onto stdout, which carries results)."""
    if sys.stderr is not None:
        print(message, file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as exc:  # --help, --version and usage errors: argparse has printed its text
            _flush_stdout()
            return exc.code if isinstance(exc.code, int) else EXIT_USAGE
        if sys.stdout is None:
            raise UsageError("stdout is closed: there is nowhere to write the result")
        code: int = args.run(args)
        _flush_stdout()
    except UsageError as exc:
        _error(f"templating: error: {exc}")
        return EXIT_USAGE
    except TemplatingError as exc:  # an input that cannot be read, an instruction not found
        _error(f"templating: error: {exc.message}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        _error("templating: interrupted")
        return 130
    except BrokenPipeError:  # e.g. piped into `head`: the reader has all it wanted
        _quiet_stdout()
        return EXIT_OK
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end]
        _error(f"templating: error: cannot write the output as {exc.encoding}: {bad!r} ({exc.reason})")
        return EXIT_USAGE
    except OSError as exc:
        if exc.filename is not None:  # a file this command tried to open, not the output
            _error(f"templating: error: cannot access {exc.filename}: {exc.strerror or exc}")
        else:
            _quiet_stdout()
            _error(f"templating: error: cannot write the output: {exc.strerror or exc}")
        return EXIT_USAGE
    return code


def _flush_stdout() -> None:
    """Surface write errors (a full disk, a closed pipe) here, not at interpreter exit."""
    if sys.stdout is not None:
        sys.stdout.flush()
