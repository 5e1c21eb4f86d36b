"""A pytest plugin (entry point `pytest11`): snapshot tests of prompts, built on syrupy.

`assert prompt_snapshot(template, state) == snapshot` stores the rendered prompt, byte for byte
as the model sees it, in one plain-text file per test; `assert lint_snapshot(template) == snapshot`
does the same for a lint report. Files go where syrupy's single-file convention puts them
(`__snapshots__/<test module>/<test name>.txt`) unless the ini option `templating_snapshot_dir`
names a folder (relative to the rootdir): then `<folder>/<test file's path from the rootdir, without
.py>/<test name>.txt`, so `tests/a/test_m.py` and `tests/b/test_m.py` keep apart.

The value goes on the left: `snapshot == prompt_snapshot(...)` would let syrupy's default (amber)
serializer store it in an `.ambr` file, so that fails with a TypeError instead.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Generator, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from .pytest_entry import EXTRA_MISSING

try:
    from syrupy.assertion import SnapshotAssertion
    from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
    from syrupy.location import PyTestLocation
except ModuleNotFoundError as exc:  # the `pytest` extra is not installed
    raise ModuleNotFoundError(EXTRA_MISSING, name=exc.name) from exc

from .errors import excerpt
from .lint import lint
from .render import Formatter, Missing
from .template import Template

__all__ = ["PromptTextExtension", "SnapshotText", "extension_for"]

_INI = "templating_snapshot_dir"


class PromptTextExtension(SingleFileSnapshotExtension):
    """One UTF-8 `.txt` file per snapshot, written and compared byte for byte (no newline translation)."""

    _write_mode = WriteMode.BINARY
    file_extension = "txt"

    def serialize(self, data: Any, **kwargs: Any) -> bytes:
        if isinstance(data, SnapshotText):
            data = data.text
        if not isinstance(data, str):
            raise TypeError(f"prompt snapshots take str, not {type(data).__name__}")
        return data.encode("utf-8")

    def diff_lines(self, serialized_data: Any, snapshot_data: Any) -> Iterator[str]:
        """The text diff of [`marked_diff`][templating.pytest_plugin.marked_diff]: invisible changes shown."""
        return iter(marked_diff(_text(snapshot_data), _text(serialized_data)))


@cache
def extension_for(directory: str, rootdir: str = "") -> type[PromptTextExtension]:
    """The extension class that stores snapshots under `directory/<test file>/` (`""`: syrupy's default),
    where `<test file>` is the test module's path relative to `rootdir`, without its suffix
    (`tests/a/test_m`); a test file outside `rootdir` uses its name alone."""
    if not directory:
        return PromptTextExtension
    root = Path(directory)
    base = Path(rootdir) if rootdir else None

    class _Located(PromptTextExtension):
        @classmethod
        def dirname(cls, *, test_location: PyTestLocation) -> str:
            path = Path(test_location.filepath)
            relative = path.relative_to(base) if base is not None and path.is_relative_to(base) else Path(path.name)
            return str(root / relative.with_suffix(""))

    _Located.__name__ = _Located.__qualname__ = "PromptTextExtension"
    return _Located


_WRONG_SIDE = (
    "prompt_snapshot(...) and lint_snapshot(...) go on the left: write `assert prompt_snapshot(...) == snapshot`. "
    "With `snapshot == prompt_snapshot(...)` syrupy's default serializer would store an .ambr file "
    "instead of the plain-text prompt"
)


class SnapshotText:
    """Text to compare with syrupy's `snapshot` fixture: `== snapshot` stores it as a plain-text file."""

    __slots__ = ("_extension", "_registered", "text")

    def __init__(self, text: str, extension: type[PromptTextExtension], registered: set[int]) -> None:
        self.text = text
        self._extension = extension
        self._registered = registered

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SnapshotAssertion):
            if id(other) not in self._registered:
                # A sibling assertion with this extension, so syrupy discovers (and reports unused) its files.
                self._registered.add(id(other))
                other.use_extension(self._extension)
            return other(extension_class=self._extension) == self.text
        if isinstance(other, SnapshotText):
            return other.text == self.text
        if isinstance(other, str):
            return other == self.text
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    @property
    def extension(self) -> type[PromptTextExtension]:
        """The syrupy extension class this text is stored with."""
        return self._extension

    def __str__(self) -> str:
        return self.text

    # No __repr__ of its own: syrupy's amber serializer stores repr() of objects that have one, and
    # otherwise reads their public attributes, which reaches this one and fails the comparison.
    @property
    def wrong_side(self) -> str:
        """Always raises TypeError: what `snapshot == prompt_snapshot(...)` hits when syrupy's default
        serializer reads this object, so that reversed comparison fails instead of writing an .ambr file."""
        raise TypeError(_WRONG_SIDE)


