"""Reading the inputs of the command line and of the linter: a template file or stdin exactly as
written, and a state file as strict JSON. A file is read only when it is a regular file (after
links), no larger than a limit and (when a root is given) inside that root; one left unread for
safety is a [`FileSkipped`][templating.inputs.FileSkipped], one that cannot be read an
[`InputError`][templating.inputs.InputError] saying why."""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

from .errors import TemplatingError

__all__ = [
    "DEFAULT_MAX_FILE_SIZE",
    "FileSkipped",
    "InputError",
    "read_bytes",
    "read_state",
    "read_text",
    "write_text_whole",
]

DEFAULT_MAX_FILE_SIZE = 2_000_000  # bytes: far above any instruction file, far below what hurts


class InputError(TemplatingError):
    """An input file (a template, a state file, stdin) that cannot be read: missing, not UTF-8, not JSON..."""


class FileSkipped(InputError):
    """A file left unread for safety (not a regular file, too large, outside the root): `reason` says why.

    The linter reports it as a note and goes on; the command line, as any `InputError`."""

    def __init__(self, path: str, reason: str, *, message: str | None = None) -> None:
        super().__init__(message or f"{path}: {reason}")
        self.path = path
        self.reason = reason


_FOLDER = "a folder, not a file: not read"


def _too_large(size: str, limit: int) -> str:
    return f"{size}more than the limit of {limit} bytes (max-file-size): not read"


