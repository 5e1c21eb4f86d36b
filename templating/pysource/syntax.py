"""What the syntax tree alone says: a function's scope, parameters holding state and final return, the path
of a file a function reads next to its module, dotted names, call arguments, short descriptions of expressions."""

from __future__ import annotations

import ast
from collections.abc import Callable

from .positions import _CHILD_FIELDS, _children, _Module, _walk

# How far a chain of names, imports or nested expressions is followed (input cannot reach the recursion limit).
_MAX_HOPS = 40


class _Scope:
    """The names a function binds, with the expressions assigned to them in its body; `state_params`: its
    parameters that hold session state (named state, annotated State, or given ctx.state by a caller).

    Made at once, or by [`later`][templating.pysource.syntax._Scope.later] when it is first read: the scan
    meets every function of every file, and reads the scope of few of them."""

    __slots__ = ("_assigned", "_build", "_others", "_params", "_state_params")

    def __init__(
        self,
        params: set[str],
        assigned: dict[str, list[ast.expr]],
        others: set[str],
        state_params: set[str] | None = None,
    ) -> None:
        self._params, self._assigned, self._others = params, assigned, others
        self._state_params = set() if state_params is None else state_params
        self._build: Callable[[], _Scope] | None = None

    @classmethod
    def later(cls, build: Callable[[], _Scope]) -> _Scope:
        """The scope `build()` makes, made when one of its names is first read."""
        scope = cls.__new__(cls)
        scope._build = build
        return scope

    def _made(self) -> None:
        build = self._build
        if build is not None:
            self._build = None
            made = build()
            self._params, self._assigned, self._others = made.params, made.assigned, made.others
            self._state_params = made.state_params

    @property
    def params(self) -> set[str]:
        self._made()
        return self._params

    @params.setter
    def params(self, value: set[str]) -> None:
        self._made()
        self._params = value

    @property
    def assigned(self) -> dict[str, list[ast.expr]]:
        self._made()
        return self._assigned

    @property
    def others(self) -> set[str]:
        self._made()
        return self._others

    @others.setter
    def others(self, value: set[str]) -> None:
        self._made()
        self._others = value

    @property
    def state_params(self) -> set[str]:
        self._made()
        return self._state_params

    @state_params.setter
    def state_params(self, value: set[str]) -> None:
        self._made()
        self._state_params = value

    def binds(self, name: str) -> bool:
        self._made()
        return name in self._params or name in self._assigned or name in self._others


def _final_return(func: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.expr | str:
    """The value `func` returns when its body ends in its one `return` of a value, or what it is instead."""
    if isinstance(func, ast.AsyncFunctionDef):
        return "an async function (its call gives a coroutine)"
    if func.decorator_list:
        return "a decorated function"
    returns, yields = _returns_and_yields(func)
    if yields:
        return "a generator"
    if len(returns) != 1 or returns[0] is not func.body[-1] or returns[0].value is None:
        return "a function that does not end in its one return of a value"
    return returns[0].value


def _returns_and_yields(func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[list[ast.Return], bool]:
    """The return statements of `func` itself (not of functions or classes inside it), and whether it yields."""
    returns: list[ast.Return] = []
    yields = False
    stack: list[ast.AST] = list(func.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.Return):
            returns.append(node)
        elif isinstance(node, ast.Yield | ast.YieldFrom):
            yields = True
        stack += _children(node)
    return returns, yields


_NAMED_DEFINITIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})


