"""The prompt linter: rules over parsed templates (and the literal text between placeholders).

Each finding is a :class:`Diagnostic` with a stable code (``T001``...), a severity, a message and a
span. Near-miss rules read only :class:`~templating.nodes.Literal` text, so anything they flag
renders as literal text today; schema rules compare placeholders with a declared schema (a
pydantic model, a JSON Schema, or a list of keys). Configuration comes from ``[tool.templating]``
in ``pyproject.toml``.
"""

from __future__ import annotations

import bisect
import contextlib
import difflib
import functools
import importlib
import json
import os
import re
import sys
import tomllib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias
from typing import Literal as _Literal

from .convert import ADK_CODE_MATCH
from .errors import TemplatingError
from .nodes import SCOPE_PREFIXES, SCOPES, TEMP_PREFIX, Dialect, Escaped, Literal, Placeholder, Span, is_adk_state_name
from .template import Template, as_template

__all__ = [
    "DEFAULT_RULES",
    "DOCS_URL",
    "RULES",
    "Diagnostic",
    "LintConfig",
    "LintConfigError",
    "Rule",
    "Schema",
    "SchemaError",
    "SchemaField",
    "Severity",
    "SYNTAX_CHECKS",
    "collect_files",
    "lint",
    "load_config",
    "load_schema",
    "rule_url",
    "select_rules",
    "unused_keys",
]

Severity: TypeAlias = _Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")

# The scope prefixes (defined in nodes.py), as a regex alternative and in prose.
_PREFIX_ALTERNATIVES = "|".join(re.escape(prefix) for prefix in SCOPE_PREFIXES)
_PREFIXES_OR = ", ".join(SCOPE_PREFIXES[:-1]) + " or " + SCOPE_PREFIXES[-1]
_PREFIXES_AND = ", ".join(SCOPE_PREFIXES[:-1]) + " and " + SCOPE_PREFIXES[-1]


@dataclass(frozen=True, slots=True)
class Rule:
    """A lint rule: its stable code, a short name, its severity, and what it catches."""

    code: str
    name: str
    severity: Severity
    summary: str
    example: str
    default: bool = True


RULES: dict[str, Rule] = {
    rule.code: rule
    for rule in (
        Rule("T001", "unknown-key", "error", "placeholder key not in the declared schema", "<nmae> (schema: name)"),
        Rule("T002", "spaced-placeholder", "warning", "whitespace inside a would-be placeholder", "< name >"),
        Rule("T003", "unknown-scope", "error", f"scope prefix close to {_PREFIXES_OR}", "<usr:name>"),
        Rule("T004", "unclosed-placeholder", "warning", "a placeholder with no closing >", "Hello <name, welcome"),
        Rule("T005", "bad-name", "warning", "a key that is not an identifier", "<first-name>"),
        Rule("T006", "doubled-question-mark", "error", "more than one ? in an optional placeholder", "<name??>"),
        Rule("T007", "markup-tag", "error", "an XML-style tag parsed as a placeholder", "<example>...</example>"),
        Rule("T008", "adk-braces", "warning", "an ADK-style {key} placeholder left over", "Hello {user:name}"),
        Rule("T009", "required-but-optional", "warning", "required placeholder on a field with a default", "<nick>"),
        Rule("T010", "optional-but-required", "info", "optional placeholder on a required field", "<name?>"),
        Rule("T011", "unused-schema-key", "warning", "schema key no linted template uses (opt-in)", "(per run)", False),
        Rule("T012", "temp-key-read", "warning", f"a {TEMP_PREFIX} key read by an instruction", "<temp:step>"),
        Rule("T013", "escaped-tag", "warning", "a closing tag or a tag with attributes escaped as <<...>>", "<</a>>"),
        # T014/T015: for instructions found in Python code (templating.pysource), over a whole linted tree.
        Rule("T014", "key-never-written", "warning", "a required key nothing in the linted code writes", "<plan>"),
        Rule("T015", "dynamic-instruction", "info", "an instruction in Python that is not a string", 'f"..."', False),
        # T016..T019 read the ADK dialect ({key}) as google-adk 2.x runs it at run time.
        Rule("T016", "adk-eaten-braces", "error", "ADK drops the braces right after a placeholder", '{"a": {key}}'),
        Rule("T017", "adk-doubled-braces", "warning", "ADK substitutes {{key}}, which its docs keep", "{{key}}"),
        Rule(
            "T018", "adk-artifact", "warning", "ADK loads an artifact here (needs an artifact service)", "{artifact.x}"
        ),
        Rule("T019", "adk-near-miss-key", "warning", "a brace run that is almost a key, left literal", "{user-name}"),
    )
}
# The rules that read each dialect's own syntax; the others (placeholders against a schema, temp: keys) apply to both.
ANGLE_ONLY: frozenset[str] = frozenset({"T002", "T003", "T004", "T005", "T006", "T007", "T008", "T013"})
ADK_ONLY: frozenset[str] = frozenset({"T016", "T017", "T018", "T019"})
DEFAULT_RULES: frozenset[str] = frozenset(code for code, rule in RULES.items() if rule.default)

# Checks that are not rules: a text that cannot be read at all as what it must be. No option selects or
# ignores them (the code would fail when run); each has its documentation page, as a rule does.
SYNTAX_CHECKS: dict[str, Rule] = {
    check.code: check
    for check in (
        Rule("E001", "jinja-syntax", "error", "a jinja(...) instruction Jinja2 cannot parse", "{% if x %} (no endif)"),
        Rule("E002", "python-syntax", "error", "a Python file to lint that is not valid Python", "if x"),
    )
}


def _described(code: str) -> Rule | None:
    """The rule or syntax check with this code, if it is one."""
    return RULES.get(code) or SYNTAX_CHECKS.get(code)


# Where the documentation lives: the one place the address is written in code. It equals `site_url` in
# mkdocs.yml (tests/test_docs.py checks), and every rule has its page at rule_url(code).
DOCS_URL = "https://templating.readthedocs.io/en/latest/"


def rule_url(code: str) -> str:
    """The stable address of a rule's (or syntax check's) documentation page: ``DOCS_URL`` + ``rules/<code>/``."""
    if _described(code) is None:
        raise ValueError(f"unknown rule {code!r} (known: {', '.join([*RULES, *SYNTAX_CHECKS])})")
    return f"{DOCS_URL}rules/{code}/"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding: ``code`` (``T001``...), ``severity``, ``message``, where (``span``, ``path``), and ``help``.

    ``span`` is ``None`` only for findings about a whole run (unused schema keys). ``origin`` names the
    instruction in a Python file (the constant ``ROOT_PROMPT``, or ``LlmAgent(name="planner").instruction``).
    """

    code: str
    severity: Severity
    message: str
    span: Span | None
    path: str | None = None
    help: str | None = None
    origin: str | None = None

    @property
    def url(self) -> str | None:
        """The address of the rule's documentation page (``None`` for a code that is not a rule)."""
        return rule_url(self.code) if _described(self.code) else None

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping: line and column 1-based; ``start``/``end`` character offsets, ``end`` exclusive;
        ``url`` is the rule's documentation page."""
        span = self.span
        return {
            "path": self.path,
            "code": self.code,
            "name": rule.name if (rule := _described(self.code)) else None,
            "severity": self.severity,
            "message": self.message,
            "line": span.line if span else None,
            "column": span.column if span else None,
            "start": span.start if span else None,
            "end": span.end if span else None,
            "help": self.help,
            "url": self.url,
            "origin": self.origin,
        }


