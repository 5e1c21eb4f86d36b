"""The persistent lint cache: a run's result kept on disk, given again while none of its inputs changed.

What a Python file's findings are depends on other files (an instruction built from constants imported from
another module, a state key written in a third file, a function given state by a caller elsewhere), so the
scan is not a function of each file alone. The cache therefore keeps whole runs, each checked input by input:

- an entry is found by a key over what decides which files a run reads and how: the tool's version and
  Python's (the `ast` differs), the code that finds (`code_identity`: an edit to a rule in a development
  install, where the version stays the same, is a miss), the cache format, the current folder (paths are
  shown relative to it), the root, the configuration, the rules on, the schema, the dialect, the paths
  named, the files chosen and the project's Python files read for context;
- the entry lists every file the run read or tried to read (each Python file, each template file, each text
  file an instruction reads, and the modules an import could have named but that were not there), each
  with a digest of its text or of why it could not be read;
- a run whose key has an entry checks those files again (with the same bounds: inside the root unless the
  user named the file, at most `max-file-size`) and uses the entry only when every digest is the same.
  Otherwise it lints afresh and writes the entry again. A cached run gives exactly what a fresh run gives.

A file is first checked by its status, as ruff and git do: the entry keeps each file's size, modification
and change times (ns), inode and device, and a file whose status is the same is not hashed again (its text
is read when the result is first asked for it: `cached_result.CachedTexts`). A file the run looked for and did
not find (a module an import could name, a text file) is checked with one `lstat`, and those in a folder not there
either by one `lstat` of the highest such folder (the entry lists that folder instead of them). The status is
trusted only when the file's change time is more than `TRUST_MARGIN_NS` (2 s) before the start of the run that
wrote the entry: a file written while that run read it, or within the same tick of a coarse clock, is hashed on
every hit. What this guarantees: an edit, a `touch`, or a file replaced by another (a new inode), even with its
size kept and its modification time set back with `os.utime`, changes the status (`os.utime` and every write set
the change time, which no call sets back), so it is hashed and, if its text changed, the run lints afresh. Not
seen: a file changed by setting the system's clock back, or on a file system that keeps neither inode nor change
time.

Entries are JSON (never pickle: a cache folder is a file anyone with the project can write); an entry that
cannot be read, parsed or checked (every field, by type and range, before it is used:
`templating.linter.cached_result`) is a miss, and the next run rewrites it. An entry over `MAX_ENTRY_BYTES` is
not written. Where entries live, how they are written and pruned, and which folder is refused:
`templating.linter.cache_dir`.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..inputs import FileSkipped, read_bytes
from .cache_dir import HEADER, LintCacheError, check_folder, write_entry
from .cached_result import _BadEntry, _check, _payload, _result, _strings
from .config import LintConfig
from .registry import Diagnostic
from .result import LintResult
from .util import real_folder, running_version, shown

try:  # the interpreter's own BLAKE2 (what hashlib gives too), without loading OpenSSL: 2 ms of each start
    from _blake2 import blake2b as _blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b as _blake2b

if TYPE_CHECKING:
    from ..places import LinkedFolders
    from ..pysource import Scan


class Project(Protocol):
    """What the cache reads of the engine's `Project` (named here, not imported: the engine imports this)."""

    root: Path
    marked: bool
    config: LintConfig
    codes: frozenset[str]
    schema: Any
    force_exclude: bool
    _scan: Scan | None

    @property
    def _texts(self) -> Mapping[str, str | Exception]: ...

    @property
    def dialect(self) -> str: ...

    @property
    def links(self) -> LinkedFolders: ...

    def files(self, paths: Sequence[str] = ()) -> tuple[list[str], list[Diagnostic]]: ...

    def _context_files(self, named: Sequence[str] = ()) -> list[str]: ...


__all__ = ["LintCache", "code_identity"]

FORMAT = 4  # the layout of an entry; a change makes every older entry a miss
_ENTRY_FIELDS = {
    "templating",
    "format",
    "key",
    "since",
    "inputs",
    "result",
}  # an entry's keys (its result's: cached_result)
TRUST_MARGIN_NS = 2_000_000_000  # a status no newer than this before the writing run began is trusted
MAX_ENTRY_BYTES = 64 * 2**20


