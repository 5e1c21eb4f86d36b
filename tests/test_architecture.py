"""The package's structure: every module imports under its own path, no public name is a submodule's, the
layers (each module imports only its own layer or those below), the order within a package, which modules
load the heavier libraries, and what each command and public name loads when first used."""

from __future__ import annotations

import ast
import functools
import pkgutil
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import missing_sql_extra, skip_or_fail

import templating

PACKAGE = Path(__file__).resolve().parent.parent / "templating"


# --- the modules and their imports ----------------------------------------------------------------------------------
#
# Every `import` and `from ... import` anywhere in a module counts: at module level, inside a function (imported
# late, but imported) and under `if TYPE_CHECKING:` (no import at run time, but the same coupling). Importing
# `templating.linter.util` from outside `templating.linter` first runs `templating/linter/__init__.py`: that counts
# as importing what that file imports when it runs (its imports at module level, outside `if TYPE_CHECKING:`;
# for the linter, the lazy-names helper), not the public names it only lists, which load when first used.


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


ALL_MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}
PACKAGES = {name for name, path in ALL_MODULES.items() if path.name == "__init__.py"}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The dotted names `node` (in `module`) imports: modules of ours, or other top-level modules."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".") if module in PACKAGES else module.split(".")[:-1]
        package = package[: len(package) - node.level + 1]
        base = ".".join([*package, base] if base else package)
    # `from pkg import name`: a submodule when one is called so, else a name defined in pkg
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in ALL_MODULES else base for a in node.names]


def _imports(module: str, *, at_import: bool = False) -> list[str]:
    """Every dotted name `module` imports; `at_import`: only those it imports when it runs (module level,
    outside `if TYPE_CHECKING:`)."""
    tree = ast.parse(ALL_MODULES[module].read_text(encoding="utf-8"))
    found: list[str] = []

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.Import | ast.ImportFrom):
                found.extend(_targets(module, node))
            elif isinstance(node, ast.If) and not _is_type_checking(node.test):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                for block in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                    visit(block)

    if at_import:
        visit(tree.body)
    else:
        found = [t for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom) for t in _targets(module, n)]
    return found


@functools.cache
def _runs_at_import(package: str) -> frozenset[str]:
    """The modules of ours that importing `package` (its `__init__.py`) imports when it runs."""
    return frozenset(t for t in _imports(package, at_import=True) if t in ALL_MODULES)


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """Each module of `templating` (dotted) -> the modules of `templating` it imports."""
    graph: dict[str, set[str]] = {}
    for module in ALL_MODULES:
        edges: set[str] = set()
        for target in _imports(module):
            if target not in ALL_MODULES and target.split(".")[0] == "templating":
                target = target.rpartition(".")[0]  # `import templating.x.name`: never written, but safe
            if target not in ALL_MODULES:
                continue
            edges.add(target)
            parts = target.split(".")
            for n in range(2, len(parts)):  # the packages run on the way, from outside (the root facade left out)
                package = ".".join(parts[:n])
                if not (module == package or module.startswith(package + ".")):
                    edges |= _runs_at_import(package)
        edges.discard(module)
        graph[module] = edges
    return graph


@functools.cache
def libraries() -> dict[str, set[str]]:
    """Each module of `templating` -> the top-level names of the other modules it imports (stdlib, third party)."""
    return {
        module: {t.split(".")[0] for t in _imports(module) if t.split(".")[0] != "templating" and t}
        for module in ALL_MODULES
    }


def test_the_import_graph_sees_every_kind_of_import() -> None:
    graph = import_graph()
    assert "templating.pysource" in graph["templating.inputs"]  # inside a function
    assert "templating.pysource" in graph["templating.linter.result"]  # under TYPE_CHECKING
    assert {"templating.linter", "templating.linter.engine", "templating.linter.run"} <= graph["templating"]
    # from outside the linter, `from ..linter.util import x` runs linter/__init__.py: what it runs counts ...
    assert "templating._lazy" in graph["templating.lsp.folders"]
    # ... not the names it lists (each loaded when first used)
    assert "templating.linter.run" not in graph["templating.linter.util"]
    assert "templating.linter.check" in graph["templating.linter.rules.python"]
    assert _runs_at_import("templating.linter") == {"templating._lazy"}
    assert _runs_at_import("templating.sessions.sql") == {
        "templating.sessions.sql.driver",
        "templating.sessions.sql.schema",
        "templating.sessions.sql.service",
    }


# --- every module, by its path and as an attribute; no public name is also a submodule's ----------------------------

# Modules that need an extra to import: without it, they are left out (CI installs every extra).
EXTRAS = {"pygls": "lsp", "lsprotocol": "lsp", "syrupy": "pytest", "sqlalchemy": "sql"}

