"""Instructions where they live: the instruction strings inside Python agent code, found with `ast`.

A `.py` file is parsed, never imported or run. Each instruction string (the template given to
`templating.instruction`/`Template`/`parse`/`render`/`jinja`, an `Agent`'s
`instruction=`/`global_instruction=`, a Google ADK `Agent`/`LlmAgent`'s in ADK's `{key}`
dialect, and module constants named `*PROMPT`/`*INSTRUCTION` that hold a placeholder and are
not Python format strings) is
resolved from literals, implicit concatenation, `+`, `textwrap.dedent`, `.strip()` and
module-level names (in the same module or imported from another one), and every character of it
keeps the place in the `.py` file it was written at, so findings point into the Python source.
A call without arguments of a project function that ends in its one `return` of such a value
(`instruction=return_instructions_root()`) stands for what it returns. Anything else (an
f-string, another call, a parameter) is skipped, with the reason. The module also
collects the state keys the code writes (`output_key`, `ctx.state["k"] = ...`, `state_delta`,
`create_session(state=...)`, a workflow node's `Event(state=...)`), for the rule that a key read is
written somewhere (T014), and the agents the code builds (`AgentCall`: google-adk's agents, `App`, custom
`BaseAgent` subclasses, and those of Agent Config files), the functions they name (`FunctionFacts`: their state
writes in order), runners, `root_agent` bindings and sessions started with a state, for the agent model.

Import the names from here. The package's modules, each importing only those before it: `reading`
(bytes to text, parsing), `positions` (modules and strings with each character's place), `found`
(the data types), `models` (an ADK agent's `state_schema=` model read from its source), `syntax`
(what the tree alone says), `imports` (modules loaded, imports and names followed), `resolve` (what
an expression stands for, what was found), `agent_refs` (what an agent's keywords name), `agent_functions`
(the functions agent code names, with their writes in order, and custom agent classes), `agents` (the agent
calls, read in the same walk), `agent_config` (google-adk's Agent Config YAML files), `visitor` (the walk,
and `scan`).

The package reads Python sources and nothing more: it sits below the linter and imports nothing of
`templating.linter`. The rules over what it finds are the linter's (`lint_instruction`, `never_written`,
`skipped_findings`, importable from `templating.linter`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names
from .reading import CONSTANT_SUFFIXES, PythonSourceError, python_text

if TYPE_CHECKING:
    from .found import (
        AgentCall,
        AgentClass,
        FunctionFacts,
        Instruction,
        InstructionKey,
        InstructionRef,
        KeyRef,
        Ref,
        RootBinding,
        RunnerCall,
        Scan,
        SchemaRef,
        SessionStart,
        Skipped,
        StateSchema,
        Step,
        WorkflowEdge,
        Write,
    )
    from .found import AgentKind as AgentKind
    from .found import Kind as Kind
    from .imports import FileAnswers
    from .visitor import scan

# submodule -> the names it defines, each imported when one is first used (PEP 562): reading a file's text
# (`python_text`, as the lint cache does) loads neither the scan's data types nor the walk and the resolver.
_MODULES = {
    "found": (
        "AgentCall",
        "AgentClass",
        "FunctionFacts",
        "Instruction",
        "InstructionKey",
        "InstructionRef",
        "KeyRef",
        "Ref",
        "RootBinding",
        "RunnerCall",
        "Scan",
        "SchemaRef",
        "SessionStart",
        "Skipped",
        "StateSchema",
        "Step",
        "WorkflowEdge",
        "Write",
        "AgentKind",
        "Kind",
    ),
    "imports": ("FileAnswers",),
    "visitor": ("scan",),
}
_LAZY, _load, __dir__ = lazy_names(globals(), _MODULES)

if not TYPE_CHECKING:  # type checkers see the imports above
    __getattr__ = _load


__all__ = [
    "CONSTANT_SUFFIXES",
    "AgentCall",
    "AgentClass",
    "FileAnswers",
    "FunctionFacts",
    "Instruction",
    "InstructionKey",
    "InstructionRef",
    "KeyRef",
    "PythonSourceError",
    "Ref",
    "RootBinding",
    "RunnerCall",
    "Scan",
    "SchemaRef",
    "SessionStart",
    "Skipped",
    "StateSchema",
    "Step",
    "WorkflowEdge",
    "Write",
    "python_text",
    "scan",
]
