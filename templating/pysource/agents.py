"""Agents as the code builds them, read in the scan's one walk: the calls of google-adk's agent classes, `App`,
`Runner` and of project classes deriving from `BaseAgent`, what their keywords name (resolved across modules as
instructions are), the functions those name (tools, callbacks, workflow nodes, a custom agent's methods) with
their state writes in order, and the sessions started with a state. Anything not readable without running the
code is recorded as unknown with the reason, never guessed. The agent model (`templating.agent_model`) is built
from these facts."""

from __future__ import annotations

import ast
import bisect
import itertools
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal

from .found import (
    AgentCall,
    AgentClass,
    AgentKind,
    FunctionFacts,
    Instruction,
    InstructionRef,
    KeyRef,
    Ref,
    RootBinding,
    RunnerCall,
    SchemaRef,
    SessionStart,
    Step,
    WorkflowEdge,
    Write,
)
from .positions import _children, _Module
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
CALLBACKS = (
    "before_agent_callback",
    "after_agent_callback",
    "before_model_callback",
    "after_model_callback",
    "before_tool_callback",
    "after_tool_callback",
)
ROLES = ("instruction", "global_instruction", "static_instruction")
# keywords whose literal value the model reads
_OPTIONS = (
    "max_iterations",
    "include_contents",
    "mode",
    "model",
    "description",
    "disallow_transfer_to_parent",
    "disallow_transfer_to_peers",
    "max_concurrency",
)
# keywords read into their own fields (the rest of a custom agent's or an App's keywords are its `fields`)
_READ = frozenset({"name", "sub_agents", "tools", "output_key", "state_schema", "edges", *CALLBACKS, *ROLES, *_OPTIONS})
# the writes that take effect only when the event holding them is yielded (or returned, by a workflow node)
_EVENT_WRITES = frozenset({"state_delta", "Event(state=...)"})
_PROVIDERS = frozenset({"instruction", "Template", "parse", "jinja", "concat", "when", "static"})
_MAX_FUNCTIONS = 5000  # functions followed from agent code (tools, callbacks and what they call) in one scan


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


