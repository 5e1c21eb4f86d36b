"""The truth the agent model is held to (issue 33, deliverable 10): what google-adk 2.13 does on an app's first turn.

Each folder under `tests/fixtures/adk_truth/` is a small ADK app written the way real authors write them (a package
whose `__init__.py` imports `agent`, `root_agent` in `agent.py`, prompts in `prompt.py`, tools writing
`tool_context.state`, `sub_agents/` packages, callbacks in their own module, Agent Config YAML...), and an
`expect.toml` saying, for the initial state the app declares:

- what google-adk does on the first turn (`[[run]]`: the app `adk run` would load, the user's message, the tools the
  model calls): raises `KeyError` (which key, in which agent), raises `StateSchemaError` (which key, which schema,
  written while which agent ran), or `runs` (and what the model receives verbatim, or never);
- what the linter should say (`[lint]`: `error`, `warning`, `at-most-warning` or `nothing`, with the rule, key and
  agent).

Two halves:

1. The truth (`test_google_adk_does_what_the_case_says`): every run goes through google-adk itself, loaded as
   `adk run` loads it (`AgentLoader`), every LlmAgent's model replaced by a fake that records what it receives and
   never calls out, one turn through `InMemoryRunner` with the declared initial state; the outcome must be the one
   `expect.toml` states. Needs the `adk` extra (skipped with a reason unless `TEMPLATING_REQUIRE_ADK=1`).
2. The comparison (`test_the_linter_agrees_with_google_adk`, through `truth_mismatches`): each case linted with
   `templating.lint_project`; every error-level finding of the agent-model rules must be an exception google-adk
   raises there, whatever the model does (same key, same agent); every exception google-adk raises must be covered
   by at least a warning; and the findings must be what `[lint]` says. Cases today's linter does not pass carry
   `xfail = "..."` in their `[lint]` table (strict: remove it when the rule lands and the case passes).

The comparison reads the outcomes from `expect.toml`, which the truth half proves, so it runs without google-adk.
"""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import json
import os
import re
import shutil
import sys
import tomllib
import warnings
from collections.abc import AsyncGenerator, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

import pytest

from templating import lint_project
from templating.linter.registry import Diagnostic
from templating.linter.result import CheckedTemplate, LintResult
from templating.nodes import Span

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "adk_truth"
CASES = sorted(p.name for p in FIXTURES.iterdir() if (p / "expect.toml").is_file())

HAVE_ADK = importlib.util.find_spec("google") is not None and importlib.util.find_spec("google.adk") is not None
NEEDS_ADK = pytest.mark.skipif(
    not HAVE_ADK and os.environ.get("TEMPLATING_REQUIRE_ADK") != "1",
    reason="google-adk is not installed (pip install '.[adk]'); TEMPLATING_REQUIRE_ADK=1 makes this a failure",
)

# Placeholder credentials: nothing here reaches a model service, but some google-adk paths read them.
FAKE_ENV = {
    "GOOGLE_API_KEY": "fake-key-never-used",
    "GOOGLE_GENAI_USE_VERTEXAI": "0",
    "GOOGLE_CLOUD_PROJECT": "fake-project",
    "GOOGLE_CLOUD_LOCATION": "us-central1",
    "OTEL_SDK_DISABLED": "true",
}

# The rules whose findings predict a first-turn exception: T014 key-never-written, the order rules (T024
# written-later, T025 parallel-race, T026 loop-first-iteration, T027 maybe-written) and T028
# schema-undeclared-write. T001 (a key not in a state_schema) is held to the same standard: an error only where
# google-adk enforces the schema. Codes not in the registry yet are simply never found.
PREDICTING_RULES = frozenset({"T001", "T014", "T024", "T025", "T026", "T027", "T028"})
# Every rule the agent model feeds: the predicting ones, and the silent cases (T029 `<key>` in a plain ADK
# string, T030 a key named in prose but not injected, T031 a workflow placeholder sent literally).
AGENT_MODEL_RULES = PREDICTING_RULES | {"T029", "T030", "T031"}

OUTCOMES = ("KeyError", "StateSchemaError", "runs")
LINT_EXPECTATIONS = ("error", "warning", "at-most-warning", "nothing")
DECLARED = ("pyproject", "create_session", "evalset", "none")


