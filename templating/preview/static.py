"""The preview read from the code: the agent model's facts about an app become google-adk agent objects, and none
of the project's code runs.

An agent becomes the google-adk object its call builds: its name, model name, description, instructions (a string
as written; one of templating's providers built again from its template), `output_key`, `include_contents`,
`mode`, transfer settings, its sub-agents, its tools (a function by its name, an `AgentTool` around the agent it
wraps, google-adk's own tools as google-adk defines them) and, for a Workflow, its edges. What only running the
code would tell (an instruction provider's result, a `before_model_callback`'s changes, a tool object's name, a
planner's text) is said per agent, and the preview of that agent is marked not exact. The keys the model says
are written before an agent's first turn by something other than an earlier agent's `output_key` (a callback, a
custom orchestrator's step, a workflow function node) are shown as markers.
"""

from __future__ import annotations

import ast
import importlib
import os
from collections.abc import Callable, Collection, Hashable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from ..places import LinkedFolders
from .load import PreviewError
from .result import marker
from .trees import Kept, Trees
from .walk import Facts

__all__ = ["StaticApp", "adk_tree", "declared_state", "find_apps", "read_app"]

_ROLES = ("instruction", "global_instruction", "static_instruction")
_SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules", "site-packages", ".venv", "venv", ".git", ".tox"})
MAX_FILES = 5000  # Python files read for one app: an app folder holding more is not an app
# Keywords of an LlmAgent the agent model does not read that can change the request's text, and why.
_UNREAD_TEXT = {
    "planner": "its planner may add planning instructions to the system instruction",
    "code_executor": "its code_executor may add instructions or a tool",
}


@dataclass
class StaticApp:
    """One app as the agent model reads it: the model, the app (None when the target names an agent that is no
    app's root: it is previewed alone), the agent the preview starts from, and the files read."""

    model: Any
    app: Any
    top: Any
    root: Path
    sources: dict[str, str] = field(default_factory=dict)
    config: str = ""  # the project's [tool.templating] as read (its repr): with `sources`, all the model is made of


def _python_files(folder: Path, *, deep: bool, links: list[tuple[str, str]] | None = None) -> list[str]:
    """The Python files of `folder` (`deep`: and of its folders), the links to folders met put in `links` (each
    with its real path: an import may go through one, or a relative one start next to it)."""
    found: list[str] = []
    for here, folders, files in os.walk(folder):
        folders[:] = sorted(f for f in folders if not f.startswith(".") and f not in _SKIPPED_FOLDERS)
        if links is not None:
            links += [(path, os.path.realpath(path)) for f in folders if os.path.islink(path := os.path.join(here, f))]
        found += [os.path.join(here, name) for name in sorted(files) if name.endswith(".py")]
        if not deep:
            break
        if len(found) > MAX_FILES:
            raise PreviewError(f"{folder}: more than {MAX_FILES} Python files: name the app's own folder")
    return found


def _inside(links: list[tuple[str, str]], root: Path) -> LinkedFolders:
    """The `links` to folders inside `root` (as the linter's walk keeps them)."""
    real = os.path.realpath(root)
    below = real.rstrip(os.sep) + os.sep
    return LinkedFolders((path, target) for path, target in links if target == real or target.startswith(below))


def _linked_files(links: LinkedFolders, folder: Path, known: set[str]) -> list[str]:
    """The Python files of the folders `links` point at (the walk of the app's `folder` did not enter them; Python
    imports them as the app's modules), but those `known`; none of a folder holding the app or inside it (its files
    are the app's already). At most `MAX_FILES` with the `known` ones."""
    app = os.path.realpath(folder)
    out: list[str] = []
    walked: set[str] = set()
    for target in sorted({target for _, target in links}):  # (a folder before those inside it)
        if Path(app).is_relative_to(target) or Path(target).is_relative_to(app):
            continue
        if any(Path(target).is_relative_to(done) for done in walked):  # its files walked with a folder above it
            continue
        walked.add(target)
        for name in _python_files(Path(target), deep=True):
            if name not in known:
                known.add(name)
                out.append(name)
        if len(known) > MAX_FILES:
            raise PreviewError(
                f"{folder}: more than {MAX_FILES} Python files with its linked folders: name the app's own"
            )
    return out


