"""What a scan finds in Python code: instructions (each character placed in its file), instructions skipped
(with the reason), state writes, and the [`Scan`][templating.pysource.Scan] that holds them."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Literal as _Literal
from typing import TypeAlias

from ..nodes import Span
from ..schema import Schema
from .positions import _Mapped
from .reading import CONSTANT_SUFFIXES as CONSTANT_SUFFIXES
from .reading import PythonSourceError

Kind: TypeAlias = _Literal["angle", "adk", "jinja"]


@dataclass(frozen=True, slots=True, eq=False)
class StateSchema:
    """The `state_schema=` of one ADK agent: `agent` names the call (`Agent(name="planner")`),
    `model` the class as written; `path`/`span` are where the class is defined (where the argument is,
    when it cannot be read). `schema` is its fields, or `None` with `reason` saying why it is unknown.
    `given_in`: the Python file of the agent's call (the file whose scan finds it)."""

    agent: str
    model: str
    path: str
    span: Span
    schema: Schema | None
    reason: str | None = None
    given_in: str = ""


@dataclass(frozen=True, slots=True)
class InstructionKey:
    """Which instruction, of all a scan finds: the file its text starts in (`file`, its resolved path), its
    name (`name`, the label: the constant, or the agent's call site), and where it is written there
    (`start`, `end`).

    Two instructions can share all of these: `BASE + QUIZ` and `BASE + MEMORY + QUIZ` given to two
    agents without a `name=` both start where `BASE` does and end where `QUIZ` does. Their `dialect`
    and `text` tell them apart, so the key is exact: two instructions of one scan never share it, and
    the same instruction read by another scan of the same files has the same key.
    """

    file: str
    name: str
    start: int
    end: int
    dialect: Kind
    text: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class Instruction:
    """One instruction string found in Python code.

    `label` names it in findings (the constant `ROOT_PROMPT`, or the call site
    `LlmAgent(name="planner").instruction`); `names` are what `templating render FILE.py:NAME`
    accepts for it; `dialect` is `"angle"`, `"adk"` or `"jinja"`; `text` the string's
    value; `path`/`span` where it starts. `locate` maps a span of `text` into the file.
    `state_schemas`: the `state_schema=` models of the ADK agents given it, read from the code.
    `file`: the resolved path of `path` (computed once, when the file was read); `key` is the
    instruction's identity ([`InstructionKey`][templating.pysource.InstructionKey]); `given_at`: where
    the Python code gives it (each call site's argument, or the constant's value: file and span), and
    `given_in` those files.
    """

    label: str
    names: tuple[str, ...]
    dialect: Kind
    text: str
    path: str
    span: Span
    _mapped: _Mapped = field(repr=False, compare=False)
    # the state_schema= of each google-adk agent given this instruction (read by templating.pysource.models)
    state_schemas: tuple[StateSchema, ...] = ()
    file: str = ""
    # where the code gives this instruction: each call site's argument (the constant's value), file and span
    given_at: tuple[tuple[str, Span], ...] = field(default=(), compare=False)

    @property
    def files(self) -> tuple[str, ...]:
        """The files its characters are written in, `path` first (a constant of one module joined to another's)."""
        paths = {module.path for module in set(self._mapped.mods)}
        paths.discard(self.path)
        return (self.path, *sorted(paths))

    @property
    def given_in(self) -> tuple[str, ...]:
        """The Python files whose code gives this instruction (its call sites, the module of its constant)."""
        return tuple(dict.fromkeys(path for path, _ in self.given_at))

    @property
    def key(self) -> InstructionKey:
        """This instruction's identity: its file, name and span, with its dialect and text (see
        [`InstructionKey`][templating.pysource.InstructionKey])."""
        file = self.file or self.path
        return InstructionKey(file, self.label, self.span.start, self.span.end, self.dialect, self.text)

    def locate(self, start: int, end: int) -> tuple[str, Span]:
        """The file and the span in it of `text[start:end]` (clipped to the file of its first character)."""
        m = self._mapped
        if not m.text:
            return self.path, self.span
        start = min(max(start, 0), len(m.text) - 1)
        last = min(max(end - 1, start), len(m.text) - 1)
        module = m.mods[start]
        while last > start and m.mods[last] is not module:
            last -= 1
        file_start, file_end = m.starts[start], max(m.ends[last], m.starts[start] + 1)
        return module.path, module.span(file_start, file_end)

    def written_as_is(self, path: str) -> list[int | None]:
        """For each character of `text`, its offset in the `.py` file `path` (any path to it: compared by
        real path) when it is written there as itself, one character of a string literal (no escape
        sequence, no `{{` of an f-string); None for any other (from another file, or written otherwise).
        A fix edits only characters written as is."""
        m = self._mapped
        real = os.path.realpath(path)
        modules = {id(module): module for module in m.mods}  # one per character: each module resolved once
        here = {key: os.path.realpath(module.path) == real for key, module in modules.items()}
        out: list[int | None] = []
        for char, module, start, end in zip(m.text, m.mods, m.starts, m.ends, strict=True):
            ok = here[id(module)] and end - start == 1 and module.text[start:end] == char
            out.append(start if ok else None)
        return out

    def same_as(self, other: Instruction) -> bool:
        """Whether `other` is this instruction read again, as it was: equal, given at the same places, and each of
        its characters written at the same place of a file with the same text (a scan of a file that did not
        change finds it again as another object)."""
        if self is other:
            return True
        if self != other or self.given_at != other.given_at or self.state_schemas:  # (a schema is compared by identity)
            return False
        a, b = self._mapped, other._mapped
        if (
            type(a.starts) is not type(b.starts)
            or a.starts != b.starts
            or a.ends != b.ends
            or len(a.mods) != len(b.mods)
        ):
            return False
        mine, theirs = list(dict.fromkeys(a.mods)), list(dict.fromkeys(b.mods))  # each file, in order of first use
        if len(mine) != len(theirs) or any(
            x.path != y.path or x.text != y.text for x, y in zip(mine, theirs, strict=True)
        ):
            return False
        if len(mine) == 1:
            return True
        number = {id(module): n for n, module in enumerate(mine)}
        numbered = {id(module): n for n, module in enumerate(theirs)}
        return list(map(number.__getitem__, map(id, a.mods))) == list(map(numbered.__getitem__, map(id, b.mods)))

    def file_text(self, path: str) -> str | None:
        """The text of the `.py` file `path` that part of this instruction was written in (as read)."""
        for module in self._mapped.mods:
            if module.path == path:
                return module.text
        return None


