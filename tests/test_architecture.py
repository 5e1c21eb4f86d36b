"""Import direction: data flows grammar -> parser -> nodes -> render, with everything else on top."""

from __future__ import annotations

import ast
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import templating

PACKAGE = Path(__file__).resolve().parent.parent / "templating"
MODULES = sorted(p.stem for p in PACKAGE.glob("*.py"))
# The sessions layer (templating/sessions/), its modules named "sessions/<module>".
SESSIONS = sorted(f"sessions/{p.stem}" for p in (PACKAGE / "sessions").glob("*.py"))
# The old module paths of the sessions layer: each only makes the moved module importable under its old name.
MOVED = {"state": "sessions/state", "contexts": "sessions/contexts", "sql_sessions": "sessions/sql"}

# What each lower-stage module may import from the package. Modules not listed sit on top.
ALLOWED: dict[str, set[str]] = {
    "nodes": set(),
    "errors": {"nodes"},
    "parser": {"nodes"},
    "render": {"nodes", "errors"},
    "template": {"nodes", "errors", "parser", "render"},
    # The sessions layer supplies state from above; nothing below it imports it. Within it: the state
    # contract, then the shared rules, then the services and the contexts, then the package's lazy names.
    "sessions/state": {"errors", "nodes"},
    "sessions/base": {"errors", "nodes", "sessions/state"},
    "sessions/memory": {"sessions/base", "sessions/state"},
    "sessions/sql": {"errors", "sessions/base", "sessions/state"},
    "sessions/contexts": {"render", "template", "sessions/base", "sessions/state"},
    "sessions/__init__": {"sessions/base", "sessions/contexts", "sessions/memory", "sessions/sql", "sessions/state"},
    **{old: {"sessions"} for old in MOVED},
}
CORE = ("nodes", "errors", "parser", "render", "template")


