"""Rule selection and `[tool.templating]` configuration, with the globs include/exclude use."""

from __future__ import annotations

import dataclasses
import functools
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import TemplatingError
from ..inputs import InputError, read_text

# Module constants of Python files linted even when no call site uses them: names ending in these (the
# scanner's default, defined with it: reading Python sources sits below the linter).
from ..pysource.reading import CONSTANT_SUFFIXES as CONSTANT_SUFFIXES
from .globs import Glob, GlobError, GlobList, compile_glob
from .registry import DEFAULT_RULES, RULES, SYNTAX_CHECKS
from .util import relative as _relative


class LintConfigError(TemplatingError):
    """A `[tool.templating]` table (or rule selection) that is not valid."""


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
    """The rule codes that are on: `select` (default: every rule but the opt-in T011), plus
    `extend_select`, minus `ignore`. Codes, rule names or `ALL`; a string is one code or a
    comma-separated list."""
    chosen = set(DEFAULT_RULES) if select is None else _codes(select, "select")
    chosen |= _codes(extend_select, "extend-select")
    chosen -= _codes(ignore, "ignore")
    return frozenset(chosen)


@dataclass(frozen=True, slots=True)
class LintConfig:
    """`[tool.templating]` from `pyproject.toml`; `root` is the folder that holds it."""

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
    max_file_size: int = 2_000_000
    severity: Mapping[str, str] = field(default_factory=dict)  # rule code -> error, warning or info
    cache_dir: str | None = None  # the lint cache's folder, relative to the root (templating.linter.cache_dir)
    # the keys the caller gives a session before the first turn (templating.agent_model.initial): a tuple of keys,
    # a JSON file's path, or a mapping of either by app; None when not set
    initial_state: Any = None


_CONFIG_KEYS = {
    "cache-dir",
    "initial-state",
    "schema",
    "include",
    "exclude",
    "select",
    "extend-select",
    "ignore",
    "per-file-ignores",
    "allow",
    "constant-suffixes",
    "max-file-size",
    "severity",
}


def _strings(table: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise LintConfigError(f"{where}: '{key}' must be a list of strings")
    return tuple(value)


LARGEST_FILE = 2**30  # the most 'max-file-size' may be: 1 GiB, far above any instruction file


def _no_nul(table: Mapping[str, Any], where: str) -> None:
    """A `LintConfigError` naming the key whose text (a path, a glob, a code, a table's key) holds a NUL
    character, which no file name, glob or rule can hold (the system would refuse it as a path)."""
    for key, value in table.items():
        texts = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        if isinstance(value, Mapping):
            texts = [*value, *(v for item in value.values() for v in (item if isinstance(item, list) else [item]))]
        if any(isinstance(text, str) and "\x00" in text for text in texts):
            raise LintConfigError(f"{where}: '{key}' holds a NUL character, which no path, glob or rule can hold")


def load_config(start: Path | None = None, *, path: Path | None = None) -> LintConfig:
    """`[tool.templating]` of `path`, or of the nearest `pyproject.toml` at or above `start`
    (default: the current folder). No file or no table: the defaults, rooted at `start`."""
    here = (start or Path.cwd()).resolve()
    if path is None:
        for folder in (here, *here.parents):
            if (folder / "pyproject.toml").is_file():
                path = folder / "pyproject.toml"
                break
    if path is None:
        return LintConfig(root=here)
    try:
        data = tomllib.loads(read_text(str(path), what="config", stdin=False))
    except InputError as exc:
        raise LintConfigError(exc.message) from None
    except tomllib.TOMLDecodeError as exc:
        raise LintConfigError(f"config file is not valid TOML: {path}: {exc}") from None
    except RecursionError:  # arrays or tables nested by the ten thousand, in any table of the file
        raise LintConfigError(f"config file is nested too deeply to read: {path}") from None
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
        severity=severities(table.get("severity"), where),
    )
    _no_nul(table, where)
    size = table.get("max-file-size", config.max_file_size)
    if not isinstance(size, int) or isinstance(size, bool) or not 1 <= size <= LARGEST_FILE:
        raise LintConfigError(
            f"{where}: 'max-file-size' must be a number of bytes from 1 to {LARGEST_FILE} (1 GiB), not {size!r}"
        )
    config = dataclasses.replace(config, max_file_size=size)
    cache_dir = table.get("cache-dir")
    if cache_dir is not None:
        if not isinstance(cache_dir, str) or not cache_dir.strip():
            raise LintConfigError(f"{where}: 'cache-dir' must be a folder (a path relative to the project root)")
        config = dataclasses.replace(config, cache_dir=cache_dir)
    if "initial-state" in table:
        config = dataclasses.replace(config, initial_state=initial_state_setting(table["initial-state"], where))
    if any(not suffix for suffix in config.constant_suffixes):
        raise LintConfigError(f"{where}: 'constant-suffixes' holds name endings; an empty one would match every name")
    for suffix in config.constant_suffixes:
        if not f"x{suffix}".isidentifier():
            raise LintConfigError(
                f"{where}: 'constant-suffixes' holds name endings: {suffix!r} is not one (letters, digits, _)"
            )
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


