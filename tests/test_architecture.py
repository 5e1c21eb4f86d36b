"""Import direction: data flows grammar -> parser -> nodes -> render, with everything else on top."""

from __future__ import annotations

import ast
import functools
import pkgutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import missing_sql_extra, skip_or_fail

import templating

PACKAGE = Path(__file__).resolve().parent.parent / "templating"
MODULES = sorted(p.stem for p in PACKAGE.glob("*.py"))
# The sessions layer (templating/sessions/), its modules named "sessions/<module>".
SESSIONS = sorted(str(p.relative_to(PACKAGE).with_suffix("")) for p in (PACKAGE / "sessions").rglob("*.py"))
# Jinja2 mode (templating/jinja_mode/), its modules named "jinja_mode/<module>".
JINJA = sorted(f"jinja_mode/{p.stem}" for p in (PACKAGE / "jinja_mode").glob("*.py"))

# What each lower-stage module may import from the package. Modules not listed sit on top.
ALLOWED: dict[str, set[str]] = {
    "nodes": set(),
    "_lazy": set(),  # the lazy public names of the packages (PEP 562): imports nothing of ours
    "errors": {"nodes"},
    "parser": {"nodes"},
    "renderer": {"nodes", "errors"},
    "template": {"nodes", "errors", "parser", "renderer"},
    # The sessions layer supplies state from above; nothing below it imports it. Within it: the state
    # contract, then the shared rules, then the services and the contexts, then the package's lazy names.
    "sessions/values": {"errors", "nodes"},
    "sessions/state": {"nodes", "sessions/values"},
    "sessions/models": {"nodes", "sessions/values"},
    "sessions/base": {"errors", "nodes", "sessions/models", "sessions/values"},
    "sessions/memory": {"sessions/base", "sessions/models", "sessions/values"},
    "sessions/sql/driver": {"errors"},
    "sessions/sql/schema": {"sessions/sql/driver"},
    "sessions/sql/statements": {"sessions/base", "sessions/models", "sessions/sql/driver", "sessions/sql/schema"},
    "sessions/sql/service": {"errors", "sessions/base", "sessions/models", "sessions/sql/driver"}
    | {"sessions/sql/schema", "sessions/sql/statements"},
    "sessions/sql/__init__": {"sessions/sql/driver", "sessions/sql/schema", "sessions/sql/service"},
    "sessions/contexts": {"renderer", "template", "sessions/models", "sessions/state"},
    "sessions/__init__": {"_lazy", "sessions/base", "sessions/contexts", "sessions/memory", "sessions/sql"}
    | {"sessions/models", "sessions/state", "sessions/values"},
}
CORE = ("nodes", "errors", "parser", "renderer", "template")


