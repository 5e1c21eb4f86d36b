"""templating: a real grammar for the instructions (system prompts) of LLM agents.

``Hello <user:name>, your order <order_id> is <status?>.`` parses into literal, placeholder and
escape nodes and renders against a read-only view of the agent's state.
"""

from .agents import Agent
from .errors import MissingKey, MissingKeyError, TemplatingError
from .jinja import JinjaError, JinjaProvider, JinjaSecurityError, JinjaSyntaxError, JinjaUndefinedError, jinja
from .nodes import Escaped, Literal, Node, Placeholder, Span
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
from .render import Formatter, Missing, format_value
from .template import Template, escape, parse, render

__all__ = [
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