@dataclass(frozen=True, slots=True)
class Skipped:
    """An instruction whose text is not known without running the code (`reason` says why); `names` are
    those `templating render FILE.py:NAME` would know it by (an agent's name, `name.instruction`)."""

    label: str
    path: str
    span: Span
    reason: str
    names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Write:
    """A state key the code writes (`key`), or a write whose key is not a literal (`key` is None).

    `function`: the id of the function or lambda the write is in (see
    [`FunctionFacts`][templating.pysource.FunctionFacts]), None at module level: the agent model
    attributes a write to the tool, callback or orchestrator that makes it."""

    key: str | None
    path: str
    span: Span
    how: str
    function: str | None = field(default=None, compare=False)


# --------------------------------------------------------------------------------------------
# Agents as the code builds them: the facts the agent model (templating.agent_model) is built from

AgentKind: TypeAlias = _Literal["llm", "sequential", "parallel", "loop", "workflow", "custom", "app", "join"]
RefKind: TypeAlias = _Literal["agent", "function", "class", "external", "builtin", "param", "dotted", "unknown"]


@dataclass(frozen=True, slots=True)
class Ref:
    """What an expression of agent code names: an agent call (`kind="agent"`, `target` its
    [`AgentCall.id`][templating.pysource.AgentCall]), a project function or lambda (`"function"`, its
    [`FunctionFacts.id`][templating.pysource.FunctionFacts]), an instance of a project class that is no agent
    (`"class"`: a tool class; `target` the class's id), a name from a library (`"external"`: `target` its dotted
    origin, `google.adk.tools.exit_loop`), google-adk's `START` (`"builtin"`), a parameter of the enclosing
    function (`"param"`: `target` its name; a custom agent's `__init__` binds it per instance), a dotted name an
    Agent Config file gives (`"dotted"`: `pkg.mod.attr`, not found among the project's files), or something known
    only at run time (`"unknown"`, `reason` says why). `text` is the expression as written (short), `path`/`span`
    where; `wrapper` is `"AgentTool"` for an agent given as `AgentTool(agent=...)`."""

    kind: RefKind
    target: str = ""
    text: str = ""
    path: str = ""
    span: Span | None = None
    reason: str | None = None
    wrapper: str | None = None


