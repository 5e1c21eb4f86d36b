"""Where the lint cache keeps its entries, and what it may touch there (`templating.linter.cache` decides what an
entry holds and when it is used).

The folder is `.templating_cache` at the project root unless the command line (`--cache-dir`), the environment
(`TEMPLATING_CACHE_DIR`) or `cache-dir` in `[tool.templating]` (a folder inside the root) name another; it holds a
`CACHEDIR.TAG` and a `.gitignore` of `*`, and can be deleted or moved at any time. An entry is written to a
temporary file of the folder and moved into place with `os.replace`, so two runs at once never see half an entry.
The folder holds at most `MAX_ENTRIES` entries and `MAX_TOTAL_BYTES` (the least recently used are removed).

The cache removes only what it wrote: an entry is named by its key (40 hexadecimal digits, `.json`) and begins
with its header (`{"templating":"lint cache",...`), and pruning looks at nothing else (not a link, not another
file, whatever its name). A folder that is not empty and holds no `CACHEDIR.TAG` written by templating is not a
cache: it is refused (`LintCacheError`), never written to.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from pathlib import Path

from ..errors import TemplatingError
from ..inputs import FileSkipped, read_bytes
from .config import LintConfigError

__all__ = [
    "CACHE_ENV",
    "DEFAULT_FOLDER",
    "HEADER",
    "MAX_ENTRIES",
    "MAX_TOTAL_BYTES",
    "LintCacheError",
    "cache_folder",
    "cache_setting",
    "check_folder",
    "write_entry",
]

DEFAULT_FOLDER = ".templating_cache"
CACHE_ENV = "TEMPLATING_CACHE_DIR"
HEADER = b'{"templating":"lint cache","format":'  # how every entry begins (the keys in this order)
_ENTRY_NAME = re.compile(r"[0-9a-f]{40}\.json")  # the key's digest, hexadecimal
MAX_ENTRIES = 64
MAX_TOTAL_BYTES = 256 * 2**20
_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by templating (the lint cache).\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


class LintCacheError(TemplatingError):
    """A cache folder that is not the cache's own (not empty, no `CACHEDIR.TAG` of templating): not used."""


def cache_folder(root: Path, *, given: str | Path | None = None, configured: str | None = None) -> Path | None:
    """Where a project's cache lives: `given` (the command line's `--cache-dir`, the API's `cache_dir`), else
    `TEMPLATING_CACHE_DIR`, else `configured` (`cache-dir` of `[tool.templating]`, relative to the root and
    inside it: a project's own settings never make the linter write elsewhere), else `.templating_cache` at
    the root. None (no cache) when the project's folder is a link that leaves the root."""
    if given is not None:
        return Path(given).absolute()
    from_env = os.environ.get(CACHE_ENV)
    if from_env:
        return Path(from_env).absolute()
    folder = root / DEFAULT_FOLDER
    if configured is not None:
        folder = Path(os.path.normpath(root / configured))
        if not folder.is_relative_to(root) or folder == root:
            raise LintConfigError(
                f"'cache-dir' in [tool.templating] must be a folder inside the project root ({root}), not "
                f"{configured!r} (to use another folder, pass --cache-dir or set {CACHE_ENV})"
            )
    real = Path(os.path.realpath(folder))
    return folder if real.is_relative_to(root) and real != root else None


def cache_setting(*, given: str | Path | None = None, configured: str | None = None) -> str:
    """What chose the cache's folder (see `cache_folder`), as a message names it."""
    if given is not None:
        return "--cache-dir"
    if os.environ.get(CACHE_ENV):
        return CACHE_ENV
    return "the default folder" if configured is None else "'cache-dir' in [tool.templating]"


def check_folder(folder: Path, setting: str) -> None:
    """Raise `LintCacheError` when `folder` is not the cache's own: it holds files but no `CACHEDIR.TAG` of
    templating (a folder of the user's files, named by mistake), or it is a file. A folder that does not exist
    yet, is empty, or cannot be read or made (the cache is then not written) is fine. `setting`: what named it."""
    try:
        mine = _ours(folder) or not os.listdir(folder)
    except NotADirectoryError:
        mine = not os.path.exists(folder)  # a folder above it is a file: it cannot be made (no cache)
        if not mine:
            raise LintCacheError(
                f"refusing to use {folder} as the lint cache ({setting}): it is not a folder"
            ) from None
    except OSError:  # not there yet, or a folder one cannot list: nothing in it is touched
        mine = True
    if not mine:
        raise LintCacheError(
            f"refusing to use {folder} as the lint cache ({setting}): it is not empty and is not a "
            "templating cache (it has no CACHEDIR.TAG written by templating); name a new or empty folder, or "
            "pass --no-cache"
        )


def write_entry(folder: Path, key: str, data: bytes) -> None:
    """Write the entry `data` (beginning with `HEADER`) as `<key>.json` in `folder` (made, with its tag, if need
    be), then prune the folder."""
    _prepare(folder)
    _moved_into_place(folder, f"{key}.json", data)
    _prune(folder)


def _moved_into_place(folder: Path, name: str, data: bytes) -> None:
    """`data` written to a temporary file of `folder`, moved to `name` there (removed if that fails): a reader
    never sees half a file."""
    import tempfile  # only a run that writes pays for it (with `random` and `shutil`): not --no-cache, not warm

    handle, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=os.path.splitext(name)[1], dir=folder)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, folder / name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _ours(folder: Path) -> bool:
    """Whether `folder` is a lint cache: it holds a `CACHEDIR.TAG` written by templating (a regular file)."""
    try:
        tag = read_bytes(str(folder / "CACHEDIR.TAG"), limit=4096, follow=False)
    except (OSError, FileSkipped):
        return False
    return tag.startswith(_TAG.encode("utf-8").partition(b"\n")[0]) and b"created by templating" in tag


def _written_here(path: str, name: str) -> bool:
    """Whether the file `path` is an entry the cache wrote: its name is a key's, and it begins with the header
    (or with that of the first format's entries, `{"format":1,"key":"<its name>"`). A link is never one."""
    if not _ENTRY_NAME.fullmatch(name):
        return False
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        head = os.read(fd, 64)
    except OSError:
        return False
    finally:
        os.close(fd)
    return head.startswith(HEADER) or head.startswith(b'{"format":1,"key":"' + name[:-5].encode("ascii"))


def _prepare(folder: Path) -> None:
    """The folder, made with its `CACHEDIR.TAG` and a `.gitignore` that ignores it all."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (("CACHEDIR.TAG", _TAG), (".gitignore", "# made by templating: the lint cache\n*\n")):
        if not (folder / name).exists():
            _moved_into_place(folder, name, text.encode("utf-8"))


def _prune(folder: Path) -> None:
    """At most `MAX_ENTRIES` entries and `MAX_TOTAL_BYTES` in all: the least recently used go (a hit touches its
    entry; another run may remove entries at the same time). Only the entries it wrote (`_written_here`) are
    counted and removed: nothing else in the folder is touched."""
    entries: list[tuple[float, int, str]] = []
    for item in os.scandir(folder):
        if _ENTRY_NAME.fullmatch(item.name) and _written_here(item.path, item.name):
            with contextlib.suppress(OSError):
                info = item.stat(follow_symlinks=False)
                entries.append((info.st_mtime, info.st_size, item.path))
    entries.sort(reverse=True)
    total = 0
    for count, (_, size, path) in enumerate(entries):
        total += size
        if count >= MAX_ENTRIES or total > MAX_TOTAL_BYTES:
            with contextlib.suppress(OSError):
                os.unlink(path)
