"""A static preview from facts the caller already holds: a language server keeps its workspace folder's scan and
agent model up to date with each edit (the editor's unsaved text included), so the preview of an app of that folder
is taken from them instead of reading the app's code again; asked again with nothing changed, the answer is the one
made last for that scan.

The facts are used only where they are what `read_app` would read: the same project (or one whose configuration is
the same), every file of the app read by the scan (none excluded or unreadable), the editor's texts those the scan
read. Where the wider project gives the app more than `read_app` reads (a runner or a session of it in a test
outside its folder, an eval set above it), the agent model is built again from the same scan as `read_app` builds
it, with the runners and sessions of the app's folder only (no code is read again). Otherwise `preview_from`
answers None and the caller reads the app as `templating preview` does.
"""

from __future__ import annotations

import json
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import TemplatingError
from .load import PreviewError
from .result import Preview

__all__ = ["Known", "preview_from"]

KEPT_PER_SCAN = 16  # the previews kept for one scan (targets, agents and states asked for)


@dataclass(frozen=True, slots=True, eq=False)
class Known:
    """What a caller knows of a project: its `root`, its configuration (`config`, a `LintConfig`), its `scan` of the
    project's Python files and the agent `model` built from that scan, with the `texts` (path -> text) the scan read
    over the files (an editor's open documents) and `overrides` (by the scan's name of each file: what the project
    read instead of the disk). `owner`: the object that keeps the scan (a linter `Project`): the previews made from
    it are kept as long as it lives. A scan replaced by the next edit is a new object: it is the version previews
    are kept by."""

    owner: Any
    root: Path
    config: Any
    scan: Any
    model: Any
    texts: Mapping[str, str]
    overrides: Mapping[str, str]


_LOCK = threading.Lock()  # the language server makes previews on worker threads
# by owner (a project, dropped with it): the scan the previews were made from (the last one: an older one would be
# kept alive), and those previews by what was asked
_KEPT: weakref.WeakKeyDictionary[Any, tuple[Any, OrderedDict[Hashable, Preview]]] = weakref.WeakKeyDictionary()


def preview_from(
    known: Known, target: str, *, state: Mapping[str, Any] | None = None, agent: str | None = None
) -> Preview | None:
    """The static preview of the app `target` names, as `build_preview(target, state=state, agent=agent)` makes it
    with the same texts, taken from `known`; None when `known` may not say what `read_app` would read (see the
    module's description). A `PreviewError` as `build_preview` raises it (`agent` names none of the app's)."""
    asked = _asked(target, state, agent)
    if asked is not None:
        with _LOCK:
            kept = _KEPT.get(known.owner)
            if kept is not None and kept[0] is known.scan and asked in kept[1]:
                kept[1].move_to_end(asked)
                return kept[1][asked]
    static = app_from(known, target)
    if static is None:
        return None
    from .build import static_preview

    made = static_preview(target, static, state=state, agent=agent, keep=False)
    if asked is not None:
        with _LOCK:
            kept = _KEPT.get(known.owner)
            if kept is None or kept[0] is not known.scan:
                kept = _KEPT[known.owner] = (known.scan, OrderedDict())
            kept[1][asked] = made
            while len(kept[1]) > KEPT_PER_SCAN:
                kept[1].popitem(last=False)
    return made


def forget() -> None:
    """Forget the previews kept."""
    with _LOCK:
        _KEPT.clear()


