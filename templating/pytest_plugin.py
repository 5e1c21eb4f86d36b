"""A pytest plugin (entry point `pytest11`): snapshot tests of prompts, built on syrupy.

`assert prompt_snapshot(template, state) == snapshot` stores the rendered prompt, byte for byte
as the model sees it, in one plain-text file per test; `assert lint_snapshot(template) == snapshot`
does the same for a lint report. Files go where syrupy's single-file convention puts them
(`__snapshots__/<test module>/<test name>.prompt.snap`) unless the ini option `templating_snapshot_dir`
names a folder inside the rootdir: then `<folder>/<test file's path from the rootdir, without
.py>/<test name>.prompt.snap`, so `tests/a/test_m.py` and `tests/b/test_m.py` keep apart.

The suffix is one pytest never collects (a `test*.txt` file is a doctest file to pytest). A snapshot
is read only as a regular file inside the rootdir and no larger than
[`DEFAULT_MAX_FILE_SIZE`][templating.inputs.DEFAULT_MAX_FILE_SIZE] (through
[`read_bytes`][templating.inputs.read_bytes]), and written only inside the rootdir, never through a
symbolic link.

The value goes on the left: `snapshot == prompt_snapshot(...)` would let syrupy's default (amber)
serializer store it in an `.ambr` file, so that fails with a TypeError instead.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Generator, Iterator
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

import pytest

from .pytest_entry import EXTRA_MISSING

try:
    from syrupy.assertion import SnapshotAssertion
    from syrupy.data import SnapshotCollection
    from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
    from syrupy.location import PyTestLocation
except ModuleNotFoundError as exc:  # the `pytest` extra is not installed
    raise ModuleNotFoundError(EXTRA_MISSING, name=exc.name) from exc

from .errors import TemplatingError, excerpt
from .inputs import DEFAULT_MAX_FILE_SIZE, FileSkipped, read_bytes
from .linter import lint
from .renderer import Formatter, Missing
from .snapshot_diff import marked_diff
from .template import Template

__all__ = [
    "PreviewText",
    "PromptTextExtension",
    "SnapshotFileError",
    "SnapshotText",
    "extension_for",
    "marked_diff",
]

_INI = "templating_snapshot_dir"


OLD_SUFFIX = ".txt"  # the suffix of snapshot files up to 0.1: pytest collects `test*.txt` as doctests
_OLD_STEM_LENGTH = 255 - len(OLD_SUFFIX)


class SnapshotFileError(TemplatingError):
    """A snapshot file that is not read or not written: `path` names it, the message says why and what to do."""

    def __init__(self, path: str | Path, message: str) -> None:
        super().__init__(message)
        self.path = str(path)


class PromptTextExtension(SingleFileSnapshotExtension):
    """One UTF-8 `.prompt.snap` file per snapshot, written and compared byte for byte (no newline translation).

    Read with [`read_bytes`][templating.inputs.read_bytes] (a regular file inside the rootdir, at most
    `max_size` bytes); written only inside the rootdir and never through a symbolic link. A snapshot
    still under its old `.txt` name fails its test, naming both files, or with `--snapshot-update` is
    renamed. [`extension_for`][templating.pytest_plugin.extension_for] makes the subclass a run uses.
    """

    _write_mode = WriteMode.BINARY
    file_extension = "prompt.snap"
    rootdir: ClassVar[Path | None] = None  # resolved; None: no root (nothing is refused for its place)
    rootpath: ClassVar[Path | None] = None  # as pytest gives it: messages name files relative to it
    update: ClassVar[bool] = False  # --snapshot-update: rename old-named snapshots instead of failing
    max_size: ClassVar[int] = DEFAULT_MAX_FILE_SIZE

    def serialize(self, data: Any, **kwargs: Any) -> bytes:
        if isinstance(data, SnapshotText):
            data = data.text
        if not isinstance(data, str):
            raise TypeError(f"prompt snapshots take str, not {type(data).__name__}")
        encoded = data.encode("utf-8")
        if len(encoded) > self.max_size:
            raise ValueError(
                f"a snapshot holds at most {self.max_size} bytes, the limit it is read back with; "
                f"this text has {len(encoded)}"
            )
        return encoded

    def diff_lines(self, serialized_data: Any, snapshot_data: Any) -> Iterator[str]:
        """The text diff of [`marked_diff`][templating.pytest_plugin.marked_diff]: invisible changes shown."""
        return iter(marked_diff(_text(snapshot_data), _text(serialized_data)))

    def read_snapshot_data_from_location(
        self, *, snapshot_location: str, snapshot_name: str, session_id: str
    ) -> bytes | None:
        self._check_inside(snapshot_location)
        try:
            return read_bytes(snapshot_location, limit=self.max_size, root=self.rootdir)
        except FileNotFoundError:
            pass
        except FileSkipped as exc:
            raise SnapshotFileError(
                snapshot_location, f"snapshot file {self._name(snapshot_location)}: {exc.reason}; remove or replace it"
            ) from None
        except OSError as exc:
            raise SnapshotFileError(
                snapshot_location, f"cannot read snapshot file {self._name(snapshot_location)}: {exc.strerror or exc}"
            ) from None
        old = _old_location(Path(snapshot_location))
        if old is None:
            return None
        if not self.update:
            # Short, the paths once each: pytest cuts a failure report after 640 characters (without -vv).
            raise SnapshotFileError(
                snapshot_location,
                f"snapshot file {self._name(snapshot_location)} does not exist, but {self._name(str(old))} does: "
                f"snapshots were renamed from {OLD_SUFFIX} (a doctest file to pytest) to .{self.file_extension} after "
                "templating 0.1. Run `pytest --snapshot-update` to rename them, or rename them yourself (git mv)",
            )
        self._check_writable(snapshot_location)
        self._check_writable(str(old))
        if os.path.lexists(snapshot_location):  # appeared since the read above
            raise SnapshotFileError(
                snapshot_location, f"snapshot file {self._name(snapshot_location)} appeared while renaming"
            )
        os.rename(old, snapshot_location)
        return self.read_snapshot_data_from_location(
            snapshot_location=snapshot_location, snapshot_name=snapshot_name, session_id=session_id
        )

    @classmethod
    def write_snapshot(
        cls,
        *,
        snapshot_location: str,
        snapshots: list[tuple[Any, PyTestLocation, Any]],
        name_order: dict[str, int] | None = None,
    ) -> None:
        # Checked before syrupy creates the snapshot's folders.
        cls._check_writable(snapshot_location)
        super().write_snapshot(snapshot_location=snapshot_location, snapshots=snapshots, name_order=name_order)

    @classmethod
    def write_snapshot_collection(
        cls, *, snapshot_collection: SnapshotCollection, name_order: dict[str, int] | None = None
    ) -> None:
        location = snapshot_collection.location
        data = next(iter(snapshot_collection)).data
        if not isinstance(data, bytes):
            raise TypeError(f"prompt snapshots are written as bytes, not {type(data).__name__}")
        cls._check_writable(location)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
        try:
            fd = os.open(location, flags | getattr(os, "O_NONBLOCK", 0), 0o666)
        except OSError as exc:  # ELOOP: a link put in its place since the check
            message = f"cannot write snapshot file {cls._name(location)}: {exc.strerror or exc}"
            raise SnapshotFileError(location, message) from None
        with os.fdopen(fd, "wb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                message = f"snapshot file {cls._name(location)} is not a regular file: not written"
                raise SnapshotFileError(location, message)
            handle.write(data)

    def delete_snapshots(self, *, snapshot_location: str, snapshot_names: set[str]) -> None:
        # An unused snapshot: deleted only inside the rootdir (a link itself, never what it points to).
        if self.rootdir is None or Path(os.path.realpath(Path(snapshot_location).parent)).is_relative_to(self.rootdir):
            Path(snapshot_location).unlink()

    @classmethod
    def _check_writable(cls, location: str) -> None:
        """A `SnapshotFileError` unless `location` can be written: not a symbolic link, inside the rootdir."""
        path = Path(location)
        if path.is_symlink():
            raise SnapshotFileError(
                location,
                f"snapshot file {cls._name(location)} is a symbolic link (to {os.readlink(path)}): snapshots are never "
                "written through one; replace it with a regular file (remove it and run --snapshot-update)",
            )
        cls._check_inside(location)
        real = Path(os.path.realpath(path))
        if cls.rootdir is not None and not real.is_relative_to(cls.rootdir):
            raise SnapshotFileError(
                location,
                f"snapshot file {cls._name(location)} is outside the rootdir {cls.rootdir} (at {real}): "
                "snapshots are written only inside it",
            )
        if path.exists() and not path.is_file():
            raise SnapshotFileError(location, f"snapshot file {cls._name(location)} is not a regular file: not written")

    @classmethod
    def _check_inside(cls, location: str) -> None:
        """A `SnapshotFileError` when `location` is outside the rootdir by its path alone (a test file
        outside the rootdir keeps its `__snapshots__` beside it); a link out is refused when read."""
        given = cls.rootpath
        if given is not None and not Path(os.path.abspath(location)).is_relative_to(os.path.abspath(given)):
            raise SnapshotFileError(
                location,
                f"snapshot file {location} is outside the rootdir {given}: snapshots are read and written only "
                "inside it (run pytest with a rootdir that holds the tests, --rootdir)",
            )

    @classmethod
    def _name(cls, location: str) -> str:
        """`location` as a message names it: relative to the rootdir when inside it."""
        given = cls.rootpath
        if given is not None and Path(location).is_relative_to(given):
            return str(Path(location).relative_to(given))
        return location


def _old_location(path: Path) -> Path | None:
    """The file of the same snapshot under its old name (`<name>.txt`, the name cut at 251 characters
    instead of 243), when there is one."""
    stem = path.name.removesuffix("." + PromptTextExtension.file_extension)
    if len(stem) < PromptTextExtension._max_stem_length():
        old = path.with_name(stem + OLD_SUFFIX)
        return old if os.path.lexists(old) else None
    try:  # a cut name: the old file's name starts with the new one's and is at most 251 characters long
        found = [
            path.parent / name
            for name in os.listdir(path.parent)
            if name.startswith(stem) and name.endswith(OLD_SUFFIX) and len(name) <= _OLD_STEM_LENGTH + len(OLD_SUFFIX)
        ]
    except OSError:
        return None
    return found[0] if len(found) == 1 else None


@cache
def extension_for(directory: str, rootdir: str = "", *, update: bool = False) -> type[PromptTextExtension]:
    """The extension class that stores snapshots under `directory/<test file>/` (`""`: syrupy's default,
    `__snapshots__/` beside the test), where `<test file>` is the test module's path relative to `rootdir`,
    without its suffix (`tests/a/test_m`); a test file outside `rootdir` uses its name alone. Snapshots are
    read and written only inside `rootdir` (when given). `update`: `--snapshot-update` was given, so a
    snapshot under its old name is renamed rather than failing its test."""
    if not directory and not rootdir and not update:
        return PromptTextExtension
    root = Path(directory) if directory else None
    base = Path(rootdir) if rootdir else None

    class _Located(PromptTextExtension):
        @classmethod
        def dirname(cls, *, test_location: PyTestLocation) -> str:
            if root is None:
                return super().dirname(test_location=test_location)
            path = Path(test_location.filepath)
            relative = path.relative_to(base) if base is not None and path.is_relative_to(base) else Path(path.name)
            return str(root / relative.with_suffix(""))

    _Located.rootdir = Path(os.path.realpath(rootdir)) if rootdir else None
    _Located.rootpath = Path(rootdir) if rootdir else None
    _Located.update = update
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


# --- snapshot names that would share a file -------------------------------------------------

_SHARED_NAME = pytest.StashKey[str]()
_FIXTURES = frozenset({"prompt_snapshot", "lint_snapshot", "preview_snapshot"})


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
    parser.addini(
        _MAX_LOSS_INI,
        help="templating: the largest share (0 to 1) of an agent's instruction a --snapshot-update of "
        f"preview_snapshot may remove without {_ALLOW_SHRINK}; default: {DEFAULT_MAX_LOSS}",
        default=str(DEFAULT_MAX_LOSS),
    )
    parser.getgroup("templating").addoption(
        _ALLOW_SHRINK,
        action="store_true",
        default=False,
        help="let --snapshot-update store preview snapshots in which an agent's instruction lost more than "
        f"{_MAX_LOSS_INI} of its text (or an agent is gone)",
    )


def _snapshot_dir(config: pytest.Config) -> str:
    """The folder `templating_snapshot_dir` names (`""`: none); a `pytest.UsageError` when it is outside the rootdir."""
    value = str(config.getini(_INI) or "")
    if not value:
        return ""
    folder = Path(str(config.rootpath), value)
    real = Path(os.path.realpath(folder))
    if not real.is_relative_to(os.path.realpath(config.rootpath)):
        raise pytest.UsageError(
            f"{_INI} = {value!r} is outside the rootdir {config.rootpath} (it is {real}): snapshots are read and "
            f'written only inside the rootdir; name a folder under it, such as {_INI} = "snapshots"'
        )
    return str(folder)


def pytest_configure(config: pytest.Config) -> None:
    _snapshot_dir(config)  # a configuration error stops the run before anything is collected
    _max_loss(config)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A snapshot under its old name (`__snapshots__/<module>/test_x.txt`, or a `.txt` file in
    `templating_snapshot_dir`) is not collected: pytest's default `--doctest-glob` (`test*.txt`) would run
    it as a doctest file. Its test fails until it is renamed (see `PromptTextExtension`)."""
    if collection_path.suffix != OLD_SUFFIX:
        return None
    folder = _snapshot_dir(config)
    if collection_path.parent.parent.name == "__snapshots__" or (folder and collection_path.is_relative_to(folder)):
        return True
    return None


