"""`templating diff`: what each agent's model sees at a git revision and in the working tree, compared.

Both sides are read from the code (no code of either runs): the working tree as it is, the revision from its files
exported into a temporary folder. Per app, per agent (matched by name): a unified diff of what the model sees
(system instruction, instruction turn, tools), the keys it reads that were added or removed, and those made
required (optional before, required now); agents added or removed."""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .formats import fence
from .load import PreviewError
from .result import AgentPreview, Preview

__all__ = ["AgentChange", "AppChange", "DiffResult", "diff_previews", "run_diff"]


@dataclass(frozen=True, slots=True)
class AgentChange:
    """One agent's change: `status` (`changed`, `added`, `removed`, `same`), the unified diff of what its model
    sees, and the keys it reads added, removed, or made required."""

    agent: str
    status: Literal["changed", "added", "removed", "same"]
    diff: str = ""
    keys_added: tuple[str, ...] = ()
    keys_removed: tuple[str, ...] = ()
    made_required: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "status": self.status,
            "diff": self.diff,
            "keys_added": list(self.keys_added),
            "keys_removed": list(self.keys_removed),
            "made_required": list(self.made_required),
        }


@dataclass(frozen=True, slots=True)
class AppChange:
    """One app's changes (`target` as named, relative to the repository's top); `error` when a side could not be
    previewed (`status` then says which)."""

    target: str
    agents: tuple[AgentChange, ...] = ()
    status: Literal["changed", "added", "removed", "same"] = "same"
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "app": self.target,
            "status": self.status,
            "error": self.error,
            "agents": [a.to_json() for a in self.agents if a.status != "same"],
        }


@dataclass(frozen=True, slots=True)
class DiffResult:
    base: str
    base_label: str
    apps: tuple[AppChange, ...] = field(default=())

    @property
    def changed(self) -> bool:
        return any(app.status != "same" for app in self.apps)

    def to_json(self) -> dict[str, Any]:
        return {"base": self.base, "changed": self.changed, "apps": [app.to_json() for app in self.apps]}


def _seen(agent: AgentPreview) -> list[str]:
    """What the model sees, as lines for a diff."""
    lines = ["system instruction:", *(agent.system_instruction or "").split("\n")]
    if agent.instruction_turn is not None:
        lines += ["", "instruction turn:", *agent.instruction_turn.split("\n")]
    lines += ["", "tools: " + (", ".join(agent.tools) or "none")]
    return lines


def _required(agent: AgentPreview) -> set[str]:
    return {r.key for r in agent.reads if r.optional is False}


def _optional(agent: AgentPreview) -> set[str]:
    return {r.key for r in agent.reads if r.optional}


def _compare(name: str, old: AgentPreview, new: AgentPreview, labels: tuple[str, str]) -> AgentChange:
    diff = "\n".join(difflib.unified_diff(_seen(old), _seen(new), labels[0], labels[1], lineterm=""))
    old_keys = [r.key for r in old.reads]
    new_keys = [r.key for r in new.reads]
    added = tuple(k for k in dict.fromkeys(new_keys) if k not in old_keys)
    removed = tuple(k for k in dict.fromkeys(old_keys) if k not in new_keys)
    required = tuple(sorted(_optional(old) & _required(new)))
    changed = bool(diff or added or removed or required)
    return AgentChange(name, "changed" if changed else "same", diff, added, removed, required)


def diff_previews(old: Preview | None, new: Preview | None, labels: tuple[str, str]) -> tuple[AgentChange, ...]:
    """Each agent's change from `old` to `new` (None: the app is not there), in the new run order, then the removed."""
    before = {a.agent: a for a in old.agents} if old is not None else {}
    after = {a.agent: a for a in new.agents} if new is not None else {}
    changes: list[AgentChange] = []
    for name, agent in after.items():
        if name not in before:
            keys = tuple(dict.fromkeys(r.key for r in agent.reads))
            diff = "\n".join(difflib.unified_diff([], _seen(agent), labels[0], labels[1], lineterm=""))
            changes.append(AgentChange(name, "added", diff, keys_added=keys))
        else:
            changes.append(_compare(name, before[name], agent, labels))
    for name, agent in before.items():
        if name not in after:
            keys = tuple(dict.fromkeys(r.key for r in agent.reads))
            diff = "\n".join(difflib.unified_diff(_seen(agent), [], labels[0], labels[1], lineterm=""))
            changes.append(AgentChange(name, "removed", diff, keys_removed=keys))
    return tuple(changes)


