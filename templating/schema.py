"""What a schema of state is: the declared keys ([`Schema`][templating.schema.Schema]), each with what is
known of its inside ([`SchemaField`][templating.schema.SchemaField]).

Plain data, read by the linter's rules, the scanner of Python code (an ADK agent's `state_schema=`
model read from its source) and the language server. Loading one (a pydantic model, a JSON Schema, a
list of keys) is [`templating.linter.load_schema`][templating.linter.load_schema]'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["Schema", "SchemaField"]


@dataclass(frozen=True, slots=True)
class SchemaField:
    """One field: whether state always has it, and what is known of its inside.

    `fields` lists the keys of an object with known properties (`None`: any key goes);
    `open` says other keys are allowed too (`additionalProperties`, pydantic `extra="allow"`);
    `items` describes list elements when known; `is_list` says the value is a list (an array).
    `type` is a short readable type when declared (`str`, `list[str]`, `Order`, `str | None`), and
    `default` the default's text (`'en'`, `[]`; JSON text from a JSON Schema), `None` when unknown or none.
    """

    required: bool = True
    fields: Mapping[str, SchemaField] | None = None
    items: SchemaField | None = None
    open: bool = False
    is_list: bool = False
    type: str | None = None
    default: str | None = None


@dataclass(frozen=True, slots=True)
class Schema:
    """The declared state keys (top level: `user:name`, `order_id`...), with what is known of each.

    `open`: keys beyond `fields` are allowed at the top level. `origin` is where it came from
    (`"pydantic"`, `"json-schema"` or `"keys"`), so messages can say why a field is optional.
    """

    fields: Mapping[str, SchemaField]
    source: str = "<schema>"
    open: bool = False
    origin: str = "keys"
