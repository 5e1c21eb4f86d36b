"""Import direction: data flows grammar -> parser -> nodes -> render, with everything else on top."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "templating"
MODULES = sorted(p.stem for p in PACKAGE.glob("*.py"))

# What each lower-stage module may import from the package. Modules not listed sit on top.
ALLOWED: dict[str, set[str]] = {
    "nodes": set(),
    "errors": {"nodes"},
    "parser": {"nodes"},
    "render": {"nodes", "errors"},
    "template": {"nodes", "errors", "parser", "render"},
}


def imports_of(module: str) -> tuple[set[str], set[str]]:
    """(package modules imported, top-level third-party/stdlib modules imported)."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    local: set[str] = set()
    external: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                if node.module:
                    local.add(node.module.split(".")[0])
                else:
                    local.update(alias.name for alias in node.names)
            elif node.module:
                root = node.module.split(".")[0]
                (local if root == "templating" else external).add(
                    node.module.split(".")[1] if root == "templating" and "." in node.module else root
                )
        elif isinstance(node, ast.Import):
            external.update(alias.name.split(".")[0] for alias in node.names)
    return local, external


@pytest.mark.parametrize("module", MODULES)
def test_only_the_parser_imports_lark(module: str) -> None:
    _, external = imports_of(module)
    assert ("lark" in external) == (module == "parser")


# Optional heavy libraries stay behind one module each.
ONLY_IMPORTER = {"jinja2": "jinja", "pydantic": "agents"}


@pytest.mark.parametrize("library", sorted(ONLY_IMPORTER))
def test_each_library_is_imported_by_one_module(library: str) -> None:
    importers = {module for module in MODULES if library in imports_of(module)[1]}
    assert importers == {ONLY_IMPORTER[library]}


@pytest.mark.parametrize("module", sorted(ALLOWED))
def test_lower_stages_import_only_what_comes_before(module: str) -> None:
    local, _ = imports_of(module)
    assert local <= ALLOWED[module], f"{module} imports {sorted(local - ALLOWED[module])}"


def test_renderer_never_imports_sessions() -> None:
    local, _ = imports_of("render")
    assert not local & {"sessions", "state", "contexts", "providers", "cli", "lint"}
