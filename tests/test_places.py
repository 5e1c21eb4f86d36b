"""templating.places: paths shown as findings show them."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from templating.places import LinkedFolders, shown


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


def test_real_folder_is_realpath_one_lstat_a_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each folder's real path, relative or absolute, through links to folders (inside, outside, chained, one
    going up, a loop) and to nothing, is what `os.path.realpath` gives; with the folders above it known, a
    folder costs one `lstat`."""
    from templating.places import real_folder

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a/b/c").mkdir(parents=True)
    (tmp_path / "out/x").mkdir(parents=True)
    (tmp_path / "a/in").symlink_to(tmp_path / "a/b")
    (tmp_path / "a/b/out").symlink_to(tmp_path / "out")
    (tmp_path / "a/chain").symlink_to("in")  # relative, to a link
    (tmp_path / "a/b/up").symlink_to("..")
    (tmp_path / "a/dangling").symlink_to(tmp_path / "nothing")
    (tmp_path / "a/loop").symlink_to("loop")
    folders = [
        "",
        ".",
        "a",
        "a/b",
        "a/b/c",
        "a/in",
        "a/in/c",
        "a/b/out/x",
        "a/chain/c",
        "a/b/up/b/c",
        "a/b/up/in/out",
        "a/dangling",
        "a/dangling/z",
        "a/loop",
        "a/../a/b",
        "a/b/..",
        "a/missing/c",
        str(tmp_path / "a/in/c"),
        "/",
    ]
    for absent in (None, set()):
        known: dict[str, str] = {}
        for folder in folders:
            assert real_folder(folder, known, absent) == os.path.realpath(folder or "."), folder
    known = {}
    real_folder("a/b", known)
    looked: list[str] = []
    lstat = os.lstat
    monkeypatch.setattr(os, "lstat", lambda path, *a, **k: looked.append(path) or lstat(path, *a, **k))
    assert real_folder("a/b/c", known) == str(tmp_path / "a/b/c")
    assert looked == [str(tmp_path / "a/b/c")]


def test_real_folder_keeps_the_folders_not_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder found not there goes to `absent`, and so does each below it, with no `lstat` of its own."""
    from templating.places import real_folder

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "a/dangling").symlink_to(tmp_path / "nothing")
    known: dict[str, str] = {}
    absent: set[str] = set()
    real_folder("a", known, absent)
    looked: list[str] = []
    lstat = os.lstat
    monkeypatch.setattr(os, "lstat", lambda path, *a, **k: looked.append(path) or lstat(path, *a, **k))
    assert real_folder("a/gone/deeper/still", known, absent) == str(tmp_path / "a/gone/deeper/still")
    assert looked == [str(tmp_path / "a/gone")]
    assert absent == {"a/gone", "a/gone/deeper", "a/gone/deeper/still"}
    assert real_folder("a/dangling/z", known, absent) == os.path.realpath("a/dangling/z")
    assert "a/dangling" not in absent  # a link (to nothing) is there: resolved whole, as realpath does


def test_real_folder_elsewhere_than_on_posix_is_realpath_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Off POSIX (junctions, letter case) a folder is resolved by `realpath` whole, never from its parent's."""
    from templating.places import real_folder

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a/b").mkdir(parents=True)
    (tmp_path / "a/in").symlink_to(tmp_path / "a/b")
    resolved: list[str] = []
    realpath = os.path.realpath
    monkeypatch.setattr(os.path, "realpath", lambda path, *a, **k: resolved.append(path) or realpath(path, *a, **k))
    monkeypatch.setattr(os, "name", "nt")
    known: dict[str, str] = {}
    assert real_folder("a/in", known) == realpath("a/in")
    assert resolved == ["a/in"]


# --- the links to folders a relative import may go up out of


_LINKS = [("app/sub", "/p/real_sub"), ("tools/shared", "/p/real_sub"), ("app/deep/lib", "/p/vendored/lib")]


@pytest.mark.parametrize(
    ("real", "level", "expected"),
    [
        pytest.param("/p/real_sub", 2, ["app", "tools"], id="dots-out-of-the-target-each-link-in-order"),
        pytest.param("/p/real_sub", 3, ["."], id="further-up-from-the-link-each-folder-once"),
        pytest.param("/p/real_sub", 1, [], id="one-dot-the-module's-own-folder"),
        pytest.param("/p/real_sub/inner", 2, [], id="inside-the-target-same-files-either-way"),
        pytest.param("/p/real_sub/inner", 3, ["app", "tools"], id="out-of-a-folder-below-the-target"),
        pytest.param("/p/vendored/lib", 3, ["app"], id="a-link-two-folders-deep"),
        pytest.param("/p/real_sub_2", 2, [], id="a-name-that-only-starts-like-the-target"),
        pytest.param("/p/elsewhere", 2, [], id="no-link-to-it"),
    ],
)
def test_linked_folders_give_the_folders_a_relative_import_starts_from_through_a_link(
    real: str, level: int, expected: list[str]
) -> None:
    assert LinkedFolders(_LINKS).bases(real.replace("/", os.sep), level) == [e.replace("/", os.sep) for e in expected]


def test_linked_folders_compare_and_pickle_by_their_links() -> None:
    """The project hands its links to the workers of a cold run (pickled) and to the editor's import graph, which
    works every file's imports out again when they change (compared)."""
    links = LinkedFolders(_LINKS)
    assert links == LinkedFolders(reversed(_LINKS))
    assert links != LinkedFolders(_LINKS[:1])
    assert not LinkedFolders()
    assert links
    assert pickle.loads(pickle.dumps(links)) == links
