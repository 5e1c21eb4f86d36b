"""Schemas of state (a pydantic model, a JSON Schema, a list of keys), read into one `Schema` (the data
types, `Schema` and `SchemaField`, are `templating.schema`'s: the scanner of Python code builds them too)."""

from __future__ import annotations

import contextlib
import importlib
import json
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeAlias

from ..errors import TemplatingError
from ..inputs import InputError, read_text
from ..nodes import SCOPES
from ..schema import Schema as Schema
from ..schema import SchemaField as SchemaField


class SchemaError(TemplatingError):
    """A schema that cannot be loaded: a bad file, an unimportable model, a malformed JSON Schema."""


SchemaSpec: TypeAlias = "Schema | type[Any] | Mapping[str, Any] | Sequence[str] | str | Path"


def _from_key_list(keys: Iterable[str], source: str) -> Schema:
    tree: dict[str, Any] = {}
    for raw in keys:
        if not isinstance(raw, str) or not raw.strip("?"):
            raise SchemaError(f"a schema key must be a non-empty string, not {raw!r} ({source})")
        optional = raw.endswith("?")
        head, sep, rest = raw.rstrip("?").partition(":")
        scope = head + sep if sep and head in SCOPES else ""
        parts = (rest if scope else raw.rstrip("?")).split(".")
        parts[0] = scope + parts[0]
        node = tree
        for i, part in enumerate(parts):
            entry = node.setdefault(part, {"required": True, "children": {}})
            if i == len(parts) - 1 and optional:
                entry["required"] = False
            node = entry["children"]

    def build(node: dict[str, Any]) -> dict[str, SchemaField]:
        return {
            name: SchemaField(required=entry["required"], fields=build(entry["children"]) or None)
            for name, entry in node.items()
        }

    return Schema(build(tree), source, origin="keys")


def _target(ref: str, root: Mapping[str, Any], source: str) -> Any:
    """The node a local `$ref` (`#/$defs/Tree`) points at; one that points nowhere is a SchemaError."""
    target: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, Mapping) or part not in target:
            raise SchemaError(f"'$ref' {ref!r} points at nothing in the schema ({source})")
        target = target[part]
    return target


def _resolve(node: Any, root: Mapping[str, Any], source: str) -> Mapping[str, Any]:
    """Follow `$ref` (local `#/...` only) and unwrap `anyOf`/`oneOf`/`allOf` with one non-null option.

    A chain of refs that comes back to itself without reaching a schema says nothing: `{}`."""
    seen: set[str] = set()
    while isinstance(node, Mapping):
        ref = node.get("$ref")
        if isinstance(ref, str) and (ref == "#" or ref.startswith("#/")):
            if ref in seen:
                return {}
            seen.add(ref)
            node = _target(ref, root, source) if ref != "#" else root
            continue
        for combo in ("anyOf", "oneOf", "allOf"):
            options = node.get(combo)
            if isinstance(options, list):
                real = [o for o in options if not (isinstance(o, Mapping) and o.get("type") == "null")]
                if len(real) == 1:
                    node = real[0]
                    break
        else:
            return node
    return {}


def _required(node: Mapping[str, Any], source: str) -> set[str]:
    needed = node.get("required", [])
    if needed is None:
        return set()
    if not isinstance(needed, list) or not all(isinstance(name, str) for name in needed):
        raise SchemaError(f"'required' in a JSON Schema must be a list of property names, not {needed!r} ({source})")
    return set(needed)


def _check_json_schema(data: Mapping[str, Any], source: str) -> None:
    """Read the whole schema once, each `$ref` target once (so recursion ends), and raise a SchemaError
    for what lint would trip over later: a `$ref` to nothing, a property schema that is not an object."""
    done: set[str] = set()
    stack: list[Any] = [data]
    while stack:
        node = stack.pop()
        if not isinstance(node, Mapping):
            continue
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/") and ref not in done:
            done.add(ref)
            stack.append(_target(ref, data, source))
        props = node.get("properties")
        if props is not None:
            if not isinstance(props, Mapping):
                raise SchemaError(f"'properties' in a JSON Schema must be an object, not {props!r} ({source})")
            for name, sub in props.items():
                if not isinstance(sub, Mapping | bool):
                    raise SchemaError(
                        f"the schema of property {name!r} must be an object (or true/false), not {sub!r} ({source})"
                    )
            _required(node, source)
            stack.extend(props.values())
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), Mapping):
                stack.append(node[key])
        for combo in ("anyOf", "oneOf", "allOf"):
            if isinstance(node.get(combo), list):
                stack.extend(node[combo])