def lint_report(template: str | Template, *, schema: Any = None, **options: Any) -> str:
    """A lint report as plain text: one block per finding (`line:col: CODE message`, source, caret)."""
    tpl = template if isinstance(template, Template) else Template(template)
    lines: list[str] = []
    for diag in lint(tpl, schema=schema, **options):
        where = f"{diag.span.line}:{diag.span.column}: " if diag.span else ""
        lines.append(f"{where}{diag.code} {diag.severity}: {diag.message}")
        if diag.span is not None:
            lines.append(excerpt(tpl.source, diag.span))
    return "\n".join(lines) + "\n" if lines else "no findings\n"


@pytest.hookimpl(wrapper=True)
def pytest_assertrepr_compare(
    config: pytest.Config, op: str, left: Any, right: Any
) -> Generator[None, list[list[str] | None], list[list[str] | None]]:
    """A failed `prompt_snapshot(...) == snapshot` shows a line diff of the text, ahead of syrupy's
    own explanation (which would show bytes)."""
    explanations = yield
    if isinstance(left, SnapshotText) and isinstance(right, SnapshotAssertion) and right.num_executions:
        return [_text_diff(op, left, right), *explanations]
    return explanations


def _text_diff(op: str, left: SnapshotText, right: SnapshotAssertion) -> list[str]:
    result = right.executions[right.num_executions - 1]
    lines = [f"[+ received] {op} [- {right.name}]"]
    if result.exception is not None:
        return [*lines, f"{type(result.exception).__name__}: {result.exception}"]

    if result.recalled_data is None:
        lines.append(f"Snapshot '{result.snapshot_name}' does not exist!")
    lines.extend(marked_diff(_text(result.recalled_data), _text(result.asserted_data)))
    return lines


def _text(data: Any) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data or "")


# --- diffs that show what cannot be seen ----------------------------------------------------

_LEGEND = "· a space at the start or end of a line, → a tab, \\r a carriage return, <U+XXXX> any other"
_NAMED = {"\t": "→", "\r": "\\r"}
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"})
# Letters and marks that draw nothing: variation selectors, the grapheme joiner, Hangul fillers, braille blank.
_HIDDEN_OTHERS = frozenset("\u034f\u115f\u1160\u3164\uffa0\u2800" + "".join(map(chr, range(0xFE00, 0xFE10))))


def _hidden(ch: str) -> bool:
    """A character a terminal shows as nothing, or as a plain space though it is not one: controls,
    format characters (zero-width ones, bidi marks, a BOM), every space but the ASCII one."""
    if ch.isascii():
        return not ch.isprintable()
    return unicodedata.category(ch) in _HIDDEN_CATEGORIES or ch in _HIDDEN_OTHERS


def _shown(text: str) -> str:
    return "".join(_NAMED.get(ch) or (f"<U+{ord(ch):04X}>" if _hidden(ch) else ch) for ch in text)


def _marked(line: str) -> str:
    """A changed line with its invisible characters written out, and the spaces at its start and end as `·`."""
    core = line.lstrip(" ")
    stripped = core.rstrip(" ")
    return "·" * (len(line) - len(core)) + _shown(stripped) + "·" * (len(core) - len(stripped))


def _looks(line: str) -> str:
    """Roughly what `line` looks like on screen: hidden characters gone, blanks as single spaces, none at
    either end. Two different lines that look alike differ only in what cannot be seen."""
    kept = "".join(" " if ch == "\t" or unicodedata.category(ch) == "Zs" else "" if _hidden(ch) else ch for ch in line)
    return " ".join(kept.split())


