"""Importing an app to preview it (`templating preview --run`): this runs the app's code, as `adk run` does.

A target is named the way google-adk's tools take it: a folder holding an agent package (`agent.py` or
`__init__.py` with `root_agent`, or `root_agent.yaml`), loaded by google-adk's own loader as `adk run` loads it;
a Python file holding `root_agent` (or an `App` called `app`); `module:attribute` or `FILE.py:attribute`; or an
Agent Config YAML file. What the app prints while it loads is kept off the command's output.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import TemplatingError

__all__ = ["Loaded", "PreviewError", "adk_installed", "load_app", "quiet"]


class PreviewError(TemplatingError):
    """A target that cannot be previewed: not found, not importable, no root agent. The message says which."""


@dataclass(frozen=True, slots=True)
class Loaded:
    """An app as google-adk would run it: its root agent and its plugins (an `App`'s)."""

    root: Any
    plugins: tuple[Any, ...] = ()


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Keep what the app's code prints, and google-adk's deprecation warnings, off the command's output."""
    sink = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        warnings.simplefilter("ignore")
        yield


def load_app(target: str, *, announce: Callable[[str], None] | None = None) -> Loaded:
    """Import the app `target` names (see the module's docstring); a `PreviewError` saying what is wrong.
    `announce` is told, once the target is found and before any of its code runs, that it is about to run."""
    if not adk_installed():
        raise PreviewError(
            "templating preview --run imports the app, which needs google-adk: "
            "pip install 'agent-prompt-templating[adk]'"
        )
    load = _resolve(target)
    if announce is not None:
        announce(f"importing {target}: this runs the project's code, as `adk run` does")
    bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # a preview writes nothing, not even the app's __pycache__
    try:
        with quiet():
            found = load()
    except PreviewError:
        raise
    except SystemExit as exc:
        raise PreviewError(f"cannot import {target}: its code called exit({exc.code!r})") from None
    except Exception as exc:
        raise PreviewError(f"cannot import {target}: {type(exc).__name__}: {_first_line(exc)}") from None
    finally:
        sys.dont_write_bytecode = bytecode
    return _as_loaded(found, target)


def adk_installed() -> bool:
    """Whether google-adk can be imported (the `adk` extra): a missing `google` namespace counts as no."""
    try:
        return importlib.util.find_spec("google.adk") is not None
    except ImportError:
        return False


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "(no message)"


def _resolve(target: str) -> Callable[[], Any]:
    """What imports the app `target` names, once it is known to be there (nothing is imported yet)."""
    module, sep, attribute = target.rpartition(":")
    if sep and module and _dotted(attribute) and not os.path.exists(target):
        if module.endswith(".py"):
            if not Path(module).is_file():
                raise PreviewError(f"{module}: no such file")
            return lambda: _attribute(_import_file(Path(module)), attribute, target)
        if _dotted(module):
            if importlib.util.find_spec(module.partition(".")[0]) is None and not _in_cwd(module):
                raise PreviewError(f"{target}: no module named {module!r} (from the current folder or sys.path)")
            return lambda: _attribute(_import_module(module), attribute, target)
    path = Path(target)
    if not path.exists():
        raise PreviewError(
            f"{target}: no such file or folder (name a folder, a .py file, module:attribute or a YAML config)"
        )
    if path.is_dir():
        if not any((path / name).is_file() for name in ("agent.py", "__init__.py", "root_agent.yaml")):
            raise PreviewError(f"{target}: no agent.py, __init__.py or root_agent.yaml: not an ADK app folder")
        return lambda: _load_folder(path)
    if path.suffix in (".yaml", ".yml"):
        return lambda: _load_yaml(path)
    if path.suffix == ".py":
        if path.name in ("agent.py", "__init__.py") and (path.parent / "__init__.py").is_file():
            return lambda: _load_folder(path.parent)
        return lambda: _root_of(_import_file(path), target)
    raise PreviewError(f"{target}: not a folder, a .py file or a YAML Agent Config")


def _in_cwd(module: str) -> bool:
    head = Path(module.partition(".")[0])
    return head.with_suffix(".py").is_file() or (head / "__init__.py").is_file()


def _dotted(name: str) -> bool:
    return all(part.isidentifier() for part in name.split("."))


def _load_folder(folder: Path) -> Any:
    """A folder as `adk run FOLDER` loads it: google-adk's `AgentLoader` over its parent."""
    from google.adk.cli.utils.agent_loader import AgentLoader

    folder = folder.resolve()
    try:
        return AgentLoader(str(folder.parent)).load_agent(folder.name)
    except ValueError as exc:
        raise PreviewError(f"{folder}: {_first_line(exc)}") from None


def _load_yaml(path: Path) -> Any:
    from google.adk.agents import config_agent_utils

    return config_agent_utils.from_config(str(path.resolve()))


def _package_root(path: Path) -> tuple[Path, str]:
    """The folder to put on `sys.path` to import `path`, and the module's dotted name from there (a file
    inside packages is imported as their module, so its relative imports work)."""
    path = path.resolve()
    parts = [path.stem] if path.name != "__init__.py" else []
    folder = path.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return folder, ".".join(parts)


def _import_file(path: Path) -> Any:
    root, name = _package_root(path)
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    return importlib.import_module(name)


def _import_module(name: str) -> Any:
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    return importlib.import_module(name)


def _attribute(module: Any, attribute: str, target: str) -> Any:
    found = module
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise PreviewError(f"{target}: {module.__name__} has no attribute {attribute!r}")
        found = getattr(found, part)
    return found


def _root_of(module: Any, target: str) -> Any:
    from google.adk.apps import App

    app = getattr(module, "app", None)
    if isinstance(app, App):
        return app
    if hasattr(module, "root_agent"):
        return module.root_agent
    raise PreviewError(f"{target}: no root_agent in {module.__name__} (name another agent as {target}:NAME)")


def _as_loaded(found: Any, target: str) -> Loaded:
    from google.adk.agents import BaseAgent
    from google.adk.apps import App

    if isinstance(found, App):
        return Loaded(found.root_agent, tuple(found.plugins or ()))
    if isinstance(found, BaseAgent) or type(found).__name__ == "Workflow":
        return Loaded(found)
    raise PreviewError(f"{target}: {type(found).__name__} is not a google-adk agent or App")
