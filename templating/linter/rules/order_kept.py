"""The run-order findings of each instruction (`rules.order.order_findings`), kept from one agent model to the next.

An edit builds the agent model again; in a workspace of many apps it changes one or a few. An instruction's order
findings are worked out from its readers (each agent reading it, with the keys it reads and its app), from each
reader's app (its agents, their writes, its initial state), from the writes of the project no agent makes, and
(for a key no app of its own writes) from the other apps writing that key. So they are kept when the instruction
is the same object, its readers are the same, each reader's app is the same in both models
([`ModelChanges`][templating.agent_model.changes.ModelChanges]), and for each key it reads that its reader's app
neither writes nor declares given (another app's writer is named only for such a key), no changed app's first
writer of it and no write of it that no agent makes changed; otherwise worked out again. A reader in no app (its
answer counts every write of the project) is never kept."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from ...agent_model.changes import ModelChanges
from .order import OrderIndex, _app_keys, order_findings

if TYPE_CHECKING:
    from ...agent_model import AgentModel
    from ...pysource import Instruction, InstructionKey
    from ..registry import Diagnostic

__all__ = ["KeptOrder"]

# an instruction's inputs: each reader's id, the read, and the id of the reader's app (None: in no app)
_Inputs = tuple[tuple[str, Any, str | None], ...]


class KeptOrder:
    """The order findings of the instructions of the last model, by instruction (see the module's description)."""

    def __init__(self) -> None:
        self._model: AgentModel | None = None
        self._index: OrderIndex | None = None
        self._changes = ModelChanges(frozenset(), frozenset(), everything=True)
        self._kept: dict[int, tuple[Instruction, _Inputs, list[Diagnostic]]] = {}
        self._now: dict[int, tuple[Instruction, _Inputs, list[Diagnostic]]] = {}
        # the instructions whose findings were worked out (not kept) for the current model
        self.worked_out: set[InstructionKey] = set()

    def start(self, model: AgentModel, index: OrderIndex) -> None:
        """Begin a pass over the instructions of `model` (`index` its order index): those not asked for in this
        pass are dropped at the next one. A pass for the same index keeps every answer it has."""
        if index is not self._index:
            self._changes = ModelChanges.between(self._model, model)
            self._model, self._index = model, index
            self.worked_out = set()
        self._kept, self._now = self._now, {}

    def findings(
        self, item: Instruction, *, codes: Collection[str], given: Collection[str], quiet: Collection[Any]
    ) -> list[Diagnostic]:
        """The order findings of `item` (one of the index's `attached`) with the current model, those at a place in
        `quiet` left out (where the instruction's own lint says more)."""
        model, index = self._model, self._index
        assert model is not None
        assert index is not None
        inputs = _inputs(model, index, item)
        known = self._kept.get(id(item))
        if known is None or known[0] is not item or not self._keeps(known[1], inputs):
            found = [
                d
                for d in order_findings(model, index, item, codes=codes, given=given)
                if (d.path, d.span and d.span.start) not in quiet
            ]
            known = (item, inputs, found)
            self.worked_out.add(item.key)
        self._now[id(item)] = known
        return known[2]

    def _keeps(self, before: _Inputs, now: _Inputs) -> bool:
        if before != now:
            return False
        changes = self._changes
        if changes.everything:
            return False
        for _, read, app in now:
            if app is None or app not in changes.same:
                return False
            if read.key in changes.keys and read.key not in self._app_keys(app):
                return False  # (a key its app writes, or declares given, never names another app's writer)
        return True

    def _app_keys(self, app: str) -> set[str]:
        assert self._model is not None
        assert self._index is not None
        keys = self._index.app_keys.get(app)
        if keys is None:
            keys = self._index.app_keys[app] = _app_keys(self._model, app)
        return keys


def _inputs(model: AgentModel, index: OrderIndex, item: Instruction) -> _Inputs:
    out = []
    for agent, read in index.readers.get(item.key, ()):
        app = model.app_of(agent)
        out.append((agent.id, read, app.id if app is not None else None))
    return tuple(out)
