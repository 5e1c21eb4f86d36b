"""`Project.update` (the editor path) publishes what a fresh `lint_project` with the same texts reports.

A property test edits copies of real ADK projects (Google's adk-samples, the shared corpus) the way
their authors do: an `output_key=` added or removed, a state write, a placeholder, an import of a
prompt module, a whole prompt module created or deleted. After each edit, the findings and the
templates published so far (each file's as of the last result that listed it) equal a fresh run's,
for every file. The regression rows below are the discrepancies it found, each kept as a fixed case.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import linked_project
import pytest
from conftest import shared_corpora
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from linked_project import write_linked

from templating.linter.engine import LintResult, Project
from templating.linter.run import lint_project


def _corpus() -> Path | None:
    given_path = os.environ.get("TEMPLATING_ADK_SAMPLES")
    if given_path:
        return Path(given_path)
    for folder in Path(__file__).resolve().parents:
        candidate = folder / "shared" / "corpora" / "adk-samples"
        if candidate.is_dir():
            return candidate
    return None


CORPUS = _corpus()
AGENTS = CORPUS / "python" / "agents" if CORPUS else None
PROJECTS = ["travel-concierge", "customer-service", "data-science"]
KEYS = ["itinerary", "user_profile", "draft", "plan", "user:name", "temp:notes", "app:mode", "seat"]

# --- what a caller publishes, and what a fresh run reports


Published = dict[str, tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]]


def _diag_rows(result: LintResult, path: str) -> list[tuple[Any, ...]]:
    return sorted(
        (d.code, d.severity, d.message, d.span and (d.span.start, d.span.end), d.help or "", d.origin or "")
        for d in result.diagnostics
        if d.path == path
    )


def _template_rows(result: LintResult, path: str) -> list[tuple[Any, ...]]:
    return sorted(
        (t.name or "", t.dialect, t.span.start, t.span.end, t.keys, t.optional_keys)
        for t in result.templates
        if t.path == path
    )


def publish(published: Published, result: LintResult) -> None:
    """What an editor does with a result: each file listed, or named by a finding (a text file an agent reads
    its instruction from), gets its findings anew (none: cleared)."""
    for path in {*result.files, *(d.path for d in result.diagnostics if d.path)}:
        published[path] = (_diag_rows(result, path), _template_rows(result, path))


def assert_published_as_fresh(published: Published, overrides: dict[str, str], step: str) -> None:
    fresh = lint_project(["."], root=".", overrides=overrides)
    expected: Published = {}
    publish(expected, fresh)
    for path in sorted({*published, *expected}):
        got = published.get(path, ([], []))
        want = expected.get(path, ([], []))
        assert got[0] == want[0], f"findings of {path} after {step}"
        assert got[1] == want[1], f"templates of {path} after {step}"


def assert_wanted_as_fresh(
    result: LintResult, view: Published, wanted: list[str], overrides: dict[str, str], step: str
) -> None:
    """What an editor shows of its open files (`view`: each as the last result listing it gave it; a file just
    opened, as the update gives it) is a fresh run's findings; each wanted Python file the project lints is
    listed (text files: those an instruction is read from, and those it no longer is, cleared)."""
    publish(view, result)
    fresh = lint_project(["."], root=".", overrides=overrides)
    expected: Published = {}
    publish(expected, fresh)
    for path in wanted:
        if path.endswith(".py") and os.path.exists(path):
            assert path in result.files, f"{path} wanted after {step}"
        got = view.get(path, ([], []))
        want = expected.get(path, ([], []))
        assert got[0] == want[0], f"findings of {path} after {step}"
        assert got[1] == want[1], f"templates of {path} after {step}"


def _text_files() -> list[str]:
    return sorted(
        p.as_posix()
        for p in Path(".").rglob("*")
        if p.suffix in (".txt", ".md", ".j2", ".jinja") and not any(s.startswith(".") for s in p.parts)
    )


# --- edits, as the corpus's authors write them: each takes (path, text, n) and gives the new text or None

_AGENT_CALL = re.compile(r"\b(?:Llm)?Agent\(\s*\n?")
_OUTPUT_KEY = re.compile(r"[ \t]*output_key\s*=\s*['\"][^'\"]*['\"],?[ \t]*(?:#[^\n]*)?\n?")
# a write by a literal key or by a key known at run time (`tool_context.state[key] = []`), as the corpus has
_STATE_WRITE = re.compile(r"^([ \t]*)[\w.]*state(?:\[[^\]\n]+\])+\s*=[^\n]*$", re.MULTILINE)
_PLACEHOLDER = re.compile(r"\{[A-Za-z_][\w:]*\??\}")
_PROMPT_CONSTANT = re.compile(r'^([A-Z_]*(?:PROMPT|INSTR|INSTRUCTION)[A-Z_]*\s*=\s*(?:\(\s*)?[rf]?""")', re.MULTILINE)
_IMPORT_LINE = re.compile(
    r"^(?:from [\w.]+ import [^\n(]*prompt[^\n(]*|from [\w.]*prompt[\w.]* import [^\n(]+)\n", re.M
)


def add_output_key(path: str, text: str, n: int) -> str | None:
    calls = list(_AGENT_CALL.finditer(text))
    if not calls:
        return None
    at = calls[n % len(calls)].end()
    return f'{text[:at]}output_key="{KEYS[n % len(KEYS)]}", {text[at:]}'


def remove_output_key(path: str, text: str, n: int) -> str | None:
    found = list(_OUTPUT_KEY.finditer(text))
    if not found:
        return None
    m = found[n % len(found)]
    return text[: m.start()] + text[m.end() :]


def add_state_write(path: str, text: str, n: int) -> str | None:
    key = KEYS[n % len(KEYS)]
    how = [
        f'def edit_tool_{n}(tool_context):\n    tool_context.state["{key}"] = "x"\n    return {{}}\n',
        f'def edit_callback_{n}(callback_context):\n    callback_context.state["{key}"] = []\n',
        f"async def edit_session_{n}(session_service):\n"
        f'    await session_service.create_session(app_name="app", user_id="u", state={{"{key}": 1}})\n',
    ][n % 3]
    return f"{text.rstrip()}\n\n\n{how}"


def remove_state_write(path: str, text: str, n: int) -> str | None:
    found = list(_STATE_WRITE.finditer(text))
    if not found:
        return None
    m = found[n % len(found)]
    return f"{text[: m.start()]}{m.group(1)}pass{text[m.end() :]}"


def add_placeholder(path: str, text: str, n: int) -> str | None:
    found = list(_PROMPT_CONSTANT.finditer(text))
    if not found:
        return None
    m = found[n % len(found)]
    braces = "{{{}}}" if "f" in m.group(1)[-4:-3] else "{}"  # an f-string's braces are Python's
    return f"{text[: m.end()]}Use {braces.format(KEYS[n % len(KEYS)])}.\n{text[m.end() :]}"


def remove_placeholder(path: str, text: str, n: int) -> str | None:
    found = [m for m in _PLACEHOLDER.finditer(text)]
    if not found:
        return None
    m = found[n % len(found)]
    return text[: m.start()] + text[m.end() :]


def remove_import(path: str, text: str, n: int) -> str | None:
    found = list(_IMPORT_LINE.finditer(text))
    if not found:
        return None
    m = found[n % len(found)]
    return text[: m.start()] + text[m.end() :]


def add_import(path: str, text: str, n: int, prompt: str) -> str | None:
    """An agent given a constant of a prompt module imported here (absolute import, as the corpus does)."""
    names = re.findall(r"^([A-Z_]*(?:PROMPT|INSTR|INSTRUCTION)[A-Z_]*)\s*=", Path(prompt).read_text("utf-8"), re.M)
    if not names or prompt == path:
        return None
    module = prompt.removesuffix(".py").replace("/", ".")
    name = names[n % len(names)]
    return (
        f"from google.adk.agents import LlmAgent\nfrom {module} import {name} as EDIT_{n}\n{text}\n\n"
        f'edit_agent_{n} = LlmAgent(name="edit_{n}", model="gemini-2.0-flash", instruction=EDIT_{n})\n'
    )


EDITS: dict[str, Callable[[str, str, int], str | None]] = {
    "add output_key": add_output_key,
    "remove output_key": remove_output_key,
    "add state write": add_state_write,
    "remove state write": remove_state_write,
    "add placeholder": add_placeholder,
    "remove placeholder": remove_placeholder,
    "remove import": remove_import,
}
KINDS = [*EDITS, "add import", "add file", "remove file", "open"]


def _python_files() -> list[str]:
    return sorted(p.as_posix() for p in Path(".").rglob("*.py") if not any(s.startswith(".") for s in p.parts))


def _prompt_modules() -> list[str]:
    return [p for p in _python_files() if "prompt" in Path(p).name]


