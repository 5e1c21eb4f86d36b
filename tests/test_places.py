"""templating.places: paths shown as findings show them."""

from __future__ import annotations

from pathlib import Path

import pytest

from templating.places import shown


@pytest.mark.parametrize(
    ("cwd", "path", "expected"),
    [
        pytest.param("app", "app/agent.py", "agent.py", id="under-the-current-folder-relative"),
        pytest.param(".", "app/agent.py", "app/agent.py", id="deeper-relative"),
        pytest.param("app", "other/agent.py", "{root}/other/agent.py", id="outside-absolute"),
        pytest.param("link", "app/agent.py", "agent.py", id="current-folder-a-link-resolved"),
    ],
)
def test_shown_follows_the_current_folder_as_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cwd: str, path: str, expected: str
) -> None:
    root = tmp_path.resolve()
    for name in ("app/agent.py", "other/agent.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("", encoding="utf-8")
    (root / "link").symlink_to(root / "app")
    monkeypatch.chdir(root / "other")
    assert shown(root / "other/agent.py") == "agent.py"  # the folder before: remembered, then left
    monkeypatch.chdir(root / cwd)
    assert shown(root / path) == expected.format(root=root)