def _extension(config: pytest.Config) -> type[PromptTextExtension]:
    update = bool(getattr(config.option, "update_snapshots", False))
    return extension_for(_snapshot_dir(config), str(config.rootpath), update=update)


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


# --- previews of apps: what each agent's model sees -----------------------------------------------------------------

_MAX_LOSS_INI = "templating_preview_max_loss"
_ALLOW_SHRINK = "--templating-allow-shrink"
DEFAULT_MAX_LOSS = 0.5


def _max_loss(config: pytest.Config) -> float:
    """The ini option `templating_preview_max_loss`: a share between 0 and 1 (a `pytest.UsageError` otherwise)."""
    value = str(config.getini(_MAX_LOSS_INI) or DEFAULT_MAX_LOSS)
    try:
        share = float(value)
    except ValueError:
        share = -1.0
    if not 0 <= share <= 1:
        raise pytest.UsageError(f"{_MAX_LOSS_INI} = {value!r}: give a share between 0 and 1, such as 0.5")
    return share


class PreviewText(SnapshotText):
    """An app's preview as text to compare `== snapshot`. With `--snapshot-update`, the update is refused when an
    agent's instruction (its system instruction and instruction turn) would lose more than the configured share of
    its text, or an agent would be gone, unless `--templating-allow-shrink` is given."""

    __slots__ = ("_guard", "_lengths", "_refused")

    def __init__(
        self,
        text: str,
        extension: type[PromptTextExtension],
        registered: set[int],
        lengths: dict[str, int],
        guard: float | None,
        refused: list[str],
    ) -> None:
        super().__init__(text, extension, registered)
        self._lengths = lengths
        self._guard = guard
        self._refused = refused

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SnapshotAssertion) and self._guard is not None and other.update_snapshots:
            refused = self._check_shrink(other, self._guard)
            if refused is not None:
                old, message = refused
                # The snapshot as it is, compared as a match: syrupy neither rewrites it nor, since the test goes on
                # to its other snapshots, deletes them as unused. The test fails when it ends (the fixture's teardown).
                self._refused.append(message)
                return SnapshotText(old, self._extension, self._registered).__eq__(other)
        return super().__eq__(other)

    __hash__ = None

    def _check_shrink(self, other: SnapshotAssertion, limit: float) -> tuple[str, str] | None:
        """(the stored text, why) when the update would shrink an agent's instruction beyond `limit`."""
        from syrupy.exceptions import SnapshotDoesNotExist

        from .preview.formats import instruction_lengths

        try:
            old = self._extension().read_snapshot(
                test_location=other.test_location, index=other.index, session_id="templating-shrink-guard"
            )
        except SnapshotDoesNotExist:
            return None
        before = instruction_lengths(_text(old))
        lost = []
        for agent, length in before.items():
            now = self._lengths.get(agent, 0)
            if length and (length - now) / length > limit:
                lost.append(f"{agent} {length} -> {now} characters" if agent in self._lengths else f"{agent} is gone")
        if not lost:
            return None
        return _text(old), (
            f"--snapshot-update refused: an agent's instruction would lose more than {limit:.0%} of its text "
            f"({'; '.join(lost)}); the snapshot is kept as it was. If that is meant, run again with "
            f"--snapshot-update {_ALLOW_SHRINK} (the share is the ini option {_MAX_LOSS_INI})"
        )