class _LazyFields(Mapping[str, SchemaField]):
    """An object's properties, each read from the JSON Schema when first looked up: a recursive schema
    (a tree whose children are trees) is followed as deep as a placeholder's key goes, and no deeper."""

    __slots__ = ("_built", "_needed", "_props", "_root", "_source")

    def __init__(self, props: Mapping[str, Any], needed: set[str], root: Mapping[str, Any], source: str) -> None:
        self._props, self._needed, self._root, self._source = props, needed, root, source
        self._built: dict[str, SchemaField] = {}

    def __getitem__(self, name: str) -> SchemaField:
        if name not in self._built:
            sub = self._props[name]
            self._built[name] = _json_field(sub, self._root, name in self._needed, self._source)
        return self._built[name]

    def __contains__(self, name: object) -> bool:
        return name in self._props

    def __iter__(self) -> Iterator[str]:
        return iter(self._props)

    def __len__(self) -> int:
        return len(self._props)


_JSON_TYPES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}


def _json_type(node: Any, root: Mapping[str, Any], depth: int = 0) -> str | None:
    """A short readable type for a JSON Schema node (`str`, `list[int]`, `Order` for a `$ref`, `str | None`),
    `None` when it declares none. Refs are named, not followed, so a recursive schema ends."""
    if not isinstance(node, Mapping) or depth > 8:
        return None
    ref = node.get("$ref")
    if isinstance(ref, str):
        target: Any = None
        if ref.startswith("#/"):
            target = root
            for part in ref[2:].split("/"):
                target = target.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(target, Mapping) else None
        title = target.get("title") if isinstance(target, Mapping) else None
        return title if isinstance(title, str) and title else ref.rsplit("/", 1)[-1] or None
    for combo in ("anyOf", "oneOf"):
        options = node.get(combo)
        if isinstance(options, list) and options:
            found = [_json_type(option, root, depth + 1) for option in options]
            known = [name for name in found if name]
            return " | ".join(dict.fromkeys(known)) if len(known) == len(found) else None
    declared = node.get("type")
    kinds = declared if isinstance(declared, list) else [declared] if isinstance(declared, str) else []
    names = []
    for kind in kinds:
        if kind == "array":
            inner = _json_type(node.get("items"), root, depth + 1)
            names.append(f"list[{inner}]" if inner else "list")
        elif kind == "object":
            names.append("dict")
        elif isinstance(kind, str) and kind in _JSON_TYPES:
            names.append(_JSON_TYPES[kind])
    return " | ".join(dict.fromkeys(names)) or None


