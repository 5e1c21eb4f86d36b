"""google-adk's `state_schema=` models read from the project's source, never imported.

An ADK 2.x agent (or Workflow) may pass `state_schema=SomeModel`; google-adk checks the state written against
that model's fields where it enforces it. [`ModelReader`][templating.pysource.models.ModelReader] reads such a
model's fields from the parsed code (annotations, defaults, nested models, `list[...]`, `dict[...]`,
`extra="allow"`, base models of the project) into a [`Schema`][templating.schema.Schema]; nested models are read
only as deep as a key looks, so a model that refers to itself, or a chain of a thousand models, costs nothing up
front. The check of an instruction against them is the linter's (`templating.linter.adk_schema`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

from ..schema import Schema, SchemaField

__all__ = ["ModelReader"]

# How many base classes (and chained re-exports) are followed before a model is taken as open.
_MAX_BASES = 64


# A class named by an expression in a module: (that module, the class), or why it cannot be found.
Lookup: TypeAlias = Callable[[Any, ast.expr], "tuple[Any, ast.ClassDef] | str"]


@dataclass(frozen=True, slots=True)
class _Entry:
    """One field as declared: its annotation (in `module`), and its default's source text (`None`: none)."""

    module: Any
    annotation: ast.expr
    default: str | None


@dataclass(slots=True)
class _Model:
    """A model class read: its fields as declared (bases' first), and whether other keys are allowed."""

    entries: dict[str, _Entry]
    open: bool
    fields: _ModelFields | None = None
    # the attribute names of its fields (pydantic's `model_fields`, aliases aside), and whether they are all
    # known (no base from outside the project, none beyond the bound): what google-adk checks a write against
    names: tuple[str, ...] = ()
    complete: bool = True


class _ModelFields(Mapping[str, SchemaField]):
    """A model's fields, each built when first looked up (a nested model is read only when a key
    goes into it). Compared by identity: a model may contain itself."""

    __slots__ = ("_built", "_model", "_reader")

    def __init__(self, reader: ModelReader, model: _Model) -> None:
        self._reader, self._model = reader, model
        self._built: dict[str, SchemaField] = {}

    def __getitem__(self, name: str) -> SchemaField:
        if name not in self._built:
            entry = self._model.entries[name]
            self._built[name] = self._reader.field(entry.module, entry.annotation, entry.default)
        return self._built[name]

    def __contains__(self, name: object) -> bool:
        return name in self._model.entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._model.entries)

    def __len__(self) -> int:
        return len(self._model.entries)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)


_LISTS = {"list", "List", "Sequence", "MutableSequence", "set", "Set", "frozenset", "FrozenSet", "tuple", "Tuple"}
_LISTS |= {"Iterable", "Collection", "AbstractSet", "MutableSet", "deque", "Deque"}
_MAPPINGS = {"dict", "Dict", "Mapping", "MutableMapping", "OrderedDict", "DefaultDict", "defaultdict"}
_UNWRAPPED = {"Optional", "Annotated", "Required", "NotRequired", "ReadOnly", "Final"}
_NOT_FIELDS = {"ClassVar", "InitVar"}


def _last_name(expr: ast.expr) -> str:
    """`BaseModel` for `BaseModel`, `pydantic.BaseModel` or `t.Optional`'s `Optional`; `""` otherwise."""
    if isinstance(expr, ast.Subscript):
        expr = expr.value
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return expr.id if isinstance(expr, ast.Name) else ""


