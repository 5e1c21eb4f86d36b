"""What changed between two agent models of one project (the one before an edit and the one after): which apps
are the same in every fact their run order is worked out from, and which state keys a changed part writes.

An edit in a large workspace touches one app or a few; what the lint rules work out of the others (their run-order
findings) can be kept when [`ModelChanges`][templating.agent_model.changes.ModelChanges] says those apps are the
same. Facts are compared by value (a scan's agent calls by identity: an edit rescans a file, and its calls are new),
so a kept answer is the one a fresh model gives."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from .facts import Agent, App, StateWrite

if TYPE_CHECKING:
    from .model import AgentModel

__all__ = ["ModelChanges"]

_agent_facts: Callable[[Agent], tuple[Any, ...]] = attrgetter(*(f.name for f in fields(Agent)))
_app_facts: Callable[[App], tuple[Any, ...]] = attrgetter(*(f.name for f in fields(App)))


def _by_key(writes: list[StateWrite]) -> dict[str | None, tuple[StateWrite, ...]]:
    out: dict[str | None, list[StateWrite]] = {}
    for write in writes:
        out.setdefault(write.key, []).append(write)
    return {key: tuple(found) for key, found in out.items()}


@dataclass(frozen=True, slots=True)
class ModelChanges:
    """How a model (`new`) differs from the one before it (`old`): `same` holds the id of each app whose facts are
    equal in both (the app itself, each agent it reaches, its initial state); `keys` the keys whose first writer in
    an app not in `same` differs (as a finding of another app names it: the app's name, the agent, what writes
    it; or the app writes it in one model only), and those of the writes of the project that no agent makes
    (`elsewhere`) that differ; `everything` says that nothing can be kept (no model before, or a write that no
    agent makes, whose key is known only at run time, differs)."""

    same: frozenset[str]
    keys: frozenset[str]
    everything: bool = False

    @classmethod
    def between(cls, old: AgentModel | None, new: AgentModel) -> ModelChanges:
        if old is None:
            return cls(frozenset(), frozenset(), everything=True)
        olds = {app.id: app for app in old.apps}
        same: set[str] = set()
        keys: set[str] = set()

        now: dict[str, list[tuple[str, ...]]] = {}
        was: dict[str, list[tuple[str, ...]]] = {}
        for app in new.apps:
            before = olds.get(app.id)
            if before is not None and _same_app(old, before, new, app):
                same.add(app.id)
                del olds[app.id]
                continue
            _first_writers(new, app, now)
        for before in olds.values():  # changed (an app's id is its root's place: an edit above it moves it), or gone
            _first_writers(old, before, was)
        keys.update(key for key in {*now, *was} if now.get(key) != was.get(key))
        # apps are in order by folder and name, then id: a changed app sharing both with another may change places
        for model, apps in ((new, [a for a in new.apps if a.id not in same]), (old, olds.values())):
            places = Counter((a.folder, a.name) for a in model.apps)
            for app in apps:
                if places[app.folder, app.name] > 1:
                    keys.update(w.key for a in app.agents for w in model.agents[a].writes if w.key is not None)
        before_else, now_else = _by_key(old.graph.elsewhere), _by_key(new.graph.elsewhere)
        moved = {key for key in {*before_else, *now_else} if before_else.get(key) != now_else.get(key)}
        if None in moved:
            return cls(frozenset(), frozenset(), everything=True)
        keys.update(key for key in moved if key is not None)
        return cls(frozenset(same), frozenset(keys))


def _first_writers(model: AgentModel, app: App, into: dict[str, list[tuple[str, ...]]]) -> None:
    """Each key `app` writes by name, with how another app's finding names its first writer (the app's folder and
    name, the agent, what writes it), added to `into`."""
    for key in dict.fromkeys(w.key for a in app.agents for w in model.agents[a].writes if w.key is not None):
        first = model.writers(key, app)[0]
        into.setdefault(key, []).append((app.folder, app.name, model.agents[first.agent].shown, first.how))


def _same_app(old: AgentModel, before: App, new: AgentModel, app: App) -> bool:
    if before is not app and _app_facts(before) != _app_facts(app):  # (an app the edit left is taken whole)
        return False
    for member in app.agents:
        was, now = old.agents[member], new.agents[member]
        if was is not now and _agent_facts(was) != _agent_facts(now):  # (most are taken from the model before)
            return False
    return old._initial.get(before.id) == new._initial.get(app.id)