def read_bytes(
    path: str, *, limit: int = DEFAULT_MAX_FILE_SIZE, root: Path | None = None, follow: bool = True
) -> bytes:
    """The bytes of `path`, or `FileSkipped` when it is not a regular file (a pipe, a device: never
    waited on), larger than `limit` bytes, or (with `root`) outside `root` once symbolic links are
    followed. `follow` false: a symbolic link at the end of `path` is not followed (`FileSkipped`):
    for a file found by walking, whose folders are known to be inside the root, that is as safe as
    `root` and costs no `realpath`. `OSError`s pass through."""
    if root is not None:
        real = os.path.realpath(path)
        if not Path(real).is_relative_to(root):
            raise FileSkipped(path, f"a symbolic link out of the project root (to {real}): not read")
    info = os.stat(path) if follow else os.lstat(path)  # following links, a loop is an OSError (ELOOP)
    if stat.S_ISLNK(info.st_mode):
        raise FileSkipped(path, "a symbolic link (it was a file when the folder was walked): not read")
    if stat.S_ISDIR(info.st_mode):
        raise FileSkipped(path, _FOLDER)
    if not stat.S_ISREG(info.st_mode):
        raise FileSkipped(path, "not a regular file (a device, a pipe or a socket): not read")
    if info.st_size > limit:
        raise FileSkipped(path, _too_large(f"{info.st_size} bytes, ", limit))
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # swapped for something else since the stat
            raise FileSkipped(path, "not a regular file: not read")
        data = _read_up_to(fd, info.st_size, limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise FileSkipped(path, _too_large("", limit))
    return data


def _read_up_to(fd: int, size: int, most: int) -> bytes:
    """At most `most` bytes of the open file `fd`, asked for as `size` bytes and one more (what its status said it
    holds: one read and one that finds the end), then 64 KiB at a time if it grew since; not `most` bytes at
    once, which allocates and frees that much for every file."""
    parts: list[bytes] = []
    left, ask = most, size + 1
    while left > 0:
        part = os.read(fd, min(ask, left))
        if not part:
            break
        parts.append(part)
        left -= len(part)
        ask = 65536
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _read_stdin(limit: int) -> str:
    if sys.stdin is None:
        raise InputError("stdin is closed: there is nothing to read")
    stream = getattr(sys.stdin, "buffer", None)
    text = stream.read(limit + 1).decode("utf-8") if stream is not None else sys.stdin.read(limit + 1)
    if len(text) > limit:
        raise FileSkipped("stdin", _too_large("", limit))
    return text


def read_text(
    path: str,
    *,
    what: str = "template",
    limit: int = DEFAULT_MAX_FILE_SIZE,
    root: Path | None = None,
    decode_errors: bool = False,
    stdin: bool = True,
) -> str:
    """The text of `path` (`-` is stdin), exactly as written (line endings kept, a leading byte
    order mark dropped; a `.py` file in the encoding its coding line declares), read as
    [`read_bytes`][templating.inputs.read_bytes] does; an `InputError` saying why it cannot be
    read, or `FileSkipped`. `decode_errors`: let a UnicodeDecodeError through (linting reports an
    undecodable `.py` file as a finding); `stdin` false: `-` is a file of that name."""
    stdin = stdin and path == "-"
    try:
        if stdin:
            text = _read_stdin(limit)
        else:
            data = read_bytes(path, limit=limit, root=root)
            if path.endswith(".py"):
                from .pysource import python_text  # only for Python files: it imports ast and the linter

                text = python_text(data)
            else:
                text = data.decode("utf-8")
    except FileSkipped as exc:
        if exc.reason == _FOLDER:
            message = f"{what} path is a directory, not a file: {path}"
        else:
            message = f"stdin: {exc.reason}" if stdin else f"{what} file {path}: {exc.reason}"
        raise FileSkipped(exc.path, exc.reason, message=message) from None
    except FileNotFoundError:
        raise InputError(f"{what} file not found: {path}") from None
    except IsADirectoryError:
        raise InputError(f"{what} path is a directory, not a file: {path}") from None
    except PermissionError:
        raise InputError(f"cannot read {what} file (permission denied): {path}") from None
    except UnicodeDecodeError as exc:
        if decode_errors:
            raise
        where = "stdin" if stdin else f"{what} file"
        if not stdin and path.endswith(".py"):
            declared = exc.encoding.replace("_", "-").lower() not in ("utf-8", "utf8")
            encoding = f"valid {exc.encoding}, as its coding line declares" if declared else "valid UTF-8"
            also = "" if declared else " and declares no other encoding (PEP 263)"
            raise InputError(
                f"Python file is not {encoding}{also}: {path} (byte {exc.start}); Python itself would refuse it"
            ) from None
        raise InputError(f"{where} is not valid UTF-8: {path} (byte {exc.start})") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} from {path}: {exc.strerror or exc}") from None
    except ValueError:  # a NUL character in the name (from a setting: no command line can pass one)
        raise InputError(f"cannot read {what} from {path!r}: a file name cannot hold a NUL character") from None
    return text.removeprefix("\ufeff")


_JSON_TYPES = {dict: "an object", list: "an array", str: "a string", int: "a number", float: "a number"}


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise ValueError(f"duplicate key {key!r}")
        data[key] = value
    return data


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text} is out of range")
    return value


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read_state(path: str | None) -> dict[str, Any]:
    """State from a JSON file holding an object; empty state when no file is given.

    Strict JSON: no NaN or Infinity, no numbers out of range, no duplicate keys.
    """
    if path is None:
        return {}
    text = read_text(path, what="state")
    name = "stdin" if path == "-" else path
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys, parse_float=_finite, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise InputError(f"state is not valid JSON: {name}:{exc.lineno}:{exc.colno}: {exc.msg}") from None
    except ValueError as exc:  # a duplicate key, NaN, a number out of range, an integer too long
        reason = str(exc)
        if "integer string conversion" in reason:
            reason = f"an integer has more than {sys.get_int_max_str_digits()} digits"
        raise InputError(f"state is not valid JSON: {name}: {reason}") from None
    except RecursionError:
        raise InputError(f"state is nested too deeply to read: {name}") from None
    if not isinstance(data, dict):
        raise InputError(f"state must be a JSON object (key -> value), not {_json_type(data)}: {name}")
    return data


