"""The lint engine: a project's files linted with the whole project's context, callable from Python.

[`lint_project`][templating.lint.engine.lint_project] lints paths (files, folders, or none: the
project's `include`) and returns a [`LintResult`][templating.lint.engine.LintResult]. Python files
are read with the context of every Python file of the project (imports, agents, state writes), so a
prompt module named alone gets the findings it gets in a whole-tree run; findings are reported for
the files named only. A [`Project`][templating.lint.engine.Project] keeps what it read, so one
file's new text (an editor's buffer) is re-linted without reading the rest again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..nodes import Dialect, Span
from ..template import parse
from .adk_schema import check_against_schema
from .baseline import Baseline, apply_baseline, load_baseline
from .cache import LintCache, cache_folder
from .check import lint
from .config import LintConfig, LintConfigError, glob_list, rules_for, select_rules, severities
from .discovery import DEFAULT_INCLUDE
from .project import (
    FileSkipped,
    LintInputError,
    Walker,
    find_root,
    has_marker,
    is_too_wide,
    project_config,
    read_bytes,
    read_text,
)
from .reach import affected, flagged, reported_in
from .registry import PYTHON_SYNTAX, SKIPPED_FILE, SYNTAX_CHECKS, Diagnostic, Severity
from .result import CheckedTemplate, FileFindings, LintResult, checked, of_files, per_file, relative_to_cwd, renamed
from .rules.adk_literal import naming_the_writer
from .rules.python import lint_instruction, never_written, skipped_findings
from .rules.schema_keys import unused_keys
from .rules.state_schema import unread_state_schemas
from .schema import Schema, load_schema
from .suppress import apply_suppressions, read_suppressions
from .util import relative, shown

if TYPE_CHECKING:
    from ..pysource import Instruction, InstructionKey, Scan, Skipped, Write

__all__ = ["CheckedTemplate", "LintResult", "Project", "lint_project"]


_Findings = dict[str, FileFindings]


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
    as the command line's options, on top of `[tool.templating]`; `severity`: the level each rule is
    reported with (`{"T014": "error"}`), on top of the table's `severity`; `dialect`: of template files;
    `cache`: keep runs on disk and give a run none of whose inputs changed from there (`cache_dir`: in that
    folder, which also turns the cache on; see `templating.lint.cache`)."""

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
        severity: Mapping[str, str] | None = None,
        cache: bool = False,
        cache_dir: str | Path | None = None,
    ) -> None:
        if root is None and config_path is not None:
            root = Path(config_path).resolve().parent
        self.root = Path(root).resolve() if root is not None else find_root(paths).resolve()
        # a root found by a marker (or given) is walked for context; else (or when the root is / or a
        # home folder: never walked whole) only the named files' folders
        self.marked = (root is not None or has_marker(self.root)) and not is_too_wide(self.root)
        self.config: LintConfig = project_config(self.root, Path(config_path) if config_path else None)
        self.dialect: Dialect = dialect
        self.force_exclude = force_exclude
        self.severity = {**self.config.severity, **severities(severity, "severity=")}
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
        self.cache: LintCache | None = None  # runs kept on disk (templating.lint.cache), when asked for
        if cache or cache_dir is not None:
            folder = cache_folder(self.root, given=cache_dir, configured=self.config.cache_dir)
            self.cache = LintCache(folder) if folder is not None else None
        self._texts: dict[str, str | Exception] = {}  # Python files read: text, or why not
        self._scan: Scan | None = None
        self._writes: dict[str, list[Write]] = {}
        self._errors: dict[str, Any] = {}
        self._context: list[str] = []
        self._walked: dict[str, str] = {}  # files found by walking, as shown -> "" or the real path of a link
        self._rules_for: dict[str, frozenset[str]] = {}
        self._selected: dict[tuple[str, ...], tuple[list[str], list[Diagnostic], set[str]]] = {}
        self._last: _Findings | None = None  # each file's findings after the last update
        self._unwalked: set[str] = set()  # files updated that the walk leaves out
        # the files whose part of the scan the last update changed (scanned again, or holding an instruction
        # given by one scanned again): what a caller keeping its own view of the scan must take again
        self.scanned_again: frozenset[str] = frozenset()
        self._statements: dict[str, Any] = {}  # each Python file's import statements, with the text read

    # -- which files

    def files(self, paths: Sequence[str] = ()) -> tuple[list[str], list[Diagnostic]]:
        """The files to lint for `paths` (shown relative to the current folder), and findings for
        those skipped unread. A file named is linted unless `force_exclude` and `exclude` drop it."""
        files, notes, _ = self._select(paths)
        return files, notes

    def _select(self, paths: Sequence[str]) -> tuple[list[str], list[Diagnostic], set[str]]:
        """The files to lint, the findings for those left unread, and which of the files the user
        named (those may be outside the root; the others were found by walking and stay inside).
        Worked out once per list of paths (the command line asks for the files, then lints them)."""
        key = tuple(paths)
        kept = self._selected.get(key)
        if kept is None:
            kept = self._selected[key] = self._choose(paths)
        files, notes, named = kept
        return list(files), list(notes), set(named)

    def _choose(self, paths: Sequence[str]) -> tuple[list[str], list[Diagnostic], set[str]]:
        config = self.config
        show = _Shower(self.root)
        found: dict[str, str] = {}  # identity (resolved path) -> as shown; a file named twice is linted once
        named: set[str] = set()
        notes: list[Diagnostic] = []

        def add_walked(folder: Path, patterns: tuple[str, ...]) -> None:
            refused = is_too_wide(folder)
            if refused:
                raise LintConfigError(
                    f"refusing to walk {folder}: {refused} (name the project's folder or its files,"
                    " or run inside a project: a folder with a pyproject.toml or a .git)"
                )
            inside = folder.is_relative_to(self.root)
            include = glob_list(patterns)
            for entry in self.walker.entries(folder):
                relative = entry.relative if inside else Path(entry.path).as_posix()
                if not include.match(relative):
                    continue
                name = show(entry.path)
                if entry.skip is not None:
                    notes.append(Diagnostic(SKIPPED_FILE, "info", entry.skip, None, name))
                    continue
                if entry.link:
                    name = show(entry.real)
                    self._walked[name] = entry.real
                else:
                    self._walked[name] = ""  # a plain file found by walking: read without following links
                found.setdefault(entry.real, name)
            below = str(folder).rstrip(os.sep) + os.sep
            for path, reason in self.walker.skipped:  # folders that could not be listed, in any walk so far
                if path == str(folder) or path.startswith(below):
                    notes.append(Diagnostic(SKIPPED_FILE, "info", reason, None, show(path)))

        if not paths:
            if not config.include:
                raise LintConfigError(
                    "no paths given and no 'include' globs in [tool.templating] of pyproject.toml"
                    + (f" ({config.path})" if config.path else " (none found)")
                )
            add_walked(self.root, tuple(config.include))
        patterns = (*config.include, *DEFAULT_INCLUDE)
        for given in paths:
            if given == "-":
                found.setdefault("-", "-")
                continue
            item = Path(given)
            if item.is_dir():
                folder = item.resolve()
                if self.marked and folder.is_relative_to(self.root):
                    self.walker.entries(self.root)  # the whole tree, walked once: the Python context reads it too
                add_walked(folder if folder.is_relative_to(self.root) else Path(os.path.abspath(item)), patterns)
            elif not (self.force_exclude and _excluded(item, config)):
                key = os.path.realpath(given)
                if key not in found:
                    found[key] = given
                    if not self.force_exclude:  # pre-commit names the files, not the user: they stay inside
                        named.add(given)
        return list(found.values()), notes, named

    # -- reading Python files

    def _read_python(self, path: str, *, named: bool) -> str:
        from ..pysource import python_text

        if path in self.overrides:
            return self.overrides[path]
        cached = self._texts.get(path)
        if cached is None:
            try:
                cached = python_text(self._read_bytes(path, named=named))
            except (OSError, FileSkipped, UnicodeDecodeError) as exc:
                cached = exc
            self._texts[path] = cached
        if isinstance(cached, Exception):
            raise cached
        return cached

    def _read_bytes(self, path: str, *, named: bool) -> bytes:
        """A file's bytes: one the user named as it is; one found by walking without following a
        link at its end (its folders are the walk's, inside the root), or through its link once the
        walk saw the link's target is inside; any other only inside the root."""
        limit = self.config.max_file_size
        if named:
            return read_bytes(path, limit=limit)
        walked = self._walked.get(path)
        if walked == "":
            return read_bytes(path, limit=limit, follow=False)
        return read_bytes(path, limit=limit, root=self.root)

    def _reader(self, path: str) -> str:
        return self._read_python(shown(Path(path)) if os.path.isabs(path) else path, named=False)

    def _context_files(self, named: Sequence[str] = ()) -> list[str]:
        """The Python files read for context: the whole project's, or without a project marker (the
        root is then just the paths' common folder, say a home folder) those of the named files' folders."""
        show = _Shower(self.root)
        if not self.marked:
            folders = sorted({Path(name).absolute().parent for name in named})
            return [
                show(e.path)
                for f in folders
                for e in self.walker.entries(f, recursive=False)
                if e.skip is None and not e.link and e.relative.endswith(".py")
            ]
        if not self._context:
            self._context = [
                show(e.path)
                for e in self.walker.entries(self.root)
                if e.skip is None and not e.link and e.relative.endswith(".py")
            ]
            for name in self._context:
                self._walked.setdefault(name, "")
        return self._context

    def _full_scan(self, linted: Sequence[str], named: set[str] | None = None) -> Scan:
        from ..pysource import scan

        given = set(linted) if named is None else named  # the files the user named: read wherever they are
        files = list(dict.fromkeys([*linted, *self._context_files(linted)]))
        found = self._run_scan(scan, self._usable(files, named=given))
        self._scan = found
        self._last = None
        self._writes = {}
        for write in found.writes:
            self._writes.setdefault(write.path, []).append(write)
        self._errors = {error.path: error for error in found.errors}
        return found

    def _usable(self, files: Sequence[str], *, named: Collection[str]) -> list[str]:
        """The `files` that can be scanned: read (a file not valid UTF-8 is scanned: an E002 finding)."""
        usable = []
        for path in files:
            try:
                self._read_python(path, named=path in named)
            except UnicodeDecodeError:
                pass
            except (OSError, FileSkipped):
                continue
            usable.append(path)
        return usable

    def _run_scan(self, scan: Any, paths: list[str]) -> Scan:
        try:
            return _scan_safely(
                scan, paths, self.config.constant_suffixes, self._reader, root=str(self.root), unsaved=self.overrides
            )
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
        """Lint `paths` (files, folders; none: the configured `include`) in this project; with the cache on,
        a run none of whose inputs changed is read from it.

        A file found by walking that cannot be read (a link out of the root, dangling or looping, a
        FIFO, too large, not UTF-8, unreadable) is one E003 finding and the rest is linted; a file
        the user named that cannot be read is an error (`LintInputError`)."""
        if self.cache is not None and not self.overrides and "-" not in paths:
            return self.cache.lint(self, paths, self._lint)
        return self._lint(paths)

    def _lint(self, paths: Sequence[str]) -> LintResult:
        files, notes, named = self._select(paths)
        if list(paths).count("-") > 1:
            raise LintInputError("stdin ('-') can be linted only once")
        result = LintResult([], [], [], root=self.root)
        python_files = [name for name in files if name != "-" and name.endswith(".py")]
        python_set = set(python_files)
        templates_for_t011: list[Any] = []
        for name in files:
            if name in python_set:
                continue
            path_shown = "<stdin>" if name == "-" else name
            try:
                text = self.overrides.get(name) if name in self.overrides else None
                if text is None:
                    text = self._read_template(name, named=name in named)
            except FileSkipped as exc:
                notes.append(Diagnostic(SKIPPED_FILE, "info", exc.reason, None, path_shown))
                continue
            result.files.append(path_shown)
            result.sources[path_shown] = text
            template = parse(text, dialect=self.dialect)
            templates_for_t011.append(template)
            on = self._rules(None if name == "-" else name)
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
            display = {}  # the scan's names -> as named
            for name in python_files:
                scanned = name if name in self._walked else shown(Path(name))
                display[scanned] = name
                if name in named:
                    named.add(scanned)
            python_files = list(display)
            found = self._full_scan(python_files, named)
            linted = set(python_files)
            for path in python_files:
                if path not in found.sources:
                    try:
                        self._read_python(path, named=path in named)
                    except FileSkipped as exc:
                        notes.append(Diagnostic(SKIPPED_FILE, "info", exc.reason, None, path))
                        continue
                    except OSError as exc:
                        if path in named:
                            raise LintInputError(f"cannot read Python file {path}: {exc.strerror or exc}") from None
                        notes.append(Diagnostic(SKIPPED_FILE, "info", _unreadable(exc), None, path))
                        continue
                result.files.append(path)
            self._python_findings(found, linted, result)
            templates_for_t011 += [
                parse(item.text, dialect=item.dialect)
                for item in found.instructions
                if item.dialect != "jinja" and item.path in linted
            ]
            renamed(result, display)
        result.files = list(dict.fromkeys(result.files))
        result.diagnostics += notes
        if "T011" in self.codes and self.schema is not None:
            result.run_findings = [relative_to_cwd(d) for d in unused_keys(self.schema, templates_for_t011)]
            result.diagnostics += result.run_findings
        return self._leveled(result)

    def _leveled(self, result: LintResult) -> LintResult:
        """`result` with each finding at the severity `[tool.templating] severity` (or `severity=`) gives its rule."""
        if self.severity:
            levels = cast("dict[str, Severity]", self.severity)  # checked by severities()
            result.diagnostics = [
                dataclasses.replace(d, severity=levels[d.code]) if d.code in levels else d for d in result.diagnostics
            ]
            result.run_findings = [
                dataclasses.replace(d, severity=levels[d.code]) if d.code in levels else d for d in result.run_findings
            ]
        return result

    def _read_template(self, name: str, *, named: bool) -> str:
        """A template file's text (`-`: stdin). One found by walking that cannot be read or decoded is
        `FileSkipped` (an E003 finding); one the user named, an `InputError` (the run stops)."""
        if name == "-" or named:
            return read_text(name, limit=self.config.max_file_size)
        try:
            data = self._read_bytes(name, named=False)
            return data.decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError as exc:
            raise FileSkipped(name, f"not valid UTF-8 (byte {exc.start}): not read") from None
        except FileSkipped:
            raise
        except OSError as exc:
            raise FileSkipped(name, _unreadable(exc)) from None

    def _rules(self, path: str | None) -> frozenset[str]:
        """The rules on for `path` (per-file-ignores applied), worked out once per file."""
        if path is None:
            return rules_for(None, self.config, self.codes)
        on = self._rules_for.get(path)
        if on is None:
            on = self._rules_for[path] = rules_for(path, self.config, self.codes)
        return on

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
        given_at: dict[tuple[object, ...], list[tuple[str, Span]]] = {}  # a finding -> its instruction's call sites
        for item in instructions:
            here = lint_instruction(item, schema=self.schema, select=codes, allow=config.allow)
            if any(d.code == "T020" for d in here):  # the help names the writer of the key meant
                # the first writer in the project's files' order, whatever order they were scanned in
                writes = sorted((w for ws in self._writes.values() for w in ws), key=lambda w: (w.path, w.span.start))
                here = [naming_the_writer(d, flagged(found, d), writes) for d in here]
            quiet = {(d.path, d.span.start) for d in here if d.code == "T007" and d.span}
            if item.state_schemas:  # the agent's state_schema= model: T001 (and T009 for nested keys) against it
                against = check_against_schema(item, select=codes)
                here += against
                quiet |= {(d.path, d.span.start) for d in against if d.code == "T001" and d.span}
            if written is not None:
                here += [
                    d
                    for d in never_written(item, written, schema=self.schema)
                    if (d.path, d.span and d.span.start) not in quiet
                ]
            for d in here:
                if d.span is not None and item.given_at:
                    given_at.setdefault((d.path, d.span.start, d.span.end, d.code), []).extend(item.given_at)
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
            if diag.code not in SYNTAX_CHECKS and diag.code not in self._rules(diag.path):
                continue
            if found.sources.get(diag.path or "", "")[diag.span.start : diag.span.end] in allowed:
                continue  # an allowed snippet, as written in the .py file ({summary}, <br>)
            seen.add(key)
            kept.append(diag)
        kept = self._suppressed(found, kept, given_at, named, instructions)
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

    def _suppressed(
        self,
        found: Scan,
        findings: list[Diagnostic],
        given_at: dict[tuple[object, ...], list[tuple[str, Span]]],
        named: set[str],
        instructions: list[Instruction],
    ) -> list[Diagnostic]:
        """`findings` without those a `# templating: ignore[...]` comment silences, with the findings
        about the comments of the `named` files (T022, T023); see `templating.lint.suppress`."""
        places = set(named)  # the files whose comments may silence a finding: its own, its call sites'
        for d in findings:
            places.add(d.path or "")
            if d.span is not None:
                places.update(path for path, _ in given_at.get((d.path, d.span.start, d.span.end, d.code), ()))
        files = {
            path: read_suppressions(path, found.sources[path])
            for path in places
            if path.endswith(".py") and path in found.sources
        }
        linted = {item.key for item in instructions}
        unsure = [place for item in found.instructions if item.key not in linted for place in item.given_at]
        return apply_suppressions(
            findings,
            given_at,
            files,
            report_in={path for path in named if path in files},
            rule_on=lambda code, path: code in self._rules(path),
            unsure=unsure,
        )

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

    def update(self, path: str, text: str | None) -> LintResult:
        """Re-lint with `text` as the content of the file `path` (an editor's buffer; `None`: the file's
        own content again, or none when it was deleted), reading no other file again.

        The result lists in `files` the files whose findings or templates changed (an empty list of
        findings clears a file), and `path`; for each, it gives exactly what a fresh
        [`lint_project`][templating.lint.engine.lint_project] of the project with the same unsaved
        texts gives. Only the files whose scan may change are scanned again (`path`, what it imports,
        and the files importing those: see `templating.lint.reach.affected`); the findings of every
        file are then computed from that scan as a fresh run computes them, and compared with the
        last ones (after the first update of a project not yet linted: every file)."""
        target = shown(Path(path))
        if text is None:
            self.overrides.pop(target, None)
        else:
            self.overrides[target] = text
        if not target.endswith(".py"):
            if text is None and not os.path.lexists(target):
                return LintResult([], [], [target], root=self.root)
            return self.lint([target])
        if self._scan is None:  # nothing linted yet: every file's findings
            context = self._context_files([target])
            outside = [] if target in context else [target]  # a file the walk leaves out is linted as named
            first = self._full_scan(outside)
            self._last = self._all_findings(first, [*context, *outside])
            self.scanned_again = frozenset(first.sources)
            return self._leveled(of_files(self._last, sorted({target, *self._last}), root=self.root))
        old = self._scan
        before = self._last if self._last is not None else self._all_findings(old, self._context_files([target]))
        previous = old.sources.get(target)
        self._texts.pop(target, None)
        if os.path.lexists(target) != (target in self._context) and target not in self._unwalked:
            self._context = []  # a file created or deleted: the project's files are walked again
            self._selected.clear()
            self.walker.forget()
        context = self._context_files([target])
        if os.path.lexists(target) and target not in context:
            self._unwalked.add(target)  # not walked (excluded, ignored, outside): not looked for again
        usable = self._usable([*context, *([] if target in context else [target])], named=(target,))
        texts = {name: self._text_of(name) for name in usable}
        texts.setdefault(target, "")
        given_in = [item.given_in for item in old.instructions]
        rescanned = affected(target, texts, previous, given_in, self._statements)
        for name in set(self._statements) - set(texts):
            del self._statements[name]
        from ..pysource import Scan, scan

        sub = self._run_scan(scan, [name for name in usable if name in rescanned])
        for name in rescanned:
            self._writes.pop(name, None)
            self._errors.pop(name, None)
        for write in sub.writes:
            self._writes.setdefault(write.path, []).append(write)
        for error in sub.errors:
            self._errors[error.path] = error
        # Kept: what no file scanned again gives (those give theirs anew), each by its identity.
        found: dict[InstructionKey, Instruction] = {
            item.key: item for item in old.instructions if rescanned.isdisjoint(item.given_in)
        }
        found.update({item.key: item for item in sub.instructions})
        sources = {name: source for name, source in old.sources.items() if name not in rescanned}
        merged = Scan(
            instructions=list(found.values()),
            skipped=[item for item in old.skipped if item.path not in rescanned] + sub.skipped,
            writes=[w for writes in self._writes.values() for w in writes],
            sources={**sources, **sub.sources},
            errors=list(self._errors.values()),
            state_schemas=[s for s in old.state_schemas if s.given_in not in rescanned] + sub.state_schemas,
        )
        self._scan = merged
        self.scanned_again = frozenset(
            {*rescanned, *(item.path for item in sub.instructions)}
            | {item.path for item in old.instructions if not rescanned.isdisjoint(item.given_in)}
        )
        after = self._all_findings(merged, context if target in context else [*context, target])
        self._last = after
        changed = {target} | {name for name in {*before, *after} if before.get(name) != after.get(name)}
        return self._leveled(of_files(after, sorted(changed), root=self.root))

    def _text_of(self, name: str) -> str:
        text = self.overrides.get(name)
        if text is None:
            cached = self._texts.get(name)
            text = cached if isinstance(cached, str) else ""
        return text

    def _all_findings(self, found: Scan, context: Sequence[str]) -> _Findings:
        """Each Python file's findings, templates, text and count of instructions, as a fresh run of the
        project's Python files (`context`) gives them from the scan `found`."""
        named = {name for name in context if name in found.sources}
        result = LintResult([], [], [], root=self.root)
        self._python_findings(found, named, result)
        return per_file(result)