def imports_of(module: str) -> tuple[set[str], set[str]]:
    """(package modules imported, top-level third-party/stdlib modules imported). A module of the sessions
    package is named "sessions/<module>", as are its siblings it imports."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    inside = module.startswith("sessions/")
    local: set[str] = set()
    external: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                names = [node.module.split(".")[0]] if node.module else [alias.name for alias in node.names]
                sibling = inside and node.level == 1
                local.update(f"sessions/{name}" if sibling else name for name in names)
            elif node.module:
                root = node.module.split(".")[0]
                (local if root == "templating" else external).add(
                    node.module.split(".")[1] if root == "templating" and "." in node.module else root
                )
        elif isinstance(node, ast.Import):
            external.update(alias.name.split(".")[0] for alias in node.names)
    return local, external


# The Python-source scanner (templating/pysource/), its modules in order: each imports only those before it.
PYSOURCE = PACKAGE / "pysource"
PYSOURCE_LAYERS = ["reading", "positions", "found", "syntax", "imports", "resolve", "visitor", "__init__"]


def pysource_imports(layer: str) -> tuple[set[str], set[str], set[str]]:
    """(modules of the scanner imported, other package modules imported, third-party/stdlib modules imported)."""
    tree = ast.parse((PYSOURCE / f"{layer}.py").read_text(encoding="utf-8"))
    siblings: set[str] = set()
    local: set[str] = set()
    external: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names = [node.module] if node.module else [alias.name for alias in node.names]
            if node.level == 1:
                siblings.update(name.split(".")[0] for name in names)
            elif node.level:
                local.update(name.split(".")[0] for name in names)
            elif node.module:
                external.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            external.update(alias.name.split(".")[0] for alias in node.names)
    return siblings, local, external


@pytest.mark.parametrize("module", MODULES + SESSIONS)
def test_only_the_parser_imports_lark(module: str) -> None:
    _, external = imports_of(module)
    assert ("lark" in external) == (module == "parser")


# Heavier libraries stay behind the few modules that need them.
IMPORTERS = {
    "jinja2": {"jinja_filters", "jinja_mode", "jinja_sandbox", "report"},
    "pydantic": {"agents", "sessions/base"},
    "sqlalchemy": {"sessions/sql"},
    # Only the snapshot plugin: pytest_entry (the pytest11 entry point) loads it when syrupy is installed.
    "syrupy": {"pytest_plugin"},
}


@pytest.mark.parametrize("library", sorted(IMPORTERS))
def test_libraries_are_imported_only_where_needed(library: str) -> None:
    importers = {module for module in MODULES + SESSIONS if library in imports_of(module)[1]}
    assert importers == IMPORTERS[library]


@pytest.mark.parametrize("module", sorted(ALLOWED))
def test_lower_stages_import_only_what_comes_before(module: str) -> None:
    local, _ = imports_of(module)
    assert local <= ALLOWED[module], f"{module} imports {sorted(local - ALLOWED[module])}"


def test_renderer_never_imports_sessions() -> None:
    local, _ = imports_of("render")
    assert not local & {"sessions", "state", "contexts", "providers", "cli", "lint"}


def test_every_module_of_the_sessions_layer_has_its_place() -> None:
    assert set(SESSIONS) <= set(ALLOWED)
    assert set(MOVED) <= set(MODULES)


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_the_old_module_paths_are_the_moved_modules(old: str, new: str) -> None:
    """`import templating.state` (and the others) gives the module itself, so a monkeypatch reaches its users."""
    code = (
        f"import importlib; old = importlib.import_module('templating.{old}'); "
        f"new = importlib.import_module('templating.{new.replace('/', '.')}'); "
        "assert old is new, (old, new); print(sorted(n for n in new.__all__ if not hasattr(old, n)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=tempfile.gettempdir()
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_python_sources_sit_on_the_linter() -> None:
    """`pysource` (instructions inside .py files) reads templates and lints them; of the top-level modules
    only `inputs` (reading a `.py` file as Python does) uses it, the lint package does the rest."""
    local: set[str] = set()
    external: set[str] = set()
    for layer in PYSOURCE_LAYERS:
        _, imported, libraries = pysource_imports(layer)
        local |= imported
        external |= libraries
    assert local <= {"errors", "jinja_mode", "lint", "nodes", "template"}
    assert {module for module in MODULES if "pysource" in imports_of(module)[0]} == {"inputs"}
    assert not external & {"pydantic", "lark", "jinja2"}


def test_every_module_of_the_python_source_scanner_has_its_layer() -> None:
    assert sorted(p.stem for p in PYSOURCE.glob("*.py")) == sorted(PYSOURCE_LAYERS)


@pytest.mark.parametrize("layer", PYSOURCE_LAYERS)
def test_the_python_source_scanner_imports_only_its_earlier_layers(layer: str) -> None:
    siblings, _, _ = pysource_imports(layer)
    earlier = set(PYSOURCE_LAYERS[: PYSOURCE_LAYERS.index(layer)])
    assert siblings <= earlier, f"pysource/{layer} imports {sorted(siblings - earlier)}"


@pytest.mark.parametrize("module", CORE)
def test_the_core_never_imports_state_sessions_or_contexts(module: str) -> None:
    local, external = imports_of(module)
    assert not local & {"state", "sessions", "contexts"}
    assert "pydantic" not in external


def test_the_core_imports_without_pydantic_or_jinja2() -> None:
    """`import templating` (the CLI, the pytest plugin) loads the heavier parts only when used."""
    code = (
        "import sys, templating; "
        "names = ('pydantic', 'jinja2', 'templating.sessions', 'sqlalchemy'); "
        "print(sorted(m for m in names if m in sys.modules)); "
        "templating.Agent; templating.jinja; templating.Session; templating.InMemorySessionService; "
        "print(sorted(m for m in names if m in sys.modules)); "
        "templating.DatabaseSessionService; "
        "print(sorted(m for m in names if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tempfile.gettempdir()
    )
    loaded = ["jinja2", "pydantic", "templating.sessions"]
    assert result.stdout.splitlines() == ["[]", str(loaded), str(sorted([*loaded, "sqlalchemy"]))]


def test_every_public_name_resolves_and_unknown_names_do_not() -> None:
    for name in templating.__all__:
        assert getattr(templating, name) is not None, name
    assert set(templating.__all__) <= set(dir(templating))
    with pytest.raises(AttributeError, match="module 'templating' has no attribute 'Nope'"):
        templating.Nope  # noqa: B018


@pytest.mark.parametrize(
    "code",
    [
        "from templating import JinjaError, jinja; assert callable(jinja)",
        "import templating.jinja_mode, templating; assert callable(templating.jinja)",
        "from templating import *; assert callable(jinja) and callable(lint) and isinstance(Agent, type)",
        "import templating.lint, templating; assert callable(templating.lint)",
        "import pickle, templating; s = templating.State({'a': 1}); assert pickle.loads(pickle.dumps(s)).get('a') == 1",
    ],
    ids=["name-after-sibling", "after-submodule-import", "star-import", "lint-function", "pickle-lazy-class"],
)
def test_lazy_names_resolve_to_the_objects_in_any_order(code: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=tempfile.gettempdir()
    )
    assert result.returncode == 0, result.stderr


def test_type_checkers_still_see_misspelt_public_names(tmp_path: Path) -> None:
    # The lazy __getattr__ exists only at run time, so mypy keeps rejecting names that do not exist.
    args = ["--strict", "--cache-dir", str(tmp_path / "cache"), "-c"]
    good = subprocess.run(
        [sys.executable, "-m", "mypy", *args, "from templating import Runner, Template"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    bad = subprocess.run(
        [sys.executable, "-m", "mypy", *args, "from templating import Templat"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert good.returncode == 0, good.stdout
    assert bad.returncode == 1
    assert 'Module "templating" has no attribute "Templat"; maybe "Template"?' in bad.stdout