def _function_scope(func: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> _Scope:
    args = func.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    params |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    assigned: dict[str, list[ast.expr]] = {}
    others: set[str] = set()
    body = func.body if isinstance(func.body, list) else []
    stack: list[ast.AST] = list(body)
    pop, push, node_type, name_type, fields_of = stack.pop, stack.append, ast.AST, ast.Name, _CHILD_FIELDS.get
    while stack:
        node = pop()
        kind = type(node)
        if kind is name_type:
            if isinstance(node.ctx, ast.Store):  # type: ignore[attr-defined]
                others.add(node.id)  # type: ignore[attr-defined]  # for targets, with targets, +=, walrus
            continue
        if kind in _NAMED_DEFINITIONS:
            others.add(node.name)  # type: ignore[attr-defined]
            continue
        if kind is ast.Lambda:
            continue
        if kind is ast.Assign:
            assert isinstance(node, ast.Assign)
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)
                else:
                    push(target)
            push(node.value)
            continue
        if kind is ast.AnnAssign:
            assert isinstance(node, ast.AnnAssign)
            if isinstance(node.target, ast.Name) and node.value is not None:
                assigned.setdefault(node.target.id, []).append(node.value)
                push(node.value)
                continue
        if kind is ast.Import or kind is ast.ImportFrom:
            others.update(alias.asname or alias.name.split(".")[0] for alias in node.names)  # type: ignore[attr-defined]
        # the children as `_children` gives them, in its order, less the constants (nothing to find in them)
        fields = fields_of(kind)
        if fields is None:
            _children(node)  # fills in the class's fields
            fields = _CHILD_FIELDS[kind]
        for field_name in fields:
            value = getattr(node, field_name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, node_type) and type(item) is not ast.Constant:
                        push(item)
            elif isinstance(value, node_type) and type(value) is not ast.Constant:
                push(value)
    for name in list(assigned):
        if name in others:  # also bound another way (a loop, +=): not one known value
            assigned[name].append(ast.Name("<rebound>"))
    state = {
        a.arg
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)
        if (a.arg == "state" or _mentions_state(a.annotation)) and a.arg not in assigned and a.arg not in others
    }
    return _Scope(params, assigned, others - set(assigned), state)


def _mentions_state(annotation: ast.expr | None) -> bool:
    """Whether a parameter's annotation names ADK's `State` (`State`, `State | dict`, `"State"`)."""
    if annotation is None:
        return False
    for node in _walk(annotation):
        if (isinstance(node, ast.Name) and node.id == "State") or (
            isinstance(node, ast.Attribute) and node.attr == "State"
        ):
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "State" in node.value.split():
            return True
    return False


def _uses_templating(module: _Module) -> bool:
    """Whether the module imports anything from `templating` (at module level)."""
    for binding in module.bindings.values():
        if (
            isinstance(binding, ast.ImportFrom)
            and not binding.level
            and (binding.module or "").split(".")[0] == "templating"
        ):
            return True
        if isinstance(binding, ast.Import) and any(a.name.split(".")[0] == "templating" for a in binding.names):
            return True
    return False


def _is_module_file(expr: ast.AST) -> bool:
    """`__file__`, or it made absolute (`os.path.abspath(__file__)`, `Path(__file__).resolve()`)."""
    while isinstance(expr, ast.Call) and (expr.args or isinstance(expr.func, ast.Attribute)):
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in ("resolve", "absolute") and not expr.args:
            expr = expr.func.value
        elif _last_of(expr.func) in ("abspath", "realpath", "Path", "PurePath") and len(expr.args) == 1:
            expr = expr.args[0]
        else:
            return False
    return isinstance(expr, ast.Name) and expr.id == "__file__"


def _last_of(expr: ast.AST) -> str:
    return expr.attr if isinstance(expr, ast.Attribute) else expr.id if isinstance(expr, ast.Name) else ""


def _path_parts(expr: ast.AST, param: str, scope: _Scope, *, top: bool = True) -> list[str | None] | None:
    """The parts, after the module's folder, of a path built from `__file__` (`None` stands for the
    parameter `param`): `os.path.join(os.path.dirname(__file__), "prompts", name)` is
    `["prompts", None]`. None for any other expression."""
    for _ in range(_MAX_HOPS):
        if isinstance(expr, ast.Name) and expr.id != param and len(scope.assigned.get(expr.id, [])) == 1:
            expr = scope.assigned[expr.id][0]  # path = os.path.join(...); open(path)
        elif isinstance(expr, ast.Call) and _last_of(expr.func) in ("Path", "PurePath") and len(expr.args) == 1:
            expr = expr.args[0]  # Path(os.path.join(...))
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "resolve":
            expr = expr.func.value
        else:
            break
    if top and isinstance(expr, ast.Name | ast.Constant):  # open(name): relative to the current folder
        return None
    if isinstance(expr, ast.Name) and expr.id == param:
        return [None]
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return [expr.value]
    if isinstance(expr, ast.Call) and _last_of(expr.func) == "dirname" and len(expr.args) == 1:
        return [] if _is_module_file(expr.args[0]) else None
    if isinstance(expr, ast.Attribute) and expr.attr == "parent":
        return [] if _is_module_file(expr.value) else None
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "with_name":
        if _is_module_file(expr.func.value) and len(expr.args) == 1:
            return _path_parts(expr.args[0], param, scope, top=False)
        return None
    if isinstance(expr, ast.Call) and _last_of(expr.func) == "join" and expr.args and not expr.keywords:
        pieces = [_path_parts(arg, param, scope, top=False) for arg in expr.args[:_MAX_HOPS]]
    elif isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
        operands: list[ast.expr] = []
        node: ast.expr = expr
        while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and len(operands) < _MAX_HOPS:
            operands.append(node.right)
            node = node.left
        base = _path_parts(node, param, scope) if isinstance(node, ast.Attribute | ast.Call) else None
        pieces = [base, *(_leaf(o, param) for o in reversed(operands))]
    else:
        return None
    if pieces[0] != [] or any(p is None for p in pieces):
        return None
    return [part for piece in pieces[1:] if piece is not None for part in piece]