def _target_files(
    target: str, *, links: list[tuple[str, str]] | None = None
) -> tuple[Path, list[str], list[str], str | None, str | None]:
    """(the folder the app is read from, its Python files, its Agent Config roots, the file naming the root, the
    attribute naming it) for a target as `templating preview` takes it; the links to folders met in `links`."""
    from ..linter.project import top_package

    module, sep, attribute = target.rpartition(":")
    if sep and module and all(p.isidentifier() for p in attribute.split(".")) and not os.path.exists(target):
        if module.endswith(".py"):
            path = Path(module)
        elif all(part.isidentifier() for part in module.split(".")):
            base = Path(*module.split("."))
            path = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        else:
            path = Path(module)
        if not path.is_file():
            raise PreviewError(f"{target}: no such module (from the current folder: {path})")
        path = path.resolve()
        folder = top_package(path.parent) or path.parent
        return (
            folder,
            _python_files(folder, deep=folder != path.parent or (path.parent / "__init__.py").is_file(), links=links),
            [],
            str(path),
            attribute,
        )
    path = Path(target)
    if not path.exists():
        raise PreviewError(
            f"{target}: no such file or folder (name a folder, a .py file, module:attribute or a YAML config)"
        )
    path = path.resolve()
    if path.is_dir():
        configs = [str(path / "root_agent.yaml")] if (path / "root_agent.yaml").is_file() else []
        if not configs and not any((path / name).is_file() for name in ("agent.py", "__init__.py")):
            raise PreviewError(f"{target}: no agent.py, __init__.py or root_agent.yaml: not an ADK app folder")
        return path, _python_files(path, deep=True, links=links), configs, None, None
    if path.suffix in (".yaml", ".yml"):
        return path.parent, _python_files(path.parent, deep=True, links=links), [str(path)], str(path), None
    if path.suffix == ".py":
        package = top_package(path.parent)
        if path.name in ("agent.py", "__init__.py") and package is not None:
            return path.parent, _python_files(package, deep=True, links=links), [], None, None
        folder = package or path.parent
        return folder, _python_files(folder, deep=package is not None, links=links), [], str(path), None
    raise PreviewError(f"{target}: not a folder, a .py file or a YAML Agent Config")


def read_app(
    target: str, *, read: Callable[[str], str] | None = None, unsaved: Collection[str] | None = None
) -> StaticApp:
    """The app `target` names, read from its code by the agent model (no code of it runs). `read` gives a file's
    text (an editor's unsaved text), `unsaved` the files it may give that are not on disk."""
    from ..agent_model import build
    from ..linter.project import find_root, project_config
    from ..pysource import PythonSourceError, scan

    links: list[tuple[str, str]] = []
    folder, files, configs, named_file, attribute = _target_files(target, links=links)
    root = find_root([str(folder)])
    if not folder.is_relative_to(root):
        root = folder
    config = project_config(root)
    inside = _inside(links, root)
    files += _linked_files(inside, folder, set(files))
    options: dict[str, Any] = {"root": str(root), "configs": configs, "keep_going": True, "links": inside}
    if read is not None:
        options.update(read=read, unsaved=unsaved)
    try:
        found = scan(files, **options)
        model = build(found, config, root)
    except PythonSourceError as exc:
        raise PreviewError(exc.message) from None
    try:
        app, top = _pick(model, found, target, folder, named_file, attribute)
    except PreviewError:
        if found.errors:  # the root agent may be in a file that is not valid Python: say that first
            raise PreviewError(found.errors[0].message) from None
        raise
    return StaticApp(model, app, top, root, dict(found.sources), repr(config))


