"""Which files of a project are linted and read: the project's root, configuration and rules, the files
named or found by walking (each once, by its resolved path), and reading them within the project's bounds.

[`ProjectFiles`][templating.linter.selection.ProjectFiles] is the first part of the engine's
[`Project`][templating.linter.engine.Project]: it holds the project's state; `findings` scans and lints
what it selects, `incremental` re-lints an edit, `engine` runs a whole lint.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..nodes import Dialect
from ..places import LinkedFolders
from .cache import LintCache
from .cache_dir import cache_folder, cache_setting
from .config import LintConfig, LintConfigError, glob_list, rules_for, select_rules, severities
from .discovery import DEFAULT_INCLUDE, default_folder
from .project import Entry, FileSkipped, Walker, has_marker, is_too_wide, locate, read_bytes, read_text, top_package
from .reach import ImportGraph
from .registry import SKIPPED_FILE, Diagnostic
from .result import FileFindings
from .schema import Schema, load_schema
from .util import relative, shown

if TYPE_CHECKING:
    from ..pysource import FileAnswers, Scan, Write

__all__ = ["ProjectFiles"]

_AGENT_CONFIG = "root_agent.yaml"  # an Agent Config app's root (google-adk's AgentLoader looks for it)


def _is_context(relative: str) -> bool:
    return relative.endswith(".py") or relative.rsplit("/", 1)[-1] == _AGENT_CONFIG


def _codes_of(values: Iterable[str] | str | None) -> list[str] | None:
    if values is None:
        return None
    if isinstance(values, str):
        values = [values]
    return [code for value in values for code in value.split(",") if code.strip()]


class _Texts(dict[str, "str | Exception"]):
    """The Python files read: text, or why not; `version` counts its changes (what is worked out from every file's
    text is kept while it stays)."""

    __slots__ = ("version",)

    def __init__(self) -> None:
        super().__init__()
        self.version = 0

    def __setitem__(self, key: str, value: str | Exception) -> None:
        self.version += 1
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self.version += 1
        super().__delitem__(key)

    def pop(self, key: str, *default: Any) -> Any:
        if key in self:
            self.version += 1
        return super().pop(key, *default)

    def clear(self) -> None:
        self.version += 1
        super().clear()

    def popitem(self) -> tuple[str, str | Exception]:
        self.version += 1
        return super().popitem()

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self.version += 1
        return super().setdefault(key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.version += 1
        super().update(*args, **kwargs)

    def __ior__(self, other: Any) -> _Texts:  # type: ignore[override,misc]
        self.update(other)
        return self


class ProjectFiles:
    """The part of [`Project`][templating.linter.engine.Project] that chooses a project's files and reads
    them (its arguments are described there); it keeps what it read."""

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
        self.root, self.config = locate(root, paths=paths, config_path=config_path)
        # a root found by a marker (or given) is walked for context; else (or when the root is / or a
        # home folder: never walked whole) only the named files' folders
        given = root is not None or config_path is not None
        self.marked = (given or has_marker(self.root)) and not is_too_wide(self.root)
        self.dialect: Dialect = dialect
        self.force_exclude = force_exclude
        self.severity = {**self.config.severity, **severities(severity, "severity=")}
        self.overrides = {shown(Path(path)): text for path, text in (overrides or {}).items()}
        self._real_keys: tuple[frozenset[str], dict[str, str]] = (frozenset(), {})
        self._keys_by_name: dict[str, str | None] = {}
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
        self.cache: LintCache | None = None  # runs kept on disk (templating.linter.cache), when asked for
        if cache or cache_dir is not None:
            folder = cache_folder(self.root, given=cache_dir, configured=self.config.cache_dir)
            setting = cache_setting(given=cache_dir, configured=self.config.cache_dir)
            self.cache = LintCache(folder, setting=setting) if folder is not None else None
        self._texts = _Texts()  # Python files read: text, or why not
        self._raised: list[Exception] = []  # the kept errors of `_texts` raised again since the last scan ended
        # the file-system answers of the scans' import resolution (`pysource.imports.FileAnswers`), kept from one
        # scan to the next while the walk is (see `findings`' `_file_answers`)
        self._answers: FileAnswers | None = None
        # whether those answers are kept: only while someone tells the project of files created or deleted (an
        # editor's file watcher); false, each scan looks at the disk again
        self.keep_file_answers = True
        self._answers_walk = 0  # `walker.forgotten` when they were last dropped
        self._scan: Scan | None = None
        self._model: Any = None  # the agent model of `_scan` (`findings`' agent_model), once asked for
        self._model_before: Any = None  # the last agent model built: the next takes its agents made from the same facts
        self._writes: dict[str, list[Write]] = {}
        self._errors: dict[str, Any] = {}
        self._context: list[str] = []
        self._links = LinkedFolders()  # the links to folders the project's walk found (`_project_walk`)
        self._configs: list[str] = []  # the Agent Config roots (root_agent.yaml) walked with `_context`
        # without a project marker: the context walked for the files last named, and for which files and walk
        self._loose: tuple[tuple[tuple[str, ...], int], list[str], LinkedFolders] = (((), -1), [], LinkedFolders())
        self._walked: dict[str, str] = {}  # files found by walking, as shown -> "" or the real path of a link
        self._through: dict[str, str] = {}  # files chosen only through a link found by walking -> that link
        self._plain: set[str] = set()  # files chosen as themselves (named, or walked and not a link)
        self._rules_for: dict[str, frozenset[str]] = {}
        self._selected: dict[tuple[str, ...], tuple[list[str], list[Diagnostic], set[str]]] = {}
        self._last: dict[str, FileFindings] | None = None  # each file's findings after the last update
        self._unwalked: set[str] = set()  # files updated that the walk leaves out
        # the files whose part of the scan the last update changed (scanned again, or holding an instruction
        # given by one scanned again): what a caller keeping its own view of the scan must take again
        self.scanned_again: frozenset[str] = frozenset()
        self._graph = ImportGraph()  # which files' scans may read which, kept between edits
        # kept by `findings` for the instructions of the last scan: each one's own findings, its T014 findings
        # for the keys written (`_unwritten_for`), and each file's suppression comments with the text read
        self._own: dict[int, Any] = {}
        self._unwritten: dict[int, Any] = {}
        self._unwritten_for: frozenset[str] | None = None
        # the order rules' findings of each instruction, kept from one agent model to the next (rules.order_kept)
        self._ordered: Any = None
        self._order: Any = None  # the index of the agent model `_order_of`
        self._order_of: Any = None
        # T029/T030 of each instruction for the project's state keys (`_named_for`), and the keys each reads
        self._named: dict[int, Any] = {}
        self._named_for: tuple[dict[str, str], dict[str, str]] | None = None
        self._reads: dict[int, Any] = {}
        self._comments: dict[str, Any] = {}
        self._ids: dict[int, Any] = {}  # kept by `incremental`: each instruction's key and the files giving it
        # kept by `incremental`: the files of the agents naming each tool class, and the scan they are of
        self._namers: tuple[Scan, dict[str, frozenset[str]]] | None = None
        self._configs_of: tuple[Any, frozenset[str]] | None = None  # kept by `findings`: a scan's Agent Configs
        # kept by `incremental`: the last edit's file, `_texts.version`, other buffers, walk, files and their texts
        self._edit_texts: tuple[str, int, dict[str, str], list[str], list[str], dict[str, str]] | None = None
        # kept by `incremental` too: each instruction's files (its characters' and those giving it), and the text
        # files an instruction was read from that the last update for some files only listed
        self._touched: dict[int, Any] = {}
        self._listed_texts: set[str] = set()

    # -- which files

    def files(self, paths: Sequence[str] = ()) -> tuple[list[str], list[Diagnostic]]:
        """The files to lint for `paths` (shown relative to the current folder), and findings for
        those skipped unread. A file named is linted unless `force_exclude` and `exclude` drop it."""
        files, notes, _ = self._select(paths)
        return files, notes

    def found_through_link(self, name: str) -> str | None:
        """The symbolic link found by walking through which the file `name` (as findings show it: its
        target's path) was chosen, when it was chosen only that way; None for a file named or walked as
        itself. `--fix` never writes such a file."""
        return self._through.get(name)

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
                    if name not in self._plain:
                        self._through.setdefault(name, show(entry.path))
                else:
                    self._walked[name] = ""  # a plain file found by walking: read without following links
                    self._plain.add(name)
                    self._through.pop(name, None)
                found.setdefault(entry.real, name)
            below = str(folder).rstrip(os.sep) + os.sep
            for path, reason in self.walker.skipped:  # folders that could not be listed, in any walk so far
                if path == str(folder) or path.startswith(below):
                    notes.append(Diagnostic(SKIPPED_FILE, "info", reason, None, show(path)))

        if not paths and config.include:
            add_walked(self.root, tuple(config.include))
        elif not paths:  # as `templating lint .` (and ruff): the current folder (the root, from outside it)
            here = default_folder(self.root)
            paths = ["." if here == Path.cwd().resolve() else str(here)]
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
                self._plain.add(given)
                self._through.pop(given, None)
                if key not in found:
                    found[key] = given
                    if not self.force_exclude:  # pre-commit names the files, not the user: they stay inside
                        named.add(given)
        return list(found.values()), notes, named

    # -- reading Python files

    def override(self, name: str) -> str | None:
        """The unsaved text given for the file `name` (as named on the command line or as findings
        show it: `./a.prompt`, an absolute path and a link all find the text given for `a.prompt`)."""
        if not self.overrides or name == "-":
            return None
        text = self.overrides.get(name)
        if text is not None:
            return text
        if self._real_keys[0] != self.overrides.keys():  # each key's real path, again only when the keys change
            keys = frozenset(self.overrides)
            self._real_keys = (keys, {os.path.realpath(key): key for key in keys})
            self._keys_by_name.clear()
        if name not in self._keys_by_name:  # however named, from wherever the run is: one realpath a name
            self._keys_by_name[name] = self._real_keys[1].get(os.path.realpath(name))
        key = self._keys_by_name[name]
        return None if key is None else self.overrides.get(key)

    def _read_python(self, path: str, *, named: bool) -> str:
        text = self.override(path)
        if text is not None:
            return text
        cached = self._texts.get(path)
        if cached is None:
            from ..pysource import python_text

            try:
                cached = python_text(self._read_bytes(path, named=named))
            except (OSError, FileSkipped, UnicodeDecodeError) as exc:
                cached = exc
            self._texts[path] = cached
        if isinstance(cached, Exception):
            self._raised.append(cached)  # (its traceback is dropped when the scan ends: `_run_scan`)
            raise cached
        return cached

    def kept_texts(self, paths: Iterable[str]) -> list[str | Exception | None]:
        """The text of each Python file of `paths` (absolute, or as findings show them) as the project last
        read it (an unsaved text first), the error reading it met, or None when it was not read: what another
        view of the project (the language server's index) takes instead of reading the files again."""
        show = _Shower(self.root)
        out: list[str | Exception | None] = []
        for path in paths:
            name = show(path) if os.path.isabs(path) else path
            out.append(self.overrides[name] if name in self.overrides else self._texts.get(name))
        return out

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
        root is then just the paths' common folder, say a home folder) those of the Python package each
        named file is in (its topmost package folder, walked whole: the app that imports it), or of its own
        folder when it is in no package."""
        if self.marked:  # (the walk is the project's, kept: not gone through again for each edit)
            return list(self._project_walk()[0])
        return [name for name in self._context_walk(named) if name.endswith(".py")]

    def _agent_configs(self, named: Sequence[str] = ()) -> list[str]:
        """The google-adk Agent Config apps (`root_agent.yaml`) among the files walked for context (the files
        they name are read from them by the scan)."""
        walked = self._project_walk()[1] if self.marked else self._context_walk(named)
        return [name for name in walked if os.path.basename(name) == _AGENT_CONFIG]

    def _context_walk(self, named: Sequence[str]) -> list[str]:
        """The Python files and Agent Config roots walked for context (see `_context_files`)."""
        show = _Shower(self.root)
        if not self.marked:
            key = (tuple(named), self.walker.forgotten)  # the same until the files are walked again
            if self._loose[0] == key:
                self._links = self._loose[2]
                return list(self._loose[1])
            folders: dict[Path, bool] = {}  # folder -> walked whole
            packages: dict[str, Path | None] = {}  # each named file's folder -> its top package (files share them)
            for name in named:
                where = os.path.dirname(os.path.abspath(name))
                if where not in packages:
                    packages[where] = top_package(Path(where))
                package = packages[where]
                if package is not None:
                    folders[package] = True
                else:
                    folders.setdefault(Path(where), False)
            entries = [e for f, whole in sorted(folders.items()) for e in self.walker.entries(f, recursive=whole)]
            walked = list(
                dict.fromkeys(
                    show(e.path) for e in entries if e.skip is None and not e.link and _is_context(e.relative)
                )
            )
            self._links = _links(entries, show)
            self._loose = (key, walked, self._links)
            return list(walked)
        context, configs = self._project_walk()
        return [*context, *configs]

    @property
    def links(self) -> LinkedFolders:
        """The links to folders the project's walk found (an import may go through one), as its scans take them;
        none before the project's files are walked."""
        return self._links

    def _project_walk(self) -> tuple[list[str], list[str]]:
        """The project's Python files and its other context files (Agent Config), walked once (until the walk is
        done again: `_context` emptied)."""
        if not self._context:
            show = _Shower(self.root)
            entries = self.walker.entries(self.root)
            walked = [show(e.path) for e in entries if e.skip is None and not e.link and _is_context(e.relative)]
            self._links = _links(entries, show)
            self._context = [name for name in walked if name.endswith(".py")]
            self._configs = [name for name in walked if not name.endswith(".py")]
            for name in self._context:
                self._walked.setdefault(name, "")
        return self._context, self._configs

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


def _links(entries: Iterable[Entry], show: _Shower) -> LinkedFolders:
    """The links to folders among a walk's `entries` (the walk does not enter them; an import may go through one)."""
    return LinkedFolders((show(e.path), e.real) for e in entries if e.link and e.skip is None and os.path.isdir(e.real))


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