def write_text_whole(path: str, text: str, *, newline: str | None = None) -> None:
    """Write `text` to `path`, as an output a user names (`--output-file`, a baseline, a report, a fixed file).

    A regular file (or none yet) is written whole or not at all: a temporary file in the same folder, renamed
    over it, so a reader never sees half a file and a failed write leaves the old one as it was. The file keeps
    its permissions and its owner (root rewriting another user's file: the temporary file is given to that user
    first; where that is not allowed, the file is rewritten in place); a new one gets the usual ones. Through a
    symbolic link, the link stays and its target is written.

    Anything else at `path` (a device such as `/dev/null` or `/dev/stdout`, a FIFO, a link to one) is written
    in place and never replaced, opened without waiting: a FIFO that nothing reads is an `OSError` (`ENXIO`)
    saying so. Raises `OSError` (with its `strerror`), `IsADirectoryError` for a folder."""
    try:
        info: os.stat_result | None = os.stat(path)  # after links
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "it is a folder", path)
    if info is not None and not stat.S_ISREG(info.st_mode):
        if _write_in_place(path, text, newline, regular=False):
            return
        info = os.stat(path)  # a regular file now (it was swapped since the stat): written whole
    target = os.path.realpath(path) if os.path.islink(path) else path  # the link kept, its target replaced
    _replace_whole(target, text, newline, info)


def _write_in_place(path: str, text: str, newline: str | None, *, regular: bool) -> bool:
    """Write `text` into what is at `path` (a device, a FIFO; `regular`: a file whose owner the replacement
    could not keep, truncated after). Opened without waiting on a FIFO; False when it turned out to be a
    regular file and `regular` is false (the caller writes it whole instead)."""
    flags = os.O_WRONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)  # never O_CREAT: what is there is written, nothing is made
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO no process has open for reading (opening it would wait for one)
            socket = stat.S_ISSOCK(os.stat(path).st_mode)  # or a socket, which no open() reaches
            why = (
                "a socket, which cannot be opened as a file"
                if socket
                else "a FIFO that nothing reads (start its reader first)"
            )
            raise OSError(errno.ENXIO, f"{why}: not written", path) from None
        raise
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode) and not regular:
            return False
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)  # the open did not wait; a reader that is there is waited on, as a shell does
        with os.fdopen(fd, "w", encoding="utf-8", newline=newline, closefd=False) as out:
            out.write(text)
            out.flush()
            if regular:
                os.ftruncate(fd, os.lseek(fd, 0, os.SEEK_CUR))
    finally:
        os.close(fd)
    return True


def _replace_whole(path: str, text: str, newline: str | None, info: os.stat_result | None) -> None:
    """`text` into a temporary file beside `path`, given the mode and owner of the file there (`info`), renamed
    over it; rewritten in place when the owner cannot be kept (another user's file, not running as root)."""
    import tempfile

    folder = os.path.dirname(os.path.abspath(path))
    if info is not None:
        mode = stat.S_IMODE(info.st_mode)
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    temp = None
    try:
        handle, temp = tempfile.mkstemp(prefix=".templating-", suffix=".tmp", dir=folder)
        with os.fdopen(handle, "w", encoding="utf-8", newline=newline) as out:
            out.write(text)
        if info is not None and hasattr(os, "chown"):
            mine = os.stat(temp)
            if (mine.st_uid, mine.st_gid) != (info.st_uid, info.st_gid):
                try:
                    os.chown(temp, info.st_uid, info.st_gid)
                except PermissionError:  # another user's file we may write but not give away: edited in place
                    os.unlink(temp)
                    temp = None
                    _write_in_place(path, text, newline, regular=True)
                    return
        os.chmod(temp, mode)  # after the owner: a chown clears the set-user-ID bits
        os.replace(temp, path)
    except BaseException:  # an OSError, a text that is not UTF-8, an interrupt: no temporary file left
        if temp is not None and os.path.exists(temp):
            os.unlink(temp)
        raise
