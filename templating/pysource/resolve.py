"""What an expression of Python code stands for as a string, each character placed (literals, `+`, f-strings
of constants, `.strip()`, `textwrap.dedent`, names, a function's one return, a text file a function reads), or
why it is known only at run time; and the instructions found, recorded once each."""

from __future__ import annotations

import ast
import os
import stat
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from ..errors import TemplatingError
from ..places import LinkedFolders
from ..template import parse
from .found import Instruction, Kind, Skipped, StateSchema
from .imports import FileAnswers, _Modules
from .models import ModelReader
from .positions import _dedent, _literal, _Mapped, _Module, _read_literals, _text_mapped
from .reading import _MAX_TEXT_BYTES
from .syntax import (
    _MAX_HOPS,
    _added,
    _chain,
    _describe,
    _file_read_by,
    _final_return,
    _function_scope,
    _keyword,
    _Scope,
    _short,
    _uses_templating,
)


class _Project(_Modules):
    """The modules of a scan, what their expressions stand for, and what was found in them."""

    def __init__(
        self,
        read: Callable[[str], str],
        suffixes: Sequence[str],
        root: str | None = None,
        unsaved: Collection[str] | None = None,
        answers: FileAnswers | None = None,
        links: LinkedFolders | None = None,
    ) -> None:
        super().__init__(read, unsaved, answers, links)
        self.root = os.path.realpath(root if root is not None else os.getcwd())
        self.suffixes = tuple(s.upper() for s in suffixes)
        self.found: dict[tuple[object, ...], int] = {}  # instruction key -> index in result.instructions
        self.found_static: dict[tuple[object, ...], int] = {}  # the same for result.static_instructions
        self.used_constants: set[tuple[str, str]] = set()
        # function -> its parameters that some caller gives a context's state (save(ctx.state, ...))
        self.given_state: dict[ast.AST, set[str]] = {}
        # constants used as str.format / % templates (PROMPT.format(text=...)): Python's {}, not state keys
        self.formatted: set[tuple[str, str]] = set()
        self.returning: set[ast.AST] = set()  # functions whose return is being resolved (recursion)
        self.models = ModelReader(self.class_named)

    def forget(self) -> None:
        """Drop what the scan kept of the syntax trees once it is done (the trees go with their last
        reference, not at the garbage collector's next full pass), and every reference back to this object:
        a scan done goes with its last reference too (an editor's edit, each keystroke)."""
        self.modules.clear()
        self._found.clear()
        self.given_state.clear()
        self.returning.clear()
        self.models = ModelReader(_done)

    # -- resolving expressions to strings

    def resolve(self, module: _Module, expr: ast.AST, scope: _Scope | None, depth: int = 0) -> _Mapped | str:
        """The string `expr` stands for, with places, or why it cannot be known (a str)."""
        if depth > _MAX_HOPS:
            return "a chain of names too long to follow"
        if isinstance(expr, ast.Constant):
            if isinstance(expr.value, str):
                return _literal(module, expr)
            return f"not a string ({type(expr.value).__name__})"
        if isinstance(expr, ast.JoinedStr):
            return self.fstring(module, expr, scope, depth)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            parts: list[_Mapped] = []
            for operand in _added(expr):  # a + b + c + ...: one level, however long
                value = self.resolve(module, operand, scope, depth + 1)
                if isinstance(value, str):
                    return value
                parts.append(value)
            return _Mapped.join(parts)
        if isinstance(expr, ast.Call):
            return self.resolve_call(module, expr, scope, depth)
        if isinstance(expr, ast.Name):
            return self.resolve_name(module, expr.id, scope, depth)
        if isinstance(expr, ast.Attribute):
            target = self.module_named(module, _chain(expr.value), scope)
            if target is not None:
                return self.resolve_name(target, expr.attr, None, depth + 1)
        return f"{_describe(expr)}: its text is known only at run time"

    def fstring(self, module: _Module, expr: ast.JoinedStr, scope: _Scope | None, depth: int) -> _Mapped | str:
        """An f-string whose every field is a name of a string known here (a module constant) or a literal:
        its text, each character placed where it is written (a field's text where the constant is)."""
        values: list[_Mapped] = []
        for part in expr.values:
            if not isinstance(part, ast.FormattedValue):
                continue
            shown = _short(part.value)
            if part.conversion != -1 or part.format_spec is not None:
                return f"an f-string with a conversion or format spec in {{{shown}}}: known only at run time"
            field = self.resolve(module, part.value, scope, depth + 1)
            if isinstance(field, str):
                return f"an f-string whose field {{{shown}}} is known only at run time ({field})"
            values.append(field)
        unread = "an f-string that could not be read where it is written: its text is known only at run time"
        start = module.offset(expr.lineno, expr.col_offset)
        end = module.offset(expr.end_lineno or expr.lineno, expr.end_col_offset or 0)
        chars: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        fields: list[int] = []
        try:
            _read_literals(module.text, start, end, chars, starts, ends, fields)
        except (IndexError, ValueError, KeyError):
            return unread
        if len(fields) != len(values):
            return unread
        pieces: list[_Mapped] = []
        at = 0
        for cut, inserted in zip([*fields, len(chars)], [*values, None], strict=True):
            pieces.append(_Mapped("".join(chars[at:cut]), [module] * (cut - at), starts[at:cut], ends[at:cut]))
            if inserted is not None:
                pieces.append(inserted)
            at = cut
        result = _Mapped.join(pieces)
        known = iter(values)
        python = "".join(str(p.value) if isinstance(p, ast.Constant) else next(known).text for p in expr.values)
        if result.text != python:  # the source read otherwise than Python did: never a wrong place
            return unread
        return result

    def resolve_call(self, module: _Module, call: ast.Call, scope: _Scope | None, depth: int) -> _Mapped | str:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in ("strip", "lstrip", "rstrip") and not call.args:
            inner = self.resolve(module, func.value, scope, depth + 1)
            if isinstance(inner, str):
                return inner
            text = inner.text
            stripped = getattr(text, func.attr)()
            first = 0 if func.attr == "rstrip" else len(text) - len(text.lstrip())
            return inner.slice(first, first + len(stripped))
        if self.qualify(module, func) in ("textwrap.dedent", ".textwrap.dedent") and len(call.args) == 1:
            inner = self.resolve(module, call.args[0], scope, depth + 1)
            return inner if isinstance(inner, str) else _dedent(inner)
        called = self.function_called(module, func, scope)
        if called is not None:
            if call.args or call.keywords:
                read = self.file_read(module, call, *called, scope, depth)
                if read is not None:
                    return read
                return f"{called[1].name}() is called with arguments: its text is known only when it runs"
            return self.resolve_return(*called, depth)
        return f"{_describe(call)}: its text is known only at run time"

    def file_read(
        self,
        module: _Module,
        call: ast.Call,
        where: _Module,
        func: ast.FunctionDef | ast.AsyncFunctionDef,
        scope: _Scope | None,
        depth: int,
    ) -> _Mapped | str | None:
        """What `load_instruction_from_file("writer.txt")` returns when the function reads the file its
        argument names next to its own module (`open(os.path.join(os.path.dirname(__file__), name))`,
        `(Path(__file__).parent / name).read_text()`): that file's text, each character at its place
        there. None when the function is no such reader; a reason (a str) when the file cannot be read."""
        params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
        if isinstance(func, ast.AsyncFunctionDef) or not params or len(call.args) > 1:
            return None
        given = call.args[0] if call.args else _keyword(call, params[0])
        if given is None or len(call.args) + len(call.keywords) != 1:
            return None
        segments = _file_read_by(func, params[0])
        if segments is None:
            return None
        name = self.resolve(module, given, scope, depth + 1)
        if isinstance(name, str):
            return f"{func.name}() reads a file whose name is known only at run time ({name})"
        parts = [name.text if part is None else part for part in segments]
        path = os.path.normpath(os.path.join(os.path.dirname(where.path), *parts))
        return self.text_file(path, f"{func.name}({name.text!r})")

    def text_file(self, path: str, what: str) -> _Mapped | str:
        """The text of the file `path` an instruction is read from, each character placed in it: only a
        regular file inside the scan's root, of at most `_MAX_TEXT_BYTES`; else why not (a str), and the
        path is listed in `Scan.unread`."""
        found = self._text_file(path, what)
        if isinstance(found, str):
            self.result.unread.append(path)
        return found

    def _text_file(self, path: str, what: str) -> _Mapped | str:
        real = os.path.realpath(path)
        if real != self.root and not real.startswith(self.root.rstrip(os.sep) + os.sep):
            return f"{what} reads {path}, which is outside the project: not followed"
        try:
            info = os.stat(real)
            if not stat.S_ISREG(info.st_mode):
                return f"{what} reads {path}, which is not a regular file"
            if info.st_size > _MAX_TEXT_BYTES:
                return f"{what} reads {path}, which is larger than {_MAX_TEXT_BYTES} bytes: not read"
            module = self.modules.get(real)
            if module is None:
                if self.unsaved is not None and os.path.basename(path) in self.unsaved:
                    raw = self.read(path)  # an editor's unsaved text of it, through the reader
                else:
                    with open(real, "rb") as handle:
                        data = handle.read(_MAX_TEXT_BYTES + 1)
                    raw = data.decode("utf-8").removeprefix("\ufeff")
                module = _Module(path, real, raw, ast.Module(body=[], type_ignores=[]), linted=False)
                self.modules[real] = module
                self._found.clear()  # an import of this file now finds it
                self.result.sources[path] = raw
        except OSError as exc:
            return f"{what} reads {path}, which cannot be read ({exc.strerror or exc})"
        except UnicodeDecodeError:
            return f"{what} reads {path}, which is not UTF-8 text"
        except TemplatingError as exc:  # the reader's: left unread for safety
            return f"{what} reads {path}, which is not read: {exc}"
        return _text_mapped(module)

    def resolve_return(
        self, module: _Module, func: ast.FunctionDef | ast.AsyncFunctionDef, depth: int
    ) -> _Mapped | str:
        """What a call without arguments of `func` returns, when its text is fixed: a function whose
        body ends in its one `return` of a string (ADK's `instruction=return_instructions_root()`)."""
        value = _final_return(func)
        if isinstance(value, str):
            return f"{func.name}() is {value}: its text is known only when it runs"
        if func in self.returning:
            return f"{func.name}() calls itself: its text is known only when it runs"
        self.returning.add(func)
        try:
            returned = self.resolve(module, value, _function_scope(func), depth + 1)
        finally:
            self.returning.discard(func)
        return f"what {func.name}() returns: {returned}" if isinstance(returned, str) else returned

    def resolve_name(self, module: _Module, name: str, scope: _Scope | None, depth: int) -> _Mapped | str:
        if scope is not None and scope.binds(name):
            values = scope.assigned.get(name, [])
            if len(values) != 1:
                why = "a parameter" if name in scope.params else "bound more than once"
                return f"{name!r} is {why} in the function: its text is known only at run time"
            return self.resolve(module, values[0], scope, depth + 1)
        followed = self.follow(module, name)
        if isinstance(followed, str):
            return followed
        module, name = followed
        binding = module.bindings.get(name)
        if binding is None:
            return f"{name!r} is not bound at module level in {module.path}"
        if isinstance(binding, ast.ImportFrom):
            alias = next(a for a in binding.names if (a.asname or a.name) == name)
            sub = self.find_module(module, ((binding.module or "") + "." + alias.name).strip("."), binding.level)
            if sub is not None:
                return f"{name!r} is a module, not a string"
            return f"{name!r} is imported from a module outside the linted files"
        if isinstance(binding, ast.Import):
            return f"{name!r} is a module, not a string"
        if isinstance(binding, ast.FunctionDef | ast.AsyncFunctionDef):
            return f"{name!r} is a function (an instruction provider): its text is known only when it runs"
        if isinstance(binding, ast.ClassDef):
            return f"{name!r} is a class, not a string"
        if isinstance(binding, ast.Name) and binding.id.startswith("<"):
            return f"{name!r} is {binding.id.strip('<>')} at module level: its text is known only at run time"
        self.used_constants.add((module.key, name))
        return self.resolve(module, binding, None, depth + 1)

    def constant(self, module: _Module, expr: ast.AST, scope: _Scope | None) -> tuple[_Module, str] | None:
        """The module constant `expr` names (following imports), if it is a plain name of one."""
        alias: tuple[_Module, str] | None = None  # ALIAS = ROOT_PROMPT: ALIAS, should ROOT_PROMPT lead nowhere
        for _ in range(_MAX_HOPS):
            if isinstance(expr, ast.Name):
                if scope is not None and scope.binds(expr.id):
                    values = scope.assigned.get(expr.id, [])
                    if len(values) != 1 or expr.id in scope.params:
                        return alias
                    expr = values[0]  # text = ROOT_PROMPT in the function
                    continue
                followed = self.follow(module, expr.id)
                if isinstance(followed, str):
                    return alias
                module, name = followed
                binding = module.bindings.get(name)
                if isinstance(binding, ast.Name) and not binding.id.startswith("<"):
                    alias, expr, scope = (module, name), binding, None  # ALIAS = ROOT_PROMPT
                    continue
                return (module, name) if isinstance(binding, ast.expr) else alias
            if isinstance(expr, ast.Attribute):
                target = self.module_named(module, _chain(expr.value), scope)
                if target is None:
                    return alias
                module, expr, scope = target, ast.Name(expr.attr), None
                continue
            if isinstance(expr, ast.Call) and not expr.args and not expr.keywords:
                called = self.function_called(module, expr.func, scope)  # a function returning a constant
                value = _final_return(called[1]) if called is not None else None
                if called is None or not isinstance(value, ast.expr):
                    return alias
                module, expr, scope = called[0], value, _function_scope(called[1])
                continue
            return alias
        return alias

    # -- recording

    def state_schema(self, module: _Module, expr: ast.expr, agent: str) -> StateSchema:
        """The `state_schema=` model `expr` of the ADK agent `agent`, read from the code."""
        found = self.models.schema(module, expr)
        if isinstance(found, str):
            state = StateSchema(agent, _short(expr), module.path, module.node_span(expr), None, found, module.path)
        else:
            where, cls, schema = found
            at = where.node_span(cls).start
            named = where.text.find(cls.name, at)  # class TripState(BaseModel): the place of its name
            span = where.span(named, named + len(cls.name)) if named >= 0 else where.span(at, at)
            state = StateSchema(agent, cls.name, where.path, span, schema, None, module.path)
        self.result.state_schemas.append(state)
        return state

    def add(
        self,
        module: _Module,
        expr: ast.AST,
        scope: _Scope | None,
        *,
        dialect: Kind,
        site: str,
        names: Iterable[str] = (),
        state_schemas: tuple[StateSchema, ...] = (),
        static: bool = False,
    ) -> Instruction | str:
        """Record the instruction `expr` stands for (once, however many call sites give it): the
        [`Instruction`][templating.pysource.Instruction] recorded, or why it cannot be read (recorded as
        skipped). `static`: an agent's `static_instruction=`, sent as written: kept apart, in
        `Scan.static_instructions`, and never reported as skipped (a `types.Content` is no instruction to check)."""
        value = self.resolve(module, expr, scope)
        where = module.node_span(expr)
        const = self.constant(module, expr, scope)
        label = const[1] if const else site
        if isinstance(value, str):
            if not static:
                self.result.skipped.append(Skipped(site, module.path, where, value, tuple(names)))
            return value
        all_names = [*names]
        if const:
            self.used_constants.add((const[0].key, const[1]))
            all_names.insert(0, const[1])
            key: tuple[object, ...] = ("const", const[0].key, const[1], dialect)
        elif value.text:
            # keyed by where the text is written: once however many call sites give it (a function's return)
            key = ("text", value.text, value.mods[0].key, value.starts[0], value.mods[-1].key, value.ends[-1], dialect)
        else:
            key = ("site", module.key, where.start, dialect)
        found, kept = (self.found_static, self.result.static_instructions) if static else (self.found, None)
        listed = self.result.instructions if kept is None else kept
        index = found.get(key)
        if index is not None:
            old = listed[index]
            merged = tuple(dict.fromkeys([*old.names, *all_names]))
            schemas = old.state_schemas + tuple(s for s in state_schemas if s not in old.state_schemas)
            given_at = tuple(dict.fromkeys([*old.given_at, (module.path, where)]))
            listed[index] = Instruction(
                old.label, merged, old.dialect, old.text, old.path, old.span, old._mapped, schemas, old.file, given_at
            )
            return listed[index]
        first = value.mods[0] if value.text else module
        span = where
        if value.text:  # from its first character to its last one written in the same file
            last = len(value.text) - 1
            while last > 0 and value.mods[last] is not first:
                last -= 1
            span = first.span(value.starts[0], max(value.ends[last], value.starts[0] + 1))
        path = first.path
        found[key] = len(listed)
        unique_names = tuple(dict.fromkeys(all_names))
        listed.append(
            Instruction(
                label,
                unique_names,
                dialect,
                value.text,
                path,
                span,
                value,
                state_schemas,
                first.key,
                ((module.path, where),),
            )
        )
        return listed[-1]

    def add_unused_constants(self, modules: Sequence[_Module]) -> None:
        """Module constants named `*PROMPT`/`*INSTRUCTION` that no call site used, holding a placeholder
        (a constant that is part of another such constant is linted as part of it, not twice)."""
        candidates: list[tuple[_Module, str, Kind]] = []
        used_by_call_sites = set(self.used_constants)
        self.used_constants.clear()
        for module in modules:
            for name, binding in module.bindings.items():
                if not isinstance(binding, ast.expr) or not name.upper().endswith(self.suffixes):
                    continue
                if (module.key, name) in used_by_call_sites or (module.key, name) in self.formatted:
                    continue
                before = set(self.used_constants)
                value = self.resolve_name(module, name, None, 0)
                self.used_constants = before | (self.used_constants - {(module.key, name)})
                if isinstance(value, str):
                    continue
                # The dialect is guessed: ADK's {key} when it has such placeholders; the angle syntax only
                # in a module that uses templating (elsewhere <role>...</role> is plain text, not a key).
                dialect: Kind
                if parse(value.text, dialect="adk").placeholders:
                    dialect = "adk"
                elif _uses_templating(module) and parse(value.text).placeholders:
                    dialect = "angle"
                else:
                    continue
                candidates.append((module, name, dialect))
        part_of_another = set(self.used_constants)
        for module, name, dialect in candidates:
            if (module.key, name) not in part_of_another:
                self.add(module, ast.Name(name), None, dialect=dialect, site=name)


def _done(module: Any, expr: ast.expr) -> str:
    """The class lookup of a scan done (none is read after it)."""
    return "the scan is done: no class is looked up"
