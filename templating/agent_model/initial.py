"""The initial state of an app, declared: the keys the caller gives a session before the first turn. Three sources,
each tied to the app it belongs to:

- `initial-state` in `[tool.templating]`: a list of keys, a JSON file (an object whose keys are the state's, or
  `adk run --replay`'s `{"state": {...}, "queries": [...]}`), or a table keyed by app (its folder relative to the
  root, its name, or its root agent's name) whose values are either;
- google-adk eval sets beside the app (`*.evalset.json`, `*.test.json`): each case's `session_input.state`
  (`sessionInput` too, as google-adk accepts camelCase), or an old list-format file's `initial_session.state`,
  for the cases whose `app_name` is the app's (or that name none);
- `create_session(state=...)` (or `Session(state=...)`) in a module that runs the app or names its root.

An app's initial state is declared when any source is there for it; its keys are the union of theirs (`temp:`
keys aside: google-adk drops them from a new session). A source whose keys are known only at run time leaves it
open. A bad setting or file is one `LintConfigError` naming it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..inputs import InputError, read_text
from ..linter.config import LintConfig, LintConfigError
from ..linter.project import Walker
from ..nodes import Span
from ..pysource import Scan
from .facts import App

__all__ = ["InitialSource", "InitialState", "initial_states"]

_EVAL_SUFFIXES = (".evalset.json", ".test.json")
_MAX_EVAL_BYTES = 5_000_000  # an eval set larger than this is not read (its keys are then not declared by it)


@dataclass(frozen=True, slots=True)
class InitialSource:
    """One source of an app's initial state: `kind` (`config`, `evalset`, `session`), the file (`path`), the keys
    it gives (None: known only at run time), where (`span`, for a session started in Python code), and `detail`
    (`eval case 'refund'`, `initial-state`)."""

    kind: Literal["config", "evalset", "session"]
    path: str
    keys: tuple[str, ...] | None
    span: Span | None = None
    detail: str = ""

    @property
    def text(self) -> str:
        """How a message names it: `the initial state of [tool.templating] initial-state`, `the eval set x`..."""
        if self.kind == "config":
            return f"[tool.templating] {self.detail or 'initial-state'} ({self.path})"
        if self.kind == "evalset":
            return f"the eval set {self.path} ({self.detail})" if self.detail else f"the eval set {self.path}"
        line = f":{self.span.line}" if self.span else ""
        return f"create_session(state=...) at {self.path}{line}"


@dataclass(frozen=True, slots=True)
class InitialState:
    """The initial state of one app: whether it is `declared` (some source is there), the keys given (`keys`),
    whether some source's keys are known only at run time (`open`), and the `sources`."""

    app: str
    declared: bool
    keys: frozenset[str]
    open: bool
    sources: tuple[InitialSource, ...]

    def source_of(self, key: str) -> InitialSource | None:
        """The first source giving `key`."""
        return next((s for s in self.sources if s.keys is not None and key in s.keys), None)


_NO_KEYS: frozenset[str] = frozenset()  # the keys of an app given none (most apps), one set for all


def initial_states(
    scan: Scan, config: LintConfig, root: Path, apps: Sequence[App], walker: Walker | None = None
) -> dict[str, InitialState]:
    """The initial state of each app (by id), from the three sources (see the module's description)."""
    sources: dict[str, list[InitialSource]] = {app.id: [] for app in apps}
    for app_id, found in _from_config(config, root, apps).items():
        sources[app_id] += found
    walker = walker if walker is not None else Walker(config, root)
    # looked for app by app only when the project has an eval set at all (most have none)
    evals = walker.any_file(root, _EVAL_SUFFIXES)
    folders = {app.id: os.path.normpath(app.folder) for app in apps} if evals else {}
    real_root = os.path.realpath(root)
    sessions: dict[str, list[int]] = {}  # agent or App call id -> the sessions naming it (their places in the scan)
    for n, session in enumerate(scan.sessions):
        for agent in set(session.agents):
            sessions.setdefault(agent, []).append(n)
    for app in apps:
        if evals:
            sources[app.id] += _from_eval_sets(app, folders, real_root, walker)
        sources[app.id] += _from_sessions(app, scan, sessions)
    out: dict[str, InitialState] = {}
    for app in apps:
        given = sources[app.id]
        if not given:  # (most apps of a large workspace)
            out[app.id] = InitialState(app.id, False, _NO_KEYS, False, ())
            continue
        keys = frozenset(k for s in given if s.keys is not None for k in s.keys if not k.startswith("temp:"))
        out[app.id] = InitialState(app.id, True, keys, any(s.keys is None for s in given), tuple(given))
    return out


# -- [tool.templating] initial-state


def _from_config(config: LintConfig, root: Path, apps: Sequence[App]) -> dict[str, list[InitialSource]]:
    setting = config.initial_state
    if setting is None:
        return {}
    where = str(config.path) if config.path is not None else "[tool.templating]"
    if isinstance(setting, Mapping):
        out: dict[str, list[InitialSource]] = {}
        for name, given in setting.items():
            matched = [app for app in apps if _names_app(name, app, root)]
            if not matched:
                known = ", ".join(sorted({_app_key(app, root) for app in apps})) or "none found"
                raise LintConfigError(
                    f"{where}: 'initial-state' names the app {name!r}, which is not among the project's apps"
                    f" (their folders: {known})"
                )
            source = _config_source(given, config, root, where, f"initial-state.{name}")
            for app in matched:
                out.setdefault(app.id, []).append(source)
        return out
    source = _config_source(setting, config, root, where, "initial-state")
    return {app.id: [source] for app in apps}


