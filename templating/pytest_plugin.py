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
        def text(data: Any) -> str:
            return data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data)

        return super().diff_lines(text(serialized_data), text(snapshot_data))


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

    def text(data: Any) -> str:
        return data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data or "")

    if result.recalled_data is None:
        lines.append(f"Snapshot '{result.snapshot_name}' does not exist!")
    old, new = text(result.recalled_data), text(result.asserted_data)
    diff = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), "snapshot", "received", n=2
    )
    lines.extend(line.rstrip("\n") if line.endswith("\n") else f"{line}  (no newline at end)" for line in diff)
    return lines


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
