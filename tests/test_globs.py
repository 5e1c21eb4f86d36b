"""The glob matcher (templating.linter.globs): git's semantics, checked against a plain recursive
reference built on fnmatch, and linear cost where a regular expression would backtrack."""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from templating.linter import globs
from templating.linter.globs import GlobError, GlobList, compile_glob

GIT_CASES = [
    # (id, pattern, path, matches)
    ("name-any-depth", "build", "a/b/build", True),
    ("name-top", "build", "build", True),
    ("name-not-part", "build", "a/builds", False),
    ("star-in-name", "*.txt", "a/b.txt", True),
    ("star-stays-in-folder", "a/*.txt", "a/b/c.txt", False),
    ("star-one-folder", "a/*.txt", "a/c.txt", True),
    ("leading-slash-anchors", "/top.txt", "top.txt", True),
    ("leading-slash-anchored-only-top", "/top.txt", "sub/top.txt", False),
    ("middle-slash-anchors", "doc/frotz", "a/doc/frotz", False),
    ("middle-slash-matches-from-base", "doc/frotz", "doc/frotz", True),
    ("deep-leading", "**/foo", "a/b/foo", True),
    ("deep-leading-zero", "**/foo", "foo", True),
    ("deep-middle", "a/**/b", "a/x/y/b", True),
    ("deep-middle-zero", "a/**/b", "a/b", True),
    ("deep-middle-miss", "a/**/b", "a/x/c", False),
    ("deep-trailing-inside", "abc/**", "abc/x/y", True),
    ("deep-trailing-not-itself", "abc/**", "abc", False),
    ("double-star-in-name-is-star", "a**b", "axyb", True),
    ("double-star-in-name-stays", "a**b", "ax/yb", False),
    ("question", "a?c", "abc", True),
    ("question-not-slash", "a?c", "a/c", False),
    ("class", "[ab].txt", "b.txt", True),
    ("class-miss", "[ab].txt", "c.txt", False),
    ("class-range", "[a-c]1", "b1", True),
    ("class-negated-bang", "[!a]1", "b1", True),
    ("class-negated-caret", "[^a]1", "a1", False),
    ("class-leading-bracket", "[]a]x", "]x", True),
    ("unclosed-bracket-literal", "a[b", "a[b", True),
    ("escape-star", "a\\*b", "a*b", True),
    ("escape-star-literal", "a\\*b", "axb", False),
    ("escape-bang", "\\!x", "!x", True),
    ("escape-in-class", "[\\]]", "]", True),
    ("dot-files", "*", ".hidden", True),
    ("pathological-miss", "*a*a*a*a*a*a*b", "a" * 200, False),
    ("pathological-hit", "*a*a*a*a*a*a*b", "a" * 200 + "b", True),
]


@pytest.mark.parametrize(("pattern", "path", "matches"), [c[1:] for c in GIT_CASES], ids=[c[0] for c in GIT_CASES])
def test_git_semantics(pattern: str, path: str, matches: bool) -> None:
    assert compile_glob(pattern).match(path) is matches


@pytest.mark.parametrize(
    ("pattern", "message"),
    [("[z-a]", "bad character range z-a"), ("a\\", "lone backslash")],
    ids=["reversed-range", "trailing-backslash"],
)
def test_bad_patterns(pattern: str, message: str) -> None:
    with pytest.raises(GlobError, match=message):
        compile_glob(pattern)


LIST_CASES = [
    # (id, patterns, path, matches): lists as include/exclude read them (a folder's match covers its files)
    ("folder-covers-files", ["drafts"], "p/drafts/a.txt", True),
    ("anchored-folder", ["p/drafts"], "p/drafts/x/a.txt", True),
    ("anchored-elsewhere", ["p/drafts"], "q/p/drafts/a.txt", False),
    ("negation-last-wins", ["*.txt", "!keep.txt"], "a/keep.txt", False),
    ("negation-then-again", ["*.txt", "!keep.txt", "keep*"], "keep.txt", True),
    ("dot-slash", ["./p/*.txt"], "p/a.txt", True),
    ("none", [], "a.txt", False),
]