class SchemaError(TemplatingError):
    """A schema that cannot be loaded: a bad file, an unimportable model, a malformed JSON Schema."""


class LintConfigError(TemplatingError):
    """A ``[tool.templating]`` table (or rule selection) that is not valid."""


# --------------------------------------------------------------------------------------------
# Schemas


@dataclass(frozen=True, slots=True)
class SchemaField:
    """One field: whether state always has it, and what is known of its inside.

    ``fields`` lists the keys of an object with known properties (``None``: any key goes);
    ``open`` says other keys are allowed too (``additionalProperties``, pydantic ``extra="allow"``);
    ``items`` describes list elements when known; ``is_list`` says the value is a list (an array).
    """

    required: bool = True
    fields: Mapping[str, SchemaField] | None = None
    items: SchemaField | None = None
    open: bool = False
    is_list: bool = False


@dataclass(frozen=True, slots=True)
class Schema:
    """The declared state keys (top level: ``user:name``, ``order_id``...), with what is known of each.

    ``open``: keys beyond ``fields`` are allowed at the top level. ``origin`` is where it came from
    (``"pydantic"``, ``"json-schema"`` or ``"keys"``), so messages can say why a field is optional.
    """

    fields: Mapping[str, SchemaField]
    source: str = "<schema>"
    open: bool = False
    origin: str = "keys"


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
    """The node a local ``$ref`` (``#/$defs/Tree``) points at; one that points nowhere is a SchemaError."""
    target: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, Mapping) or part not in target:
            raise SchemaError(f"'$ref' {ref!r} points at nothing in the schema ({source})")
        target = target[part]
    return target


def _resolve(node: Any, root: Mapping[str, Any], source: str) -> Mapping[str, Any]:
    """Follow ``$ref`` (local ``#/...`` only) and unwrap ``anyOf``/``oneOf``/``allOf`` with one non-null option.

    A chain of refs that comes back to itself without reaching a schema says nothing: ``{}``."""
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
    """Read the whole schema once, each ``$ref`` target once (so recursion ends), and raise a SchemaError
    for what lint would trip over later: a ``$ref`` to nothing, a property schema that is not an object."""
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


def _json_field(node: Any, root: Mapping[str, Any], required: bool, source: str, depth: int = 0) -> SchemaField:
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
        required=required, fields=fields, items=items, open=is_open and fields is not None, is_list=is_list
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
    """The pydantic model class ``module:Model`` names, imported with ``base`` on ``sys.path`` for the import only."""
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
    """A :class:`Schema` from a pydantic model (class), a JSON Schema (mapping or ``.json`` file),
    a list of keys (``"key?"`` marks an optional one), or ``"module:Model"`` to import a model.
    Relative paths and imports are resolved from ``base`` (default: the current folder).

    A pydantic model's keys are its fields' aliases when set (``Field(alias="user:name")``),
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
            data = json.loads(path.read_text(encoding="utf-8-sig"))
        except FileNotFoundError:
            raise SchemaError(f"schema file not found: {path}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise SchemaError(f"cannot read schema file {path}: {exc}") from None
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


# --------------------------------------------------------------------------------------------
# Rule selection and configuration


def _codes(values: Iterable[str] | str, what: str) -> set[str]:
    if isinstance(values, str):  # one code, or several separated by commas
        values = values.split(",")
    out: set[str] = set()
    for value in values:
        code = value.strip().upper()
        if not code:
            continue
        if code == "ALL":
            out.update(RULES)
        elif code in RULES:
            out.add(code)
        elif code in SYNTAX_CHECKS or value.strip() in {check.name for check in SYNTAX_CHECKS.values()}:
            raise LintConfigError(
                f"{value.strip()!r} in {what} is a syntax check, not a rule: no option turns it off"
                " (fix the file, or leave it out of the linted files with 'exclude')"
            )
        else:
            by_name = [c for c, rule in RULES.items() if rule.name == value.strip()]
            if not by_name:
                raise LintConfigError(f"unknown rule {value!r} in {what} (known: {', '.join(RULES)})")
            out.update(by_name)
    return out


def select_rules(
    *,
    select: Iterable[str] | str | None = None,
    extend_select: Iterable[str] | str = (),
    ignore: Iterable[str] | str = (),
) -> frozenset[str]:
    """The rule codes that are on: ``select`` (default: every rule but the opt-in T011), plus
    ``extend_select``, minus ``ignore``. Codes, rule names or ``ALL``; a string is one code or a
    comma-separated list."""
    chosen = set(DEFAULT_RULES) if select is None else _codes(select, "select")
    chosen |= _codes(extend_select, "extend-select")
    chosen -= _codes(ignore, "ignore")
    return frozenset(chosen)


# Module constants of Python files linted even when no call site uses them: names ending in these.
CONSTANT_SUFFIXES: tuple[str, ...] = ("PROMPT", "INSTRUCTION")


@dataclass(frozen=True, slots=True)
class LintConfig:
    """``[tool.templating]`` from ``pyproject.toml``; ``root`` is the folder that holds it."""

    root: Path = field(default_factory=Path.cwd)
    schema: Any = None
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    path: Path | None = None
    allow: tuple[str, ...] = ()
    constant_suffixes: tuple[str, ...] = CONSTANT_SUFFIXES


_CONFIG_KEYS = {
    "schema",
    "include",
    "exclude",
    "select",
    "extend-select",
    "ignore",
    "per-file-ignores",
    "allow",
    "constant-suffixes",
}


def _strings(table: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise LintConfigError(f"{where}: '{key}' must be a list of strings")
    return tuple(value)


def load_config(start: Path | None = None, *, path: Path | None = None) -> LintConfig:
    """``[tool.templating]`` of ``path``, or of the nearest ``pyproject.toml`` at or above ``start``
    (default: the current folder). No file or no table: the defaults, rooted at ``start``."""
    here = (start or Path.cwd()).resolve()
    if path is None:
        for folder in (here, *here.parents):
            if (folder / "pyproject.toml").is_file():
                path = folder / "pyproject.toml"
                break
    if path is None:
        return LintConfig(root=here)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise LintConfigError(f"config file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LintConfigError(f"cannot read config file {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise LintConfigError(f"config file is not valid TOML: {path}: {exc}") from None
    where = f"{path} [tool.templating]"
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise LintConfigError(f"{path}: 'tool' must be a table, not {type(tool).__name__}")
    table = tool.get("templating", {})
    if not isinstance(table, dict):
        raise LintConfigError(f"{where} must be a table, not {type(table).__name__}")
    unknown = sorted(set(table) - _CONFIG_KEYS)
    if unknown:
        raise LintConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(_CONFIG_KEYS))})"
        )
    schema = table.get("schema")
    if schema is not None and not isinstance(schema, str | list):
        raise LintConfigError(f"{where}: 'schema' must be a path, 'module:Model', or a list of keys")
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise LintConfigError(f"{where}: 'per-file-ignores' must be a table of glob = [codes]")
    ignores = {glob: _strings(per_file, glob, f"{where} per-file-ignores") for glob in per_file}
    config = LintConfig(
        root=path.parent.resolve(),
        schema=schema,
        include=_strings(table, "include", where),
        exclude=_strings(table, "exclude", where),
        select=_strings(table, "select", where) if "select" in table else None,
        extend_select=_strings(table, "extend-select", where),
        ignore=_strings(table, "ignore", where),
        per_file_ignores=ignores,
        path=path,
        allow=_strings(table, "allow", where),
        constant_suffixes=_strings(table, "constant-suffixes", where)
        if "constant-suffixes" in table
        else CONSTANT_SUFFIXES,
    )
    if any(not suffix for suffix in config.constant_suffixes):
        raise LintConfigError(f"{where}: 'constant-suffixes' holds name endings; an empty one would match every name")
    for codes in (config.select or (), config.extend_select, config.ignore, *ignores.values()):
        _codes(codes, where)
    if config.select is not None and not _codes(config.select, where):
        raise LintConfigError(f"{where}: 'select' is empty, which would turn every rule off (use 'ignore')")
    if any(not snippet for snippet in config.allow):
        raise LintConfigError(f"{where}: 'allow' holds literal snippets of template text; an empty one allows nothing")
    for glob in (*config.include, *config.exclude, *ignores):
        try:
            glob_regex(glob)
        except LintConfigError as exc:
            raise LintConfigError(f"{where}: {exc.message}") from None
    return config


def _clean(pattern: str) -> str:
    """A glob or path written ``./a/b/`` or ``a\\b`` compares as ``a/b``."""
    pattern = pattern.replace("\\", "/")
    while pattern.startswith("./"):
        pattern = pattern[2:]
    return pattern.rstrip("/") or pattern


@functools.lru_cache(maxsize=512)  # a walk matches every file against the same few globs
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob over ``/``-separated relative paths: ``*``, ``?`` and ``[ab]``/``[!ab]`` stay in one folder,
    ``**`` spans folders. A leading ``./`` is ignored."""
    pattern = _clean(pattern)
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (close := pattern.find("]", i + 2)) > 0:
            body = pattern[i + 1 : close]
            negate = body[:1] in "!^" and len(body) > 1
            chars = body[1:] if negate else body
            escaped = "".join("\\" + ch if ch in "\\^[]" else ch for ch in chars)
            out.append(f"[^/{escaped}]" if negate else f"(?!/)[{escaped}]")
            i = close + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    try:
        return re.compile("".join(out) + r"\Z")
    except re.error as exc:  # [z-a]: a reversed range
        raise LintConfigError(f"bad glob {pattern!r}: {exc.msg}") from None