# -- the cases, as expect.toml states them


@dataclass(frozen=True)
class Run:
    """One first turn of one app of a case, and what google-adk does on it."""

    app: str
    message: str
    adk: str
    key: str | None = None
    agent: str | None = None
    schema: str | None = None
    tool_calls: dict[str, dict[str, Any]] = field(default_factory=dict)
    sent: dict[str, list[str]] = field(default_factory=dict)
    not_sent: dict[str, list[str]] = field(default_factory=dict)
    name: str = ""


@dataclass(frozen=True)
class LintExpectation:
    expect: str
    code: str | None = None
    key: str | None = None
    agent: str | None = None
    xfail: str | None = None


@dataclass(frozen=True)
class Case:
    name: str
    path: Path
    summary: str
    declared: str
    state: dict[str, Any]
    runs: tuple[Run, ...]
    lint: LintExpectation
    evalset: str | None = None


def _only(table: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(table) - allowed)
    assert not unknown, f"{where}: unknown key(s) {unknown} (known: {sorted(allowed)})"


def _tool_calls(raw: dict[str, Any], where: str) -> dict[str, dict[str, Any]]:
    """`{agent = "tool"}` or `{agent = {name = "tool", args = {...}}}`: the tool the agent's first model call calls."""
    calls = {}
    for agent, call in raw.items():
        call = {"name": call} if isinstance(call, str) else call
        _only(call, {"name", "args"}, f"{where} tool_calls.{agent}")
        calls[agent] = {"name": call["name"], "args": dict(call.get("args", {}))}
    return calls


def load_case(name: str) -> Case:
    """The case `name`, its expect.toml read strictly (an unknown key is a mistake, not something to ignore)."""
    path = FIXTURES / name
    data = tomllib.loads((path / "expect.toml").read_text(encoding="utf-8"))
    where = f"{name}/expect.toml"
    _only(data, {"summary", "initial_state", "run", "lint"}, where)
    initial = data["initial_state"]
    _only(initial, {"declared", "state", "evalset"}, f"{where} [initial_state]")
    assert initial["declared"] in DECLARED, f"{where}: declared must be one of {DECLARED}"
    runs = []
    for i, raw in enumerate(data["run"]):
        _only(raw, {"name", "app", "message", "adk", "key", "agent", "schema", "tool_calls", "sent", "not_sent"}, where)
        assert raw["adk"] in OUTCOMES, f"{where}: run {i}: adk must be one of {OUTCOMES}"
        if raw["adk"] != "runs":
            assert raw.get("key"), f"{where}: run {i}: an exception names its key"
            assert raw.get("agent"), f"{where}: run {i}: an exception names its agent"
        runs.append(
            Run(
                app=raw["app"],
                message=raw.get("message", "hello"),
                adk=raw["adk"],
                key=raw.get("key"),
                agent=raw.get("agent"),
                schema=raw.get("schema"),
                tool_calls=_tool_calls(raw.get("tool_calls", {}), where),
                sent={k: list(v) for k, v in raw.get("sent", {}).items()},
                not_sent={k: list(v) for k, v in raw.get("not_sent", {}).items()},
                name=raw.get("name", ""),
            )
        )
    lint = data["lint"]
    _only(lint, {"expect", "code", "key", "agent", "xfail"}, f"{where} [lint]")
    assert lint["expect"] in LINT_EXPECTATIONS, f"{where}: [lint] expect must be one of {LINT_EXPECTATIONS}"
    return Case(
        name=name,
        path=path,
        summary=data["summary"],
        declared=initial["declared"],
        state=dict(initial.get("state", {})),
        runs=tuple(runs),
        lint=LintExpectation(**lint),
        evalset=initial.get("evalset"),
    )


def _run_ids() -> list[tuple[str, int]]:
    out = []
    for name in CASES:
        for i in range(len(load_case(name).runs)):
            out.append((name, i))
    return out


def _run_id(name: str, i: int) -> str:
    run = load_case(name).runs[i]
    return f"{name}/{run.name}" if run.name else name


RUNS = _run_ids()


# -- the truth: google-adk runs the case


@dataclass
class Observed:
    """What one first turn did: the exception (or None), the agents the model was called for, in order, what
    each agent's model calls received (system instruction and contents, as text), the agents running when it
    ended, and every agent name of the loaded tree."""

    error: BaseException | None
    called: list[str]
    received: dict[str, list[str]]
    running: list[str]
    agents: set[str]


