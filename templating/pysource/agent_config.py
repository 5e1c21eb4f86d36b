"""google-adk's Agent Config files (`root_agent.yaml` and the files its `sub_agents: - config_path:` name) read into
the agent facts of a scan, as google-adk's `from_config` reads them: `agent_class` (`LlmAgent` by default; a short
name of google-adk's, or a dotted class), `name`, `instruction` (ADK's `{key}` syntax), `output_key`, `sub_agents`
(`config_path:` relative to the file, or `code: pkg.mod.agent`), `tools` and callbacks by dotted name (followed to
the project's Python files as an import from the file's folder would be), `max_iterations` and the like.

Files are composed with PyYAML's safe loader (never constructed into objects), so every value keeps its place: an
instruction's characters map to the file exactly for a literal block scalar (`|`) and a one-line scalar written as
is; any other (a folded or escaped scalar) points at the whole scalar. Without PyYAML (it comes with google-adk: the
`adk` extra), each file is skipped with a reason saying what to install. A file is read only inside the scan's root.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Sequence
from typing import Any

from ..nodes import Span
from .agents import CALLBACKS, _AgentReader
from .found import AgentCall, AgentKind, Instruction, InstructionRef, KeyRef, Ref, Skipped
from .positions import _Mapped, _Module
from .resolve import _Project

_SHORT_CLASSES: dict[str, AgentKind] = {
    "LlmAgent": "llm",
    "Agent": "llm",
    "SequentialAgent": "sequential",
    "ParallelAgent": "parallel",
    "LoopAgent": "loop",
    "Workflow": "workflow",
}
_OPTIONS = ("max_iterations", "include_contents", "mode", "model", "description")
_MAX_FILES = 500  # Agent Config files followed from the given ones
_MAX_BYTES = 1_000_000
INSTALL = "pip install 'agent-prompt-templating[adk]' (PyYAML comes with google-adk)"


def read_configs(project: _Project, reader: _AgentReader, paths: Sequence[str]) -> None:
    """Read the Agent Config files `paths` (and those they name) into `project.result`: their agents in `agents`,
    their instructions in `config_instructions`, what could not be read in `config_skipped`."""
    result = project.result
    try:
        import yaml
    except ImportError:
        for path in paths:
            why = f"an Agent Config file: reading it needs PyYAML, which is not installed ({INSTALL})"
            result.config_skipped.append(Skipped(os.path.basename(path), path, Span(0, 0, 1, 1), why))
        return
    _ConfigReader(project, reader, yaml).run(paths)


class _ConfigReader:
    def __init__(self, project: _Project, reader: _AgentReader, yaml: Any) -> None:
        self.project, self.reader, self.yaml = project, reader, yaml
        self.read: dict[str, str | None] = {}  # real path -> the id of its agent (None: not read)

    def skip(self, path: str, span: Span, why: str, label: str = "") -> None:
        self.project.result.config_skipped.append(Skipped(label or os.path.basename(path), path, span, why))

    def run(self, paths: Sequence[str]) -> None:
        todo = list(paths)
        while todo and len(self.read) < _MAX_FILES:
            path = todo.pop(0)
            real = os.path.realpath(path)
            if real in self.read:
                continue
            self.read[real] = None
            todo += self.file(path, real)

    def file(self, path: str, real: str) -> list[str]:
        """Read one file into an agent; the files its `config_path:` references name (to read next)."""
        root = self.project.root.rstrip(os.sep) + os.sep
        if not real.startswith(root):
            self.skip(path, Span(0, 0, 1, 1), f"{path} is outside the project: not read")
            return []
        try:
            if os.path.getsize(real) > _MAX_BYTES:
                self.skip(path, Span(0, 0, 1, 1), f"{path} is larger than {_MAX_BYTES} bytes: not read")
                return []
            text = self.project.read(path)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            self.skip(path, Span(0, 0, 1, 1), f"{path} cannot be read ({exc})")
            return []
        module = _Module(path, real, text, ast.Module(body=[], type_ignores=[]), linted=False)
        self.project.result.sources.setdefault(path, text)
        try:
            node = self.yaml.compose(text, Loader=self.yaml.SafeLoader)
        except self.yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            at = module.span(mark.index, mark.index) if mark is not None else Span(0, 0, 1, 1)
            self.skip(path, at, f"not valid YAML: {getattr(exc, 'problem', None) or exc}")
            return []
        if not isinstance(node, self.yaml.MappingNode):
            self.skip(path, Span(0, 0, 1, 1), "an Agent Config file holds a mapping (name:, instruction: ...)")
            return []
        more: list[str] = []
        agent = self.agent(module, node, more)
        self.read[real] = agent.id
        self.project.result.agents.append(agent)
        return more

    # -- one agent

    def agent(self, module: _Module, node: Any, more: list[str]) -> AgentCall:
        yaml = self.yaml
        given = {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode)}
        key = f"{module.key}@0"  # one agent a file: what a config_path names
        span = self.span(module, node)
        unread: list[tuple[str, str]] = []
        cls_name = self.scalar(given.get("agent_class")) or "LlmAgent"
        short = cls_name
        for prefix in ("google.adk.agents.", "google.adk.workflow.", "google.adk."):
            short = short.removeprefix(prefix)
        kind: AgentKind
        if short in _SHORT_CLASSES:
            kind = _SHORT_CLASSES[short]
            cls = f"google.adk.{'workflow' if kind == 'workflow' else 'agents'}.{short}"
        else:
            kind = "custom"
            found = self.dotted(module, cls_name, given["agent_class"])
            cls = found.target if found.kind == "class" else cls_name
        name = self.scalar(given.get("name"))
        options = []
        for option in _OPTIONS:
            value = given.get(option)
            if isinstance(value, yaml.ScalarNode):
                options.append((option, _typed(value)))
        sub_agents = None
        if isinstance(given.get("sub_agents"), yaml.SequenceNode):
            sub_agents = tuple(self.agent_ref(module, item, more) for item in given["sub_agents"].value)
        tools = None
        if isinstance(given.get("tools"), yaml.SequenceNode):
            tools = tuple(self.tool_ref(module, item, more) for item in given["tools"].value)
        callbacks = []
        for callback in CALLBACKS:
            for written in (callback, callback + "s"):
                value = given.get(written)
                if isinstance(value, yaml.SequenceNode):
                    callbacks.append((callback, tuple(self.code_ref(module, item) for item in value.value)))
                elif value is not None:
                    callbacks.append((callback, (self.code_ref(module, value),)))
        output_key = None
        if isinstance(given.get("output_key"), yaml.ScalarNode) and given["output_key"].tag.endswith(":str"):
            output_key = KeyRef(given["output_key"].value, module.path, self.span(module, given["output_key"]))
        instructions = []
        for role in ("instruction", "global_instruction", "static_instruction"):
            value = given.get(role)
            if value is not None:
                instructions.append((role, self.instruction(module, value, name or key, role)))
        for unsupported in ("edges", "state_schema", "model_code", "state_schema_code"):
            if unsupported in given:
                unread.append((unsupported, f"{unsupported}: in an Agent Config file is not read"))
        return AgentCall(
            key,
            kind,
            cls,
            name,
            module.path,
            span,
            module.key,
            sub_agents=sub_agents,
            tools=tools,
            callbacks=tuple(callbacks),
            output_key=output_key,
            instructions=tuple(instructions),
            options=tuple(options),
            unread=tuple(unread),
        )

    def instruction(self, module: _Module, node: Any, label: str, role: str) -> InstructionRef:
        span = self.span(module, node)
        if not isinstance(node, self.yaml.ScalarNode) or not node.tag.endswith(":str"):
            return InstructionRef("unknown", module.path, span, reason=f"{role}: is not a string")
        mapped = self.mapped(module, node)
        if role == "static_instruction":  # sent as written, never injected: not an instruction to check
            return InstructionRef("text", module.path, span, text=node.value)
        first = mapped.mods[0] if mapped.text else module
        placed = first.span(mapped.starts[0], max(mapped.ends[-1], mapped.starts[0] + 1)) if mapped.text else span
        found = Instruction(
            f"{label}.{role}",
            (label, f"{label}.{role}"),
            "adk",
            mapped.text,
            module.path,
            placed,
            mapped,
            (),
            module.key,
            ((module.path, span),),
        )
        self.project.result.config_instructions.append(found)
        return InstructionRef("text", module.path, span, found.key, found.text, "adk")

    def mapped(self, module: _Module, node: Any) -> _Mapped:
        """The scalar's value, each character placed where it is written when that is exact, else on the scalar."""
        value: str = node.value
        start, end = node.start_mark.index, node.end_mark.index
        text = module.text
        if node.style == "|":
            found = _literal_block(text, start, end, value)
            if found is not None:
                return _Mapped(value, [module] * len(value), found[0], found[1])
        elif node.style in (None, "'", '"'):
            inner = (start + 1, end - 1) if node.style else (start, end)
            if text[inner[0] : inner[1]] == value and "\n" not in value:
                at, size = inner[0], len(value)
                return _Mapped(value, [module] * size, range(at, at + size), range(at + 1, at + size + 1))
        return _Mapped(value, [module] * len(value), [start] * len(value), [end] * len(value))

    # -- references

    def agent_ref(self, module: _Module, node: Any, more: list[str]) -> Ref:
        yaml = self.yaml
        span = self.span(module, node)
        if not isinstance(node, yaml.MappingNode):
            return Ref("unknown", text=_shown(node), path=module.path, span=span, reason="not a config_path: or code:")
        given = {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode)}
        if "config_path" in given:
            return self.config_path(module, given["config_path"], more)
        if "code" in given:
            return self.dotted(module, self.scalar(given["code"]) or "", given["code"])
        return Ref("unknown", text=_shown(node), path=module.path, span=span, reason="neither config_path: nor code:")

    def config_path(self, module: _Module, node: Any, more: list[str]) -> Ref:
        relative = self.scalar(node) or ""
        span = self.span(module, node)
        if not relative or os.path.isabs(relative) or ".." in relative.replace("\\", "/").split("/"):
            why = "google-adk takes a config_path relative to the file, inside its folder"
            return Ref("unknown", text=relative, path=module.path, span=span, reason=why)
        target = os.path.join(os.path.dirname(module.path), relative)
        real = os.path.realpath(target)
        if not os.path.isfile(real):
            return Ref("unknown", text=relative, path=module.path, span=span, reason=f"{target} is not there")
        more.append(target)
        return Ref("agent", f"{real}@0", relative, module.path, span)

    def tool_ref(self, module: _Module, node: Any, more: list[str]) -> Ref:
        yaml = self.yaml
        if isinstance(node, yaml.MappingNode):
            given = {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode)}
            name = self.scalar(given.get("name")) or ""
            args = given.get("args")
            if name.rsplit(".", 1)[-1] == "AgentTool" and isinstance(args, yaml.MappingNode):
                inner = {k.value: v for k, v in args.value if isinstance(k, yaml.ScalarNode)}
                agent = inner.get("agent")
                if agent is not None:
                    found = self.agent_ref(module, agent, more)
                    return Ref(found.kind, found.target, found.text, found.path, found.span, found.reason, "AgentTool")
            return self.code_ref(module, node)
        return self.code_ref(module, node)

    def code_ref(self, module: _Module, node: Any) -> Ref:
        """A `name: pkg.mod.func` (or a bare dotted string): a project function, agent or class when it is found."""
        yaml = self.yaml
        if isinstance(node, yaml.MappingNode):
            given = {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode)}
            node = given.get("name", node)
        name = self.scalar(node)
        if not name:
            return Ref("unknown", text=_shown(node), path=module.path, span=self.span(module, node), reason="no name")
        if "." not in name:  # one of google-adk's tools, by its name
            return Ref("external", f"google.adk.tools.{name}", name, module.path, self.span(module, node))
        return self.dotted(module, name, node)

    def dotted(self, module: _Module, name: str, node: Any) -> Ref:
        span = self.span(module, node)
        if name.startswith("."):  # relative to the file's folder, as google-adk resolves it
            name = os.path.basename(os.path.dirname(os.path.abspath(module.path))) + name
        where, _, attr = name.rpartition(".")
        found = self.project.find_module(module, where, 0) if where else None
        if found is None or attr not in found.bindings:
            if name.startswith("google."):
                return Ref("external", name, name, module.path, span)
            why = f"{name} is not found among the project's files"
            return Ref("dotted", name, name, module.path, span, why)
        ref = self.reader._ref(found, ast.Name(attr), None, 0)
        return Ref(ref.kind, ref.target, name, module.path, span, ref.reason)

    # -- scalars

    def scalar(self, node: Any) -> str | None:
        return node.value if isinstance(node, self.yaml.ScalarNode) and isinstance(node.value, str) else None

    def span(self, module: _Module, node: Any) -> Span:
        return module.span(node.start_mark.index, node.end_mark.index)


