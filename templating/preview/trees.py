"""The google-adk agent objects a static preview made last for an app, kept for the next preview of it.

After an edit the agent model keeps each agent whose facts did not change as the very same object
(`templating.agent_model.build(before=)`). The object made for such an agent is taken again when everything its
making read is still what it was: the agent's facts (that object), the agents of its `children` (the very same
objects), the text of the code it quoted, the tool functions' names, google-adk's own tools it named, and, taken
first, the very objects made for the agents it holds (sub-agents, an `AgentTool`'s agent). So a parent whose
sub-agent changed is made again, and an edit of the root's prompt makes the root again only.

google-adk links each sub-agent to its parent (`parent_agent`, set once, when the parent is made): a kept
sub-agent under a parent made again is unlinked first, and once the tree is made every link is set to what the
tree's own `sub_agents` say, as a fresh build sets them. A tree where an agent would have two parents is made
again from nothing (google-adk's own error then says so). A Workflow holds copies of its nodes: an app with one
is always made from nothing.

The kept objects are taken by one preview at a time (`checkout`, then `keep` once its walk is done): another
preview of the same app made meanwhile makes its own, so no object is changed while a walk reads it. The tokens
of the objects (`reuse.Tokens`) are kept with them: a request's key costs only what changed.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from .reuse import Tokens

__all__ = ["Kept", "Trees", "checkout", "forget", "keep"]

KEPT_APPS = 8  # the apps whose objects are kept (an editor's workspace previews a few)


@dataclass(slots=True, eq=False)
class Kept:
    """How the object for one agent was made: the agent model's `agent`, the agents of its `children` (each
    the object the model held), the agents it asked for in order with the object each gave (`reached`), the
    code it quoted (`quoted`: path, span, text), the names of the tool functions it looked up (`functions`:
    target, name or None), google-adk's tools it named (`external`: target, the object or None), and what its
    making said (`notes`, `inexact`, `said`: each instruction as data)."""

    agent: Any
    children: tuple[Any, ...]
    made: Any = None
    reached: list[tuple[Any, Any]] = field(default_factory=list)
    quoted: list[tuple[str, Any, str]] = field(default_factory=list)
    functions: list[tuple[str, str | None]] = field(default_factory=list)
    external: list[tuple[str, Any]] = field(default_factory=list)
    notes: tuple[str, ...] = ()
    inexact: tuple[str, ...] = ()
    said: dict[str, Hashable] = field(default_factory=dict)


@dataclass(slots=True, eq=False)
class Trees:
    """What one build of an app's objects left for the next: each agent's `Kept` by the agent's id, and the
    tokens of the objects (None: none yet)."""

    agents: dict[str, Kept] = field(default_factory=dict)
    tokens: Tokens | None = None


_LOCK = threading.Lock()
_KEPT: OrderedDict[Hashable, Trees] = OrderedDict()


def checkout(app: Hashable) -> Trees:
    """What the last preview of `app` left, taken (the next preview of it meanwhile starts from nothing)."""
    with _LOCK:
        return _KEPT.pop(app, None) or Trees()


def keep(app: Hashable, trees: Trees) -> None:
    """Keep `trees` for the next preview of `app` (its walk done)."""
    if not trees.agents:
        return
    with _LOCK:
        _KEPT[app] = trees
        _KEPT.move_to_end(app)
        while len(_KEPT) > KEPT_APPS:
            _KEPT.popitem(last=False)


def forget() -> None:
    """Forget every kept object."""
    with _LOCK:
        _KEPT.clear()
