"""What an agent call's keywords name, read in the scan's one walk: `Ref`s to agents, functions, classes, library
objects or builtins, resolved across modules as instructions are (a list followed through its names, a call of a
project function through its one `return`, `AgentTool`/`FunctionNode` through what they wrap), and the agent
calls and custom agent classes met on the way. Anything not readable without running the code is an unknown ref
with the reason. The base of the agent reader (`agents._AgentReader`)."""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field, replace

from .found import AgentKind, Instruction, Ref
from .positions import _Module
from .resolve import _Project
from .syntax import _MAX_HOPS, _chain, _describe, _final_return, _function_scope, _Scope, _short, _str_value

# google-adk's classes by their last name: what each call builds
_GOOGLE_KINDS: dict[str, AgentKind] = {
    "Agent": "llm",
    "LlmAgent": "llm",
    "SequentialAgent": "sequential",
    "ParallelAgent": "parallel",
    "LoopAgent": "loop",
    "Workflow": "workflow",
    "App": "app",
    "JoinNode": "join",
}
_RUNNERS = frozenset({"Runner", "InMemoryRunner"})


def node_id(module: _Module, node: ast.AST) -> str:
    """The stable identity of a call or definition: its file (resolved) and the offset where it starts."""
    return f"{module.key}@{module.offset(node.lineno, node.col_offset)}"  # type: ignore[attr-defined]


def _is_google(origin: str) -> bool:
    parts = origin.lstrip(".").split(".")
    return parts[0] == "google" and "adk" in parts


def _literal(node: ast.expr | None) -> tuple[bool, str | int | bool | float | None]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int | bool | float | type(None)):
        return True, node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        value = node.operand.value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return True, -value
    return False, None


@dataclass(slots=True)
class _Raw:
    """An agent call met, read into an `AgentCall` once the walk is done (its instructions are recorded by then)."""

    module: _Module
    call: ast.Call
    scope: _Scope | None
    kind: AgentKind
    cls: str
    bound: list[str] = field(default_factory=list)
    function: str | None = None


