"""The `templating` command: render an instruction, list its keys, lint instructions, convert an ADK
instruction.

Exit codes: 0 success, 1 missing keys (or other findings), 2 bad usage or unreadable input.
Errors are one clear message on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from .convert import ConversionError, convert_adk
from .errors import MissingKeyError
from .template import Template, parse

__all__ = ["main"]

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad usage or unreadable input: reported on stderr with exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def read_text(path: str, *, what: str = "template", decode_errors: bool = False) -> str:
    """The text of `path` (`-` is stdin), exactly as written (line endings kept, a leading byte
    order mark dropped), or a UsageError saying why it cannot be read. `decode_errors`: let a
    UnicodeDecodeError through (linting reports an undecodable `.py` file as a finding)."""
    try:
        if path == "-":
            if sys.stdin is None:
                raise UsageError("stdin is closed: there is nothing to read")
            stream = getattr(sys.stdin, "buffer", None)
            text = stream.read().decode("utf-8") if stream is not None else sys.stdin.read()
        else:
            with open(path, "rb") as handle:
                data = handle.read()
            if path.endswith(".py"):
                from .pysource import python_text  # only for Python files: it imports ast and the linter

                text = python_text(data)
            else:
                text = data.decode("utf-8")
    except FileNotFoundError:
        raise UsageError(f"{what} file not found: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{what} path is a directory, not a file: {path}") from None
    except PermissionError:
        raise UsageError(f"cannot read {what} file (permission denied): {path}") from None
    except UnicodeDecodeError as exc:
        if decode_errors:
            raise
        where = "stdin" if path == "-" else f"{what} file"
        if path != "-" and path.endswith(".py"):
            declared = exc.encoding.replace("_", "-").lower() not in ("utf-8", "utf8")
            encoding = f"valid {exc.encoding}, as its coding line declares" if declared else "valid UTF-8"
            also = "" if declared else " and declares no other encoding (PEP 263)"
            raise UsageError(
                f"Python file is not {encoding}{also}: {path} (byte {exc.start}); Python itself would refuse it"
            ) from None
        raise UsageError(f"{where} is not valid UTF-8: {path} (byte {exc.start})") from None
    except OSError as exc:
        raise UsageError(f"cannot read {what} from {path}: {exc.strerror or exc}") from None
    return text.removeprefix("\ufeff")


_JSON_TYPES = {dict: "an object", list: "an array", str: "a string", int: "a number", float: "a number"}


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise ValueError(f"duplicate key {key!r}")
        data[key] = value
    return data


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text} is out of range")
    return value


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read_state(path: str | None) -> dict[str, Any]:
    """State from a JSON file holding an object; empty state when no file is given.

    Strict JSON: no NaN or Infinity, no numbers out of range, no duplicate keys.
    """
    if path is None:
        return {}
    text = read_text(path, what="state")
    name = "stdin" if path == "-" else path
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys, parse_float=_finite, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise UsageError(f"state is not valid JSON: {name}:{exc.lineno}:{exc.colno}: {exc.msg}") from None
    except ValueError as exc:  # a duplicate key, NaN, a number out of range, an integer too long
        reason = str(exc)
        if "integer string conversion" in reason:
            reason = f"an integer has more than {sys.get_int_max_str_digits()} digits"
        raise UsageError(f"state is not valid JSON: {name}: {reason}") from None
    except RecursionError:
        raise UsageError(f"state is nested too deeply to read: {name}") from None
    if not isinstance(data, dict):
        raise UsageError(f"state must be a JSON object (key -> value), not {_json_type(data)}: {name}")
    return data


def _python_target(file: str) -> tuple[str, str | None] | None:
    """`FILE.py` or `FILE.py:NAME` as (path, name); None for any other file."""
    if file == "-":
        return None
    if file.endswith(".py"):
        return file, None
    path, sep, name = file.rpartition(":")
    if sep and path.endswith(".py"):
        if not name:
            raise UsageError(
                f"{file} names no instruction: write {path}:NAME (a module constant or an agent's name=), "
                f"or {path} alone if it holds one instruction"
            )
        return path, name
    return None


def _scan_file(path: str) -> Any:
    from .pysource import PythonSourceError, scan

    read_text(path, what="Python")  # a missing or unreadable file: the usual one-line error
    try:
        return scan([path], read=read_text)
    except PythonSourceError as exc:
        raise UsageError(exc.message) from None


def _where(item: Any) -> str:
    return f"{item.path}:{item.span.line}:{item.span.column}"


def _pick_instruction(path: str, name: str | None) -> Any:
    """The one instruction of `path` that `name` names (a constant, or an agent's `name=`)."""
    result = _scan_file(path)
    found = result.instructions
    names = sorted({n for item in found for n in item.names})
    if name is None:
        if len(found) == 1:
            return found[0]
        if not found:
            raise UsageError(f"no instruction found in {path} (string literals, module constants, agents)")
        if not names:
            raise UsageError(
                f"{path} holds {len(found)} instructions and none has a name to pick it by: assign one to a "
                f"module constant (NAME = instruction(...)) or give it to an agent with name=, then use {path}:NAME"
            )
        raise UsageError(f"{path} holds {len(found)} instructions: name one as {path}:NAME ({', '.join(names)})")
    matches = [item for item in found if name in item.names]
    if len(matches) > 1:  # an agent's name: its instruction, rather than its global_instruction
        matches = [item for item in matches if f"{name}.instruction" in item.names] or matches
    if not matches:
        site = f'(name="{name}").'
        skipped = [item for item in result.skipped if site in item.label or item.label == name]
        if skipped:
            item = skipped[0]
            raise UsageError(f"{item.label} at {_where(item)} cannot be rendered from the code: {item.reason}")
        known = f"; known names: {', '.join(names)}" if names else "; it holds no named instruction"
        raise UsageError(f"no instruction named {name!r} in {path}{known}")
    if len(matches) > 1:
        places = "; ".join(f"{item.label} at {_where(item)}" for item in matches)
        raise UsageError(
            f"{name!r} names {len(matches)} instructions in {path} ({places}): "
            f"say which, e.g. {path}:{name}.instruction or by its constant"
        )
    return matches[0]


def _cmd_render(args: argparse.Namespace) -> int:
    if args.file == "-" and args.state == "-":
        raise UsageError("the template and the state cannot both be read from stdin")
    target = _python_target(args.file)
    name = "<stdin>" if args.file == "-" else args.file
    if target is not None:
        item = _pick_instruction(*target)
        name = f"{_where(item)} ({item.label})"
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
    from .jinja_mode import JinjaError, jinja

    try:
        text = jinja(item.text)(state)
    except JinjaError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return EXIT_FINDINGS
    print(text, end="")
    return EXIT_OK


def _cmd_keys(args: argparse.Namespace) -> int:
    target = _python_target(args.file)
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
    result = _scan_file(path)
    found = [_pick_instruction(path, name)] if name is not None else result.instructions
    rows = []
    for item in found:
        placeholders = [] if item.dialect == "jinja" else Template(item.text, dialect=item.dialect).placeholders
        keys = []
        for node in placeholders:
            where, span = item.locate(node.span.start, node.span.end)
            keys.append(
                {"key": node.key, "optional": node.optional, "path": where, "line": span.line, "column": span.column}
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
            print(f"{row['instruction']} ({_where(item)}, {item.dialect}){note}")
            for key in dict.fromkeys(k["key"] + ("?" if k["optional"] else "") for k in row["keys"]):
                print(f"    {key}")
    if name is None:
        for skipped in result.skipped:
            print(f"{_where(skipped)}: skipped {skipped.label}: {skipped.reason}", file=sys.stderr)
    return EXIT_OK


# --- templating lint -------------------------------------------------------------------------


def _split_codes(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [code for value in values for code in value.split(",") if code.strip()]


def _github_escape(text: str, *, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def _format_text(diagnostics: list[Any], sources: dict[str, str]) -> str:
    from .errors import excerpt

    lines: list[str] = []
    for diag in diagnostics:
        where = diag.path or "<template>"
        if diag.span is None:
            lines.append(f"{where}: {diag.code} {diag.message}")
        else:
            origin = f"in {diag.origin}: " if diag.origin else ""
            lines.append(f"{where}:{diag.span.line}:{diag.span.column}: {diag.code} {origin}{diag.message}")
            source = sources.get(diag.path or "")
            if source is not None:
                lines.append(excerpt(source, diag.span))
        if diag.help:
            lines.append(f"    help: {diag.help}")
        if diag.url:
            lines.append(f"    docs: {diag.url}")
    return "\n".join(lines)


def _end(source: str | None, start: int, end: int, line: int, column: int) -> tuple[int, int]:
    """The 1-based line and (exclusive) column where a span ending at offset `end` stops."""
    if source is None:
        return line, column + (end - start)
    inside = source[start:end]
    if "\n" not in inside:
        return line, column + len(inside)
    return line + inside.count("\n"), len(inside) - inside.rfind("\n")


def _format_github(diagnostics: list[Any], sources: dict[str, str] | None = None) -> str:
    from pathlib import Path

    level = {"error": "error", "warning": "warning", "info": "notice"}
    lines = []
    for diag in diagnostics:
        props = []
        if diag.span is not None:
            if diag.path and diag.path != "<stdin>":  # stdin is no file in the repository: no file= property
                props.append(f"file={_github_escape(diag.path, prop=True)}")
            span = diag.span
            end_line, end_column = _end(
                (sources or {}).get(diag.path or ""), span.start, span.end, span.line, span.column
            )
            props += [f"line={span.line}", f"endLine={end_line}", f"col={span.column}", f"endColumn={end_column}"]
        elif diag.path and Path(diag.path).is_file():  # a whole-run finding (T011) about a schema file
            props.append(f"file={_github_escape(diag.path, prop=True)}")
        title = f"{diag.code} ({diag.origin})" if diag.origin else diag.code
        props.append(f"title={_github_escape(title, prop=True)}")
        message = f"{diag.message}\n{diag.url}" if diag.url else diag.message  # the rule's page, on its own line
        lines.append(f"::{level[diag.severity]} {','.join(props)}::{_github_escape(message)}")
    return "\n".join(lines)


def _relative_to_cwd(diag: Any) -> Any:
    """`diag` with an absolute path under the current folder made relative (a schema file from the config)."""
    import dataclasses
    from pathlib import Path

    if diag.path and Path(diag.path).is_absolute():
        path = Path(diag.path)
        cwd = Path.cwd().resolve()
        if path.resolve().is_relative_to(cwd):
            return dataclasses.replace(diag, path=path.resolve().relative_to(cwd).as_posix())
    return diag


def _summary(diagnostics: list[Any], files: int) -> str:
    counts = {severity: sum(d.severity == severity for d in diagnostics) for severity in ("error", "warning", "info")}
    noun = "template" if files == 1 else "templates"
    if not diagnostics:
        return f"{files} {noun} checked: no findings"
    parts = ", ".join(f"{n} {severity}{'' if n == 1 else 's'}" for severity, n in counts.items() if n)
    return f"{files} {noun} checked: {parts}"


def _cmd_lint(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .errors import TemplatingError
    from .lint import (
        DEFAULT_INCLUDE,
        collect_files,
        lint,
        load_config,
        load_schema,
        rules_for,
        select_rules,
        unused_keys,
    )

    try:
        config = load_config(path=Path(args.config) if args.config else None)
        select = _split_codes(args.select)
        if select == []:
            raise UsageError("--select needs at least one rule code (to turn rules off, use --ignore)")
        codes = select_rules(
            select=select if select is not None else config.select,
            extend_select=[*config.extend_select, *(_split_codes(args.extend_select) or [])],
            ignore=[*config.ignore, *(_split_codes(args.ignore) or [])],
        )
        spec = args.schema if args.schema is not None else config.schema
        base = None if args.schema is not None else config.root
        schema = load_schema(spec, base=base) if spec is not None else None
        if args.paths.count("-") > 1:
            raise UsageError("stdin ('-') can be linted only once")
        files = collect_files(args.paths, config, force_exclude=args.force_exclude)
    except TemplatingError as exc:
        raise UsageError(exc.message) from None
    except OSError as exc:  # a name too long, a folder that cannot be read
        where = f": {exc.filename}" if exc.filename else ""
        raise UsageError(f"cannot read the paths to lint{where}: {exc.strerror or exc}") from None
    if not files:
        if args.force_exclude and args.paths and not any(Path(p).is_dir() for p in args.paths):
            return EXIT_OK  # pre-commit passed only excluded files: nothing to do
        patterns = ", ".join(config.include or DEFAULT_INCLUDE)
        where = f" in {', '.join(args.paths)}" if args.paths else ""
        source = "'include' in [tool.templating]" if config.include else "the default patterns"
        raise UsageError(f"no template files found to lint{where} (files matching {patterns}, from {source})")
    if "T011" in codes and schema is None:
        named = [*(select if select is not None else config.select or ()), *config.extend_select]
        named += _split_codes(args.extend_select) or []
        if any(code.strip().upper() == "T011" or code.strip() == "unused-schema-key" for code in named):
            raise UsageError(
                "rule T011 (unused schema keys) needs a schema: pass --schema or set it in [tool.templating]"
            )
        codes = codes - {"T011"}  # "ALL" means every rule that applies: without a schema, T011 does not

    sources: dict[str, str] = {}
    python_files = [name for name in files if name != "-" and name.endswith(".py")]
    for name in files:
        if name in python_files:
            continue
        shown = "<stdin>" if name == "-" else name
        sources[shown] = read_text(name)
    results: list[tuple[str, list[Any]]] = []
    templates: list[Any] = [
        parse(text, dialect=args.dialect) for text in sources.values()
    ]  # cached: lint() reuses each
    for shown, text in sources.items():
        on = rules_for(None if shown == "<stdin>" else shown, config, codes)
        results.append(
            (shown, lint(text, schema=schema, select=on, path=shown, allow=config.allow, dialect=args.dialect))
        )
    checked = len(sources)
    per_file: dict[str, int] = {}  # Python files: the instructions linted in each (Jinja2 ones included)
    if python_files:
        found, python_templates = _lint_python(python_files, config, codes, schema)
        per_file = found.instructions
        checked += sum(per_file.values())
        templates += python_templates
        for path, text in found.sources.items():
            sources.setdefault(path, text)
        results += found.results
    run_findings: list[Any] = []
    if "T011" in codes and schema is not None:
        run_findings = [_relative_to_cwd(d) for d in unused_keys(schema, templates)]
    everything = [d for _, found_here in results for d in found_here] + run_findings

    if args.html:
        from .report import FileReport, render_html

        page = render_html(
            [
                FileReport(
                    shown,
                    sources[shown],
                    tuple(found),
                    args.dialect,
                    python=shown in per_file,
                    templates=per_file.get(shown, 1),
                )
                for shown, found in results
            ],
            run_findings=run_findings,
        )
        try:
            Path(args.html).write_text(page, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write HTML report {args.html}: {exc.strerror or exc}") from None
    if args.format == "json":
        print(json.dumps([d.as_dict() for d in everything], ensure_ascii=False, indent=2))
    elif args.format == "github":
        if everything:
            print(_format_github(everything, sources))
    else:
        if everything:
            print(_format_text(everything, sources))
        print(_summary(everything, checked), file=sys.stderr if everything else sys.stdout)
    return EXIT_FINDINGS if any(d.severity == "error" for d in everything) else EXIT_OK


class _PythonResults:
    """The findings of the Python files of a run, per file, and the text of every Python file read."""

    def __init__(self) -> None:
        self.results: list[tuple[str, list[Any]]] = []
        self.sources: dict[str, str] = {}
        self.instructions: dict[str, int] = {}  # per file shown: how many instructions were linted in it


def _lint_python(files: list[str], config: Any, codes: frozenset[str], schema: Any) -> tuple[_PythonResults, list[Any]]:
    """Lint the instructions inside Python files: each in its dialect, at its place in the file, with
    the tree-wide rules T014 (keys nothing writes) and T015 (instructions that are not strings)."""
    from .lint import SYNTAX_CHECKS, Diagnostic, rules_for
    from .pysource import PYTHON_SYNTAX, lint_instruction, never_written, scan, skipped_findings

    # A file that is not valid Python is a finding (E002), and the other files are still linted.
    def read(path: str) -> str:  # a file that is not in its encoding is an E002 finding too
        return read_text(path, what="Python", decode_errors=True)

    found = scan(files, suffixes=config.constant_suffixes, read=read, keep_going=True)
    written = found.written if "T014" in codes else None
    findings: list[Any] = [
        Diagnostic(PYTHON_SYNTAX, "error", error.reason, error.span, error.path, error.help) for error in found.errors
    ]
    for item in found.instructions:
        here: list[Any] = lint_instruction(item, schema=schema, select=codes, allow=config.allow)
        tags = {(d.path, d.span.start) for d in here if d.code == "T007"}  # a markup tag is no key read
        if written is not None:
            unset: list[Any] = never_written(item, written, schema=schema)
            here += [d for d in unset if (d.path, d.span.start) not in tags]
        findings += here
    if "T015" in codes:
        findings += skipped_findings(found)
    seen: set[tuple[Any, ...]] = set()
    by_file: dict[str, list[Any]] = {path: [] for path in files}
    allowed = frozenset(config.allow)
    for diag in findings:
        key = (diag.path, diag.span.start, diag.span.end, diag.code)
        if key in seen or (diag.code not in SYNTAX_CHECKS and diag.code not in rules_for(diag.path, config, codes)):
            continue
        if found.sources.get(diag.path, "")[diag.span.start : diag.span.end] in allowed:
            continue  # an allowed snippet, as written in the .py file ({summary}, <br>)
        seen.add(key)
        by_file.setdefault(diag.path, []).append(diag)
    out = _PythonResults()
    out.sources = found.sources
    for item in found.instructions:  # a file that holds an instruction is shown, findings or not
        by_file.setdefault(item.path, [])
    out.instructions = {path: 0 for path in by_file}
    for item in found.instructions:
        out.instructions[item.path] += 1
    for path, diags in by_file.items():
        diags.sort(key=lambda d: (d.span.start, d.code))
        out.results.append((path, diags))
    templates = [parse(item.text, dialect=item.dialect) for item in found.instructions if item.dialect != "jinja"]
    return out, templates


def _add_lint_command(commands: Any) -> None:
    lint = commands.add_parser(
        "lint",
        help="check instructions for likely mistakes (near-miss placeholders, schema mismatches, ...)",
        description="Lint instruction templates. Exit 0 when clean, 1 on error-level findings, 2 on bad usage.",
    )
    lint.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="template files or folders ('-' reads stdin); none: the project's [tool.templating] include globs",
    )
    lint.add_argument("--format", choices=("text", "json", "github"), default="text", help="output format")
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
        "--force-exclude",
        action="store_true",
        help="apply 'exclude' to files named on the command line too (for pre-commit, which names every file)",
    )
    lint.set_defaults(run=_cmd_lint)


def _version() -> str:
    from importlib import metadata  # slow to import: only for --version

    try:
        return metadata.version("agent-prompt-templating")
    except metadata.PackageNotFoundError:  # running from a checkout that is not installed
        return "unknown"


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

    render = commands.add_parser("render", help="render an instruction against state from a JSON file")
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

    keys = commands.add_parser("keys", help="list the state keys a template uses, in order of first use")
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
    return parser


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
"""


def _cmd_convert(args: argparse.Namespace) -> int:
    path = args.file.rpartition(":")[0] if ".py:" in args.file else args.file
    if path != "-" and path.endswith(".py"):
        raise UsageError(
            f"{args.file} is Python code: convert rewrites all of its input, code included; convert one "
            "instruction's text instead: put it in a file of its own, or pipe it in (templating convert - --from adk); "
            f"templating keys {path} lists where each instruction starts"
        )
    source = read_text(args.file)
    name = "<stdin>" if args.file == "-" else args.file
    try:
        text, differences = convert_adk(source)
    except ConversionError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return EXIT_FINDINGS
    for item in differences:
        print(f"{name}:{item.span.line}:{item.span.column}: warning: {item.text!r}: {item.message}", file=sys.stderr)
    print(text, end="")
    return EXIT_OK


def _add_convert(commands: Any) -> None:
    convert = commands.add_parser(
        "convert",
        help="rewrite an instruction from Google ADK's {key} syntax into the angle syntax",
        description=_CONVERT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    convert.add_argument(
        "file", metavar="FILE", help="the instruction's text to convert ('-' reads stdin); not a .py file"
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
