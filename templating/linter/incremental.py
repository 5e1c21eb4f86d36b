"""An edit re-linted: one file's new text (an editor's buffer) linted with the project's context, scanning
again only the files whose scan it may change (see `templating.linter.reach.ImportGraph`), and giving for
every file whose findings changed exactly what a fresh run gives."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._collector import paused as _collector_paused
from .findings import ProjectFindings, in_order
from .result import LintResult, of_files
from .util import shown

if TYPE_CHECKING:
    from ..pysource import AgentCall, Instruction, InstructionKey, Scan, Skipped

__all__ = ["IncrementalProject"]


class IncrementalProject(ProjectFindings):
    """A project re-linted one edit at a time (see the module's description)."""

    def lint(self, paths: Sequence[str] = ()) -> LintResult:
        """Lint `paths` (a whole run: the engine's [`Project`][templating.linter.engine.Project] does it)."""
        raise NotImplementedError

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

    def read_context(self) -> Scan:
        """Scan the project's Python files (an editor's workspace folder loaded) and work out now what the first
        update would from scratch: every file's findings and the import graph (it then lints again only what
        its edit changes)."""
        found = self._full_scan([], cold=True)
        if self.marked:  # (else the context depends on the file edited: the first update works it out)
            context = self._context_files([])
            self._last = self._all_findings(found, context)
            self._graph.sync({name: self._text_of(name) for name in self._usable(context, named=())}, links=self._links)
        return found

    def _givers_of(self, target: str) -> list[str]:
        """The Python files whose code gives the text file `target` as an instruction (by the last scan)."""
        if self._scan is None:
            return []
        return sorted({giver for item in self._scan.instructions if item.path == target for giver in item.given_in})

    def update(self, path: str, text: str | None, *, wanted: Collection[str] | None = None) -> LintResult:
        """Re-lint with `text` as the content of the file `path` (an editor's buffer; `None`: the file's
        own content again, or none when it was deleted), reading no other file again.

        The result lists in `files` the files whose findings or templates changed (an empty list of
        findings clears a file), and `path`; for each, it gives exactly what a fresh
        [`lint_project`][templating.linter.engine.lint_project] of the project with the same unsaved
        texts gives. Only the files whose scan may change are scanned again (`path`, what it imports,
        and the files importing those: see `templating.linter.reach.affected`, found through the import
        graph kept between edits); the findings of every file are then computed from that scan as a
        fresh run computes them (each instruction the scan kept with its own findings, kept too), and
        compared with the last ones (after the first update of a project not yet linted: every file).

        `wanted`: the only files whose findings the caller shows (an editor's open documents). The result then
        lists `path` and each of those the project lints (a text file: while an instruction is read from it, and
        once more, cleared, when none is), with its findings whether they changed or not; the findings of no
        other file are worked out (on a large workspace, most of an edit's time), except those of the files an
        instruction touching a wanted file starts in (an Agent Config file's edit too, after scanning the whole
        project again). The first update of a project not yet linted still gives every file; the next update
        without `wanted` compares every file with the scan it starts from."""
        # An edit makes many objects, nearly all in no cycle (the scan's facts, the model, the findings), and frees
        # what they replace by reference counting: the collector, left on, walked them again and again as they were
        # made (about a tenth of an edit on a large workspace). It runs again once the edit is done (the trees a
        # `state_schema=` model keeps, in cycles, are then collected as before).
        with _collector_paused():
            return self._update(path, text, wanted)

    def _update(
        self, path: str, text: str | None, wanted: Collection[str] | None, *, force: bool = False
    ) -> LintResult:
        target = shown(Path(path))
        if text is None:
            self.overrides.pop(target, None)
        else:
            self.overrides[target] = text
        if not target.endswith(".py") and self._is_agent_config(target):
            return self._config_edited(target, wanted)
        if not target.endswith(".py"):
            exists = os.path.lexists(target)
            if not exists or not any(target in files for files, _, _ in self._selected.values()):
                self._selected.clear()  # a template file created or deleted: the files are chosen again
                self.walker.forget()
            givers = self._givers_of(target)
            if givers:  # a text file Python code reads as an instruction: its giver's scan reads it again
                self._texts.pop(target, None)
                given = self._update(  # scanned again even when its own text is the one last scanned
                    givers[0], self.overrides.get(givers[0]), None if wanted is None else [*wanted, target], force=True
                )
                if target not in given.files:
                    given.files.append(target)
                return given
            if text is None and not exists:
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
        if not force and self._unchanged(target, text, known=wanted is None):  # opened as it was scanned: no scan
            self.scanned_again = frozenset()
            if wanted is not None:
                return self._wanted_findings(old, target, wanted)
            assert self._last is not None
            return self._leveled(of_files(self._last, [target], root=self.root))
        before = None
        if wanted is None:
            before = self._last if self._last is not None else self._all_findings(old, self._context_files([target]))
        previous = old.sources.get(target)
        self._texts.pop(target, None)
        if os.path.lexists(target) != (target in self._context) and target not in self._unwalked:
            self._context = []  # a file created or deleted: the project's files are walked again
            self._selected.clear()
            self.walker.forget()
        elif target not in self._context and self._answers is not None:
            # a file the walk leaves out, created or deleted without the walk's knowing: what the scans kept of
            # the file system may be about it
            self._answers.forget()
        context = self._context_files([target])
        if os.path.lexists(target) and target not in context:
            self._unwalked.add(target)  # not walked (excluded, ignored, outside): not looked for again
        usable, texts, same = self._texts_of(context, target)
        ids = [self._identity(item) for item in old.instructions]
        rescanned = self._graph.affected(
            target,
            texts,
            previous,
            [given for _, _, given in ids],
            changed=(target,) if same else None,
            links=self._links,
        )
        rescanned |= _class_files(old, rescanned, texts)
        from ..pysource import Scan, scan

        configs = self._agent_configs([target])
        sub = self._run_scan(scan, [name for name in usable if name in rescanned], configs=configs)
        for name in rescanned:
            self._writes.pop(name, None)
            self._errors.pop(name, None)
        for write in sub.writes:
            self._writes.setdefault(write.path, []).append(write)
        for error in sub.errors:
            self._errors[error.path] = error
        # Kept: what no file scanned again gives (those give theirs anew), each by its identity; one given anew as
        # it was is the very object kept (what is worked out from it is then kept too: its findings, its agents).
        found: dict[InstructionKey, Instruction] = {}
        again: dict[InstructionKey, Instruction] = {}
        for item, key, in_files in ids:
            (found if rescanned.isdisjoint(in_files) else again)[key] = item
        for item in sub.instructions:
            key = self._identity(item)[1]
            was = again.get(key)
            found[key] = was if was is not None and was.same_as(item) else item
        sources = dict(old.sources)  # (copied whole, then the files scanned again taken out: a few of many)
        for name in rescanned:
            sources.pop(name, None)
        sources.update(sub.sources)
        namers = self._namers[1] if self._namers is not None and self._namers[0] is old else None
        facts, ordered, namers = _agent_facts(old, sub, rescanned, namers=namers)
        merged = in_order(
            Scan(
                instructions=list(found.values()),
                skipped=[item for item in old.skipped if item.path not in rescanned] + sub.skipped,
                writes=[w for writes in self._writes.values() for w in writes],
                sources=sources,
                errors=list(self._errors.values()),
                state_schemas=[s for s in old.state_schemas if s.given_in not in rescanned] + sub.state_schemas,
                static_instructions=[s for s in old.static_instructions if rescanned.isdisjoint(s.given_in)]
                + sub.static_instructions,
                **facts,
            ),
            sorted_up_to=ordered,
        )
        self._scan = merged
        self._namers = (merged, namers)
        self._configs_of = None  # (it holds the scan it was worked out from)
        self._model = None  # the agent model is built again from the merged scan when asked for
        self.scanned_again = frozenset(
            {*rescanned, *(item.path for item in sub.instructions)}
            | {item.path for item, _, given in ids if not rescanned.isdisjoint(given)}
        )
        kept, self._ids = self._ids, {}  # those of the instructions of this scan only
        for item in merged.instructions:
            self._ids[id(item)] = kept.get(id(item)) or self._identity(item)
        if wanted is not None:
            return self._wanted_findings(merged, target, wanted)
        assert before is not None
        after = self._all_findings(merged, context if target in context else [*context, target])
        self._last = after
        changed = {target} | {name for name in {*before, *after} if before.get(name) != after.get(name)}
        return self._leveled(of_files(after, sorted(changed), root=self.root))

    def _texts_of(self, context: list[str], target: str) -> tuple[list[str], dict[str, str], bool]:
        """The files of `context` (and `target`) that can be scanned (`_usable`), each one's text (an unreadable
        one's: ""), and whether they are the last edit's but for `target`'s text: kept (the very same list and
        dict) from one edit of a file's buffer to the next while the walk, the files read and the other buffers
        stay the same (typing in one file), not gone through again (5,000 files on a large workspace)."""
        overrides = self.overrides
        others = {name: text for name, text in overrides.items() if name != target}
        kept = self._edit_texts
        if (
            kept is not None
            and target in overrides
            and kept[0] == target
            and kept[1] == self._texts.version
            and kept[2] == others
            and kept[3] == context
        ):
            usable, texts = kept[4], kept[5]
            texts[target] = overrides[target]
            return usable, texts, True
        usable = self._usable([*context, *([] if target in context else [target])], named=(target,))
        texts = {}
        kept_texts = self._texts
        for name in usable:  # (`_text_of`, inline: every file of the project)
            text = overrides.get(name)
            if text is None:
                cached = kept_texts.get(name)
                text = cached if isinstance(cached, str) else ""
            texts[name] = text
        texts.setdefault(target, "")
        in_buffer = target in overrides
        self._edit_texts = (target, self._texts.version, others, context, usable, texts) if in_buffer else None
        return usable, texts, False

    def _wanted_findings(self, found: Scan, target: str, wanted: Collection[str]) -> LintResult:
        """The findings of `target` and of the `wanted` files the project lints, from the scan `found` (see
        `update`); a text file an instruction is read from, with the Python files that may report it."""
        self._last = None  # the other files' findings are not worked out: the next full update compares afresh
        context = self._context_files([target])
        if target not in context:
            context = [*context, target]
        files = set(context) | self._config_files(found)
        asked = {shown(Path(path)) for path in wanted}
        names = {target} | (asked & files)
        texts = asked - names
        if texts:  # those an instruction is read from, and those the last such update listed (to be cleared)
            read_from = {item.path for item in found.instructions}
            gone = texts & self._listed_texts - read_from
            texts &= read_from
        else:
            gone = set()
        self._listed_texts = texts
        named = set(names)
        if texts:  # reported in a Python file of its folder or above naming it (`reach.reported_in`)
            for name in context:
                source = found.sources.get(name)
                if source is not None and any(
                    Path(text).name in source and Path(name).parent in Path(text).parents for text in texts
                ):
                    named.add(name)
        # each instruction written (in part) in a wanted file, or given there, is linted with the file it starts in:
        # its findings may land in the wanted file, and a suppression comment there may be about them
        wanted_files = names | texts
        touched, self._touched = self._touched, {}
        for item in found.instructions:
            known = touched.get(id(item))
            if known is None or known[0] is not item:
                known = (item, frozenset((*item.files, *item.given_in)))
            self._touched[id(item)] = known
            if item.path not in named and not wanted_files.isdisjoint(known[1]):
                named.add(item.path)
        after = self._all_findings(found, context, only=named)
        return self._leveled(of_files(after, sorted(wanted_files | gone), root=self.root))

    def _unchanged(self, target: str, text: str | None, *, known: bool = True) -> bool:
        """Whether the Python file `target` with `text` is the one the last scan read (with that scan's findings
        known, if `known`): the same text (an editor opening a file as saved, an edit undone), the file walked as
        it was. A fresh run then gives every file what the last update gave it."""
        if text is None or self._scan is None or self._scan.sources.get(target) != text:
            return False
        if known and self._last is None:
            return False
        return target not in self._errors and os.path.lexists(target) and target in self._context

    def _is_agent_config(self, target: str) -> bool:
        """Whether `target` is an Agent Config file of the project: an app's `root_agent.yaml`, or a file the
        last scan read as one (a sub-agent's `config_path:`)."""
        if os.path.basename(target) == "root_agent.yaml":
            return True
        return self._scan is not None and any(agent.path == target for agent in self._scan.agents)

    def _config_edited(self, target: str, wanted: Collection[str] | None) -> LintResult:
        """An Agent Config file edited: the project scanned again (its agents may reach any Python file), every
        file's findings compared with the last ones (with `wanted`: those of `target` and the `wanted` files)."""
        before = None
        if wanted is None:
            before = self._last
            if before is None and self._scan is not None:
                before = self._all_findings(self._scan, self._context_files([target]))
        self._texts.pop(target, None)
        self._configs = []
        self._context = []  # a config created or deleted: the project's files are walked again
        self._selected.clear()
        self.walker.forget()
        context = self._context_files([target])
        found = self._full_scan(context)
        self.scanned_again = frozenset(found.sources)
        if wanted is not None:
            return self._wanted_findings(found, target, wanted)
        after = self._all_findings(found, context)
        self._last = after
        before = before or {}
        changed = {target} | {name for name in {*before, *after} if before.get(name) != after.get(name)}
        return self._leveled(of_files(after, sorted(changed), root=self.root))

    def _identity(self, item: Instruction) -> tuple[Instruction, InstructionKey, tuple[str, ...]]:
        """`item` with its key and the files giving it, worked out once while the scan keeps it."""
        known: tuple[Instruction, InstructionKey, tuple[str, ...]] | None = self._ids.get(id(item))
        if known is None or known[0] is not item:
            known = self._ids[id(item)] = (item, item.key, item.given_in)
        return known

    def _text_of(self, name: str) -> str:
        text = self.overrides.get(name)
        if text is None:
            cached = self._texts.get(name)
            text = cached if isinstance(cached, str) else ""
        return text


_CONFIG_SUFFIXES = (".yaml", ".yml")


def _class_files(old: Scan, rescanned: set[str], texts: Mapping[str, str]) -> set[str]:
    """The files of the project's custom agent classes (`BaseAgent` subclasses) that the `rescanned` files may call,
    and those those classes derive from: scanned again with them, as a scan knows a call of a custom agent class
    only when it scans the class's file (a class named in one of the files' text, until no other is)."""
    classes = [cls for cls in old.agent_classes.values() if cls.path not in rescanned]
    added: set[str] = set()
    pending = list(rescanned)
    while pending and classes:
        more = {cls.path for cls in classes if any(cls.name in texts.get(name, "") for name in pending)}
        classes = [cls for cls in classes if cls.path not in more]
        added |= more
        pending = list(more)
    return added


def _agent_facts(
    old: Scan, sub: Scan, rescanned: Collection[str], *, namers: Mapping[str, frozenset[str]] | None = None
) -> tuple[dict[str, Any], dict[str, int], dict[str, frozenset[str]]]:
    """The agent facts of a scan merged from the last one (`old`) and a scan of the `rescanned` files (`sub`, which
    read every Agent Config file again): each fact of a file scanned again (or of a config) from `sub`, the
    others kept from `old` (a function or class `sub` met in a file it did not scan again is kept as `old` read it,
    with the writes only a scan of its file sees). With them, for each listed fact, how many of its first items
    are kept from `old` (in `in_order`'s order, as `old` has them: the others are put in place among them), and
    the `_class_namers` of the merged agents (`namers`: those of `old`'s, when known: kept but for the files
    scanned again, not worked out again from every agent).

    Exact, as the instructions are: `rescanned` holds every file reading one of its files (`reach.affected`), so
    what a file outside it names resolves through files outside it only, as it did in `old` (the random-edit
    property test compares these facts with a fresh scan's after every edit)."""
    again = set(rescanned)

    def fresh(path: str) -> bool:
        return path in again or path.endswith(_CONFIG_SUFFIXES)

    counts: dict[str, int] = {}

    def listed(name: str) -> list[Any]:  # (those of the files scanned again read as they were: the very objects)
        kept: list[Any] = []
        was: list[Any] = []
        for item in getattr(old, name):
            (was if fresh(item.path) else kept).append(item)
        now = [item for item in getattr(sub, name) if fresh(item.path)]
        counts[name] = len(kept)
        return kept + (was if was == now else now)

    def keyed(name: str) -> dict[str, Any]:  # (a fact read again as it was: the very object kept)
        was: dict[str, Any] = getattr(old, name)
        kept = {key: item for key, item in was.items() if not fresh(item.path)}
        again = {key: item for key, item in getattr(sub, name).items() if key not in kept}
        return {**{key: was[key] if was.get(key) == item else item for key, item in again.items()}, **kept}

    classes = keyed("agent_classes")
    agents: list[AgentCall] = []
    calls: dict[str, AgentCall] = {}  # the old calls of the files scanned again
    for item in old.agents:
        if fresh(item.path):
            calls[item.id] = item
        else:
            agents.append(item)
    counts["agents"] = len(agents)
    for item in sub.agents:
        if fresh(item.path):
            was = calls.get(item.id)
            agents.append(was if was is not None and was.same_as(item) else item)
    # a tool or plugin class's methods, as the scan that read the agent naming it found them (an agent kept from
    # `old` keeps them: its class's file is not scanned again either)
    methods = {key: value for key, value in old.class_methods.items() if key in classes}
    others = [key for key in old.class_methods if key not in classes]
    before = namers if namers is not None else _class_namers(old.agents)
    kept_namers: dict[str, frozenset[str]] = {}  # (those of the agents kept: not of a file scanned again)
    for cls, paths in before.items():
        if any(fresh(path) for path in paths):
            paths = frozenset(path for path in paths if not fresh(path))
        if paths:
            kept_namers[cls] = paths
    if others:  # those named by an agent kept
        methods.update((key, old.class_methods[key]) for key in others if key in kept_namers)
    methods.update(
        (key, old.class_methods[key] if old.class_methods.get(key) == value else value)
        for key, value in sub.class_methods.items()
    )
    facts = {
        "agents": agents,
        "agent_classes": classes,
        "functions": keyed("functions"),
        "class_methods": methods,
        "runners": listed("runners"),
        "roots": listed("roots"),
        "sessions": listed("sessions"),
        "config_instructions": list(sub.config_instructions),
        "config_skipped": list(sub.config_skipped),
        "unread": list(dict.fromkeys([*old.unread, *sub.unread])),
    }
    fresh_namers = _class_namers(agents[counts["agents"] :])
    for cls, paths in kept_namers.items():
        fresh_namers[cls] = paths | fresh_namers.get(cls, frozenset())
    return facts, counts, fresh_namers


def _class_namers(agents: Iterable[AgentCall]) -> dict[str, frozenset[str]]:
    """Each project class the `agents` name (a tool or plugin class, whose methods' writes are theirs), with the
    files of the agents naming it."""
    out: dict[str, set[str]] = {}
    for agent in agents:
        for ref in agent.named():
            if ref.kind == "class":
                out.setdefault(ref.target, set()).add(agent.path)
    return {cls: frozenset(paths) for cls, paths in out.items()}