_code: str | None = None  # `code_identity()` of this process, worked out once


def code_identity(package: Path | None = None) -> str:
    """A digest of the code that finds: the path, size and modification time (ns) of every `.py`, `.lark` and
    `.json` file under the `templating` package's folder (`__pycache__` left out), and of the grammar beside it
    when a checkout keeps it there. Any edit changes it, so a development install, whose version does not
    change, never gets findings from older code. Stat only, no reading (hashing the text costs several times
    as much, on every run); worked out once per process for the package itself."""
    global _code
    if package is None and _code is not None:
        return _code
    folder = package if package is not None else Path(__file__).parents[1]
    found: list[str] = []
    pending = [str(folder)]
    if not (folder / "grammar").is_dir():  # a checkout: `parser.grammar_text` reads ../grammar/*.lark
        pending.append(str(folder.parent / "grammar"))
    while pending:
        current = pending.pop()
        try:
            with os.scandir(current) as items:
                for item in items:
                    if item.is_dir(follow_symlinks=False):
                        if item.name != "__pycache__":
                            pending.append(item.path)
                    elif item.name.endswith((".py", ".lark", ".json")):
                        with contextlib.suppress(OSError):
                            info = item.stat()
                            found.append(f"{item.path}\0{info.st_size}\0{info.st_mtime_ns}")
        except OSError:
            found.append(f"!{current}")  # a folder that cannot be read (or no grammar beside it) is part of it
    identity = _digest("\n".join(sorted(found)))
    if package is None:
        _code = identity
    return identity


def _digest(text: str) -> str:
    return _blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