@dataclass(frozen=True, slots=True)
class KeyRef:
    """An `output_key=`: the key (`None` when it is known only at run time, `reason` says why), and where."""

    key: str | None
    path: str
    span: Span
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class InstructionRef:
    """An agent's `instruction=` / `global_instruction=` / `static_instruction=` as given.

    `kind`: `"text"` (a string google-adk injects: `text` is it, `key` the
    [`Instruction`][templating.pysource.Instruction] the scan found for it, None when it was not recorded, as for
    an agent read outside the linted files or from an Agent Config file), `"templating"` (one of templating's
    providers, which renders it itself: `key` its instruction), `"provider"` (a function google-adk calls: its
    result is never injected) or `"unknown"` (`reason` says why). `path`/`span`: the argument."""

    kind: _Literal["text", "templating", "provider", "unknown"]
    path: str
    span: Span
    key: InstructionKey | None = None
    text: str | None = None
    dialect: Kind = "adk"
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class SchemaRef:
    """A `state_schema=` model as google-adk checks it: `fields` are the names of its `model_fields` (what
    `extra="allow"` does not widen), None when they are not all known (`reason` says why); `model` the class as
    written, `path`/`span` where the class is defined (the argument, when it is not found)."""

    model: str
    path: str
    span: Span
    fields: frozenset[str] | None
    reason: str | None = None

    def declares(self, key: str) -> bool | None:
        """Whether google-adk accepts a write of `key`: a key holding `:` always; else whether it is a field
        (None: not known)."""
        if ":" in key:
            return True
        return None if self.fields is None else key in self.fields


@dataclass(frozen=True, slots=True)
class WorkflowEdge:
    """One edge of a google-adk 2.x `Workflow`, as its graph parser expands `edges=[...]`: from `source` to
    `target` (START is a `"builtin"` ref), taken only on `route` when `routed`."""

    source: Ref
    target: Ref
    route: str | int | bool | None = None
    routed: bool = False


@dataclass(frozen=True, slots=True)
class Step:
    """What a function does with state, in the order written: a write (`kind="write"`, `key`, `how`), a call of
    another project function (`"call"`: `field` is its [`FunctionFacts.id`][templating.pysource.FunctionFacts]),
    or, in a custom agent's `_run_async_impl`, a run of a sub-agent (`"run"`: `field` the attribute,
    `self.writer` -> `"writer"`, or `"sub_agents"` with `index`; `"run_all"`: every sub-agent in order, a loop
    over `self.sub_agents`; `field` None: an agent known only at run time). `conditional`: under an `if`, a
    loop, a `try` or a `match` (a write guarded by its own key being absent, `if "k" not in state:`, is not);
    `looped`: inside a `for`/`while`."""

    kind: _Literal["write", "call", "run", "run_all"]
    path: str
    span: Span
    key: str | None = None
    how: str = ""
    field: str | None = None
    index: int | None = None
    conditional: bool = False
    looped: bool = False


