"""A baseline: today's findings recorded in a file, so that a run reports only the new ones.

Each finding is recorded by its file (relative to the project's root, `/`-separated), its rule, and
the text it flags (the source text its span covers: `{plan}`; for a finding about a whole file or run,
its message), with how many findings share these three. No line numbers: lines inserted above a
finding, or edits elsewhere in the file, leave it baselined. A run with the baseline drops, for each
entry, as many findings as it counts, in file order; one more identical finding (a second `{plan}`
in the file) is reported. Entries nothing matches any more are counted, so the file can be shrunk by
writing it again.

The file is JSON, sorted and indented (one finding per entry, stable between runs: diff-friendly):

```json
{"version": 1, "findings": [{"path": "agent.py", "code": "T014", "text": "{plan}", "count": 1}]}
```

It is written whole or not at all (a temporary file in the same folder, renamed over it), and only when it
can be read back: within the size a baseline is read with (the project's `max-file-size`), giving back
exactly what it records. A file that is not such a baseline, or too large, is a `BaselineError` naming it
and what is wrong.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import TemplatingError
from ..inputs import DEFAULT_MAX_FILE_SIZE, FileSkipped, InputError, read_text, write_text_whole
from .registry import Diagnostic

if TYPE_CHECKING:
    from .result import LintResult

__all__ = ["Baseline", "BaselineError", "apply_baseline", "dump_baseline", "load_baseline", "write_baseline"]

VERSION = 1
_FIELDS = ("path", "code", "text", "count")
SETTING = "'max-file-size' in [tool.templating]"  # what sets the limit a baseline is read with

Key = tuple[str, str, str]  # path, code, flagged text


class BaselineError(TemplatingError):
    """A baseline file that cannot be read or is not a baseline: the message names it and says what is wrong."""


@dataclass(frozen=True, slots=True)
class Baseline:
    """The findings a baseline records: how many of each (path, code, flagged text)."""

    counts: dict[Key, int]

    @property
    def total(self) -> int:
        """How many findings it records."""
        return sum(self.counts.values())


def _project_path(path: str | None, root: Path) -> str:
    """`path` (as a finding shows it: relative to the current folder, or absolute) relative to `root`."""
    if not path:
        return ""
    if path == "-":
        return path
    absolute = Path(os.path.abspath(path))
    for candidate in (absolute, absolute.resolve()):
        if candidate.is_relative_to(root):
            return candidate.relative_to(root).as_posix()
    return absolute.as_posix()


def key_of(diag: Diagnostic, result: LintResult, paths: dict[str | None, str] | None = None) -> Key:
    """What a baseline records of `diag`: its project-relative file, code, and the text it flags.
    `paths`: each path as the project names it, filled as paths are met (one look-up per file)."""
    source = result.sources.get(diag.path or "")
    # a finding about a whole file (skipped) or a whole run (T011): its message says which
    text = source[diag.span.start : diag.span.end] if diag.span is not None and source is not None else diag.message
    if paths is None:
        return _project_path(diag.path, result.root), diag.code, text
    where = paths.get(diag.path)
    if where is None:
        where = paths[diag.path] = _project_path(diag.path, result.root)
    return where, diag.code, text


def baseline_of(result: LintResult) -> Baseline:
    """The baseline recording every finding of `result`."""
    paths: dict[str | None, str] = {}
    return Baseline(dict(Counter(key_of(d, result, paths) for d in result.diagnostics)))


def dump_baseline(baseline: Baseline) -> str:
    """The baseline as its file's text: sorted entries, one per (path, code, text), and a final newline.
    Text as written (UTF-8), unless a name holds bytes that are not UTF-8 (lone surrogates): then escaped
    (`\\udcff`), so that the file is UTF-8 and reads back as the same names."""
    entries = [
        {"path": path, "code": code, "text": text, "count": count}
        for (path, code, text), count in sorted(baseline.counts.items())
    ]
    data = {"version": VERSION, "findings": entries}
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(data, indent=2) + "\n"
    return text


def write_baseline(
    path: str | Path, result: LintResult, *, limit: int = DEFAULT_MAX_FILE_SIZE, setting: str = SETTING
) -> Baseline:
    """Record `result`'s findings in the file `path`, whole or not at all; returns what was recorded.
    Refused (`BaselineError`, nothing written) when `load_baseline` with the same `limit` could not read
    it back: larger than `limit` bytes (`setting`: what sets it, for the message)."""
    name = str(path)
    baseline = baseline_of(result)
    text = dump_baseline(baseline)
    size = len(text.encode("utf-8"))
    if size > limit:
        raise BaselineError(
            f"cannot write the baseline {name}: it would be {size} bytes, more than the limit of {limit} bytes a "
            f"baseline is read with ({setting}): raise it to write this baseline"
        )
    if Baseline(_parsed(json.loads(text), name)) != baseline:  # pragma: no cover - dump_baseline's promise
        raise BaselineError(f"cannot write the baseline {name}: it would not read back as written")
    _write_atomically(name, text)
    return baseline


def _write_atomically(path: str, text: str) -> None:
    try:
        write_text_whole(path, text, newline="\n")
    except OSError as exc:
        raise BaselineError(f"cannot write the baseline {path}: {exc.strerror or exc}") from None


def load_baseline(path: str | Path, *, limit: int = DEFAULT_MAX_FILE_SIZE, setting: str = SETTING) -> Baseline:
    """The baseline in the file `path`, read if at most `limit` bytes (the project's `max-file-size`;
    `setting`: what sets it, for the message); a `BaselineError` naming the file when it cannot be read
    or is not a baseline (not JSON, nested too deeply, another version, an entry without its fields or
    with a wrong one)."""
    name = str(path)
    try:
        text = read_text(name, what="baseline", limit=limit, stdin=False)
    except FileSkipped as exc:
        if "more than the limit" not in exc.reason:
            raise BaselineError(f"cannot read the baseline {name}: {exc.message.removeprefix(name + ': ')}") from None
        try:
            size = f"it is {os.stat(name).st_size} bytes, more"
        except OSError:
            size = "it is more"
        raise BaselineError(
            f"cannot read the baseline {name}: {size} than the limit of {limit} bytes ({setting}): raise it to "
            "read this baseline"
        ) from None
    except InputError as exc:
        raise BaselineError(f"cannot read the baseline {name}: {exc.message.removeprefix(name + ': ')}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(
            f"baseline {name} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:
        raise BaselineError(f"baseline {name} is nested too deeply to read") from None
    except ValueError:  # an integer of more digits than Python converts
        raise BaselineError(
            f"baseline {name} is not valid JSON: a number has more than {sys.get_int_max_str_digits()} digits"
        ) from None
    return Baseline(_parsed(data, name))


def _parsed(data: Any, name: str) -> dict[Key, int]:
    def bad(what: str) -> BaselineError:
        return BaselineError(
            f"baseline {name} is not a templating baseline: {what}",
            help="write it again with `templating lint --write-baseline FILE`",
        )

    if not isinstance(data, dict):
        raise bad(f"expected an object with 'version' and 'findings', found {type(data).__name__}")
    unknown = sorted(set(data) - {"version", "findings"})
    if unknown:
        raise bad(f"unknown field {unknown[0]!r} (expected 'version' and 'findings')")
    if data.get("version") != VERSION:
        raise bad(f"'version' is {data.get('version')!r}, this templating reads version {VERSION}")
    entries = data.get("findings")
    if not isinstance(entries, list):
        raise bad("'findings' must be a list")
    counts: dict[Key, int] = {}
    for number, entry in enumerate(entries, 1):
        where = f"finding {number}"
        if not isinstance(entry, dict):
            raise bad(f"{where} must be an object")
        missing = [f for f in _FIELDS if f not in entry]
        extra = sorted(set(entry) - set(_FIELDS))
        if missing or extra:
            problem = f"lacks {missing[0]!r}" if missing else f"has an unknown field {extra[0]!r}"
            raise bad(f"{where} {problem} (each has {', '.join(_FIELDS)})")
        for field in ("path", "code", "text"):
            if not isinstance(entry[field], str):
                raise bad(f"{where}: {field!r} must be a string")
        count = entry["count"]
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise bad(f"{where}: 'count' must be a whole number of at least 1, not {count!r}")
        key = (entry["path"], entry["code"], entry["text"])
        if key in counts:
            raise bad(f"{where} repeats an earlier entry (same path, code and text)")
        counts[key] = count
    return counts


@dataclass(frozen=True, slots=True)
class Applied:
    """What a baseline did to a run: how many findings it dropped (`baselined`), and how many of the
    findings it records were not found (`stale`: fixed, or their file not linted)."""

    baselined: int
    stale: int


def apply_baseline(result: LintResult, baseline: Baseline) -> Applied:
    """Drop from `result` the findings `baseline` records (each entry at most `count` of them, in file
    order); the others stay, and decide the exit code. Entries of files this run did not lint are not
    counted as stale."""
    left = dict(baseline.counts)
    kept: list[Diagnostic] = []
    dropped: list[Diagnostic] = []
    paths: dict[str | None, str] = {}
    for diag in result.diagnostics:
        key = key_of(diag, result, paths)
        if left.get(key, 0) > 0:
            left[key] -= 1
            dropped.append(diag)
        else:
            kept.append(diag)
    stale_files = {path for (path, _, _), n in left.items() if n}
    linted = {paths.get(p) or _project_path(p, result.root) for p in result.files} if stale_files else set()
    stale = sum(n for (path, _, _), n in left.items() if path in linted or not path)
    result.diagnostics = kept
    # the run's findings (T011) are among `diagnostics`, matched by value: a run read from the cache, or with
    # `severity` given, holds equal copies, not the same objects
    gone = Counter(dropped)
    left_run = []
    for diag in result.run_findings:
        if gone[diag] > 0:
            gone[diag] -= 1
        else:
            left_run.append(diag)
    result.run_findings = left_run
    result.baselined, result.stale = len(dropped), stale
    return Applied(len(dropped), stale)
