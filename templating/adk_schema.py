"""Moved to [`templating.lint.adk_schema`][templating.lint.adk_schema]; this name stays importable."""

from .lint.adk_schema import SCHEMA_RULES, ModelReader, StateSchema, check_against_schema, schema_keys

__all__ = ["SCHEMA_RULES", "ModelReader", "StateSchema", "check_against_schema", "schema_keys"]