def _leaf(expr: ast.expr, param: str) -> list[str | None] | None:
    if isinstance(expr, ast.Name) and expr.id == param:
        return [None]
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return [expr.value]
    return None


def _file_read_by(func: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> list[str | None] | None:
    """The path parts (see `_path_parts`) of the one file `func` reads: `open(path)` then `.read()`,
    or `path.read_text()`/`path.open()`, the path made of `__file__`'s folder and `param`."""
    scope = _function_scope(func)
    if param in scope.assigned or param in scope.others:
        return None
    found: list[list[str | None]] = []
    reads = False
    for node in _walk(func):
        if not isinstance(node, ast.Call):
            continue
        target: ast.AST | None = None
        if isinstance(node.func, ast.Name) and node.func.id == "open" and node.args:
            target = node.args[0]
        elif isinstance(node.func, ast.Attribute) and node.func.attr in ("read_text", "open") and not node.args:
            target, reads = node.func.value, reads or node.func.attr == "read_text"
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "read":
            reads = True
        if target is not None:
            parts = _path_parts(target, param, scope)
            if parts is not None and None in parts:
                found.append(parts)
    return found[0] if reads and len(found) == 1 else None


def _added(expr: ast.BinOp) -> list[ast.expr]:
    """The operands of `a + b + c` (a left-leaning chain of `+`), in order, read without recursion."""
    operands: list[ast.expr] = []
    node: ast.expr = expr
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        operands.append(node.right)
        node = node.left
    operands.append(node)
    return operands[::-1]


def _chain(expr: ast.AST) -> list[str] | None:
    """The names of a dotted chain (`pkg.prompt` -> `["pkg", "prompt"]`), or None for anything else."""
    names: list[str] = []
    while isinstance(expr, ast.Attribute):
        names.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    names.append(expr.id)
    return names[::-1]


def _describe(expr: ast.AST) -> str:
    if isinstance(expr, ast.Call):
        return f"a call ({_short(expr.func)}(...))"
    if isinstance(expr, ast.Name):
        return f"the name {expr.id!r}"
    if isinstance(expr, ast.Attribute):
        return f"the attribute {_short(expr)!r}"
    if isinstance(expr, ast.BinOp):
        return f"an expression ({type(expr.op).__name__.lower()})"
    return f"a {type(expr).__name__} expression"


def _short(expr: ast.AST) -> str:
    try:
        text = ast.unparse(expr)
    except Exception:  # unparse of a synthetic node: name it by its type
        return type(expr).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def _str_value(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def _source_arg(call: ast.Call, name: str = "source") -> ast.expr | None:
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    return _keyword(call, name)


def _names(expr: ast.AST, name: str) -> bool:
    """Whether `expr` is the name `name`, or a subscript of it (`name["k"]`)."""
    if isinstance(expr, ast.Subscript):
        expr = expr.value
    return isinstance(expr, ast.Name) and expr.id == name


def _is_state(expr: ast.AST, scope: _Scope | None = None) -> bool:
    """`x.state` or `x.state_delta` (a context's, a session's, an event's actions'), a name of
    the enclosing function bound to one (`mem = tool_context.state`), or a parameter that holds
    state (`def set_state(state, ...)`, `target: State`, or one a caller gives `ctx.state`)."""
    if isinstance(expr, ast.Name) and scope is not None:
        if expr.id in scope.state_params:
            return True
        return any(_is_state(value) for value in scope.assigned.get(expr.id, ()))
    return isinstance(expr, ast.Attribute) and expr.attr in ("state", "state_delta")