def _status(path: str) -> list[int] | None:
    """What the cache compares of a file instead of its text: size, modification and change times (ns),
    inode and device; None for a link or anything but a regular file (always hashed)."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev]


def _decoded(path: str, mode: str, project: Project, *, follow: bool = True) -> str:
    """The text of an input as the run read it: at most `max-file-size` (a text file: at least the bound of
    the files an instruction reads), "py" decoded as Python does, "text" as UTF-8."""
    global _python_text, _text_bytes
    if _python_text is None:  # imported once, when first needed (not at import: the engine imports this)
        from ..pysource.reading import _MAX_TEXT_BYTES, python_text

        _python_text, _text_bytes = python_text, _MAX_TEXT_BYTES
    limit = project.config.max_file_size
    limit = max(_text_bytes, limit) if mode == "text" else limit
    data = read_bytes(path, limit=limit, root=None, follow=follow)  # inside the root: checked by the caller
    return _python_text(data) if mode == "py" else data.decode("utf-8").removeprefix("\ufeff")


_python_text: Callable[[bytes], str] | None = None
_text_bytes = 0


_MISSING = "!FileNotFoundError: "  # how a file looked for and not there is recorded (`_failure`)
_GONE = "gone"  # an input `[folder, "gone"]`: a folder not there, standing for every file looked for below it


def _now_ns() -> int:
    return time.time_ns()


def _failure(exc: BaseException) -> str:
    return f"!{type(exc).__name__}: {exc}"


class LintCache:
    """The cache of one project's lint runs, in `folder` (see the module's description)."""

    def __init__(self, folder: Path, *, setting: str = "--cache-dir") -> None:
        self.folder = folder
        self.setting = setting  # what named the folder, for the message refusing it
        self._checked = False
        self._files: list[str] = []  # the files the current run lints
        self._folders: dict[str, str] = {}  # folder -> its real path, for the current run's reads
        self._within: set[str] = set()  # folders whose real path is inside the root, for the current run's reads
        self._written: set[str] = set()  # the same folders as the run's paths write them (`_inside`)
        self._absent: set[str] = set()  # folders not there (nor anything below them), for the current run's checks
        self._cwd = ""  # the current folder of the current run
        self._started = 0  # when the current run began (ns): a file changed since then is not trusted by status

    # -- a run, from the cache or fresh

    def lint(self, project: Project, paths: Sequence[str], run: Callable[[Sequence[str]], LintResult]) -> LintResult:
        """`run(paths)`'s result: the cached one when every input of the run is unchanged, else a fresh one,
        then kept for the next run."""
        self._folders = {}
        self._within = set()
        self._written = set()
        self._absent = set()
        self._cwd = os.getcwd()
        self._started = _now_ns()
        if not self._checked:
            check_folder(self.folder, self.setting)
            self._checked = True
        key = self._key(project, paths)
        named = {*paths, *(shown(Path(p)) for p in paths)}
        hit = self._load(key, project, named)
        if hit is not None:
            return hit
        result = run(paths)
        with contextlib.suppress(OSError):  # a cache that cannot be written (read-only folder) is no error
            self._store(key, project, named, result)
        return result

    def _key(self, project: Project, paths: Sequence[str]) -> str:
        files, _ = project.files(paths)
        self._files = files
        python = [name for name in files if name.endswith(".py")]  # only their folders matter (no marker)
        context = project._context_files(python) if python else []
        parts = [
            FORMAT,
            running_version(),
            code_identity(),
            list(sys.version_info[:2]),
            os.getcwd(),
            str(project.root),
            project.marked,
            repr(project.config),
            sorted(project.codes),
            repr(project.schema),
            sorted(getattr(project, "severity", {}).items()),  # the levels given on top of the table's
            project.dialect,
            project.force_exclude,
            list(paths),
            # the files and the context files, each list by its digest (no name holds a NUL); the context often
            # is the files themselves (a marked project linted whole): then said so, not listed twice
            _digest("\0".join(files)),
            "the files" if context == files else _digest("\0".join(context)),
            repr(project.links),  # (walked with the context): where an import through a link leads, and starts
        ]
        return _digest(json.dumps(parts, default=str))

    # -- reading files again

    def _read(self, path: str, mode: str, project: Project, named: set[str]) -> tuple[str | None, str]:
        """The text of an input (`mode`: "py" decoded as Python does, "text" as UTF-8) and its digest, or
        None and why it cannot be read; read with the bounds the run read it with."""
        try:
            if path not in named and not self._inside(path, project.root):
                return None, f"!outside the root: {path}"
            text = _decoded(path, mode, project)
        except (OSError, FileSkipped, UnicodeDecodeError, ValueError) as exc:
            return None, _failure(exc)
        return text, _digest(text)

    def _absolute(self, path: str) -> str:
        """`os.path.abspath(path)`, the current folder asked once a run (a run checks thousands of paths)."""
        if os.name != "posix":
            return os.path.abspath(path)
        if not path.startswith(os.sep):
            path = os.path.join(self._cwd, path)
        if os.sep + "." in path or os.sep * 2 in path or path.endswith(os.sep):
            path = os.path.normpath(path)
        return path

    def _inside(self, path: str, root: Path, *, link: bool | None = None, absolute: str | None = None) -> bool:
        """Whether `path`, links followed, is inside `root` (as `read_bytes` checks it, with the real path
        of each folder worked out once: a project's files share few folders). `link`: whether `path` is a
        link, when the caller knows it; `absolute`: its absolute path, when the caller has it."""
        written = None  # a file that is no link, in a folder inside the root: known by its folder as written
        if link is False and os.path.basename(path) not in ("", os.curdir, os.pardir):  # (`a/..` is not in `a`)
            written = path[: path.rfind("/") + 1] if os.name == "posix" else os.path.dirname(path) + os.sep
            if written in self._written:
                return True
        folder, name = os.path.split(absolute or self._absolute(path))
        if link is False and folder in self._within:
            if written is not None:
                self._written.add(written)
            return True
        real = self._real(folder)
        target = os.path.join(real, name)
        if link is False:
            top = os.path.normcase(root)
            if os.path.normcase(real).startswith(top if top.endswith(os.sep) else top + os.sep) or real == str(root):
                self._within.add(folder)
                if written is not None:
                    self._written.add(written)
                return True
        if link if link is not None else os.path.islink(target):
            target = os.path.realpath(target)
        top, target = os.path.normcase(root), os.path.normcase(target)  # both absolute and normalised
        return target == top or target.startswith(top if top.endswith(os.sep) else top + os.sep)

    def _real(self, folder: str) -> str:
        """The real path of the absolute, normalised `folder`, from its parent's (one `lstat` a folder, none
        below a folder found not there: `_absent`)."""
        return real_folder(folder, self._folders, self._absent)

    def _load(self, key: str, project: Project, named: set[str]) -> LintResult | None:
        try:
            data = read_bytes(str(self.folder / f"{key}.json"), limit=MAX_ENTRY_BYTES, root=self.folder.resolve())
            entry = json.loads(data)
            _check(isinstance(entry, dict) and set(entry) == _ENTRY_FIELDS)
            if entry["templating"] != "lint cache" or entry["format"] != FORMAT or entry["key"] != key:
                return None
            inputs, since = entry["inputs"], entry["since"]
            _check(isinstance(inputs, list) and type(since) is int)
            payload = entry["result"]
            _check(isinstance(payload, dict) and isinstance(payload.get("sources"), dict))
            wanted = {path for path in payload["sources"].values() if type(path) is str}  # texts the result gives
            texts: dict[str, str] = {}
            later: dict[str, str] = {}  # path -> mode: texts vouched for by their status, read when asked for
            for item in inputs:
                _check(type(item) is list and len(item) in (2, 3, 4) and _strings(item[:3]))
                if len(item) == 2:
                    _check(item[1] == _GONE)
                    if not self._still_gone(item[0], project):
                        return None
                    continue
                _check(item[1] in ("py", "text"))
                path, mode, digest = item[:3]
                if len(item) == 4 and self._unchanged(path, item[3], since, project, named):
                    if path in wanted:  # its status vouches for the digest: read, not hashed
                        later[path] = mode
                    continue
                if len(item) == 3 and self._still_missing(path, digest, project, named):
                    continue
                text, now = self._read(path, mode, project, named)
                if now != digest:
                    return None
                if text is not None:
                    texts[path] = text
            result = _result(payload, texts, project.root, later=(later, partial(self._text_again, project=project)))
            with contextlib.suppress(OSError):
                os.utime(self.folder / f"{key}.json")  # recently used: pruned last
            return result
        except (OSError, FileSkipped, ValueError, RecursionError, _BadEntry, LintCacheError):
            return None  # no entry, or one cut short, not ours or making no sense: a miss, rewritten by this run

    def _still_gone(self, folder: str, project: Project) -> bool:
        """Whether a folder the entry lists as not there (every file looked for below it: `_listed`) is still not
        there, in a folder inside the root: the files below it are then still not found, with the same failure."""
        try:
            os.lstat(folder)
        except FileNotFoundError:
            return self._inside(folder, project.root, link=False)
        except OSError:
            return False
        return False

    def _still_missing(self, path: str, digest: str, project: Project, named: set[str]) -> bool:
        """Whether a file the run looked for and did not find (a module an import could have named) is still not
        there, with the same failure: one `lstat`, not a read (a project's imports look for many)."""
        if not digest.startswith(_MISSING):
            return False
        try:
            os.lstat(path)
        except FileNotFoundError as exc:
            return _failure(exc) == digest and (path in named or self._inside(path, project.root, link=False))
        except OSError:
            return False
        return False

    def _text_again(self, path: str, mode: str, *, project: Project) -> str:
        """The text of a file of a cached result whose status was unchanged when the entry was checked, read when
        the result is first asked for it (`LintCacheError` if it can no longer be read)."""
        text = self._text(path, mode, project)
        if text is None:
            raise LintCacheError(f"{path}: changed while its cached findings were given; lint again")
        return text

    def _unchanged(self, path: str, recorded: Any, since: int, project: Project, named: set[str]) -> bool:
        """Whether the file's status is the one recorded and old enough to be trusted (see the module's
        description), and the file is one the run may read."""
        _check(type(recorded) is list and len(recorded) == 5 and all(type(v) is int for v in recorded))
        if recorded[2] >= since - TRUST_MARGIN_NS or _status(path) != recorded:
            return False
        return path in named or self._inside(path, project.root, link=False)

    def _text(self, path: str, mode: str, project: Project) -> str | None:
        """The text of a file whose status is unchanged (None: it cannot be read now)."""
        try:
            return _decoded(path, mode, project, follow=False)  # a regular file when its status was taken
        except (OSError, FileSkipped, UnicodeDecodeError, ValueError):
            return None

    # -- writing

    def _inputs(self, project: Project, named: set[str], result: LintResult) -> dict[str, tuple[str, str]] | None:
        """Every file the run read or tried to read: path -> (mode, digest). None when an input that could
        not be read during the run can be now (it changed meanwhile: the result is not kept)."""
        inputs: dict[str, tuple[str, str]] = {}
        failed: list[tuple[str, str]] = []
        for path, text in project._texts.items():
            if isinstance(text, str):
                inputs[path] = ("py", _digest(text))
            else:
                failed.append((path, "py"))
        scan = project._scan
        if scan is not None:
            for path, text in scan.sources.items():
                name = shown(Path(path)) if os.path.isabs(path) else path
                if name not in inputs and path not in inputs:
                    inputs[path] = ("text", _digest(text))
            failed += [(path, "text") for path in scan.unread]
        for name in self._files:
            if name == "-" or name.endswith(".py") or name in inputs:
                continue
            template = result.sources.get(name)
            if template is not None:
                inputs[name] = ("text", _digest(template))
            else:
                failed.append((name, "text"))
        for path, mode in failed:
            now, digest = self._read(path, mode, project, named)
            if now is not None:
                return None
            inputs[path] = (mode, digest)
        return inputs

    def _store(self, key: str, project: Project, named: set[str], result: LintResult) -> None:
        inputs = self._inputs(project, named, result)
        if inputs is None:
            return
        by_real: dict[str, str] = {}
        sources: dict[str, str] = {}
        for name in result.sources:
            if name not in inputs and not by_real:  # a file shown as named (./a.py): matched by real path
                by_real = {os.path.realpath(path): path for path in inputs}
            found = name if name in inputs else by_real.get(os.path.realpath(name))
            if found is None:
                return  # a text the entry could not give back: not kept
            sources[name] = found
        entry = {  # the header first: the folder knows an entry by it (`cache_dir.HEADER`)
            "templating": "lint cache",
            "format": FORMAT,
            "key": key,
            "since": self._started,
            "inputs": _listed(inputs),
            "result": _payload(result, sources),
        }
        data = json.dumps(entry, separators=(",", ":")).encode("utf-8")
        if len(data) > MAX_ENTRY_BYTES or not data.startswith(HEADER):
            return
        write_entry(self.folder, key, data)


def _listed(inputs: Mapping[str, tuple[str, str]]) -> list[list[Any]]:
    """The entry's inputs: each file with its digest (and status), except the files not found in a folder not
    there either, listed once as the highest such folder (`[folder, _GONE]`): a project's imports look for
    thousands of modules in a few folders not there, and a hit then asks one `lstat` for each folder, not one
    for each file. (A file the user named is never among them: a run with a named file not there fails.)"""
    there: dict[str, bool] = {}

    def exists(folder: str) -> bool:
        found = there.get(folder)
        if found is None:
            found = there[folder] = os.path.lexists(folder or os.curdir)
        return found

    items: list[list[Any]] = []
    gone: set[str] = set()
    for path, (mode, digest) in inputs.items():
        folder = os.path.dirname(path)
        if not digest.startswith(_MISSING) or exists(folder) or os.path.normpath(path) != path:
            items.append(_item(path, mode, digest))  # (`a/./b`: its folder is `a`, which the lstat of `a/.` follows)
            continue
        if digest != _failure(FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)):
            items.append(_item(path, mode, digest))
            continue
        while (parent := os.path.dirname(folder)) != folder and not exists(parent):
            folder = parent
        if folder not in gone:
            gone.add(folder)
            items.append([folder, _GONE])
    return items


def _item(path: str, mode: str, digest: str) -> list[Any]:
    """An input as the entry lists it: with its status when it was read (a failure is always read again)."""
    status = None if digest.startswith("!") else _status(path)
    return [path, mode, digest] if status is None else [path, mode, digest, status]
