"""Picking an instruction in a Python file by name, for `templating keys` and `templating render`:
`FILE.py` or `FILE.py:NAME`, read with the project's context (the agents that use a prompt module's
constants). A name that matches nothing, or more than one instruction, is an
[`InputError`][templating.inputs.InputError] that lists the file's instructions with their line:column,
label and names."""

from __future__ import annotations

from typing import Any

from ..errors import TemplatingError
from ..inputs import InputError as LintInputError  # `lint.project`'s name for it, without importing the linter
from ..inputs import read_text

__all__ = ["FileInstructions", "candidates", "pick_instruction", "python_target", "scan_file", "where"]


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


def candidates(found: list[Any]) -> str:
    """One line for each instruction of `found`: where it starts (line:column), its label, where the code
    gives it when that is elsewhere (two instructions can start at one character), the names that pick it
    (`FILE.py:NAME`)."""
    lines = []
    for item in sorted(found, key=lambda i: (i.path, i.span.start, i.span.end, _given(i), i.label)):
        names = ", ".join(item.names) if item.names else "no name to pick it by"
        given = _given(item)
        lines.append(f"  {where(item)}: {item.label}{f', given at {given}' if given else ''} ({names})")
    return "\n".join(lines)


def _given(item: Any) -> str:
    """Where the code gives `item` (`agent.py:12:17`), for the places not on the line its text starts on."""
    places = [
        f"{path}:{span.line}:{span.column}"
        for path, span in item.given_at
        if (path, span.line) != (item.path, item.span.line)
    ]
    return ", ".join(places)


def pick_instruction(path: str, name: str | None) -> Any:
    """The one instruction of `path` that `name` names (a constant, or an agent's `name=`).

    Exactly one or an error: a name that matches nothing, or more than one instruction, is a
    `LintInputError` listing the file's instructions (line:column, label, names). Instructions are
    told apart by their identity ([`Instruction.key`][templating.pysource.Instruction.key]), so two
    that start at the same character (`BASE + QUIZ` and `BASE + MEMORY + QUIZ`) are two."""
    result = scan_file(path)
    found = result.instructions
    if name is None:
        if len(found) == 1:
            return found[0]
        if not found:
            raise LintInputError(f"no instruction found in {path} (string literals, module constants, agents)")
        if not any(item.names for item in found):
            raise LintInputError(
                f"{path} holds {len(found)} instructions and none has a name to pick it by: assign one to a "
                f"module constant (NAME = instruction(...)) or give it to an agent with name=, then use {path}:NAME"
                f"\n{candidates(found)}"
            )
        raise LintInputError(f"{path} holds {len(found)} instructions: name one as {path}:NAME\n{candidates(found)}")
    matches = [item for item in found if name in item.names]
    if any(f"{name}.{part}" in item.names for item in matches for part in _AGENT_PARTS):
        # an agent's name picks its instruction, never another of its instructions in its place
        own = [item for item in matches if f"{name}.instruction" in item.names]
        if not own:
            raise LintInputError(_no_instruction(path, name, result.skipped, matches))
        matches = own
    if not matches:
        site = f'(name="{name}").'
        skipped = [item for item in result.skipped if site in item.label or item.label == name or name in item.names]
        if skipped:
            item = skipped[0]
            raise LintInputError(f"{item.label} at {where(item)} cannot be rendered from the code: {item.reason}")
        if not found:
            raise LintInputError(f"no instruction named {name!r} in {path}: it holds no instruction")
        raise LintInputError(
            f"no instruction named {name!r} in {path}; its instructions (line:column, label, names):\n"
            f"{candidates(found)}"
        )
    if len(matches) > 1:
        unique = {n for item in matches for n in item.names if sum(n in other.names for other in found) == 1}
        how = f"pick one by a name only it has ({', '.join(sorted(unique))})" if unique else "give each its own name"
        raise LintInputError(f"{name!r} names {len(matches)} instructions in {path}: {how}\n{candidates(matches)}")
    return matches[0]


# What an agent's name may name besides its instruction (`NAME.global_instruction`).
_AGENT_PARTS = ("instruction", "global_instruction")


def _no_instruction(path: str, name: str, skipped: list[Any], others: list[Any]) -> str:
    """Why the agent `name` of `path` has no instruction to pick: it cannot be read from the code (what and
    where), or it gives none; and the names of its other instructions, which can be picked by those names."""
    other = ", ".join(
        f"{path}:{n}" for item in others for n in item.names if n.startswith(f"{name}.") and n != f"{name}.instruction"
    )
    also = f"; to render another of its instructions, name it: {other}" if other else ""
    unread = [item for item in skipped if f"{name}.instruction" in item.names]
    if unread:
        item = unread[0]
        return f"{item.label} at {where(item)} cannot be rendered from the code: {item.reason}{also}"
    return f"the agent {name!r} in {path} gives no instruction= that can be read{also}"