@dataclass(frozen=True, slots=True)
class FunctionFacts:
    """A project function (or lambda) that agent code names: a tool, a callback, a workflow node, a method of a
    custom agent or tool class, and the functions they call. `id` is its file and the offset of its definition
    (`/app/tools.py@120`); `steps` its own state writes in order (a custom agent's `_run_async_impl`: its
    sub-agent runs too); `calls` the project functions it calls (and those defined inside it); `escalates`: it
    sets `.escalate = True` (ends a LoopAgent)."""

    id: str
    name: str
    path: str
    span: Span
    steps: tuple[Step, ...] = ()
    calls: tuple[str, ...] = ()
    escalates: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class AgentCall:
    """A call that builds a google-adk agent, `App`, `JoinNode`, or an agent of a project class deriving from
    `BaseAgent` (a custom orchestrator), read from the code (or from an Agent Config file).

    `id` is its file and offset (stable); `kind` one of `llm`, `sequential`, `parallel`, `loop`, `workflow`,
    `custom`, `app`, `join`; `cls` the class's dotted origin (`google.adk.agents.SequentialAgent`; a project
    class's id for `custom`); `name` the `name=` literal; `bound` the module-level names it is assigned to
    (`root_agent`); `in_function` the function it is built in (a factory's, or a custom agent's `__init__`,
    whose parameters its `"param"` refs name). The keywords the agent model reads: `sub_agents`, `tools` (None:
    not given), `callbacks` (`before_agent_callback` ... `after_tool_callback`, each one ref or several),
    `output_key`, `instructions` (`instruction`, `global_instruction`, `static_instruction`), `state_schema`,
    `edges` (a Workflow's), `options` (literal values: `max_iterations`, `include_contents`, `mode`, `model`,
    `description`, an App's `name`), `fields` (other keywords naming agents or objects: an App's `root_agent` and
    `plugins`, a custom agent's fields), and `unread`: each keyword whose value is not known statically, with why.
    """

    id: str
    kind: AgentKind
    cls: str
    name: str | None
    path: str
    span: Span
    file: str = ""
    bound: tuple[str, ...] = ()
    in_function: str | None = None
    sub_agents: tuple[Ref, ...] | None = None
    tools: tuple[Ref, ...] | None = None
    callbacks: tuple[tuple[str, tuple[Ref, ...]], ...] = ()
    output_key: KeyRef | None = None
    instructions: tuple[tuple[str, InstructionRef], ...] = ()
    state_schema: SchemaRef | None = None
    edges: tuple[WorkflowEdge, ...] | None = None
    options: tuple[tuple[str, str | int | bool | float | None], ...] = ()
    fields: tuple[tuple[str, tuple[Ref, ...]], ...] = ()
    unread: tuple[tuple[str, str], ...] = ()

    def same_as(self, other: AgentCall) -> bool:
        """Whether `other` is this call read again, as it was: every field equal (calls compare by identity)."""
        return self is other or all(getattr(self, name) == getattr(other, name) for name in _CALL_FIELDS)

    def option(self, name: str, default: str | int | bool | float | None = None) -> str | int | bool | float | None:
        """The literal value of the keyword `name`, or `default` when it is not given as a literal."""
        return next((value for key, value in self.options if key == name), default)

    def callback(self, name: str) -> tuple[Ref, ...]:
        """The refs given to the callback keyword `name` (`before_agent_callback`), none when not given."""
        return next((refs for key, refs in self.callbacks if key == name), ())

    def instruction(self, role: str = "instruction") -> InstructionRef | None:
        """The `instruction` (or `global_instruction`, `static_instruction`) given, if any."""
        return next((ref for key, ref in self.instructions if key == role), None)

    def field(self, name: str) -> tuple[Ref, ...] | None:
        """The refs given to the keyword `name` (a custom agent's field, an App's `root_agent`), None if not given."""
        return next((refs for key, refs in self.fields if key == name), None)

    def why_unread(self, name: str) -> str | None:
        """Why the keyword `name` could not be read, if it could not."""
        return next((why for key, why in self.unread if key == name), None)

    def named(self) -> list[Ref]:
        """What the call names that may be a function or class of the project: its sub-agents, tools, callbacks,
        other fields and workflow edges."""
        refs: list[Ref] = [*(self.sub_agents or ()), *(self.tools or ())]
        refs += [r for _, rs in self.callbacks for r in rs] + [r for _, rs in self.fields for r in rs]
        for edge in self.edges or ():
            refs += [edge.source, edge.target]
        return refs