def _string_annotation(expr: ast.expr) -> ast.expr:
    """A forward reference (`"Tree"`, `"list[Node] | None"`) parsed to its expression."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str) and len(expr.value) < 1000:
        try:
            return ast.parse(expr.value.strip(), mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return expr
    return expr


def _subscript_args(expr: ast.Subscript) -> list[ast.expr]:
    return list(expr.slice.elts) if isinstance(expr.slice, ast.Tuple) else [expr.slice]


def _union_members(expr: ast.expr) -> list[ast.expr]:
    """The members of `A | B | None` or `Union[A, B]`, read without recursion."""
    members: list[ast.expr] = []
    stack = [expr]
    while stack and len(members) < 256:
        node = stack.pop()
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            stack += [node.right, node.left]
        elif isinstance(node, ast.Subscript) and _last_name(node) == "Union":
            stack += reversed(_subscript_args(node))
        else:
            members.append(node)
    return members


def _is_none(expr: ast.expr) -> bool:
    return (isinstance(expr, ast.Constant) and expr.value is None) or _last_name(expr) in ("None", "NoneType")


def _extra_allows(value: ast.expr | None) -> bool | None:
    """What a `model_config = ConfigDict(extra=...)` (or a dict) says of other keys: allowed, not, unsaid."""
    extra: ast.expr | None = None
    if isinstance(value, ast.Call):
        extra = next((kw.value for kw in value.keywords if kw.arg == "extra"), None)
    elif isinstance(value, ast.Dict):
        for key, item in zip(value.keys, value.values, strict=True):
            if isinstance(key, ast.Constant) and key.value == "extra":
                extra = item
    if extra is None:
        return None
    if isinstance(extra, ast.Attribute):  # Extra.allow
        return extra.attr == "allow"
    return isinstance(extra, ast.Constant) and extra.value == "allow"


def _key_of(name: str, value: ast.expr | None) -> str:
    """The state key of a field: its `Field(alias=...)`/`validation_alias=` when a literal, else its name."""
    if isinstance(value, ast.Call) and _last_name(value.func) == "Field":
        for kw in value.keywords:
            alias = kw.value
            if kw.arg in ("validation_alias", "alias") and isinstance(alias, ast.Constant):
                return alias.value if isinstance(alias.value, str) else name
    return name


_FACTORY_TEXT = {"list": "[]", "dict": "{}", "set": "set()", "tuple": "()", "str": "''", "int": "0"}


def _text(expr: ast.expr, limit: int = 80) -> str:
    """The source text of an expression, shortened with `...` when long."""
    text = ast.unparse(expr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _default_of(value: ast.expr | None) -> str | None:
    """A field's default as source text (`'en'`, `500`, `[]` for `default_factory=list`), `None` when it has
    none: `= x`, `Field(x)`, `Field(default=x)`, `Field(default_factory=f)`; `...` means none."""
    if value is None or (isinstance(value, ast.Constant) and value.value is Ellipsis):
        return None
    if isinstance(value, ast.Call) and _last_name(value.func) == "Field":
        if value.args:
            first = value.args[0]
            return None if isinstance(first, ast.Constant) and first.value is Ellipsis else _text(first)
        for kw in value.keywords:
            if kw.arg == "default_factory":
                factory = kw.value
                if isinstance(factory, ast.Name) and factory.id in _FACTORY_TEXT:
                    return _FACTORY_TEXT[factory.id]
                if isinstance(factory, ast.Lambda):
                    return _text(factory.body)
                return _text(factory) + "()"
            if kw.arg == "default":
                return None if isinstance(kw.value, ast.Constant) and kw.value.value is Ellipsis else _text(kw.value)
        return None
    return _text(value)


def _type_text(annotation: ast.expr) -> str:
    """A field's annotation as readable text: `Annotated[X, ...]` shown as `X`."""
    annotation = _string_annotation(annotation)
    while isinstance(annotation, ast.Subscript) and _last_name(annotation) == "Annotated":
        annotation = _string_annotation(_subscript_args(annotation)[0])
    return _text(annotation)


