"""Where the lint cache keeps its entries (templating.linter.cache_dir): the folder each setting names, one
refused or linked out of the root, pruning to the bounds and only what the cache wrote."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from cache_support import PROJECT, build, shape

from templating.cli import main
from templating.linter import cache_dir
from templating.linter.engine import Project
from templating.linter.run import lint_project

FOLDERS: list[tuple[str, list[str], dict[str, str], str, str | None]] = [
    # (id, options, environment, [tool.templating] lines, the folder expected, relative to tmp_path; None: none)
    ("default", [], {}, "", "project/.templating_cache"),
    ("option", ["--cache-dir", "../elsewhere"], {}, "", "elsewhere"),
    ("environment", [], {"TEMPLATING_CACHE_DIR": "{tmp}/from-env"}, "", "from-env"),
    ("option-over-environment", ["--cache-dir", "../opt"], {"TEMPLATING_CACHE_DIR": "{tmp}/env"}, "", "opt"),
    ("setting", [], {}, 'cache-dir = "build/lint-cache"', "project/build/lint-cache"),
    ("environment-over-setting", [], {"TEMPLATING_CACHE_DIR": "{tmp}/env"}, 'cache-dir = "c"', "env"),
    ("no-cache", ["--no-cache"], {}, "", None),
    ("no-cache-over-option", ["--no-cache", "--cache-dir", "../x"], {}, "", None),
]


@pytest.mark.parametrize(
    ("options", "environment", "setting", "expected"), [f[1:] for f in FOLDERS], ids=[f[0] for f in FOLDERS]
)
def test_where_the_cache_is(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    options: list[str],
    environment: dict[str, str],
    setting: str,
    expected: str | None,
) -> None:
    root = tmp_path / "project"
    build(root, {**PROJECT, "pyproject.toml": f"[tool.templating]\n{setting}\n"})
    monkeypatch.chdir(root)
    monkeypatch.delenv("TEMPLATING_CACHE_DIR")
    for name, value in environment.items():
        monkeypatch.setenv(name, value.format(tmp=tmp_path))
    assert main(["lint", ".", *options]) == 0
    capsys.readouterr()
    made = sorted(p.parent.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("CACHEDIR.TAG"))
    assert made == ([] if expected is None else [expected])
    if expected is not None:
        folder = tmp_path / expected
        assert (folder / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
        tag = (folder / "CACHEDIR.TAG").read_text(encoding="utf-8")
        assert tag.startswith("Signature: 8a477f597d28d172789f06886806bc55\n")
        assert len(list(folder.glob("*.json"))) == 1


@pytest.mark.parametrize("setting", ["../outside", "/tmp/anywhere", ".", "sub/../.."], ids=str)
def test_a_cache_dir_setting_outside_the_root_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], setting: str
) -> None:
    root = tmp_path / "project"
    build(root, {**PROJECT, "pyproject.toml": f'[tool.templating]\ncache-dir = "{setting}"\n'})
    monkeypatch.chdir(root)
    monkeypatch.delenv("TEMPLATING_CACHE_DIR")
    assert main(["lint", "."]) == 2
    err = capsys.readouterr().err
    assert "'cache-dir' in [tool.templating] must be a folder inside the project root" in err
    assert not list(tmp_path.rglob("CACHEDIR.TAG"))
    assert main(["lint", ".", "--no-cache"]) == 0  # the setting is not read without the cache


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links as on POSIX")
@pytest.mark.parametrize("setting", ["", 'cache-dir = "build/cache"'], ids=["default", "setting"])
def test_a_cache_folder_linked_out_of_the_root_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], setting: str
) -> None:
    """A project can hold a link where its cache would be: nothing is written through it."""
    root = tmp_path / "project"
    build(root, {**PROJECT, "pyproject.toml": f"[tool.templating]\n{setting}\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    if setting:
        (root / "build").symlink_to(outside, target_is_directory=True)
    else:
        (root / ".templating_cache").symlink_to(outside, target_is_directory=True)
    monkeypatch.chdir(root)
    monkeypatch.delenv("TEMPLATING_CACHE_DIR")
    assert main(["lint", "."]) == 0
    assert "T014" in capsys.readouterr().out
    assert list(outside.rglob("*")) == []


def test_the_folder_holds_at_most_max_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cache_dir, "MAX_ENTRIES", 2)
    folder = tmp_path / "cache"
    for paths in (["trip"], ["prompts"], ["trip/agent.py"], ["."]):
        lint_project(paths, cache_dir=folder)
    assert len(list(folder.glob("*.json"))) == 2
    monkeypatch.setattr(cache_dir, "MAX_ENTRIES", 10)
    sizes = [entry.stat().st_size for entry in folder.glob("*.json")]
    monkeypatch.setattr(cache_dir, "MAX_TOTAL_BYTES", sum(sizes) - 1)  # no room for both any more
    lint_project(["."], cache_dir=folder)  # a hit: nothing written, nothing pruned
    assert len(list(folder.glob("*.json"))) == 2
    (tmp_path / "trip/prompt.py").write_text(PROJECT["trip/prompt.py"].replace("{budget}", "{budget} {extra}"))
    lint_project(["."], cache_dir=folder)  # a miss (one finding more), written again: the older entry goes
    assert len(list(folder.glob("*.json"))) == 1


def test_a_hit_keeps_its_entry_from_being_pruned_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cache_dir, "MAX_ENTRIES", 2)
    folder = tmp_path / "cache"
    lint_project(["."], cache_dir=folder)
    (kept,) = folder.glob("*.json")
    os.utime(kept, (1, 1))  # written long ago
    lint_project(["trip"], cache_dir=folder)
    lint_project(["."], cache_dir=folder)  # a hit: used now
    lint_project(["prompts"], cache_dir=folder)  # one entry must go: not the one just used
    assert kept.exists()


def test_an_unwritable_folder_lints_without_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(tmp_path)
    monkeypatch.chdir(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    result = lint_project(["."], cache_dir=blocker / "cache")  # its parent is a file: it cannot be made
    assert shape(result) == shape(lint_project(["."]))


def _users_folder(folder: Path) -> dict[str, bytes]:
    """A folder of the user's own JSON files, some even named as cache entries are: what a mistyped
    `--cache-dir` may point at. Written long ago (the oldest are pruned first)."""
    folder.mkdir(parents=True)
    files = {f"data-{i:02}.json": b'{"row": %d}\n' % i for i in range(70)}
    files["0123456789abcdef0123456789abcdef01234567.json"] = b'{"format": 1, "mine": true}\n'
    for name, data in files.items():
        (folder / name).write_bytes(data)
        os.utime(folder / name, (1, 1))
    return files


def _contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


@pytest.mark.parametrize(
    ("options", "environment", "setting", "named"),
    [
        (["--cache-dir", "{folder}"], {}, "", "--cache-dir"),
        ([], {"TEMPLATING_CACHE_DIR": "{folder}"}, "", "TEMPLATING_CACHE_DIR"),
        ([], {}, 'cache-dir = "data"', "'cache-dir' in [tool.templating]"),
    ],
    ids=["option", "environment", "setting"],
)
def test_a_folder_that_is_not_a_cache_is_refused_and_left_as_it_is(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    options: list[str],
    environment: dict[str, str],
    setting: str,
    named: str,
) -> None:
    root = tmp_path / "project"
    build(root, {**PROJECT, "pyproject.toml": f"[tool.templating]\n{setting}\n"})
    folder = root / "data"
    files = _users_folder(folder)
    monkeypatch.chdir(root)
    monkeypatch.delenv("TEMPLATING_CACHE_DIR")
    for name, value in environment.items():
        monkeypatch.setenv(name, value.format(folder=folder))
    monkeypatch.setattr(cache_dir, "MAX_ENTRIES", 2)
    assert main(["lint", ".", *[o.format(folder=folder) for o in options]]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"templating: error: refusing to use {folder} as the lint cache ({named}): it is not empty and is not a "
        "templating cache (it has no CACHEDIR.TAG written by templating); name a new or empty folder, or pass "
        "--no-cache\n"
    )
    assert _contents(folder) == files  # nothing deleted, nothing added
    assert main(["lint", ".", "--no-cache"]) == 0  # the folder is not looked at without the cache


def test_an_empty_folder_becomes_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(tmp_path)
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "empty"
    folder.mkdir()
    lint_project(["."], cache_dir=folder)
    assert (folder / "CACHEDIR.TAG").is_file()
    assert len(list(folder.glob("*.json"))) == 1


def test_pruning_removes_only_the_caches_own_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files put in the cache's folder by someone else (a JSON file, one named as an entry is, a link to a
    file elsewhere) are never removed, however old: only what the cache wrote (its name and its header)."""
    build(tmp_path)
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "cache"
    lint_project(["."], cache_dir=folder)
    keep = tmp_path / "keep.json"
    keep.write_text("{}", encoding="utf-8")
    others = {
        "notes.json": b'{"a": 1}',
        "fedcba9876543210fedcba9876543210fedcba98.json": b'{"format": 1, "key": "x"}',
        "ffffffffffffffffffffffffffffffffffffffff.json": b"[]",
    }
    for name, data in others.items():
        (folder / name).write_bytes(data)
    (folder / "link.json").symlink_to(keep)
    for name in [*others, "link.json"]:
        os.utime(folder / name, (1, 1), follow_symlinks=False)
    monkeypatch.setattr(cache_dir, "MAX_ENTRIES", 1)
    for paths in (["trip"], ["prompts"], ["trip/agent.py"]):
        lint_project(paths, cache_dir=folder)
    left = _contents(folder)
    assert {name: left[name] for name in others} == others
    assert (folder / "link.json").is_symlink()
    assert keep.exists()
    entries = [name for name in left if name not in others and name.endswith(".json") and name != "link.json"]
    assert len(entries) == 1  # the cache's own entries were pruned to MAX_ENTRIES


def test_the_folder_is_checked_once_for_a_cache_object(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`LintCache` checks its folder on its first run only (an editor's project lints many times)."""
    from templating.linter import cache as lint_cache

    build(tmp_path)
    monkeypatch.chdir(tmp_path)
    checked: list[Path] = []
    real = lint_cache.check_folder
    monkeypatch.setattr(
        lint_cache, "check_folder", lambda folder, setting: checked.append(folder) or real(folder, setting)
    )
    engine = Project(cache_dir=tmp_path / "cache")
    engine.lint(["."])
    engine.lint(["trip"])
    assert checked == [tmp_path / "cache"]


def test_an_entry_that_cannot_be_moved_into_place_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "cache"

    def refuse(*args: object) -> None:
        raise OSError("no room")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="no room"):
        cache_dir.write_entry(folder, "0" * 40, cache_dir.HEADER + b"1}")
    assert sorted(p.name for p in folder.iterdir()) == []  # (the tag was not moved into place either)