def imports_of(module: str) -> tuple[set[str], set[str]]:
    """(package modules imported, top-level third-party/stdlib modules imported). A module of the sessions
    package is named "sessions/<module>", as are its siblings it imports."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    package = module.split("/")[:-1]
    local: set[str] = set()
    external: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                names = [node.module.split(".")[0]] if node.module else [alias.name for alias in node.names]
                base = package[: len(package) - node.level + 1]
                local.update("/".join([*base, name]) for name in names)
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
PYSOURCE_LAYERS = ["reading", "positions", "found", "models", "syntax", "imports", "resolve", "visitor", "__init__"]


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


@pytest.mark.parametrize("module", MODULES + SESSIONS + JINJA)
def test_only_the_parser_imports_lark(module: str) -> None:
    _, external = imports_of(module)
    assert ("lark" in external) == (module == "parser")


# Heavier libraries stay behind the few modules that need them.
IMPORTERS = {
    "jinja2": {"jinja_mode/filters", "jinja_mode/mode", "jinja_mode/sandbox"},
    "pydantic": {"agents", "sessions/models"},
    "sqlalchemy": {"sessions/sql/driver", "sessions/sql/schema", "sessions/sql/statements", "sessions/sql/service"},
    # Only the snapshot plugin: pytest_entry (the pytest11 entry point) loads it when syrupy is installed.
    "syrupy": {"pytest_plugin"},
}


@pytest.mark.parametrize("library", sorted(IMPORTERS))
def test_libraries_are_imported_only_where_needed(library: str) -> None:
    importers = {module for module in MODULES + SESSIONS + JINJA if library in imports_of(module)[1]}
    assert importers == IMPORTERS[library]


@pytest.mark.parametrize("module", sorted(ALLOWED))
def test_lower_stages_import_only_what_comes_before(module: str) -> None:
    local, _ = imports_of(module)
    assert local <= ALLOWED[module], f"{module} imports {sorted(local - ALLOWED[module])}"


def test_renderer_never_imports_sessions() -> None:
    local, _ = imports_of("renderer")
    assert not local & {"sessions", "state", "contexts", "providers", "cli", "linter"}


def test_every_module_of_the_sessions_layer_has_its_place() -> None:
    assert set(SESSIONS) <= set(ALLOWED)


def test_python_sources_sit_below_the_linter() -> None:
    """`pysource` (instructions inside .py files) reads Python sources and templates, and nothing of the linter:
    the rules over what it finds are the linter's. Of the top-level modules only `inputs` (reading a `.py` file
    as Python does) uses it; the lint package does the rest."""
    local: set[str] = set()
    external: set[str] = set()
    for layer in PYSOURCE_LAYERS:
        _, imported, libraries = pysource_imports(layer)
        local |= imported
        external |= libraries
    assert local <= {"errors", "nodes", "places", "schema", "template"}
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


LOADED = ("pydantic", "jinja2", "templating.sessions", "sqlalchemy")  # the modules the next tests watch


def loaded_after(*steps: str) -> list[list[str]]:
    """Which of `LOADED` a fresh interpreter holds after `import templating`, then after each step."""
    show = f"print(sorted(m for m in {LOADED!r} if m in sys.modules))"
    code = "; ".join(["import sys, templating", show, *(f"{step}; {show}" for step in steps)])
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tempfile.gettempdir()
    )
    return [ast.literal_eval(line) for line in result.stdout.splitlines()]


def test_the_core_imports_without_pydantic_or_jinja2() -> None:
    """`import templating` (the CLI, the pytest plugin) loads the heavier parts only when used."""
    used = "templating.Agent; templating.jinja; templating.Session; templating.InMemorySessionService"
    assert loaded_after(used) == [[], ["jinja2", "pydantic", "templating.sessions"]]


def test_sqlalchemy_is_imported_only_for_the_database_service() -> None:
    missing = missing_sql_extra()  # without SQLAlchemy there is nothing to load
    if missing:
        skip_or_fail(missing)
    used = "templating.Agent; templating.jinja; templating.Session; templating.InMemorySessionService"
    assert loaded_after(used, "templating.DatabaseSessionService")[1:] == [
        ["jinja2", "pydantic", "templating.sessions"],
        ["jinja2", "pydantic", "sqlalchemy", "templating.sessions"],
    ]


def test_import_templating_leaves_the_walk_over_python_code_unloaded() -> None:
    """The linter's configuration and types import `pysource`'s data types; `scan` (the walk, the resolver, the
    model reader) is imported when first used, so the command line and the pytest plugin start without it."""
    code = (
        "import sys, templating; from templating import pysource; "
        "walk = ('templating.pysource.visitor', 'templating.pysource.resolve', 'templating.pysource.models'); "
        "print(sorted(m for m in walk if m in sys.modules)); pysource.scan; "
        "print(sorted(m for m in walk if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tempfile.gettempdir()
    )
    walk = ["templating.pysource.models", "templating.pysource.resolve", "templating.pysource.visitor"]
    assert result.stdout.splitlines() == ["[]", str(walk)]


def modules_loaded(code: str) -> list[str]:
    """The `templating` modules (and the heavier libraries) a fresh interpreter holds after running `code`."""
    show = (
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('templating', 'lark', 'pydantic', 'jinja2', 'tomllib', 'sqlalchemy', 'tempfile')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", f"import sys\n{code}\n{show}"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tempfile.gettempdir(),
    )
    return ast.literal_eval(result.stdout.splitlines()[-1])


def test_import_templating_loads_nothing_else() -> None:
    """Every public name is imported on first use: the package alone costs a command nothing."""
    # templating._lazy: the helper of the lazy names, standard library only
    assert modules_loaded("import templating") == ["templating", "templating._lazy"]
    assert modules_loaded("import templating; templating.Template") == [
        "templating",
        "templating._lazy",
        "templating.errors",
        "templating.nodes",
        "templating.parser",
        "templating.renderer",
        "templating.template",
    ]


EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
# The linter, the renderer's providers, the converter, the reader of Python code, the configuration's reader.
LINTER = (
    "templating.linter.engine",
    "templating.linter.check",
    "templating.linter.config",
    "templating.pysource",
    "tomllib",
)
RENDERER = ("templating.template", "templating.parser", "templating.renderer")


@pytest.mark.parametrize(
    ("argv", "unused"),
    [
        (["--version"], (*LINTER, *RENDERER, "templating.convert", "templating.providers")),
        (["keys", "TEMPLATE"], (*LINTER, "templating.convert", "templating.providers")),
        (["render", "TEMPLATE", "--state", "STATE"], (*LINTER, "templating.convert", "templating.providers")),
        (["convert", "ADK", "--from", "adk"], (*LINTER, "templating.providers")),
        # without the cache, nothing is written: no temporary files
        (
            ["lint", "TEMPLATE", "--no-cache"],
            ("templating.providers", "templating.sessions", "pydantic", "jinja2", "lark", "tempfile"),
        ),
    ],
    ids=["version", "keys", "render", "convert", "lint"],
)
def test_each_command_imports_only_what_it_uses(argv: list[str], unused: tuple[str, ...]) -> None:
    files = {
        "TEMPLATE": EXAMPLES / "support_agent.txt",
        "STATE": EXAMPLES / "state.json",
        "ADK": EXAMPLES / "adk_instruction.txt",
    }
    args = [str(files[a]) if a in files else a for a in argv]
    code = (
        "import contextlib, io\nfrom templating.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        f"    assert main({args!r}) in (0, 1)"
    )
    loaded = modules_loaded(code)
    assert "templating.cli" in loaded
    assert [m for m in loaded if m.startswith(unused)] == []


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
        "import templating.linter, templating; assert callable(templating.lint)",
        "import pickle, templating; s = templating.State({'a': 1}); assert pickle.loads(pickle.dumps(s)).get('a') == 1",
        # the package `templating.linter` loaded first, by one of its modules: `templating.lint` stays the function
        "import templating.linter.engine, templating; from templating.linter.check import lint; "
        "assert templating.lint is lint",
        "import templating.linter.registry; from templating import lint; "
        "from templating.linter.check import lint as f; assert lint is f",
        "from templating.linter import *; assert callable(lint) and isinstance(Diagnostic, type) and DOCS_URL",
        "import sys, templating.linter.registry; L = sys.modules['templating.linter']; "
        "assert L.Diagnostic is sys.modules['templating.linter.registry'].Diagnostic; "
        "assert set(L.__all__) <= set(dir(L)); "
        "assert all(getattr(L, name) is not None for name in L.__all__)",
        "import sys, templating.linter.registry; L = sys.modules['templating.linter']; "
        "assert not hasattr(L, 'Nope') and not hasattr(sys.modules['templating'], 'Nope')",
        "import templating; assert templating.nodes.Span and templating.errors.TemplatingError",
    ],
    ids=[
        "name-after-sibling",
        "after-submodule-import",
        "star-import",
        "lint-function",
        "pickle-lazy-class",
        "lint-function-after-a-lint-module",
        "from-import-lint-after-a-lint-module",
        "lint-package-star-import",
        "lint-package-names",
        "unknown-names",
        "submodule-as-attribute",
    ],
)
def test_lazy_names_resolve_to_the_objects_in_any_order(code: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=tempfile.gettempdir()
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_type_checkers_still_see_misspelt_public_names(tmp_path: Path) -> None:
    # The lazy __getattr__ exists only at run time, so mypy keeps rejecting names that do not exist.
    # What decides that is templating/__init__.py alone: mypy reads it and skips the modules it imports
    # (their names are then of type Any, but they exist), a tenth of the work of checking the package.
    inner = sorted(m.name for m in pkgutil.iter_modules(templating.__path__))
    skipped = ",".join(f"templating.{name},templating.{name}.*" for name in inner)
    config = tmp_path / "mypy.ini"
    config.write_text(f"[mypy]\nstrict = True\n\n[mypy-{skipped}]\nfollow_imports = skip\n", encoding="utf-8")
    args = ["--config-file", str(config), "--cache-dir", str(tmp_path / "cache"), "-c"]
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
    assert bad.returncode == 1, bad.stdout
    assert 'Module "templating" has no attribute "Templat"; maybe "Template"?' in bad.stdout


# --- the whole package: one graph of imports, no circle, and layers ------------------------------------------------
#
# Every `import` and `from ... import` anywhere in a module counts: at module level, inside a function (imported
# late, but imported) and under `if TYPE_CHECKING:` (no import at run time, but the same coupling). Importing
# `templating.linter.util` from outside `templating.linter` runs `templating/linter/__init__.py` first, so it is an edge
# to the package too (the root package is the public facade every module sits under, and is left out of that).


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


ALL_MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _imported(module: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The package's modules `node` (in `module`) imports, each with the packages above it that it runs."""
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module.split(".") if ALL_MODULES[module].name == "__init__.py" else module.split(".")[:-1]
            package = package[: len(package) - node.level + 1]
            base = ".".join([*package, base] if base else package)
        # `from pkg import name`: a submodule when one is called so, else a name defined in pkg
        targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in ALL_MODULES else base for a in node.names]
    out: set[str] = set()
    for target in targets:
        parts = target.split(".")
        for n in range(2, len(parts) + 1):  # the packages it runs on the way (the root facade left out)
            name = ".".join(parts[:n])
            inside = module == name or module.startswith(name + ".")
            if name in ALL_MODULES and (n == len(parts) or not inside):
                out.add(name)
        if target == "templating":
            out.add(target)
    out.discard(module)
    return out


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """Each module of `templating` (dotted) -> the modules of `templating` it imports."""
    graph: dict[str, set[str]] = {}
    for module, path in ALL_MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[module] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                graph[module] |= _imported(module, node)
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for other in edges:
                if other not in index:
                    index[other] = low[other] = len(index)
                    stack.append(other)
                    on_stack.add(other)
                    work.append((other, iter(sorted(graph[other]))))
                    break
                if other in on_stack:
                    low[node] = min(low[node], index[other])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        cycles.append(sorted(component))
    return cycles