def run_diff(
    base: str | None,
    targets: Sequence[str],
    *,
    preview: Callable[[str], Preview] | None = None,
    start: str = ".",
) -> DiffResult:
    """Compare the previews of `targets` (relative to the current folder; none: every app in the repository) at
    `base` (a revision; None: the merge base with the default branch) and in the working tree."""
    from .build import build_preview
    from .git import Repository, exported
    from .static import find_apps

    make = preview or (lambda target: build_preview(target))
    repository = Repository(start)
    if base is None:
        commit, label = repository.default_base()
    else:
        commit, label = repository.commit(base), base
    short = repository.short(commit)
    here = Path(start).resolve()
    relative = [_relative(repository.top, here, target) for target in targets]
    labels = (f"{short} ({label})" if label != short else short, "working tree")
    with exported(repository, commit, [_export_path(r) for r in relative] if relative else []) as old_root:
        if not relative:
            relative = sorted(set(find_apps(repository.top)) | set(find_apps(old_root)))
        apps = []
        for target in relative:
            apps.append(_app(target, repository.top, old_root, make, labels))
    return DiffResult(commit, labels[0], tuple(apps))


def _relative(top: Path, here: Path, target: str) -> str:
    path, sep, attribute = target.rpartition(":")
    named = path if sep and attribute.isidentifier() and not os.path.exists(target) else target
    full = (here / named).resolve()
    if not full.is_relative_to(top):
        raise PreviewError(f"{target}: outside the repository ({top})")
    rel = full.relative_to(top).as_posix() or "."
    return f"{rel}:{attribute}" if named != target else rel


def _export_path(relative: str) -> str:
    """The folder to export for an app: its own folder (a file's folder), whole."""
    path = relative.rpartition(":")[0] if ":" in relative else relative
    return path if not path.endswith((".py", ".yaml", ".yml")) else (os.path.dirname(path) or ".")


def _app(target: str, top: Path, old_root: Path, make: Callable[[str], Preview], labels: tuple[str, str]) -> AppChange:
    def side(root: Path) -> tuple[Preview | None, str | None]:
        path, sep, attribute = target.rpartition(":")
        named = f"{root / path}:{attribute}" if sep and attribute.isidentifier() else str(root / target)
        if not (root / (path if sep and attribute.isidentifier() else target)).exists():
            return None, None
        try:
            return make(named), None
        except PreviewError as exc:
            return None, str(exc.message).replace(str(root) + os.sep, "").replace(str(root), ".")

    old, old_error = side(old_root)
    new, new_error = side(top)
    error = new_error or old_error
    if old is None and new is None:
        if error is None:
            raise PreviewError(
                f"{target}: not a revision of this repository, and no app there in the working tree or at {labels[0]}"
            )
        return AppChange(target, status="same", error=error)
    agents = diff_previews(old, new, labels)
    if old is None:
        status: Literal["changed", "added", "removed", "same"] = "added" if old_error is None else "changed"
    elif new is None:
        status = "removed" if new_error is None else "changed"
    else:
        status = "changed" if any(a.status != "same" for a in agents) else "same"
    return AppChange(target, agents, status, error)


# --- formats --------------------------------------------------------------------------------------------------------


def _keys_line(change: AgentChange) -> str:
    parts = []
    if change.keys_added:
        parts.append("added " + ", ".join(change.keys_added))
    if change.keys_removed:
        parts.append("removed " + ", ".join(change.keys_removed))
    if change.made_required:
        parts.append("made required " + ", ".join(change.made_required))
    return "; ".join(parts)


def as_text(result: DiffResult) -> str:
    lines = [f"what each agent's model sees: {result.base_label} -> working tree"]
    for app in result.apps:
        if app.status == "same":
            lines.append(f"app {app.target}: no change" + (f" ({app.error})" if app.error else ""))
            continue
        lines.append(f"app {app.target}: {app.status}" + (f" ({app.error})" if app.error else ""))
        for change in app.agents:
            if change.status == "same":
                continue
            lines.append(f"  agent {change.agent}: {change.status}")
            keys = _keys_line(change)
            if keys:
                lines.append(f"    keys read: {keys}")
            lines += ["    " + line for line in change.diff.split("\n")] if change.diff else []
    if not result.apps:
        lines.append("no app found")
    return "\n".join(lines) + "\n"


def as_markdown(result: DiffResult) -> str:
    changed = [app for app in result.apps if app.status != "same"]
    lines = [f"### What the model sees: {result.base_label} \u2192 this branch", ""]
    if not changed:
        lines += ["No agent's request changed.", ""]
    for app in changed:
        lines += [f"#### App `{app.target}` ({app.status})", ""]
        if app.error:
            lines += [f"> {app.error}", ""]
        for change in app.agents:
            if change.status == "same":
                continue
            lines += [f"**`{change.agent}`**: {change.status}", ""]
            keys = _keys_line(change)
            if keys:
                lines += [f"Keys read: {keys}", ""]
            if change.diff:
                mark = fence(change.diff)
                lines += [f"{mark}diff", change.diff, mark, ""]
    same = [app.target for app in result.apps if app.status == "same"]
    if same:
        lines += ["Unchanged: " + ", ".join(f"`{t}`" for t in same), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def as_json(result: DiffResult) -> str:
    return json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n"