def _lines(text: str) -> list[str]:
    """`text` cut at each `\n` only (a `\r`, a form feed or U+2028 stays inside its line, to be shown)."""
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def marked_diff(old: str, new: str) -> list[str]:
    """A unified diff of snapshot text `old` against received text `new` that shows what a terminal
    does not: changed lines have their invisible characters written out (the legend says how), and a
    line above the diff says how many lines differ only in such characters (whitespace, control,
    zero-width, no-break, line endings)."""
    old_lines, new_lines = _lines(old), _lines(new)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    unseen = 0
    marked = False
    body: list[str] = []
    for group in matcher.get_grouped_opcodes(2):
        first, last = group[0], group[-1]
        body.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                body.extend(" " + _shown(line.removesuffix("\n")) + _end(line) for line in old_lines[i1:i2])
                continue
            removed, added = old_lines[i1:i2], new_lines[j1:j2]
            unseen += sum(_looks(a) == _looks(b) for a, b in zip(removed, added, strict=False))
            for sign, lines in (("-", removed), ("+", added)):
                for line in lines:
                    text = line.removesuffix("\n")
                    shown = _marked(text)
                    marked = marked or shown != text
                    body.append(sign + shown + _end(line))
    if not body:
        return []
    header = ["--- snapshot", "+++ received"]
    if unseen:
        noun = "line differs" if unseen == 1 else "lines differ"
        header[:0] = [
            f"{unseen} {noun} only in characters you cannot see (whitespace, control, zero-width, no-break, "
            "line endings); below they are marked:",
            f"    {_LEGEND}",
        ]
    elif marked:
        header[:0] = ["invisible characters in changed lines are marked:", f"    {_LEGEND}"]
    return [*header, *body]


def _end(line: str) -> str:
    return "" if line.endswith("\n") else "  (no newline at end)"


def _range(start: int, stop: int) -> str:
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


# --- snapshot names that would share a file -------------------------------------------------

_SHARED_NAME = pytest.StashKey[str]()
_FIXTURES = frozenset({"prompt_snapshot", "lint_snapshot"})


@pytest.hookimpl(tryfirst=True)  # before -k or -m deselect anything: a test not run still owns its file
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests whose snapshot files would be one file (ids that differ only in characters a file name
    drops, or past the length it is cut at) fail at setup, naming each other, before anything is written."""
    extension = _extension(config)
    owners: dict[tuple[str, str], list[pytest.Item]] = {}
    for item in items:
        if not isinstance(item, pytest.Function) or not _FIXTURES.intersection(item.fixturenames):
            continue
        location = PyTestLocation(item)
        where = (extension.dirname(test_location=location), extension.get_snapshot_name(test_location=location))
        owners.setdefault(where, []).append(item)
    for (_, name), group in owners.items():
        if len(group) < 2:
            continue
        tests = ", ".join(item.nodeid for item in group)
        message = (
            f"snapshot name collision: {tests} would share one snapshot file, {name}.{extension.file_extension}: "
            'a snapshot file name drops \\ / ? * : | " < > and control characters, and is cut at '
            f"{extension._max_stem_length()} characters. Give these tests ids that still differ after that "
            "(pytest.param(..., id=...) or ids=[...]); nothing was written for them"
        )
        for item in group:
            item.stash[_SHARED_NAME] = message


def pytest_runtest_setup(item: pytest.Item) -> None:
    message = item.stash.get(_SHARED_NAME, None)
    if message is not None:
        pytest.fail(message, pytrace=False)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        _INI,
        help="templating: folder (relative to rootdir) for prompt/lint snapshots; default: syrupy's __snapshots__",
        default="",
    )


def _extension(config: pytest.Config) -> type[PromptTextExtension]:
    value = str(config.getini(_INI) or "")
    if not value:
        return extension_for("")
    return extension_for(str(Path(str(config.rootpath), value)), str(config.rootpath))


@pytest.fixture
def prompt_snapshot(request: pytest.FixtureRequest) -> Any:
    """`prompt_snapshot(template, state, missing=..., formatter=...)`: the rendered prompt, to compare
    `== snapshot`. Rendering is strict by default: a missing key fails the test."""
    extension = _extension(request.config)
    registered: set[int] = set()

    def render(
        template: str | Template, state: Any, *, missing: Missing = "error", formatter: Formatter | None = None
    ) -> SnapshotText:
        tpl = template if isinstance(template, Template) else Template(template)
        return SnapshotText(tpl.render(state, missing=missing, formatter=formatter), extension, registered)

    return render


@pytest.fixture
def lint_snapshot(request: pytest.FixtureRequest) -> Any:
    """`lint_snapshot(template, schema=..., select=..., ignore=...)`: the lint report, to compare `== snapshot`."""
    extension = _extension(request.config)
    registered: set[int] = set()

    def report(template: str | Template, *, schema: Any = None, **options: Any) -> SnapshotText:
        return SnapshotText(lint_report(template, schema=schema, **options), extension, registered)

    return report