def _app_key(app: App, root: Path) -> str:
    try:
        return Path(app.folder).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return app.folder


def _names_app(name: str, app: App, root: Path) -> bool:
    cleaned = name.strip().strip("/").removeprefix("./")
    return cleaned in (_app_key(app, root), app.name, app.root_name) or cleaned == os.path.basename(app.folder)


def _config_source(given: Any, config: LintConfig, root: Path, where: str, detail: str) -> InitialSource:
    shown = str(config.path) if config.path is not None else "pyproject.toml"
    if isinstance(given, tuple):
        return InitialSource("config", shown, given, detail=detail)
    path = Path(given)
    if not path.is_absolute():
        path = (config.root if config.path is not None else root) / path
    try:
        data = json.loads(read_text(str(path), what="initial state", stdin=False))
    except InputError as exc:
        raise LintConfigError(f"{where}: '{detail}': {exc.message}") from None
    except (json.JSONDecodeError, RecursionError) as exc:
        raise LintConfigError(f"{where}: '{detail}': {path} is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise LintConfigError(f"{where}: '{detail}': {path} must hold a JSON object (the state's keys)")
    state = data
    if isinstance(data.get("state"), dict) and set(data) <= {"state", "queries"}:
        state = data["state"]  # adk run --replay's file: {"state": {...}, "queries": [...]}
    return InitialSource("config", str(path), tuple(str(k) for k in state), detail=detail)


# -- eval sets


def _from_eval_sets(app: App, folders: Mapping[str, str], real_root: str, walker: Walker) -> list[InitialSource]:
    """The eval sets of `app`: under its folder, or under the folder above it when no other app is there.
    `folders`: each app's folder by id (normalised); `real_root`: the root, links resolved."""
    folder = folders[app.id]
    places = [Path(folder)]
    parent = os.path.dirname(folder)
    if (
        parent != folder
        and not any(
            o == parent or (_inside(o, parent) and not _inside(o, folder))
            for other, o in folders.items()
            if other != app.id and o != folder
        )
        and _inside(os.path.realpath(parent), real_root)
    ):
        places = [Path(parent)]
    out: list[InitialSource] = []
    seen: set[str] = set()
    for place in places:
        if not _inside(os.path.realpath(place), real_root) or not place.is_dir():
            continue
        for entry in walker.entries(place):
            if entry.skip is not None or not entry.path.endswith(_EVAL_SUFFIXES) or entry.real in seen:
                continue
            seen.add(entry.real)
            out += _eval_set(entry.path, app, walker)
    return out


def _inside(path: str, folder: str) -> bool:
    """Whether the normalised path `path` is `folder` or under it."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _eval_set(path: str, app: App, walker: Walker) -> list[InitialSource]:
    try:
        data = json.loads(read_text(path, what="eval set", stdin=False, limit=_MAX_EVAL_BYTES))
    except (InputError, json.JSONDecodeError, RecursionError, UnicodeDecodeError):
        return []  # not an eval set google-adk could read: it gives nothing
    names = {app.name, os.path.basename(app.folder)}
    out: list[InitialSource] = []
    cases: list[tuple[str, Any]] = []
    if isinstance(data, dict):
        for case in _first(data, "eval_cases", "evalCases") or []:
            if isinstance(case, dict):
                label = _first(case, "eval_id", "evalId") or ""
                cases.append((str(label), _first(case, "session_input", "sessionInput")))
    elif isinstance(data, list):  # the old list format: only `initial_session` is read
        for case in data:
            if isinstance(case, dict):
                cases.append((str(case.get("name", "")), case.get("initial_session")))
    for label, session in cases:
        if not isinstance(session, dict):
            continue
        app_name = _first(session, "app_name", "appName")
        if isinstance(app_name, str) and app_name and app_name not in names:
            continue  # another app's case
        state = session.get("state")
        if isinstance(state, dict):
            detail = f"eval case {label!r}" if label else ""
            out.append(InitialSource("evalset", path, tuple(str(k) for k in state), detail=detail))
    return out


def _first(data: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        if name in data:
            return data[name]
    return None


# -- create_session(state=...)


def _from_sessions(app: App, scan: Scan, naming: Mapping[str, list[int]]) -> list[InitialSource]:
    """The sessions created for `app` (`naming`: each agent's sessions, by place in the scan), in the scan's order."""
    if app.root not in naming and (app.call is None or app.call.id not in naming):  # (most apps)
        return []
    mine = {app.root} | ({app.call.id} if app.call is not None else set())
    places = sorted({n for agent in mine for n in naming.get(agent, ())})
    return [
        InitialSource("session", scan.sessions[n].path, scan.sessions[n].keys, scan.sessions[n].span) for n in places
    ]