# The layers, lowest first: a module imports only from its own layer or the ones below. A new module needs a place
# here (the test below names it). `pysource` reads Python sources with the core alone; the linter's rules read what
# it finds; the engine runs the rules over a project; outputs format what the engine returns; the callers (command
# line, language server, pytest plugin) hold no lint logic.
LAYERS: list[tuple[str, set[str]]] = [
    (
        "core: parse, render, places, schema types",
        {"nodes", "errors", "parser", "renderer", "template", "convert", "places", "schema", "_lazy"},
    ),
    (
        "state, sessions, Jinja2 mode",
        {"sessions", "sessions.*", "jinja_mode", "jinja_mode.*"},
    ),
    ("reading Python sources", {"pysource", "pysource.*"}),
    ("reading input files", {"inputs"}),
    (
        "lint rules",
        {
            "linter.registry",
            "linter.util",
            "linter.source",
            "linter.schema",
            "linter.config",
            "linter.rules",
            "linter.rules.*",
        }
        | {"linter.check", "linter.adk_schema", "linter.globs"},
    ),
    (
        "lint engine",
        {
            "linter.discovery",
            "linter.project",
            "linter.reach",
            "linter.result",
            "linter.engine",
            "linter.pick",
        }
        | {"linter.cache", "linter.suppress", "linter.baseline", "linter.fixes"}
        | {"linter.selection", "linter.findings", "linter.incremental"},
    ),
    ("lint outputs", {"linter.outputs", "linter.outputs.*"}),
    ("the lint run, and the linter's public names", {"linter.run", "linter"}),
    ("the Python API", {"providers", "agents", "runner", ""}),
    ("callers", {"cli", "cli.*", "__main__", "lsp", "lsp.*", "pytest_plugin", "pytest_entry", "snapshot_diff"}),
]