def _pick(
    model: Any, found: Any, target: str, folder: Path, named_file: str | None, attribute: str | None
) -> tuple[Any, Any]:
    """The app (and the agent to start from) the target names."""
    apps = list(model.apps)
    if attribute is not None:
        wanted = attribute.split(".")[-1]
        for agent in model.agents.values():
            if agent.path == named_file and wanted in agent.call.bound:
                app = next((a for a in apps if a.root == agent.id), None)
                return app, agent
        for binding in found.roots:
            if binding.file == named_file and wanted == "root_agent" and binding.ref.kind == "agent":
                app = next((a for a in apps if a.root == binding.ref.target), None)
                if app is not None:
                    return app, model.agents[app.root]
        raise PreviewError(f"{target}: no agent bound to {attribute!r} in {named_file}")
    if named_file is not None and not named_file.endswith((".yaml", ".yml")):
        for binding in found.roots:
            if binding.file == named_file and binding.ref.kind == "agent":
                app = next((a for a in apps if a.root == binding.ref.target), None)
                if app is not None:
                    return app, model.agents[app.root]
        name = Path(named_file).stem
        raise PreviewError(f"{target}: no root_agent in {name} (name another agent as {target}:NAME)")
    # as google-adk's loader looks: an App called `app`, then `root_agent`, in the package, then in its agent.py,
    # then root_agent.yaml
    for module in (folder / "__init__.py", folder / "agent.py"):
        for app in apps:
            if app.call is not None and app.call.path == str(module) and "app" in app.call.bound:
                return app, model.agents[app.root]
        for binding in found.roots:
            if str(module) in (binding.file, binding.path) and binding.ref.kind == "agent":
                app = next((a for a in apps if a.root == binding.ref.target), None)
                if app is not None:
                    return app, model.agents[app.root]
    for app in apps:
        if model.agents[app.root].path == str(folder / "root_agent.yaml"):
            return app, model.agents[app.root]
    raise PreviewError(f"{target}: no root agent found in its code (root_agent, an App, root_agent.yaml)")


def find_apps(root: Path) -> list[str]:
    """The apps of the project in `root`, each as a target relative to it: an app's folder (it holds its root agent
    in `agent.py`, `__init__.py` or `root_agent.yaml`), else `FILE.py:NAME` (the name its root agent is bound to)."""
    from ..agent_model import build
    from ..linter.project import project_config
    from ..pysource import scan

    root = root.resolve()
    files = _python_files(root, deep=True)
    configs = []
    for here, folders, names in os.walk(root):
        folders[:] = sorted(f for f in folders if not f.startswith(".") and f not in _SKIPPED_FOLDERS)
        configs += [os.path.join(here, "root_agent.yaml")] if "root_agent.yaml" in names else []
    found = scan(files, root=str(root), configs=configs, keep_going=True)
    model = build(found, project_config(root), root)
    targets: list[str] = []
    for binding in found.roots:  # `root_agent = ...`, as google-adk's loader finds an app
        where = Path(binding.file)
        if binding.ref.kind != "agent" or not where.is_relative_to(root):
            continue
        if where.name in ("agent.py", "__init__.py"):
            targets.append(where.parent.relative_to(root).as_posix() or ".")
        else:
            targets.append(f"{where.relative_to(root).as_posix()}:root_agent")
    for app in model.apps:
        where = Path(model.agents[app.root].path)
        if where.name == "root_agent.yaml" and where.is_relative_to(root):
            targets.append(where.parent.relative_to(root).as_posix() or ".")
    return list(dict.fromkeys(targets))


def declared_state(static: StaticApp) -> tuple[dict[str, str], str | None]:
    """The app's declared initial state as markers (key -> marker; its keys are declared, not their values), and
    where it is declared (None when it is not)."""
    if static.app is None:
        return {}, None
    initial = static.model.initial_state(static.app)
    if not initial.declared:
        return {}, None
    # each file by its absolute path, as `read_app` names it (a language server's scan names them as findings do)
    where = "; ".join(replace(source, path=os.path.abspath(source.path)).text for source in initial.sources)
    return {key: marker(f"initial state: {key}") for key in sorted(initial.keys)}, where


