"""The prompt linter: rules over parsed templates (and the literal text between placeholders), and the
engine that lints a whole project.

Each finding is a [`Diagnostic`][templating.linter.Diagnostic] with a stable code (`T001`...), a
severity, a message and a span. Near-miss rules read only literal text, so anything they flag renders
as literal text today; schema rules compare placeholders with a declared schema (a pydantic model, a
JSON Schema, or a list of keys). Configuration comes from `[tool.templating]` in `pyproject.toml`.

The package: `registry` (every rule, once), `check` (one template), `rules/` (the checks, by
family), `schema`, `config`, `globs` (glob and `.gitignore` matching), `discovery` and `project` (root,
walk and files), `engine` (a project run), `run` (a run of `templating lint`: options, baseline, fixes,
outputs), `outputs/`. The names below are imported from those modules
the first time each is used, so that a caller importing one of them (the command line reading `registry`)
does not load the whole linter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .check import lint
    from .config import (
        CONSTANT_SUFFIXES,
        LintConfig,
        LintConfigError,
        _codes,
        _matches,
        glob_regex,
        load_config,
        rules_for,
        select_rules,
    )
    from .discovery import DEFAULT_INCLUDE, collect_files
    from .registry import (
        ADK_ONLY,
        ANGLE_ONLY,
        DEFAULT_RULES,
        DOCS_URL,
        RULES,
        SEVERITIES,
        SYNTAX_CHECKS,
        TREE_RULES,
        Diagnostic,
        Rule,
        Severity,
        rule_url,
    )
    from .rules.python import lint_instruction, never_written, skipped_findings
    from .rules.schema_keys import unused_keys
    from .run import LintOutcome, LintRun, LintUsageError, lint_project
    from .schema import Schema, SchemaError, SchemaField, load_schema

# submodule -> the public names it defines; each is imported when one of its names is first used (PEP 562),
# so that importing one module of the linter (`templating.linter.registry`, say) does not load all of it.
_MODULES = {
    "check": ("lint",),
    "config": (
        "CONSTANT_SUFFIXES",
        "LintConfig",
        "LintConfigError",
        "_codes",
        "_matches",
        "glob_regex",
        "load_config",
        "rules_for",
        "select_rules",
    ),
    "discovery": ("DEFAULT_INCLUDE", "collect_files"),
    "registry": (
        "ADK_ONLY",
        "ANGLE_ONLY",
        "DEFAULT_RULES",
        "DOCS_URL",
        "RULES",
        "SEVERITIES",
        "SYNTAX_CHECKS",
        "TREE_RULES",
        "Diagnostic",
        "Rule",
        "Severity",
        "rule_url",
    ),
    "rules.python": ("lint_instruction", "never_written", "skipped_findings"),
    "run": ("LintOutcome", "LintRun", "LintUsageError", "lint_project"),
    "rules.schema_keys": ("unused_keys",),
    "schema": ("Schema", "SchemaError", "SchemaField", "load_schema"),
}
_LAZY, _load, __dir__ = lazy_names(globals(), _MODULES)

if not TYPE_CHECKING:  # type checkers see the imports above, so a misspelt name is still an error
    __getattr__ = _load


__all__ = [
    "ADK_ONLY",
    "ANGLE_ONLY",
    "CONSTANT_SUFFIXES",
    "DEFAULT_INCLUDE",
    "DEFAULT_RULES",
    "DOCS_URL",
    "RULES",
    "SEVERITIES",
    "SYNTAX_CHECKS",
    "TREE_RULES",
    "Diagnostic",
    "LintConfig",
    "LintConfigError",
    "LintOutcome",
    "LintRun",
    "LintUsageError",
    "Rule",
    "Schema",
    "SchemaError",
    "SchemaField",
    "Severity",
    "_codes",
    "_matches",
    "collect_files",
    "glob_regex",
    "lint",
    "lint_instruction",
    "lint_project",
    "load_config",
    "load_schema",
    "never_written",
    "rule_url",
    "rules_for",
    "select_rules",
    "skipped_findings",
    "unused_keys",
]
