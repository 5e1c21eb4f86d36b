"""T021: an ADK agent's `state_schema=` the linter cannot read from the code (its instructions are then
checked without it). The check against a readable one lives in `templating.linter.adk_schema`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..registry import RULES, Diagnostic

if TYPE_CHECKING:
    from ...pysource import Scan

__all__ = ["unread_state_schemas"]


def unread_state_schemas(found: Scan) -> list[Diagnostic]:
    """T021 for each `state_schema=` argument of the scan whose model is not read, with the reason."""
    return [
        Diagnostic(
            "T021",
            RULES["T021"].severity,
            f"the state_schema {state.model} of {state.agent} is not read: {state.reason}; "
            "its instructions are not checked against it",
            state.span,
            state.path,
            "pass a pydantic model class defined in the project (the linter reads it from the source, "
            "never imports it), or ignore T021 for this file",
            state.agent,
        )
        for state in found.state_schemas
        if state.schema is None
    ]