def _shown(node: Any) -> str:
    value = getattr(node, "value", "")
    return value if isinstance(value, str) else type(node).__name__


def _typed(node: Any) -> str | int | bool | float | None:
    """A plain scalar's value as YAML's core schema types it (`3` an int, `true` a bool), else its text."""
    value: str = node.value
    tag: str = node.tag
    try:
        if tag.endswith(":int"):
            return int(value)
        if tag.endswith(":float"):
            return float(value)
    except ValueError:
        return value
    if tag.endswith(":bool"):
        return value.lower() in ("true", "yes", "on")
    if tag.endswith(":null"):
        return None
    return value


def _literal_block(text: str, start: int, end: int, value: str) -> tuple[list[int], list[int]] | None:
    """Where each character of a literal block scalar (`|`, `|-`, `|+`, `|2`) is written, when reading its lines
    gives exactly `value`; else None."""
    header_end = text.find("\n", start, end)
    if header_end < 0:
        return None
    header = text[start + 1 : header_end].split("#", 1)[0].strip()
    chomp = "-" if "-" in header else "+" if "+" in header else ""
    digits = "".join(ch for ch in header if ch.isdigit())
    lines: list[tuple[int, int]] = []  # (start, end) of each line after the header, its break excluded
    at = header_end + 1
    while at < end:
        stop = text.find("\n", at, end)
        stop = end if stop < 0 else stop
        lines.append((at, stop))
        at = stop + 1
    content = [(a, b) for a, b in lines if text[a:b].strip(" ")]
    if not content:
        return None
    first = text[content[0][0] : content[0][1]]
    indent = int(digits) if digits else len(first) - len(first.lstrip(" "))
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for a, b in lines:
        line = text[a:b]
        if line.strip(" ") and len(line) - len(line.lstrip(" ")) < indent:
            break  # the scalar ended before this line
        body = a + indent if line.strip(" ") else b
        for i in range(body, b):
            chars.append(text[i])
            starts.append(i)
            ends.append(i + 1)
        chars.append("\n")
        starts.append(b)
        ends.append(b + 1)
    while chars and chars[-1] == "\n" and (len(chars) < 2 or chars[-2] == "\n"):  # trailing blank lines
        if chomp == "+":
            break
        chars.pop(), starts.pop(), ends.pop()
    if chomp == "-" and chars and chars[-1] == "\n":
        chars.pop(), starts.pop(), ends.pop()
    if "".join(chars) != value:
        return None
    return starts, ends