WALK = f"""
import importlib, pkgutil, sys, types
import templating

walked = pkgutil.walk_packages(templating.__path__, "templating.")
names = sorted(m.name for m in walked if m.name != "templating.__main__")
order = names if sys.argv[1] == "forward" else names[::-1]
problems, loaded = [], []
for name in order:
    try:
        exec(f"import {{name}} as module")
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in {sorted(EXTRAS)!r}:
            continue
        raise
    loaded.append(name)
    if module is not sys.modules[name]:
        problems.append(f"import {{name}} as m: {{module!r}}")
for name in loaded:  # once all are imported, whatever the order: each module is the attribute of its path
    found = templating
    for part in name.split(".")[1:]:
        found = getattr(found, part)
    if found is not sys.modules[name]:
        problems.append(f"{{name}} as an attribute: {{found!r}}")
for name in ["templating", *loaded]:
    package = sys.modules[name]
    if hasattr(package, "__path__"):
        inner = {{m.name for m in pkgutil.iter_modules(package.__path__)}}
        public = set(getattr(package, "__all__", ())) | set(getattr(package, "_LAZY", ()))
        for clash in sorted(public & inner):
            problems.append(f"{{name}}.{{clash}}: a public name and a submodule")
print(sorted(names))
print(problems)
"""


@pytest.mark.parametrize("order", ["forward", "reverse"])
def test_every_module_imports_by_its_path_and_is_the_attribute_of_that_path(order: str) -> None:
    """`import templating.linter.fixes as f` and `templating.linter.fixes` give the module, whatever was imported
    before, for every module (`pkgutil.walk_packages`); no public name of a package (its `__all__` or lazy names)
    is also the name of one of its submodules, which would stand in the way of one or the other."""
    result = subprocess.run(
        [sys.executable, "-c", WALK, order], capture_output=True, text=True, check=False, cwd=tempfile.gettempdir()
    )
    assert result.returncode == 0, result.stderr
    walked, problems = (ast.literal_eval(line) for line in result.stdout.splitlines())
    assert problems == []
    assert walked == sorted(set(ALL_MODULES) - {"templating", "templating.__main__"})


# --- the layers ------------------------------------------------------------------------------------------------------
#
# The layers, lowest first: a module imports only from its own layer or the ones below. A new module needs a place
# here (the test below names it). Data flows up: templates are parsed and rendered from a read-only mapping (core),
# which sessions supply; Python sources are read into instructions; the project model says which files, rules and
# schemas a run has; the agent model (templating/agent_model/) what each agent is given and reads; the lint
# rules check instructions against both, the engine runs them over a project, outputs format what it found and the
# lint run is `templating lint` as one object. The Python API, the language server and the command line (with the
# pytest plugin) sit on top and hold no lint logic of their own.
LAYERS: list[tuple[str, set[str]]] = [
    (
        "core: parse and render",
        {"_lazy", "_collector", "nodes", "schema", "errors", "parser", "places", "renderer", "template", "convert"},
    ),
    ("sessions: state and the services that store it", {"sessions", "sessions.*"}),
    ("Jinja2 mode", {"jinja_mode", "jinja_mode.*"}),
    ("reading Python sources, and input files", {"pysource", "pysource.*", "inputs"}),
    ("the findings' vocabulary: rules' registry, state schemas", {"linter.registry", "linter.util", "linter.schema"}),
    (
        "the project model: files, configuration, what reaches what, the cache",
        {"linter.globs", "linter.config", "linter.discovery", "linter.project", "linter.reach", "linter.result"}
        | {"linter.cache", "linter.cache_dir", "linter.cached_result", "linter.selection", "linter.cold"}
        | {"linter.import_groups", "linter.import_paths"}
        | {"linter.prefilter"},
    ),
    ("the agent model", {"agent_model", "agent_model.*"}),
    (
        "lint rules",
        {"linter.source", "linter.rules", "linter.rules.*", "linter.check", "linter.adk_schema"},
    ),
    (
        "lint engine",
        {"linter.findings", "linter.suppress", "linter.incremental", "linter.engine", "linter.baseline"}
        | {"linter.fixes", "linter.fix_regions", "linter.fix_run", "linter.pick"},
    ),
    ("lint outputs", {"linter.outputs", "linter.outputs.*"}),
    ("the lint run, and the linter's public names", {"linter.run", "linter.run_output", "linter"}),
    ("the Python API: providers, agents, the runner, templating's public names", {"providers", "agents", "runner", ""}),
    ("the preview: google-adk's request for each agent, previews compared", {"preview", "preview.*"}),
    ("the language server", {"lsp", "lsp.*"}),
    (
        "the command line and the pytest plugin",
        {"cli", "cli.*", "__main__", "pytest_plugin", "pytest_entry", "snapshot_diff"},
    ),
]


