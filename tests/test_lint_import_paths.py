"""templating.linter.import_paths: a file's import statements read from its text, and the real folders an import
is resolved from (links to folders followed as the scanner follows them)."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest
from conftest import shared_corpora
from hypothesis import example, given, settings
from hypothesis import strategies as st

from templating.linter import import_paths
from templating.linter.import_paths import Places, import_statements
from templating.places import LinkedFolders

CORPUS = shared_corpora()
AGENTS = CORPUS / "adk-samples" / "python" / "agents" if CORPUS else None


_IMPORT_PARTS = [
    "import",
    "from",
    " ",
    ".",
    "a",
    "b.c",
    "(",
    ")",
    ",",
    ";",
    ":",
    "\n",
    "\t",
    "as",
    "x",
    "#",
    "important",
    "\r",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_IMPORT_PARTS), max_size=24).map("".join))
@example("from a import (b,\nimport c); import d")  # a line starting inside the names of the statement before
@example("x = 1; from . import (a,\n b)\nif x: import c\nimportant = 1\r import d")
def test_import_lines_are_found_as_searching_the_whole_text_finds_them(text: str) -> None:
    """An import statement is looked for only on the lines holding the word `import`: the same statements as a
    search of the whole text, a parenthesized one spanning lines included."""
    assert [m.span() for m in import_paths._imports(text)] == [m.span() for m in import_paths._IMPORT.finditer(text)]


def test_import_lines_are_found_on_the_corpus() -> None:
    if AGENTS is None or not AGENTS.is_dir():
        if os.environ.get("TEMPLATING_REQUIRE_CORPUS") == "1":
            pytest.fail("TEMPLATING_REQUIRE_CORPUS=1 but the shared corpus is absent", pytrace=False)
        pytest.skip("the shared corpus is absent")
    texts = {
        path.relative_to(AGENTS).as_posix(): path.read_text(encoding="utf-8", errors="replace")
        for path in sorted(AGENTS.rglob("*.py"))
        if not any(part.startswith(".") for part in path.relative_to(AGENTS).parts)
    }
    assert len(texts) > 100
    for path, text in texts.items():
        found = [m.groupdict() for m in import_paths._imports(text)]
        assert found == [m.groupdict() for m in import_paths._IMPORT.finditer(text)], path


@pytest.mark.parametrize(
    ("path", "statement", "expected"),
    [
        pytest.param("app/agent.py", "from .prompt import P", (PurePosixPath("app"), 1), id="one-dot-its-folder"),
        pytest.param("app/sub/agent.py", "from ..prompt import P", (PurePosixPath("app"), 2), id="two-dots"),
        pytest.param("agent.py", "from ..memory import m", None, id="above-the-current-folder-made-absolute"),
        pytest.param("app/agent.py", "import app.prompt", (None, 0), id="absolute"),
    ],
)
def test_import_statements_give_the_folder_a_relative_import_starts_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str, statement: str, expected: tuple[object, int] | None
) -> None:
    monkeypatch.chdir(tmp_path)
    [(base, level, _)] = import_statements(path, statement + "\n")
    if expected is None:  # `Path.parent` would stop at the current folder: going on up, it leaves it
        expected = (PurePosixPath(os.path.dirname(str(tmp_path))), 2)
    assert (base, level) == expected


@pytest.mark.skipif(not hasattr(os, "symlink") or os.name != "posix", reason="symbolic links")
def test_places_follow_a_link_on_an_import_path_and_start_next_to_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`app/sub` -> `../real_sub`: `app.sub.tools` is the module `real_sub/tools.py` (by its real path, as the
    scanner names it); `..memory` in it starts from `real_sub`'s parent and, through the link, from `app`."""
    for name in ("app/agent.py", "app/memory.py", "real_sub/tools.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("", encoding="utf-8")
    (tmp_path / "app/sub").symlink_to("../real_sub")
    monkeypatch.chdir(tmp_path)
    real = tmp_path.resolve().parts
    places = Places(links=LinkedFolders([("app/sub", str(tmp_path.resolve() / "real_sub"))]))
    assert places.place((*real, "app"), ("sub", "tools")) == (*real, "real_sub", "tools")
    assert places.place((*real, "app"), ("memory",)) == (*real, "app", "memory")
    [(base, level, _)] = import_statements("real_sub/tools.py", "from ..memory import remember\n")
    assert places.bases("real_sub/tools.py", base, level=level) == [real, (*real, "app")]
    unlinked = Places()
    assert unlinked.place((*real, "app"), ("sub", "tools")) == (*real, "app", "sub", "tools")
    assert unlinked.bases("real_sub/tools.py", base, level=level) == [real]
