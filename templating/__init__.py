"""templating: a real grammar for the instructions (system prompts) of LLM agents.

``Hello <user:name>, your order <order_id> is <status?>.`` parses into literal, placeholder and
escape nodes and renders against a read-only view of the agent's state.
"""

from .agents import Agent
from .contexts import CallbackContext, ReadonlyContext, ToolContext, inject_session_state
from .convert import AdkDifference, ConversionError, convert_adk
from .errors import MissingKey, MissingKeyError, TemplateSyntaxError, TemplatingError
from .jinja import JinjaError, JinjaProvider, JinjaSecurityError, JinjaSyntaxError, JinjaUndefinedError, jinja
from .lint import Diagnostic, LintConfigError, SchemaError, lint, load_schema, unused_keys
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
from .runner import Model, Runner
from .sessions import (
    AlreadyExistsError,
    Event,
    EventActions,
    GetSessionConfig,
    InMemorySessionService,
    Session,
    SessionNotFoundError,
    StaleSessionError,
)
from .state import InvalidStateError, State
from .template import Template, escape, parse, render

__all__ = [
    # running a turn (issue 4)
    "Model",
    "Runner",
    # linting (issue 5)
    "Diagnostic",
    "LintConfigError",
    "SchemaError",
    "lint",
    "load_schema",
    "unused_keys",
    # ADK dialect and convert (issue 4)
    "DIALECTS",
    "AdkDifference",
    "ConversionError",
    "Dialect",
    "convert_adk",
    "format_adk_value",
    # core
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
    "TemplatingError",
    "escape",
    "format_value",
    "parse",
    "render",
    # State, sessions and contexts
    "AlreadyExistsError",
    "CallbackContext",
    "Event",
    "EventActions",
    "GetSessionConfig",
    "InMemorySessionService",
    "InvalidStateError",
    "ReadonlyContext",
    "Session",
    "SessionNotFoundError",
    "StaleSessionError",
    "State",
    "ToolContext",
    "inject_session_state",
    # Instruction providers, agent definitions and Jinja2 mode (issue 4).
    "Agent",
    "ConcatProvider",
    "InstructionLike",
    "InstructionProvider",
    "JinjaError",
    "JinjaProvider",
    "JinjaSecurityError",
    "JinjaSyntaxError",
    "JinjaUndefinedError",
    "Provider",
    "TemplateSyntaxError",
    "StaticProvider",
    "WhenProvider",
    "concat",
    "instruction",
    "jinja",
    "resolve",
    "static",
    "when",
]

__version__ = "0.1.0"