@pytest.mark.parametrize(("patterns", "path", "matches"), [c[1:] for c in LIST_CASES], ids=[c[0] for c in LIST_CASES])
def test_glob_lists(patterns: list[str], path: str, matches: bool) -> None:
    assert GlobList(patterns).match(path) is matches


# --- the reference: git's rules written out directly, a name matched by fnmatch (a regex: small inputs only)


def _reference_parts(segments: list[str], parts: list[str]) -> bool:
    if not segments:
        return not parts
    head, *rest = segments
    if head == "**":
        return any(_reference_parts(rest, parts[i:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatch.fnmatchcase(parts[0], head) and _reference_parts(rest, parts[1:])


def reference(pattern: str, path: str, *, prefixes: bool = False) -> bool:
    segments = pattern.split("/")
    if len(segments) == 1:  # no slash: a name at any depth
        segments = ["**", *segments]
    elif segments[-1] == "**":  # a trailing /**: something inside
        segments = [*segments[:-1], "*", "**"]
    parts = path.split("/")
    if prefixes:
        return any(_reference_parts(segments, parts[:k]) for k in range(1, len(parts) + 1))
    return _reference_parts(segments, parts)


_name_piece = st.sampled_from(["a", "b", "*", "?", "[ab]", "[!a]", "[a-b]"])
_segment = st.one_of(st.just("**"), st.lists(_name_piece, min_size=1, max_size=4).map("".join))
_patterns = st.lists(_segment, min_size=1, max_size=4).map("/".join)
_paths = st.lists(st.text(alphabet="ab", min_size=1, max_size=5), min_size=1, max_size=5).map("/".join)


@settings(max_examples=400, deadline=None)
@given(_patterns, _paths, st.booleans())
def test_matches_the_reference(pattern: str, path: str, prefixes: bool) -> None:
    assert compile_glob(pattern, prefixes=prefixes).match(path) is reference(pattern, path, prefixes=prefixes)


@settings(max_examples=100, deadline=None)
@given(_patterns, st.lists(_paths, min_size=1, max_size=30), st.booleans())
def test_one_compiled_glob_matches_many_paths_as_the_reference(pattern: str, paths: list[str], prefixes: bool) -> None:
    """A compiled glob keeps what each name it met matched (a walk meets each folder many times): matched over
    many paths in turn, repeated names among them, it gives what the reference gives for each."""
    glob = compile_glob(pattern, prefixes=prefixes)
    for path in [*paths, *paths]:
        assert glob.match(path) is reference(pattern, path, prefixes=prefixes), path


@settings(max_examples=150, deadline=None)
@given(st.lists(_patterns | _segment, min_size=1, max_size=3), st.lists(_paths, min_size=1, max_size=30), st.booleans())
def test_a_glob_list_matches_many_paths_as_the_reference(patterns: list[str], paths: list[str], prefixes: bool) -> None:
    """A list whose patterns all ask for a name at some depth (`**/NAME/**`) keeps what each name it met
    matched; any list gives, path after path, what the reference gives for any of its patterns."""
    globs = GlobList(patterns, prefixes=prefixes)
    for path in [*paths, *paths]:
        assert globs.match(path) is any(reference(p, path, prefixes=prefixes) for p in patterns), path


def test_the_names_a_glob_keeps_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from templating.linter import globs

    monkeypatch.setattr(globs, "_SEEN_LIMIT", 3)
    glob = compile_glob("build", prefixes=True)
    paths = [f"src/p{i}/build/m.py" for i in range(10)] + [f"src/p{i}/m.py" for i in range(10)]
    assert [glob.match(p) for p in paths] == [True] * 10 + [False] * 10
    assert len(glob._seen) == 3
    listed = GlobList(["build", "dist"])
    assert [listed.match(p) for p in paths] == [True] * 10 + [False] * 10
    assert len(listed._seen) == 3


# --- cost: bounded by a count of steps, not by time


def test_the_backtracking_pattern_takes_linear_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    # `*a*a*a*a*a*a*b` (here with classes, so every test is a counted Python step) against 5,000 `a`s:
    # a regular expression tries about C(5000, 6) ~ 10^19 splits; the matcher never revisits a choice.
    calls = 0
    real_at = globs._Chunk.at

    def counting(self: Any, text: str, pos: int) -> bool:
        nonlocal calls
        calls += 1
        return bool(real_at(self, text, pos))

    monkeypatch.setattr(globs._Chunk, "at", counting)
    pattern = "*[a]*[a]*[a]*[a]*[a]*[a]*b"
    name = "a" * 5000
    assert compile_glob(pattern).match(name) is False
    assert calls <= len(pattern) * len(name)
    assert compile_glob(pattern).match(name + "b") is True
    deep = "/".join(["a"] * 2000)
    assert compile_glob("**/a/**/a/**/a/**/a/**/b").match(deep) is False  # the same one level up


def test_a_long_gitignore_is_compiled_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from templating.linter import project as project_module
    from templating.linter.config import LintConfig

    lines = [f"generated_{i}.prompt" for i in range(10_000)] + [f"*.tmp{i}" for i in range(10_000)]
    (tmp_path / ".gitignore").write_text("\n".join([*lines, "!generated_5.prompt"]) + "\n", encoding="utf-8")
    for name in ("a.prompt", "generated_3.prompt", "generated_5.prompt", "x.tmp7", "sub/b.prompt"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("Hi", encoding="utf-8")
    compiled = 0
    real = project_module.compile_glob

    def counting(pattern: str, **kwargs: Any) -> Any:
        nonlocal compiled
        compiled += 1
        return real(pattern, **kwargs)

    monkeypatch.setattr(project_module, "compile_glob", counting)
    walker = project_module.Walker(LintConfig(root=tmp_path), tmp_path)
    found = [p.relative_to(tmp_path).as_posix() for p in walker.walk(tmp_path)]
    assert found == ["a.prompt", "generated_5.prompt", "sub/b.prompt"]
    assert compiled == 10_000  # the wildcard lines, once each; plain names are looked up, not compiled
    list(walker.walk(tmp_path))
    assert compiled == 10_000  # the walk is kept: not even read again


def test_the_matcher_is_a_leaf_without_regular_expressions() -> None:
    # Nothing from the package (the walk, the config and the server all sit on it), and no `re`:
    # a regular expression is what backtracks.
    import ast

    tree = ast.parse(Path(globs.__file__).read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {
        ("." * node.level) + (node.module or "") for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
    }
    assert imported <= {"__future__", "collections.abc", "dataclasses"}, imported


# Folder names that sort differently as strings and folder by folder ('-' and '.' sort before '/').
_NEAR_NAMES = ["a/x.py", "a/b/y.py", "a-b/z.py", "a.b/w.py", "a0/v.py", "ab/u.py", "a/b-c/t.py", "a/b.c/s.py", "b/r.py"]


@pytest.mark.parametrize(
    ("folder", "recursive"),
    [
        pytest.param("a", True, id="a-whole"),
        pytest.param("a", False, id="a-alone"),
        pytest.param("a/b", True, id="a-b-nested"),
        pytest.param("a-b", True, id="dash"),
        pytest.param("a.b", True, id="dot"),
        pytest.param("ab", True, id="longer-name"),
        pytest.param("missing", True, id="no-such-folder"),
        pytest.param(".", True, id="root"),
    ],
)
def test_a_folder_taken_from_the_roots_walk_lists_what_walking_it_lists(
    tmp_path: Path, folder: str, recursive: bool
) -> None:
    from templating.linter import project as project_module
    from templating.linter.config import LintConfig

    for name in _NEAR_NAMES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n", encoding="utf-8")
    config = LintConfig(root=tmp_path)
    kept = project_module.Walker(config, tmp_path)
    kept.entries(tmp_path)  # the root's walk, which later folders are read from
    fresh = project_module.Walker(config, tmp_path)  # no root walk: the folder is walked itself
    target = tmp_path / folder
    expected = [e.relative for e in fresh.entries(target, recursive=recursive)] if target.is_dir() else []
    assert [e.relative for e in kept.entries(target, recursive=recursive)] == expected
