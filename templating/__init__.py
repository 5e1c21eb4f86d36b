"""templating: a real grammar for the instructions (system prompts) of LLM agents.

``Hello <user:name>, your order <order_id> is <status?>.`` parses into literal, placeholder and
escape nodes and renders against a read-only view of the agent's state.
"""

from .errors import MissingKey, MissingKeyError, TemplatingError
from .lint import Diagnostic, lint, load_schema
from .nodes import Escaped, Literal, Node, Placeholder, Span
from .render import Formatter, Missing, format_value
from .template import Template, escape, parse, render

__all__ = [
    # linting (issue 5)
    "Diagnostic",
    "lint",
    "load_schema",
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
]

__version__ = "0.1.0"
