"""The lint engine: a project's files linted with the whole project's context, callable from Python.

[`lint_project`][templating.lint.engine.lint_project] lints paths (files, folders, or none: the
project's `include`) and returns a [`LintResult`][templating.lint.engine.LintResult]. Python files
are read with the context of every Python file of the project (imports, agents, state writes), so a
prompt module named alone gets the findings it gets in a whole-tree run; findings are reported for
the files named only. A [`Project`][templating.lint.engine.Project] keeps what it read, so one
file's new text (an editor's buffer) is re-linted without reading the rest again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..nodes import Dialect, Span
from ..template import parse
from .adk_schema import check_against_schema, schema_keys
from .check import lint
from .config import LintConfig, LintConfigError, rules_for, select_rules
from .discovery import DEFAULT_INCLUDE
from .project import (
    FileSkipped,
    LintInputError,
    Walker,
    find_root,
    has_marker,
    project_config,
    read_bytes,
    read_text,
    wanted,
)
from .reach import flagged, imports_test, reads_any, reported_in
from .registry import PYTHON_SYNTAX, SKIPPED_FILE, SYNTAX_CHECKS, Diagnostic
from .result import CheckedTemplate, LintResult, checked, relative_to_cwd, renamed
from .rules.adk_literal import naming_the_writer
from .rules.python import lint_instruction, never_written, skipped_findings
from .rules.schema_keys import unused_keys
from .rules.state_schema import unread_state_schemas
from .schema import Schema, load_schema
from .util import relative, shown

if TYPE_CHECKING:
    from ..pysource import Instruction, InstructionKey, Scan, Skipped, Write

__all__ = ["CheckedTemplate", "LintResult", "Project", "lint_project"]


def _codes_of(values: Iterable[str] | str | None) -> list[str] | None:
    if values is None:
        return None
    if isinstance(values, str):
        values = [values]
    return [code for value in values for code in value.split(",") if code.strip()]


class Project:
    """A project to lint: its root, configuration and rules; it keeps the files it read.

    `root`: the project folder (default: found from the paths, see `templating.lint.project`);
    `config_path`: a `pyproject.toml` to read instead of the root's; `overrides`: text to use instead
    of a file's (an editor's unsaved buffers), by path; `schema`, `select`, `extend_select`, `ignore`:
    as the command line's options, on top of `[tool.templating]`; `dialect`: of template files."""

    def __init__(
        self,
        root: str | Path | None = None,
        *,
        paths: Sequence[str] = (),
        config_path: str | Path | None = None,
        overrides: Mapping[str, str] | None = None,
        schema: Any = None,
        select: Iterable[str] | str | None = None,
        extend_select: Iterable[str] | str | None = None,
        ignore: Iterable[str] | str | None = None,
        dialect: Dialect = "angle",
        force_exclude: bool = False,
    ) -> None:
        if root is None and config_path is not None:
            root = Path(config_path).resolve().parent
        self.root = Path(root).resolve() if root is not None else find_root(paths).resolve()
        # a root found by a marker (or given) is walked for context; else only the named files' folders
        self.marked = root is not None or has_marker(self.root)
        self.config: LintConfig = project_config(self.root, Path(config_path) if config_path else None)
        self.dialect: Dialect = dialect
        self.force_exclude = force_exclude
        self.overrides = {shown(Path(path)): text for path, text in (overrides or {}).items()}
        chosen = _codes_of(select)
        if chosen == []:
            raise LintConfigError("select needs at least one rule code (to turn rules off, use ignore)")
        extra = _codes_of(extend_select) or []
        self.codes = select_rules(
            select=chosen if chosen is not None else self.config.select,
            extend_select=[*self.config.extend_select, *extra],
            ignore=[*self.config.ignore, *(_codes_of(ignore) or [])],
        )
        if schema is not None:
            self.schema: Schema | None = load_schema(schema)
        elif self.config.schema is not None:
            self.schema = load_schema(self.config.schema, base=self.config.root)
        else:
            self.schema = None
        if "T011" in self.codes and self.schema is None:
            named = [*(chosen if chosen is not None else self.config.select or ()), *self.config.extend_select, *extra]
            if any(code.strip().upper() == "T011" or code.strip() == "unused-schema-key" for code in named):
                raise LintConfigError(
                    "rule T011 (unused schema keys) needs a schema: pass --schema or set it in [tool.templating]"
                )
            self.codes = self.codes - {"T011"}  # "ALL": every rule that applies; without a schema, T011 does not
        self.walker = Walker(self.config, self.root)
        self._texts: dict[str, str | Exception] = {}  # Python files read: text, or why not
        self._scan: Scan | None = None
        self._writes: dict[str, list[Write]] = {}
        self._errors: dict[str, Any] = {}
        self._context: list[str] = []

    # -- which files

    def files(self, paths: Sequence[str] = ()) -> tuple[list[str], list[Diagnostic]]:
        """The files to lint for `paths` (shown relative to the current folder), and findings for
        those skipped unread. A file named is linted unless `force_exclude` and `exclude` drop it."""
        config = self.config
        found: list[str] = []
        notes: list[Diagnostic] = []
        if not paths:
            if not config.include:
                raise LintConfigError(
                    "no paths given and no 'include' globs in [tool.templating] of pyproject.toml"
                    + (f" ({config.path})" if config.path else " (none found)")
                )
            found = [
                shown(item) for item in self.walker.walk(self.root) if wanted(relative(item, self.root), config.include)
            ]
        patterns = (*config.include, *DEFAULT_INCLUDE)
        for given in paths:
            if given == "-":
                found.append("-")
                continue
            item = Path(given)
            if item.is_dir():
                folder = item.resolve()
                self.walker.skipped.clear()
                for sub in self.walker.walk(folder if folder.is_relative_to(self.root) else item.absolute()):
                    if wanted(relative(sub, self.root), patterns):
                        found.append(shown(sub))
                for path, reason in self.walker.skipped:
                    notes.append(Diagnostic(SKIPPED_FILE, "info", reason, None, shown(Path(path))))
            elif not (self.force_exclude and _excluded(item, config)):
                found.append(given)
        unique: dict[str, str] = {}
        for name in found:
            key = name if name == "-" else os.path.realpath(name)
            unique.setdefault(key, name)
        return list(unique.values()), notes

    # -- reading Python files

    def _read_python(self, path: str, *, named: bool) -> str:
        from ..pysource import python_text

        if path in self.overrides:
            return self.overrides[path]
        cached = self._texts.get(path)
        if cached is None:
            try:
                root = None if named else self.root
                cached = python_text(read_bytes(path, limit=self.config.max_file_size, root=root))
            except (OSError, FileSkipped, UnicodeDecodeError) as exc:
                cached = exc
            self._texts[path] = cached
        if isinstance(cached, Exception):
            raise cached
        return cached

    def _reader(self, path: str) -> str:
        return self._read_python(shown(Path(path)) if os.path.isabs(path) else path, named=False)

    def _context_files(self, named: Sequence[str] = ()) -> list[str]:
        """The Python files read for context: the whole project's, or without a project marker (the
        root is then just the paths' common folder, say a home folder) those of the named files' folders."""
        if not self.marked:
            folders = sorted({Path(name).absolute().parent for name in named})
            return [shown(p) for f in folders for p in self.walker.walk(f, recursive=False) if p.suffix == ".py"]
        if not self._context:
            self._context = [shown(p) for p in self.walker.walk(self.root) if p.suffix == ".py"]
        return self._context

    def _full_scan(self, named: Sequence[str]) -> Scan:
        from ..pysource import scan

        files = list(dict.fromkeys([*named, *self._context_files(named)]))
        usable = []
        for path in files:
            try:
                self._read_python(path, named=path in named)
            except UnicodeDecodeError:
                pass  # scanned: an E002 finding
            except (OSError, FileSkipped):
                continue
            usable.append(path)
        found = self._run_scan(scan, usable)
        self._scan = found
        self._writes = {}
        for write in found.writes:
            self._writes.setdefault(write.path, []).append(write)
        self._errors = {error.path: error for error in found.errors}
        return found

    def _run_scan(self, scan: Any, paths: list[str]) -> Scan:
        try:
            return _scan_safely(scan, paths, self.config.constant_suffixes, self._reader, root=str(self.root))
        finally:
            # A kept read error is raised again at each scan, and each raise adds that scan's frames to its
            # traceback (and with them its syntax trees): an editor's session grew by megabytes an edit.
            for kept in self._texts.values():
                if isinstance(kept, BaseException):
                    kept.__traceback__ = kept.__context__ = kept.__cause__ = None

    def _written(self) -> frozenset[str] | None:
        if self._errors:
            return None
        keys = [w.key for writes in self._writes.values() for w in writes]
        if any(key is None for key in keys):
            return None
        return frozenset(key for key in keys if key is not None)

    # -- linting

    def lint(self, paths: Sequence[str] = ()) -> LintResult:
        """Lint `paths` (files, folders; none: the configured `include`) in this project."""
        files, notes = self.files(paths)
        if list(paths).count("-") > 1:
            raise LintInputError("stdin ('-') can be linted only once")
        result = LintResult([], [], [], root=self.root)
        python_files = [name for name in files if name != "-" and name.endswith(".py")]
        templates_for_t011: list[Any] = []
        for name in files:
            if name in python_files:
                continue
            path_shown = "<stdin>" if name == "-" else name
            try:
                text = self.overrides.get(name) if name in self.overrides else None
                if text is None:
                    guard = None if name in paths else self.root  # a file found by walking stays inside
                    text = read_text(name, limit=self.config.max_file_size, root=guard)
            except FileSkipped as exc:
                notes.append(Diagnostic(SKIPPED_FILE, "info", exc.reason, None, path_shown))
                continue
            result.files.append(path_shown)
            result.sources[path_shown] = text
            template = parse(text, dialect=self.dialect)
            templates_for_t011.append(template)
            on = rules_for(None if name == "-" else name, self.config, self.codes)
            result.diagnostics += lint(
                template, schema=self.schema, select=on, path=path_shown, allow=self.config.allow
            )
            keys = [node for node in template.placeholders]
            result.templates.append(
                CheckedTemplate(
                    path_shown,
                    None,
                    self.dialect,
                    Span(0, len(text), 1, 1),
                    tuple(dict.fromkeys(n.key for n in keys if not n.optional)),
                    tuple(dict.fromkeys(n.key for n in keys if n.optional)),
                )
            )
        if python_files:
            display = {shown(Path(name)): name for name in python_files}  # the scan's names -> as named
            python_files = list(display)
            found = self._full_scan(python_files)
            named = set(python_files)
            for path in python_files:
                if path not in found.sources:
                    try:
                        self._read_python(path, named=True)
                    except FileSkipped as exc:
                        notes.append(Diagnostic(SKIPPED_FILE, "info", exc.reason, None, path))
                        continue
                    except OSError as exc:
                        raise LintInputError(f"cannot read Python file {path}: {exc.strerror or exc}") from None
                result.files.append(path)
            self._python_findings(found, named, result)
            templates_for_t011 += [
                parse(item.text, dialect=item.dialect)
                for item in found.instructions
                if item.dialect != "jinja" and item.path in named
            ]
            renamed(result, display)
        result.files = list(dict.fromkeys(result.files))
        result.diagnostics += notes
        if "T011" in self.codes and self.schema is not None:
            result.run_findings = [relative_to_cwd(d) for d in unused_keys(self.schema, templates_for_t011)]
            result.diagnostics += result.run_findings
        return result

    def _python_findings(self, found: Scan, named: set[str], result: LintResult) -> None:
        """Findings of the instructions written in the `named` files, with the project's writes.

        An instruction kept in a text file (`load_instruction_from_file("writer.txt")`) is reported
        with a named Python file of its folder (or a folder above) that names that file."""
        codes, config = self.codes, self.config
        shown_in = reported_in(found, named)
        written = self._written() if "T014" in codes else None
        findings: list[Diagnostic] = [
            Diagnostic(PYTHON_SYNTAX, "error", error.reason, error.span, error.path, error.help)
            for error in found.errors
            if error.path in named
        ]
        instructions = [item for item in found.instructions if item.path in shown_in]
        for item in instructions:
            here = lint_instruction(item, schema=self.schema, select=codes, allow=config.allow)
            if any(d.code == "T020" for d in here):  # the help names the writer of the key meant
                writes = [w for ws in self._writes.values() for w in ws]
                here = [naming_the_writer(d, flagged(found, d), writes) for d in here]
            quiet = {(d.path, d.span.start) for d in here if d.code == "T007" and d.span}
            if item.state_schemas:  # the agent's state_schema= model: T001/T009/T010 against it
                against = check_against_schema(item, select=codes)
                here += against
                quiet |= {(d.path, d.span.start) for d in against if d.code == "T001" and d.span}
            if written is not None:
                here += [
                    d
                    for d in never_written(item, written | schema_keys(item), schema=self.schema)
                    if (d.path, d.span and d.span.start) not in quiet
                ]
            findings += here
        if "T015" in codes:
            findings += [d for d in skipped_findings(found) if d.path in named]
        if "T021" in codes:
            findings += [d for d in unread_state_schemas(found) if d.path in named]
        seen: set[tuple[Any, ...]] = set()
        allowed = frozenset(config.allow)
        kept: list[Diagnostic] = []
        for diag in findings:
            assert diag.span is not None
            key = (diag.path, diag.span.start, diag.span.end, diag.code)
            if diag.path not in shown_in or key in seen:
                continue
            if diag.code not in SYNTAX_CHECKS and diag.code not in rules_for(diag.path, config, codes):
                continue
            if found.sources.get(diag.path or "", "")[diag.span.start : diag.span.end] in allowed:
                continue  # an allowed snippet, as written in the .py file ({summary}, <br>)
            seen.add(key)
            kept.append(diag)
        kept.sort(key=lambda d: (d.path or "", d.span.start if d.span else -1, d.code))
        result.diagnostics += kept
        for path in shown_in:
            if path in found.sources:
                result.sources[path] = found.sources[path]
                if path in named:
                    result.python[path] = 0
        for item in instructions:
            result.python[item.path] = result.python.get(item.path, 0) + 1
            result.templates.append(checked(item))

    def instructions(self, path: str, *, reached: bool = False) -> tuple[list[Instruction], list[Skipped]]:
        """The instructions written in the Python file `path`, read with the project's context, and
        those skipped (their text is known only at run time). `reached`: also those its own code uses
        (an agent's instruction held by a constant of another module)."""
        from ..pysource import scan

        target = shown(Path(path))
        found = self._full_scan([target])
        error = next((e for e in found.errors if e.path == target), None)
        if error is not None:
            raise error
        # Each instruction by its identity (file, name, span; dialect and text): two that start at the same
        # character (BASE + QUIZ and BASE + MEMORY + QUIZ, given to two agents) are two.
        everywhere = {item.key: item for item in found.instructions}
        chosen: dict[InstructionKey, Instruction] = {}
        skipped = [item for item in found.skipped if item.path == target]
        if reached:  # what this file's own code reaches, each as the whole project reads it
            own = self._run_scan(scan, [target])
            for item in own.instructions:
                chosen[item.key] = everywhere.get(item.key, item)
            skipped += [item for item in own.skipped if item not in skipped]
        for key, item in everywhere.items():
            if item.path == target:
                chosen.setdefault(key, item)
        return list(chosen.values()), skipped

    def update(self, path: str, text: str) -> LintResult:
        """Re-lint with `text` as the content of the file `path` (an editor's buffer), re-reading nothing
        else: only this file and the project files that import it are scanned again.

        The result gives what a fresh [`lint_project`][templating.lint.engine.lint_project] with this
        override gives for every file whose findings may have changed, and lists those files in
        `files` (an empty list of findings clears a file): `path`, the files scanned again, the files
        of the instructions they reach (a prompt module whose agent is in `path`), and the files that
        read a state key whose writing the edit added or removed (T014)."""
        from ..pysource import Scan, scan

        target = shown(Path(path))
        self.overrides[target] = text
        if not target.endswith(".py"):
            return self.lint([target])
        if self._scan is None:
            self._full_scan([target])
        assert self._scan is not None
        before = self._written()
        self._texts.pop(target, None)
        affected = self._importers(target)
        sub = self._run_scan(scan, affected)
        for name in affected:
            self._writes.pop(name, None)
            self._errors.pop(name, None)
        for write in sub.writes:
            self._writes.setdefault(write.path, []).append(write)
        for error in sub.errors:
            self._errors[error.path] = error
        old, rescanned = self._scan, set(affected)
        # Kept: what no file scanned again gives (those give theirs anew), each by its identity.
        found: dict[InstructionKey, Instruction] = {
            item.key: item for item in old.instructions if item.path != target and rescanned.isdisjoint(item.given_in)
        }
        found.update({item.key: item for item in sub.instructions})
        merged = Scan(
            instructions=list(found.values()),
            skipped=[item for item in old.skipped if item.path not in rescanned] + sub.skipped,
            writes=[w for writes in self._writes.values() for w in writes],
            sources={**old.sources, **sub.sources},
            errors=list(self._errors.values()),
            state_schemas=[s for s in old.state_schemas if s.path not in rescanned] + sub.state_schemas,
        )
        self._scan = merged
        after = self._written()
        reported = {*affected, *(item.path for item in sub.instructions)}
        if "T014" in self.codes and before != after:
            changed = None if before is None or after is None else before ^ after
            reported |= {item.path for item in merged.instructions if reads_any(item, changed)}
        result = LintResult([], [], [], root=self.root)
        files = sorted(name for name in reported if name.endswith(".py") and name in merged.sources)
        result.files = files
        self._python_findings(merged, set(files), result)
        result.files = sorted({*files, *result.sources})
        return result

    def _importers(self, target: str) -> list[str]:
        """`target` and the project's Python files that may import it (two steps out): an import line
        naming its module, in a folder at or above the target's, or naming its package too."""
        chosen = [target]
        frontier = [target]
        context = self._context_files([target])
        for _ in range(2):
            tests = [imports_test(name) for name in frontier]
            frontier = []
            for name in context:
                if name in chosen:
                    continue
                text = self.overrides.get(name) or self._texts.get(name)
                if isinstance(text, str) and any(test(name, text) for test in tests):
                    chosen.append(name)
                    frontier.append(name)
        return chosen