def _copy(name: str, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if AGENTS is None or not (AGENTS / name).is_dir():
        reason = f"the shared corpus is absent (no adk-samples/python/agents/{name}; set TEMPLATING_ADK_SAMPLES)"
        if os.environ.get("TEMPLATING_REQUIRE_CORPUS") == "1":  # CI: the corpus is beside the checkout
            pytest.fail(f"TEMPLATING_REQUIRE_CORPUS=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    root = tmp / name
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(AGENTS / name, root, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    (root / ".git").mkdir()
    monkeypatch.chdir(root)
    return root


_AGENT_FACTS = ("agents", "agent_classes", "functions", "class_methods", "runners", "roots", "sessions")


def agent_facts(project: Project) -> dict[str, list[str]]:
    """The agent facts of the project's last scan, each as its repr, sorted (an edit merges them: their order is
    not theirs to keep)."""
    found = project.scan
    assert found is not None
    out = {}
    for name in _AGENT_FACTS:
        facts = getattr(found, name)
        items = facts.items() if isinstance(facts, dict) else enumerate(facts)
        out[name] = sorted(repr(item) if isinstance(facts, list) else repr((key, item)) for key, item in items)
    return out


def assert_facts_as_fresh(project: Project, overrides: dict[str, str], step: str) -> None:
    """The agent facts an edit merged equal those a fresh scan of the project with the same texts reads, and so
    does the agent model built from them (which takes the agents made from the same facts from the model before)."""
    fresh = Project(".", overrides=overrides)
    fresh.lint(["."])
    got, want = agent_facts(project), agent_facts(fresh)
    for name in _AGENT_FACTS:
        assert got[name] == want[name], f"{name} of the agent facts after {step}"
    # the agent model: its agents (those taken from the model before the edit among them) and apps, in order
    model, fresh_model = project.agent_model, fresh.agent_model
    assert [repr(a) for a in model.agents.values()] == [repr(a) for a in fresh_model.agents.values()], step
    assert [repr(a) for a in model.apps] == [repr(a) for a in fresh_model.apps], step
    assert [model.reads(a) for a in model.agents.values()] == [
        fresh_model.reads(a) for a in fresh_model.agents.values()
    ]


def run_edits(root: Path, data: Any, *, editor: bool = False) -> None:
    """Random edits, each followed by a check against a fresh run. `editor`: each update asks only for the
    findings of some open files (`wanted`), which must be those of a fresh run."""
    project = Project(root)
    published: Published = {}
    publish(published, project.lint(["."]))
    overrides: dict[str, str] = {}
    steps: list[str] = []
    opened: list[str] = []
    view: Published = {}  # what the editor shows of its open files

    def update(path: str, text: str | None) -> LintResult:
        if not editor:
            return project.update(path, text)
        shown = sorted({*_python_files(), *_text_files()})
        before = set(opened)
        opened[:] = data.draw(st.lists(st.sampled_from(shown), max_size=4, unique=True), label="open")
        for name in set(opened) - before:  # opened now: shown as the server lints it when it opens
            view.pop(name, None)
            if not name.endswith(".py"):
                publish(view, project.update(name, overrides.get(name), wanted=[os.path.abspath(name)]))
        return project.update(path, text, wanted=[os.path.abspath(name) for name in opened])

    for _ in range(data.draw(st.integers(1, 6), label="steps")):
        kind = data.draw(st.sampled_from(KINDS), label="edit")
        n = data.draw(st.integers(0, 50), label="n")
        files = _python_files()
        if kind == "add file":
            folder = Path(data.draw(st.sampled_from(sorted({Path(p).parent.as_posix() for p in files})), label="in"))
            path = (folder / f"edit_prompt_{n}.py").as_posix()
            if path in files:
                continue
            key = KEYS[n % len(KEYS)]
            text = f'"""A prompt module."""\n\nEDIT_INSTR = """Plan with {{{key}}} and {{user_profile?}}."""\n'
            Path(path).write_text(text, encoding="utf-8")  # created on disk, as an editor saves a new file
            overrides.pop(path, None)
            result = update(path, text)
        elif kind == "open":  # a file opened in the editor as it is (saved, or its unsaved buffer again)
            path = data.draw(st.sampled_from(files), label="file")
            text = overrides.get(path) or Path(path).read_text(encoding="utf-8")
            overrides[path] = text
            result = update(path, text)
        elif kind == "remove file":
            candidates = _prompt_modules()
            if not candidates:
                continue
            path = data.draw(st.sampled_from(candidates), label="file")
            Path(path).unlink()
            overrides.pop(path, None)
            result = update(path, None)
        else:
            prompts = _prompt_modules()
            candidates: dict[str, str] = {}  # the files this edit applies to, and their new text
            for name in files:
                text = overrides.get(name) or Path(name).read_text(encoding="utf-8")
                if kind == "add import":
                    edited = add_import(name, text, n, prompts[n % len(prompts)]) if prompts else None
                else:
                    edited = EDITS[kind](name, text, n)
                if edited is not None and edited != text:
                    candidates[name] = edited
            if not candidates:
                continue
            path = data.draw(st.sampled_from(sorted(candidates)), label="file")
            edited = candidates[path]
            overrides[path] = edited  # an unsaved buffer
            result = update(path, edited)
        steps.append(f"{kind} {path}" + (f" (open: {', '.join(opened)})" if editor else ""))
        assert path in result.files
        assert {d.path for d in result.diagnostics} <= set(result.files)
        if editor:
            assert_wanted_as_fresh(result, view, [path, *opened], overrides, " -> ".join(steps))
        else:
            publish(published, result)
            assert_published_as_fresh(published, overrides, " -> ".join(steps))
        assert_facts_as_fresh(project, overrides, " -> ".join(steps))


@pytest.mark.parametrize("name", PROJECTS)
def test_update_publishes_what_a_fresh_run_reports_after_random_edits(
    name: str, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = tmp_path_factory.mktemp("incremental")
    _random_edits(lambda: _copy(name, base, monkeypatch), examples=_EXAMPLES)


_EXAMPLES = int(os.environ.get("TEMPLATING_INCREMENTAL_EXAMPLES", "8"))


@pytest.mark.parametrize("name", PROJECTS)
def test_update_for_open_files_gives_them_what_a_fresh_run_reports_after_random_edits(
    name: str, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As an editor asks: each update works out the findings of the open files only (`wanted`)."""
    base = tmp_path_factory.mktemp("wanted")
    _random_edits(lambda: _copy(name, base, monkeypatch), examples=_EXAMPLES, editor=True)


def _random_edits(make_root: Callable[[], Path], *, examples: int, editor: bool = False) -> None:
    """`run_edits` on a fresh tree from `make_root`, for `examples` draws of random edits."""

    @settings(
        max_examples=examples,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],  # no shrinking: the message names every edit
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(data=st.data())
    def edits(data: Any) -> None:
        run_edits(make_root(), data, editor=editor)

    edits()


def _copies(name: str, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two plain copies of the project `name` in one workspace (its apps, keys and module names twice, as in a
    monorepo of ADK apps)."""
    root = tmp / "copies"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir()
    for copy in ("copy_0", "copy_1"):
        shutil.copytree(_copy(name, tmp, monkeypatch), root / copy, ignore=shutil.ignore_patterns(".git"))
    (root / ".git").mkdir()
    monkeypatch.chdir(root)
    return root


@pytest.mark.parametrize("name", PROJECTS[:2])
def test_update_in_copies_of_a_project_publishes_what_a_fresh_run_reports_after_random_edits(
    name: str, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same random edits in a workspace of two copies of a project: an edit in one copy changes its apps, and
    the run-order findings of the other copy's apps (which read the same keys) are kept from the model before
    (`linter.rules.order_kept`); every file's findings still equal a fresh run's."""
    base = tmp_path_factory.mktemp("copies")
    _random_edits(lambda: _copies(name, base, monkeypatch), examples=_EXAMPLES // 2 or 1)


def test_update_for_open_files_in_copies_of_a_project_gives_them_what_a_fresh_run_reports(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The open files' findings only, in a workspace of two copies (the other copy's apps' order findings kept)."""
    base = tmp_path_factory.mktemp("copies-wanted")
    _random_edits(lambda: _copies(PROJECTS[0], base, monkeypatch), examples=_EXAMPLES // 2 or 1, editor=True)


# --- every file of the shared corpus opened in the editor: the same findings as a fresh run


CORPORA = shared_corpora()
# each project as its authors open it (its own folder the workspace): the adk-samples agents, the adk-python
# samples, the adk-docs example folders
UNITS = (
    sorted(
        p.relative_to(CORPORA).as_posix()
        for pattern in (
            "adk-samples/python/agents/*",
            "adk-python/contributing/samples/*",
            "adk-docs/examples/python/*/*",
        )
        for p in CORPORA.glob(pattern)
        if p.is_dir() and any(p.rglob("*.py"))
    )
    if CORPORA is not None
    else []
) or ["(the shared corpus is absent)"]


@pytest.mark.slow
@pytest.mark.parametrize("unit", UNITS)
def test_opening_each_corpus_file_publishes_what_a_fresh_run_reports(
    unit: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The language server's path: one `Project` per workspace folder, each file opened in turn
    (`Project.update` with the file's own text as the unsaved buffer); every file the result lists gets what a
    fresh `lint_project` of the folder gives it."""
    if CORPORA is None:
        reason = "the shared corpus (../shared/corpora) is absent"
        if os.environ.get("TEMPLATING_REQUIRE_CORPUS") == "1":
            pytest.fail(f"TEMPLATING_REQUIRE_CORPUS=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    root = tmp_path / unit.rsplit("/", 1)[-1]
    shutil.copytree(CORPORA / unit, root, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    monkeypatch.chdir(root)
    fresh = lint_project(["."], root=root)
    project = Project(root)
    for path in _python_files():
        result = project.update(path, Path(path).read_text(encoding="utf-8"))
        assert path in result.files
        for name in result.files:
            assert _diag_rows(result, name) == _diag_rows(fresh, name), f"{name}, {path} opened"
            assert _template_rows(result, name) == _template_rows(fresh, name), f"{name}, {path} opened"


# --- the discrepancies found, each a fixed case: a small project, one edit (None: the file deleted)

_AGENT = "from google.adk.agents import LlmAgent\n"
_BASE = {
    "pyproject.toml": "[project]\nname = 'app'\n",
    "app/__init__.py": "from . import agent\n",
    "app/prompt.py": 'ROOT_INSTR = """Plan the trip with {itinerary} for {user_profile?}."""\n',
    "app/tools.py": "def save(tool_context):\n    tool_context.state['user_profile'] = {}\n",
    "app/agent.py": _AGENT + "from . import prompt\n\n"
    "root_agent = LlmAgent(name='root', model='m', instruction=prompt.ROOT_INSTR, output_key='itinerary')\n",
}
_SUB = {
    **_BASE,
    "app/sub/__init__.py": "",
    "app/sub/agent.py": _AGENT + "from .. import prompt\n\n"
    "sub_agent = LlmAgent(name='sub', model='m', instruction=prompt.ROOT_INSTR)\n",
}
_PARENS = {
    **_BASE,
    "app/agent.py": _AGENT + "from .prompt import (\n    ROOT_INSTR,\n)\n\n"
    "root_agent = LlmAgent(name='root', model='m', instruction=ROOT_INSTR, output_key='itinerary')\n",
}
_TWO_WRITERS = {
    **_BASE,
    "app/prompt.py": 'ROOT_INSTR = """Plan the trip with {itinerary} for {user_profile.name}."""\n',
    "app/z_tools.py": "def keep(tool_context):\n    tool_context.state['user_profile'] = 1\n",
}


def _importing(statement: str) -> dict[str, str]:
    """_BASE with the agent importing ROOT_INSTR from the prompt module by `statement`."""
    return {
        **_BASE,
        "app/agent.py": _AGENT + statement + "\n\n"
        "root_agent = LlmAgent(name='root', model='m', instruction=ROOT_INSTR, output_key='itinerary')\n",
    }


# Import forms Python accepts that a line-start pattern misses: an edit of the prompt module must reach the agent.
_IMPORT_FORMS = [
    ("after-a-semicolon", "import os; from .prompt import ROOT_INSTR"),
    ("in-a-block", "if True:\n    from .prompt import ROOT_INSTR"),
    ("continued-after-from", "from \\\n    .prompt import ROOT_INSTR"),
    ("no-space-before-the-dot", "from.prompt import ROOT_INSTR"),
    ("in-a-try", "try:\n    from .prompt import ROOT_INSTR\nexcept ImportError:\n    raise"),
]

_TEXT_INSTRUCTION = {  # an instruction read from a text file beside the agent (google-adk samples do so)
    **_BASE,
    "app/agent.py": _AGENT + "import os\n\n\ndef load_instruction_from_file(name):\n"
    "    with open(os.path.join(os.path.dirname(__file__), name)) as f:\n        return f.read()\n\n\n"
    "root_agent = LlmAgent(name='root', model='m', instruction=load_instruction_from_file('writer.txt'),"
    " output_key='itinerary')\n",
    "app/writer.txt": "Write up {itinerary} for <b>{user_profile?}</b>.\n",
}

_SEQ = "from google.adk.agents import LlmAgent, SequentialAgent\n"
_PIPELINE = {  # an app's agents spread over modules: each edit changes facts another module's agents are read with
    "pyproject.toml": "[project]\nname = 'app'\n",
    "app/__init__.py": "from . import agent\n",
    "app/tools.py": "def save(tool_context):\n    tool_context.state['notes'] = {}\n",
    "app/first.py": _SEQ + "from .tools import save\n\n"
    "first = LlmAgent(name='first', model='m', instruction='Draft it.', output_key='draft', tools=[save])\n",
    "app/second.py": _SEQ
    + "\nsecond = LlmAgent(name='second', model='m', instruction='Review {draft} with {notes}.')\n",
    "app/agent.py": _SEQ + "from .first import first\nfrom .second import second\n\n"
    "root_agent = SequentialAgent(name='root', sub_agents=[first, second])\n",
}
_CUSTOM = {
    **_PIPELINE,
    "app/flow.py": "from google.adk.agents import BaseAgent\n\n\nclass Flow(BaseAgent):\n"
    "    async def _run_async_impl(self, ctx):\n        ctx.session.state['notes'] = 1\n"
    "        async for event in self.sub_agents[0].run_async(ctx):\n            yield event\n",
    "app/agent.py": _SEQ + "from .first import first\nfrom .second import second\nfrom .flow import Flow\n\n"
    "root_agent = Flow(name='root', sub_agents=[second, first])\n",
}

# Agent facts merged by an edit (a file's agents, the functions and classes they name): each row edits a module
# whose facts another module's agents are read with; the findings and the facts are a fresh run's.
AGENT_FACTS = [
    (
        "a-tool-s-write-edited-in-its-own-module",
        _PIPELINE,
        "app/tools.py",
        "def save(tool_context):\n    tool_context.state['note'] = {}\n",
    ),
    (
        "a-sub-agent-s-output-key-removed-in-its-own-module",
        _PIPELINE,
        "app/first.py",
        _SEQ
        + "from .tools import save\n\nfirst = LlmAgent(name='first', model='m', instruction='Draft.', tools=[save])\n",
    ),
    (
        "the-parent-s-sub-agents-reordered",
        _PIPELINE,
        "app/agent.py",
        _SEQ + "from .first import first\nfrom .second import second\n\n"
        "root_agent = SequentialAgent(name='root', sub_agents=[second, first])\n",
    ),
    (
        "a-sub-agent-module-deleted",
        _PIPELINE,
        "app/first.py",
        None,
    ),
    (
        "a-custom-agent-s-class-edited-in-its-module",
        _CUSTOM,
        "app/flow.py",
        "from google.adk.agents import BaseAgent\n\n\nclass Flow(BaseAgent):\n"
        "    async def _run_async_impl(self, ctx):\n"
        "        async for event in self.sub_agents[0].run_async(ctx):\n            yield event\n",
    ),
    (
        "a-session-s-initial-state-edited",
        {
            **_PIPELINE,
            "app/main.py": "from .agent import root_agent\n\n\nasync def main(service):\n"
            "    await service.create_session(app_name='app', user_id='u', state={'notes': 1})\n",
        },
        "app/main.py",
        "from .agent import root_agent\n\n\nasync def main(service):\n"
        "    await service.create_session(app_name='app', user_id='u', state={'draft': 1})\n",
    ),
]

REGRESSIONS = [
    *AGENT_FACTS,
    (  # linted as the ADK instruction it is (a T014), not as a template file of its own (T008 on <b>)
        "an-instruction-text-file-edited-is-linted-through-its-agent",
        _TEXT_INSTRUCTION,
        "app/writer.txt",
        "Write up {itinerary} and {budget} for <b>{user_profile?}</b>.\n",
    ),
    *(
        (
            f"a-prompt-edit-reaches-an-agent-importing-it-{name}",
            _importing(statement),
            "app/prompt.py",
            'ROOT_INSTR = """Plan the trip with {itinerary} for {user_profile?} and {budget}."""\n',
        )
        for name, statement in _IMPORT_FORMS
    ),
    # (id, project, edited file, its new text: None when deleted)
    (  # its constant without a placeholder is no instruction once no agent is given it
        "an-import-removed-clears-the-prompt-module-s-instruction",
        {
            **_BASE,
            "app/prompt.py": _BASE["app/prompt.py"] + 'PAY_INSTR = """Ask how to pay."""\n',
            "app/agent.py": _BASE["app/agent.py"]
            + "pay_agent = LlmAgent(name='pay', model='m', instruction=prompt.PAY_INSTR)\n",
        },
        "app/agent.py",
        _AGENT + "prompt = None\n\n"
        "root_agent = LlmAgent(name='root', model='m', instruction=prompt.ROOT_INSTR, output_key='itinerary')\n"
        "pay_agent = LlmAgent(name='pay', model='m', instruction=prompt.PAY_INSTR)\n",
    ),
    (
        "an-output-key-removed-is-a-t014-in-a-module-imported-two-dots-up",
        _SUB,
        "app/agent.py",
        _AGENT
        + "from . import prompt\n\nroot_agent = LlmAgent(name='root', model='m', instruction=prompt.ROOT_INSTR)\n",
    ),
    (
        "a-prompt-edit-reaches-an-agent-importing-it-in-parentheses",
        _PARENS,
        "app/prompt.py",
        'ROOT_INSTR = """Plan the trip with {itinerary} for {user_profile?} and {budget}."""\n',
    ),
    (
        "a-prompt-module-deleted-is-cleared-and-its-agent-re-linted",
        _BASE,
        "app/prompt.py",
        None,
    ),
    (
        "a-file-created-that-an-agent-already-imports",
        {
            **_BASE,
            "app/agent.py": _BASE["app/agent.py"] + "from .extra import EXTRA_INSTR\n"
            "extra_agent = LlmAgent(name='extra', model='m', instruction=EXTRA_INSTR)\n",
        },
        "app/extra.py",
        'EXTRA_INSTR = """Check {itinerary} and {budget}."""\n',
    ),
    (
        "t020-s-help-names-the-writer-s-new-line",  # and the first writer in the files' order, however scanned
        _TWO_WRITERS,
        "app/tools.py",
        "import json\n\n\ndef save(tool_context):\n    tool_context.state['user_profile'] = json.loads('{}')\n",
    ),
    (  # T029 in another file: <budget> is a state key once the prompt reads {budget}
        "a-key-read-in-another-file-makes-t029-appear",
        {
            **_BASE,
            "app/writer.py": _AGENT + "writer = LlmAgent(name='writer', instruction='Keep it under <budget> euros.')\n",
        },
        "app/prompt.py",
        'ROOT_INSTR = """Plan the trip with {itinerary} for {user_profile?} within {budget?}."""\n',
    ),
    (  # T030 in the prompt module: 'plan' named as state is a written key once an agent writes it
        "an-output-key-added-makes-t030-appear",
        {**_BASE, "app/prompt.py": 'ROOT_INSTR = """Review the \'plan\' state key, then {itinerary}."""\n'},
        "app/tools.py",
        "def save(tool_context):\n    tool_context.state['user_profile'] = {}\n    tool_context.state['plan'] = 1\n",
    ),
    (  # T032: a static instruction edited, its agent's file kept
        "a-static-instruction-edited",
        {
            **_BASE,
            "app/static.py": _AGENT + "from .prompt import ROOT_INSTR\n\n"
            "guide = LlmAgent(name='guide', static_instruction='You are a guide.', instruction=ROOT_INSTR)\n",
        },
        "app/static.py",
        _AGENT + "from .prompt import ROOT_INSTR\n\n"
        "guide = LlmAgent(name='guide', static_instruction='Plan {itinerary}.', instruction=ROOT_INSTR)\n",
    ),
    (  # a tool class's methods (its writes) kept for the agent naming it, whose file is not scanned again
        "an-unrelated-edit-keeps-a-tool-class-s-writes",
        {
            "pyproject.toml": "[tool.templating]\n",
            "tools.py": "class Saver:\n    def __call__(self, tool_context):\n"
            "        tool_context.state['draft'] = 1\n",
            "app/__init__.py": "",
            "app/agent.py": "from google.adk.agents import LlmAgent, SequentialAgent\nfrom tools import Saver\n\n"
            "w = LlmAgent(name='w', model='m', instruction='Write.', tools=[Saver()])\n"
            "r = LlmAgent(name='r', model='m', instruction='Read {draft}.')\n"
            "root_agent = SequentialAgent(name='root', sub_agents=[w, r])\n",
            "other.py": "X = 1\n",
        },
        "other.py",
        "X = 2\n",
    ),
    (  # reading a custom agent's root binding loads another module while the modules are gone through
        "a-custom-agent-s-sub-agent-edited",
        {
            "pyproject.toml": "[tool.templating]\n",
            "app/__init__.py": "",
            "app/flow.py": "from google.adk.agents import BaseAgent, LlmAgent\n\n\nclass Flow(BaseAgent):\n"
            "    def __init__(self, name, first):\n        super().__init__(name=name, sub_agents=[first])\n"
            "    async def _run_async_impl(self, ctx):\n"
            "        async for event in self.sub_agents[0].run_async(ctx):\n            yield event\n",
            "app/first.py": _AGENT + "first = LlmAgent(name='first', model='m', instruction='Draft.')\n",
            "app/agent.py": _AGENT + "from .first import first\nfrom .flow import Flow\n\n"
            "root_agent = Flow(name='root', first=first)\n",
            "other/__init__.py": "",
            "other/agent.py": "from google.adk.agents import SequentialAgent\nfrom app.first import first\n\n"
            "root_agent = SequentialAgent(name='other', sub_agents=[first])\n",
        },
        "app/first.py",
        _AGENT + "first = LlmAgent(name='first', model='m', instruction='Draft {x}.')\n",
    ),
    (
        "the-last-unknown-write-removed-makes-t014s-appear",
        {**_BASE, "app/tools.py": "def save(tool_context, key):\n    tool_context.state[key] = {}\n"},
        "app/tools.py",
        "def save(tool_context, key):\n    pass\n",
    ),
]


# A tool class the agents of two apps use: its methods' writes are the agents' (`Scan.class_methods`), kept while an
# agent kept names it (an edit of one app does not scan the other again), however the edits come.
_TOOL_CLASS = {
    "pyproject.toml": "[tool.templating]\n",
    "common/__init__.py": "",
    "common/tools.py": "from google.adk.tools import BaseTool\n\n\nclass NoteTool(BaseTool):\n"
    "    async def run_async(self, *, args, tool_context):\n        tool_context.state['note'] = args\n",
    "one/__init__.py": "",
    "one/agent.py": _AGENT + "from common.tools import NoteTool\n\n"
    "root_agent = LlmAgent(name='one', model='m', instruction='Use {note}.', "
    "tools=[NoteTool(name='n', description='d')])\n",
    "two/__init__.py": "",
    "two/agent.py": _AGENT + "from common.tools import NoteTool\n\n"
    "root_agent = LlmAgent(name='two', model='m', instruction='Go.', tools=[NoteTool(name='n', description='d')])\n",
    "three/__init__.py": "",
    "three/agent.py": _AGENT + "root_agent = LlmAgent(name='three', model='m', instruction='Plan {note?}.')\n",
}
_UNNAMED = "tools=[NoteTool(name='n', description='d')]"
TOOL_CLASS_EDITS = [
    # (id, the edits in turn: file, text replaced, new text)
    ("another-app-edited", [("three/agent.py", "Plan", "Plan it")]),  # neither the class nor its users read again
    ("one-agent-left-naming-it", [("two/agent.py", _UNNAMED, "tools=[]"), ("three/agent.py", "Plan", "Plan it")]),
    ("none-left", [("two/agent.py", _UNNAMED, "tools=[]"), ("one/agent.py", _UNNAMED, "tools=[]")]),
    ("named-again", [("two/agent.py", _UNNAMED, "tools=[]"), ("two/agent.py", "tools=[]", _UNNAMED)]),
    (
        "none-left-then-another-app-edited",
        [("two/agent.py", _UNNAMED, "tools=[]"), ("one/agent.py", _UNNAMED, "tools=[]"), ("three/agent.py", "m", "n")],
    ),
    (
        "named-again-then-another-app-edited",
        [
            ("one/agent.py", _UNNAMED, "tools=[]"),
            ("two/agent.py", _UNNAMED, "tools=[]"),
            ("two/agent.py", "tools=[]", _UNNAMED),
            ("three/agent.py", "m", "n"),
        ],
    ),
    (
        "left-then-the-others-edited",
        [("one/agent.py", _UNNAMED, "tools=[]"), ("two/agent.py", "'Go.'", "'Go on.'"), ("three/agent.py", "m", "n")],
    ),
    (
        "its-method-edited",
        [("common/tools.py", "state['note']", "state['memo']"), ("two/agent.py", "'Go.'", "'Go on.'")],
    ),
]


@pytest.mark.parametrize("edits", [c[1] for c in TOOL_CLASS_EDITS], ids=[c[0] for c in TOOL_CLASS_EDITS])
def test_a_tool_class_is_kept_while_an_agent_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edits: list[tuple[str, str, str]]
) -> None:
    """After each edit, the tool classes' methods (and every other agent fact) are those a fresh scan reads, and
    so are the findings: the writes of a class's methods count while some agent names the class."""
    _write_tree(tmp_path, _TOOL_CLASS, monkeypatch)
    project = Project(tmp_path)
    published: Published = {}
    publish(published, project.lint(["."]))
    assert project.scan is not None
    assert project.scan.class_methods, "the tool class's methods are read"
    overrides: dict[str, str] = {}
    for n, (path, old, new) in enumerate(edits):
        text = overrides.get(path, _TOOL_CLASS[path])
        assert old in text
        overrides[path] = text.replace(old, new, 1)
        publish(published, project.update(path, overrides[path]))
        assert_published_as_fresh(published, overrides, f"edit {n} of {path}")
        assert_facts_as_fresh(project, overrides, f"edit {n} of {path}")


NAMER_STEPS = [
    # (id, the files scanned again at each step, as edited: the tool class no longer named there)
    ("one-of-two-namers-scanned-again", [["two/agent.py"]]),
    ("then-the-other", [["two/agent.py"], ["one/agent.py"]]),
    ("both-at-once", [["one/agent.py", "two/agent.py"]]),
    ("an-unrelated-file", [["three/agent.py"]]),
]


@pytest.mark.parametrize("steps", [c[1] for c in NAMER_STEPS], ids=[c[0] for c in NAMER_STEPS])
@pytest.mark.parametrize("given", [True, False], ids=["namers-kept", "namers-worked-out"])
def test_the_namers_of_each_tool_class_are_those_of_the_merged_agents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: list[list[str]], given: bool
) -> None:
    """`_agent_facts` keeps the files naming each tool class from the merge before, but for the files scanned
    again: what it gives is what the merged agents name (here with files scanned again chosen by hand, one namer
    kept while another is scanned again, which an edit through the project never does: it scans every reader of
    the class's file again)."""
    from templating.linter.incremental import _agent_facts, _class_namers
    from templating.pysource import scan

    _write_tree(tmp_path, _TOOL_CLASS, monkeypatch)
    texts = dict(_TOOL_CLASS)
    names = sorted(name for name in texts if name.endswith(".py"))
    old = scan(names, read=texts.__getitem__, keep_going=True, root=str(tmp_path))
    namers = _class_namers(old.agents)
    assert [sorted(paths) for paths in namers.values()] == [["one/agent.py", "two/agent.py"]]
    for again in steps:
        for name in again:
            texts[name] = texts[name].replace(_UNNAMED, "tools=[]")
        sub = scan(again, read=texts.__getitem__, keep_going=True, root=str(tmp_path))
        facts, _, namers = _agent_facts(old, sub, again, namers=namers if given else None)
        assert namers == _class_namers(facts["agents"])
        old = scan(names, read=texts.__getitem__, keep_going=True, root=str(tmp_path))
        assert namers == _class_namers(old.agents), "as a fresh scan of every file names it"


def _write_tree(root: Path, files: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`files` (path: text) written under `root`, the current folder."""
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content, encoding="utf-8")
    monkeypatch.chdir(root)


@pytest.mark.parametrize(("files", "path", "text"), [c[1:] for c in REGRESSIONS], ids=[c[0] for c in REGRESSIONS])
def test_update_publishes_what_a_fresh_run_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], path: str, text: str | None
) -> None:
    _write_tree(tmp_path, files, monkeypatch)
    project = Project(tmp_path)
    published: Published = {}
    publish(published, project.lint(["."]))
    overrides = {}
    if text is None:
        (tmp_path / path).unlink()
    elif path in files:
        overrides[path] = text
    else:
        (tmp_path / path).write_text(text, encoding="utf-8")  # a new file, saved
    result = project.update(path, text)
    assert path in result.files
    publish(published, result)
    assert_published_as_fresh(published, overrides, f"{path} edited")
    assert_facts_as_fresh(project, overrides, f"{path} edited")
    fresh = lint_project(["."], root=".", overrides=overrides)
    assert fresh.diagnostics or any(published.values()), "the case lints something"


@pytest.mark.parametrize(
    ("edited", "opened"),
    [("app/tools.py", "app/agent.py"), ("app/agent.py", "app/agent.py"), ("app/prompt.py", "app/tools.py")],
    ids=["another-file-edited-first", "the-edited-buffer-opened-again", "a-tool-module-after-a-prompt-edit"],
)
def test_a_file_opened_as_last_scanned_is_not_scanned_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edited: str, opened: str
) -> None:
    """Opening a file whose text is the one the last scan read (as saved, or the same buffer again) scans nothing
    and gives it what a fresh run gives, after an edit of another file or of itself."""
    _write_tree(tmp_path, _BASE, monkeypatch)
    project = Project(tmp_path)
    published: Published = {}
    publish(published, project.lint(["."]))
    overrides = {edited: _BASE[edited].replace("itinerary", "plan")}
    publish(published, project.update(edited, overrides[edited]))
    text = overrides.get(opened, _BASE[opened])
    overrides[opened] = text
    result = project.update(opened, text)
    assert result.files == [opened]
    assert project.scanned_again == frozenset()
    publish(published, result)
    assert_published_as_fresh(published, overrides, f"{edited} edited, {opened} opened")


def test_a_first_update_before_any_lint_publishes_every_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write_tree(tmp_path, _BASE, monkeypatch)
    edited = _BASE["app/agent.py"].replace(", output_key='itinerary'", "")
    published: Published = {}
    result = Project(tmp_path).update("app/agent.py", edited)
    publish(published, result)
    assert [(d.path, d.code) for d in result.diagnostics] == [("app/prompt.py", "T014")]
    assert_published_as_fresh(published, {"app/agent.py": edited}, "a first update")


# --- T029 (the keys known, and the first reader named for each) and T030 (the keys written) kept apart by an edit

_NAMES = {
    "pyproject.toml": "[tool.templating]\n",
    "app/__init__.py": "from . import agent\n",
    "app/prompt.py": 'ROOT = """Read the plan state key. Write a short story about <topic>."""\n'
    'OTHER = """Use {topic}. Keep the notes state key short."""\n',
    "app/agent.py": _AGENT + "from . import prompt\n\n"
    "root_agent = LlmAgent(name='root', model='m', instruction=prompt.ROOT, output_key='plan')\n"
    "other = LlmAgent(name='other', model='m', instruction=prompt.OTHER)\n",
    "app/tools.py": "def save(tool_context):\n    tool_context.state['topic'] = 1\n",  # imported by no file
}
STATE_NAMES = [
    # (id, path, new text): each changes the keys known, the keys written, or the reader named first
    ("a-reader-added", "app/extra.py", 'EXTRA = """Use {topic} and {seat}."""\n'),
    ("the-only-reader-removed", "app/prompt.py", _NAMES["app/prompt.py"].replace("Use {topic}.", "Use it.")),
    ("the-written-key-removed", "app/agent.py", _NAMES["app/agent.py"].replace(", output_key='plan'", "")),
    ("another-key-written", "app/agent.py", _NAMES["app/agent.py"].replace("output_key='plan'", "output_key='topic'")),
    ("a-key-written-elsewhere-removed", "app/tools.py", _NAMES["app/tools.py"].replace("'topic'", "'seat'")),
    ("a-key-named-in-prose-written", "app/tools.py", _NAMES["app/tools.py"].replace("'topic'", "'notes'")),
]


@pytest.mark.parametrize(("path", "text"), [c[1:] for c in STATE_NAMES], ids=[c[0] for c in STATE_NAMES])
def test_t029_and_t030_after_an_edit_are_a_fresh_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str, text: str
) -> None:
    _write_tree(tmp_path, _NAMES, monkeypatch)
    project = Project(tmp_path)
    published: Published = {}
    first = project.lint(["."])
    assert {d.code for d in first.diagnostics} >= {"T029", "T030"}
    publish(published, first)
    overrides = {}
    if path in _NAMES:
        overrides[path] = text
    else:
        (tmp_path / path).write_text(text, encoding="utf-8")
    publish(published, project.update(path, text))
    assert_published_as_fresh(published, overrides, f"{path} edited")


# --- the first update after a whole lint (or a workspace folder read) reuses every file's findings from it

FIRST_UPDATES = [
    # (id, files, path, new text: None deletes it, "" opens it as saved)
    ("an-agent-edited", _BASE, "app/agent.py", _BASE["app/agent.py"].replace(", output_key='itinerary'", "")),
    ("a-prompt-edited", _BASE, "app/prompt.py", _BASE["app/prompt.py"].replace("{itinerary}", "{plan}")),
    ("a-tool-edited", _TWO_WRITERS, "app/z_tools.py", "def keep(tool_context):\n    pass\n"),
    ("a-file-opened-as-saved", _BASE, "app/prompt.py", ""),
    ("another-file-opened-as-saved", _SUB, "app/sub/agent.py", ""),
    ("a-tool-module-deleted", _BASE, "app/tools.py", None),
    ("a-writer-deleted", _TWO_WRITERS, "app/z_tools.py", None),
    ("a-prompt-module-created", _BASE, "app/extra.py", 'EXTRA_INSTR = """Use {seat} and {itinerary}."""\n'),
    ("an-instruction-text-file-edited", _TEXT_INSTRUCTION, "app/writer.txt", "Write for {user:name}.\n"),
]


_SOLO = 'from google.adk.agents import Agent\n\nsolo = Agent(name="solo", model="m", instruction="Hi {user:name}.")\n'


@pytest.mark.parametrize("start", ["lint", "read_context", "read_context-by-workers"])
@pytest.mark.parametrize(("files", "path", "text"), [c[1:] for c in FIRST_UPDATES], ids=[c[0] for c in FIRST_UPDATES])
def test_a_first_update_reuses_the_findings_of_the_whole_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, start: str, files: dict[str, str], path: str, text: str | None
) -> None:
    """After a whole lint (the command line's, or an editor's folder read, its groups of files scanned by worker
    processes as a large folder's are), the first update works out every file's findings once (the last run's
    are the ones before it), and publishes what a fresh run gives."""
    from templating.linter import cold

    by_workers = start.endswith("by-workers")
    if by_workers:  # the pool however small the project; a second app: two groups, one of them a worker's
        files = {**files, "solo/agent.py": _SOLO}
        monkeypatch.setenv("TEMPLATING_LINT_JOBS", "2")
        monkeypatch.setattr(cold, "POOL_THRESHOLD", 0)
        monkeypatch.setattr(cold, "_CHUNK", 1)
    _write_tree(tmp_path, files, monkeypatch)
    project = Project(tmp_path)
    published: Published = {}
    if start == "lint":
        publish(published, project.lint(["."]))
    else:
        sent = []
        if by_workers:
            chunks = cold._chunks
            monkeypatch.setattr(cold, "_chunks", lambda *a: sent.append(chunks(*a)) or sent[-1])
        project.read_context()
        assert not by_workers or len(sent[0]) >= 2, "two chunks: a worker scanned one"
        publish(published, lint_project(["."], root="."))  # what the editor showed for the folder
    overrides = {}
    if text is None:
        (tmp_path / path).unlink()
    elif text == "":
        text = overrides[path] = files[path]
    elif path in files:
        overrides[path] = text
    else:
        (tmp_path / path).write_text(text, encoding="utf-8")  # a new file, saved
    runs = []
    findings = project._python_findings
    monkeypatch.setattr(project, "_python_findings", lambda *a, **k: runs.append(a) or findings(*a, **k))
    result = project.update(path, text)
    assert path in result.files
    opened = path in files and text == files[path]
    assert len(runs) == (0 if opened else 1), "every file's findings worked out once (none for a file opened)"
    if opened:
        assert project.scanned_again == frozenset()
    publish(published, result)
    assert_published_as_fresh(published, overrides, f"{path} updated after {start}")
    assert_facts_as_fresh(project, overrides, f"{path} updated after {start}")


@pytest.mark.skipif(not hasattr(os, "symlink") or os.name != "posix", reason="symbolic links")
def test_a_module_imported_through_a_linked_folder_has_its_findings_after_a_folder_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module with no word the prefilter keeps, imported only through a linked package folder (`pkg/sub` ->
    `real_sub`): the editor's folder read scans it as its own file, so opening it, or typing in it, shows the
    findings a fresh run gives it (not nothing, as if its instruction were another file's)."""
    agent = (
        "from google.adk.agents import Agent\nfrom .sub.words import GREETING\n\n"
        "root_agent = Agent(name='helper', model='m', instruction=GREETING + ' Reply in {language}.')\n"
    )
    words = 'GREETING = "Use {mood} and {user:nmae}. {{x}"\n'
    _write_tree(
        tmp_path,
        {"pkg/__init__.py": "", "pkg/agent.py": agent, "real_sub/__init__.py": "", "real_sub/words.py": words},
        monkeypatch,
    )
    (tmp_path / "pkg/sub").symlink_to("../real_sub")
    project = Project(tmp_path)
    project.read_context()
    fresh = sorted((d.path, d.code) for d in lint_project(["real_sub/words.py"], root=".").diagnostics)
    assert {code for _, code in fresh} >= {"T014", "T017"}
    for text in (words, words + "\n"):  # opened as saved, then typed in
        result = project.update("real_sub/words.py", text, wanted=["real_sub/words.py"])
        assert sorted((d.path, d.code) for d in result.diagnostics) == fresh


@pytest.mark.skipif(not hasattr(os, "symlink") or os.name != "posix", reason="symbolic links")
def test_an_edit_of_a_module_imported_up_out_of_a_linked_folder_lints_its_importer_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`real_sub/tools.py`, imported as `app.sub.tools` through the link `app/sub`, calls `remember` from
    `..memory`, which is `app/memory.py`: an edit of that module scans the tool's module again (the editor's
    import graph resolves the relative import from the link's side too), and an edit of the tool's module scans the
    agent's again (its import goes through the link), so the write kept, lost and got back is seen as a fresh run
    sees it (T024: written by the tool, too late; T014: written by nothing)."""
    write_linked(tmp_path)
    monkeypatch.chdir(tmp_path)
    project = Project(tmp_path)
    published: Published = {}
    publish(published, project.lint(["."]))
    memory, tools = linked_project.MEMORY, linked_project.TOOLS
    for step, path, text, code in [
        ("a comment added", "app/memory.py", "# where the topic is kept\n" + memory, "T024"),
        ("another key written", "app/memory.py", memory.replace('"topic"', '"subject"'), "T014"),
        ("the write back", "app/memory.py", memory, "T024"),
        ("the call gone", "real_sub/tools.py", tools.replace("remember(tool_context.state, topic)", "pass"), "T014"),
        ("the call back", "real_sub/tools.py", tools, "T024"),
    ]:
        overrides = {path: text}
        publish(published, project.update(path, text))
        assert_published_as_fresh(published, overrides, step)
        assert_facts_as_fresh(project, overrides, step)
        assert [finding[0] for finding in published["app/agent.py"][0]] == [code], step


@pytest.mark.skipif(not hasattr(os, "symlink") or os.name != "posix", reason="symbolic links")
def test_the_import_graph_works_every_file_out_again_when_the_links_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same texts synced with the project's links, then without: what each file may read follows the links
    given (an import through `app/sub`, a relative one going up out of `real_sub`), not those of the first sync."""
    from templating.linter.reach import ImportGraph
    from templating.places import LinkedFolders

    write_linked(tmp_path)
    monkeypatch.chdir(tmp_path)
    texts = {name: text for name, text in linked_project.FILES.items() if name.endswith(".py")}
    links = LinkedFolders([("app/sub", str((tmp_path / "real_sub").resolve()))])
    graph = ImportGraph()
    for taken, linked in [(None, False), (links, True), (None, False)]:
        graph.sync(texts, links=taken)
        assert ("app/memory.py" in graph.reads("real_sub/tools.py")) is linked
        assert ("real_sub/tools.py" in graph.reads("app/agent.py")) is linked


def test_an_edit_seen_from_a_folder_below_the_root_lints_the_importers_going_up_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The project linted from `pkg/app` (the editor's current folder below the root): `from ..memory import
    remember` in `agent.py` reads `pkg/memory.py`, so an edit of that module lints `agent.py` again, as a fresh run
    from the same folder finds it."""
    memory = 'def remember(memory, topic: str) -> None:\n    memory["topic"] = topic\n'
    agent = (
        "from google.adk.agents import LlmAgent\nfrom google.adk.tools import ToolContext\n\n"
        "from ..memory import remember\n\n\n"
        "def note_topic(topic: str, tool_context: ToolContext) -> dict:\n"
        "    remember(tool_context.state, topic)\n    return {}\n\n\n"
        "root_agent = LlmAgent(name='helper', model='m', instruction='Talk about {topic}.', tools=[note_topic])\n"
    )
    files = {
        "pyproject.toml": "[tool.templating]\n",
        "pkg/__init__.py": "",
        "pkg/memory.py": memory,
        "pkg/app/__init__.py": "",
        "pkg/app/memory.py": memory.replace('"topic"', '"other"'),
        "pkg/app/agent.py": agent,
    }
    _write_tree(tmp_path, files, monkeypatch)
    monkeypatch.chdir(tmp_path / "pkg/app")
    root, edited = str(tmp_path), str(tmp_path / "pkg/memory.py")
    project = Project(tmp_path)
    assert [d.code for d in project.lint([root]).diagnostics] == ["T024"]  # written by the tool, too late
    for text, code in [(memory.replace('"topic"', '"subject"'), "T014"), (memory, "T024")]:
        result = project.update(edited, text, wanted=["agent.py"])
        fresh = lint_project([root], root=root, overrides={edited: text})
        assert [(d.path, d.code) for d in fresh.diagnostics] == [("agent.py", code)]
        assert [(d.path, d.code) for d in result.diagnostics] == [("agent.py", code)]


# --- the import graph an update reads gives what testing every pair of files gives

GRAPH_CASES = [
    # (id, files: path -> text); every file is a target, with its text and with another's as the one before
    (
        "relative-absolute-and-dotted",
        {
            "app/__init__.py": "from . import agent\n",
            "app/prompt.py": "ROOT = 'x'\n",
            "app/sub/__init__.py": "",
            "app/sub/agent.py": "from .. import prompt\nfrom app.sub import tools\n",
            "app/sub/tools.py": "import app.prompt\n",
            "app/agent.py": "import app\nX = app.sub.agent.Y\nfrom app.sub.tools import (\n    save,\n)\n",
        },
    ),
    (
        "a-package-at-the-top-and-absolute-paths",
        {
            "__init__.py": "",
            "agent.py": "from . import prompt\nfrom . import x\n",
            "prompt.py": "from .agent import A\n",
            "/srv/p/app/agent.py": "from .prompt import P\nimport p.app.prompt\n",
            "/srv/p/app/prompt.py": "from ..app import agent\n",
        },
    ),
]


def _graph_agrees(texts: dict[str, str], graph: Any, targets: list[str]) -> None:
    from templating.linter.reach import affected

    files = sorted(texts)
    for n, target in enumerate(targets):
        before = texts[files[(n * 7 + 3) % len(files)]]
        for previous in (None, before):
            groups = [tuple(files[n % len(files) :: 5])]  # files giving one instruction together
            expected = affected(target, texts, previous, groups, {})
            assert graph.affected(target, texts, previous, groups) == expected, (target, previous is None)


@pytest.mark.parametrize("files", [c[1] for c in GRAPH_CASES], ids=[c[0] for c in GRAPH_CASES])
def test_the_import_graph_gives_what_testing_every_pair_gives(files: dict[str, str]) -> None:
    from templating.linter.reach import ImportGraph

    graph = ImportGraph()
    _graph_agrees(dict(files), graph, sorted(files))
    edited = {**files, sorted(files)[0]: "from .prompt import ROOT\nimport app.sub\n"}  # a text changed
    _graph_agrees(edited, graph, sorted(edited))
    fewer = dict(list(edited.items())[1:])  # a file deleted
    _graph_agrees(fewer, graph, sorted(fewer))


@pytest.mark.parametrize("files", [c[1] for c in GRAPH_CASES], ids=[c[0] for c in GRAPH_CASES])
def test_the_import_graph_told_which_file_changed_reads_as_a_fresh_graph(files: dict[str, str]) -> None:
    # (the same mapping changed in one file, as an edit of one buffer keeps it: only that file is looked at)
    from templating.linter.reach import ImportGraph

    texts = dict(files)
    graph = ImportGraph()
    graph.sync(texts)
    for n, edited in enumerate(sorted(texts)):
        texts[edited] = ("from .prompt import ROOT\nimport app.sub\n", "", files[edited])[n % 3]
        graph.sync(texts, changed=[edited])
        fresh = ImportGraph()
        fresh.sync(dict(texts))
        assert {path: graph.reads(path) for path in texts} == {path: fresh.reads(path) for path in texts}, edited
        _graph_agrees(texts, graph, sorted(texts))


@settings(max_examples=6, deadline=None, derandomize=True, database=None, phases=[Phase.explicit, Phase.generate])
@given(data=st.data())
def test_the_import_graph_agrees_on_the_corpus_after_random_edits(data: Any) -> None:
    from templating.linter.reach import ImportGraph

    if AGENTS is None or not AGENTS.is_dir():
        if os.environ.get("TEMPLATING_REQUIRE_CORPUS") == "1":
            pytest.fail("TEMPLATING_REQUIRE_CORPUS=1 but the shared corpus is absent", pytrace=False)
        pytest.skip("the shared corpus is absent (set TEMPLATING_ADK_SAMPLES)")
    texts = _corpus_texts()
    files = sorted(texts)
    graph = ImportGraph()
    graph.sync(texts)
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        edited = data.draw(st.sampled_from(files), label="edited")
        source = data.draw(st.sampled_from(files), label="text of")
        texts = {**texts, edited: texts[source]}  # another file's imports, relative ones read from here
        targets = [data.draw(st.sampled_from(files), label="target")]
        _graph_agrees(texts, graph, [edited, *targets])


# --- an import reaches the module it names (resolved as the scanner resolves it), not every module of that name

_TRAVEL = {  # two copies of one app in one workspace, the packages keeping their names (a monorepo)
    "a/travel/__init__.py": "from . import agent\n",
    "a/travel/prompt.py": "ROOT = 'Plan {itinerary}.'\n",
    "a/travel/agent.py": "from travel import prompt\nfrom travel.prompt import ROOT\n",
    "b/travel/__init__.py": "from . import agent\n",
    "b/travel/prompt.py": "ROOT = 'Plan {itinerary}.'\n",
    "b/travel/agent.py": "from travel import prompt\n",
}

# (id, files, edited file, its new text (None: deleted, "" as an update gives it), the files it reaches)
REACH_CASES: list[tuple[str, dict[str, str], str, str | None, set[str]]] = [
    (
        "same-named-modules-in-two-packages",
        _TRAVEL,
        "a/travel/prompt.py",
        "ROOT = 'Plan {plan}.'\n",
        {"a/travel/prompt.py", "a/travel/agent.py", "a/travel/__init__.py"},  # the package imports its agent
    ),
    (
        "a-package-s-init-reaches-its-copy-only",
        _TRAVEL,
        "b/travel/__init__.py",
        "",
        {"b/travel/__init__.py", "b/travel/agent.py", "b/travel/prompt.py"},  # what its old text read, too
    ),
    (
        "relative-imports-two-dots-up",
        {
            "a/app/prompt.py": "",
            "a/app/sub/agent.py": "from ..prompt import ROOT\n",
            "b/app/prompt.py": "",
            "b/app/sub/agent.py": "from ..prompt import ROOT\n",
        },
        "b/app/prompt.py",
        "ROOT = 'x'\n",
        {"b/app/prompt.py", "b/app/sub/agent.py"},
    ),
    (
        "from-dot-import-prompt",
        {
            "a/app/agent.py": "from . import prompt\nX = prompt.ROOT\n",
            "a/app/prompt.py": "",
            "b/app/agent.py": "from . import prompt\nX = prompt.ROOT\n",
            "b/app/prompt.py": "",
        },
        "a/app/prompt.py",
        "ROOT = 'x'\n",
        {"a/app/prompt.py", "a/app/agent.py"},
    ),
    (
        "import-pkg-prompt-as-p",
        {
            "x/pkg/prompt.py": "",
            "x/main.py": "import pkg.prompt as p\nX = p.ROOT\n",
            "y/pkg/prompt.py": "",
            "y/main.py": "import pkg.prompt as p\nX = p.ROOT\n",
        },
        "y/pkg/prompt.py",
        "ROOT = 'x'\n",
        {"y/pkg/prompt.py", "y/main.py"},
    ),
    (
        "a-package-imported-and-the-module-named-after-a-dot",
        {
            "app/__init__.py": "",
            "app/sub/prompt.py": "",
            "main.py": "import app\nX = app.sub.prompt.ROOT\n",
            "lib/app/sub/prompt.py": "",
        },
        "app/sub/prompt.py",
        "ROOT = 'x'\n",
        {"app/sub/prompt.py", "main.py"},
    ),
    (
        "the-same-dotted-name-from-another-folder-is-not-reached",
        {
            "app/__init__.py": "",
            "app/sub/prompt.py": "",
            "main.py": "import app\nX = app.sub.prompt.ROOT\n",
            "lib/app/sub/prompt.py": "",
        },
        "lib/app/sub/prompt.py",
        "ROOT = 'x'\n",
        {"lib/app/sub/prompt.py"},
    ),
    (
        "a-module-deleted-reaches-its-importers-only",
        _TRAVEL,
        "b/travel/prompt.py",
        None,
        {"b/travel/prompt.py", "b/travel/agent.py", "b/travel/__init__.py"},
    ),
    (
        "a-module-added-that-an-agent-already-imports",
        {
            **_TRAVEL,
            "a/travel/agent.py": "from travel.extra import EXTRA\n",
            "b/travel/agent.py": "from travel.extra import EXTRA\n",
        },
        "a/travel/extra.py",
        "EXTRA = 'x'\n",
        {"a/travel/extra.py", "a/travel/agent.py", "a/travel/__init__.py"},
    ),
    (  # a top package none of the project's (installed; a src/ layout seen from tests/): taken by name
        "an-import-not-resolved-falls-back-to-the-module-s-name",
        {
            "proj/src/app/__init__.py": "",
            "proj/src/app/prompt.py": "",
            "proj/src/app/agent.py": "from app.prompt import ROOT\n",
            "proj/tests/test_agent.py": "from app.prompt import ROOT\n",
            "other/app/prompt.py": "",
        },
        "proj/src/app/prompt.py",
        "ROOT = 'x'\n",
        {"proj/src/app/prompt.py", "proj/src/app/agent.py", "proj/tests/test_agent.py"},
    ),
]


@pytest.mark.parametrize(
    ("files", "edited", "text", "expected"), [c[1:] for c in REACH_CASES], ids=[c[0] for c in REACH_CASES]
)
def test_an_edit_reaches_the_files_importing_that_very_module(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    files: dict[str, str],
    edited: str,
    text: str | None,
    expected: set[str],
) -> None:
    from templating.linter.reach import ImportGraph, affected

    monkeypatch.chdir(tmp_path)
    before = files.get(edited)
    texts = {**files, edited: "" if text is None else text}  # a deleted file: "", as `Project.update` gives it
    graph = ImportGraph()
    graph.sync(files)  # the project as it was, then the edit
    assert graph.affected(edited, texts, before, []) == expected
    assert affected(edited, texts, before, [], {}) == expected


def test_an_update_in_one_copy_of_an_app_scans_that_copy_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two copies of an app whose agent imports its prompt module by absolute name, as the corpus's do: an
    edit of one copy's prompt module scans that copy's files only, and publishes what a fresh run reports."""
    app = {
        "app/__init__.py": "from . import agent\n",
        "app/prompt.py": _BASE["app/prompt.py"],
        "app/tools.py": _BASE["app/tools.py"],
        "app/agent.py": _AGENT + "from app import prompt\n\n"
        "root_agent = LlmAgent(name='root', model='m', instruction=prompt.ROOT_INSTR, output_key='itinerary')\n",
    }
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'mono'\n", encoding="utf-8")
    for copy in ("one", "two"):
        for name, content in app.items():
            (tmp_path / copy / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / copy / name).write_text(content, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    project = Project(tmp_path)
    published: Published = {}
    publish(published, project.lint(["."]))
    edited = 'ROOT_INSTR = """Plan the trip with {itinerary} for {user_profile?} and {budget}."""\n'
    result = project.update("two/app/prompt.py", edited)
    assert project.scanned_again == {"two/app/prompt.py", "two/app/agent.py", "two/app/__init__.py"}
    publish(published, result)
    assert_published_as_fresh(published, {"two/app/prompt.py": edited}, "two/app/prompt.py edited")
    assert any(d.path == "two/app/prompt.py" and "budget" in d.message for d in result.diagnostics)


def test_an_edit_in_one_copy_of_the_corpus_reaches_no_other_copy() -> None:
    """The corpus copied twice as one workspace, the packages keeping their names: what each file of the
    first copy reads is in that copy, and the graph gives what testing every pair of files gives."""
    from templating.linter.reach import ImportGraph

    if AGENTS is None or not AGENTS.is_dir():
        if os.environ.get("TEMPLATING_REQUIRE_CORPUS") == "1":
            pytest.fail("TEMPLATING_REQUIRE_CORPUS=1 but the shared corpus is absent", pytrace=False)
        pytest.skip("the shared corpus is absent (set TEMPLATING_ADK_SAMPLES)")
    texts = {f"{copy}/{name}": text for copy in ("c0", "c1") for name, text in _corpus_texts().items()}
    graph = ImportGraph()
    graph.sync(texts)
    assert sum(bool(graph.reads(path)) for path in texts) > 100, "the corpus's files import each other"
    crossing = {
        path: sorted(graph.reads(path))
        for path in texts
        if not all(other.split("/")[0] == path.split("/")[0] for other in graph.reads(path))
    }
    assert not crossing
    prompt = "c1/travel-concierge/travel_concierge/prompt.py"
    reached = graph.affected(prompt, texts, texts[prompt], [])
    assert reached == {
        path.replace("c0/", "c1/", 1) for path in graph.affected(prompt.replace("c1", "c0"), texts, None, [])
    }
    assert "c1/travel-concierge/travel_concierge/agent.py" in reached
    _graph_agrees(texts, graph, [prompt, "c0/travel-concierge/travel_concierge/agent.py"])


_CORPUS_TEXTS: dict[str, str] = {}


def _corpus_texts() -> dict[str, str]:
    """The Python files of the corpus's agents, by path relative to the agents' folder."""
    if not _CORPUS_TEXTS:
        assert AGENTS is not None
        for path in sorted(AGENTS.rglob("*.py")):
            if not any(part.startswith(".") for part in path.relative_to(AGENTS).parts):
                name = path.relative_to(AGENTS).as_posix()
                _CORPUS_TEXTS[name] = path.read_text(encoding="utf-8", errors="replace")
    return dict(_CORPUS_TEXTS)


def test_template_files_created_and_deleted_through_update_are_chosen_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.templating]\ninclude = ["*.prompt"]\n', encoding="utf-8")
    (tmp_path / "a.prompt").write_text("Hello <name>.\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    project = Project(tmp_path)
    assert project.lint().files == ["a.prompt"]
    (tmp_path / "b.prompt").write_text("Bye < name >.\n", encoding="utf-8")
    project.update("b.prompt", None)
    (tmp_path / "a.prompt").unlink()
    project.update("a.prompt", None)
    again, fresh = project.lint(), lint_project([], root=tmp_path)
    assert again.files == fresh.files == ["b.prompt"]
    assert [d.code for d in again.diagnostics] == [d.code for d in fresh.diagnostics] == ["T002"]


# -- the agent model kept with the project (templating.agent_model)

_PIPELINE = {
    "pyproject.toml": "[tool.templating]\n",
    "blog/__init__.py": "from . import agent\n",
    "blog/prompt.py": 'WRITER = "Draft the post. Critique so far: {critique}"\nCRITIC = "Review: {draft}"\n',
    "blog/agent.py": (
        "from google.adk.agents import LlmAgent, SequentialAgent\n"
        "from .prompt import CRITIC, WRITER\n"
        'writer = LlmAgent(name="writer", instruction=WRITER, output_key="draft")\n'
        'critic = LlmAgent(name="critic", instruction=CRITIC, output_key="critique")\n'
        'root_agent = SequentialAgent(name="blog", sub_agents=[writer, critic])\n'
    ),
}


def _kinds(project: Project) -> dict[tuple[str | None, str], str]:
    model = project.agent_model
    return {
        (agent.name, read.key): model.availability(agent, read.key).kind
        for agent in model.agents.values()
        for read in model.reads(agent)
    }


def test_the_agent_model_is_rebuilt_when_an_edit_changes_the_apps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_tree(tmp_path, _PIPELINE, monkeypatch)
    project = Project(tmp_path)
    project.lint()
    assert _kinds(project) == {("writer", "critique"): "later", ("critic", "draft"): "before"}
    edited = _PIPELINE["blog/agent.py"].replace("[writer, critic]", "[critic, writer]")
    project.update("blog/agent.py", edited)
    assert _kinds(project) == {("writer", "critique"): "before", ("critic", "draft"): "later"}
    fresh = Project(tmp_path, overrides={"blog/agent.py": edited})
    fresh.lint()
    assert _kinds(fresh) == _kinds(project)


def test_an_agent_config_app_is_linted_and_its_edits_rebuild_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("yaml")
    (tmp_path / "pyproject.toml").write_text("[tool.templating]\n", encoding="utf-8")
    app = tmp_path / "news"
    app.mkdir()
    root = "agent_class: SequentialAgent\nname: news\nsub_agents:\n  - config_path: writer.yaml\n"
    (app / "root_agent.yaml").write_text(root, encoding="utf-8")
    writer = "name: writer\nmodel: gemini-2.5-flash\ninstruction: |\n  Write for {audience}.\n"
    (app / "writer.yaml").write_text(writer, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    project = Project(tmp_path)
    result = project.lint()
    assert [(d.path, d.code) for d in result.diagnostics] == [("news/writer.yaml", "T014")]
    assert [agent.name for agent in project.agent_model.agents.values()] == ["news", "writer"]
    edited = project.update("news/writer.yaml", writer.replace("{audience}", "{audience?}"))
    assert "news/writer.yaml" in edited.files
    assert [d for d in edited.diagnostics if d.path == "news/writer.yaml"] == []
    assert [r.optional for r in project.agent_model.reads(project.agent_model.agents_in("news/writer.yaml")[0])] == [
        True
    ]


@pytest.mark.parametrize("wanted", [None, ["news/writer.yaml"], ["news/root_agent.yaml", "news/tools.py"]])
def test_an_agent_config_edit_gives_the_files_asked_for_what_a_fresh_run_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wanted: list[str] | None
) -> None:
    """As for a Python file, an editor's update of an Agent Config file works out the findings of the files it
    asks for (and of the file edited) only, each what a fresh run gives it."""
    pytest.importorskip("yaml")
    files = {
        "pyproject.toml": "[tool.templating]\n",
        "news/root_agent.yaml": "agent_class: SequentialAgent\nname: news\nsub_agents:\n  - config_path: writer.yaml\n",
        "news/writer.yaml": "name: writer\nmodel: gemini-2.5-flash\ninstruction: |\n  Write for {audience}.\n",
        "news/tools.py": "def save(tool_context):\n    tool_context.state['audience'] = 'all'\n",
        "other/prompt.py": 'GREETING = """Hello {user:name}, {mood}."""\n',
        "other/agent.py": (
            "from google.adk.agents import LlmAgent\nfrom .prompt import GREETING\n"
            "root_agent = LlmAgent(name='greeter', instruction=GREETING)\n"
        ),
    }
    _write_tree(tmp_path, files, monkeypatch)
    project = Project(tmp_path)
    project.lint()
    asked: list[set[str] | None] = []
    real = Project._all_findings

    def counted(self: Project, found: Any, context: Any, **options: Any) -> Any:
        asked.append(options.get("only"))
        return real(self, found, context, **options)

    monkeypatch.setattr(Project, "_all_findings", counted)
    edited = files["news/writer.yaml"].replace("{audience}", "{audience} and {region}")
    result = project.update("news/writer.yaml", edited, wanted=wanted)
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    fresh = Project(tmp_path, overrides={"news/writer.yaml": edited}).lint()
    for name in result.files if wanted is None else ["news/writer.yaml", *wanted]:
        assert [repr(d) for d in result.diagnostics if d.path == name] == [
            repr(d) for d in fresh.diagnostics if d.path == name
        ], name
    assert any(d.code == "T014" and "region" in d.message for d in result.diagnostics)
    if wanted is not None:
        assert asked
        assert all(only is not None and "other/prompt.py" not in only for only in asked)
        assert "other/prompt.py" not in result.files
    else:
        assert None in asked
    # then an update without `wanted` (another editor, a save): every file as a fresh run gives it
    again = edited.replace("{region}", "{region?}")
    later = project.update("news/writer.yaml", again)
    fresh_again = Project(tmp_path, overrides={"news/writer.yaml": again}).lint()
    assert sorted(repr(d) for d in later.diagnostics) == sorted(
        repr(d) for d in fresh_again.diagnostics if d.path in later.files
    )
    assert not any("region" in d.message for d in later.diagnostics)


# -- the file system's answers the scans keep from one edit to the next (`pysource.imports.FileAnswers`)


class _FileCalls:
    """The calls of `os.stat` and `os.lstat` (name, absolute path) the scans' import resolution makes
    (`pysource.imports`, through `os.path.realpath` and `places.shown` too; not its reader's)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import templating
        from templating import places
        from templating.pysource import imports

        self.package = os.path.dirname(templating.__file__)
        self.resolving, self.through = imports.__file__, places.__file__
        self.calls: set[tuple[str, str]] = set()
        monkeypatch.setattr(os, "stat", self.wrap("stat", os.stat))
        monkeypatch.setattr(os, "lstat", self.wrap("lstat", os.lstat))

    def wrap(self, name: str, call: Callable[..., Any]) -> Callable[..., Any]:
        def recorded(path: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(path, str | os.PathLike) and self.asked_by_resolution(sys._getframe(1)):
                self.calls.add((name, os.path.abspath(os.fspath(path))))
            return call(path, *args, **kwargs)

        return recorded

    def asked_by_resolution(self, frame: Any) -> bool:
        while frame is not None:  # the nearest of the package's frames (those of places.shown left out)
            name = frame.f_code.co_filename
            if name.startswith(self.package) and name != self.through:
                return bool(name == self.resolving)
            frame = frame.f_back
        return False

    def take(self) -> set[tuple[str, str]]:
        taken, self.calls = self.calls, set()
        return taken


_APP_PROMPT = 'ROOT = """Plan the trip for {user_profile?} with {itinerary}."""\n'
_APP_AGENT = (
    "from google.adk.agents import LlmAgent\n{imports}\n\nroot_agent = LlmAgent(name='root', model='m', {given})\n"
)

# the app's agent imports its prompt as authors write it (or a module nowhere, or one above the root); the file
# edited; whether its scan looks above the root (the modules found inside it end the search first)
FILE_ANSWERS = {
    "absolute-from-import": ("from app import prompt", "instruction=prompt.ROOT", "app/prompt.py", False),
    "relative-from-import": ("from .prompt import ROOT", "instruction=ROOT", "app/prompt.py", False),
    "dotted-import": ("import app.prompt as prompt", "instruction=prompt.ROOT", "app/prompt.py", False),
    "package-import": ("from . import prompt", "instruction=prompt.ROOT", "app/agent.py", False),
    "module-nowhere": ("from helpers.text import ROOT", "instruction=ROOT", "app/agent.py", True),
    "module-above-the-root": ("from shared.prompts import ROOT", "instruction=ROOT", "app/agent.py", True),
}


def _app(root: Path, imports: str, given: str, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {
        "pyproject.toml": "[project]\nname = 'app'\n",
        "app/__init__.py": "from . import agent\n",
        "app/prompt.py": _APP_PROMPT,
        "app/agent.py": _APP_AGENT.format(imports=imports, given=given),
    }
    _write_tree(root, files, monkeypatch)


def _inside(calls: set[tuple[str, str]], root: Path) -> set[tuple[str, str]]:
    return {(name, path) for name, path in calls if path == str(root) or path.startswith(str(root) + os.sep)}


@pytest.mark.parametrize(("imports", "given", "edited", "above"), FILE_ANSWERS.values(), ids=FILE_ANSWERS.keys())
def test_an_edit_asks_the_file_system_again_only_outside_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, imports: str, given: str, edited: str, above: bool
) -> None:
    """A scan after an edit asks the file system nothing inside the root that an earlier scan asked (no `stat`
    of a candidate of an import, no `lstat` of a path resolved: the project keeps those answers until its walk is
    forgotten); what is outside it (the folders above the root) it asks again; and it publishes what a fresh run
    reports. (The edited file's name, unsaved, is a candidate never taken as not there: its first resolution
    comes with the edit, and is kept too.)"""
    root = (tmp_path / "project").resolve()
    _app(root, imports, given, monkeypatch)
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "prompts.py").write_text(_APP_PROMPT, encoding="utf-8")  # outside: never read
    calls = _FileCalls(monkeypatch)
    project = Project(root)
    published: Published = {}
    publish(published, project.lint(["."]))
    first = calls.take()
    assert _inside(first, root), "the first scan looked for the imported modules in the project"
    text = (root / edited).read_text(encoding="utf-8") + "# edited\n"
    publish(published, project.update(edited, text))
    second = calls.take()
    assert _inside(second, root) & _inside(first, root) == set()
    assert bool((second - _inside(second, root)) & first) is above  # those above the root: asked again
    assert_published_as_fresh(published, {edited: text}, f"{edited} edited")
    calls.take()
    publish(published, project.update(edited, text + "# again\n"))
    third = calls.take()
    assert _inside(third, root) == set()  # (the edit's own candidates, those an unsaved name gives, kept too)
    assert bool(third - _inside(third, root)) is above
    project.walker.forget()  # the project's files may have changed: its answers go with the walk
    publish(published, project.update(edited, text))
    assert _inside(calls.take(), root) & _inside(first, root)
    assert_published_as_fresh(published, {edited: text}, f"{edited} edited again")


def test_a_module_created_on_disk_is_found_once_the_project_is_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent imports a prompt module not written yet: once it is (on disk), the editor's file event (an
    update of the new file with its text) makes the project find it, as a fresh run does."""
    root = (tmp_path / "project").resolve()
    _app(root, "from .prompts import ROOT", "instruction=ROOT", monkeypatch)
    project = Project(root)
    published: Published = {}
    publish(published, project.lint(["."]))
    assert_published_as_fresh(published, {}, "the first run")
    assert not any(item.path == "app/prompts.py" for item in project.read_context().instructions)
    (root / "app" / "prompts.py").write_text(_APP_PROMPT, encoding="utf-8")
    publish(published, project.update("app/prompts.py", _APP_PROMPT))
    assert_published_as_fresh(published, {}, "app/prompts.py created")
    assert any(d.path == "app/prompts.py" for d in project.lint(["."]).diagnostics)
    publish(published, project.update("app/agent.py", (root / "app/agent.py").read_text(encoding="utf-8") + "#\n"))
    assert any(item.path == "app/prompts.py" for item in project.read_context().instructions)
    (root / "app" / "prompts.py").unlink()
    publish(published, project.update("app/prompts.py", None))
    assert not any(item.path == "app/prompts.py" for item in project.read_context().instructions)
    assert_published_as_fresh(published, {}, "app/prompts.py deleted")


# --- the findings of some files only (`wanted`): what a fresh run gives them, where another file takes part

_JOINED_PROMPT = {
    **_BASE,
    "app/prompt.py": 'BASE = "Use {lang_pref}. "\nQUIZ = "Quiz on {topic}."\n',
    "app/agent.py": _AGENT + "from .prompt import BASE, QUIZ\n\n"
    "root_agent = LlmAgent(name='root', model='m', instruction='Reply in {lang}. ' + BASE + QUIZ)\n",
}
_JOINED_AGENT = {
    **_JOINED_PROMPT,
    "app/agent.py": _AGENT + "from .prompt import BASE, QUIZ\n\n"
    "root_agent = LlmAgent(name='root', model='m', instruction=BASE + QUIZ + ' Reply in {lang}.')\n",
}
_SUPPRESSED_AT_CALL = {
    **_BASE,
    "app/agent.py": _AGENT + "from .prompt import ROOT_INSTR\n\n"
    "root_agent = LlmAgent(name='root', model='m', instruction=ROOT_INSTR)  # templating: ignore[T002]\n",
}
_UNREAD = _TEXT_INSTRUCTION["app/agent.py"].replace(
    "instruction=load_instruction_from_file('writer.txt')", "instruction='Write it up.'"
)
WANTED_CASES = [
    # (id, files, the edits in order (path, new text), the files wanted)
    (
        "a-prompt-module-joined-to-the-agent-s-string",
        _JOINED_PROMPT,
        [("app/prompt.py", _JOINED_PROMPT["app/prompt.py"].replace("Quiz", "Test"))],
        ["app/prompt.py"],
    ),
    (
        "the-agent-s-string-joined-after-the-prompt-module",
        _JOINED_AGENT,
        [("app/agent.py", _JOINED_AGENT["app/agent.py"] + "\n")],
        ["app/agent.py"],
    ),
    (
        "a-suppression-comment-at-the-call-site-of-another-file-s-instruction",
        _SUPPRESSED_AT_CALL,
        [("app/agent.py", _SUPPRESSED_AT_CALL["app/agent.py"] + "\n")],
        ["app/agent.py"],
    ),
    (
        "a-text-file-no-longer-read-is-cleared",
        _TEXT_INSTRUCTION,
        [("app/agent.py", _TEXT_INSTRUCTION["app/agent.py"] + "\n"), ("app/agent.py", _UNREAD)],
        ["app/agent.py", "app/writer.txt"],
    ),
]


@pytest.mark.parametrize(("files", "edits", "wanted"), [c[1:] for c in WANTED_CASES], ids=[c[0] for c in WANTED_CASES])
def test_update_for_some_files_gives_them_what_a_fresh_run_reports(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    files: dict[str, str],
    edits: list[tuple[str, str]],
    wanted: list[str],
) -> None:
    _write_tree(tmp_path, files, monkeypatch)
    project = Project(tmp_path)
    view: Published = {}
    publish(view, project.lint(["."]))
    overrides: dict[str, str] = {}
    shown = False
    for n, (path, text) in enumerate(edits):
        overrides[path] = text
        result = project.update(path, text, wanted=[str(tmp_path / name) for name in wanted])
        assert_wanted_as_fresh(result, view, wanted, overrides, f"edit {n} of {path}")
        shown = shown or any(view.get(name, ([], []))[0] for name in wanted)
    assert shown, "the wanted files get findings at some edit (the case is about them)"


@pytest.mark.parametrize("fails", [False, True], ids=["edit", "failing-edit"])
def test_an_edit_runs_with_the_cyclic_collector_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fails: bool
) -> None:
    """An edit's objects hold no cycle: the collector is paused while they are made (it walked them again and
    again), and runs again once the edit is done, even when it fails."""
    import gc

    _write_tree(tmp_path, _BASE, monkeypatch)
    project = Project(tmp_path)
    project.lint(["."])
    seen: list[bool] = []
    run_scan = project._run_scan

    def scanning(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        if fails:
            raise RuntimeError("the scan broke")
        return run_scan(*args, **kwargs)

    monkeypatch.setattr(project, "_run_scan", scanning)
    edited = "app/prompt.py"
    assert gc.isenabled()
    if fails:
        with pytest.raises(RuntimeError, match="the scan broke"):
            project.update(edited, _BASE[edited] + "\n# edited\n")
    else:
        project.update(edited, _BASE[edited] + "\n# edited\n")
    assert seen == [False]
    assert gc.isenabled()


def test_a_file_that_cannot_be_read_keeps_no_scan_alive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The error reading a file is kept and raised again whenever a scan imports the file; each raise adds that
    scan's frames (and its syntax trees) to the error's traceback, dropped when the scan ends."""
    _write_tree(tmp_path, {**_BASE, "app/agent.py": _BASE["app/agent.py"] + "from . import broken\n"}, monkeypatch)
    (tmp_path / "app" / "broken.py").write_bytes(b"X = '\xff'\n")  # not UTF-8
    project = Project(tmp_path)
    project.lint(["."])
    for n in range(3):
        project.update("app/agent.py", _BASE["app/agent.py"] + f"from . import broken\n# edit {n}\n")
        kept = [error for error in project._texts.values() if isinstance(error, Exception)]
        assert kept, "the unreadable file's error is kept"
        assert project._raised == []
        assert all(e.__traceback__ is None and e.__context__ is None for e in kept)


def test_typing_in_one_file_goes_through_the_project_files_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each edit of the same file's buffer keeps the project's files and their texts from the last (they are the
    same but for that file's text): only a walk, a file read again or another buffer makes them go through again;
    every result is a fresh run's."""
    _write_tree(tmp_path, _BASE, monkeypatch)
    project = Project(tmp_path)
    published: Published = {}
    publish(published, project.lint(["."]))
    gone_through: list[str] = []
    usable = project._usable

    def counting(files: Any, *, named: Any) -> Any:
        gone_through.append(named[0])
        return usable(files, named=named)

    monkeypatch.setattr(project, "_usable", counting)
    overrides: dict[str, str] = {}
    steps = [
        ("app/prompt.py", _BASE["app/prompt.py"].replace("trip", "journey"), True),
        ("app/prompt.py", _BASE["app/prompt.py"].replace("trip", "journey {budget}"), False),
        ("app/prompt.py", _BASE["app/prompt.py"].replace("trip", "journey {user_profile}"), False),
        ("app/tools.py", _BASE["app/tools.py"].replace("user_profile", "budget"), True),  # another file
        ("app/tools.py", _BASE["app/tools.py"].replace("user_profile", "itinerary"), False),
        ("app/prompt.py", _BASE["app/prompt.py"], True),  # back to the first: its turn again
    ]
    for n, (path, text, through) in enumerate(steps):
        if n == 4:  # a module made on disk: the files are walked again at the next edit
            (tmp_path / "app" / "extra.py").write_text("EXTRA = 'x'\n", encoding="utf-8")
            project.update("app/extra.py", None)
            gone_through.clear()
            through = True
        overrides[path] = text
        publish(published, project.update(path, text))
        assert gone_through == ([path] if through else []), f"step {n}"
        gone_through.clear()
        assert_published_as_fresh(published, overrides, f"step {n}: {path}")


@pytest.mark.parametrize("wanted", [None, ["app/agent.py", "app/writer.txt"]], ids=["every-file", "open-files"])
def test_a_text_file_edited_while_its_giver_is_open_as_saved_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wanted: list[str] | None
) -> None:
    """The Python file giving a text file's instruction, open as saved (its text the one last scanned), is scanned
    again when the text file is edited: the new text is read (it was not: the giver's scan was taken as it was)."""
    _write_tree(tmp_path, _TEXT_INSTRUCTION, monkeypatch)
    project = Project(tmp_path)
    published: Published = {}
    publish(published, project.lint(["."]))
    overrides = {"app/agent.py": _TEXT_INSTRUCTION["app/agent.py"]}
    publish(published, project.update("app/agent.py", overrides["app/agent.py"], wanted=wanted))
    overrides["app/writer.txt"] = "Write up {itinerary} for {nobody_writes_this}.\n"
    result = project.update("app/writer.txt", overrides["app/writer.txt"], wanted=wanted)
    assert any("nobody_writes_this" in d.message for d in result.diagnostics if d.path == "app/writer.txt")
    publish(published, result)
    assert_published_as_fresh(published, overrides, "the text file edited")
