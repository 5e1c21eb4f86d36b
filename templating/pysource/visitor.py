"""The walk over each module (its call sites of instructions and its state writes, in the scope of the
enclosing function), and [`scan`][templating.pysource.scan], which runs it over the given files."""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Collection, Sequence

from .._collector import paused as _collector_paused
from ..places import LinkedFolders
from .agents import _AgentReader
from .found import CONSTANT_SUFFIXES, Instruction, Kind, Scan, Skipped, StateSchema, Write
from .imports import FileAnswers
from .positions import _Module
from .reading import PythonSourceError, _read_python
from .resolve import _Project
from .syntax import (
    _MAX_HOPS,
    _added,
    _chain,
    _function_scope,
    _is_state,
    _keyword,
    _names,
    _Scope,
    _short,
    _source_arg,
    _str_value,
)

_ASSIGNMENTS = frozenset({ast.Assign, ast.AugAssign, ast.AnnAssign})
_TEMPLATING_SOURCES = {"instruction", "Template", "parse", "render", "jinja"}
_AGENT_KWARGS = ("instruction", "global_instruction")
_ADK_AGENTS = {"Agent", "LlmAgent"}
_PROVIDER_CALLS = {"instruction", "Template", "parse", "jinja", "concat", "when", "static"}
# google-adk's State class names its scope prefixes: State.USER_PREFIX + "name" is "user:name".
_STATE_PREFIXES = {"APP_PREFIX": "app:", "USER_PREFIX": "user:", "TEMP_PREFIX": "temp:"}
# The calls whose state= starts a session with those keys (a service's, or a Session made in a test).
_SESSION_MAKERS = {"create_session", "Session"}
# The events whose state= writes those keys: a google-adk 2.x workflow node's `yield Event(state={...})`.
_STATE_EVENTS = {"Event"}
# Constants that Python code fills in itself hold its fields, not state keys: they are no instructions.
# The methods that fill in a str (PROMPT.format(...), PROMPT.replace("{x}", ...)), and the template
# engines that take one (LangChain, Jinja2, string.Template), called by their last name.
_FILLED_BY_METHOD = {"format", "format_map", "replace"}
_TEMPLATE_ENGINES = {"from_template", "PromptTemplate", "ChatPromptTemplate", "Template", "from_string"}


