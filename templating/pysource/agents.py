"""Agents as the code builds them, read in the scan's one walk: the calls of google-adk's agent classes, `App`,
`Runner` and of project classes deriving from `BaseAgent`, what their keywords name (resolved across modules as
instructions are), the functions those name (tools, callbacks, workflow nodes, a custom agent's methods) with
their state writes in order, and the sessions started with a state. Anything not readable without running the
code is recorded as unknown with the reason, never guessed. The agent model (`templating.agent_model`) is built
from these facts."""

from __future__ import annotations

import ast
import itertools
from typing import Literal

from .agent_functions import _FunctionReader
from .agent_refs import _GOOGLE_KINDS, _LISTS, _RUNNERS, _is_google, _literal, _Raw, node_id
from .found import (
    AgentCall,
    Instruction,
    InstructionRef,
    KeyRef,
    Ref,
    RootBinding,
    RunnerCall,
    SchemaRef,
    SessionStart,
    WorkflowEdge,
)
from .positions import _Module
from .syntax import _MAX_HOPS, _describe, _Scope, _short

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
_PROVIDERS = frozenset({"instruction", "Template", "parse", "jinja", "concat", "when", "static"})
_RefKind = Literal["text", "templating", "provider", "unknown"]


class _AgentReader(_FunctionReader):
    """The agent facts of one scan: calls met in the walk (and those their keywords name in modules the walk does
    not visit), read once the walk is done, while the syntax trees are still there."""

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

    def recorded(self, node: ast.AST, found: Instruction | str, *, templating: bool = False) -> None:
        """What the scan recorded for an agent's instruction argument (`templating`: one of templating's providers
        renders it), read when the agent is."""
        self.added[id(node)] = (found, templating)

    def session(self, module: _Module, call: ast.Call, keys: tuple[str, ...] | None) -> None:
        self.sessions.append((module, call, keys))

    # -- what expressions name

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
        for module in list(project.modules.values()):  # (a ref read may load a module: not a linted one)
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