class _RefReader:
    """The state of one scan's agent reader (see `agents._AgentReader`) and what expressions in agent code name:
    the calls met in the walk, the functions and classes they name, and the refs to them."""

    def __init__(self, project: _Project) -> None:
        self.project = project
        self.raw: dict[str, _Raw] = {}
        self.wanted: list[tuple[_Module, ast.Call, _Scope | None]] = []
        self.defs: dict[str, tuple[_Module, ast.AST]] = {}  # function id -> (module, its definition)
        self.class_of: dict[str, str] = {}  # method id -> class id
        self.classes: dict[str, tuple[_Module, ast.ClassDef]] = {}
        self.is_agent_class: dict[int, bool] = {}  # id(ClassDef) -> derives from BaseAgent
        # id(argument or provider call) -> what the scan recorded, and whether templating renders it
        self.added: dict[int, tuple[Instruction | str, bool]] = {}
        self.sessions: list[tuple[_Module, ast.Call, tuple[str, ...] | None]] = []
        self.runner_calls: list[tuple[_Module, ast.Call, _Scope | None]] = []
        self.in_functions: dict[int, str] = {}  # id(function node) -> its id
        self.functions_wanted: list[str] = []
        # the names of the classes (of the scanned modules) that derive from BaseAgent: a call of any other
        # class is passed over without looking the class up (see `prepare`)
        self.agent_class_names: set[str] = set()
        self.owned_by: dict[str, dict[int, list[ast.AST]]] = {}  # module -> id(function) -> its own acted-on nodes

    def function_id(self, module: _Module, node: ast.AST) -> str:
        known = self.in_functions.get(id(node))
        if known is None:
            known = self.in_functions[id(node)] = node_id(module, node)
            self.defs.setdefault(known, (module, node))
        return known

    def agent_kind(self, module: _Module, call: ast.Call, origin: str | None) -> tuple[AgentKind, str] | None:
        """What `call` builds, if an agent (google-adk's, or a project class deriving from `BaseAgent`)."""
        if origin is not None and _is_google(origin):
            kind = _GOOGLE_KINDS.get(origin.rsplit(".", 1)[-1])
            return (kind, origin.lstrip(".")) if kind is not None else None
        found = self.project_class(module, call.func)
        if found is None:
            return None
        where, cls = found
        if not self.derives_from_agent(where, cls, 0):
            return None
        key = node_id(where, cls)
        self.classes[key] = (where, cls)
        return "custom", key

    def project_class(self, module: _Module, func: ast.expr) -> tuple[_Module, ast.ClassDef] | None:
        if isinstance(func, ast.Name):
            binding = module.bindings.get(func.id)
            if isinstance(binding, ast.ClassDef):
                return module, binding
            if not isinstance(binding, ast.ImportFrom):
                return None
        elif not isinstance(func, ast.Attribute):
            return None
        found = self.project.class_named(module, func)
        return None if isinstance(found, str) else found

    def derives_from_agent(self, module: _Module, cls: ast.ClassDef, depth: int) -> bool:
        known = self.is_agent_class.get(id(cls))
        if known is not None:
            return known
        self.is_agent_class[id(cls)] = False  # a class deriving from itself (through imports) is no agent
        answer = False
        for base in cls.bases:
            origin = self.project.qualify(module, base) or ""
            if _is_google(origin) and origin.rsplit(".", 1)[-1] == "BaseAgent":
                answer = True
            elif depth < _MAX_HOPS:
                found = self.project_class(module, base)
                answer = found is not None and self.derives_from_agent(*found, depth + 1)
            if answer:
                break
        self.is_agent_class[id(cls)] = answer
        return answer

    # -- what expressions name

    def ref(self, module: _Module, expr: ast.expr, scope: _Scope | None, depth: int = 0) -> Ref:
        """What `expr` names (see [`Ref`][templating.pysource.Ref]), placed where `expr` is written."""
        found = self._ref(module, expr, scope, depth)
        return Ref(
            found.kind, found.target, _shown(expr), module.path, module.node_span(expr), found.reason, found.wrapper
        )

    def _ref(self, module: _Module, expr: ast.expr, scope: _Scope | None, depth: int) -> Ref:
        if depth > _MAX_HOPS:
            return Ref("unknown", reason="a chain of names too long to follow")
        if isinstance(expr, ast.Lambda):
            return Ref("function", self.function_id(module, expr))
        if isinstance(expr, ast.Constant):
            if expr.value == "START":
                return Ref("builtin", "START")
            return Ref("unknown", reason=f"a constant ({expr.value!r}), not an agent or a function")
        if isinstance(expr, ast.Call):
            return self.call_ref(module, expr, scope, depth)
        if isinstance(expr, ast.Name):
            return self.name_ref(module, expr.id, scope, depth)
        if isinstance(expr, ast.Attribute):
            target = self.project.module_named(module, _chain(expr.value), scope)
            if target is not None:
                return self.name_ref(target, expr.attr, None, depth + 1)
            origin = self.project.qualify(module, expr)
            if origin is not None:
                return self.external(origin)
        return Ref("unknown", reason=f"{_describe(expr)}: known only at run time")

    def external(self, origin: str) -> Ref:
        origin = origin.lstrip(".")
        if _is_google(origin) and origin.rsplit(".", 1)[-1] == "START":
            return Ref("builtin", "START")
        return Ref("external", origin)

    def call_ref(self, module: _Module, call: ast.Call, scope: _Scope | None, depth: int) -> Ref:
        project = self.project
        origin = project.qualify(module, call.func)
        last = (origin or "").rsplit(".", 1)[-1]
        if origin is not None and _is_google(origin) and last in ("AgentTool", "FunctionNode"):
            inner = (
                call.args[0]
                if call.args
                else next((kw.value for kw in call.keywords if kw.arg in ("agent", "func")), None)
            )
            if inner is None:
                return Ref("unknown", reason=f"{last}(...) without its {'agent' if last == 'AgentTool' else 'func'}")
            found = self._ref(module, inner, scope, depth + 1)
            return replace(found, wrapper=last) if last == "AgentTool" else found
        kind = self.agent_kind(module, call, origin) if last[:1].isupper() or origin is None else None
        if kind is not None:
            key = node_id(module, call)
            if key not in self.raw:
                self.wanted.append((module, call, scope))
            return Ref("agent", key)
        called = project.function_called(module, call.func, scope)
        if called is not None:
            where, func = called
            if call.args or call.keywords:
                return Ref("unknown", reason=f"what {func.name}(...) returns, built from its arguments")
            value = _final_return(func)
            if isinstance(value, str):
                return Ref("unknown", reason=f"what {func.name}() returns ({value}): known only when it runs")
            found = self._ref(where, value, _function_scope(func), depth + 1)
            if found.kind == "unknown":
                return Ref("unknown", reason=f"what {func.name}() returns: {found.reason}")
            return found
        cls = self.project_class(module, call.func)
        if cls is not None:
            key = node_id(*cls)
            self.classes.setdefault(key, cls)
            return Ref("class", key)
        if origin is not None:
            return self.external(origin)
        return Ref("unknown", reason=f"{_describe(call)}: known only at run time")

    def name_ref(self, module: _Module, name: str, scope: _Scope | None, depth: int) -> Ref:
        project = self.project
        if scope is not None and scope.binds(name):
            if name in scope.params:
                return Ref("param", name)
            values = scope.assigned.get(name, [])
            if len(values) == 1:
                return self._ref(module, values[0], scope, depth + 1)
            return Ref("unknown", reason=f"{name!r} is bound more than once in the function: known only at run time")
        library = _library_import(module.bindings.get(name))
        if library is not None:  # google-adk's google_search, the standard library's: never the project's files
            return self.external(project.qualify(module, ast.Name(name)) or name)
        followed = project.follow(module, name)
        if isinstance(followed, str):
            return Ref("unknown", reason=followed)
        where, name = followed
        binding = where.bindings.get(name)
        if binding is None:
            return Ref("unknown", reason=f"{name!r} is not bound at module level in {where.path}")
        if isinstance(binding, ast.ImportFrom):
            return self.external(project.qualify(where, ast.Name(name)) or name)
        if isinstance(binding, ast.Import):
            return Ref("unknown", reason=f"{name!r} is a module")
        if isinstance(binding, ast.FunctionDef | ast.AsyncFunctionDef):
            return Ref("function", self.function_id(where, binding))
        if isinstance(binding, ast.ClassDef):
            key = node_id(where, binding)
            self.classes.setdefault(key, (where, binding))
            return Ref("class", key)
        if isinstance(binding, ast.Name) and binding.id.startswith("<"):
            why = f"{name!r} is {binding.id.strip('<>')} at module level: known only at run time"
            return Ref("unknown", reason=why)
        assert isinstance(binding, ast.expr)
        return self._ref(where, binding, None, depth + 1)

    def refs(self, module: _Module, expr: ast.expr, scope: _Scope | None, depth: int = 0) -> tuple[Ref, ...]:
        """The refs of a list (`sub_agents=[a, b]`, `tools=TOOLS`, `[*BASE, extra]`, `A + B`), in order; one
        unknown ref when the list is known only at run time."""
        if depth > _MAX_HOPS:
            return (self.ref(module, expr, scope, depth),)
        if isinstance(expr, ast.List | ast.Tuple):
            out: list[Ref] = []
            for item in expr.elts:
                if isinstance(item, ast.Starred):
                    out += self.refs(module, item.value, scope, depth + 1)
                else:
                    out.append(self.ref(module, item, scope, depth + 1))
            return tuple(out)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            return self.refs(module, expr.left, scope, depth + 1) + self.refs(module, expr.right, scope, depth + 1)
        value = self.bound_value(module, expr, scope)
        if value is not None:
            return self.refs(value[0], value[1], value[2], depth + 1)
        return (self.ref(module, expr, scope, depth),)

    def bound_value(
        self, module: _Module, expr: ast.expr, scope: _Scope | None
    ) -> tuple[_Module, ast.expr, _Scope | None] | None:
        """The list (or tuple) a name stands for (`TOOLS`, `config.TOOLS`, a local bound once), if it is one."""
        if isinstance(expr, ast.Name):
            if scope is not None and scope.binds(expr.id):
                values = scope.assigned.get(expr.id, [])
                return (module, values[0], scope) if len(values) == 1 and isinstance(values[0], _LISTS) else None
            followed = self.project.follow(module, expr.id)
            if isinstance(followed, str):
                return None
            where, name = followed
        elif isinstance(expr, ast.Attribute):
            found = self.project.module_named(module, _chain(expr.value), scope)
            if found is None:
                return None
            where, name = found, expr.attr
        else:
            return None
        binding = where.bindings.get(name)
        return (where, binding, None) if isinstance(binding, _LISTS) else None

    # -- reading the calls, once the walk is done

    def text_of(self, module: _Module, expr: ast.expr, scope: _Scope | None) -> str | None:
        value = _str_value(expr)
        if value is not None:
            return value
        resolved = self.project.resolve(module, expr, scope)
        return None if isinstance(resolved, str) else resolved.text


_LISTS = (ast.List, ast.Tuple)


# The packages of google-adk and its dependencies: a name imported from them is never one of the project's files.
_LIBRARIES = ("google.adk", "google.genai", "pydantic", "typing_extensions")


def _library_import(binding: ast.AST | None) -> str | None:
    """The module a `from x import name` binding imports from when it is the standard library's or one of
    `_LIBRARIES`: looking for it among the project's files would only cost `stat` calls."""
    if not isinstance(binding, ast.ImportFrom) or binding.level or not binding.module:
        return None
    module = binding.module
    top = module.split(".")[0]
    if top in sys.stdlib_module_names or any(module == lib or module.startswith(lib + ".") for lib in _LIBRARIES):
        return module
    return None


def _shown(expr: ast.expr) -> str:
    """An expression as written, short: a name or a dotted chain as is (without `ast.unparse`), else shortened."""
    chain = _chain(expr)
    if chain is not None:
        return ".".join(chain)
    if isinstance(expr, ast.Call):
        inner = _chain(expr.func)
        if inner is not None:
            return ".".join(inner) + "(...)"
    return _short(expr)