class _Visitor:
    """Walks one module: call sites of instructions, and state writes; knows the enclosing function."""

    def __init__(self, project: _Project, module: _Module, agents: _AgentReader) -> None:
        self.project, self.module, self.agents = project, module, agents
        self.owner: ast.AST | None = None  # the function or lambda of the node being visited (None: module level)
        self.given_state = project.given_state
        # names for templating's own instruction(...)/jinja(...) calls: the module constant they are
        # assigned to, or the agent they are given to (set when the walk meets the parent, before the call)
        self.names_for: dict[int, list[str]] = {}
        # the state_schema= of the ADK agents such a call is given to
        self.schemas_for: dict[int, tuple[StateSchema, ...]] = {}

    def run(self) -> None:
        self.walk()

    def find_state_arguments(self) -> None:
        """The parameters of this module's functions that a call here gives a context's state:
        `_set_initial_states(data, callback_context.state)` makes `target` state in
        `def _set_initial_states(source, target)`."""
        functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        calls: list[ast.Call] = []
        walked = self.module.preorder
        for node in walked.nodes:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                # the first met breadth first (as ast.walk would): the shallowest, then the first written
                first = functions.get(node.name)
                if first is None or walked.depths[id(node)] < walked.depths[id(first)]:
                    functions[node.name] = node
            elif isinstance(node, ast.Call) and any(
                _is_state(a) for a in (*node.args, *(k.value for k in node.keywords))
            ):
                calls.append(node)
        for node in calls:
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            target = self.imported_function(func) or functions.get(name)
            if target is None:
                continue
            positional = [a.arg for a in (*target.args.posonlyargs, *target.args.args)]
            if positional[:1] in (["self"], ["cls"]) and isinstance(func, ast.Attribute):
                positional = positional[1:]
            given = [(positional[i] if i < len(positional) else None, a) for i, a in enumerate(node.args)]
            given += [(kw.arg, kw.value) for kw in node.keywords]
            for param, value in given:
                if param is not None and _is_state(value):
                    self.given_state.setdefault(target, set()).add(param)

    def imported_function(self, func: ast.expr) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The function of another linted module that `func` names (`set_state` after
        `from .utils import set_state`, `utils.set_state` after `from . import utils`), if it can be
        found."""
        project, module = self.project, self.module
        if isinstance(func, ast.Name):
            binding = module.bindings.get(func.id)
            if not isinstance(binding, ast.ImportFrom):
                return None
            alias = next(a for a in binding.names if (a.asname or a.name) == func.id)
            source = project.find_module(module, binding.module or "", binding.level)
            name = alias.name
        elif isinstance(func, ast.Attribute):
            source = project.module_named(module, _chain(func.value), None)
            name = func.attr
        else:
            return None
        found = source.bindings.get(name) if source is not None else None
        return found if isinstance(found, ast.FunctionDef | ast.AsyncFunctionDef) else None

    def walk(self) -> None:
        """Every node acted on (see `_Module.preorder`), parents first, each in the scope of the function
        it is in. A function's scope is made when first read (`_Scope.later`): most are never read."""
        walked = self.module.preorder
        scopes: dict[int, _Scope] = {}  # each function's scope, by id
        call, assign, binop, call_type = self.call, _ASSIGNMENTS, ast.BinOp, ast.Call
        for item, owner in zip(walked.nodes, walked.owners, strict=True):
            here = None if owner is None else scopes[id(owner)]
            self.owner = owner
            kind = type(item)
            if kind is call_type:
                call(item, here)  # type: ignore[arg-type]
            elif kind is binop:
                if isinstance(item.op, ast.Mod):  # type: ignore[attr-defined]
                    self.formatted(item.left, here)  # type: ignore[attr-defined]
            elif kind in assign:
                assert isinstance(item, ast.Assign | ast.AugAssign | ast.AnnAssign)
                targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                for target in targets:
                    self.assignment(target, item.value, here)
                    if (
                        here is None
                        and isinstance(target, ast.Name)
                        and isinstance(item.value, ast.Call)
                        and self.module.bindings.get(target.id) is item.value
                    ):  # B = instruction("..."): a module constant, named B
                        self.names_for.setdefault(id(item.value), []).append(target.id)
            else:  # a function or a lambda
                assert isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
                scopes[id(item)] = _Scope.later(functools.partial(self.scope_of, item, here))

    def scope_of(self, func: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, enclosing: _Scope | None) -> _Scope:
        """The scope of `func` in the function `enclosing` it (None: at module level): its own names, the
        parameters callers give state, and the enclosing function's names it does not bind itself."""
        inner = _function_scope(func)
        inner.state_params |= self.given_state.get(func, set()) - inner.assigned.keys() - inner.others
        if enclosing is not None:  # names of the enclosing function that this one does not bind
            inner.state_params |= {s for s in enclosing.state_params if not inner.binds(s)}
            for name, values in enclosing.assigned.items():
                if not inner.binds(name):
                    inner.assigned[name] = values
            inner.params |= {p for p in enclosing.params if not inner.binds(p)}
            inner.others |= {o for o in enclosing.others if not inner.binds(o)}
        return inner

    # -- instructions

    def formatted(self, expr: ast.expr, scope: _Scope | None) -> None:
        """`expr` is a Python format string (`PROMPT.format(...)`, `PROMPT % ...`): if it names a
        module constant, that constant's braces are Python's, so it is no instruction of its own."""
        const = self.project.constant(self.module, expr, scope)
        if const is not None:
            self.project.formatted.add((const[0].key, const[1]))

    def call(self, call: ast.Call, scope: _Scope | None) -> None:
        project, module = self.project, self.module
        self.call_writes(call, scope)
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in _FILLED_BY_METHOD:  # PROMPT.format(...)
            if isinstance(func.value, ast.Name) and func.value.id == "str" and call.args:  # str.format(PROMPT, ...)
                self.formatted(call.args[0], scope)
            else:
                self.formatted(func.value, scope)
        origin = project.qualify(module, func)
        self.agents.visit_call(module, call, scope, origin, self.names_for.get(id(call), []), self.owner)
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if called in _TEMPLATE_ENGINES and (origin or "").lstrip(".").split(".")[0] != "templating":
            for template in [*call.args[:1], *(kw.value for kw in call.keywords if kw.arg in ("template", "source"))]:
                self.formatted(template, scope)  # ChatPromptTemplate.from_template(PROMPT), jinja2.Template(PROMPT)
        if origin is None:
            return
        last = origin.rsplit(".", 1)[-1]
        head = origin.lstrip(".").split(".")[0]
        if head == "templating" and last in _TEMPLATING_SOURCES:
            callee = _short(call.func)
            arg = _source_arg(call)
            if arg is None or self.is_provider(arg):
                return
            dialect: Kind = "jinja" if last == "jinja" else "angle"
            if last in ("Template", "parse", "render"):
                given = _keyword(call, "dialect")
                if given is not None:
                    text = _str_value(given)
                    if text not in ("angle", "adk"):
                        project.result.skipped.append(
                            Skipped(
                                f"{callee}(...)",
                                module.path,
                                module.node_span(given),
                                "a dialect= that is not a literal",
                            )
                        )
                        return
                    dialect = "adk" if text == "adk" else "angle"
            names = self.names_for.get(id(call), []) if last != "render" else []  # render(): a result, no template
            agents_schemas = self.schemas_for.get(id(call), ())
            site = f"{callee}(...)"
            found = project.add(
                module, arg, scope, dialect=dialect, site=site, names=names, state_schemas=agents_schemas
            )
            self.agents.recorded(call, found, templating=True)
        elif (head == "templating" and last == "Agent") or (head == "google" and last in _ADK_AGENTS):
            callee = _short(call.func)
            dialect = "angle" if head == "templating" else "adk"
            name = _str_value(_keyword(call, "name"))
            shown = f"{callee}(name={name!r})" if name is not None else f"{callee}(...)"
            shown = shown.replace("'", '"')
            given_schema = _keyword(call, "state_schema") if head == "google" else None
            schemas: tuple[StateSchema, ...] = ()
            if given_schema is not None and not (isinstance(given_schema, ast.Constant) and given_schema.value is None):
                schemas = (project.state_schema(module, given_schema, shown),)
            # its names: the agent's name=, and the module-level variable it is assigned to (quiz_agent = ...)
            owners = list(dict.fromkeys([*([name] if name is not None else []), *self.names_for.get(id(call), [])]))
            for kwarg in _AGENT_KWARGS:
                value = _keyword(call, kwarg)
                if value is None:
                    continue
                names = [n for owner in owners for n in (owner, f"{owner}.{kwarg}")]
                if self.is_provider(value):  # instruction("..."): linted at its own call site, named here
                    self.names_for.setdefault(id(value), []).extend(names)
                    self.schemas_for[id(value)] = self.schemas_for.get(id(value), ()) + schemas
                    continue
                # B = instruction("..."); Agent(instruction=B)
                named = self.named_provider(value, scope, names, schemas)
                if named is not None:
                    self.agents.recorded(value, named, templating=True)
                    continue
                found = project.add(
                    module, value, scope, dialect=dialect, site=f"{shown}.{kwarg}", names=names, state_schemas=schemas
                )
                if head == "google":
                    self.agents.recorded(value, found)
            static = _keyword(call, "static_instruction")
            if static is not None and not self.is_provider(static):
                names = [f"{owner}.static_instruction" for owner in owners]
                site = f"{shown}.static_instruction"
                project.add(module, static, scope, dialect=dialect, site=site, names=names, static=True)

    def named_provider(
        self, value: ast.expr, scope: _Scope | None, names: list[str], schemas: tuple[StateSchema, ...] = ()
    ) -> Instruction | str | None:
        """If `value` names a module constant holding a call of templating's own `instruction`,
        `Template`, `parse` or `jinja` with a literal dialect, give that instruction `names`
        (it is linted where the constant is) and return what was recorded (None: no such constant)."""
        project = self.project
        const = project.constant(self.module, value, scope)
        if const is None:
            return None
        module, name = const
        call = module.bindings.get(name)
        if not isinstance(call, ast.Call):
            return None
        origin = project.qualify(module, call.func) or ""
        last = origin.rsplit(".", 1)[-1]
        arg = _source_arg(call)
        if origin.lstrip(".").split(".")[0] != "templating" or last not in _TEMPLATING_SOURCES - {"render"}:
            return None
        if arg is None or self.is_provider(arg):
            return None
        dialect: Kind = "jinja" if last == "jinja" else "angle"
        given = _keyword(call, "dialect")
        if given is not None:
            text = _str_value(given)
            if last == "jinja" or text not in ("angle", "adk"):
                return None
            dialect = "adk" if text == "adk" else "angle"
        site = f"{_short(call.func)}(...)"
        return project.add(module, arg, None, dialect=dialect, site=site, names=[name, *names], state_schemas=schemas)

    def is_provider(self, expr: ast.expr) -> bool:
        """A call to one of templating's own providers: linted at its own call site."""
        if not isinstance(expr, ast.Call):
            return False
        origin = self.project.qualify(self.module, expr.func) or ""
        return origin.lstrip(".").split(".")[0] == "templating" and origin.rsplit(".", 1)[-1] in _PROVIDER_CALLS

    # -- state writes

    def write(self, key: str | None, node: ast.AST, how: str) -> None:
        owner = self.owner
        function = None if owner is None else self.agents.function_id(self.module, owner)
        self.project.result.writes.append(Write(key, self.module.path, self.module.node_span(node), how, function))

    def key_of(self, node: ast.AST | None, scope: _Scope | None, depth: int = 0) -> str | None:
        """The state key `node` names: a string literal, or a name bound to one (`KEY`,
        `constants.ITINERARY_KEY`, imported or not); None when it is known only at run time."""
        if node is None:
            return None
        text = _str_value(node)
        if text is not None:
            return text
        if isinstance(node, ast.Attribute) and node.attr in _STATE_PREFIXES and _chain(node.value) == ["State"]:
            return _STATE_PREFIXES[node.attr]  # google-adk's State.USER_PREFIX
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            if depth >= _MAX_HOPS:
                return None
            keys = [self.key_of(operand, scope, depth + 1) for operand in _added(node)]
            return None if None in keys else "".join(k for k in keys if k is not None)
        if not isinstance(node, ast.Name | ast.Attribute):
            return None
        value = self.project.resolve(self.module, node, scope)
        return None if isinstance(value, str) else value.text

    def dict_keys(self, value: ast.AST, how: str, scope: _Scope | None = None) -> None:
        if isinstance(value, ast.Name):  # state=initial_state: one dict assigned to it in this module...
            name = value.id
            assigned: list[ast.expr] = []
            for node in self.module.nodes:
                if isinstance(node, ast.Assign | ast.AnnAssign):
                    for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                        if isinstance(target, ast.Name) and target.id == name and node.value is not None:
                            assigned.append(node.value)
                        elif _names(target, name) and isinstance(target, ast.Subscript):
                            self.write(self.key_of(target.slice, None), target.slice, how)  # ...then name["k"] = v
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and _names(node.func.value, name)
                ):
                    if node.func.attr == "update":  # ...or name.update({...}, k=v)
                        for arg in node.args:
                            if isinstance(arg, ast.Dict):
                                self.dict_keys(arg, how)
                            else:
                                self.write(None, arg, how)
                        for kw in node.keywords:
                            self.write(kw.arg, kw.value, how)
                    elif node.func.attr == "setdefault" and node.args:
                        self.write(self.key_of(node.args[0], None), node.args[0], how)
            if len(assigned) == 1:
                value = assigned[0]
        if isinstance(value, ast.Constant) and value.value is None:
            return
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict":
            for arg in value.args:  # dict({...}, k=v)
                if isinstance(arg, ast.Dict):
                    self.dict_keys(arg, how, scope)
                else:
                    self.write(None, arg, how)
            for kw in value.keywords:  # None for dict(**other): its keys are known only at run time
                self.write(kw.arg, kw.value, how)
            return
        if not isinstance(value, ast.Dict):
            fields = self.dumped_fields(value, scope)
            for key in fields if fields is not None else [None]:
                self.write(key, value, how)
            return
        for k in value.keys:
            self.write(self.key_of(k, scope), k if k is not None else value, how)

    def dumped_fields(self, value: ast.AST, scope: _Scope | None) -> list[str] | None:
        """The keys of `Model(...).model_dump()` (or `.dict()`, or of a name bound once to `Model(...)`) for a
        pydantic model of the project: every field, defaults included, as pydantic dumps them. None when that is
        not what `value` is, or the dump leaves fields out (`exclude=`, `exclude_unset=`...)."""
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and not value.args):
            return None
        if value.func.attr not in ("model_dump", "dict") or any(
            kw.arg not in ("mode", "by_alias") for kw in value.keywords
        ):
            return None
        made = value.func.value
        if isinstance(made, ast.Name):  # state = TripState(...), then state.model_dump()
            bound = scope.assigned.get(made.id, []) if scope is not None else []
            if not bound:
                bound = [
                    node.value
                    for node in self.module.tree.body
                    if isinstance(node, ast.Assign) and any(_names(t, made.id) for t in node.targets)
                ]
            made = bound[0] if len(bound) == 1 else made
        if not isinstance(made, ast.Call) or not isinstance(made.func, ast.Name | ast.Attribute):
            return None
        found = self.project.models.schema(self.module, made.func)
        if isinstance(found, str) or found[2].open:
            return None  # not a model of the project, or one whose fields are not all known
        return list(found[2].fields)

    def call_writes(self, call: ast.Call, scope: _Scope | None) -> None:
        for kw in call.keywords:
            if kw.arg == "output_key":
                if not (isinstance(kw.value, ast.Constant) and kw.value.value is None):
                    self.write(self.key_of(kw.value, scope), kw.value, "output_key")
            elif kw.arg == "state_delta":
                self.dict_keys(kw.value, "state_delta", scope)
        func = call.func
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if called in _SESSION_MAKERS or called in _STATE_EVENTS:
            state = _keyword(call, "state")
            if state is not None:
                writes = self.project.result.writes
                before = len(writes)
                self.dict_keys(state, f"{called}(state=...)", scope)
                if called in _SESSION_MAKERS:
                    keys = [w.key for w in writes[before:]]
                    self.agents.session(self.module, call, None if None in keys else tuple(k for k in keys if k))
        if isinstance(func, ast.Attribute) and func.attr in ("update", "setdefault") and _is_state(func.value, scope):
            if func.attr == "update":
                for arg in call.args:
                    self.dict_keys(arg, ".state.update(...)", scope)
                for kw in call.keywords:
                    self.write(kw.arg, kw.value, ".state.update(...)")
            elif func.attr == "setdefault" and call.args:
                self.write(self.key_of(call.args[0], scope), call.args[0], ".state.setdefault(...)")

    def assignment(self, target: ast.AST, value: ast.AST | None, scope: _Scope | None) -> None:
        if isinstance(target, ast.Subscript) and _is_state(target.value, scope):
            self.write(self.key_of(target.slice, scope), target.slice, "state[...] = ...")
        elif isinstance(target, ast.Attribute) and target.attr == "state_delta" and value is not None:
            self.dict_keys(value, "state_delta = {...}", scope)
        elif isinstance(target, ast.Tuple | ast.List):
            for item in target.elts:
                self.assignment(item, None, scope)


