"""Shared fixtures: syrupy snapshots of this project's own tests live in the top-level snapshots/ folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOTS = ROOT / "snapshots"
# Every snapshot of this project's tests is a text file at snapshots/<test file path, no .py>/: the
# `snapshot` fixture below by its own dirname, and prompt_snapshot / lint_snapshot (templating's
# pytest plugin) because pyproject.toml sets the plugin's ini option templating_snapshot_dir.


class TextSnapshotExtension(SingleFileSnapshotExtension):
    """One readable UTF-8 text file per snapshot, under snapshots/tests/<test module>/."""

    _write_mode = WriteMode.TEXT
    file_extension = "txt"

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(SNAPSHOTS / Path(test_location.filepath).relative_to(ROOT).with_suffix(""))

    def serialize(self, data: Any, **kwargs: Any) -> str:
        if not isinstance(data, str):
            raise TypeError(f"text snapshots take str, not {type(data).__name__}")
        return data


@pytest.fixture
def snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(TextSnapshotExtension)
