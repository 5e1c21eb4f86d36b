"""A lint run, as `templating lint` makes it: the one object the command line, its pre-commit hooks and
the Python API share.

[`LintRun`][templating.linter.run.LintRun] holds the options of a run (keyword-only, named as the command
line's). [`lint()`][templating.linter.run.LintRun.lint] lints once with the baseline applied (what
[`lint_project`][templating.lint_project] returns); [`run()`][templating.linter.run.LintRun.run] is the whole
command: the rules on combining options, the baseline read before linting, fixing until stable (`fix`) or
the diff of it (`diff`), the baseline written (`write_baseline`), the HTML report and the output file, and
what to print, in order, with the exit code. Nothing is printed here: the caller prints the outcome's
messages. What a run says and writes (its messages, the findings in their format, the output file and the
HTML report) is `templating.linter.run_output`; its public names are imported from here.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import TemplatingError
from ..nodes import Dialect
from .run_output import Format, LintUsageError, Message, aside, report, write_html

if TYPE_CHECKING:
    from .baseline import Applied, Baseline
    from .config import LintConfig
    from .engine import LintResult, Project
    from .fix_run import FixRun

__all__ = ["LintOutcome", "LintRun", "LintUsageError", "Message", "lint_project"]

EXIT_OK, EXIT_FINDINGS = 0, 1


@dataclass(slots=True)
class LintOutcome:
    """What a run did. `exit_code`: 0, or 1 for error-level findings left (none with `exit_zero`), or for
    fixes to apply (`diff`); `messages`: what to print, in order; `result`: the findings reported (after
    the fixes and the baseline; `None`: every file named is excluded, nothing was linted); `fixes`: what
    fixing until stable did (`fix`, `diff`); `baselined`: what the baseline left out; `written`: the baseline
    written (`write_baseline`)."""

    exit_code: int
    messages: list[Message] = field(default_factory=list)
    result: LintResult | None = None
    fixes: FixRun | None = None
    baselined: Applied | None = None
    written: Baseline | None = None


@dataclass(frozen=True, kw_only=True)
class LintRun:
    """The options of a lint run. `paths`: files and folders (`-` reads stdin; none: the project's `include`
    globs, else the current folder); `root`: the project folder (default: found from the paths);
    `config_path`: a `pyproject.toml` to read instead of the root's; `overrides`: text to lint instead of a
    file's, by path; `schema`, `select`,
    `extend_select`, `ignore`, `severity`, `dialect`: on top of `[tool.templating]`; `force_exclude`: apply
    `exclude` to named files too; `cache`, `cache_dir`: the lint cache (see `templating.linter.cache`).

    `baseline`: a baseline file (or a loaded `Baseline`) whose findings are left out; `write_baseline`: record
    the findings in this file instead of reporting them; `fix`: write the safe fixes (`unsafe_fixes`: the unsafe
    ones too), then report what is left; `diff`: the unified diff of the fixes, nothing written; `format`,
    `statistics`: what the findings are printed as; `html`: also write an HTML report; `output_file`: write
    the findings there, whole or not at all; `exit_zero`: exit 0 even with error findings."""

    paths: Sequence[str] = ()
    root: str | Path | None = None
    config_path: str | Path | None = None
    overrides: Mapping[str, str] | None = None
    schema: Any = None
    select: Iterable[str] | str | None = None
    extend_select: Iterable[str] | str | None = None
    ignore: Iterable[str] | str | None = None
    severity: Mapping[str, str] | None = None
    dialect: Dialect = "angle"
    force_exclude: bool = False
    cache: bool = False
    cache_dir: str | Path | None = None
    baseline: str | Path | Baseline | None = None
    write_baseline: str | None = None
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    format: Format = "text"
    statistics: bool = False
    html: str | None = None
    output_file: str | None = None
    exit_zero: bool = False

    # -- the Python API: one lint

    def project(self, overrides: Mapping[str, str] | None = None) -> Project:
        """The project these options lint (`overrides`: texts instead of this run's `overrides`)."""
        from .engine import Project

        return Project(
            self.root,
            paths=self.paths,
            config_path=self.config_path,
            overrides=self.overrides if overrides is None else overrides,
            schema=self.schema,
            select=self.select,
            extend_select=self.extend_select,
            ignore=self.ignore,
            dialect=self.dialect,
            force_exclude=self.force_exclude,
            severity=self.severity,
            cache=self.cache,
            cache_dir=self.cache_dir,
        )

    def lint(self) -> LintResult:
        """Lint `paths` once, with the baseline's findings left out (`baselined` and `stale` in the result
        count what it dropped and what it records that was not found)."""
        recorded = self._recorded()
        result = self.project().lint(self.paths)
        if recorded is not None:
            from .baseline import apply_baseline

            apply_baseline(result, recorded)
        return result

    def _recorded(self) -> Baseline | None:
        """The baseline, read (only a run with one loads its module): a bad file stops the run, nothing written."""
        if self.baseline is None:
            return None
        from .baseline import load_baseline

        if not isinstance(self.baseline, str | Path):
            return self.baseline
        return load_baseline(self.baseline, **self._baseline_limit())

    def _baseline_limit(self, config: LintConfig | None = None) -> dict[str, Any]:
        """The size a baseline is read (and so written) within: the project's `max-file-size`, named with
        where it is set."""
        from .project import locate

        if config is None:
            config = locate(self.root, paths=self.paths, config_path=self.config_path)[1]
        where = f" of {config.path}" if config.path else " (no pyproject.toml found)"
        return {"limit": config.max_file_size, "setting": f"'max-file-size' in [tool.templating]{where}"}

    # -- the command: the whole run

    def check(self) -> None:
        """Raise `LintUsageError` for options that cannot be combined (named as the command line's)."""
        if list(self.paths).count("-") > 1:
            raise LintUsageError("stdin ('-') can be linted only once")
        if self.statistics and self.format in ("sarif", "github"):
            raise LintUsageError(f"--statistics prints text or json, not {self.format}: drop one of the two options")
        if self.select is not None:
            chosen = [self.select] if isinstance(self.select, str) else list(self.select)
            if not [c for v in chosen for c in v.split(",") if c.strip()]:
                raise LintUsageError("--select needs at least one rule code (to turn rules off, use --ignore)")
        if self.write_baseline is not None:
            clash = [opt for opt, on in (("--baseline", self.baseline), ("--statistics", self.statistics)) if on]
            clash += ["--output-file"] if self.output_file else []
            if clash:
                raise LintUsageError(f"--write-baseline records every finding: it cannot be combined with {clash[0]}")
        if self.unsafe_fixes and not (self.fix or self.diff):
            raise LintUsageError("--unsafe-fixes widens --fix or --diff: add one of them")
        if self.fix or self.diff:
            option = "--diff" if self.diff else "--fix"
            clash = [
                o
                for o, on in (("--write-baseline", self.write_baseline is not None), ("'-' (stdin)", "-" in self.paths))
                if on
            ]
            if clash:
                raise LintUsageError(f"{option} fixes files on disk: it cannot be combined with {clash[0]}")
        if self.diff:
            shown = (("--html", self.html), ("--output-file", self.output_file), ("--statistics", self.statistics))
            clash = [o for o, on in shown if on]
            if clash:
                raise LintUsageError(f"--diff prints the fixes and nothing else: it cannot be combined with {clash[0]}")

    def run(self, *, say: Callable[[Message], None] | None = None) -> LintOutcome:
        """The whole run of `templating lint` with these options. `say` is given each message as soon as it is
        known (a file not fixed is said before the findings), as well as the outcome listing them all.

        Raises `LintUsageError` for options that cannot be combined, paths with nothing to lint, or an
        output that cannot be written, and another `TemplatingError` for a bad baseline, configuration
        or schema; only an output written after the fixes can fail once they are written."""
        self.check()
        recorded = self._recorded()  # read before linting: a bad file stops the run, nothing written
        outcome = LintOutcome(EXIT_OK)

        def tell(message: Message) -> None:
            outcome.messages.append(message)
            if say is not None:
                say(message)

        linted = self._lint_once()
        if linted is None:
            return outcome
        project, result = linted
        if self.diff:
            return self._diff(project, result, outcome, tell)
        fixed_note = ""
        if self.fix:
            fixed_note = self._apply_fixes(project, result, outcome, tell)
            linted = self._lint_once()  # what is left, read again from disk
            if linted is None:
                return outcome
            project, result = linted
        outcome.result = result
        if self.write_baseline is not None:
            from .baseline import write_baseline

            outcome.written = written = write_baseline(
                self.write_baseline, result, **self._baseline_limit(project.config)
            )
            noun = "finding" if written.total == 1 else "findings"
            tell(Message(f"wrote {written.total} {noun} to the baseline {self.write_baseline}"))
            return outcome
        baseline_note = ""
        if recorded is not None:
            from .baseline import apply_baseline

            outcome.baselined = applied = apply_baseline(result, recorded)
            noun = "finding" if applied.baselined == 1 else "findings"
            baseline_note = f"{applied.baselined} {noun} left out: recorded in the baseline {self.baseline}"
            if applied.stale:
                baseline_note += (
                    f"; {applied.stale} it records no longer found (fixed): drop them with --write-baseline "
                    f"{self.baseline}"
                )
        everything = result.diagnostics
        if fixed_note:
            fixed_note += self._left(project, result, everything)
        if self.html:
            write_html(self.html, result, dialect=self.dialect)
        scope_note = _LINTED_HERE if not self.paths and not project.config.include else ""
        report(
            result,
            fixed_note,
            baseline_note,
            tell,
            format=self.format,
            statistics=self.statistics,
            output_file=self.output_file,
            scope_note=scope_note,
        )
        outcome.exit_code = EXIT_FINDINGS if result.errors and not self.exit_zero else EXIT_OK
        return outcome

    def _lint_once(self, overrides: dict[str, str] | None = None) -> tuple[Project, LintResult] | None:
        """One run of the engine over `paths`: the project and its result (None: every file named is
        excluded, nothing to do). `overrides`: texts to lint instead of those files' (fixes not written yet)."""
        from .project import LintInputError

        no_files = None
        try:
            project = self.project(overrides)
            files, _ = project.files(self.paths)
            if not files:
                if self.force_exclude and self.paths and not any(os.path.isdir(p) for p in self.paths):
                    return None  # pre-commit passed only excluded files: nothing to do
                no_files = project
            else:
                result = project.lint(self.paths)
        except LintInputError as exc:
            raise LintUsageError(exc.message) from None
        except TemplatingError as exc:
            raise LintUsageError(exc.message) from None
        except OSError as exc:  # a name too long, a folder that cannot be read
            where = f": {exc.filename}" if exc.filename else ""
            raise LintUsageError(f"cannot read the paths to lint{where}: {exc.strerror or exc}") from None
        if no_files is not None:
            raise LintUsageError(self._no_files(no_files))
        if not result.files:
            raise LintUsageError("nothing could be linted: " + "; ".join(d.message for d in result.diagnostics[:3]))
        return project, result

    def _no_files(self, project: Project) -> str:
        """What a run that found no template file to lint says: where it looked, and which patterns."""
        from .discovery import DEFAULT_INCLUDE

        config = project.config
        paths = list(self.paths)
        here = not paths and not config.include  # the current folder, walked for the default patterns
        patterns = ", ".join(dict.fromkeys((*config.include, *DEFAULT_INCLUDE)) if paths or here else config.include)
        where = f" in {', '.join(paths)}" if paths else " in the current folder" if here else ""
        if here:
            source = "the default patterns; no paths given and no 'include' in [tool.templating]"
        elif not paths:
            source = "'include' in [tool.templating]"
        elif config.include:
            source = "'include' in [tool.templating] and the default patterns"
        else:
            source = "the default patterns"
        return f"no template files found to lint{where} (files matching {patterns}, from {source})"

    def _fix_run(
        self, project: Project, result: LintResult, outcome: LintOutcome, say: Callable[[Message], None]
    ) -> FixRun:
        """Fix until stable (`templating.linter.fix_run.fix_until_stable`), each pass linted again in memory;
        a file whose fixes do not settle, or found through a symbolic link, is said on stderr and left out."""
        from .fix_run import MAX_PASSES, fix_until_stable

        def relint(texts: dict[str, str]) -> tuple[Project, LintResult]:
            again = self._lint_once(texts)
            return again if again is not None else (project, result)

        fixes = fix_until_stable(project, result, relint, unsafe=self.unsafe_fixes)
        kept = []
        for fixed in fixes.files:  # what --fix never writes, --diff does not show either
            link = project.found_through_link(fixed.path)
            if link is None:
                kept.append(fixed)
            else:
                say(aside(_through_link(fixed.path, link)))
        outcome.fixes = fixes = dataclasses.replace(fixes, files=kept)
        for path, codes in fixes.unsettled.items():
            say(
                aside(
                    f"{path}: not fixed, its fixes ({', '.join(codes)}) do not settle (a pass gave back "
                    f"an earlier text, or there were fixes left after {MAX_PASSES} passes): fix it by hand"
                )
            )
        return fixes

    def _diff(
        self, project: Project, result: LintResult, outcome: LintOutcome, say: Callable[[Message], None]
    ) -> LintOutcome:
        """`diff`: the unified diff of what fixing until stable changes, nothing written; exit 1 when there
        is anything to fix."""
        from .fix_run import diff_of
        from .outputs.text import escape_control

        fixes = self._fix_run(project, result, outcome, say)
        for fixed in fixes.files:  # names escaped as in every output: no ESC, no newline forging a header
            say(Message(diff_of(fixed, name=escape_control(fixed.path)), end=""))
        files = "file" if len(fixes.files) == 1 else "files"
        note = (
            f"{fixes.count} {_fixes(fixes.count)} would be applied in {len(fixes.files)} {files}" if fixes.count else ""
        )
        say(Message(note + _passes(fixes.passes) if note else "nothing to fix", "stderr"))
        outcome.exit_code = EXIT_FINDINGS if fixes.count or fixes.unsettled else EXIT_OK
        return outcome

    def _apply_fixes(
        self, project: Project, result: LintResult, outcome: LintOutcome, say: Callable[[Message], None]
    ) -> str:
        """`fix`: fix until stable, then write the files, each whole; a file that cannot be written is said on
        stderr and left as is. What was applied, for the summary."""
        from .fix_run import FixWriteError, write_fix

        fixes = self._fix_run(project, result, outcome, say)
        count = files = 0
        for fixed in fixes.files:
            try:
                write_fix(fixed, root=str(project.config.root))
            except FixWriteError as exc:
                say(aside(exc.message))
                continue
            count += len(fixed.applied)
            files += 1
        return f"applied {count} {_fixes(count)} in {files} {'file' if files == 1 else 'files'}" + _passes(fixes.passes)

    def _left(self, project: Project, result: LintResult, everything: list[Any]) -> str:
        """`fix`'s note on what is left: the findings, and how many of them `unsafe_fixes` would fix."""
        from .fix_run import plan_fixes

        noun = "finding" if len(everything) == 1 else "findings"
        note = f"; {len(everything)} {noun} left" if everything else "; no findings left"
        if everything and not self.unsafe_fixes:  # those only an unsafe fix fixes (a safe one left: a file not written)
            counts = [sum(len(f.applied) for f in plan_fixes(project, result, unsafe=u)) for u in (True, False)]
            more = counts[0] - counts[1]
            note += f" ({more} fixable with --unsafe-fixes)" if more > 0 else ""
        return note


_LINTED_HERE = (
    "no paths given and no 'include' in [tool.templating]: linted the current folder (as `templating lint .`)"
)


def _through_link(path: str, link: str) -> str:
    return f"{path}: not fixed, it was found through the symbolic link {link} (a fix never writes through a link)"


def _passes(passes: int) -> str:
    return f" ({passes} passes)" if passes > 1 else ""


def _fixes(count: int) -> str:
    return "fix" if count == 1 else "fixes"


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
    """Lint `paths` (files and folders; none: the project's `include` globs, else the current
    folder) with the whole project's
    context. See [`Project`][templating.linter.engine.Project] for the options.

    `baseline`: a baseline file (or a loaded [`Baseline`][templating.linter.baseline.Baseline]) whose
    findings are left out; `baselined` and `stale` in the result count what it dropped and what it
    records that was not found (see `templating.linter.baseline`). The same as
    `LintRun(paths=paths, ...).lint()`."""
    return LintRun(
        paths=paths,
        root=root,
        overrides=overrides,
        select=select,
        ignore=ignore,
        schema=schema,
        extend_select=extend_select,
        dialect=dialect,
        config_path=config_path,
        force_exclude=force_exclude,
        severity=severity,
        cache=cache,
        cache_dir=cache_dir,
        baseline=baseline,
    ).lint()