def _purge(folder: Path) -> None:
    """Forget every module imported from `folder` (so no case sees another case's modules)."""
    inside = str(folder)
    for name, module in list(sys.modules.items()):
        where = [getattr(module, "__file__", None) or "", *list(getattr(module, "__path__", None) or [])]
        if any(str(w).startswith(inside) for w in where if w):
            del sys.modules[name]


@pytest.fixture
def app_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder to copy a case into; sys.path and sys.modules are as before once the test ends."""
    for key, value in FAKE_ENV.items():
        monkeypatch.setenv(key, value)
    saved_path = list(sys.path)
    folder = tmp_path / "apps"
    try:
        yield folder
    finally:
        sys.path[:] = saved_path
        _purge(folder)
        importlib.invalidate_caches()


def _walk(agent: Any, seen: set[int] | None = None) -> Iterator[Any]:
    """Every agent (and workflow node) of a loaded tree: sub_agents, workflow graph nodes, AgentTool agents."""
    from google.adk.agents import BaseAgent

    seen = set() if seen is None else seen
    if id(agent) in seen:
        return
    seen.add(id(agent))
    yield agent
    children = list(getattr(agent, "sub_agents", None) or [])
    graph = getattr(agent, "graph", None)
    children += [node for node in getattr(graph, "nodes", None) or [] if node is not agent]
    for tool in getattr(agent, "tools", None) or []:
        if isinstance(getattr(tool, "agent", None), BaseAgent):
            children.append(tool.agent)
    for child in children:
        yield from _walk(child, seen)


def _texts(request: Any) -> list[str]:
    """The text a model call receives: its system instruction, then every text part of its contents."""
    out = []
    system = request.config.system_instruction
    if isinstance(system, str):
        out.append(system)
    elif system is not None:
        out += [part.text for part in getattr(system, "parts", None) or [] if part.text]
    for content in request.contents or []:
        out += [part.text for part in content.parts or [] if part.text]
    return out


async def _first_turn(root: Any, app_name: str, state: dict[str, Any], message: str, run: Run) -> Observed:
    from google.adk.agents import LlmAgent
    from google.adk.apps import App
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.adk.plugins.base_plugin import BasePlugin
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    called: list[str] = []
    received: dict[str, list[str]] = {}
    running: list[str] = []

    class RecordingLlm(BaseLlm):
        """Records what each agent's model call receives; answers with text, or calls the tool the run names."""

        model: str = "recording-model"
        calls: ClassVar[dict[str, dict[str, Any]]] = run.tool_calls

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> AsyncGenerator[Any, None]:
            name = (llm_request.config.labels or {}).get("adk_agent_name", "?")
            called.append(name)
            received.setdefault(name, []).append("\n".join(_texts(llm_request)))
            call = self.calls.get(name)
            if call is not None and called.count(name) == 1:
                part = types.Part(function_call=types.FunctionCall(name=call["name"], args=call["args"]))
            else:
                part = types.Part(text=f"({name} reply {called.count(name)})")
            yield LlmResponse(content=types.Content(role="model", parts=[part]))

    class Running(BasePlugin):
        """Keeps the stack of agents running (to name the writer a StateSchemaError surfaced under)."""

        async def before_agent_callback(self, *, agent: Any, callback_context: Any) -> None:
            running.append(agent.name)

        async def after_agent_callback(self, *, agent: Any, callback_context: Any) -> None:
            if running and running[-1] == agent.name:
                running.pop()

    app = root if isinstance(root, App) else App(name=app_name, root_agent=root)
    agents = set()
    for agent in _walk(app.root_agent):
        agents.add(getattr(agent, "name", None))
        if isinstance(agent, LlmAgent):
            original = agent.model if isinstance(agent.model, str) else getattr(agent.model, "model", None)
            agent.model = RecordingLlm(model=original or "gemini-2.5-flash")
    app.plugins = [*app.plugins, Running(name="truth_running_agents")]
    runner = InMemoryRunner(app=app)
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="user", state=state)
    error = None
    try:
        async for _ in runner.run_async(
            user_id="user",
            session_id=session.id,
            new_message=types.Content(role="user", parts=[types.Part(text=message)]),
        ):
            pass
    except Exception as exc:  # the exception is the outcome
        error = exc
    return Observed(error, called, received, running, agents - {None})