@pytest.fixture
def preview_snapshot(request: pytest.FixtureRequest) -> Iterator[Any]:
    """`preview_snapshot(target, state=None, *, run=False, agent=None)`: what each agent of the app `target` sees
    on its first turn (see `templating preview`), as text to compare `== snapshot`. `target` is relative to the
    rootdir (a folder, a Python file, `module:attribute` or an Agent Config YAML); `state` the session's state
    (default: the app's declared initial state). Read from the code unless `run`; needs the `adk` extra."""
    extension = _extension(request.config)
    registered: set[int] = set()
    guard = None if request.config.getoption(_ALLOW_SHRINK) else _max_loss(request.config)
    root = Path(str(request.config.rootpath))

    def take(
        target: str | os.PathLike[str], state: Any = None, *, run: bool = False, agent: str | None = None
    ) -> PreviewText:
        from .preview import build_preview
        from .preview.formats import as_text

        path = Path(target)
        named = str(path if path.is_absolute() or (":" in str(target) and not path.exists()) else root / path)
        result = build_preview(named, state=state, run=run, agent=agent, partial=False)
        lengths = {a.agent: len(a.system_instruction or "") + len(a.instruction_turn or "") for a in result.agents}
        return PreviewText(as_text(result), extension, registered, lengths, guard, refused)

    refused: list[str] = []
    yield take
    if refused:
        pytest.fail("\n".join(refused), pytrace=False)