class _AgentReader:
    """The agent facts of one scan: calls met in the walk (and those their keywords name in modules the walk does
    not visit), read once the walk is done, while the syntax trees are still there."""

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

    def prepare(self, modules: list[_Module]) -> None:
        """Find the custom agent classes of `modules` before the walk: those of a module that names `BaseAgent`,
        and, as long as more are found, those of a module naming one of them (a class deriving from a custom
        agent class). Only a module whose text holds such a name has its classes looked at."""
        names: set[str] = set()
        words = ["BaseAgent"]
        looked: set[str] = set()
        for _ in range(_MAX_HOPS):
            found: set[str] = set()
            for module in modules:
                if module.key in looked or not any(word in module.text for word in words):
                    continue
                looked.add(module.key)
                for name, binding in module.bindings.items():
                    if isinstance(binding, ast.ClassDef) and self.derives_from_agent(module, binding, 0):
                        found.add(name)
            found -= names
            if not found:
                break
            names |= found
            words = sorted(found)
            looked.clear()
        self.agent_class_names = names

    # -- the walk

    def function_id(self, module: _Module, node: ast.AST) -> str:
        known = self.in_functions.get(id(node))
        if known is None:
            known = self.in_functions[id(node)] = node_id(module, node)
            self.defs.setdefault(known, (module, node))
        return known

    def visit_call(
        self,
        module: _Module,
        call: ast.Call,
        scope: _Scope | None,
        origin: str | None,
        names: list[str],
        owner: ast.AST | None,
    ) -> None:
        """A call met in the walk: an agent's, an App's, a Runner's (anything else is passed over cheaply)."""
        func = call.func
        if origin is None:  # a class of this module (`class StoryFlowAgent(BaseAgent)`), called by its name
            if not isinstance(func, ast.Name) or func.id not in self.agent_class_names:
                return
        else:
            last = origin[origin.rfind(".") + 1 :]
            if last not in _GOOGLE_KINDS and last not in _RUNNERS and last not in self.agent_class_names:
                return  # most calls: passed over by their last name alone
            if _is_google(origin):
                if last in _RUNNERS:
                    self.runner_calls.append((module, call, scope))
                    return
                if last not in _GOOGLE_KINDS:
                    return
            elif last not in self.agent_class_names:
                return
        found = self.agent_kind(module, call, origin)
        if found is None:
            return
        key = node_id(module, call)
        raw = self.raw.get(key)
        if raw is None:
            raw = self.raw[key] = _Raw(module, call, scope, *found)
            raw.function = self.function_id(module, owner) if owner is not None else None
        raw.bound += [n for n in names if n not in raw.bound]

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

    def recorded(self, node: ast.AST, found: Instruction | str, *, templating: bool = False) -> None:
        """What the scan recorded for an agent's instruction argument (`templating`: one of templating's providers
        renders it), read when the agent is."""
        self.added[id(node)] = (found, templating)

    def session(self, module: _Module, call: ast.Call, keys: tuple[str, ...] | None) -> None:
        self.sessions.append((module, call, keys))

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

    def finish(self) -> None:
        """Read every agent call met (and those they name), the functions they name, and the classes."""
        project, result = self.project, self.project.result
        while self.wanted:
            module, call, scope = self.wanted.pop()
            key = node_id(module, call)
            if key not in self.raw:
                found = self.agent_kind(module, call, project.qualify(module, call.func))
                if found is not None:
                    self.raw[key] = _Raw(module, call, scope, *found)
        done: set[str] = set()
        while len(done) < len(self.raw):  # reading a call may name calls in modules not walked
            for key in [k for k in self.raw if k not in done]:
                done.add(key)
                result.agents.append(self.read(key, self.raw[key]))
            while self.wanted:
                module, call, scope = self.wanted.pop()
                key = node_id(module, call)
                if key not in self.raw:
                    found = self.agent_kind(module, call, project.qualify(module, call.func))
                    if found is not None:
                        self.raw[key] = _Raw(module, call, scope, *found)
        for module, call, scope in self.runner_calls:
            result.runners.append(self.runner(module, call, scope))
        for module in project.modules.values():
            binding = module.bindings.get("root_agent")
            if module.linted and isinstance(binding, ast.expr) and hasattr(binding, "lineno"):
                ref = self.ref(module, binding, None)
                result.roots.append(RootBinding(module.path, module.key, module.node_span(binding), ref))
        for key, (module, cls) in list(self.classes.items()):
            if self.derives_from_agent(module, cls, 0):
                result.agent_classes[key] = self.agent_class(key, module, cls)
        self.read_sessions()
        self.read_functions()
        self.forget()

    def forget(self) -> None:
        """Let go of the syntax trees (the calls, definitions and scopes kept for reading them) once all is read:
        a scope refers to its visitor, which refers back to this reader, and such a circle would keep every tree
        alive until the garbage collector's next full pass walks them all."""
        for kept in (
            self.raw,
            self.defs,
            self.classes,
            self.added,
            self.in_functions,
            self.is_agent_class,
            self.owned_by,
        ):
            kept.clear()
        self.wanted.clear()
        self.sessions.clear()
        self.runner_calls.clear()

    def read(self, key: str, raw: _Raw) -> AgentCall:
        module, call, scope = raw.module, raw.call, raw.scope
        given: dict[str, ast.expr] = {}
        unread: list[tuple[str, str]] = []
        for kw in call.keywords:
            if kw.arg is not None:
                given[kw.arg] = kw.value
            elif not unread:
                unread.append(("**", "keywords unpacked from a mapping (**kwargs): known only at run time"))
        name: str | None = None
        if raw.kind == "join" and call.args and "name" not in given:
            given["name"] = call.args[0]
        if "name" in given:
            name = self.text_of(module, given["name"], scope)
            if name is None:
                unread.append(("name", f"{_describe(given['name'])}: known only at run time"))
        options: list[tuple[str, str | int | bool | float | None]] = []
        for option in _OPTIONS:
            if option in given:
                ok, literal = _literal(given[option])
                if not ok and option in ("description", "model"):
                    text = self.text_of(module, given[option], scope)
                    ok, literal = text is not None, text
                if ok:
                    options.append((option, literal))
                else:
                    unread.append((option, f"{_describe(given[option])}: known only at run time"))
        callbacks = []
        for callback in CALLBACKS:
            value = given.get(callback)
            if value is not None and not (isinstance(value, ast.Constant) and value.value is None):
                callbacks.append((callback, self.refs(module, value, scope)))
        output_key = None
        if "output_key" in given and not (
            isinstance(given["output_key"], ast.Constant) and given["output_key"].value is None
        ):
            value = given["output_key"]
            text = self.text_of(module, value, scope)
            reason = None if text is not None else f"{_describe(value)}: known only at run time"
            output_key = KeyRef(text, module.path, module.node_span(value), reason)
        instructions = []
        for role in ROLES:
            value = given.get(role)
            if value is not None and not (isinstance(value, ast.Constant) and value.value is None):
                instructions.append((role, self.instruction_ref(module, value, scope)))
        state_schema = None
        if "state_schema" in given and not (
            isinstance(given["state_schema"], ast.Constant) and given["state_schema"].value is None
        ):
            state_schema = self.schema_ref(module, given["state_schema"])
        edges: tuple[WorkflowEdge, ...] | None = None
        if "edges" in given:
            read_edges = self.edges(module, given["edges"], scope)
            if isinstance(read_edges, str):
                unread.append(("edges", read_edges))
            else:
                edges = read_edges
        fields = []
        for arg, value in given.items():
            if arg in _READ or (isinstance(value, ast.Constant) and value.value is None):
                continue
            if raw.kind == "custom" or (raw.kind == "app" and arg in ("root_agent", "plugins")):
                fields.append((arg, self.refs(module, value, scope)))
        if raw.kind == "app" and call.args and "root_agent" not in given:  # App("name", root_agent) is unusual
            unread.append(("root_agent", "given by position"))
        return AgentCall(
            key,
            raw.kind,
            raw.cls,
            name,
            module.path,
            module.node_span(call),
            module.key,
            tuple(raw.bound),
            raw.function,
            self.refs(module, given["sub_agents"], scope) if "sub_agents" in given else None,
            self.refs(module, given["tools"], scope) if "tools" in given else None,
            tuple(callbacks),
            output_key,
            tuple(instructions),
            state_schema,
            edges,
            tuple(options),
            tuple(fields),
            tuple(unread),
        )

    def text_of(self, module: _Module, expr: ast.expr, scope: _Scope | None) -> str | None:
        value = _str_value(expr)
        if value is not None:
            return value
        resolved = self.project.resolve(module, expr, scope)
        return None if isinstance(resolved, str) else resolved.text

    def instruction_ref(self, module: _Module, value: ast.expr, scope: _Scope | None) -> InstructionRef:
        where = module.node_span(value)
        recorded = self.added.get(id(value))
        if recorded is not None:
            found, templating = recorded
            if isinstance(found, Instruction):
                kind: _RefKind = "templating" if templating else "text"
                return InstructionRef(kind, module.path, where, found.key, found.text, found.dialect)
            if templating:
                return InstructionRef("templating", module.path, where, reason=found)
        if isinstance(value, ast.Call):
            origin = (self.project.qualify(module, value.func) or "").lstrip(".")
            if origin.split(".")[0] == "templating" and origin.rsplit(".", 1)[-1] in _PROVIDERS:
                why = f"{_short(value.func)}(...), a provider of templating's whose text is not read here"
                return InstructionRef("templating", module.path, where, reason=why)
        provider = "a function google-adk calls (a provider)"
        if isinstance(value, ast.Lambda):
            return InstructionRef("provider", module.path, where, reason=provider)
        if recorded is not None:  # the scan's reason says whether it names a function
            why = str(recorded[0])
            if "is a function (an instruction provider)" in why:
                return InstructionRef("provider", module.path, where, reason=provider)
            return InstructionRef("unknown", module.path, where, reason=why)
        if self._ref(module, value, scope, 0).kind == "function":
            return InstructionRef("provider", module.path, where, reason=provider)
        resolved = self.project.resolve(module, value, scope)
        if isinstance(resolved, str):
            return InstructionRef("unknown", module.path, where, reason=resolved)
        return InstructionRef("text", module.path, where, text=resolved.text)

    def schema_ref(self, module: _Module, expr: ast.expr) -> SchemaRef:
        found = self.project.models.declared(module, expr)
        if isinstance(found, str):
            return SchemaRef(_short(expr), module.path, module.node_span(expr), None, found)
        where, cls, names = found
        at = where.node_span(cls).start
        named = where.text.find(cls.name, at)
        span = where.span(named, named + len(cls.name)) if named >= 0 else where.span(at, at)
        reason = None if names is not None else f"{cls.name} has a base class from outside the project"
        return SchemaRef(cls.name, where.path, span, names, reason)

    def edges(self, module: _Module, expr: ast.expr, scope: _Scope | None) -> tuple[WorkflowEdge, ...] | str:
        """A Workflow's `edges=[...]` expanded as google-adk's graph parser does."""
        value = self.bound_value(module, expr, scope) if not isinstance(expr, _LISTS) else (module, expr, scope)
        if value is None:
            return f"{_describe(expr)}: known only at run time"
        module, items, scope = value
        assert isinstance(items, ast.List | ast.Tuple)
        out: list[WorkflowEdge] = []
        for item in items.elts:
            if isinstance(item, ast.Name | ast.Attribute):
                bound = self.bound_value(module, item, scope)
                if bound is not None and isinstance(bound[1], ast.Tuple):
                    item = bound[1]
            if isinstance(item, ast.Tuple):
                chain = item.elts
                for before, after in itertools.pairwise(chain):
                    if isinstance(after, ast.Dict):
                        for route_node, target in zip(after.keys, after.values, strict=True):
                            route = self.route(module, route_node)
                            for source in self.group(module, before, scope):
                                for node in self.group(module, target, scope):
                                    out.append(WorkflowEdge(source, node, route, True))
                    else:
                        for source in self.group(module, before, scope):
                            for node in self.group(module, after, scope):
                                out.append(WorkflowEdge(source, node))
            elif isinstance(item, ast.Call) and (self.project.qualify(module, item.func) or "").endswith("Edge"):
                given = {kw.arg: kw.value for kw in item.keywords}
                if "from_node" not in given or "to_node" not in given:
                    return f"{_short(item)}: an Edge without from_node= and to_node="
                given_route = given.get("route")
                routed = given_route is not None and not (
                    isinstance(given_route, ast.Constant) and given_route.value is None
                )
                route = self.route(module, given["route"]) if routed else None
                source = self.node_ref(module, given["from_node"], scope)
                out.append(WorkflowEdge(source, self.node_ref(module, given["to_node"], scope), route, routed))
            else:
                return f"an edge item known only at run time ({_short(item)})"
        return tuple(out)

    def route(self, module: _Module, node: ast.expr | None) -> str | int | bool | None:
        ok, value = _literal(node)
        if ok and not isinstance(value, float):
            return value
        if node is not None and (self.project.qualify(module, node) or "").endswith("DEFAULT_ROUTE"):
            return "__DEFAULT__"
        return None

    def group(self, module: _Module, element: ast.expr, scope: _Scope | None) -> list[Ref]:
        if isinstance(element, ast.Tuple | ast.List):
            return [self.node_ref(module, e, scope) for e in element.elts]
        if isinstance(element, ast.Dict):
            return [n for value in element.values for n in self.group(module, value, scope)]
        return [self.node_ref(module, element, scope)]

    def node_ref(self, module: _Module, expr: ast.expr, scope: _Scope | None) -> Ref:
        return self.ref(module, expr, scope)

    def runner(self, module: _Module, call: ast.Call, scope: _Scope | None) -> RunnerCall:
        given = {kw.arg: kw.value for kw in call.keywords if kw.arg is not None}
        agent = self.ref(module, given["agent"], scope) if "agent" in given else None
        app = self.ref(module, given["app"], scope) if "app" in given else None
        name = self.text_of(module, given["app_name"], scope) if "app_name" in given else None
        return RunnerCall(module.path, module.node_span(call), module.key, agent, app, name)

    def read_sessions(self) -> None:
        """Each session started with a state, tied to the agents its module names or runs."""
        by_module: dict[str, tuple[str, ...]] = {}
        runs: dict[str, list[str]] = {}
        for runner in self.project.result.runners:
            for ref in (runner.agent, runner.app):
                if ref is not None and ref.kind == "agent":
                    runs.setdefault(runner.file, []).append(ref.target)
        for module, call, keys in self.sessions:
            named = by_module.get(module.key)
            if named is None:
                found = list(runs.get(module.key, []))
                for name, binding in list(module.bindings.items()):
                    if isinstance(binding, ast.ImportFrom | ast.Call | ast.Name) and not (
                        isinstance(binding, ast.Name) and binding.id.startswith("<")
                    ):
                        ref = self._ref(module, ast.Name(name), None, 0)
                        if ref.kind == "agent":
                            found.append(ref.target)
                named = by_module[module.key] = tuple(dict.fromkeys(found))
            self.project.result.sessions.append(SessionStart(module.path, module.node_span(call), keys, named))

    # -- custom agent classes and the functions agent code names

    def agent_class(self, key: str, module: _Module, cls: ast.ClassDef) -> AgentClass:
        methods: list[str] = []
        run: str | None = None
        init: ast.FunctionDef | ast.AsyncFunctionDef | None = None
        chain: list[tuple[_Module, ast.ClassDef]] = [(module, cls)]
        while len(chain) < _MAX_HOPS:  # the project bases that are agents too: their methods are inherited
            here_module, here = chain[-1]
            base = next(
                (
                    found
                    for b in here.bases
                    if (found := self.project_class(here_module, b)) is not None and self.derives_from_agent(*found, 0)
                ),
                None,
            )
            if base is None or any(base[1] is c for _, c in chain):
                break
            chain.append(base)
        for where, node in chain:
            for stmt in node.body:
                if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                fid = self.function_id(where, stmt)
                self.class_of[fid] = key
                if fid not in methods:
                    methods.append(fid)
                if stmt.name == "_run_async_impl" and run is None:
                    run = fid
                if stmt.name == "__init__" and init is None:
                    init = stmt
        self.functions_wanted += methods
        params: tuple[str, ...] | None = None
        init_fields: list[tuple[str, tuple[Ref, ...]]] = []
        if init is not None:
            where = next(w for w, c in chain if init in c.body)
            args = init.args
            params = tuple(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))[1:]
            scope = _function_scope(init)
            for inner in ast.walk(init):
                if (
                    isinstance(inner, ast.Call)
                    and isinstance(inner.func, ast.Attribute)
                    and inner.func.attr == "__init__"
                    and isinstance(inner.func.value, ast.Call)
                    and isinstance(inner.func.value.func, ast.Name)
                    and inner.func.value.func.id == "super"
                ):
                    for kw in inner.keywords:
                        if kw.arg is not None:
                            init_fields.append((kw.arg, self.refs(where, kw.value, scope)))
        reason = None if run is not None else f"{cls.name} has no _run_async_impl the scan could read"
        return AgentClass(
            key, cls.name, module.path, module.node_span(cls), run, reason, params, tuple(init_fields), tuple(methods)
        )

    def read_functions(self) -> None:
        """The facts of every function agent code names, and of the functions those call."""
        result = self.project.result
        wanted: list[str] = list(self.functions_wanted)
        for agent in result.agents:
            refs: list[Ref] = [*(agent.sub_agents or ()), *(agent.tools or ())]
            refs += [r for _, rs in agent.callbacks for r in rs] + [r for _, rs in agent.fields for r in rs]
            for edge in agent.edges or ():
                refs += [edge.source, edge.target]
            wanted += [r.target for r in refs if r.kind == "function"]
            for r in refs:
                if r.kind == "class" and r.target in self.classes:
                    methods = self.methods_of(r.target)
                    result.class_methods[r.target] = tuple(methods)
                    wanted += methods
        by_function: dict[str, list[Write]] = {}
        for write in result.writes:
            if write.function is not None:
                by_function.setdefault(write.function, []).append(write)
        seen: set[str] = set()
        while wanted and len(seen) < _MAX_FUNCTIONS:
            fid = wanted.pop()
            if fid in seen or fid not in self.defs:
                continue
            seen.add(fid)
            facts = self.function_facts(fid, by_function.get(fid, []))
            result.functions[fid] = facts
            wanted += [c for c in facts.calls if c not in seen]

    def methods_of(self, class_id: str) -> list[str]:
        module, cls = self.classes[class_id]
        out = []
        for stmt in cls.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                fid = self.function_id(module, stmt)
                self.class_of[fid] = class_id
                out.append(fid)
        return out

    def function_facts(self, fid: str, writes: list[Write]) -> FunctionFacts:
        module, node = self.defs[fid]
        assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        name = getattr(node, "name", "<lambda>")
        scope = _Scope.later(lambda: _function_scope(node))
        class_id = self.class_of.get(fid)
        runs = class_id is not None and name == "_run_async_impl"  # a custom agent's: its sub-agent runs too
        inner_nodes = self.owned(module, node)
        calls: list[str] = []
        call_nodes: list[tuple[ast.Call, str]] = []
        escalates = False
        for inner in inner_nodes:
            kind = type(inner)
            if kind is ast.Call:
                assert isinstance(inner, ast.Call)
                func = inner.func
                callee: str | None = None
                base = (
                    func.id
                    if isinstance(func, ast.Name)
                    else getattr(func.value, "id", None)
                    if isinstance(func, ast.Attribute)
                    else None
                )
                if base is not None and (base == "self" or _may_be_project(module, base)):
                    if (
                        class_id is not None
                        and isinstance(func, ast.Attribute)
                        and isinstance(func.value, ast.Name)
                        and func.value.id == "self"
                    ):
                        callee = self.method_named(class_id, func.attr)
                    else:
                        called = self.project.function_called(module, func, scope)
                        callee = self.function_id(*called) if called is not None else None
                if callee is not None:
                    calls.append(callee)
                    call_nodes.append((inner, callee))
            elif kind in _FUNCTION_NODES and inner is not node:
                calls.append(self.function_id(module, inner))
            elif kind is ast.Assign and inner.value.__class__ is ast.Constant:  # type: ignore[attr-defined]
                assert isinstance(inner, ast.Assign)
                if inner.value.value is True and any(
                    isinstance(t, ast.Attribute) and t.attr == "escalate" for t in inner.targets
                ):
                    escalates = True
        steps: list[Step] = []
        if writes or call_nodes or runs:
            leaves = _Leaves(module, lambda expr: self.text_of(module, expr, scope), runs=runs)
            body: list[ast.stmt] = node.body if isinstance(node.body, list) else [ast.Expr(node.body)]
            leaves.block(body, (), False)
            events = any(w.how in _EVENT_WRITES for w in writes)
            yielded = _yielded_spans(module, _own_nodes(node)) if events else []
            for write in sorted(writes, key=lambda w: w.span.start):
                if write.how in _EVENT_WRITES and not any(a <= write.span.start < b for a, b in yielded):
                    continue  # an event's state that is never yielded (or returned) is never applied
                conditional, looped = leaves.where(write.span.start, write.key)
                steps.append(
                    Step("write", write.path, write.span, write.key, write.how, conditional=conditional, looped=looped)
                )
            for call, callee in call_nodes:
                span = module.node_span(call)
                conditional, looped = leaves.where(span.start, None)
                steps.append(Step("call", module.path, span, field=callee, conditional=conditional, looped=looped))
            steps += leaves.runs
            steps.sort(key=lambda s: s.span.start)
        return FunctionFacts(
            fid, name, module.path, module.node_span(node), tuple(steps), tuple(dict.fromkeys(calls)), escalates
        )

    def owned(self, module: _Module, func: ast.AST) -> list[ast.AST]:
        """The calls, assignments and functions of `func`'s own body (not of the functions inside it): read from the
        module's one walk (`_Module.preorder`), grouped by the function they are in once per module."""
        grouped = self.owned_by.get(module.key)
        if grouped is None:
            grouped = self.owned_by[module.key] = {}
            walked = module.preorder
            for item, owner in zip(walked.nodes, walked.owners, strict=True):
                if owner is not None:
                    grouped.setdefault(id(owner), []).append(item)
        return grouped.get(id(func), [])

    def method_named(self, class_id: str, name: str) -> str | None:
        module, cls = self.classes[class_id]
        for stmt in cls.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name == name:
                return self.function_id(module, stmt)
        return None


