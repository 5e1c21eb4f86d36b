"""What an instruction or an edit reaches in a project: the text files an instruction is kept in, the
files that may import a module, the instructions that read some keys. Read by the engine."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..template import parse
from .registry import Diagnostic

if TYPE_CHECKING:
    from ..pysource import Instruction, Scan

__all__ = ["flagged", "imports_test", "reads_any", "reported_in"]


def reads_any(item: Instruction, keys: frozenset[str] | None) -> bool:
    """Whether the instruction reads one of `keys` (any key, when `keys` is `None`)."""
    if item.dialect == "jinja":
        return False
    if keys is None:
        return True
    return any(node.name in keys for node in parse(item.text, dialect=item.dialect).placeholders)


def flagged(found: Scan, diag: Diagnostic) -> str:
    span = diag.span
    return found.sources.get(diag.path or "", "")[span.start : span.end] if span else ""


def reported_in(found: Scan, named: set[str]) -> set[str]:
    """The `named` files, and the text files an instruction is read from that a named Python file
    of their folder (or a folder above) names (`load_instruction_from_file("writer.txt")`)."""
    out = set(named)
    texts = {item.path for item in found.instructions if not item.path.endswith(".py")} - out
    if not texts:
        return out
    by_folder: dict[Path, list[str]] = {}  # the named files by folder: each text looks up its own folders
    for path in named:
        by_folder.setdefault(Path(path).parent, []).append(path)
    for text in texts:
        item = Path(text)
        if any(
            item.name in found.sources.get(path, "") for folder in item.parents for path in by_folder.get(folder, ())
        ):
            out.add(text)
    return out


def imports_test(target: str) -> Any:
    """A test of whether a file (path, text) may import the module `target`."""
    item = Path(target)
    module = item.parent if item.stem == "__init__" else item.with_suffix("")
    folder = module.parent
    line = re.compile(rf"^[ \t]*(?:from|import)\b[^\n]*\b{re.escape(module.name)}\b[^\n]*", re.MULTILINE)
    package = folder.name

    def test(path: str, text: str) -> bool:
        if module.name not in text:
            return False
        found = line.search(text)
        if found is None:
            return False
        here = Path(path).parent
        return folder == here or here in folder.parents or bool(package and package in found.group())

    return test
