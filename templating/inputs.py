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
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped for something else since the stat
            raise FileSkipped(path, "not a regular file: not read")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise FileSkipped(path, _too_large("", limit))
    return data


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
    """Write `text` to `path` whole or not at all: a temporary file in the same folder, renamed over
    `path`, so a reader never sees half a file and a failed write leaves the old one as it was (a file
    already there keeps its permissions; a new one gets the usual ones). Raises `OSError` (with its
    `strerror`), `IsADirectoryError` for a folder."""
    import tempfile

    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "it is a folder", path)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    temp = None
    try:
        handle, temp = tempfile.mkstemp(prefix=".templating-", suffix=".tmp", dir=folder)
        with os.fdopen(handle, "w", encoding="utf-8", newline=newline) as out:
            out.write(text)
        os.chmod(temp, mode)
        os.replace(temp, path)
    except OSError:
        if temp is not None and os.path.exists(temp):
            os.unlink(temp)
        raise
