"""A project's Python files scanned, and the findings of its instructions worked out from the scan as a fresh
run does: each instruction linted in its dialect, with the project's state writes (T014), its state keys
(T029, T030, T032), the text files it is read from, and the suppression comments of the files involved.

Each instruction's own findings depend on it alone (and on the project's rules and schema): they are kept
with it while the scan keeps it, so an edit lints again only the instructions it changed; T014 is
worked out again for all of them only when the set of keys written changes, T029 and T030 when the
project's state keys (written, or read by an instruction) change.
"""

from __future__ import annotations

import bisect
import dataclasses
import gc
from collections.abc import Collection, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from ..nodes import Span
from .project import FileSkipped, LintInputError
from .reach import flagged, reported_in
from .registry import PYTHON_SYNTAX, SYNTAX_CHECKS, Diagnostic, Severity
from .result import CheckedTemplate, FileFindings, LintResult, checked, per_file
from .selection import ProjectFiles
from .util import WhileRunning

# The rules are imported by the methods that apply them, when first used: a run the cache answers (a warm
# run) applies none, and most of its time would be importing them.

if TYPE_CHECKING:
    from ..agent_model import AgentModel
    from ..places import LinkedFolders
    from ..pysource import FileAnswers, Instruction, Scan, StateSchema, Write
    from .rules.order import OrderIndex

__all__ = ["ProjectFindings", "config_files", "in_order"]

_Findings = dict[str, FileFindings]


def _reads(item: Instruction) -> tuple[str, ...]:
    """The top-level state keys an instruction reads: its placeholders' (a Jinja2 instruction's state reads),
    but not an angle-syntax tag read as one (`<br>`, `<example>` closed by `</example>`: T007's)."""
    from .source import _VOID_TAGS

    template = checked(item)
    keys = dict.fromkeys(key.split(".")[0] for key in (*template.keys, *template.optional_keys))
    if item.dialect == "angle":
        return tuple(key for key in keys if key not in _VOID_TAGS and f"</{key}>" not in item.text)
    return tuple(keys)


# An instruction's own findings (see `own_findings`): the instruction, its lint, those against its state_schema=
# models, where T014 stays quiet, and its template.
_Against: TypeAlias = "list[tuple[StateSchema, str, Diagnostic]]"
_Own = tuple["Instruction", list[Diagnostic], _Against, frozenset[tuple[Any, ...]], CheckedTemplate]