def _json_default(node: Any) -> str | None:
    """A property's `default` as JSON text; `None` when it declares none."""
    if not isinstance(node, Mapping) or "default" not in node:
        return None
    try:
        return json.dumps(node["default"], ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return None


def _json_field(node: Any, root: Mapping[str, Any], required: bool, source: str, depth: int = 0) -> SchemaField:
    declared, default = _json_type(node, root), _json_default(node)
    node = _resolve(node, root, source)
    props = node.get("properties")
    fields = _LazyFields(props, _required(node, source), root, source) if isinstance(props, Mapping) else None
    is_open = bool(node.get("additionalProperties", False))
    items: SchemaField | None = None
    if isinstance(node.get("items"), Mapping) and depth < 50:  # lists of lists of ...: element shapes, eagerly
        items = _json_field(node["items"], root, True, source, depth + 1)
    types = node.get("type")
    is_list = types == "array" or (isinstance(types, list) and "array" in types and "object" not in types)
    is_list = is_list or ("items" in node and "properties" not in node)
    return SchemaField(
        required=required,
        fields=fields,
        items=items,
        open=is_open and fields is not None,
        is_list=is_list,
        type=declared,
        default=default,
    )


def _from_json_schema(data: Mapping[str, Any], source: str, origin: str = "json-schema") -> Schema:
    _check_json_schema(data, source)
    node = _resolve(data, data, source)
    props = node.get("properties")
    if not isinstance(props, Mapping):
        raise SchemaError(f"a JSON Schema for state must be an object with 'properties' ({source})")
    fields = _LazyFields(props, _required(node, source), data, source)
    return Schema(fields, source, open=bool(node.get("additionalProperties", False)), origin=origin)


def _is_model(spec: Any) -> bool:
    return isinstance(spec, type) and callable(getattr(spec, "model_json_schema", None))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def _import_model(spec: str, base: Path | None) -> Any:
    """The pydantic model class `module:Model` names, imported with `base` on `sys.path` for the import only."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise SchemaError(f"a schema to import is written 'module:Model', not {spec!r}")
    folder = str((base or Path.cwd()).resolve())
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)  # like `python -m`: the project's own modules are importable
    try:
        # The user's module may print: that goes to stderr, so it cannot mix with a JSON report on stdout.
        with contextlib.redirect_stdout(sys.stderr):
            target: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            target = getattr(target, part)
    except SystemExit as exc:  # a module that exits on import does not get to choose the exit code
        raise SchemaError(f"cannot import schema {spec!r}: importing it called sys.exit({exc.code!r})") from None
    except Exception as exc:  # any failure importing user code is a schema error, shown in one line
        raise SchemaError(f"cannot import schema {spec!r}: {_first_line(exc)}") from None
    finally:
        if added and folder in sys.path:
            sys.path.remove(folder)
    if not _is_model(target):
        what = f"the class {target.__name__}" if isinstance(target, type) else f"a {type(target).__name__} object"
        raise SchemaError(f"schema {spec!r} is {what}, not a pydantic model class (a BaseModel subclass)")
    return target


def load_schema(spec: Any, *, base: Path | None = None) -> Schema:
    """A `Schema` from a pydantic model (class), a JSON Schema (mapping or `.json` file),
    a list of keys (`"key?"` marks an optional one), or `"module:Model"` to import a model.
    Relative paths and imports are resolved from `base` (default: the current folder).

    A pydantic model's keys are its fields' aliases when set (`Field(alias="user:name")`),
    else their names; fields with a default are optional.
    """
    if isinstance(spec, Schema):
        return spec
    if _is_model(spec):
        name = f"{spec.__module__}.{spec.__qualname__}"
        try:
            data = spec.model_json_schema(by_alias=True, mode="validation")
        except Exception as exc:  # pydantic cannot describe it (arbitrary types, callables, undefined refs)
            raise SchemaError(f"cannot read the schema of model {name}: {_first_line(exc)}") from None
        return _from_json_schema(data, name, origin="pydantic")
    if isinstance(spec, Mapping):
        return _from_json_schema(spec, "<schema>")
    if isinstance(spec, Path) or (isinstance(spec, str) and (spec.endswith(".json") or ":" not in spec)):
        path = Path(spec)
        if base is not None and not path.is_absolute():
            path = base / path
        try:
            data = json.loads(read_text(str(path), what="schema", stdin=False))
        except InputError as exc:
            raise SchemaError(exc.message) from None
        except RecursionError:
            raise SchemaError(f"schema file is nested too deeply to read: {path}") from None
        except json.JSONDecodeError as exc:
            raise SchemaError(f"schema file is not valid JSON: {path}:{exc.lineno}:{exc.colno}: {exc.msg}") from None
        if isinstance(data, list):
            return _from_key_list(data, str(path))
        if isinstance(data, dict):
            return _from_json_schema(data, str(path))
        raise SchemaError(f"a schema file holds a JSON Schema object or a list of keys: {path}")
    if isinstance(spec, str):
        return load_schema(_import_model(spec, base))
    if isinstance(spec, Sequence):
        return _from_key_list(spec, "<schema>")
    raise TypeError(f"a schema is a pydantic model, a JSON Schema, a list of keys or a path, not {type(spec).__name__}")