def scan(
    paths: Sequence[str],
    *,
    suffixes: Sequence[str] = CONSTANT_SUFFIXES,
    read: Callable[[str], str] = _read_python,
    keep_going: bool = False,
    root: str | None = None,
    unsaved: Collection[str] | None = None,
    configs: Sequence[str] = (),
    answers: FileAnswers | None = None,
    links: LinkedFolders | None = None,
) -> Scan:
    """Find the instructions and state writes of the Python files `paths` (parsed, never run), and the agents
    they build (for the agent model, `templating.agent_model`).

    Names imported from other modules are followed into those files when they can be found (next to
    the importer for relative imports, in a folder above it for absolute ones), whether or not they
    are in `paths`.

    Args:
        paths: The Python files to scan.
        suffixes: Module constants whose name ends in one of them are linted even when no call site
            uses them, if they hold a placeholder.
        read: Reads a file's text; by default as Python does
            ([`python_text`][templating.pysource.python_text], its coding line honoured).
        keep_going: A file of `paths` that is not valid Python is a
            [`PythonSourceError`][templating.pysource.PythonSourceError]; with `keep_going`, it is
            recorded in `Scan.errors` instead and the other files are scanned (their state writes
            are then not all known, so `Scan.written` is `None`).
        root: Bounds the text files an instruction is read from
            (`load_instruction_from_file("writer.txt")`): only regular files inside it are read.
            Default: the current folder.
        unsaved: With a `read` of your own, the files it may give a text for that are not on disk (an
            editor's unsaved buffers): an import is looked for on disk first (one `stat`), and read only
            when the file is there or named as one of these. None (the default with such a `read`):
            any file may be read without being on disk, so every candidate of an import is read.
        configs: google-adk Agent Config files (`root_agent.yaml`) to read too (with `read`, inside `root`):
            their agents join `Scan.agents`, their instructions `Scan.config_instructions` (not linted yet).
        answers: The file system's answers an earlier scan of the same project kept (whether a module a name
            may be imported from is there, real paths), to ask it again only outside the project's root; the
            caller drops them (`FileAnswers.forget`) whenever files may have been created or deleted.
        links: The project's links to folders (`app/sub` -> `real_sub`): a relative import going up out of a
            folder a link points at is looked for from the link's side first, as Python resolves it when the
            module is imported through the link. None: from the module's real folder only.
    """
    if unsaved is None and read is _read_python:
        unsaved = ()  # the default reader reads files on disk only
    # A scan makes a syntax tree per file and keeps every one until it is done: the collector would walk each
    # tree at least twice while it grows and find no cycle in it (a tenth of a large scan).
    with _collector_paused():
        return _scan(paths, suffixes, read, keep_going, root, unsaved, configs, answers, links)


