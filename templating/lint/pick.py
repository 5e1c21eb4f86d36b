"""Picking an instruction in a Python file by name, for `templating keys` and `templating render`:
`FILE.py` or `FILE.py:NAME`, read with the project's context (the agents that use a prompt module's
constants). A name that matches nothing, or more than one instruction, is an
[`InputError`][templating.inputs.InputError] that lists the names the file knows."""

from __future__ import annotations

from typing import Any

from ..errors import TemplatingError
from ..inputs import read_text
from .project import LintInputError

__all__ = ["FileInstructions", "pick_instruction", "python_target", "scan_file", "where"]


def python_target(file: str) -> tuple[str, str | None] | None:
    """`FILE.py` or `FILE.py:NAME` as (path, name); None for any other file."""
    if file == "-":
        return None
    if file.endswith(".py"):
        return file, None
    path, sep, name = file.rpartition(":")
    if sep and path.endswith(".py"):
        if not name:
            raise LintInputError(
                f"{file} names no instruction: write {path}:NAME (a module constant or an agent's name=), "
                f"or {path} alone if it holds one instruction"
            )
        return path, name
    return None


class FileInstructions:
    """The instructions written in one Python file and those skipped, read with its project's context."""

    def __init__(self, instructions: list[Any], skipped: list[Any]) -> None:
        self.instructions = instructions
        self.skipped = skipped


def scan_file(path: str) -> FileInstructions:
    from ..pysource import PythonSourceError
    from .engine import Project

    read_text(path, what="Python")  # a missing or unreadable file: the usual one-line error
    try:
        return FileInstructions(*Project(paths=[path]).instructions(path, reached=True))
    except PythonSourceError as exc:
        raise LintInputError(exc.message) from None
    except TemplatingError as exc:
        raise LintInputError(exc.message) from None


def where(item: Any) -> str:
    return f"{item.path}:{item.span.line}:{item.span.column}"


def pick_instruction(path: str, name: str | None) -> Any:
    """The one instruction of `path` that `name` names (a constant, or an agent's `name=`)."""
    result = scan_file(path)
    found = result.instructions
    names = sorted({n for item in found for n in item.names})
    if name is None:
        if len(found) == 1:
            return found[0]
        if not found:
            raise LintInputError(f"no instruction found in {path} (string literals, module constants, agents)")
        if not names:
            raise LintInputError(
                f"{path} holds {len(found)} instructions and none has a name to pick it by: assign one to a "
                f"module constant (NAME = instruction(...)) or give it to an agent with name=, then use {path}:NAME"
            )
        raise LintInputError(f"{path} holds {len(found)} instructions: name one as {path}:NAME ({', '.join(names)})")
    matches = [item for item in found if name in item.names]
    if len(matches) > 1:  # an agent's name: its instruction, rather than its global_instruction
        matches = [item for item in matches if f"{name}.instruction" in item.names] or matches
    if not matches:
        site = f'(name="{name}").'
        skipped = [item for item in result.skipped if site in item.label or item.label == name]
        if skipped:
            item = skipped[0]
            raise LintInputError(f"{item.label} at {where(item)} cannot be rendered from the code: {item.reason}")
        known = f"; known names: {', '.join(names)}" if names else "; it holds no named instruction"
        raise LintInputError(f"no instruction named {name!r} in {path}{known}")
    if len(matches) > 1:
        places = "; ".join(f"{item.label} at {where(item)}" for item in matches)
        raise LintInputError(
            f"{name!r} names {len(matches)} instructions in {path} ({places}): "
            f"say which, e.g. {path}:{name}.instruction or by its constant"
        )
    return matches[0]