def layer_of(module: str) -> int | None:
    """The index in LAYERS of `module` (dotted, `templating.` included), None when it has no place."""
    name = module.removeprefix("templating").removeprefix(".")
    for number, (_, members) in enumerate(LAYERS):
        for member in members:
            if name == member or (member.endswith(".*") and name.startswith(member[:-1])):
                return number
    return None


def test_every_module_has_its_layer() -> None:
    assert [module for module in ALL_MODULES if layer_of(module) is None] == []
    seen: dict[str, str] = {}
    for name, members in LAYERS:
        for member in members:
            assert member not in seen, f"{member!r} is in two layers: {seen[member]!r} and {name!r}"
            seen[member] = name


def test_the_agent_model_has_its_place() -> None:
    """`templating/agent_model/`: between the project model, which it reads, and the lint rules."""
    model = layer_of("templating.agent_model.graph")
    assert model is not None
    assert layer_of("templating.agent_model") == model
    assert layer_of("templating.linter.selection") < model < layer_of("templating.linter.rules.python")  # type: ignore[operator]


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


def test_a_layer_violation_is_seen() -> None:
    """The check above on a module of the core that would import the linter, and on one that would not."""
    here = layer_of("templating.renderer")
    assert here is not None
    assert [m for m in ("templating.linter.engine", "templating.nodes") if (layer_of(m) or 0) > here] == [
        "templating.linter.engine"
    ]


# Circles between modules that are allowed, each with its reason. Empty: none is needed.
ALLOWED_CYCLES: list[tuple[set[str], str]] = []


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


def test_no_module_imports_itself_through_others() -> None:
    cycles = [set(component) for component in import_cycles(import_graph())]
    allowed = [members for members, _ in ALLOWED_CYCLES]
    assert [sorted(c) for c in cycles if c not in allowed] == []


def test_a_circle_is_found_and_named() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e", "d"}}
    assert import_cycles(graph) == [["a", "b", "c"]]


# --- the order within a package: each module imports only those before it (of the same list) --------------------

ORDERS: dict[str, list[str]] = {
    "core": [
        *("_lazy", "_collector", "nodes", "schema", "errors", "parser", "places", "renderer", "template", "convert"),
    ],
    # the value contract, the State view, the session and event model, the service base and its rules, the
    # services, the agent contexts over a session, then the package's lazy names
    "sessions": [
        *("sessions.values", "sessions.state", "sessions.models", "sessions.base", "sessions.memory"),
        *("sessions.sql.driver", "sessions.sql.schema", "sessions.sql.state_rows", "sessions.sql.create_sql"),
        *("sessions.sql.statements", "sessions.sql.service"),
        *("sessions.sql", "sessions.contexts", "sessions"),
    ],
    "jinja_mode": [
        *("jinja_mode.budget", "jinja_mode.filters", "jinja_mode.views", "jinja_mode.sandbox", "jinja_mode.mode"),
        "jinja_mode.reads",
        "jinja_mode",
    ],
    "pysource": [
        *("pysource.reading", "pysource.positions", "pysource.found", "pysource.models", "pysource.syntax"),
        *("pysource.imports", "pysource.resolve", "pysource.agent_refs", "pysource.agent_functions"),
        *("pysource.agents", "pysource.agent_config", "pysource.visitor"),
        "pysource",
    ],
    "cli": [
        *("cli.common", "cli.render", "cli.keys", "cli.convert", "cli.lint", "cli.preview", "cli.diff", "cli.lsp"),
        *("cli.parser", "cli"),
    ],
    # the data, the agents built from the scan, the apps, both in one graph, a Workflow's order, the initial state,
    # availability, enforced schemas, the model, what changed between two models
    "agent_model": [
        *("agent_model.facts", "agent_model.builder", "agent_model.apps", "agent_model.graph"),
        *("agent_model.workflow", "agent_model.initial", "agent_model.order"),
        *("agent_model.enforced", "agent_model.model", "agent_model.changes", "agent_model"),
    ],
    # the data, what is kept between previews (requests, then agent objects), google-adk's request for one agent,
    # the walk over an app's tree, importing an app, the app read from its code, the partial preview without
    # google-adk, the formats, making a preview, one from facts a caller holds (the language server's), a
    # revision's files from git, two previews compared, then the package's names
    "preview": [
        *("preview.result", "preview.reuse", "preview.trees", "preview.assemble", "preview.walk", "preview.load"),
        "preview.static",
        "preview.partial",
        *("preview.formats", "preview.build", "preview.shared", "preview.git", "preview.diff", "preview"),
    ],
}
# The packages whose every module is in their order (a new module of theirs needs its place there).
WHOLE = {
    "sessions": "sessions",
    "jinja_mode": "jinja_mode",
    "pysource": "pysource",
    "cli": "cli",
    "agent_model": "agent_model",
    "preview": "preview",
}


