"""A project's apps: one per root google-adk runs (an `App(root_agent=...)`, a module's `root_agent`, a Runner's
agent or app, a `root_agent.yaml`), each with every agent it reaches, in run order, and google-adk's name for it."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..pysource import AgentCall, RunnerCall, Scan
from .facts import Agent, App, Link

__all__ = ["find_apps"]

_MAX_DEPTH = 64  # agents nested deeper than this are not followed (input cannot recurse without bound)


def find_apps(scan: Scan, agents: Mapping[str, Agent], root: str) -> list[App]:
    """The apps: one per root (an `App(root_agent=...)`, a module's `root_agent`, a Runner's agent or app, a
    `root_agent.yaml`), each with every agent it reaches."""
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
    for root_id, named in found.items():
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
        parents = {child: parent for child, parent in parents.items() if child in seen}
        top = agents[root_id]
        folder = os.path.dirname(top.call.file or top.path)
        app_call = named.get("app")
        name = named.get("name") or named.get("runner_name")
        if not isinstance(name, str):
            base = os.path.basename(top.path)
            name = (
                os.path.basename(folder)
                if base in ("agent.py", "__init__.py", "root_agent.yaml", "root_agent.yml")
                else top.name or os.path.splitext(base)[0]
            )
        unknown = tuple(dict.fromkeys(f"{agents[a].shown}: {why}" for a in order for why in agents[a].unknown))
        apps.append(
            App(
                root_id,
                name,
                root_id,
                folder,
                tuple(order),
                parents,
                app_call if isinstance(app_call, AgentCall) else None,
                tuple(runners.get(root_id, ())),
                unknown,
                top.name,
            )
        )
    apps.sort(key=lambda a: (a.folder, a.name, a.id))
    return apps