class _Shower:
    """Paths as findings show them (see `util.shown`), without a system call per path: relative to
    the current folder when under it, else absolute. Made once per run (it reads the current folder)."""

    def __init__(self, root: Path) -> None:
        self.cwd = str(Path.cwd().resolve())
        self.prefix = self.cwd.rstrip(os.sep) + os.sep

    def __call__(self, path: str) -> str:
        if path.startswith(self.prefix):
            return path[len(self.prefix) :]
        return "." if path == self.cwd else path


def _unreadable(exc: OSError) -> str:
    return f"cannot be read ({exc.strerror or exc}): not read"


def _excluded(item: Path, config: LintConfig) -> bool:
    from .config import _matches

    return _matches(relative(item, config.root), config.exclude)


_collections = threading.Lock()
_scans = 0  # scans running (threads: the language server)
_thresholds = gc.get_threshold()


@contextlib.contextmanager
def _no_full_collections() -> Iterator[None]:
    """No full garbage collection while scans run: a scan keeps every tree it parses, so each full
    collection would walk them all again (about a third of the parsing time on a large project);
    the young generations are still collected, and the thresholds are restored when the last ends."""
    global _scans, _thresholds
    with _collections:
        if _scans == 0:
            _thresholds = gc.get_threshold()
            gc.set_threshold(_thresholds[0], _thresholds[1], 1_000_000)
        _scans += 1
    try:
        yield
    finally:
        with _collections:
            _scans -= 1
            if _scans == 0:
                gc.set_threshold(*_thresholds)


def _scan_safely(
    scan: Any, paths: list[str], suffixes: Sequence[str], read: Any, *, root: str, unsaved: Collection[str]
) -> Scan:
    try:
        with _no_full_collections():
            result: Scan = scan(paths, suffixes=suffixes, read=read, keep_going=True, root=root, unsaved=unsaved)
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
    severity: Mapping[str, str] | None = None,
    cache: bool = False,
    cache_dir: str | Path | None = None,
    baseline: str | Path | Baseline | None = None,
) -> LintResult:
    """Lint `paths` (files and folders; none: the project's `include` globs) with the whole project's
    context. See [`Project`][templating.lint.engine.Project] for the options.

    `baseline`: a baseline file (or a loaded [`Baseline`][templating.lint.baseline.Baseline]) whose
    findings are left out; `baselined` and `stale` in the result count what it dropped and what it
    records that was not found (see `templating.lint.baseline`)."""
    recorded = load_baseline(baseline) if isinstance(baseline, str | Path) else baseline
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
        severity=severity,
        cache=cache,
        cache_dir=cache_dir,
    )
    result = project.lint(paths)
    if recorded is not None:
        apply_baseline(result, recorded)
    return result