def layer_of(module: str) -> int | None:
    """The index in LAYERS of `module` (dotted, `templating.` included), None when it has no place."""
    name = module.removeprefix("templating").removeprefix(".")
    for number, (_, members) in enumerate(LAYERS):
        for member in members:
            if name == member or (member.endswith(".*") and name.startswith(member[:-1])):
                return number
    return None


# Circles between modules that are allowed, each with its reason. Empty: none is needed, and pysource <-> lint,
# the one circle there was (16 modules), is gone for good.
ALLOWED_CYCLES: list[tuple[set[str], str]] = []


def test_the_import_graph_sees_every_kind_of_import() -> None:
    graph = import_graph()
    assert "templating.pysource" in graph["templating.inputs"]  # inside a function
    assert "templating.pysource" in graph["templating.linter.result"]  # under TYPE_CHECKING
    assert {"templating.linter", "templating.linter.engine"} <= graph["templating"]
    # from outside lint, `from ..lint.util import x` runs lint/__init__.py: an edge to the package too
    assert "templating.linter" in graph["templating.lsp.answers"]
    # from inside lint, the package is already running
    assert "templating.linter" not in graph["templating.linter.rules.python"]
    assert "templating.linter.check" in graph["templating.linter.rules.python"]


def test_no_module_imports_itself_through_others() -> None:
    cycles = [set(component) for component in import_cycles(import_graph())]
    allowed = [members for members, _ in ALLOWED_CYCLES]
    assert [sorted(c) for c in cycles if c not in allowed] == []