class ProjectFindings(ProjectFiles):
    """The project's Python files scanned, and their findings (see the module's description)."""

    def _full_scan(self, linted: Sequence[str], named: set[str] | None = None, *, cold: bool = False) -> Scan:
        """Scan `linted` with the project's context. `cold` (a whole run, or the folder an editor opens): in
        groups no import crosses, on every core for a large project (`templating.linter.cold`), the files the
        prefilter refuses only checked to parse."""
        from ..pysource import scan

        given = set(linted) if named is None else named  # the files the user named: read wherever they are
        files = list(dict.fromkeys([*linted, *self._context_files(linted)]))
        usable, configs = self._usable(files, named=given), self._agent_configs(linted)
        if cold and not configs:  # (with no file linted, an editor's folder read: every file's findings come next)
            found = self._cold_scan(usable, linted=set(linted) if linted else None)
        else:
            found = self._run_scan(scan, usable, configs=configs)
        self._scan = found
        self._configs_of = None
        self._model = None  # built again from this scan when asked for
        self._last = None
        self._ids = {}  # (the other kept facts are those of the instructions of the next findings)
        self._namers = None
        self._writes = {}
        for write in found.writes:
            self._writes.setdefault(write.path, []).append(write)
        self._errors = {error.path: error for error in found.errors}
        return found

    def _cold_scan(self, usable: list[str], *, linted: set[str] | None = None) -> Scan:
        """The cold scan of `usable` (`templating.linter.cold`), with the own findings of the instructions of the
        `linted` files (None: of every file) worked out meanwhile."""
        from ..pysource import scan
        from .cold import cold_scan

        overrides = self.overrides

        def text_of(name: str) -> str | None:
            text = overrides.get(name) if name in overrides else self._texts.get(name)
            return text if isinstance(text, str) else None

        found, owns = cold_scan(
            usable,
            text_of=text_of,
            scan_in_process=lambda paths: self._run_scan(scan, paths),
            suffixes=self.config.constant_suffixes,
            root=str(self.root),
            limit=self.config.max_file_size,
            unsaved=overrides,
            linted=linted,
            links=self._links,
            # each process works out the own findings of the instructions it found while the others scan (not with
            # a schema, which may not pickle); they are taken as this one's (`_python_findings` finds them by the
            # instruction, and works out any missing)
            own=None
            if self.schema is not None
            else partial(own_findings, codes=self.codes, schema=None, allow=self.config.allow),
        )
        for own in owns:
            self._own[id(own[0])] = own
        for error in found.errors:  # as `_run_scan` leaves them
            error.__traceback__ = error.__context__ = error.__cause__ = None
        return in_order(found)  # the agent facts in the order of one scan of every file (an edit merges them)

    def _usable(self, files: Sequence[str], *, named: Collection[str]) -> list[str]:
        """The `files` that can be scanned: read (a file not valid UTF-8 is scanned: an E002 finding)."""
        usable = []
        texts, overrides = self._texts, self.overrides
        for path in files:
            if path in overrides or isinstance(texts.get(path), str):  # read before (an edit reads every file)
                usable.append(path)
                continue
            try:
                self._read_python(path, named=path in named)
            except UnicodeDecodeError:
                pass
            except (OSError, FileSkipped):
                continue
            usable.append(path)
        return usable

    @property
    def agent_model(self) -> AgentModel:
        """The agent model (`templating.agent_model`) of the project as last scanned: its ADK apps, their run
        order and initial state, built once per scan (a lint run, an edit) with the project's
        `[tool.templating]`; the project is scanned first if nothing was linted yet. A bad `initial-state`
        setting is a `LintConfigError`."""
        if self._scan is None:
            self._full_scan([])
        if self._model is None:
            from ..agent_model import build

            assert self._scan is not None
            # the model before this scan's gives the agents made from the very same facts (an edit changes few)
            self._model = build(self._scan, self.config, self.root, walker=self.walker, before=self._model_before)
            self._model_before = self._model
        model: AgentModel = self._model
        return model

    def _run_scan(self, scan: Any, paths: list[str], *, configs: Sequence[str] = ()) -> Scan:
        try:
            found = _scan_safely(
                scan,
                paths,
                self.config.constant_suffixes,
                self._reader,
                root=str(self.root),
                unsaved=self.overrides,
                configs=configs,
                answers=self._file_answers(),
                links=self._links,
            )
            for error in found.errors:  # its frames hold the scan whole (every module read, every tree)
                error.__traceback__ = error.__context__ = error.__cause__ = None
            in_order(found)
            return found
        finally:
            # A kept read error is raised again at each scan, and each raise adds that scan's frames to its
            # traceback (and with them its syntax trees): an editor's session grew by megabytes an edit.
            raised, self._raised = self._raised, []
            for kept in raised:
                kept.__traceback__ = kept.__context__ = kept.__cause__ = None

    def _file_answers(self) -> FileAnswers | None:
        """The file-system answers the project's scans keep (`pysource.imports.FileAnswers`): dropped whenever the
        walk is (`walker.forget`: files may have been created or deleted since); none kept unless
        `keep_file_answers`."""
        if not self.keep_file_answers:
            self._answers = None
            return None
        if self._answers is None:
            from ..pysource import FileAnswers

            self._answers = FileAnswers(str(self.root))
        elif self._answers_walk != self.walker.forgotten:
            self._answers.forget()
        self._answers_walk = self.walker.forgotten
        return self._answers

    def _written(self) -> frozenset[str] | None:
        if self._errors:
            return None
        keys = [w.key for writes in self._writes.values() for w in writes]
        if any(key is None for key in keys):
            return None
        return frozenset(key for key in keys if key is not None)

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

    def _python_findings(self, found: Scan, named: set[str], result: LintResult, *, partial: bool = False) -> None:
        """Findings of the instructions written in the `named` files, with the project's writes (`partial`: the
        project's other files are left for later).

        An instruction kept in a text file (`load_instruction_from_file("writer.txt")`) is reported
        with a named Python file of its folder (or a folder above) that names that file."""
        from .rules.adk_literal import naming_the_writer
        from .rules.enforced_schema import schema_levels, undeclared_writes
        from .rules.order import ORDER_RULES
        from .rules.python import never_written, skipped_findings
        from .rules.state_schema import unread_state_schemas

        codes, config = self.codes, self.config
        shown_in = reported_in(found, named)
        written = self._written() if "T014" in codes else None
        findings: list[Diagnostic] = [
            Diagnostic(PYTHON_SYNTAX, "error", error.reason, error.span, error.path, error.help)
            for error in found.errors
            if error.path in named
        ]
        instructions = [item for item in (*found.instructions, *found.config_instructions) if item.path in shown_in]
        index = self._order_index(found) if codes & ORDER_RULES else None
        given_at: dict[tuple[object, ...], list[tuple[str, Span]]] = {}  # a finding -> its instruction's call sites
        if written != self._unwritten_for:
            self._unwritten, self._unwritten_for = {}, written
        kept_own, kept_unwritten = self._own, self._unwritten
        if index is not None:
            if self._ordered is None:
                from .rules.order_kept import KeptOrder  # (the agent model's package: only when a model is built)

                self._ordered = KeptOrder()
            self._ordered.start(self.agent_model, index)
        # those of the instructions of this scan only: no other is kept (when the findings of some files only are
        # worked out, the others' instructions keep what depends on them alone, for the files asked for next)
        if partial:
            live = {id(item) for item in (*found.instructions, *found.config_instructions)}
            self._own = {key: own for key, own in kept_own.items() if key in live}
            self._unwritten = {key: unwritten for key, unwritten in kept_unwritten.items() if key in live}
        else:
            self._own, self._unwritten = {}, {}
        writes: list[Write] | None = None
        on_order = codes & ORDER_RULES
        given = frozenset(self.schema.fields) if self.schema is not None else frozenset()
        for item in instructions:
            own = kept_own.get(id(item))
            if own is None or own[0] is not item:
                own = self._own_findings(item)
            self._own[id(item)] = own
            _, linted, against, quiet, _ = own
            here = linted
            if any(d.code == "T020" for d in here):  # the help names the writer of the key meant
                if (
                    writes is None
                ):  # the first writer in the project's files' order, whatever order they were scanned in
                    writes = sorted(
                        (w for ws in self._writes.values() for w in ws), key=lambda w: (w.path, w.span.start)
                    )
                here = [naming_the_writer(d, flagged(found, d), writes) for d in here]
            # a new list (the kept one stays as it is); T001 at its level: an error only where google-adk enforces
            # the schema
            here = here + (schema_levels(self.agent_model, item.key, against) if against else [])
            if index is not None and item.key in index.attached:  # an agent of an app reads it: the model decides
                # kept from the model before when nothing it is worked out from changed (rules.order_kept)
                here += self._ordered.findings(item, codes=on_order, given=given, quiet=quiet)
            elif written is not None:
                unwritten = kept_unwritten.get(id(item))
                if unwritten is None or unwritten[0] is not item:
                    unwritten = (
                        item,
                        [
                            d
                            for d in never_written(item, written, schema=self.schema)
                            if (d.path, d.span and d.span.start) not in quiet
                        ],
                    )
                self._unwritten[id(item)] = unwritten
                here += unwritten[1]
            for d in here:
                if d.span is not None and item.given_at:
                    given_at.setdefault((d.path, d.span.start, d.span.end, d.code), []).extend(item.given_at)
            findings += here
        findings += self._state_names(found, instructions, shown_in)
        if "T015" in codes:
            findings += [d for d in skipped_findings(found) if d.path in named]
        if "T021" in codes:
            findings += [d for d in unread_state_schemas(found) if d.path in named]
        if "T028" in codes:
            findings += undeclared_writes(self.agent_model, paths=shown_in)
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
            result.templates.append(self._own[id(item)][4])

    def _order_index(self, found: Scan) -> OrderIndex | None:
        """The agent model's index for the order rules (T014 on an app's agents, T024..T027), made once per
        model; None when a file could not be scanned (what it writes is unknown, as T014 has always held)."""
        from .rules.order import OrderIndex

        if found.errors:
            return None
        model = self.agent_model
        if self._order_of is not model:  # (the parts of the apps an edit did not touch are taken from the last)
            self._order_of, self._order = model, OrderIndex.of(model, before=self._order)
        index: OrderIndex = self._order
        return index

    def _state_names(self, found: Scan, instructions: list[Instruction], shown_in: set[str]) -> list[Diagnostic]:
        """T029, T030 (of `instructions`) and T032 (of the static instructions of the `shown_in` files), for the
        keys the project writes and those its instructions read, wherever they are in the scan."""
        from .rules.state_names import angle_placeholders, named_not_injected, static_placeholders, written_keys

        on = self.codes & {"T029", "T030", "T032"}
        if not on:
            return []
        written = written_keys(w for writes in self._writes.values() for w in writes)
        known = dict(written)
        kept, self._reads = self._reads, {}
        for item in found.instructions:  # every instruction of the scan: those of context files read keys too
            reads = kept.get(id(item))
            if reads is None or reads[0] is not item:
                reads = (item, _reads(item))
            self._reads[id(item)] = reads
            for key in reads[1]:
                known.setdefault(key, f"read by {item.label}")
        # T029 depends on the keys known (and the first reader named for each), T030 on the keys written only: an
        # edit that changes the reader named (the first edit's merged scan lists its instructions in another order)
        # works out T029 again, not T030's reading of every instruction's prose
        before = self._named_for
        angle_same = before is not None and before[1] == known
        prose_same = before is not None and before[0] == written
        self._named_for = (written, known)
        kept_named, self._named = self._named, {}
        out: list[Diagnostic] = []
        for item in instructions:
            named = kept_named.get(id(item))
            if named is None or named[0] is not item:
                named = (item, None, None)
            angle = named[1] if angle_same and named[1] is not None else None
            if angle is None:
                angle = angle_placeholders(item, known) if "T029" in on else []
            prose = named[2] if prose_same and named[2] is not None else None
            if prose is None:
                prose = named_not_injected(item, written) if "T030" in on else []
            self._named[id(item)] = (item, angle, prose)
            out += angle + prose
        if "T032" in on:
            for static in found.static_instructions:
                if static.path in shown_in:
                    out += static_placeholders(static, known)
        return out

    def _own_findings(self, item: Instruction) -> _Own:
        """`item`'s own findings with the project's rules, schema and words allowed."""
        return own_findings(item, codes=self.codes, schema=self.schema, allow=self.config.allow)

    def _suppressed(
        self,
        found: Scan,
        findings: list[Diagnostic],
        given_at: dict[tuple[object, ...], list[tuple[str, Span]]],
        named: set[str],
        instructions: list[Instruction],
    ) -> list[Diagnostic]:
        """`findings` without those a `# templating: ignore[...]` comment silences, with the findings
        about the comments of the `named` files (T022, T023); see `templating.linter.suppress`."""
        from .suppress import apply_suppressions, read_suppressions

        places = set(named)  # the files whose comments may silence a finding: its own, its call sites'
        for d in findings:
            places.add(d.path or "")
            if d.span is not None:
                places.update(path for path, _ in given_at.get((d.path, d.span.start, d.span.end, d.code), ()))
        kept, self._comments = self._comments, {}
        files = {}
        for path in places:
            if path.endswith(".py") and path in found.sources:
                text = found.sources[path]
                known = kept.get(path)
                if known is None or known[0] is not text:  # read again only when the text changed
                    known = (text, read_suppressions(path, text))
                self._comments[path] = known
                files[path] = known[1]
        linted = {id(item) for item in instructions}  # (a scan's instructions are distinct by key)
        unsure = [place for item in found.instructions if id(item) not in linted for place in item.given_at]
        return apply_suppressions(
            findings,
            given_at,
            files,
            report_in={path for path in named if path in files},
            rule_on=lambda code, path: code in self._rules(path),
            unsure=unsure,
        )

    def _config_files(self, found: Scan) -> set[str]:
        """`config_files(found)`, worked out once per scan."""
        kept = self._configs_of
        if kept is None or kept[0] is not found:
            kept = self._configs_of = (found, frozenset(config_files(found)))
        return set(kept[1])

    def _all_findings(self, found: Scan, context: Sequence[str], *, only: Collection[str] | None = None) -> _Findings:
        """Each Python file's findings, templates, text and count of instructions, as a fresh run of the
        project's Python files (`context`) gives them from the scan `found`; `only`: those of these files
        alone (the others are not worked out)."""
        configs = self._config_files(found)
        if only is None:
            named = {name for name in context if name in found.sources} | configs
        else:  # (a few files of many: each looked up)
            inside = set(context)
            named = {name for name in only if name in inside and name in found.sources} | (configs & set(only))
        result = LintResult([], [], [], root=self.root)
        self._python_findings(found, named, result, partial=only is not None)
        return per_file(result)