class ModelReader:
    """Reads the project's pydantic models from their source; `lookup` finds the class a name stands for.

    Each class is read once (its fields as declared, through its project base classes); what is inside
    a field is read when a key goes into it."""

    def __init__(self, lookup: Lookup) -> None:
        self.lookup = lookup
        self._models: dict[int, _Model | str] = {}
        self._schemas: dict[int, Schema] = {}

    def schema(self, module: Any, expr: ast.expr) -> tuple[Any, ast.ClassDef, Schema] | str:
        """The schema of the model `expr` names in `module`, with the module and class defining it, or why not."""
        found = self.lookup(module, _string_annotation(expr))
        if isinstance(found, str):
            return found
        where, cls = found
        model = self.model(where, cls)
        if isinstance(model, str):
            return model
        key = id(cls)
        if key not in self._schemas:
            self._schemas[key] = Schema(
                self.fields_of(model), f"{cls.name} ({where.path})", open=model.open, origin="pydantic"
            )
        return where, cls, self._schemas[key]

    def declared(self, module: Any, expr: ast.expr) -> tuple[Any, ast.ClassDef, frozenset[str] | None] | str:
        """The names of the fields of the model `expr` names (pydantic's `model_fields`: what google-adk checks a
        state write against, whatever `extra=` says), None when a base from outside the project may add some;
        with the module and class defining it, or why the model is not found."""
        found = self.lookup(module, _string_annotation(expr))
        if isinstance(found, str):
            return found
        where, cls = found
        model = self.model(where, cls)
        if isinstance(model, str):
            return model
        return where, cls, frozenset(model.names) if model.complete else None

    def fields_of(self, model: _Model) -> _ModelFields:
        if model.fields is None:
            model.fields = _ModelFields(self, model)
        return model.fields

    def model(self, module: Any, cls: ast.ClassDef) -> _Model | str:
        """The fields `cls` declares, bases first; a reason (a str) when it is not a pydantic model."""
        key = id(cls)
        if key in self._models:
            return self._models[key]
        # The class and its project bases, read without recursion: each class once, a fixed number in all.
        chain: list[tuple[Any, ast.ClassDef]] = []
        seen: set[int] = set()
        todo = [(module, cls)]
        is_model, is_open = False, False
        while todo:
            where, node = todo.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if len(seen) > _MAX_BASES:
                is_open = True  # bases beyond the bound: their fields are unknown
                break
            chain.append((where, node))
            for base in reversed(node.bases):
                name = _last_name(base)
                if name in ("BaseModel", "RootModel"):
                    is_model = True
                    continue
                if name in ("Generic", "object", "Protocol"):
                    continue
                found = self.lookup(where, base)
                if isinstance(found, str):
                    is_open = True  # a base from outside the project (a library's model): keys it adds are unknown
                    is_model = True
                else:
                    todo.append(found)
        if not is_model:
            result: _Model | str = f"{cls.name} is not a pydantic model (no BaseModel among its bases)"
            self._models[key] = result
            return result
        entries: dict[str, _Entry] = {}
        names: dict[str, None] = {}
        extra_allowed = False  # the last model_config (or class keyword extra=) read wins, as a subclass's does
        for where, node in reversed(chain):  # the furthest base first; a subclass redeclares over it
            allows = _extra_allows(ast.Call(ast.Name("class"), [], node.keywords))  # class S(BaseModel, extra=...)
            extra_allowed = extra_allowed if allows is None else allows
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "model_config" for t in stmt.targets
                ):
                    allows = _extra_allows(stmt.value)
                    extra_allowed = extra_allowed if allows is None else allows
                    continue
                if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
                    continue
                name = stmt.target.id
                annotation = _string_annotation(stmt.annotation)
                if name == "model_config":
                    allows = _extra_allows(stmt.value)
                    extra_allowed = extra_allowed if allows is None else allows
                    continue
                if name.startswith("_") or _last_name(annotation) in _NOT_FIELDS:
                    continue  # private attributes and class variables are not fields
                entries[_key_of(name, stmt.value)] = _Entry(where, annotation, _default_of(stmt.value))
                names[name] = None
        model = _Model(entries, is_open or extra_allowed, names=tuple(names), complete=not is_open)
        self._models[key] = model
        return model

    def field(self, module: Any, annotation: ast.expr, default: str | None) -> SchemaField:
        """What is known of a field of type `annotation` with `default` (source text, `None`: required):
        a nested model's fields, a list's items, the type and default as written."""
        shape = self.shape(module, annotation, 0)
        return replace(shape, required=default is None, type=_type_text(annotation), default=default)

    def shape(self, module: Any, annotation: ast.expr, depth: int) -> SchemaField:
        annotation = _string_annotation(annotation)
        if depth > 32:
            return SchemaField()
        while isinstance(annotation, ast.Subscript) and _last_name(annotation) in _UNWRAPPED:
            annotation = _string_annotation(_subscript_args(annotation)[0])  # Optional[X], Annotated[X, ...]
        members = [m for m in _union_members(annotation) if not _is_none(m)]
        if len(members) != 1:
            return SchemaField()  # a union of several types: anything might be there
        annotation = _string_annotation(members[0])
        if isinstance(annotation, ast.Subscript) and _last_name(annotation) in _UNWRAPPED:
            return self.shape(module, annotation, depth + 1)
        name = _last_name(annotation)
        if name in _LISTS:
            args = _subscript_args(annotation) if isinstance(annotation, ast.Subscript) else []
            items = self.shape(module, args[0], depth + 1) if args else None
            return SchemaField(items=items, is_list=True)
        if name in _MAPPINGS or isinstance(annotation, ast.Subscript):
            return SchemaField()  # dict[str, X]: any key goes
        if not isinstance(annotation, ast.Name | ast.Attribute) or name in ("str", "int", "float", "bool", "Any"):
            return SchemaField()
        found = self.lookup(module, annotation)
        if isinstance(found, str):
            return SchemaField()
        model = self.model(*found)
        if isinstance(model, str):
            return SchemaField()
        return SchemaField(fields=self.fields_of(model), open=model.open)
