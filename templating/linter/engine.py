"""The lint engine: a project's files linted with the whole project's context, callable from Python.

[`lint_project`][templating.lint_project] (`templating.linter.run`) lints paths (files, folders, or none: the
project's `include`, else the current folder) with a [`Project`][templating.linter.engine.Project] and returns a
[`LintResult`][templating.linter.engine.LintResult]. Python files
are read with the context of every Python file of the project (imports, agents, state writes), so a
prompt module named alone gets the findings it gets in a whole-tree run; findings are reported for
the files named only. A [`Project`][templating.linter.engine.Project] keeps what it read, so one
file's new text (an editor's buffer) is re-linted without reading the rest again.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..nodes import Span
from .findings import config_files
from .incremental import IncrementalProject
from .project import FileSkipped, LintInputError
from .registry import SKIPPED_FILE, Diagnostic
from .result import CheckedTemplate, LintResult, per_file, relative_to_cwd, renamed
from .selection import _unreadable
from .util import shown

if TYPE_CHECKING:
    from ..pysource import Scan

__all__ = ["CheckedTemplate", "LintResult", "Project"]

_AGENT_CONFIG = "root_agent.yaml"


class Project(IncrementalProject):
    """A project to lint: its root, configuration and rules; it keeps the files it read.

    `root`: the project folder (default: found from the paths, see `templating.linter.project`);
    `config_path`: a `pyproject.toml` to read instead of the root's; `overrides`: text to use instead
    of a file's (an editor's unsaved buffers), by path; `schema`, `select`, `extend_select`, `ignore`:
    as the command line's options, on top of `[tool.templating]`; `severity`: the level each rule is
    reported with (`{"T014": "error"}`), on top of the table's `severity`; `dialect`: of template files;
    `cache`: keep runs on disk and give a run none of whose inputs changed from there (`cache_dir`: in that
    folder, which also turns the cache on; see `templating.linter.cache`)."""

    # Its parts, one concern each: `selection` (the files, reading them), `findings` (scanning, each
    # instruction's findings), `incremental` (an edit re-linted); here, a whole run.

    @property
    def scan(self) -> Scan | None:
        """The project's scan of its Python files (`templating.pysource.Scan`) as last made, by a lint run or an
        edit (`update`), or None before any. For callers keeping their own view of the project (the language
        server, the preview), which read it rather than scanning again; read-only: a run or an edit replaces it."""
        return self._scan

    # -- linting

    def lint(self, paths: Sequence[str] = ()) -> LintResult:
        """Lint `paths` (files, folders; none: the configured `include`, else the current folder) in this
        project; with the cache on, a run none of whose inputs changed is read from it.

        A file found by walking that cannot be read (a link out of the root, dangling or looping, a
        FIFO, too large, not UTF-8, unreadable) is one E003 finding and the rest is linted; a file
        the user named that cannot be read is an error (`LintInputError`)."""
        if self.cache is not None and not self.overrides and "-" not in paths:
            return self.cache.lint(self, paths, self._lint)
        return self._lint(paths)

    def _lint(self, paths: Sequence[str]) -> LintResult:
        from ..template import parse  # (the rules are imported when a run is not answered by the cache)
        from .check import lint
        from .rules.schema_keys import unused_keys

        files, notes, named = self._select(paths)
        if list(paths).count("-") > 1:
            raise LintInputError("stdin ('-') can be linted only once")
        result = LintResult([], [], [], root=self.root)
        python_files = [name for name in files if name != "-" and name.endswith(".py")]
        # an Agent Config app (root_agent.yaml): read by the scan with the files it names, linted with Python's
        configs = [name for name in files if os.path.basename(name) == _AGENT_CONFIG and name not in python_files]
        python_set = {*python_files, *configs}
        templates_for_t011: list[Any] = []
        for name in files:
            if name in python_set:
                continue
            path_shown = "<stdin>" if name == "-" else name
            try:
                text = self.override(name)
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
        if python_files or configs:
            from ..pysource.reading import trees_not_kept

            display = {}  # the scan's names -> as named
            for name in python_files:
                scanned = name if name in self._walked else shown(Path(name))
                display[scanned] = name
                if name in named:
                    named.add(scanned)
            python_files = list(display)
            with trees_not_kept():  # a whole run parses each file once: its trees are not kept for an edit
                found = self._full_scan(python_files, named, cold=True)
            linted = set(python_files)
            for config in sorted(config_files(found)):  # an Agent Config app under the paths linted
                if _covers(paths or [str(self.root)], config):
                    linted.add(config)
                    result.files.append(config)
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
            python = LintResult([], [], [], root=self.root)
            self._python_findings(found, linted, python)
            context = self._context_files(python_files)
            if linted == {name for name in context if name in found.sources} | config_files(found):
                self._last = per_file(python)  # every file's, as `update` works them out: its first one reuses them
            result.diagnostics += python.diagnostics
            result.templates += python.templates
            result.sources.update(python.sources)
            result.python.update(python.python)
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


def _covers(paths: Sequence[str], file: str) -> bool:
    """Whether the run of `paths` (none: the whole project) lints `file`: it is named, or inside a folder named."""
    if not paths:
        return True
    here = os.path.abspath(file)
    for given in paths:
        if given == "-":
            continue
        folder = os.path.abspath(given)
        if here == folder or here.startswith(folder.rstrip(os.sep) + os.sep):
            return True
    return False
