"""Public names imported the first time each is used (PEP 562), for the packages that gather names from
their modules (`templating`, `templating.linter`, `templating.sessions`): importing such a package loads
none of those modules, so each caller pays only for what it uses. A module is imported once, on the first
use of one of its names, and all its listed names are then bound as ordinary attributes. A submodule is an
attribute too (`templating.nodes`, `templating.linter.engine`): it is imported when first used so."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_names(
    namespace: dict[str, Any], modules: Mapping[str, Sequence[str]]
) -> tuple[dict[str, str], Callable[[str], Any], Callable[[], list[str]]]:
    """For the package whose globals are `namespace` and whose public names come from `modules` (a module
    relative to the package -> its names): the module of each name, the loader a `__getattr__` calls, and
    a `__dir__` listing the names as if all were imported."""
    package = namespace["__name__"]
    by_name = {name: module for module, names in modules.items() for name in names}

    def load(name: str) -> Any:
        module = by_name.get(name)
        if module is None:
            if not name.startswith("__"):
                try:  # a submodule (`templating.nodes`), bound on the package by importing it
                    return importlib.import_module(f".{name}", package)
                except ModuleNotFoundError as exc:
                    if exc.name != f"{package}.{name}":
                        raise  # a submodule that exists, missing something it imports
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        loaded = importlib.import_module(f".{module}", package)
        for other in modules[module]:
            namespace[other] = getattr(loaded, other)
        return namespace[name]

    def names() -> list[str]:
        return sorted(set(namespace) | set(namespace.get("__all__", ())))

    return by_name, load, names
