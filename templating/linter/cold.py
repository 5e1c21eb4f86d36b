"""A whole run's scan (cold: nothing kept from an earlier one), in import-closed groups of files, on every core.

The scan reads modules across files (names imported, functions called, agents built from other modules), so
the files are first split into groups that no import crosses (`templating.linter.import_groups`). Each group
is scanned on its own with every syntax tree dropped when that group is done, so memory holds one group's
trees at a time, not the project's; above `POOL_THRESHOLD` files the groups go to worker processes
(`TEMPLATING_LINT_JOBS`: how many, `1` for none), each sending back the facts of its scan and no tree.

A file the prefilter (`templating.linter.prefilter`) refuses, as one that can neither hold an instruction nor
feed the agent model, is not scanned as a file of its own (no syntax tree is made for it): its symbol table
is only built, which parses it without making Python objects of its tree (about two thirds of `ast.parse`),
to report it when it is not valid Python (then it is scanned, and the scan says why as before); it is still
read and parsed when a scanned file imports it.
"""

from __future__ import annotations

import collections
import os
import re
import sys
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from ..inputs import read_bytes
from ..places import LinkedFolders
from .import_groups import groups, import_graph
from .prefilter import relevant, wanted
from .util import WhileRunning

if TYPE_CHECKING:  # the pool's module (multiprocessing, tempfile...) is imported only when a pool starts
    from concurrent.futures import Future, ProcessPoolExecutor

    from ..pysource import Scan

__all__ = ["POOL_THRESHOLD", "PREFILTER", "cold_scan", "groups", "jobs", "relevant"]  # the last two: see their modules

POOL_THRESHOLD = 400  # files: below this, starting the workers costs more than they save
_CHUNK = 150  # files a worker scans at once (its trees are kept until that chunk is done)
_AHEAD = 4  # chunks handed to each worker ahead
_SWITCH = 0.0005  # seconds: the interpreter's switch interval while workers scan (see `_scanned`)
_ENV_JOBS = "TEMPLATING_LINT_JOBS"
PREFILTER = True  # off: every file scanned (what the tests compare the prefilter with)


def jobs() -> int:
    """The processes a large cold scan uses: `TEMPLATING_LINT_JOBS` when set (1: this one alone), else the cores
    this process may run on, when worker processes can be started safely (`_spawn_safe`), else 1."""
    given = os.environ.get(_ENV_JOBS, "").strip()
    if given:
        try:
            return max(1, int(given))
        except ValueError:
            return 1
    if not _spawn_safe():
        return 1
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


_GUARD = re.compile(r"""__name__\s*==\s*['"]__main__['"]""")