_LISTS = (ast.List, ast.Tuple)
_RefKind = Literal["text", "templating", "provider", "unknown"]


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


def _may_be_project(module: _Module, name: str) -> bool:
    """Whether a call of `name` (or of an attribute of it) may be one of a project function: `name` is a function
    or class of the module, or imported from somewhere other than the standard library or google-adk's packages."""
    binding = module.bindings.get(name)
    if binding is None:
        return False
    if isinstance(binding, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return True
    if isinstance(binding, ast.ImportFrom):
        return _library_import(binding) is None
    if isinstance(binding, ast.Import):
        alias = next((a for a in binding.names if (a.asname or a.name.split(".")[0]) == name), None)
        if alias is None:
            return False
        top = alias.name.split(".")[0]
        return top not in sys.stdlib_module_names and not any(alias.name.startswith(lib) for lib in _LIBRARIES)
    return False


_FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_NOT_ENTERED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _own_nodes(func: ast.AST) -> list[ast.AST]:
    """The nodes of `func`'s body, the functions and classes defined inside it listed but not entered."""
    out: list[ast.AST] = []
    stack = _children(func)
    while stack:
        node = stack.pop()
        out.append(node)
        if not isinstance(node, _NOT_ENTERED):
            stack += _children(node)
    return out


def _yielded_spans(module: _Module, nodes: list[ast.AST]) -> list[tuple[int, int]]:
    """The spans (offsets) of what a function yields or returns (`nodes`: its own), and of the values assigned to
    names it yields or returns (`event = Event(...)`, later `yield event`)."""
    out: list[tuple[int, int]] = []
    given: set[str] = set()
    assigned: list[tuple[str, ast.expr]] = []
    for node in nodes:
        if isinstance(node, ast.Yield | ast.Return) and node.value is not None:
            span = module.node_span(node.value)
            out.append((span.start, span.end))
            if isinstance(node.value, ast.Name):
                given.add(node.value.id)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigned.append((node.targets[0].id, node.value))
    for name, value in assigned:
        if name in given:
            span = module.node_span(value)
            out.append((span.start, span.end))
    return out


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


def _guarded_key(test: ast.expr) -> ast.expr | None:
    """The key (as written) an `if` runs its body for only when the key is absent: `"k" not in state`,
    `KEY not in state`, `state.get("k") is None`, `not state.get("k")`."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        if isinstance(test.ops[0], ast.NotIn):
            return test.left
        comparator = test.comparators[0]
        if isinstance(test.ops[0], ast.Is) and isinstance(comparator, ast.Constant) and comparator.value is None:
            return _get_key(test.left)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _get_key(test.operand)
    return None


def _get_key(node: ast.expr) -> ast.expr | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
        return node.args[0]
    return None


class _Leaves:
    """The simple statements of a function body, each with the conditions it runs under (`if`, loops, `try`,
    `match`; an `if` that only runs when a key is absent is named by that key), and a custom agent's runs of its
    sub-agents (`async for event in self.writer.run_async(ctx)`)."""

    def __init__(self, module: _Module, key_of: Callable[[ast.expr], str | None], *, runs: bool = False) -> None:
        self.module, self.key_of, self.read_runs = module, key_of, runs
        self.starts: list[int] = []
        self.info: list[tuple[tuple[str | None, ...], bool]] = []
        self.runs: list[Step] = []
        self.loop_vars: dict[str, bool] = {}  # names bound by `for agent in self.sub_agents`

    def block(self, stmts: list[ast.stmt], conditions: tuple[str | None, ...], looped: bool) -> None:
        for stmt in stmts:
            if isinstance(stmt, ast.If):
                guarded = _guarded_key(stmt.test)
                self.block(stmt.body, (*conditions, self.key_of(guarded) if guarded is not None else None), looped)
                self.block(stmt.orelse, (*conditions, None), looped)
            elif isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
                if isinstance(stmt, ast.For | ast.AsyncFor) and isinstance(stmt.target, ast.Name):
                    chain = _chain(stmt.iter)
                    if chain == ["self", "sub_agents"]:
                        self.loop_vars[stmt.target.id] = True
                if isinstance(stmt, ast.AsyncFor) and self.read_runs:
                    self.run(stmt, conditions, looped)
                self.block(stmt.body, (*conditions, None), True)
                self.block(stmt.orelse, (*conditions, None), looped)
            elif isinstance(stmt, ast.Try | ast.TryStar):
                self.block(stmt.body, (*conditions, None), looped)
                for handler in stmt.handlers:
                    self.block(handler.body, (*conditions, None), looped)
                self.block(stmt.orelse, (*conditions, None), looped)
                self.block(stmt.finalbody, conditions, looped)
            elif isinstance(stmt, ast.With | ast.AsyncWith):
                self.block(stmt.body, conditions, looped)
            elif isinstance(stmt, ast.Match):
                for case in stmt.cases:
                    self.block(case.body, (*conditions, None), looped)
            elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            else:
                self.starts.append(self.module.offset(stmt.lineno, stmt.col_offset))
                self.info.append((conditions, looped))
                if self.read_runs:
                    for node in ast.walk(stmt):  # `events = [e async for e in self.x.run_async(ctx)]` and the like
                        if isinstance(node, ast.comprehension) and node.is_async:
                            self.run_of(node.iter, stmt, conditions, looped)

    def run(self, stmt: ast.AsyncFor, conditions: tuple[str | None, ...], looped: bool) -> None:
        self.run_of(stmt.iter, stmt, conditions, looped)

    def run_of(self, iterated: ast.expr, stmt: ast.stmt, conditions: tuple[str | None, ...], looped: bool) -> None:
        if not (
            isinstance(iterated, ast.Call)
            and isinstance(iterated.func, ast.Attribute)
            and iterated.func.attr in ("run_async", "run_live")
        ):
            return
        target = iterated.func.value
        span = self.module.node_span(stmt)
        conditional = bool(conditions)
        chain = _chain(target)
        if chain is not None and len(chain) == 2 and chain[0] == "self":
            step = Step("run", self.module.path, span, field=chain[1], conditional=conditional, looped=looped)
        elif (
            isinstance(target, ast.Subscript)
            and _chain(target.value) == ["self", "sub_agents"]
            and isinstance(target.slice, ast.Constant)
            and isinstance(target.slice.value, int)
        ):
            index = target.slice.value
            step = Step(
                "run", self.module.path, span, field="sub_agents", index=index, conditional=conditional, looped=looped
            )
        elif isinstance(target, ast.Name) and target.id in self.loop_vars:
            step = Step("run_all", self.module.path, span, conditional=conditional, looped=False)
        else:
            step = Step("run", self.module.path, span, conditional=conditional, looped=looped)
        self.runs.append(step)

    def where(self, offset: int, key: str | None) -> tuple[bool, bool]:
        """Whether the statement at `offset` runs under a condition (one guarding `key` itself does not count),
        and inside a loop."""
        at = bisect.bisect_right(self.starts, offset) - 1
        if at < 0:
            return False, False
        conditions, looped = self.info[at]
        return any(c is None or c != key for c in conditions), looped