def _excluded(item: Path, config: LintConfig) -> bool:
    from .config import _matches

    return _matches(relative(item, config.root), config.exclude)


def _scan_safely(scan: Any, paths: list[str], suffixes: Sequence[str], read: Any, *, root: str) -> Scan:
    try:
        result: Scan = scan(paths, suffixes=suffixes, read=read, keep_going=True, root=root)
    except RecursionError:
        raise LintInputError(
            "the project's Python code nests too deeply to follow (imports or expressions): nothing was linted"
        ) from None
    return result


def lint_project(
    paths: Sequence[str] = (),
    *,
    root: str | Path | None = None,
    overrides: Mapping[str, str] | None = None,
    select: Iterable[str] | str | None = None,
    ignore: Iterable[str] | str | None = None,
    schema: Any = None,
    extend_select: Iterable[str] | str | None = None,
    dialect: Dialect = "angle",
    config_path: str | Path | None = None,
    force_exclude: bool = False,
) -> LintResult:
    """Lint `paths` (files and folders; none: the project's `include` globs) with the whole project's
    context. See [`Project`][templating.lint.engine.Project] for the options."""
    project = Project(
        root,
        paths=paths,
        config_path=config_path,
        overrides=overrides,
        schema=schema,
        select=select,
        extend_select=extend_select,
        ignore=ignore,
        dialect=dialect,
        force_exclude=force_exclude,
    )
    return project.lint(paths)