def _matches(relative: str, patterns: Iterable[str]) -> bool:
    """Whether the file ``relative`` or one of its folders matches a pattern, like .gitignore: a pattern
    without ``/`` matches a file or folder name at any depth (``drafts``), one with ``/`` the path
    from the root (``prompts/drafts``, ``prompts/*.txt``)."""
    parts = relative.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    for pattern in patterns:
        regex = glob_regex(pattern)
        if "/" in _clean(pattern):
            if any(regex.match(prefix) for prefix in prefixes):
                return True
        elif any(regex.match(part) for part in parts):
            return True
    return False


DEFAULT_INCLUDE = ("*.prompt", "*.prompt.md", "*.prompt.txt", "*.instruction.txt", "**/*.py")


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


_NEVER_WALKED = frozenset({"node_modules", "__pycache__", "site-packages"})  # besides hidden folders (.git, .venv)


def collect_files(paths: Sequence[str], config: LintConfig, *, force_exclude: bool = False) -> list[str]:
    """The files to lint, in order: each file given as is (unless ``force_exclude`` and it matches
    ``exclude``: what a pre-commit hook wants); each folder walked for files matching ``include``
    (default ``*.prompt``, ``*.prompt.md``...) and not ``exclude``. No paths: the project's
    ``include`` globs under the config's root. Hidden folders (``.git``, ``.venv``), ``node_modules``
    and excluded folders are not entered. A file named twice (``a.txt ./a.txt``) is linted once.
    An unreadable folder or a bad name (too long) is an ``OSError``."""
    include = config.include or DEFAULT_INCLUDE
    found: list[str] = []

    def walk(folder: Path) -> Iterator[Path]:
        items: list[Path] = []

        def fail(exc: OSError) -> None:
            raise exc

        for here, dirs, files in os.walk(folder, onerror=fail):
            base = Path(here)
            dirs[:] = [
                name
                for name in dirs
                if not name.startswith(".")
                and name not in _NEVER_WALKED
                and not _matches(_relative(base / name, config.root), config.exclude)
            ]
            items.extend(base / name for name in files if not name.startswith("."))
        yield from sorted(items)

    def wanted(item: Path) -> bool:
        relative = _relative(item, config.root)
        return _matches(relative, include) and not _matches(relative, config.exclude)

    if not paths:
        if not config.include:
            raise LintConfigError(
                "no paths given and no 'include' globs in [tool.templating] of pyproject.toml"
                + (f" ({config.path})" if config.path else " (none found)")
            )
        cwd = Path.cwd().resolve()
        return [
            str(item.relative_to(cwd) if item.is_relative_to(cwd) else item)
            for item in walk(config.root)
            if wanted(item)
        ]
    for given in paths:
        item = Path(given)
        if given != "-" and item.is_dir():
            found.extend(str(sub) for sub in walk(item) if wanted(sub))
        elif not (force_exclude and given != "-" and _matches(_relative(item, config.root), config.exclude)):
            found.append(given)
    unique: dict[str, str] = {}
    for name in found:
        unique.setdefault(name if name == "-" else str(Path(name).resolve()), name)
    return list(unique.values())


