"""google-adk's `state_schema=`: an instruction's keys checked against the models of the agents given it.

An ADK 2.x agent may pass `state_schema=SomeModel`. The scanner of Python code reads such a model's fields from the
parsed code ([`ModelReader`][templating.pysource.models.ModelReader], in `templating.pysource.models`: reading
Python sources sits below the linter) into a [`Schema`][templating.linter.Schema].
[`check_against_schema`][templating.linter.adk_schema.check_against_schema] checks an instruction's keys
against the state schemas of the agents that use it (T001 for a key the model does not declare);
[`schema_keys`][templating.linter.adk_schema.schema_keys] are the keys they declare.

What google-adk 2.13 does with the model: it checks state writes against its fields, and only in a Workflow, an
LlmAgent node or a root LlmAgent (`templating.linter.rules.enforced_schema`: T028, and T001's level there). It
never fills state from it: a field's default is not applied to the session, and a required field may be missing.
So whether a top-level `{key}` renders depends only on whether something writes `key` (T014, with the schema's
default named in its help), never on the field's default (no T009 or T010 for a top-level key). Inside a written
value, ADK stores what was written, not the model's validated copy: a nested field with a default may still be
missing, and T009 says so for a nested path (`<legs.0.origin>`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from ..nodes import Span
from ..template import parse
from .check import lint
from .registry import Diagnostic

if TYPE_CHECKING:
    from ..pysource import StateSchema

__all__ = ["SCHEMA_RULES", "check_against_schema", "schema_findings", "schema_keys"]

# The rules a state schema turns on: an unknown key (T001), a required read of a nested field with a default
# (T009). T010 (an optional read of a required field) does not apply: google-adk never fills a required field,
# so a `?` on a state_schema key is never redundant.
SCHEMA_RULES = frozenset({"T001", "T009"})
# ADK validates only keys without a scope prefix against state_schema: app:, user: and temp: keys go free.
_EXEMPT_SCOPES = frozenset({"app", "user", "temp"})


class Instruction(Protocol):
    """What is checked here of an instruction found in Python code ([`templating.pysource.Instruction`][])."""

    @property
    def label(self) -> str: ...
    @property
    def dialect(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def state_schemas(self) -> tuple[StateSchema, ...]: ...
    def locate(self, start: int, end: int) -> tuple[str, Span]: ...


def schema_keys(found: Instruction) -> frozenset[str]:
    """The top-level keys that the state schemas of the agents using `found` declare. google-adk does not
    write them (it validates writes against the schema): they are not "written" for T014."""
    keys: set[str] = set()
    for state in found.state_schemas:
        if state.schema is not None:
            keys.update(state.schema.fields)
    return frozenset(keys)


def check_against_schema(found: Instruction, *, select: Iterable[str] = SCHEMA_RULES) -> list[Diagnostic]:
    """T001 and T009 for one instruction against the `state_schema` of each ADK agent that uses it,
    placed in the file the instruction is written in. Keys with an `app:`, `user:` or `temp:` prefix
    are not checked: ADK does not validate them against the schema either. T009 is reported for nested
    paths only: a top-level key is present when something writes it, whatever its default (T014). Each is at
    its rule's level; the lint engine sets T001's by where google-adk enforces the schema
    (`templating.linter.rules.enforced_schema`)."""
    return [diag for _, _, diag in schema_findings(found, select=select)]


def schema_findings(
    found: Instruction, *, select: Iterable[str] = SCHEMA_RULES
) -> list[tuple[StateSchema, str, Diagnostic]]:
    """[`check_against_schema`][templating.linter.adk_schema.check_against_schema]'s findings, each with the
    state schema it is against and the top-level key the placeholder reads."""
    on = SCHEMA_RULES & set(select)
    if not on or found.dialect == "jinja":
        return []
    template = parse(found.text, dialect="adk" if found.dialect == "adk" else "angle")
    exempt = {(node.span.start, node.span.end) for node in template.placeholders if node.scope in _EXEMPT_SCOPES}
    keys = {(node.span.start, node.span.end): node.name for node in template.placeholders}
    out: list[tuple[StateSchema, str, Diagnostic]] = []
    seen: set[tuple[str, int, int, str]] = set()
    for state in found.state_schemas:
        if state.schema is None:
            continue
        where = f"{state.model}, the state_schema of {state.agent} ({state.path}:{state.span.line})"
        # each top-level field taken as present: whether it is in the session is T014's question, not its default's
        present = replace(state.schema, fields={k: replace(f, required=True) for k, f in state.schema.fields.items()})
        for diag in lint(template, schema=present, select=on):
            assert diag.span is not None
            place = (diag.span.start, diag.span.end)
            if place in exempt:
                continue
            key = (diag.code, diag.span.start, diag.span.end, state.model)
            if key in seen:
                continue
            seen.add(key)
            path, span = found.locate(diag.span.start, diag.span.end)
            message = diag.message.replace("the schema", where)
            out.append(
                (state, keys.get(place, ""), replace(diag, message=message, path=path, span=span, origin=found.label))
            )
    return out