def adk_tree(static: StaticApp, *, kept: Trees | None = None) -> tuple[Any, Callable[[Any], Facts | None]]:
    """The google-adk objects the app's code builds, from the agent model's facts, and what is known of each beyond
    its object. A Workflow holds copies of its nodes: those are found by name (unique in a tree). `kept`: the
    objects the last build of this app left (`templating.preview.trees`), taken where nothing they were made of
    changed, and replaced by what this build leaves."""
    if kept is not None and kept.agents:
        try:
            return _tree(static, kept)
        except Exception:  # made again from nothing: its error, if any, is a fresh build's
            pass
    return _tree(static, kept, fresh=True)


def _tree(static: StaticApp, kept: Trees | None, *, fresh: bool = False) -> tuple[Any, Callable[[Any], Facts | None]]:
    converter = _Converter(static, None if fresh or kept is None else kept.agents)
    if kept is not None:
        kept.agents = {}
        kept.tokens = None if fresh else kept.tokens
    top = converter.agent(static.top)
    if converter.taken:
        converter.link(top)
    if kept is not None and not converter.workflow:
        kept.agents = converter.now
    by_name: dict[str, Facts] = {}
    for made in converter.made.values():
        by_name.setdefault(made.name, converter.facts[id(made)])
    return top, lambda made: converter.facts.get(id(made)) or by_name.get(getattr(made, "name", ""))


def _stub_tool(name: str) -> Callable[[], None]:
    """A function standing for one of the project's tools: google-adk offers it by its name."""

    def tool() -> None:
        return None

    tool.__name__ = tool.__qualname__ = name
    return tool


def _stub_node(name: str) -> Callable[..., None]:
    """A function standing for a workflow function node (never run: the preview runs no node)."""

    def node(node_input: Any = None) -> None:
        return None

    node.__name__ = node.__qualname__ = name
    return node


def _provider(text: str) -> Callable[[Any], str]:
    """An instruction provider standing for one of the project's: it returns a marker (google-adk sends a
    provider's result as it is)."""

    def provider(context: Any) -> str:
        return text

    return provider