_CALL_FIELDS = tuple(f.name for f in fields(AgentCall))


@dataclass(frozen=True, slots=True)
class AgentClass:
    """A project class deriving from google-adk's `BaseAgent`: a custom orchestrator. `run` is the id of its
    `_run_async_impl` (its [`FunctionFacts`][templating.pysource.FunctionFacts] hold the steps), None when it has
    none the scan could read (`reason`); `init` the parameters of its own `__init__` (after `self`), None without
    one (pydantic fields are then the call's keywords); `init_fields` what that `__init__` gives
    `super().__init__(...)`, each keyword's refs (a `"param"` ref names a parameter); `methods` the ids of its
    methods (their state writes are the agent's)."""

    id: str
    name: str
    path: str
    span: Span
    run: str | None = None
    reason: str | None = None
    init: tuple[str, ...] | None = None
    init_fields: tuple[tuple[str, tuple[Ref, ...]], ...] = ()
    methods: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RunnerCall:
    """A `Runner(...)` / `InMemoryRunner(...)` call: the agent or App it runs, and the `app_name=` literal."""

    path: str
    span: Span
    file: str = ""
    agent: Ref | None = None
    app: Ref | None = None
    app_name: str | None = None


@dataclass(frozen=True, slots=True)
class RootBinding:
    """A module-level `root_agent = ...` (what `adk web` and `adk run` load), with the ref it resolves to."""

    path: str
    file: str
    span: Span
    ref: Ref


@dataclass(frozen=True, slots=True)
class SessionStart:
    """A `create_session(state=...)` (or `Session(state=...)`) call: the keys it gives (`keys` None when some are
    known only at run time), and the agents and Apps its module names at module level or runs with a Runner
    (`agents`: agent call ids), which tie it to their apps."""

    path: str
    span: Span
    keys: tuple[str, ...] | None
    agents: tuple[str, ...] = ()


@dataclass(slots=True)
class Scan:
    """What `scan` found: the instructions, the skipped ones, the state writes, and the text of
    every Python file read (imported modules outside the given files included). An agent's
    `static_instruction=` is sent as written, so it is no instruction: it is kept apart."""

    instructions: list[Instruction] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    errors: list[PythonSourceError] = field(default_factory=list)
    # every agent's static_instruction= whose text is known: sent to the model as written, never rendered
    static_instructions: list[Instruction] = field(default_factory=list)
    # every google-adk agent's state_schema= met, readable or not (the unreadable ones say why)
    state_schemas: list[StateSchema] = field(default_factory=list)
    # the files the scan looked for and could not read: the text files an instruction reads (missing, too large,
    # not UTF-8, outside the root), and the modules an import could name that are not there (found so with a
    # `stat`, not read): a run that depends on them not being there (the lint cache checks them again)
    unread: list[str] = field(default_factory=list)
    # what the agent model is built from (templating.agent_model): the agent calls, the custom agent classes,
    # the functions agent code names (and those they call), the runners, `root_agent` bindings, the sessions
    # started with a state; and what Agent Config files (root_agent.yaml) hold that the Python scan does not: their
    # instructions (not linted yet) and what could not be read in them
    agents: list[AgentCall] = field(default_factory=list)
    agent_classes: dict[str, AgentClass] = field(default_factory=dict)
    functions: dict[str, FunctionFacts] = field(default_factory=dict)
    class_methods: dict[str, tuple[str, ...]] = field(default_factory=dict)  # a tool class's id -> its methods
    runners: list[RunnerCall] = field(default_factory=list)
    roots: list[RootBinding] = field(default_factory=list)
    sessions: list[SessionStart] = field(default_factory=list)
    config_instructions: list[Instruction] = field(default_factory=list)
    config_skipped: list[Skipped] = field(default_factory=list)

    @property
    def written(self) -> frozenset[str] | None:
        """The keys written, or None when some write's key is known only at run time, or a file to
        scan was not valid Python (what it writes is unknown)."""
        if self.errors or any(w.key is None for w in self.writes):
            return None
        return frozenset(w.key for w in self.writes if w.key is not None)