def _spawn_safe() -> bool:
    """Whether a spawned worker can start without running the program that lints again: a spawned process
    imports the main module (unless it is a package's `__main__`, as `python -m templating`, or there is no
    file: `python -c`), so a script must guard its work with `if __name__ == "__main__":`, as the `templating`
    command's does. A script calling `lint_project` without the guard lints in one process."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name.endswith("__main__"):
        return True
    path = getattr(main, "__file__", None)
    if not path:
        return True
    try:
        with open(path, "rb") as script:
            return _GUARD.search(script.read(65536).decode("utf-8", "replace")) is not None
    except OSError:
        return False


def _chunks(parts: list[list[int]], size: int) -> list[list[int]]:
    """The groups packed, in order, into chunks of about `size` files (a larger group is a chunk of its own)."""
    out: list[list[int]] = []
    current: list[int] = []
    for part in parts:
        if current and len(current) + len(part) > size:
            out.append(current)
            current = []
        current += part
    if current:
        out.append(current)
    return out


# --------------------------------------------------------------------------------------------
# Scanning a chunk (in this process or a worker)


class _Reader:
    """A worker's reader: the texts the project already read (an unsaved one also by its real path, as the
    project finds it: through a linked folder), else the file read as the project reads a file found by an
    import (inside the root, within the size limit)."""

    def __init__(self, texts: dict[str, str], root: str, limit: int, unsaved: Sequence[str] = ()) -> None:
        self.texts, self.root, self.limit = texts, root, limit
        self.unsaved = {os.path.realpath(name): name for name in unsaved}

    def __call__(self, path: str) -> str:
        from pathlib import Path

        from ..places import shown
        from ..pysource import python_text

        name = shown(Path(path)) if os.path.isabs(path) else path
        text = self.texts.get(name)
        if text is None and self.unsaved and (key := self.unsaved.get(os.path.realpath(name))) is not None:
            text = self.texts.get(key)
        if text is not None:
            return text
        return python_text(read_bytes(name, limit=self.limit, root=Path(self.root)))


def _valid(paths: Sequence[str], read: Callable[[str], str]) -> set[str]:
    """The `paths` that parse as they are: their symbol table is built (the parser runs, no syntax tree is made
    of Python objects, no code is generated; a few files that parse fail here too, and are then scanned). A file
    that does not (or cannot be read) is scanned, so that the scan reports it as it always has."""
    from symtable import symtable

    good = set()
    with warnings.catch_warnings():  # an invalid escape such as "\\d" warns; it is still a string
        warnings.simplefilter("ignore")
        for path in paths:
            try:
                symtable(read(path), path, "exec")
            except Exception:  # the scan reads it and says what is wrong
                continue
            good.add(path)
    return good


def _to_scan(chunk: Sequence[tuple[str, bool]], read: Callable[[str], str]) -> list[str]:
    """The files of `chunk` (each with whether it may hold an instruction) to scan, in order: those that may,
    and those that do not parse."""
    valid = _valid([path for path, wanted in chunk if not wanted], read)
    return [path for path, wanted in chunk if wanted or path not in valid]


def _own_if_linted(own: Callable[[Any], Any], linted: frozenset[str], folders: frozenset[str], item: Any) -> Any:
    """`own(item)` for an instruction of a `linted` file, or kept in a text file below one of the `folders` of
    linted files (one of those may name it: its findings are then reported); None for another (the project
    works it out if it is ever asked for)."""
    if item.path in linted:
        return own(item)
    if not item.path.endswith(".py"):
        folder = os.path.dirname(item.path)
        while True:
            if folder in folders:
                return own(item)
            up = os.path.dirname(folder)
            if up == folder:
                break
            folder = up
    return None


def _owns(own: Callable[[Any], Any] | None, found: Scan) -> list[Any]:
    """What `own` gives of each instruction of `found`, those it gives nothing for left out."""
    if own is None:
        return []
    return [given for item in found.instructions if (given := own(item)) is not None]


def _scan_chunk(task: _Task) -> _Found | None:
    """A worker's task: the chunk's files scanned (in the run's folder); its facts, with the texts left out
    (the project has them) and no syntax tree, and what `own` gives of the instructions found (`_owns`). None when the
    facts cannot leave the worker (a `state_schema=` model still reading its trees): the chunk is then scanned
    in the project's process."""
    from ..pysource import scan
    from ..pysource.reading import trees_not_kept

    cwd, chunk, texts, suffixes, root, limit, unsaved, own, links = task
    if os.getcwd() != cwd:
        os.chdir(cwd)
    read = _Reader(texts, root, limit, unsaved)
    try:
        with trees_not_kept():  # a worker's trees are never asked for again
            found = scan(
                _to_scan(chunk, read),
                suffixes=suffixes,
                read=read,
                keep_going=True,
                root=root,
                unsaved=unsaved,
                links=links,
            )
    except RecursionError:  # the project's process says what nests too deeply
        return None
    if any(state.schema is not None for state in found.state_schemas):
        return None
    for error in found.errors:
        error.__traceback__ = error.__context__ = error.__cause__ = None
    owns = _owns(own, found)  # sent with the instructions they are of (one pickle: the project finds them by identity)
    # the texts the project gave are filled again from its own (None here): only those it did not have are sent
    found.sources = {name: None if name in texts else text for name, text in found.sources.items()}  # type: ignore[misc]
    return found, owns  # what cannot be sent back makes the future fail: the chunk is then scanned in the project


def cold_scan(
    paths: Sequence[str],
    *,
    text_of: Callable[[str], str | None],
    scan_in_process: Callable[[list[str]], Scan],
    suffixes: Sequence[str],
    root: str,
    limit: int,
    unsaved: Mapping[str, str] | None = None,
    own: Callable[[Any], Any] | None = None,
    linted: Collection[str] | None = None,
    links: LinkedFolders | None = None,
) -> tuple[Scan, list[Any]]:
    """The scan of `paths` (usable Python files, as shown), group by group (see the module's description).

    `text_of`: a file's text as the project read it (None: not read as text); `scan_in_process`: the project's
    own scan of some files; `suffixes`, `root`, `limit`: the project's constant suffixes, root and file size
    limit, for the workers; `unsaved`: an editor's unsaved texts by file (what the workers read instead of the
    disk's, each file possibly not on disk). With `PREFILTER` on, the files the prefilter refuses are only
    checked to parse. `own`: what a worker works out of each instruction it found (a function that pickles: the
    engine's own findings of an instruction), returned beside the scan, of every chunk (this process's too: worked
    out while the workers scan, not after), for the instructions of the `linted` files (None: every file's) and
    those kept in text files. `links`: the project's links to folders (see `places.LinkedFolders`), for the import
    graph and the workers' scans."""
    from ..pysource import Scan

    files = list(paths)
    workers = jobs() - 1  # this process scans too
    pool = _started(workers) if workers > 0 and len(files) >= POOL_THRESHOLD else None
    try:
        results = _scanned(
            files,
            pool,
            workers,
            text_of,
            scan_in_process,
            suffixes,
            root,
            limit,
            dict(unsaved or {}),
            own,
            linted,
            links or LinkedFolders(),
        )
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    merged = Scan()
    owns: list[Any] = []
    for result, given in results:
        owns += given
        if None in result.sources.values():  # a worker's: the texts this process read are not sent back
            result.sources = {
                name: text_of(name) or "" if text is None else text for name, text in result.sources.items()
            }
        _merge(merged, result)
    for name in files:  # a file only compiled is read as the whole scan reads it (its comments, its count)
        if name not in merged.sources and (text := text_of(name)) is not None:
            merged.sources[name] = text
    return merged, owns


def _started(workers: int) -> ProcessPoolExecutor:
    """A pool of `workers` processes, starting now (each a fresh interpreter importing the scan) while this
    process finds the groups. Spawned: no state of this process's threads copied; their CPU time and memory are
    this process's children's. (The language server starts them too, reading a large workspace folder.)"""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"), initializer=_quiet)
    for _ in range(workers):
        pool.submit(_ready)
    return pool


def _quiet() -> None:
    """A worker writes nothing to the standard output it shares with its parent: the command's report, or the
    language server's messages to the editor."""
    os.dup2(2, 1)


def _ready() -> None:
    from ..pysource import scan  # noqa: F401 - imported before the first chunk comes


def _scanned(
    files: list[str],
    pool: ProcessPoolExecutor | None,
    workers: int,
    text_of: Callable[[str], str | None],
    scan_in_process: Callable[[list[str]], Scan],
    suffixes: Sequence[str],
    root: str,
    limit: int,
    unsaved: dict[str, str],
    own: Callable[[Any], Any] | None,
    linted: Collection[str] | None,
    links: LinkedFolders,
) -> list[_Found]:
    texts = [text_of(name) for name in files]
    parts, edges = import_graph(files, text_of, links=links)
    kept = wanted(texts, edges, suffixes) if PREFILTER else [True] * len(files)
    chunks = [[(files[i], kept[i]) for i in chunk] for chunk in _chunks(parts, _CHUNK)]

    def owner(i: int) -> Callable[[Any], Any] | None:
        """What works out the own findings of chunk `i`'s instructions: those of its linted files only."""
        if own is None or linted is None:
            return own
        mine = frozenset(name for name, _ in chunks[i] if name in linted)
        return partial(_own_if_linted, own, mine, frozenset(os.path.dirname(name) for name in mine))

    def here(i: int) -> _Found:  # with the own findings of its instructions, as a worker's (while workers scan)
        found = scan_in_process(_to_scan(chunks[i], lambda name: text_of(name) or ""))
        return found, _owns(owner(i), found)

    def task(i: int) -> _Task:
        texts = {name: text for name, _ in chunks[i] if (text := text_of(name)) is not None}
        return (
            os.getcwd(),
            chunks[i],
            {**unsaved, **texts},
            tuple(suffixes),
            root,
            limit,
            tuple(unsaved),
            owner(i),
            links,
        )

    if pool is not None and len(chunks) > 1:
        with _short_switches():
            return _shared(len(chunks), here, task, pool, workers)
    return [here(i) for i in range(len(chunks))]


# A shorter switch interval while workers scan: the pool's thread in this process reads what they send back, and
# gets the interpreter sooner than every 5 ms (the default) while this process scans, so that a worker waits less
# to hand its facts over.
_short_switches = WhileRunning(sys.getswitchinterval, lambda _: sys.setswitchinterval(_SWITCH), sys.setswitchinterval)


_Task = tuple[
    str,
    list[tuple[str, bool]],
    dict[str, str],
    tuple[str, ...],
    str,
    int,
    tuple[str, ...],
    Callable[[Any], Any] | None,
    LinkedFolders,
]
_Found = tuple["Scan", list[Any]]  # a chunk's scan, and the own findings of its instructions (those worked out)


def _shared(
    count: int, here: Callable[[int], _Found], task: Callable[[int], _Task], pool: ProcessPoolExecutor, workers: int
) -> list[_Found]:
    """The `count` chunks scanned by the `workers` processes of `pool` taking them from the front and this one
    from the back; a chunk a worker could not send back (or a worker that failed) is scanned here. In order.

    Each worker has chunks queued ahead (`_AHEAD`: it never waits for this process to finish a chunk of its own
    before it gets the next); once none is left to hand out, this process takes back the last one no worker has
    started, one at a time."""
    from concurrent.futures import FIRST_COMPLETED, wait

    results: list[_Found | None] = [None] * count
    queue = collections.deque(range(count))
    pending: dict[Future[_Found | None], int] = {}

    def refill() -> None:
        while queue and len(pending) < _AHEAD * workers:
            i = queue.popleft()
            try:
                pending[pool.submit(_scan_chunk, task(i))] = i
            except RuntimeError:  # the pool broke (a worker killed): the rest is scanned here
                results[i] = here(i)

    def taken_back() -> int | None:
        """The last chunk handed out that no worker has started, no longer theirs (a started one cannot be)."""
        for future in sorted(pending, key=pending.__getitem__, reverse=True):
            if future.cancel():
                return pending.pop(future)
        return None

    refill()
    while queue or pending:
        i = queue.pop() if queue else taken_back()
        if i is not None:
            results[i] = here(i)
        else:
            wait(pending, return_when=FIRST_COMPLETED)
        for future in [future for future in pending if future.done()]:
            i = pending.pop(future)
            try:
                found = future.result()
            except Exception:  # a worker lost, or facts it could not send: its chunk is scanned here
                found = None
            results[i] = found if found is not None else here(i)
        refill()
    return [result for result in results if result is not None]


def _merge(into: Scan, part: Scan) -> None:
    """`part`'s facts added to `into`'s (the groups share no linted file; a module two of them read is kept once)."""
    for name in (
        "instructions",
        "skipped",
        "writes",
        "errors",
        "static_instructions",
        "state_schemas",
        "agents",
        "runners",
        "roots",
        "sessions",
        "config_instructions",
        "config_skipped",
    ):
        getattr(into, name).extend(getattr(part, name))
    into.unread[:] = list(dict.fromkeys([*into.unread, *part.unread]))
    into.sources.update(part.sources)
    for name in ("agent_classes", "functions", "class_methods"):
        merged: dict[str, Any] = getattr(into, name)
        for key, value in getattr(part, name).items():
            merged.setdefault(key, value)