class _Converter:
    """Makes the google-adk objects of an app's agents, each once; `kept`: those of the last build of the app, by
    agent id (see `templating.preview.trees`), each taken again where nothing it was made of changed."""

    def __init__(self, static: StaticApp, kept: dict[str, Kept] | None = None) -> None:
        self.static = static
        self.model = static.model
        self.functions = static.model.graph.functions
        self.made: dict[str, Any] = {}
        self.facts: dict[int, Facts] = {}
        self.kept = kept or {}
        self.now: dict[str, Kept] = {}  # how each object of this build was made, for the next one
        self.taken: set[int] = set()  # the objects taken from the last build
        self.workflow = False  # a Workflow was made: nothing is kept
        self._making: list[Kept] = []  # the agents being made, innermost last

    def _quote(self, path: str, span: Any) -> str:
        text = self.static.sources.get(path)
        if text is None or span is None:
            return ""
        return text[span.start : span.end]

    def source(self, path: str, span: Any) -> str:
        quoted = self._quote(path, span)
        if self._making:
            self._making[-1].quoted.append((path, span, quoted))
        return quoted

    def agent(self, agent: Any) -> Any:
        known = self.made.get(agent.id)
        if known is None:
            known = self._taken(agent)
            if known is None:
                known = self._make(agent)
            self.made[agent.id] = known
        if self._making:
            self._making[-1].reached.append((agent, known))
        return known

    def _make(self, agent: Any) -> Any:
        making = Kept(agent, tuple(self.model.agents.get(child) for child in agent.children))
        self._making.append(making)
        try:
            making.made = self.build(agent)
        finally:
            self._making.pop()
        self.now[agent.id] = making
        return making.made

    def _taken(self, agent: Any) -> Any:
        """The object the last build made for `agent`, if everything it was made of is the same (None: not)."""
        old = self.kept.get(agent.id)
        if old is None or old.agent is not agent:
            return None
        agents = self.model.agents
        if len(old.children) != len(agent.children):
            return None
        if any(agents.get(child) is not was for child, was in zip(agent.children, old.children, strict=True)):
            return None
        if any(self._quote(path, span) != text for path, span, text in old.quoted):
            return None
        if any(self._function_name(target) != name for target, name in old.functions):
            return None
        if any(self._external(target) is not found for target, found in old.external):
            return None
        again = Kept(agent, old.children, old.made, [], old.quoted, old.functions, old.external)
        again.notes, again.inexact, again.said = old.notes, old.inexact, old.said
        self._making.append(again)
        try:
            if any(self.agent(child) is not made for child, made in old.reached):
                return None
        finally:
            self._making.pop()
        self.now[agent.id] = again
        self.taken.add(id(old.made))
        self.facts[id(old.made)] = self.facts_of(agent, again)
        return old.made

    def free(self, children: list[Any]) -> list[Any]:
        """`children`, those taken from the last build unlinked from their parent there (the object they are
        given to links them, as google-adk does)."""
        for child in children:
            if id(child) in self.taken:
                child.parent_agent = None
        return children

    def link(self, top: Any) -> None:
        """Set each object's `parent_agent` as a fresh build sets it: the object whose `sub_agents` hold it
        (None for none). An object two hold is refused (then made again from nothing), and so is a Workflow's."""
        if self.workflow:
            raise ValueError("a Workflow holds copies of its nodes")
        parents: dict[int, Any] = {}
        for made in self.made.values():
            for child in getattr(made, "sub_agents", None) or ():
                if parents.setdefault(id(child), made) is not made:
                    raise ValueError(f"agent {child.name} has two parents")
        for made in self.made.values():
            parent = parents.get(id(made))
            if made.parent_agent is not parent:
                made.parent_agent = parent
        if top.parent_agent is not None:
            top.parent_agent = None

    def facts_of(self, agent: Any, making: Kept) -> Facts:
        optional: dict[str, bool] = {}
        for read in self.model.reads(agent) if agent.kind == "llm" else ():
            optional[read.key] = optional.get(read.key, True) and read.optional
        said = making.said
        return Facts(
            notes=making.notes,
            inexact=making.inexact,
            before=tuple(self.before(agent)),
            optional=tuple(optional.items()),
            instructions=(said.get("instruction"), said.get("static_instruction"), said.get("global_instruction")),
        )

    def _function_name(self, target: str) -> str | None:
        found = self.functions.get(target)
        return None if found is None else str(found.name)

    def _external(self, target: str) -> Any:
        """google-adk's tool `target` names (an object of its module), or None."""
        module, _, name = target.rpartition(".")
        try:
            return getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            return None

    def children(self, agent: Any, *links: str) -> Iterator[Any]:
        for child, link in zip(agent.children, agent.links, strict=True):
            if link in links and self.model.agents[child].kind != "unknown":
                yield self.model.agents[child]

    def build(self, agent: Any) -> Any:
        from google.adk.agents import LoopAgent, ParallelAgent, SequentialAgent

        notes: list[str] = []
        inexact: list[str] = []
        said: dict[str, Hashable] = {}
        name = agent.name or f"agent_{agent.span.line}"
        if agent.name is None:
            inexact.append(f"its name is known only at run time (shown as {name})")
        unknown = [why for why in agent.unknown]
        placeholders = [self.model.agents[c] for c in agent.children if self.model.agents[c].kind == "unknown"]
        if placeholders or any(u.startswith(("sub_agents", "tools")) for u in unknown):
            inexact.append("some of its sub-agents or tools are known only at run time: " + "; ".join(unknown))
        description = agent.call.option("description", "")
        if agent.call.why_unread("description"):
            inexact.append(f"its description is known only at run time ({agent.call.why_unread('description')})")
        common: dict[str, Any] = {"name": name, "description": description if isinstance(description, str) else ""}
        if agent.kind == "llm":
            made = self.llm(agent, common, notes, inexact, said)
        elif agent.kind in ("sequential", "parallel", "loop"):
            cls = {"sequential": SequentialAgent, "parallel": ParallelAgent, "loop": LoopAgent}[agent.kind]
            extra: dict[str, Any] = {}
            iterations = agent.call.option("max_iterations")
            if agent.kind == "loop" and isinstance(iterations, int) and not isinstance(iterations, bool):
                extra["max_iterations"] = iterations
            children = [self.agent(child) for child in self.children(agent, "sub_agent")]
            made = cls(**common, sub_agents=self.free(children), **extra)
        elif agent.kind == "workflow":
            self.workflow = True
            made = self.workflow_of(agent, name)
        elif agent.kind == "join":
            from google.adk.workflow import JoinNode

            made = JoinNode(name=name)
        else:
            children = self.free([self.agent(c) for c in self.children(agent, "run")])
            made = _custom_class()(**common, sub_agents=children)
        making = self._making[-1] if self._making else Kept(agent, ())
        making.notes, making.inexact, making.said = tuple(notes), tuple(inexact), said
        self.facts[id(made)] = self.facts_of(agent, making)
        return made

    def llm(
        self, agent: Any, common: dict[str, Any], notes: list[str], inexact: list[str], said: dict[str, Hashable]
    ) -> Any:
        from google.adk.agents import LlmAgent
        from google.adk.tools.agent_tool import AgentTool

        call = agent.call
        options: dict[str, Any] = {}
        model = call.option("model")
        if isinstance(model, str):
            options["model"] = _OfflineModel.named(model)
        elif call.why_unread("model"):
            notes.append(f"its model is known only at run time ({call.why_unread('model')})")
        for role in _ROLES:
            ref = call.instruction(role)
            if ref is not None:
                options[role], said[role] = self.instruction(ref, role, inexact)
        if call.output_key is not None:
            if call.output_key.key is not None:
                options["output_key"] = call.output_key.key
            else:
                notes.append(f"its output_key is known only at run time ({call.output_key.reason})")
        for option in ("include_contents", "mode", "disallow_transfer_to_parent", "disallow_transfer_to_peers"):
            value = call.option(option)
            if value is not None:
                options[option] = value
        for why in call.callback("before_model_callback"):
            inexact.append(f"its before_model_callback {why.text} may change the request at run time (not run here)")
        tools: list[Any] = []
        wrapped = iter(self.children(agent, "agent_tool"))
        for ref in call.tools or ():
            if ref.wrapper == "AgentTool" and ref.kind == "agent":
                child = next(wrapped, None)
                if child is not None:
                    tools.append(AgentTool(agent=self.agent(child)))
                continue
            tool = self.tool(ref, inexact)
            if tool is not None:
                tools.append(tool)
        for keyword in self.keywords(agent):
            if keyword in _UNREAD_TEXT:
                inexact.append(_UNREAD_TEXT[keyword])
            elif keyword == "output_schema" and tools:
                inexact.append(
                    "it has an output_schema and tools: google-adk may add a tool and an instruction for the schema"
                )
        children = [self.agent(child) for child in self.children(agent, "transfer")]
        return LlmAgent(**common, **options, tools=tools, sub_agents=self.free(children))

    def keywords(self, agent: Any) -> list[str]:
        """The keywords written in the agent's call (those the agent model does not read included)."""
        text = self.source(agent.call.path, agent.call.span)
        try:
            node = ast.parse(text.strip(), mode="eval").body
        except SyntaxError:
            return []
        return [k.arg for k in node.keywords if k.arg] if isinstance(node, ast.Call) else []

    def instruction(self, ref: Any, role: str, inexact: list[str]) -> tuple[Any, Hashable]:
        """The value google-adk gets for the instruction `ref` says, and what it is made of (as data: the key of
        the requests kept between previews)."""
        from ..jinja_mode.mode import jinja
        from ..providers import instruction
        from ..template import Template

        if ref.kind == "text" and ref.text is not None:
            return ref.text, ("text", ref.text)
        if ref.kind == "templating" and ref.text is not None:
            if ref.dialect == "jinja":
                return jinja(ref.text), ("jinja", ref.text)
            made = instruction(Template(ref.text, dialect=ref.dialect), strict=False)
            return made, ("templating", ref.dialect, ref.text)
        written = self.source(ref.path, ref.span).strip() or "it"
        why = ref.reason or "known only at run time"
        inexact.append(f"its {role} is {written}: {why}; the preview does not run it (use --run)")
        shown = marker(f"{role} from {written}, known at run time")
        return _provider(shown), ("marker", shown)

    def tool(self, ref: Any, inexact: list[str]) -> Any:
        making = self._making[-1] if self._making else Kept(None, ())
        if ref.kind == "function":
            name = self._function_name(ref.target)
            making.functions.append((ref.target, name))
            if name is not None:
                return _stub_tool(name)
        if ref.kind == "external" and ref.target.startswith("google.adk."):
            found = self._external(ref.target)
            making.external.append((ref.target, found))
            from google.adk.tools.base_tool import BaseTool

            if isinstance(found, BaseTool) or (callable(found) and not isinstance(found, type)):
                return found
        inexact.append(f"the tool {ref.text} is known only at run time (not listed): it may add to the request")
        return None

    def before(self, agent: Any) -> Iterator[tuple[str, str]]:
        """The keys the agent reads that something other than an earlier agent's output_key writes before its first
        model call, and who."""
        if agent.kind != "llm":
            return
        seen: set[str] = set()
        for read in self.model.reads(agent):
            if read.key in seen:
                continue
            seen.add(read.key)
            found = self.model.availability(agent, read.key, app=self.static.app)
            writer = found.writer
            if found.kind == "before" and writer is not None and writer.how != "output_key":
                yield read.key, writer.how

    def workflow_of(self, agent: Any, name: str) -> Any:
        from google.adk import Workflow
        from google.adk.workflow import START

        nodes: dict[str, Any] = {}

        def node(node_id: str) -> Any:
            if node_id == "START":
                return START
            if node_id not in nodes:
                if node_id in self.model.agents:
                    nodes[node_id] = self.agent(self.model.agents[node_id])
                else:
                    facts = self.functions.get(node_id)
                    nodes[node_id] = _stub_node(facts.name if facts is not None else "node")
            return nodes[node_id]

        edges: list[Any] = []
        for number, (source, target, routed) in enumerate(agent.graph):
            if routed:  # the route's value does not change what a node sees on its first turn
                edges.append((node(source), {f"route{number}": node(target)}))
            else:
                edges.append((node(source), node(target)))
        return Workflow(name=name, edges=edges)


_CUSTOM: list[type] = []


def _custom_class() -> type:
    """A google-adk agent standing for a project's custom orchestrator: its sub-agents, none of its code."""
    if not _CUSTOM:
        from google.adk.agents import BaseAgent

        class CustomAgent(BaseAgent):
            """A custom orchestrator read from the code (its `_run_async_impl` is never run here)."""

        _CUSTOM.append(CustomAgent)
    return _CUSTOM[0]


class _OfflineModel:
    """A model by name that never calls out: google-adk's request keeps the name (`llm_request.model`) and makes
    its name-dependent choices by it."""

    _made: ClassVar[dict[str, Any]] = {}

    @classmethod
    def named(cls, name: str) -> Any:
        from google.adk.models.base_llm import BaseLlm

        known = cls._made.get("class")
        if known is None:

            class OfflineModel(BaseLlm):
                """Never called: a preview builds requests only."""

                async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
                    raise RuntimeError("a preview never calls a model")
                    yield  # an async generator, as google-adk's models are

            known = cls._made["class"] = OfflineModel
        return known(model=name)
