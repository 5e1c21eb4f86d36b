"""templating: a real grammar for the instructions (system prompts) of LLM agents.

`Hello <user:name>, your order <order_id> is <status?>.` parses into literal, placeholder and
escape nodes and renders against a read-only view of the agent's state.

The core (parsing, rendering, linting, converting) is imported at once. The parts built on
pydantic, Jinja2 or SQLAlchemy (sessions, the database session service, contexts, agents, the
runner, Jinja2 mode) are imported the first time one of their names is used, so the command line
and the pytest plugin start quickly, and SQLAlchemy is needed only by `DatabaseSessionService`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .convert import AdkDifference, ConversionError, convert_adk
from .errors import (
    CyclicValueError,
    MissingKey,
    MissingKeyError,
    TemplateSyntaxError,
    TemplatingError,
    UnprintableValueError,
)
from .lint import Diagnostic, LintConfigError, SchemaError, lint, load_schema, unused_keys
from .lint.engine import LintResult, lint_project
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
from .render import Formatter, Missing, format_adk_value, format_value
from .template import Template, escape, parse, render

if TYPE_CHECKING:
    from .agents import Agent
    from .jinja_budget import JinjaBudget
    from .jinja_mode import (
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
    from .runner import Model, Runner
    from .sessions.base import (
        AlreadyExistsError,
        Event,
        EventActions,
        GetSessionConfig,
        Session,
        SessionNotFoundError,
        SessionService,
        StaleSessionError,
    )
    from .sessions.contexts import CallbackContext, ReadonlyContext, ToolContext, inject_session_state
    from .sessions.memory import InMemorySessionService
    from .sessions.sql import DatabaseSessionService, SessionStoreError
    from .sessions.state import InvalidStateError, State

# name -> the submodule that defines it, for the names imported on first use.
_LAZY = {
    "Agent": "agents",
    "CallbackContext": "sessions.contexts",
    "ReadonlyContext": "sessions.contexts",
    "ToolContext": "sessions.contexts",
    "inject_session_state": "sessions.contexts",
    "JinjaBudget": "jinja_budget",
    "JinjaBudgetError": "jinja_mode",
    "JinjaCyclicValueError": "jinja_mode",
    "JinjaError": "jinja_mode",
    "JinjaProvider": "jinja_mode",
    "JinjaSecurityError": "jinja_mode",
    "JinjaSyntaxError": "jinja_mode",
    "JinjaUndefinedError": "jinja_mode",
    "JinjaUnprintableError": "jinja_mode",
    "jinja": "jinja_mode",
    "Model": "runner",
    "Runner": "runner",
    "AlreadyExistsError": "sessions.base",
    "Event": "sessions.base",
    "EventActions": "sessions.base",
    "GetSessionConfig": "sessions.base",
    "InMemorySessionService": "sessions.memory",
    "Session": "sessions.base",
    "SessionNotFoundError": "sessions.base",
    "SessionService": "sessions.base",
    "DatabaseSessionService": "sessions.sql",
    "SessionStoreError": "sessions.sql",
    "StaleSessionError": "sessions.base",
    "InvalidStateError": "sessions.state",
    "State": "sessions.state",
}


if not TYPE_CHECKING:  # type checkers see the imports above, so a misspelt name is still an error

    def __getattr__(name: str) -> Any:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'templating' has no attribute {name!r}")
        loaded = importlib.import_module(f".{module}", __name__)
        # Bind every public name of that module at once: later lookups are ordinary attribute reads.
        for other, where in _LAZY.items():
            if where == module:
                globals()[other] = getattr(loaded, other)
        return globals()[name]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


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
