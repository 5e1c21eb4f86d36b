"""The prompt linter: rules over parsed templates (and the literal text between placeholders), and the
engine that lints a whole project.

Each finding is a [`Diagnostic`][templating.lint.Diagnostic] with a stable code (`T001`...), a
severity, a message and a span. Near-miss rules read only literal text, so anything they flag renders
as literal text today; schema rules compare placeholders with a declared schema (a pydantic model, a
JSON Schema, or a list of keys). Configuration comes from `[tool.templating]` in `pyproject.toml`.

The package: `registry` (every rule, once), `check` (one template), `rules/` (the checks, by
family), `schema`, `config`, `globs` (glob and `.gitignore` matching), `discovery` and `project` (root,
walk and files), `engine` (a project run), `outputs/`.
"""

from __future__ import annotations

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
from .schema import Schema, SchemaError, SchemaField, load_schema

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
    "load_config",
    "load_schema",
    "never_written",
    "rule_url",
    "rules_for",
    "select_rules",
    "skipped_findings",
    "unused_keys",
]
