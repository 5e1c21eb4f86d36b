"""The agents of a project as google-adk builds them, and its apps, in one [`Graph`][templating.agent_model.graph.Graph]
(`build_graph`): the agents `builder` makes of every agent call of the scan, the apps `apps` finds, and the
project's state writes that no agent makes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..pysource import AgentClass, FunctionFacts, Scan
from .apps import Walked, find_apps
from .builder import Builder, Built, Lookups
from .facts import Agent, App, StateWrite

__all__ = ["Graph", "build_graph"]


@dataclass(eq=False)
class Graph:
    """Every agent of a scan and the apps: what `build_graph` makes."""

    agents: dict[str, Agent]
    apps: list[App]
    classes: Mapping[str, AgentClass]
    functions: Mapping[str, FunctionFacts]
    # the writes of the project's code that no agent of any app makes (module level, or functions no agent names)
    elsewhere: list[StateWrite] = field(default_factory=list)
    # the agents as the builder made them (before an App's plugins add their writes to its root), and how each was
    # made: what the next build takes when its facts are the same
    built: Mapping[str, Agent] = field(default_factory=dict)
    made: Mapping[str, Built] = field(default_factory=dict)
    # the apps as walked (by root id): what the next build takes when they look at the very same agents
    walked: Mapping[str, Walked] = field(default_factory=dict)
    # who looked up what in the build (the next build's agents not to take, without going through every one);
    # None only in a graph not made by `build_graph`, from which the next build takes nothing
    lookups: Lookups | None = None


_SESSION_WRITES = frozenset({"create_session(state=...)", "Session(state=...)"})


def build_graph(scan: Scan, root: str, *, before: Graph | None = None) -> Graph:
    """Every agent of `scan` (built from the project's code and Agent Config files) and the apps its roots make.
    `before`: the graph of an earlier scan of the project, whose agents made from the very same facts are taken."""
    lookups = before.lookups if before is not None else None  # (None: a graph not made here, nothing taken)
    builder = Builder(
        scan, (before.built, before.made, lookups) if before is not None and lookups is not None else None
    )
    methods = {method for cls in scan.agent_classes.values() for method in cls.methods}
    templates = {call.id for call in scan.agents if call.in_function is not None and call.in_function in methods}
    for call in scan.agents:
        if call.id not in templates:
            builder.agent(call.id)
    agents = builder.agents
    walked: dict[str, Walked] = {}
    apps = find_apps(
        scan, agents, root, before=(before.built, before.walked) if before is not None else None, walked=walked
    )
    made = {(w.path, w.span.start if w.span else -1, w.key) for a in agents.values() for w in a.writes}
    elsewhere = [
        StateWrite(w.key, "", "maybe", w.how, w.path, w.span, False)
        for w in scan.writes
        if w.how not in _SESSION_WRITES and (w.path, w.span.start, w.key) not in made
    ]
    return Graph(
        dict(agents),
        apps,
        scan.agent_classes,
        scan.functions,
        elsewhere,
        agents,
        builder.made,
        walked,
        builder.lookups(),
    )