def initial_state_setting(value: Any, where: str) -> tuple[str, ...] | str | dict[str, tuple[str, ...] | str]:
    """`initial-state` of `[tool.templating]` checked: a list of keys, a JSON file's path, or a table of either by
    app (see `templating.agent_model.initial`). Raises `LintConfigError` naming what is wrong."""
    shape = (
        "'initial-state' must be a list of keys, a JSON file, or a table of those by app, such as"
        ' initial-state = { "shop" = ["customer"] }'
    )
    if isinstance(value, list):
        return _state_keys(value, f"{where}: 'initial-state'")
    if isinstance(value, str):
        if not value.strip():
            raise LintConfigError(f"{where}: {shape}, not an empty path")
        return value
    if isinstance(value, Mapping):
        table: dict[str, tuple[str, ...] | str] = {}
        for app, given in value.items():
            if isinstance(given, list):
                table[str(app)] = _state_keys(given, f"{where}: 'initial-state' of {app!r}")
            elif isinstance(given, str) and given.strip():
                table[str(app)] = given
            else:
                raise LintConfigError(
                    f"{where}: 'initial-state' of {app!r} must be a list of keys or a JSON file, not {given!r}"
                )
        return table
    raise LintConfigError(f"{where}: {shape}, not {type(value).__name__}")


def _state_keys(values: list[Any], what: str) -> tuple[str, ...]:
    out = []
    for value in values:
        if not isinstance(value, str) or not value.strip():
            raise LintConfigError(f"{what} must hold state keys (non-empty strings), not {value!r}")
        out.append(value.strip())
    return tuple(out)


def _clean(pattern: str) -> str:
    """A glob or path written `./a/b/` compares as `a/b`."""
    while pattern.startswith("./"):
        pattern = pattern[2:]
    return pattern.rstrip("/") or pattern


def glob_regex(pattern: str) -> Glob:
    """`pattern` compiled (see [`templating.linter.globs`][templating.linter.globs]): its `match(path)`
    tells whether the whole relative path matches. A leading `./` is ignored. The name is kept from
    when globs were regular expressions; matching no longer uses `re` (which backtracks)."""
    try:
        return compile_glob(_clean(pattern))
    except GlobError as exc:
        raise LintConfigError(str(exc)) from None


@functools.lru_cache(maxsize=256)  # a walk matches every file against the same few lists
def glob_list(patterns: tuple[str, ...], *, prefixes: bool = True) -> GlobList:
    """`patterns` compiled once, as include/exclude/per-file-ignores read them (`prefixes`: a pattern
    also matches the files inside a folder it matches)."""
    try:
        return GlobList([_clean(p) for p in patterns], prefixes=prefixes)
    except GlobError as exc:
        raise LintConfigError(str(exc)) from None


def _matches(relative: str, patterns: Iterable[str]) -> bool:
    """Whether the file `relative` or one of its folders matches a pattern, like .gitignore: a pattern
    without `/` matches a file or folder name at any depth (`drafts`), one with `/` the path
    from the root (`prompts/drafts`, `prompts/*.txt`)."""
    return glob_list(tuple(patterns)).match(relative)


def rules_for(path: str | None, config: LintConfig, codes: frozenset[str]) -> frozenset[str]:
    """`codes` minus the per-file ignores whose glob matches `path` (relative to the config root)."""
    if path is None or not config.per_file_ignores:
        return codes
    relative = _relative(Path(path), config.root)
    dropped: set[str] = set()
    for glob, ignored in config.per_file_ignores.items():
        if glob_list((glob,)).match(relative):
            dropped |= _codes(ignored, "per-file-ignores")
    return codes - dropped


def severities(values: Mapping[str, Any] | None, what: str) -> dict[str, str]:
    """The severity each rule is reported with instead of its own: `{"T014": "error"}` (codes or rule
    names; levels `error`, `warning`, `info`). Raises `LintConfigError` naming a bad rule or level."""
    from .registry import SEVERITIES

    if values is None:
        return {}
    if not isinstance(values, Mapping):
        raise LintConfigError(
            f"{what}: 'severity' must be a table of rule = level, such as severity = {{ T014 = \"error\" }}"
        )
    out: dict[str, str] = {}
    levels = ", ".join(f'"{level}"' for level in SEVERITIES[:-1]) + f' or "{SEVERITIES[-1]}"'
    for key, level in values.items():
        name = str(key).strip()
        code = name.upper() if name.upper() in RULES else next((c for c, r in RULES.items() if r.name == name), None)
        if code is None:
            if name.upper() in SYNTAX_CHECKS or name in {check.name for check in SYNTAX_CHECKS.values()}:
                raise LintConfigError(f"{what}: {name!r} in 'severity' is a syntax check, whose severity is fixed")
            raise LintConfigError(f"{what}: unknown rule {name!r} in 'severity' (known: {', '.join(RULES)})")
        if level not in SEVERITIES:
            raise LintConfigError(f"{what}: the severity of {name} must be {levels}, not {level!r}")
        out[code] = level
    return out