def declared_state(case: Case) -> dict[str, Any]:
    """The state the caller passes to `create_session` on the first turn: from the eval set (read by google-adk's
    own `EvalSet` model) for `declared = "evalset"`, else `[initial_state] state`."""
    if case.declared != "evalset":
        return dict(case.state)
    from google.adk.evaluation.eval_set import EvalSet

    assert case.evalset, f"{case.name}: declared = 'evalset' names its file: evalset = '...'"
    evalset = EvalSet.model_validate_json((case.path / case.evalset).read_text(encoding="utf-8"))
    inputs = [c.session_input for c in evalset.eval_cases if c.session_input is not None]
    assert inputs, f"{case.name}: {case.evalset} has no session_input"
    return dict(inputs[0].state)


def run_case(case: Case, run: Run, folder: Path) -> Observed:
    """One first turn of `run` through google-adk: the case copied to `folder`, its app loaded as `adk run`
    loads it, the models replaced, the declared initial state given."""
    from google.adk.cli.utils.agent_loader import AgentLoader

    shutil.copytree(case.path, folder, ignore=shutil.ignore_patterns("expect.toml", "__pycache__"))
    with warnings.catch_warnings():
        # google-adk 2.13 deprecates Sequential/Parallel/LoopAgent, global_instruction and Agent Config, and
        # marks Workflow experimental: the apps use them as their authors do.
        warnings.simplefilter("ignore")
        root = AgentLoader(str(folder)).load_agent(run.app)
        return asyncio.run(_first_turn(root, run.app, declared_state(case), run.message, run))


_KEY_ERROR = re.compile(r"^Context variable not found: `(?P<key>[^`]+)` in agent '(?P<agent>[^']+)'\.$")
_SCHEMA_ERROR = re.compile(r"^Key '(?P<key>[^']+)' is not declared in state schema '(?P<schema>[^']+)'\.")


def outcome_of(observed: Observed) -> dict[str, str | None]:
    """The outcome as expect.toml states it: `adk`, `key`, `agent` (and `schema`)."""
    error = observed.error
    if error is None:
        return {"adk": "runs"}
    if type(error) is KeyError and (m := _KEY_ERROR.match(str(error.args[0]))):
        return {"adk": "KeyError", "key": m["key"], "agent": m["agent"]}
    if type(error).__name__ == "StateSchemaError" and (m := _SCHEMA_ERROR.match(str(error))):
        writer = observed.running[-1] if observed.running else None
        return {"adk": "StateSchemaError", "key": m["key"], "agent": writer, "schema": m["schema"]}
    return {"adk": f"{type(error).__module__}.{type(error).__qualname__}: {error}"}


@NEEDS_ADK
@pytest.mark.parametrize(("name", "index"), RUNS, ids=[_run_id(n, i) for n, i in RUNS])
def test_google_adk_does_what_the_case_says(name: str, index: int, app_copy: Path) -> None:
    case = load_case(name)
    run = case.runs[index]
    observed = run_case(case, run, app_copy)
    loaded = sys.modules.get(run.app)
    where = [getattr(loaded, "__file__", None) or "", *list(getattr(loaded, "__path__", None) or [])]
    assert any(str(w).startswith(str(app_copy)) for w in where if w), f"{run.app} was not loaded from this case's copy"
    got = outcome_of(observed)
    want: dict[str, str | None] = {"adk": run.adk}
    if run.adk != "runs":
        want |= {"key": run.key, "agent": run.agent}
    if run.adk == "StateSchemaError":
        want["schema"] = run.schema
    assert got == want, f"{case.summary}\nmodel calls: {observed.called}"
    for agent, texts in run.sent.items():
        assert agent in observed.received, f"{agent}'s model was never called (calls: {observed.called})"
        for text in texts:
            assert text in observed.received[agent][0], f"{agent} did not receive {text!r} verbatim"
    for agent, texts in run.not_sent.items():
        assert agent in observed.received, f"{agent}'s model was never called (calls: {observed.called})"
        for text in texts:
            assert text not in observed.received[agent][0], f"{agent} received {text!r}"
    for agent in (run.agent, *run.sent, *run.not_sent, *run.tool_calls):
        assert agent is None or agent in observed.agents, f"no agent {agent!r} in the app ({sorted(observed.agents)})"