def rules_for(path: str | None, config: LintConfig, codes: frozenset[str]) -> frozenset[str]:
    """``codes`` minus the per-file ignores whose glob matches ``path`` (relative to the config root)."""
    if path is None or not config.per_file_ignores:
        return codes
    relative = _relative(Path(path), config.root)
    dropped: set[str] = set()
    for glob, ignored in config.per_file_ignores.items():
        if _matches(relative, [glob]):
            dropped |= _codes(ignored, "per-file-ignores")
    return codes - dropped


# --------------------------------------------------------------------------------------------
# The rules

_ID = r"[^\W\d]\w*"
_SEG = rf"(?:{_ID}|\d+)"
_SCOPE = rf"(?:{_PREFIX_ALTERNATIVES})"
_KEY = rf"{_SCOPE}?{_ID}(?:\.{_SEG})*"

_SPACED = re.compile(rf"(?<!<)<([ \t]*)({_KEY})([ \t]*)(\??)([ \t]*)>(?!>)")
_SCOPED = re.compile(rf"(?<!<)<({_ID}):({_ID}(?:\.{_SEG})*)(\??)>(?!>)")
_UNCLOSED = re.compile(rf"(?<![\w<)\]}}])<({_KEY})(\??)(?=[\s,;!)\]\"']|\.(?:\s|\Z)|\Z)")
_BAD_NAME = re.compile(rf"(?<!<)<({_SCOPE}?[\w-]+(?:\.[\w-]+)*)(\??)>(?!>)")
_DOUBLED = re.compile(rf"(?<!<)<[ \t]*({_KEY})[ \t]*\?{{2,}}[ \t]*>(?!>)")
_BRACES = re.compile(rf"(?<![\w$\\{{}}%#^]){{((?:{_PREFIX_ALTERNATIVES}|artifact\.)?{_ID}(?:\.{_SEG})*)(\??)}}(?!}})")
_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[^\n]*$|\Z)", re.DOTALL | re.MULTILINE)
_INLINE_CODE = re.compile(r"`[^`\n]+`")
# A markdown indented code block: lines indented by 4 spaces or a tab, after a blank line.
_INDENTED_CODE = re.compile(r"(?:\A|\n[ \t]*\n)((?:(?: {4}|\t)[^\n]*(?:\n|\Z)|[ \t]*\n(?= {4}|\t))+)")
# Not prose either: Jinja blocks and HTML comments.
# Each scan stops at the next opener, so unclosed openers cost linear time, not quadratic.
_OTHER_CODE = re.compile(
    r"\{\{(?:(?!\{\{|\}\}).)*\}\}|\{%(?:(?!\{%|%\}).)*%\}|\{#(?:(?!\{#|#\}).)*#\}|<!--(?:(?!<!--|-->).)*(?:-->|\Z)",
    re.DOTALL,
)
# The rest of an HTML/XML start tag after its name: attributes (across lines), then > or />.
_TAG_REST = re.compile(r"""(?:\s+[\w:.@-]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'<>=`]+))?)*\s*/?>""")
# Comparisons in prose: a condition word before, a number, a single letter or a closing bracket as left operand.
_CONDITION = re.compile(r"\b(?:if|while|when|whenever|unless|until|where|whether|assert|check|ensure)\b", re.I)
_RIGHT_OPERAND = re.compile(r"[ \t]+[\w(]")  # the c of a < b > c
_TAG_WORD = re.compile(r"[ \t]*(?:tags?|elements?|components?)\b", re.IGNORECASE)  # "<answer-block> tags"
_CLOSING_TAG = re.compile(r"</([^\s<>/]+)>")
# Inline math, as pandoc reads it: $ not followed by a space, closed by $ not after a space nor before a digit.
_MATH = re.compile(r"\$\$[^$]{1,2000}\$\$|\$(?![\s$])[^$\n]{0,200}?(?<![\s\\])\$(?!\d)")
# T002: `cmd < in > out` is shell redirection: a word before, one token after, then the end of the command.
_REDIRECT_AFTER = re.compile(r"[ \t]+[\w/~$-]+(?:\.[\w/~$-]+)*[ \t]*(?:$|[|;&]|2>)", re.MULTILINE)
_WORD_BEFORE = re.compile(r"[\w./-]+[ \t]+\Z")
# T005: a hyphenated name written as a tag in prose: "inside <scratch-pad>", "the <tool-call> format".
_TAG_BEFORE = re.compile(
    r"\b(?:the|a|an|your|its|their|each|every|this|that|in|inside|into|within|between|using|use|with|after|before"
    r"|open|close|wrap|emit|output)[ \t]+\Z",
    re.IGNORECASE,
)
# ... or listed after another tag: "such as <sku> or <order-id>", "<thinking>, <final-answer>".
_TAG_LISTED_BEFORE = re.compile(r"</?<?[^\W\d][\w.:-]*>>?[ \t]*(?:,|/|\bor\b|\band\b|,[ \t]*(?:or|and)\b)[ \t]*\Z")
_TAG_AFTER = re.compile(
    r"[ \t]*(?:tags?|elements?|components?|format|formats|blocks?|sections?|markers?|delimiters?|wrappers?|"
    r"containers?|syntax)\b",
    re.IGNORECASE,
)
# T013: escapes that cannot be one: <</tag>> and <<tag attr="1">> render with their doubled brackets.
_ESCAPED_CLOSING = re.compile(r"(?<!<)<<(/[^\W\d][\w.:-]*)>>(?!>)")
_ESCAPED_ATTRS = re.compile(  # on one line, so each try stops at the line's end
    r"""(?<!<)<<([^\W\d][\w.:-]*)"""
    r"""((?:[ \t]+[\w:.@-]+(?:[ \t]*=[ \t]*(?:"[^"\n]*"|'[^'\n]*'|[^\s"'<>=`]+))?)+[ \t]*/?)>>(?!>)"""
)
# Placeholders that are HTML void elements (never closed, so T007 cannot see them as tags) and never keys.
_VOID_TAGS = frozenset({"br", "hr", "wbr"})


