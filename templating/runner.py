"""One turn of an agent, end to end: session state -> instruction -> model -> events.

A deliberately small runner, so the whole pipeline can be exercised (and tested) without an LLM
library: the model is any sync or async callable `model(instruction, message) -> str`.
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeAlias

from .agents import Agent, turn_keys
from .sessions.base import SessionNotFoundError, SessionService
from .sessions.contexts import ReadonlyContext
from .sessions.models import Event, EventActions, GetSessionConfig
from .sessions.values import check_state

__all__ = ["Model", "Runner"]

Model: TypeAlias = Callable[[str, str], str | Awaitable[str]]


_NO_EVENTS = GetSessionConfig(num_recent_events=0)


class Runner:
    """Runs one turn of `agent` against sessions of `app_name` kept by `session_service` (any
    [`SessionService`][templating.SessionService]: in memory, or in a database).

    A turn renders the agent's instruction from the session's state (plus the turn's own
    `state_delta`), calls `model(instruction, message)`, and appends two events: the user's
    message (carrying `state_delta`) and the model's reply (saving the reply under the agent's
    `output_key` through its state delta). Nothing is appended unless the instruction rendered
    and the model answered with text, so a failed turn leaves the session as it was.
    """

    def __init__(self, *, agent: Agent, app_name: str, session_service: SessionService, model: Model) -> None:
        if not isinstance(agent, Agent):
            raise TypeError(f"agent must be a templating.Agent, not {type(agent).__name__}")
        if not isinstance(app_name, str) or not app_name.strip():
            raise ValueError(f"app_name must be a non-blank str, not {app_name!r}")
        if not isinstance(session_service, SessionService):
            raise TypeError(
                "session_service must be a SessionService (InMemorySessionService, DatabaseSessionService), "
                f"not {type(session_service).__name__}"
            )
        if not callable(model):
            raise TypeError(f"model must be a callable model(instruction, message) -> str, not {type(model).__name__}")
        self.agent = agent
        self.app_name = app_name.strip()
        self.session_service = session_service
        self.model = model

    async def run(
        self,
        *,
        user_id: str,
        session_id: str,
        message: str,
        state_delta: Mapping[str, Any] | None = None,
    ) -> list[Event]:
        """Run one turn and return its events as stored: the user's message, then the model's reply.

        `state_delta` is written with the user's message, like ADK's `run_async(state_delta=...)`;
        its `temp:` keys are visible to this turn's instruction and gone in the next turn.
        Raises [`InvalidStateError`][templating.InvalidStateError] (a `ValueError` naming the key) when `state_delta`
        has a key that is not a str or a value that is not plain JSON, `TypeError` when it is
        not a mapping, [`SessionNotFoundError`][templating.SessionNotFoundError] for an unknown session,
        [`MissingKeyError`][templating.MissingKeyError] when the instruction needs a key that state lacks, and
        `TypeError` when the model returns anything but `str`, and [`StaleSessionError`][templating.StaleSessionError]
        when another writer changed a key this turn writes while the model was answering; in every
        such case nothing is appended (the two events are appended atomically).
        """
        if not isinstance(message, str):
            raise TypeError(f"message must be a str, not {type(message).__name__}")
        delta = check_state(state_delta if state_delta is not None else {}, what="state_delta")
        # A turn reads the state, never the history: no copy of the stored events is made. When every key the
        # instruction reads is known, a service reads only those (a database reads their rows, whatever the
        # size of the state); a service may hand out its stored state itself (read-only), so a turn copies
        # nothing of the state.
        keys = turn_keys(self.agent)
        session, settled = await self.session_service._turn_session(
            app_name=self.app_name, user_id=user_id, session_id=session_id, keys=keys
        )
        if session is None:
            raise SessionNotFoundError(app_name=self.app_name, user_id=user_id, session_id=session_id)
        invocation_id = f"inv-{uuid.uuid4().hex}"
        user_event = Event(
            invocation_id=invocation_id,
            author="user",
            content=message,
            actions=EventActions(state_delta=delta),
        )
        # The instruction sees the state as it will be once the user's event is appended; the
        # events themselves are appended only after the model has answered. ``session`` is this
        # turn's own (appending writes into its state), so the delta is written into it: a render
        # costs the keys it reads, never a copy of the whole state.
        session.state.update(delta)
        ctx = ReadonlyContext(session, invocation_id=invocation_id, agent_name=self.agent.name)
        instruction: str | None = None
        try:
            instruction = await self.agent.canonical_instruction(ctx)
        except Exception:
            if keys is None:
                raise
            # Rendered from the keys it reads: render again from the whole state below, so that the error (a
            # missing key's suggestion looks at every key) is the one a whole read gives.
        if instruction is None or not settled():  # a write landed while rendering from the stored state
            session = await self.session_service.get_session(
                app_name=self.app_name, user_id=user_id, session_id=session_id, config=_NO_EVENTS
            )
            if session is None:
                raise SessionNotFoundError(app_name=self.app_name, user_id=user_id, session_id=session_id)
            session.state.update(delta)
            ctx = ReadonlyContext(session, invocation_id=invocation_id, agent_name=self.agent.name)
            instruction = await self.agent.canonical_instruction(ctx)
        elif type(session.state) is not dict:  # a view of the stored state: the turn keeps only its own writes
            session.state = dict(delta)  # (the append brings them up to date; nothing reads the rest)
        reply = self.model(instruction, message)
        if inspect.isawaitable(reply):
            reply = await reply
        if not isinstance(reply, str):
            raise TypeError(f"the model must return str, not {type(reply).__name__}")
        output = {self.agent.output_key: reply} if self.agent.output_key else {}
        model_event = Event(
            invocation_id=invocation_id,
            author=self.agent.name,
            content=reply,
            actions=EventActions(state_delta=output),
        )
        # Both events or neither: a write landing between them must not leave half a turn stored.
        return await self.session_service.append_events(session, [user_event, model_event])
