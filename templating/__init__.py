"""templating: a real grammar for the instructions (system prompts) of LLM agents.

`Hello <user:name>, your order <order_id> is <status?>.` parses into literal, placeholder and
escape nodes and renders against a read-only view of the agent's state.

Every public name is imported the first time it is used (PEP 562): `import templating` itself
loads nothing else, so each command of the command line pays only for what it uses (`templating
lint` does not import the renderer's providers, `templating render` does not import the linter),
and SQLAlchemy, pydantic and Jinja2 are loaded only by the names built on them. `from templating
import X`, `templating.X`, `from templating import *` and `dir(templating)` work as if everything
were imported at once; type checkers read the imports under `TYPE_CHECKING` below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_names

if TYPE_CHECKING:
    from .agents import Agent
    from .convert import AdkDifference, ConversionError, convert_adk
    from .errors import (
        CyclicValueError,
        MissingKey,
        MissingKeyError,
        TemplateSyntaxError,
        TemplatingError,
        UnprintableValueError,
    )
    from .jinja_mode.budget import JinjaBudget
    from .jinja_mode.mode import (
        JinjaBudgetError,
        JinjaCyclicValueError,
        JinjaError,
        JinjaProvider,
        JinjaSecurityError,
        JinjaSyntaxError,
        JinjaUndefinedError,
        JinjaUnprintableError,
        jinja,
    )
    from .linter import Diagnostic, LintConfigError, SchemaError, lint, load_schema, unused_keys
    from .linter.engine import LintResult
    from .linter.run import lint_project
    from .nodes import DIALECTS, Dialect, Escaped, Literal, Node, Placeholder, Span
    from .providers import (
        ConcatProvider,
        InstructionLike,
        InstructionProvider,
        Provider,
        StaticProvider,
        WhenProvider,
        concat,
        instruction,
        resolve,
        static,
        when,
    )
    from .renderer import Formatter, Missing, format_adk_value, format_value
    from .runner import Model, Runner
    from .sessions.base import AlreadyExistsError, SessionNotFoundError, SessionService, StaleSessionError
    from .sessions.contexts import CallbackContext, ReadonlyContext, ToolContext, inject_session_state
    from .sessions.memory import InMemorySessionService
    from .sessions.models import Event, EventActions, GetSessionConfig, Session
    from .sessions.sql import DatabaseSessionService, SessionStoreError
    from .sessions.state import State
    from .sessions.values import InvalidStateError
    from .template import Template, escape, parse, render

# submodule -> the public names it defines; each is imported when one of its names is first used.
_MODULES = {
    "errors": (
        "CyclicValueError",
        "MissingKey",
        "MissingKeyError",
        "TemplateSyntaxError",
        "TemplatingError",
        "UnprintableValueError",
    ),
    "nodes": ("DIALECTS", "Dialect", "Escaped", "Literal", "Node", "Placeholder", "Span"),
    "renderer": ("Formatter", "Missing", "format_adk_value", "format_value"),
    "template": ("Template", "escape", "parse", "render"),
    "convert": ("AdkDifference", "ConversionError", "convert_adk"),
    "providers": (
        "ConcatProvider",
        "InstructionLike",
        "InstructionProvider",
        "Provider",
        "StaticProvider",
        "WhenProvider",
        "concat",
        "instruction",
        "resolve",
        "static",
        "when",
    ),
    "linter": ("Diagnostic", "LintConfigError", "SchemaError", "lint", "load_schema", "unused_keys"),
    "linter.engine": ("LintResult",),
    "linter.run": ("lint_project",),
    "agents": ("Agent",),
    "sessions.contexts": ("CallbackContext", "ReadonlyContext", "ToolContext", "inject_session_state"),
    "jinja_mode.budget": ("JinjaBudget",),
    "jinja_mode.mode": (
        "JinjaBudgetError",
        "JinjaCyclicValueError",
        "JinjaError",
        "JinjaProvider",
        "JinjaSecurityError",
        "JinjaSyntaxError",
        "JinjaUndefinedError",
        "JinjaUnprintableError",
        "jinja",
    ),
    "runner": ("Model", "Runner"),
    "sessions.base": ("AlreadyExistsError", "SessionNotFoundError", "SessionService", "StaleSessionError"),
    "sessions.memory": ("InMemorySessionService",),
    "sessions.models": ("Event", "EventActions", "GetSessionConfig", "Session"),
    "sessions.sql": ("DatabaseSessionService", "SessionStoreError"),
    "sessions.state": ("State",),
    "sessions.values": ("InvalidStateError",),
}
# name -> the submodule that defines it; the loader; dir()
_LAZY, _load, __dir__ = lazy_names(globals(), _MODULES)


if not TYPE_CHECKING:  # type checkers see the imports above, so a misspelt name is still an error
    __getattr__ = _load


__all__ = [
    # core: parse and render
    "CyclicValueError",
    "DIALECTS",
    "Dialect",
    "Escaped",
    "Formatter",
    "Literal",
    "Missing",
    "MissingKey",
    "MissingKeyError",
    "Node",
    "Placeholder",
    "Span",
    "Template",
    "TemplateSyntaxError",
    "TemplatingError",
    "UnprintableValueError",
    "escape",
    "format_adk_value",
    "format_value",
    "parse",
    "render",
    # ADK dialect and convert
    "AdkDifference",
    "ConversionError",
    "convert_adk",
    # state, sessions and contexts
    "AlreadyExistsError",
    "CallbackContext",
    "DatabaseSessionService",
    "Event",
    "EventActions",
    "GetSessionConfig",
    "InMemorySessionService",
    "InvalidStateError",
    "ReadonlyContext",
    "Session",
    "SessionNotFoundError",
    "SessionService",
    "SessionStoreError",
    "StaleSessionError",
    "State",
    "ToolContext",
    "inject_session_state",
    # instruction providers, agents, the runner, Jinja2 mode
    "Agent",
    "ConcatProvider",
    "InstructionLike",
    "InstructionProvider",
    "JinjaBudget",
    "JinjaBudgetError",
    "JinjaCyclicValueError",
    "JinjaError",
    "JinjaProvider",
    "JinjaSecurityError",
    "JinjaSyntaxError",
    "JinjaUndefinedError",
    "JinjaUnprintableError",
    "Model",
    "Provider",
    "Runner",
    "StaticProvider",
    "WhenProvider",
    "concat",
    "instruction",
    "jinja",
    "resolve",
    "static",
    "when",
    # linting
    "Diagnostic",
    "LintConfigError",
    "SchemaError",
    "lint",
    "lint_project",
    "LintResult",
    "load_schema",
    "unused_keys",
]

__version__ = "0.1.0"