class _Source:
    """A source with indexes: offsets to spans, code regions, and where each closing tag last appears."""

    def __init__(self, text: str, *, markdown: bool = False) -> None:
        self.text = text
        self.line_starts = [0, *(m.end() for m in re.finditer(r"\n", text))]
        regions = (
            [(m.start(), m.end()) for m in _FENCE.finditer(text)]
            + [(m.start(), m.end()) for m in _INLINE_CODE.finditer(text)]
            + [(m.start(), m.end()) for m in _OTHER_CODE.finditer(text)]
        )
        if markdown:  # only markdown reads an indented block as code; elsewhere indentation is layout
            regions += [(m.start(1), m.end(1)) for m in _INDENTED_CODE.finditer(text)]
        self.code_starts, self.code_ends = self._merge(regions)
        self.math_starts, self.math_ends = self._merge([(m.start(), m.end()) for m in _MATH.finditer(text)])
        self.closings: dict[str, list[int]] = {}  # every </name>, in order, by name
        for m in _CLOSING_TAG.finditer(text):
            self.closings.setdefault(m.group(1), []).append(m.start())
        self.closing: dict[str, int] = {name: starts[-1] for name, starts in self.closings.items()}

    @staticmethod
    def _merge(regions: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
        merged: list[tuple[int, int]] = []
        for start, end in sorted(regions):
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        return [start for start, _ in merged], [end for _, end in merged]

    def in_math(self, offset: int) -> bool:
        i = bisect.bisect_right(self.math_starts, offset) - 1
        return i >= 0 and offset < self.math_ends[i]

    def span(self, start: int, end: int) -> Span:
        line = bisect.bisect_right(self.line_starts, start)
        return Span(start, end, line, start - self.line_starts[line - 1] + 1)

    def line_end(self, offset: int) -> int:
        """The offset of the newline ending the line of ``offset`` (the text's length on the last line)."""
        i = bisect.bisect_right(self.line_starts, offset)
        return self.line_starts[i] - 1 if i < len(self.line_starts) else len(self.text)

    def in_code(self, offset: int) -> bool:
        i = bisect.bisect_right(self.code_starts, offset) - 1
        return i >= 0 and offset < self.code_ends[i]

    def closed_after(self, name: str, offset: int) -> bool:
        """Whether ``</name>`` appears at or after ``offset``."""
        return self.closing.get(name, -1) >= offset

    def closed_between(self, name: str, start: int, end: int) -> bool:
        """Whether a ``</name>`` starts in ``start``..``end``."""
        starts = self.closings.get(name, [])
        i = bisect.bisect_left(starts, start)
        return i < len(starts) and starts[i] < end

    def closed_anywhere(self, name: str) -> bool:
        """Whether ``</name>`` appears anywhere: ``name`` is used as a markup tag in this text."""
        return name in self.closing

    def tag_like(self, offset: int) -> bool:
        """Whether the text from ``offset`` (just after ``<name``) reads as the rest of an HTML/XML start
        tag, attributes across lines included: ``<div\n  class="card">``, ``<img src=x />``."""
        return _TAG_REST.match(self.text, offset, offset + 4000) is not None

    def redirection(self, start: int, end: int) -> bool:
        """Whether ``< x >`` at ``start``..``end`` reads as shell redirection, ``cmd < in > out``: a word
        before it, one file-like token after it, then the end of the line or of the command."""
        line_start = self.line_starts[bisect.bisect_right(self.line_starts, start) - 1]
        before = self.text[max(line_start, start - 200) : start]
        return _WORD_BEFORE.search(before) is not None and _REDIRECT_AFTER.match(self.text, end) is not None

    def tag_in_prose(self, start: int, end: int) -> bool:
        """Whether a ``<name>`` at ``start``..``end`` is named as a tag in the sentence around it: after
        an article or a preposition ("inside <scratch-pad>"), after another tag in a list ("<sku> or
        <order-id>"), or before a word such as "format"."""
        line_start = self.line_starts[bisect.bisect_right(self.line_starts, start) - 1]
        before = self.text[max(line_start, start - 40) : start]
        return (
            _TAG_BEFORE.search(before) is not None
            or _TAG_LISTED_BEFORE.search(before) is not None
            or _TAG_AFTER.match(self.text, end) is not None
        )

    def comparison_before(self, offset: int) -> bool:
        """Whether the text before ``offset`` (a ``<`` in prose) reads as the left side of a comparison:
        ``x <y``, ``3 <n``, ``if count <limit``."""
        line_start = self.line_starts[bisect.bisect_right(self.line_starts, offset) - 1]
        before = self.text[max(line_start, offset - 200) : offset]  # bounded, so linting stays linear
        operand = before.rstrip(" \t")
        if operand == before or not operand:  # no space before "<", or nothing before it on the line
            return False
        if operand[-1] in ")]}":  # f(x) <y
            return True
        i = len(operand)
        while i > 0 and (operand[i - 1].isalnum() or operand[i - 1] in "_."):
            i -= 1
        token = operand[i:]
        if not token or not (token[0].isalnum() or token[0] == "_"):
            return False
        if len(token) == 1 or token[0].isdigit():  # x <y, 3 <n
            return True
        clause = re.split(r"[.;!?](?:\s|\Z)", before)[-1]
        return _CONDITION.search(clause) is not None  # if count <limit


def _close(word: str, options: Iterable[str]) -> str | None:
    match = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return match[0] if match else None


def _literal_rules(src: _Source, node: Literal, on: frozenset[str]) -> Iterator[tuple[str, int, int, str, str]]:
    """Near misses in one literal: (code, start, end, message, help)."""
    text, base = node.text, node.span.start
    if "T002" in on:
        for m in _SPACED.finditer(text):
            if not (m.group(1) or m.group(3) or m.group(5)) or src.in_code(base + m.start()):
                continue
            if src.closed_after(m.group(2), base + m.end()):  # <example >x</example>: a tag
                continue
            if m.group(1) and src.comparison_before(base + m.start()) and _RIGHT_OPERAND.match(text, m.end()):
                continue  # a < b > c: a comparison, with operands on both sides
            if m.group(1) and (m.group(3) or m.group(5)) and src.redirection(base + m.start(), base + m.end()):
                continue  # sort < input > output: shell redirection
            fixed = f"<{m.group(2)}{m.group(4)}>"
            yield (
                "T002",
                base + m.start(),
                base + m.end(),
                f"{m.group(0)!r} has whitespace inside, so it renders as literal text; did you mean {fixed}?",
                f"write {fixed} (no spaces) for a placeholder; as written, {m.group(0)} already renders unchanged",
            )
    if "T003" in on:
        for m in _SCOPED.finditer(text):
            prefix = m.group(1)
            scope = _scope_meant(prefix)
            name = f"{prefix}:{m.group(2)}"
            if scope is None or src.closed_anywhere(name) or src.in_code(base + m.start()):
                continue
            fixed = f"<{scope}:{m.group(2)}{m.group(3)}>"
            yield (
                "T003",
                base + m.start(),
                base + m.end(),
                f"unknown scope {prefix + ':'!r}, so {m.group(0)!r} renders as literal text; did you mean {fixed}?",
                f"the scopes are {_PREFIXES_AND}",
            )
    if "T004" in on:
        for m in _UNCLOSED.finditer(text):
            start = base + m.start()
            stop = min(src.line_end(start) - base, len(text))  # the end of this line, within this literal
            next_lt = text.find("<", m.end(), stop)
            stop = next_lt if next_lt >= 0 else stop
            if text.find(">", m.end(), stop) >= 0 or src.in_code(start):
                continue
            key = m.group(1)
            if src.tag_like(base + m.end()) or src.closed_anywhere(key):  # <div\n  class="card">
                continue
            if ":" not in key and src.comparison_before(start):  # x <y, if count <limit
                continue
            fixed = f"<{m.group(1)}{m.group(2)}>"
            yield (
                "T004",
                start,
                base + m.end(),
                f"{m.group(0)!r} is never closed, so it renders as literal text; did you mean {fixed}?",
                f"close it as {fixed} for a placeholder; as written, {m.group(0)} already renders unchanged",
            )
    if "T005" in on:
        for m in _BAD_NAME.finditer(text):
            key = m.group(1)
            first = key.split(":")[-1]
            bad = "-" in key or (first[:1].isdigit() and any(ch.isalpha() for ch in first))
            if not bad or key.startswith(("-", "_-")) or key.endswith("-") or src.in_code(base + m.start()):
                continue
            if not any(ch.islower() for ch in key) and not m.group(2):  # <1-10>, <YYYY-MM-DD>: a range, a format
                continue
            if src.closed_anywhere(key) or _TAG_WORD.match(text, m.end()):  # a custom element: <my-card>
                continue
            if _for_the_reader(key):  # <Ctrl-C>, <your-api-key>
                continue
            plain = key.islower() and "-" in key and not any(ch in key for ch in ":._") and not m.group(2)
            if plain and src.tag_in_prose(base + m.start(), base + m.end()):  # "inside <scratch-pad>"
                continue
            if text[m.start() - 1 : m.start()] == "/" or text[m.end() : m.end() + 1] == "/":  # /users/<user-id>/
                continue
            fixed = key.replace("-", "_")
            good = fixed.split(":")[-1].split(".")[0].isidentifier()
            yield (
                "T005",
                base + m.start(),
                base + m.end(),
                f"{key!r} is not a valid key (keys are identifiers), so {m.group(0)!r} renders as literal text"
                + (f"; did you mean <{fixed}{m.group(2)}>?" if good else ""),
                "a key segment is a Python identifier (letters, digits, _; not starting with a digit)",
            )
    if "T006" in on:
        for m in _DOUBLED.finditer(text):
            if src.in_code(base + m.start()):
                continue
            fixed = f"<{m.group(1)}?>"
            yield (
                "T006",
                base + m.start(),
                base + m.end(),
                f"{m.group(0)!r} has more than one '?', so it renders as literal text; did you mean {fixed}?",
                f"write {fixed} for an optional placeholder",
            )
    if "T008" in on:
        for m in _BRACES.finditer(text):
            if src.in_code(base + m.start()) or src.in_math(base + m.start()):
                continue
            key = m.group(1)
            if len(key) == 1:  # {x}: a set, a math variable; a one-letter state key is rare
                continue
            fixed = f"<{key}{m.group(2)}>"
            yield (
                "T008",
                base + m.start(),
                base + m.end(),
                f"{m.group(0)!r} looks like an ADK-style placeholder; this template uses {fixed}",
                f"write {fixed} to insert the value; braces are plain text here (a template in ADK's own "
                "{key} syntax is linted as such with --dialect adk, or lint(..., dialect='adk'))",
            )

    if "T013" in on:
        for m in _ESCAPED_CLOSING.finditer(text):
            if src.in_code(base + m.start()):
                continue
            tag = f"<{m.group(1)}>"
            yield (
                "T013",
                base + m.start(),
                base + m.end(),
                f"{m.group(0)!r} renders with its doubled brackets; a closing tag needs no escaping",
                f"write {tag}: a closing tag is never a placeholder, so it renders as written",
            )
        for m in _ESCAPED_ATTRS.finditer(text):
            if src.in_code(base + m.start()):
                continue
            tag = f"<{m.group(1)}{m.group(2)}>"
            yield (
                "T013",
                base + m.start(),
                base + m.end(),
                f"{m.group(0)!r} renders with its doubled brackets; a tag with attributes needs no escaping",
                f"write {tag}: a tag with attributes is never a placeholder, so it renders as written",
            )


# --- The ADK dialect (T016..T019): what google-adk 2.x itself does with a string instruction
# (``inject_session_state`` in its instruction utilities). Its pattern (convert.ADK_CODE_MATCH):
# a run of "{", text without braces, a run of "}", not right after "$", "{" or "\". It replaces
# the whole match with an artifact when the text inside (stripped of white space, then of one
# trailing "?") starts with "artifact.", with the value of a state key when that text is a state
# name (nodes.is_adk_state_name), and leaves it as written otherwise.
_ADK_MARKS = re.compile(r"(.*?)([ \t]*)(\?*)", re.DOTALL)  # a name, white space, question marks
_ADK_HYPHENATED = re.compile(rf"{_ID}(?:-{_ID})+")
_ARTIFACT = "artifact."


# Words one typo away from a scope that are words of their own: {api:key} is no misspelt {app:key}.
_NOT_SCOPE_TYPOS = frozenset({"api", "ape", "use", "usa"})


# Hyphenated names that are text for the reader, not keys: a key combination (<Ctrl-C>, {Shift-Tab})
# or a blank for the reader to fill in (<your-api-key>). T005 and T019 both leave them alone.
# The first words that make one: key modifiers that are nothing else, and "your".
_FOR_THE_READER = frozenset({"ctrl", "shift", "alt", "cmd", "your"})


def _for_the_reader(name: str) -> bool:
    """Whether a hyphenated name without a scope is a key combination or a blank to fill in."""
    first, hyphen, _ = name.partition("-")
    return bool(hyphen) and ":" not in name and first.lower() in _FOR_THE_READER


def _one_typo(word: str, scope: str) -> bool:
    """Whether ``word`` is ``scope`` with one letter left out, added, changed or swapped with the next
    (the first letter kept): usr, users, tmp, ap, uesr. Stricter than a similarity ratio, which would
    also take team for temp."""
    if word == scope or word[:1] != scope[:1] or abs(len(word) - len(scope)) > 1:
        return False
    if len(word) == len(scope):
        diff = [i for i, (a, b) in enumerate(zip(word, scope, strict=True)) if a != b]
        swapped = len(diff) == 2 and diff[1] == diff[0] + 1 and word[diff[0]] == scope[diff[1]]
        return len(diff) == 1 or (swapped and word[diff[1]] == scope[diff[0]])
    short, long = sorted((word, scope), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def _scope_meant(prefix: str) -> str | None:
    """The scope a prefix that is not exactly one was likely meant as: the same letters in other
    case (``User``) or one typo away (``usr``, ``tmp``, ``ap``); None for any other word (``team``,
    ``step``, ``api``: words of their own). T003 and T019 both ask it."""
    lowered = prefix.lower()
    if lowered in SCOPES:
        return lowered
    if lowered in _NOT_SCOPE_TYPOS:
        return None
    return next((scope for scope in SCOPES if _one_typo(lowered, scope)), None)


def _adk_fixed_name(name: str) -> tuple[str, list[str]] | None:
    """(the state name ``name`` was likely meant as, what is wrong with it) for a near miss; else None.

    Near misses: a hyphen between identifier words (``user-name``) and a scope in capitals or close
    to a known one (``User:name``, ``usr:name``). Dotted paths, spaced words and the like are left
    alone: JSON, code and prose use them, and ADK has no key they would be close to."""
    reasons: list[str] = []
    head, sep, rest = name.partition(":")
    scope = ""
    if sep:
        meant = _scope_meant(head) if head.isidentifier() else None
        if meant is None:
            return None
        if head.lower() != meant:
            reasons.append(f"unknown scope {head + ':'!r}")
        elif head != meant:
            reasons.append(f"scopes are lowercase: {meant}:")
        scope = meant + ":"
    else:
        rest = name
    if not rest.isidentifier():
        if not _ADK_HYPHENATED.fullmatch(rest) or all(len(word) == 1 for word in rest.split("-")):
            return None  # a-b, x-y: math or ranges, not a key
        if not sep and _for_the_reader(rest):
            return None  # {Ctrl-C}, {your-api-key}: for the reader
        if not any(ch.islower() for ch in rest):
            return None  # {YYYY-MM-DD}, {YOUR-API-KEY}: a format, or a blank for the reader to fill in
        rest = rest.replace("-", "_")
        reasons.append("'-' is not allowed in a name")
    return scope + rest, reasons


def _adk_near_miss(inner: str) -> tuple[str, list[str]] | None:
    """(the placeholder ``{inner}`` was likely meant as, why ADK leaves it as written) for a near miss."""
    marks = _ADK_MARKS.fullmatch(inner.strip())
    assert marks is not None  # the pattern matches every string
    core, gap, questions = marks.groups()
    if not core or "\n" in core:
        return None
    reasons: list[str] = []
    if is_adk_state_name(core):
        fixed = core
    else:
        near = _adk_fixed_name(core)
        if near is None:
            return None
        fixed, reasons = near
    if len(fixed.rpartition(":")[2]) == 1:  # {x ?}, {a-b}: a set, math, a variable in prose
        return None
    if len(questions) > 1:
        reasons.append("more than one '?'")
    elif questions and gap:
        reasons.append("white space before '?'")
    if not reasons:
        return None
    return "{" + fixed + ("?" if questions else "") + "}", reasons


def _adk_rules(src: _Source, on: frozenset[str]) -> Iterator[tuple[str, int, int, str, str]]:
    """What google-adk 2.x would do wrong with an instruction in its dialect: (code, start, end, message, help).

    T016..T018 report what ADK's code substitutes, wherever it is (a code block included: ADK reads
    it too); T019 reports near misses, which ADK leaves as written, only outside code and math."""
    text = src.text
    for m in ADK_CODE_MATCH.finditer(text):
        opening, inner, closing = m.groups()
        start, end, written = m.start(), m.end(), m.group()
        name = inner.strip()
        optional = name.endswith("?")
        name = name.removesuffix("?")
        mark = "?" if optional else ""
        if name.startswith(_ARTIFACT):
            artifact = name.removeprefix(_ARTIFACT)
            if "T018" in on:
                missing = "renders empty" if optional else "raises KeyError"
                yield (
                    "T018",
                    start,
                    end,
                    f"google-adk loads the artifact {artifact!r} here: it raises ValueError when the Runner has no "
                    f"artifact service, and {missing} when no artifact {artifact!r} is saved",
                    f"give the Runner an artifact_service and save {artifact!r} before the turn"
                    + ("" if optional else f", or write {{{_ARTIFACT}{artifact}?}} so a missing one renders empty")
                    + "; the ADK dialect and `templating convert` keep this text as written",
                )
            continue
        if is_adk_state_name(name):
            placeholder = "{" + name + mark + "}"
            if len(opening) > 1 and "T017" in on:
                yield (
                    "T017",
                    start,
                    end,
                    f"google-adk substitutes {written!r} with the value of {name!r} (it strips every brace), "
                    "though its documentation says doubled braces stay literal"
                    + ("" if optional else f"; it raises KeyError when {name!r} is not in state"),
                    f"write {placeholder} to insert the value; to send {written} as written, "
                    "give ADK an instruction provider (such as templating's static()): ADK injects nothing into one",
                )
            elif len(opening) == 1 and len(closing) > 1 and "T016" in on:
                extra = closing[1:]
                kept = written[: len(written) - len(extra)]
                yield (
                    "T016",
                    start,
                    end,
                    f"google-adk replaces {written!r} as a whole: it inserts the value of {name!r} and drops "
                    f"the {extra!r} after it",
                    f"write {kept} {extra} (a space after the placeholder): ADK then keeps the {extra!r}",
                )
            continue
        if "T019" not in on or len(opening) > 1 or len(closing) > 1 or src.in_code(start) or src.in_math(start):
            continue
        if start and (text[start - 1].isalnum() or text[start - 1] in "_^%#}"):  # \text{first-name}, x^{a-b}
            continue
        if text[start - 1 : start] == "/" or text[end : end + 1] == "/":  # a URL or path: /users/{user-id}/
            continue
        near = _adk_near_miss(inner)
        if near is None:
            continue
        fixed, reasons = near
        yield (
            "T019",
            start,
            end,
            f"{written!r} is not a state name for google-adk ({'; '.join(reasons)}), so it is sent as written; "
            f"did you mean {fixed}?",
            f"write {fixed} to insert the value; ADK substitutes a name only when it is an identifier, alone or "
            "after app:, user: or temp:",
        )


_WHY_OPTIONAL = {
    "pydantic": "(it has a default)",
    "json-schema": "(not listed in 'required')",
    "keys": "(listed with a '?')",
}


def _walk(schema: Schema, placeholder: Placeholder) -> tuple[str | None, str | None, bool | None]:
    """(problem, suggestion, required along the whole path) for a placeholder against a schema.

    An open object (extra keys allowed) has no problem with a key it does not list. Where the
    schema says nothing (an unlisted key of an open object, the inside of an object of unknown
    shape) "required" is ``None`` (unknown) unless the known part of the path is already optional."""
    fields: Mapping[str, SchemaField] | None = schema.fields
    is_open = schema.open
    current: SchemaField | None = None
    required = True
    segments = placeholder.key.split(".")
    for i, segment in enumerate(segments):
        if current is not None and current.is_list and not segment.isdigit():
            parent = ".".join(segments[:i])
            return f"{parent!r} is a list, which has no field {segment!r}", None, required
        if current is not None and segment.isdigit():
            current = current.items
            if current is None:
                return None, None, None if required else False
            fields, is_open = current.fields, current.open
            continue
        if fields is None:
            return None, None, None if required else False
        if segment not in fields:
            if is_open:
                return None, None, None if required else False
            hint = _close(segment, fields)
            if i == 0:
                return f"{segment!r} is not in the schema", hint, required
            parent = ".".join(segments[:i])
            return f"{parent!r} has no field {segment!r} in the schema", f"{parent}.{hint}" if hint else None, required
        current = fields[segment]
        required = required and current.required
        fields, is_open = current.fields, current.open
    return None, None, required


def lint(
    template: str | Template,
    *,
    schema: Any = None,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] = (),
    path: str | None = None,
    allow: Iterable[str] = (),
    markdown: bool | None = None,
    dialect: Dialect | None = None,
) -> list[Diagnostic]:
    """Lint one template; findings sorted by position.

    ``schema`` (anything :func:`load_schema` takes) turns on the schema rules (T001, T009, T010).
    ``select``/``ignore`` choose rules by code or name, or a comma-separated string (default: all
    but the opt-in T011, which needs every template of a run: see :func:`unused_keys`). ``path`` is
    copied into each finding. ``allow``: literal snippets (``"<scratch-pad>"``) never reported: a
    finding whose flagged text is one of them is dropped. ``markdown``: read indented blocks as code
    (default: when ``path`` ends in ``.md``). ``dialect``: the syntax of a string ``template``
    (default ``"angle"``; a ``Template`` has its own). An ``"adk"`` template (Google ADK's ``{key}``)
    gets the rules of its dialect (T016..T019: what google-adk would do wrong at run time) and
    the placeholder rules (T001, T009, T010, T012); the angle syntax's near-miss rules do not apply.
    """
    tpl = as_template(template, dialect=dialect)
    angle = tpl.dialect == "angle"
    on = select_rules(select=select, ignore=ignore) - (ADK_ONLY if angle else ANGLE_ONLY)
    loaded = load_schema(schema) if schema is not None else None
    if markdown is None:
        markdown = path is not None and path.lower().endswith((".md", ".markdown"))
    src = _Source(tpl.source, markdown=markdown)
    allowed = frozenset(allow)
    found: list[Diagnostic] = []

    def add(code: str, start: int, end: int, message: str, help: str | None) -> None:
        if tpl.source[start:end] in allowed:
            return
        found.append(Diagnostic(code, RULES[code].severity, message, src.span(start, end), path, help))

    if not angle:
        for code, start, end, message, help in _adk_rules(src, on):
            add(code, start, end, message, help)
    temp_seen: set[str] = set()
    opened: dict[str, int] = {}  # tag name -> where its last opening tag (<<name>>, or <name> read as one) starts
    for node in tpl.nodes:
        if isinstance(node, Literal):
            if angle:
                for code, start, end, message, help in _literal_rules(src, node, on):
                    add(code, start, end, message, help)
            continue
        if isinstance(node, Escaped):
            if node.text[1:-1].isidentifier():  # <<itinerary>>: the literal opening tag <itinerary>
                opened[node.text[1:-1]] = node.span.start
            continue
        if not isinstance(node, Placeholder):
            continue
        start, end = node.span.start, node.span.end
        in_schema = loaded is not None and node.name in loaded.fields
        tag = angle and not node.optional and node.key.isidentifier() and not in_schema
        tag = tag and src.closed_after(node.key, end)
        if tag and node.key in opened and not src.closed_between(node.key, opened[node.key], start):
            # <<itinerary>> <itinerary> </itinerary>: the placeholder inside the tag an escape opened is its
            # value, and the </itinerary> after it closes that tag
            tag = False
        if tag:
            opened[node.key] = start
        if tag and "T007" in on:  # with T007 off, the tag is still checked as a placeholder (T001, T012)
            add(
                "T007",
                start,
                end,
                f"{node.source!r} looks like an XML-style tag (</{node.key}> follows) but is a placeholder",
                f"write <{node.source}> for the literal tag <{node.key}>",
            )
            continue
        if angle and node.key in _VOID_TAGS and not node.optional and not in_schema and "T007" in on:
            add(
                "T007",
                start,
                end,
                f"{node.source!r} looks like the HTML element <{node.key}> but is a placeholder (of key {node.key!r})",
                f"write <{node.source}> for the literal tag <{node.key}>",
            )
            continue
        written = tpl.source[start:end]  # as written: <key?>, or { key? } in the ADK dialect
        required_form, optional_form = (
            (f"<{node.key}>", f"<{node.key}?>") if angle else (f"{{{node.key}}}", f"{{{node.key}?}}")
        )
        if node.scope == "temp" and "T012" in on and node.key not in temp_seen:
            temp_seen.add(node.key)
            add(
                "T012",
                start,
                end,
                f"{written!r} reads a {TEMP_PREFIX} key, which is empty at the start of every turn",
                f"{TEMP_PREFIX} state lives for one invocation; it has a value only if set earlier in the same turn",
            )
        if loaded is None:
            continue
        problem, hint, required = _walk(loaded, node)
        if problem is not None:
            if "T001" in on:
                add(
                    "T001",
                    start,
                    end,
                    problem + (f"; did you mean {hint!r}?" if hint else ""),
                    "add the key to the schema or fix the name"
                    + (f"; write <{node.source}> for the literal text {node.source}" if angle else ""),
                )
        elif not node.optional and required is False and "T009" in on:
            add(
                "T009",
                start,
                end,
                f"{written!r} is required, but {node.key!r} is optional in the schema "
                + _WHY_OPTIONAL.get(loaded.origin, ""),
                f"write {optional_form} so a missing value renders empty instead of failing",
            )
        elif node.optional and required is True and "T010" in on:
            add(
                "T010",
                start,
                end,
                f"{written!r} is optional, but {node.key!r} is required in the schema",
                f"write {required_form} so a missing value is caught",
            )
    found.sort(key=lambda d: (d.span.start if d.span else -1, d.code))
    return found


def unused_keys(schema: Any, templates: Iterable[str | Template]) -> list[Diagnostic]:
    """T011: top-level schema keys that none of ``templates`` uses (one finding per key, for a whole run)."""
    loaded = load_schema(schema)
    used: set[str] = set()
    for template in templates:
        tpl = template if isinstance(template, Template) else Template(template)
        used.update(node.name for node in tpl.placeholders)
    return [
        Diagnostic(
            "T011",
            RULES["T011"].severity,
            f"schema key {key!r} is not used by any linted template",
            None,
            loaded.source,
            "remove it from the schema, or use it in an instruction",
        )
        for key in loaded.fields
        if key not in used
    ]