def _scan(
    paths: Sequence[str],
    suffixes: Sequence[str],
    read: Callable[[str], str],
    keep_going: bool,
    root: str | None,
    unsaved: Collection[str] | None,
    configs: Sequence[str] = (),
    answers: FileAnswers | None = None,
    links: LinkedFolders | None = None,
) -> Scan:
    project = _Project(read, suffixes, root, unsaved, answers, links)
    try:
        return _scan_project(project, paths, keep_going, configs)
    except BaseException:  # (a RecursionError on deep code): the half-made scan leaves no cycle behind either
        for module in project.modules.values():
            module.forget_tree()
        project.forget()
        raise


def _scan_project(project: _Project, paths: Sequence[str], keep_going: bool, configs: Sequence[str]) -> Scan:
    modules: list[_Module] = []
    for path in paths:
        try:
            modules.append(project.load(path, linted=True))
        except PythonSourceError as exc:
            if not keep_going:
                raise
            # kept without its traceback: its frames (this one among them) hold the scan, which holds it
            exc.__traceback__ = exc.__context__ = exc.__cause__ = None
            project.result.errors.append(exc)
            project.result.sources[path] = exc.source or ""
    agents = _AgentReader(project)
    agents.prepare(modules)
    visitors = [_Visitor(project, module, agents) for module in modules]
    for visitor in visitors:  # first every call giving state to a function, which may be in another module
        visitor.find_state_arguments()
    for visitor in visitors:
        visitor.run()
    project.add_unused_constants(modules)
    if configs:
        from .agent_config import read_configs

        read_configs(project, agents, configs)
    agents.finish()
    found = project.result
    if any(state.schema is not None for state in found.state_schemas):
        # a state_schema= model's nested models are read from the trees when a key first goes into them
        for module in project.modules.values():
            module.forget_walks()
    else:
        for module in project.modules.values():
            module.forget_tree()
        project.forget()
    return found