_LISTED_FACTS = ("agents", "runners", "roots", "sessions")
_FEW_TO_PLACE = 64  # items of a listed fact put in place one by one (more: the list is sorted again)
_KEYED_FACTS = ("agent_classes", "functions", "class_methods")


def own_findings(item: Instruction, *, codes: frozenset[str], schema: Any, allow: Sequence[str]) -> _Own:
    """What `item`'s findings owe to it alone: its own lint, those against its agents' `state_schema=` models, the
    places where T014 stays quiet, and its template (worked out by a worker of a cold scan too: `linter.cold`)."""
    from .adk_schema import schema_findings
    from .rules.python import lint_instruction

    linted = lint_instruction(item, schema=schema, select=codes, allow=allow)
    quiet = {(d.path, d.span.start) for d in linted if d.code == "T007" and d.span}
    against: _Against = []
    if item.state_schemas:  # the agent's state_schema= model: T001 (and T009 for nested keys) against it
        against = schema_findings(item, select=codes)
        quiet |= {(d.path, d.span.start) for _, _, d in against if d.code == "T001" and d.span}
    return item, linted, against, frozenset(quiet), checked(item)


def _place_of(item: Any) -> tuple[str, int, str]:
    return item.path, item.span.start, getattr(item, "id", "")


def in_order(found: Scan, *, sorted_up_to: Mapping[str, int] | None = None) -> Scan:
    """`found` with its agent facts in one order, by file and place (the keyed ones by key), whatever order the
    scan met them in: the agent model names the first of several writers, so an edit's merged facts
    (`templating.linter.incremental`) give what a fresh scan gives only if both keep this order.

    `sorted_up_to`: for a listed fact, how many of its first items are in this order already (an edit's merge:
    those kept from the scan before); when few others follow, each is put in place among them (after those of an
    equal place, as a sort keeps them) instead of sorting the whole list again."""
    for name in _LISTED_FACTS:
        items: list[Any] = getattr(found, name)
        ordered = sorted_up_to.get(name) if sorted_up_to is not None else None
        if ordered is None or len(items) - ordered > _FEW_TO_PLACE:
            setattr(found, name, sorted(items, key=_place_of))
            continue
        head = items[:ordered]
        for item in items[ordered:]:
            bisect.insort_right(head, item, key=_place_of)
        setattr(found, name, head)
    for name in _KEYED_FACTS:
        setattr(found, name, dict(sorted(getattr(found, name).items())))
    return found