@pytest.mark.parametrize(
    ("order", "module"), [(name, module) for name, modules in ORDERS.items() for module in modules]
)
def test_a_module_imports_only_those_before_it_in_its_package(order: str, module: str) -> None:
    modules = [f"templating.{m}" if m else "templating" for m in ORDERS[order]]
    here = modules.index(f"templating.{module}")
    later = set(modules[here + 1 :])
    assert f"templating.{module}" in ALL_MODULES
    assert not import_graph()[f"templating.{module}"] & later, f"{module} imports a module after it in {order}"


@pytest.mark.parametrize(("order", "package"), sorted(WHOLE.items()))
def test_every_module_of_an_ordered_package_has_its_place(order: str, package: str) -> None:
    inside = {m for m in ALL_MODULES if m == f"templating.{package}" or m.startswith(f"templating.{package}.")}
    assert inside == {f"templating.{m}" for m in ORDERS[order]}


def test_the_renderer_never_imports_sessions() -> None:
    """The renderer reads a mapping: the core never imports the sessions, which supply state from above."""
    core = {f"templating.{m}" for m in ORDERS["core"]}
    assert import_graph()["templating.renderer"] <= {"templating.nodes", "templating.errors"}
    assert not {other for m in core for other in import_graph()[m] if other.startswith("templating.sessions")}


def test_python_sources_are_read_with_the_core_alone() -> None:
    """`pysource` reads Python sources and templates, and nothing of the linter: the rules over what it finds
    are the linter's."""
    scanner = {m for m in ALL_MODULES if m == "templating.pysource" or m.startswith("templating.pysource.")}
    reached = {other for m in scanner for other in import_graph()[m]} - scanner
    assert reached <= {f"templating.{m}" for m in ORDERS["core"]}
    assert not {name for m in scanner for name in libraries()[m]} & {"pydantic", "lark", "jinja2"}


# --- the heavier libraries stay behind the few modules that need them --------------------------------------------

IMPORTERS = {
    "lark": {"parser"},
    "jinja2": {
        *("jinja_mode.filters", "jinja_mode.mode", "jinja_mode.reads", "jinja_mode.sandbox", "jinja_mode.views"),
        "linter.outputs.html",
    },
    "pydantic": {"agents", "sessions.models"},
    "sqlalchemy": {
        *("sessions.sql.driver", "sessions.sql.schema", "sessions.sql.state_rows", "sessions.sql.statements"),
        "sessions.sql.service",
    },
    # Only the snapshot plugin: pytest_entry (the pytest11 entry point) loads it when syrupy is installed.
    "syrupy": {"pytest_plugin"},
    # google-adk (the adk extra): only the preview, inside the functions that make one
    "google": {"preview.assemble", "preview.walk", "preview.load", "preview.static"},
}


@pytest.mark.parametrize("library", sorted(IMPORTERS))
def test_libraries_are_imported_only_where_needed(library: str) -> None:
    importers = {module for module, names in libraries().items() if library in names}
    assert importers == {f"templating.{m}" for m in IMPORTERS[library]}


# --- what importing loads: each public name, each command, only what it uses ----------------------------------------

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
        "templating._collector",
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
        # an ADK project without a jinja(...) instruction: its agent model is built without Jinja2
        (["lint", "PROJECT", "--no-cache"], ("templating.providers", "templating.sessions", "jinja2", "tempfile")),
    ],
    ids=["version", "keys", "render", "convert", "lint", "lint-project"],
)
def test_each_command_imports_only_what_it_uses(argv: list[str], unused: tuple[str, ...]) -> None:
    files = {
        "TEMPLATE": EXAMPLES / "support_agent.txt",
        "STATE": EXAMPLES / "state.json",
        "ADK": EXAMPLES / "adk_instruction.txt",
        "PROJECT": EXAMPLES / "adk_project",
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


# --- the test suite's own guards ----------------------------------------------------------------------------------


def test_no_test_looks_up_a_dotted_module_with_find_spec_outside_conftest() -> None:
    """`find_spec` of `google.adk` raises ModuleNotFoundError when no `google` package is installed at all (the
    README's `.[dev]` install): a skip guard written that way errors instead of skipping. conftest's `installed()`
    and `require_adk()` are the guards to use."""
    tests = Path(__file__).resolve().parent
    dotted = re.compile(r"find_spec\(\s*[\"'][A-Za-z_]+\.[A-Za-z_.]+[\"']\s*\)")
    offenders = []
    for path in sorted(tests.glob("*.py")):
        if path.name == "conftest.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if dotted.search(line) and 'find_spec("google") is not None and' not in line:
                offenders.append(f"{path.name}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