def test_a_circle_is_found_and_named() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e", "d"}}
    assert import_cycles(graph) == [["a", "b", "c"]]


def test_every_module_has_its_layer() -> None:
    assert [module for module in ALL_MODULES if layer_of(module) is None] == []
    seen: dict[str, str] = {}
    for name, members in LAYERS:
        for member in members:
            assert member not in seen, f"{member!r} is in two layers: {seen[member]!r} and {name!r}"
            seen[member] = name


@pytest.mark.parametrize("module", sorted(ALL_MODULES))
def test_a_module_imports_only_its_layer_or_lower(module: str) -> None:
    here = layer_of(module)
    assert here is not None
    above = {
        other: LAYERS[there][0]
        for other in import_graph()[module]
        if (there := layer_of(other)) is not None and there > here
    }
    assert above == {}, f"{module} ({LAYERS[here][0]}) imports from higher layers: {above}"


def test_reading_python_sources_imports_nothing_of_the_linter() -> None:
    graph = import_graph()
    scanner = [module for module in graph if (module + ".").startswith("templating.pysource.")]
    assert len(scanner) == len(PYSOURCE_LAYERS)
    reached = {other for module in scanner for other in graph[module]}
    assert not {other for other in reached if other.startswith(("templating.linter", "templating.lsp"))}
