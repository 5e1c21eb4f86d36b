"""A project's apps: one per root google-adk runs (an `App(root_agent=...)`, a module's `root_agent`, a Runner's
agent or app, a `root_agent.yaml`), each with every agent it reaches, in run order, and google-adk's name for it."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..pysource import AgentCall, RunnerCall, Scan
from .facts import Agent, App, Link

__all__ = ["Walked", "find_apps"]

_MAX_DEPTH = 64  # agents nested deeper than this are not followed (input cannot recurse without bound)


@dataclass(frozen=True, slots=True, eq=False)
class _Naming:
    """What names an app: its App call (`app`), that call's `name`, its first runner's app_name (`runner_name`) and
    its `runners`; `same` tells whether these name it the same way (the calls by identity, the names by value)."""

    app: object
    name: object
    runner_name: object
    runners: tuple[RunnerCall, ...]

    def same(self, app: object, name: object, runner_name: object, runners: Sequence[RunnerCall]) -> bool:
        return (
            self.app is app
            and self.name == name
            and self.runner_name == runner_name
            and len(self.runners) == len(runners)
            and all(a is b for a, b in zip(self.runners, runners, strict=True))
        )


@dataclass(frozen=True, slots=True)
class Walked:
    """An app as `find_apps` made it, with what it was made from: what names it, and each agent id its walk looked
    at (the agents it reached, and the children it met but did not follow: not an agent, or too deep)."""

    app: App
    naming: _Naming
    looked: frozenset[str]


def find_apps(
    scan: Scan,
    agents: Mapping[str, Agent],
    root: str,
    *,
    before: tuple[Mapping[str, Agent], Mapping[str, Walked]] | None = None,
    walked: dict[str, Walked] | None = None,
) -> list[App]:
    """The apps: one per root (an `App(root_agent=...)`, a module's `root_agent`, a Runner's agent or app, a
    `root_agent.yaml`), each with every agent it reaches.

    `before`: the agents of an earlier build and its apps as walked (by root id): an app named by the very same
    facts whose walk looked only at agents that are the very same objects here (present or absent alike) is taken
    as it was (its walk, its name, what it does not know depend on nothing else). `walked` is filled with each app
    as walked, for the next build."""
    calls = {a.id: a for a in scan.agents}
    found: dict[str, dict[str, object]] = {}  # root agent id -> what names it

    def add(agent_id: str, **named: object) -> None:
        if agent_id not in agents:
            return
        entry = found.setdefault(agent_id, {})
        for key, value in named.items():
            if value is not None:
                entry.setdefault(key, value)

    for call in scan.agents:
        if call.kind == "app":
            for ref in call.field("root_agent") or ():
                if ref.kind == "agent":
                    add(ref.target, app=call, name=call.name)
        elif call.path.endswith(("root_agent.yaml", "root_agent.yml")) and call.id.endswith("@0"):
            add(call.id)
    for binding in scan.roots:
        if binding.ref.kind == "agent":
            add(binding.ref.target)
    runners: dict[str, list[RunnerCall]] = {}
    for runner in scan.runners:
        target = None
        if runner.app is not None and runner.app.kind == "agent" and runner.app.target in calls:
            app = calls[runner.app.target]
            roots = [r.target for r in app.field("root_agent") or () if r.kind == "agent"]
            target = roots[0] if roots else None
        elif runner.agent is not None and runner.agent.kind == "agent":
            target = runner.agent.target
        if target is not None:
            add(target, runner_name=runner.app_name)
            runners.setdefault(target, []).append(runner)
    apps: list[App] = []
    changed: set[str] = set()
    if before is not None:  # the agent ids whose agent is not the very same object (made again, added, gone)
        was = before[0]
        changed = {key for key, agent in agents.items() if was.get(key) is not agent}
        changed.update(key for key in was if key not in agents)
    for root_id, named in found.items():
        app_call, app_name, runner_name = named.get("app"), named.get("name"), named.get("runner_name")
        its_runners = runners.get(root_id, ())
        earlier = before[1].get(root_id) if before is not None else None
        if (
            earlier is not None
            and changed.isdisjoint(earlier.looked)
            and earlier.naming.same(app_call, app_name, runner_name, its_runners)
        ):
            apps.append(earlier.app)
            if walked is not None:
                walked[root_id] = earlier
            continue
        naming = _Naming(app_call, app_name, runner_name, tuple(its_runners))
        order: list[str] = []
        parents: dict[str, tuple[str, Link]] = {}
        stack: list[tuple[str, int]] = [(root_id, 0)]
        seen: set[str] = set()
        while stack:
            here, depth = stack.pop()
            if here in seen or here not in agents or depth > _MAX_DEPTH:
                continue
            seen.add(here)
            order.append(here)
            agent = agents[here]
            for child, link in reversed(list(zip(agent.children, agent.links, strict=True))):
                if child not in seen:
                    parents.setdefault(child, (here, link))
                    stack.append((child, depth + 1))
        looked = {*seen, *parents}
        parents = {child: parent for child, parent in parents.items() if child in seen}
        top = agents[root_id]
        folder = os.path.dirname(top.call.file or top.path)
        name = app_name or runner_name
        if not isinstance(name, str):
            base = os.path.basename(top.path)
            name = (
                os.path.basename(folder)
                if base in ("agent.py", "__init__.py", "root_agent.yaml", "root_agent.yml")
                else top.name or os.path.splitext(base)[0]
            )
        unknown = tuple(dict.fromkeys(f"{agents[a].shown}: {why}" for a in order for why in agents[a].unknown))
        made = App(
            root_id,
            name,
            root_id,
            folder,
            tuple(order),
            parents,
            app_call if isinstance(app_call, AgentCall) else None,
            naming.runners,
            unknown,
            top.name,
        )
        apps.append(made)
        if walked is not None:
            walked[root_id] = Walked(made, naming, frozenset(looked))
    apps.sort(key=lambda a: (a.folder, a.name, a.id))
    return apps