def config_files(found: Scan) -> set[str]:
    """The Agent Config files (`root_agent.yaml` and those it names) the scan read an agent from."""
    return {agent.path for agent in found.agents if agent.path.endswith((".yaml", ".yml"))}


# No full garbage collection while scans run: a scan keeps every tree it parses, so each full collection would walk
# them all again (about a third of the parsing time on a large project); the young generations are still collected.
_no_full_collections = WhileRunning(
    gc.get_threshold, lambda before: gc.set_threshold(before[0], before[1], 1_000_000), lambda t: gc.set_threshold(*t)
)


def _place(write: Write) -> tuple[str, int]:
    return write.path, write.span.start


def _scan_safely(
    scan: Any,
    paths: list[str],
    suffixes: Sequence[str],
    read: Any,
    *,
    root: str,
    unsaved: Collection[str],
    configs: Sequence[str] = (),
    answers: Any = None,
    links: LinkedFolders | None = None,
) -> Scan:
    try:
        with _no_full_collections():
            result: Scan = scan(
                paths,
                suffixes=suffixes,
                read=read,
                keep_going=True,
                root=root,
                unsaved=unsaved,
                configs=configs,
                answers=answers,
                links=links,
            )
    except RecursionError:
        raise LintInputError(
            "the project's Python code nests too deeply to follow (imports or expressions): nothing was linted"
        ) from None
    return result