# -- the declared initial state is the one the truth runs with


def _pyproject_keys(case: Case) -> list[str] | None:
    data = tomllib.loads((case.path / "pyproject.toml").read_text(encoding="utf-8"))
    keys = data.get("tool", {}).get("templating", {}).get("initial-state")
    return None if keys is None else list(keys)


def _create_session_states(case: Case) -> list[dict[str, Any]]:
    """The literal `state=` of each `create_session(...)` call in the case's Python files (a name is followed
    to its module-level assignment in the same file)."""
    states = []
    for path in sorted(case.path.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = {
            target.id: node.value
            for node in tree.body
            if isinstance(node, ast.Assign)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for node in ast.walk(tree):
            func = node.func if isinstance(node, ast.Call) else None
            if isinstance(func, ast.Attribute) and func.attr == "create_session":
                assert isinstance(node, ast.Call)
                for keyword in node.keywords:
                    if keyword.arg == "state":
                        value = keyword.value
                        if isinstance(value, ast.Name):
                            value = constants[value.id]
                        states.append(ast.literal_eval(value))
    return states


def _evalset_files(case: Case) -> list[Path]:
    return sorted([*case.path.rglob("*.evalset.json"), *case.path.rglob("*.test.json")])


@pytest.mark.parametrize("name", CASES)
def test_the_case_declares_the_initial_state_it_is_run_with(name: str) -> None:
    case = load_case(name)
    keys = _pyproject_keys(case) if (case.path / "pyproject.toml").is_file() else None
    states = _create_session_states(case)
    evalsets = _evalset_files(case)
    if case.declared == "pyproject":
        assert keys is not None, "declared in pyproject.toml: [tool.templating] initial-state"
        assert sorted(keys) == sorted(case.state), "the keys declared are the keys given"
    else:
        assert keys is None, "[tool.templating] initial-state is there: declared = 'pyproject'"
    if case.declared == "create_session":
        assert states == [case.state], "the app's create_session(state=...) gives the state run"
    else:
        assert not states, "a create_session(state=...) is there: declared = 'create_session'"
    if case.declared == "evalset":
        assert [case.path / str(case.evalset)] == evalsets, "the eval set named is the app's only one"
        raw = json.loads((case.path / str(case.evalset)).read_text(encoding="utf-8"))
        assert raw["eval_cases"], "an eval set with cases"
    else:
        assert not evalsets, "an eval set is there: declared = 'evalset'"
    if case.declared == "none":
        assert case.state == {}, "an undeclared initial state is run as the empty state"


# -- the comparison: the linter's predictions against what google-adk does


@dataclass(frozen=True)
class Subject:
    """What a finding is about: the state key, and the agent (None when the finding does not say)."""

    key: str | None
    agent: str | None


_ORIGIN_AGENT = re.compile(r'name="(?P<agent>[^"]+)"')
_KEY_TEXT = re.compile(r"^[{<]*\s*(?P<key>[A-Za-z_][\w:]*)\s*\??\s*[}>]*$")
_QUOTED_KEY = re.compile(r"['`](?P<key>[A-Za-z_][\w:]*)['`]")


def subject_of(diag: Diagnostic, result: LintResult) -> Subject:
    """The key and agent a finding is about. A `key`/`agent` attribute on the finding wins (the agent-model
    rules may add them); otherwise the key is the first key the message quotes ('key' or `key`), else the
    placeholder the span covers (an f-string's span may cover a constant's name instead), and the agent is the
    `name="..."` of the finding's origin (None when the instruction is a constant used by several agents)."""
    key = getattr(diag, "key", None)
    agent = getattr(diag, "agent", None)
    if key is None and (m := _QUOTED_KEY.search(diag.message)):
        key = m["key"]
    if key is None and diag.span is not None and diag.path in result.sources:
        text = result.sources[diag.path][diag.span.start : diag.span.end].strip("'\" ")
        if m := _KEY_TEXT.match(text):
            key = m["key"]
    if agent is None and diag.origin and (m := _ORIGIN_AGENT.search(diag.origin)):
        agent = m["agent"]
    return Subject(key, agent)


def _same(finding: Subject, key: str | None, agent: str | None) -> bool:
    return finding.key == key and (finding.agent is None or agent is None or finding.agent == agent)


def _describe(diag: Diagnostic, subject: Subject) -> str:
    return f"{diag.code} {diag.severity} (key {subject.key!r}, agent {subject.agent!r}): {diag.message}"


def truth_mismatches(case: Case, result: LintResult) -> list[str]:
    """Where the linter's findings on `case` disagree with what google-adk does on its first turn (the outcomes
    stated in expect.toml, which `test_google_adk_does_what_the_case_says` proves). Empty when they agree:

    - every error-level finding of a predicting rule is an exception google-adk raises (same key, same agent),
      in every run of that app: an error is a certainty, whatever the model does;
    - every exception google-adk raises is covered by a finding of a predicting rule, error or warning;
    - the agent-model rules' findings are what `[lint]` says: `error`/`warning` (with its code, key, agent),
      `at-most-warning` (no error), `nothing` (no finding at all);
    - the instructions of every Agent Config YAML file were checked (so a YAML case cannot pass unread)."""
    problems = []
    findings = [(d, subject_of(d, result)) for d in result.diagnostics if d.code in AGENT_MODEL_RULES]
    predicting = [(d, s) for d, s in findings if d.code in PREDICTING_RULES]
    raised = [r for r in case.runs if r.adk != "runs"]
    for diag, subject in predicting:
        if diag.severity != "error":
            continue
        matched = [r for r in raised if _same(subject, r.key, r.agent)]
        if not matched:
            problems.append(f"an error google-adk does not raise: {_describe(diag, subject)}")
            continue
        for other in case.runs:
            if other.app in {r.app for r in matched} and other not in matched:
                problems.append(
                    f"an error google-adk raises only as the model acts (run {other.name or other.app} runs): "
                    + _describe(diag, subject)
                )
    for run in raised:
        if not any(d.severity in ("error", "warning") and _same(s, run.key, run.agent) for d, s in predicting):
            problems.append(f"silent: google-adk raises {run.adk} on {run.key!r} in agent {run.agent!r}")
    lint = case.lint
    if lint.expect in ("error", "warning"):
        wanted = [
            (d, s)
            for d, s in findings
            if d.severity == lint.expect
            and (lint.code is None or d.code == lint.code)
            and (lint.key is None or _same(s, lint.key, lint.agent))
        ]
        if not wanted:
            about = "".join(
                f" {what} {value!r}" for what, value in (("on", lint.key), ("in agent", lint.agent)) if value
            )
            problems.append(f"no {lint.expect} {lint.code or 'finding'}{about}")
    elif lint.expect == "at-most-warning":
        problems += [
            f"an error where a warning at most is due: {_describe(d, s)}" for d, s in findings if d.severity == "error"
        ]
    else:
        problems += [f"a finding where none is due: {_describe(d, s)}" for d, s in findings]
    checked = {Path(template.path).resolve() for template in result.templates}  # shown as the engine shows paths
    for config in agent_configs(case.path):
        if config.resolve() not in checked:
            problems.append(f"the instructions of {config.relative_to(case.path)} were not checked")
    return problems


def agent_configs(folder: Path) -> list[Path]:
    """The Agent Config YAML files under `folder` that hold an instruction (google-adk injects it as any other)."""
    return sorted(
        path
        for path in [*folder.rglob("*.yaml"), *folder.rglob("*.yml")]
        if re.search(r"(?m)^(global_)?instruction:", path.read_text(encoding="utf-8"))
    )


def lint_case(case: Case) -> LintResult:
    """The case linted as its author would: `templating lint .` at its root."""
    return lint_project([str(case.path)], root=case.path)


def _comparison_params() -> list[Any]:
    params = []
    for name in CASES:
        reason = load_case(name).lint.xfail
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        params.append(pytest.param(name, marks=marks, id=name))
    return params


@pytest.mark.parametrize("name", _comparison_params())
def test_the_linter_agrees_with_google_adk(name: str) -> None:
    case = load_case(name)
    problems = truth_mismatches(case, lint_case(case))
    assert not problems, f"{case.summary}\n" + "\n".join(problems)


# -- the comparison itself, on findings made by hand (it must catch each kind of disagreement)

_SOURCE = 'writer = Agent(name="writer", instruction="Draft. Critique: {critique}")\n'
_PLACEHOLDER = Span(_SOURCE.index("{critique}"), _SOURCE.index("{critique}") + len("{critique}"), 1, 1)
_ORIGIN = 'Agent(name="writer").instruction'


def _finding(code: str, severity: str, message: str = "", *, origin: str | None = _ORIGIN) -> Diagnostic:
    return Diagnostic(code, severity, message, _PLACEHOLDER, "agent.py", None, origin)  # type: ignore[arg-type]


def _result(*diagnostics: Diagnostic) -> LintResult:
    return LintResult(list(diagnostics), [], ["agent.py"], sources={"agent.py": _SOURCE})


def _case(*runs: Run, expect: str = "error", code: str | None = "T024", key: str | None = "critique") -> Case:
    agent = "writer" if key else None
    folder = FIXTURES / "seq_read_before_write"  # any folder without an Agent Config file
    return Case("made", folder, "made by hand", "pyproject", {}, runs, LintExpectation(expect, code, key, agent))


RAISES = Run(app="essay", message="hi", adk="KeyError", key="critique", agent="writer")
RUNS_OK = Run(app="essay", message="hi", adk="runs", name="model-calls-the-tool")
OTHER_APP_RUNS = Run(app="billing", message="hi", adk="runs")

COMPARISONS = [
    ("error-on-the-raise", _case(RAISES), [_finding("T024", "error")], []),
    (
        "error-nowhere-raised",
        _case(RUNS_OK, expect="nothing"),
        [_finding("T024", "error")],
        ["does not raise", "none is due"],
    ),
    (
        "error-on-another-agent",
        _case(RAISES),
        [_finding("T024", "error", origin='Agent(name="critic").instruction')],
        ["does not raise", "silent", "no error T024"],
    ),
    ("error-only-as-the-model-acts", _case(RAISES, RUNS_OK), [_finding("T024", "error")], ["only as the model acts"]),
    ("error-other-app-runs", _case(RAISES, OTHER_APP_RUNS), [_finding("T024", "error")], []),
    ("silent", _case(RAISES), [], ["silent", "no error T024 on 'critique' in agent 'writer'"]),
    ("warning-covers-but-error-due", _case(RAISES), [_finding("T024", "warning")], ["no error T024"]),
    ("warning-due", _case(RAISES, RUNS_OK, expect="warning", code="T027"), [_finding("T027", "warning")], []),
    ("other-rules-ignored", _case(RAISES), [_finding("T024", "error"), _finding("T016", "error")], []),
    ("wrong-code", _case(RAISES), [_finding("T014", "error")], ["no error T024"]),
    ("nothing-due", _case(RUNS_OK, expect="nothing", key=None), [_finding("T029", "warning")], ["none is due"]),
    ("at-most-warning", _case(RUNS_OK, expect="at-most-warning", key=None), [_finding("T001", "warning")], []),
    (
        "at-most-warning-error",
        _case(RUNS_OK, expect="at-most-warning", key=None),
        [_finding("T001", "error")],
        ["does not raise", "a warning at most"],
    ),
    (
        "at-most-warning-t029-error",
        _case(RUNS_OK, expect="at-most-warning", key=None),
        [_finding("T029", "error")],
        ["a warning at most"],
    ),
    ("keyless-expectation", _case(RUNS_OK, expect="warning", code="T031", key=None), [_finding("T031", "warning")], []),
]


@pytest.mark.parametrize(("case", "findings", "wanted"), [c[1:] for c in COMPARISONS], ids=[c[0] for c in COMPARISONS])
def test_the_comparison_finds_each_disagreement(case: Case, findings: list[Diagnostic], wanted: list[str]) -> None:
    problems = truth_mismatches(case, _result(*findings))
    assert len(problems) == len(wanted), problems
    for problem, text in zip(problems, wanted, strict=True):
        assert text in problem


SUBJECTS = [
    (
        "message-quotes-the-key",
        _finding("T014", "warning", "'{critique}' reads state key 'critique', which..."),
        "critique",
        "writer",
    ),
    ("backticks", _finding("T024", "error", "`critique` is first written by critic"), "critique", "writer"),
    ("span-when-the-message-quotes-none", _finding("T024", "error", "read before it is written"), "critique", "writer"),
    ("constant-origin", _finding("T014", "warning", "reads 'critique'", origin="WRITER_PROMPT"), "critique", None),
]


@pytest.mark.parametrize(("diag", "key", "agent"), [s[1:] for s in SUBJECTS], ids=[s[0] for s in SUBJECTS])
def test_a_finding_names_its_key_and_agent(diag: Diagnostic, key: str, agent: str | None) -> None:
    assert subject_of(diag, _result(diag)) == Subject(key, agent)


def test_a_findings_own_key_and_agent_win() -> None:
    @dataclass(frozen=True)
    class Structured(Diagnostic):
        key: str | None = None
        agent: str | None = None

    diag = Structured(
        "T024", "error", "'other' ...", _PLACEHOLDER, "agent.py", None, _ORIGIN, key="critique", agent="critic"
    )
    assert subject_of(diag, _result(diag)) == Subject("critique", "critic")


def test_an_unread_agent_config_is_a_disagreement(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "root_agent.yaml").write_text("name: a\ninstruction: Hi {user}\n", encoding="utf-8")
    (tmp_path / "app" / "tools.yaml").write_text("retries: 3\n", encoding="utf-8")
    case = replace(_case(RUNS_OK, expect="nothing", key=None), path=tmp_path)
    assert truth_mismatches(case, _result()) == ["the instructions of app/root_agent.yaml were not checked"]
    checked = CheckedTemplate(str(tmp_path / "app" / "root_agent.yaml"), "a", "adk", Span(0, 1, 1, 1), ("user",), ())
    assert truth_mismatches(case, LintResult([], [checked], [])) == []


# The situations of issue 33, each with its cases: the failing one first, then its OK counterparts.
SITUATIONS = {
    "Sequential: read before the writer runs": ("seq_read_before_write", "seq_write_before_read"),
    "an agent reads its own output_key": ("own_output_key", "own_output_key_optional"),
    "Parallel: a sibling's output_key (a race)": ("parallel_race", "parallel_then_merge"),
    "Loop: written later in the body (first iteration)": ("loop_later_writer", "loop_critic_first"),
    "written only by a tool": ("tool_only_writer",),
    "callback seeding": ("callback_seeds_too_late", "before_agent_callback_seeding", "container_callback_seeding"),
    "custom BaseAgent orchestrator": (
        "custom_agent_unseeded",
        "custom_agent_session_state",
        "custom_agent_event_state_delta",
    ),
    "a write whose key is known only at run time": (
        "unknown_write_after_reader",
        "unknown_write_misspelt_reader",
        "unknown_write_ok",
    ),
    "Workflow(state_schema=...)": (
        "workflow_schema_output_key",
        "workflow_schema_callback_write",
        "workflow_schema_tool_write",
        "workflow_schema_extra_allow",
        "workflow_schema_declared",
        "workflow_schema_prefixed_keys",
    ),
    "LlmAgent(state_schema=...)": ("root_llm_schema", "root_llm_schema_declared", "llm_schema_in_sequential"),
    "sent literally": (
        "workflow_class_placeholder",
        "angle_key_in_adk_string",
        "key_named_not_injected",
        "static_instruction_braces",
    ),
    "global_instruction": ("global_instruction_root", "global_instruction_root_given", "global_instruction_sub_agent"),
    "apps as units": ("two_apps_other_writes", "no_app_sub_agents_assigned"),
    "the initial state, declared": (
        "initial_state_missing_key",
        "undeclared_never_written",
        "initial_state_create_session",
        "initial_state_evalset",
        "initial_state_pyproject",
    ),
    "Agent Config YAML": ("yaml_missing_key", "yaml_ok"),
}


def test_every_situation_has_its_cases_and_every_case_a_situation() -> None:
    listed = [name for names in SITUATIONS.values() for name in names]
    assert sorted(listed) == CASES, "a case folder without a situation, or a situation naming no folder"
    for situation, names in SITUATIONS.items():
        outcomes = {run.adk for name in names for run in load_case(name).runs}
        if situation != "sent literally":
            assert "runs" in outcomes, f"{situation}: no case that runs (the OK counterpart)"