def _asked(target: str, state: Mapping[str, Any] | None, agent: str | None) -> Hashable | None:
    """What was asked, as a key (None: a state that is not JSON data is not kept)."""
    try:
        said = None if state is None else json.dumps(state, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return (target, said, agent)


def app_from(known: Known, target: str) -> Any:
    """The `StaticApp` `read_app(target)` would read, from `known`; None when `known` may differ from it."""
    from ..linter.project import find_root, project_config
    from ..pysource.found import CONSTANT_SUFFIXES
    from .static import StaticApp, _pick, _target_files

    try:
        folder, files, configs, named_file, attribute = _target_files(target)
    except PreviewError:
        return None
    root = find_root([str(folder)])
    if not folder.is_relative_to(root):
        root = folder
    mine, theirs = root.resolve(), known.root.resolve()
    if not mine.is_relative_to(theirs) and not theirs.is_relative_to(mine):
        return None  # another project than the one known
    config = known.config
    if mine != theirs and replace(config, root=root) != project_config(root):
        return None  # read with another configuration than the project's
    if tuple(config.constant_suffixes) != CONSTANT_SUFFIXES:
        return None  # `read_app` reads constants with the default suffixes
    scan, model = known.scan, known.model
    if scan is None or model is None or not _texts_read(known):
        return None
    name = _names()
    if any(name(file) not in scan.sources for file in files):
        return None  # a file of the app the project does not read (excluded, ignored, unreadable)
    if configs and not any(agent.path == name(config) for config in configs for agent in model.agents.values()):
        return None
    named = name(named_file) if named_file else None
    try:
        app, top = _pick(model, scan, target, Path(name(str(folder))), named, attribute)
    except PreviewError:
        return None  # said as `read_app` says it (a file that is not valid Python first)
    if not _own(model, scan, app, top, folder, root):
        # a runner or session of the app outside its folder (a test, a script), or an eval set above it: the agent
        # model built again from the same scan as `read_app` builds it (its root and configuration), with the
        # runners and sessions of the app's folder only, as `read_app` reads them; the code is not read again, and
        # the agents made from the same facts are the project model's
        from ..agent_model import build

        inside = Path(os.path.abspath(name(str(folder))))
        scan = replace(
            scan,
            runners=[r for r in scan.runners if Path(os.path.abspath(r.path)).is_relative_to(inside)],
            sessions=[s for s in scan.sessions if Path(os.path.abspath(s.path)).is_relative_to(inside)],
        )
        config = project_config(root)
        try:
            # the project's own model as the one before: its agents made from the same facts are taken as they
            # are (the same objects as the project's, and from one edit to the next)
            model = build(scan, config, root, before=model)
            app, top = _pick(model, scan, target, Path(name(str(folder))), named, attribute)
        except (PreviewError, TemplatingError):
            return None
        if not _own(model, scan, app, top, folder, root):
            return None
    return StaticApp(model, app, top, root, scan.sources, repr(config))


def _names() -> Any:
    """How the project's scan names a file (as findings show it: relative to the current folder when under it), by
    its absolute path with links resolved (as `read_app` lists them)."""
    cwd = str(Path.cwd().resolve())
    prefix = cwd.rstrip(os.sep) + os.sep

    def name(path: str) -> str:
        if path.startswith(prefix):
            return path[len(prefix) :]
        return "." if path == cwd else path

    return name


def _texts_read(known: Known) -> bool:
    """Whether the scan read each of the caller's texts that it reads at all: a Python file or an Agent Config as
    its source, an instruction's text file as the project's override (a document the scan does not read, a README,
    does not matter)."""
    name = _names()
    text_files: set[str] | None = None
    for path, text in known.texts.items():
        scanned = name(path)
        read = known.scan.sources.get(scanned)
        if read is not None:
            if read != text:
                return False
            continue
        if path.endswith(".py"):
            continue
        if text_files is None:
            text_files = {item.path for item in known.scan.instructions if not item.path.endswith(".py")}
        if scanned in text_files and known.overrides.get(scanned) != text:
            return False
    return True


def _own(model: Any, scan: Any, app: Any, top: Any, folder: Path, root: Path) -> bool:
    """Whether the project's wider context adds nothing `read_app` would not read: the app's agents, its
    `App(...)` and runners are written in its folder, its initial state is declared inside `root` (an eval set
    above it is not read there), and no instruction file it reads is outside `root`."""
    here, bound = _prefix(folder.resolve()), _prefix(root.resolve())
    absolute: dict[str, str] = {}  # (many agents are written in one file: each path made absolute once)

    def inside(path: str, where: str) -> bool:
        # as `Path(os.path.abspath(path)).is_relative_to(where)`, in the strings (pathlib's would cost more than
        # the rest of the check on an app of twenty agents)
        full = absolute.get(path)
        if full is None:
            full = absolute[path] = _prefix(Path(os.path.abspath(path)))
        return full.startswith(where)

    if app is None:
        return inside(top.path, here)
    wheres = [model.agents[agent].path for agent in app.agents] + [runner.path for runner in app.runners]
    if app.call is not None:
        wheres.append(app.call.path)
    if not all(inside(where, here) for where in wheres):
        return False
    if not all(inside(source.path, bound) for source in model.initial_state(app).sources):
        return False
    return all(item.path.endswith(".py") or inside(item.path, bound) for item in scan.instructions)


def _prefix(path: Path) -> str:
    """`path` as a prefix of the paths inside it (case folded where the system folds it)."""
    return os.path.normcase(os.path.join(str(path), ""))
