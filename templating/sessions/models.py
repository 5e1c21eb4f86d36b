"""The session and event model: [`Session`][templating.Session], [`Event`][templating.Event] with its
[`EventActions`][templating.EventActions], and [`GetSessionConfig`][templating.GetSessionConfig], as pydantic
models that check every field (state against the value contract) on construction and assignment.

An append's hot path makes and copies events without pydantic's generic work (`prepare_event`,
`event_from`, `copy_stored`): those helpers build exactly what validation would, from values already checked.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, StrictFloat, StrictInt, field_validator

from ..nodes import TEMP_PREFIX
from .values import check_state, copy_checked, text_problem

__all__ = ["MAX_ID_LENGTH", "Event", "EventActions", "GetSessionConfig", "Session"]

MAX_ID_LENGTH = 256
"""The longest id, in characters: of an app, a user, a session or an event. A database indexes ids (PostgreSQL's
index rows hold about 2,700 bytes, four bytes a character at most), so every service takes only ids this long."""


def id_problem(value: str) -> str | None:
    """Why no database could index `value` as an id (a NUL character, a lone surrogate, more than
    `MAX_ID_LENGTH` characters), or `None`."""
    if "\x00" in value:
        return "holds a NUL character ('\\x00'), which PostgreSQL cannot store"
    problem = text_problem(value)
    if problem:
        return problem
    if len(value) > MAX_ID_LENGTH:
        return f"is {len(value):,} characters long; ids are at most {MAX_ID_LENGTH} (a database indexes them)"
    return None


def shown_id(value: str) -> str:
    """An id as an error shows it: its repr, shortened when it is long."""
    return repr(value) if len(value) <= 60 else f"{value[:40]!r}... ({len(value):,} characters)"


def _new_id() -> str:
    """A random (version 4) UUID as 32 hex digits: what `uuid.uuid4().hex` gives, from the same source
    (`os.urandom`), without building a `UUID` (a third of the cost of making an event)."""
    raw = bytearray(os.urandom(16))
    raw[6] = raw[6] & 0x0F | 0x40  # version 4
    raw[8] = raw[8] & 0x3F | 0x80  # the RFC 4122 variant
    return raw.hex()


# Unknown fields are rejected, and assigning to a field validates the value as construction does. Errors
# leave the input out: its repr() can be huge (a value shared many times), and the message names the key.
_CONFIG = ConfigDict(extra="forbid", validate_assignment=True, hide_input_in_errors=True)


def _checked(value: dict[str, Any]) -> dict[str, Any]:
    check_state(value)  # an InvalidStateError is a ValueError, which pydantic reports as a validation error
    return value


class EventActions(BaseModel):
    """What an event does besides saying something: `state_delta`, the state it writes."""

    model_config = _CONFIG

    state_delta: dict[str, Any] = Field(default_factory=dict)

    _check_delta = field_validator("state_delta")(_checked)


class Event(BaseModel):
    """One entry in a session's history. `partial` events (streamed fragments) are never stored."""

    model_config = _CONFIG

    id: str = Field(default_factory=_new_id)
    invocation_id: str = ""
    author: str
    timestamp: float = Field(default_factory=time.time, allow_inf_nan=False)
    content: str | None = None
    partial: bool = False
    actions: EventActions = Field(default_factory=EventActions)

    @field_validator("id")
    @classmethod
    def _id_or_new(cls, value: str) -> str:
        value = value.strip() or _new_id()
        problem = id_problem(value)
        if problem:  # every service stores the same ids: a database indexes them
            raise ValueError(f"the id {problem}")
        return value

    @field_validator("id", "invocation_id", "author", "content")
    @classmethod
    def _storable(cls, value: str | None) -> str | None:
        problem = None if value is None else text_problem(value)
        if problem:  # every service stores the same text: a database cannot store this
            raise ValueError(f"the text {problem}")
        return value


class Session(BaseModel):
    """One conversation: who and where (`app_name`, `user_id`, `id`), its `state` and `events`.

    `state` is the combined view (session, `user:` and `app:` keys). Change it through events,
    or through a [`CallbackContext`][templating.CallbackContext], never by writing to this dict: the service
    would not see the change.
    """

    model_config = _CONFIG

    id: str
    app_name: str
    user_id: str
    state: dict[str, Any] = Field(default_factory=dict)
    events: list[Event] = Field(default_factory=list)
    last_update_time: float = Field(default=0.0, allow_inf_nan=False)

    # Which stored session this copy was read from ("" for one not returned by a service), the
    # revision of each scope it reflects (session, user:, app:), and the invocation of the last
    # event appended through it.
    _origin: str = PrivateAttr(default="")
    _seen: tuple[int, int, int] = PrivateAttr(default=(0, 0, 0))
    _invocation: str | None = PrivateAttr(default=None)
    # The temp: keys this copy carries, from its creation or appends through it (expired with their invocation).
    _temp: set[str] = PrivateAttr(default_factory=set)

    _check_state = field_validator("state")(_checked)


class GetSessionConfig(BaseModel):
    """Which events `get_session` returns: the `num_recent_events` most recent (0 means none) of
    those at or after `after_timestamp` (inclusive). `None` means no limit."""

    model_config = _CONFIG

    num_recent_events: StrictInt | None = Field(default=None, ge=0)
    after_timestamp: StrictFloat | None = Field(default=None, allow_inf_nan=False)


# --- events made and copied without pydantic's generic work ---------------------------------


