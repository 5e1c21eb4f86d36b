"""The functions agent code names (tools, callbacks, workflow nodes, a custom agent's methods, and the functions
those call) read into `FunctionFacts`: their state writes, calls and sub-agent runs in order, each with whether it
runs under a condition or in a loop; and the custom agent classes (`AgentClass`: their methods, `__init__`
parameters and the keywords they give `super().__init__`)."""

from __future__ import annotations

import ast
import bisect
import sys
from collections.abc import Callable

from .agent_refs import _LIBRARIES, _library_import, _RefReader
from .found import AgentClass, FunctionFacts, Ref, Step, Write
from .positions import _children, _Module
from .syntax import _MAX_HOPS, _chain, _function_scope, _Scope

# the writes that take effect only when the event holding them is yielded (or returned, by a workflow node)
_EVENT_WRITES = frozenset({"state_delta", "Event(state=...)"})
_MAX_FUNCTIONS = 5000  # functions followed from agent code (tools, callbacks and what they call) in one scan


class _FunctionReader(_RefReader):
    """The custom agent classes and the functions agent code names, read once the walk is done."""

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
            refs = agent.named()
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