def prepare_event(event: Event) -> tuple[Event, dict[str, Any]]:
    """The event to store (a validated private copy without `temp:` keys) and its whole checked delta.

    Both are private: nothing in them is the caller's. Without `temp:` keys the event's delta is the
    checked delta itself (one dict, read by the append, never changed by it). Once stored, the event
    goes to the caller's copy of the session (`refresh_copy`): a service that keeps events keeps a
    copy of its own."""
    delta = check_state(event.actions.state_delta, what="state delta")
    persisted = delta
    for key in delta:
        if key.startswith(TEMP_PREFIX):
            persisted = {k: v for k, v in delta.items() if not k.startswith(TEMP_PREFIX)}
            break
    actions = _actions(persisted)  # checked above: not again
    if _plainly_valid(event):  # every field already what validation would make it: a shallow copy will do
        return _event_with(event, actions), delta
    # Validated again (fields assigned on a model_construct()ed event are not), into a private copy.
    fields = {name: getattr(event, name) for name in Event.model_fields if name != "actions"}
    return Event.model_validate({**fields, "actions": actions}), delta


_set_attribute = object.__setattr__
_new = object.__new__  # what a pydantic model's __new__ is


def _actions(delta: dict[str, Any]) -> EventActions:
    """`EventActions.model_construct(state_delta=delta)` without its generic work (a delta already checked)."""
    actions = _new(EventActions)
    _set_attribute(actions, "__dict__", {"state_delta": delta})
    _set_attribute(actions, "__pydantic_fields_set__", {"state_delta"})
    _set_attribute(actions, "__pydantic_extra__", None)
    _set_attribute(actions, "__pydantic_private__", None)
    return actions


def _event_with(event: Event, actions: EventActions) -> Event:
    """A shallow copy of a valid `Event` with other `actions`: what `model_copy(update=...)` makes, without
    its generic work. Every other field of an `Event` is immutable (str, float, bool or None), so sharing
    them shares nothing that can change."""
    copy = _new(Event)
    fields = event.__dict__.copy()
    fields["actions"] = actions
    fields_set = set(event.__pydantic_fields_set__)
    fields_set.add("actions")
    _set_attribute(copy, "__dict__", fields)
    _set_attribute(copy, "__pydantic_fields_set__", fields_set)
    _set_attribute(copy, "__pydantic_extra__", None)
    _set_attribute(copy, "__pydantic_private__", None)
    return copy


def _plainly_valid(event: Event) -> bool:
    """Whether every field but `actions` of an `Event` is exactly what validating it would give (a
    model_construct()ed event may hold anything): its values are immutable, so they can be shared."""
    fields = event.__dict__
    event_id, invocation, author, content = fields["id"], fields["invocation_id"], fields["author"], fields["content"]
    timestamp = fields["timestamp"]
    return (
        type(event) is Event
        and type(event_id) is str
        and type(invocation) is str
        and type(author) is str
        and (content is None or type(content) is str)
        and type(fields["partial"]) is bool
        and type(timestamp) is float
        and math.isfinite(timestamp)
        and event_id.strip() == event_id != ""
        and len(event_id) <= MAX_ID_LENGTH
        and (event_id.isascii() or text_problem(event_id) is None)
        and "\x00" not in event_id
        and (invocation.isascii() or text_problem(invocation) is None)
        and (author.isascii() or text_problem(author) is None)
        and (content is None or content.isascii() or text_problem(content) is None)
    )


def event_from(fields: dict[str, Any], fields_set: Iterable[str], delta: dict[str, Any]) -> Event:
    """An `Event` from the fields of a valid one but `actions` (immutable values, in a dict that
    becomes the event's own), the names of the fields set when it was made, and a checked delta of
    its own (taken as it is)."""
    fields["actions"] = _actions(delta)
    event = _new(Event)
    _set_attribute(event, "__dict__", fields)
    _set_attribute(event, "__pydantic_fields_set__", set(fields_set))
    _set_attribute(event, "__pydantic_extra__", None)
    _set_attribute(event, "__pydantic_private__", None)
    return event


def session_from(
    *,
    session_id: str,
    app_name: str,
    user_id: str,
    state: dict[str, Any],
    events: list[Event],
    last_update_time: float,
    origin: str = "",
    seen: tuple[int, int, int] = (0, 0, 0),
) -> Session:
    """A `Session` of valid fields (clean ids, checked state that becomes its own, stored events, a finite
    time) and its private attributes: what `model_construct` makes, without its generic work (it copies
    every private default), which costs more than the rest of making a small session."""
    session = _new(Session)
    fields = {
        "id": session_id,
        "app_name": app_name,
        "user_id": user_id,
        "state": state,
        "events": events,
        "last_update_time": last_update_time,
    }
    _set_attribute(session, "__dict__", fields)
    _set_attribute(session, "__pydantic_fields_set__", set(fields))
    _set_attribute(session, "__pydantic_extra__", None)
    private: dict[str, Any] = {"_origin": origin, "_seen": seen, "_invocation": None, "_temp": set()}
    _set_attribute(session, "__pydantic_private__", private)
    return session


def copy_stored(event: Event) -> Event:
    """A copy of a stored event (one `prepare_event` made) that shares nothing mutable with it: its
    fields are immutable but its delta, which is copied. Cheaper than a deep copy of the model."""
    return _event_with(event, _actions(copy_checked(event.actions.state_delta)))
