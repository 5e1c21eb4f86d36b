"""The cold scan of a whole run (`templating.linter.cold`): import-closed groups, the prefilter, the workers.

Each is checked against the scan it replaces, a whole-project scan in one process of every file: the findings,
files and templates of a run are the same, on projects written here and on the shared corpus."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import linked_project
import pytest
from conftest import shared_corpora
from linked_project import write_linked

import templating
from templating.linter import cold, import_groups, prefilter
from templating.linter.engine import Project
from templating.linter.findings import ProjectFindings
from templating.places import LinkedFolders
from templating.pysource.found import CONSTANT_SUFFIXES

CORPORA = shared_corpora()


def _whole_scan(self: ProjectFindings, usable: list[str], *, linted: Any = None) -> Any:
    """The scan before groups: every file at once, in this process (the reference)."""
    from templating.pysource import scan

    return self._run_scan(scan, usable)


def rows(result: templating.LintResult) -> tuple[Any, ...]:
    """What a run gives, in its order: each finding whole, the files, the templates, the texts it shows and each
    Python file's count of instructions."""
    findings = [
        (d.path, d.code, d.severity, d.message, d.span and (d.span.start, d.span.end, d.span.line), d.help, d.origin)
        for d in result.diagnostics
    ]
    return findings, list(result.files), [repr(t) for t in result.templates], sorted(result.sources), result.python


def run(root: Path, monkeypatch: pytest.MonkeyPatch, how: str, paths: tuple[str, ...] = ()) -> tuple[Any, ...]:
    """A lint of `root` (its own folder the current one; `paths` in it, none: all) scanned `how`: `whole` (the
    reference), `one` (groups in this process), `pool` (groups, most of them in a worker), `unfiltered` (groups,
    no prefilter)."""
    with monkeypatch.context() as patch:
        patch.chdir(root)
        if how == "whole":
            patch.setattr(ProjectFindings, "_cold_scan", _whole_scan)
        patch.setenv("TEMPLATING_LINT_JOBS", "2" if how == "pool" else "1")
        if how == "pool":  # the pool however small the project, each group a chunk
            patch.setattr(cold, "POOL_THRESHOLD", 0)
            patch.setattr(cold, "_CHUNK", 1)
        if how == "unfiltered":
            patch.setattr(cold, "PREFILTER", False)
        return rows(Project(root=root).lint(paths))


def by_workers(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """For the runs to come, every chunk given to the workers (this process scans only what they do not send
    back), whatever the machine's load; the counts of chunks scanned here and sent back by a worker. (How
    `cold._shared` shares the chunks out is tested on its own, below.)"""
    counts = {"here": 0, "by workers": 0}

    def shared(count: int, here: Any, task: Any, pool: Any, workers: int) -> Any:
        def through_pool(i: int) -> Any:
            try:
                found = pool.submit(cold._scan_chunk, task(i)).result()
            except Exception:
                found = None
            counts["here" if found is None else "by workers"] += 1
            return here(i) if found is None else found

        return [through_pool(i) for i in range(count)]

    monkeypatch.setattr(cold, "_shared", shared)
    return counts


def write(root: Path, files: dict[str, str]) -> Path:
    (root / "pyproject.toml").write_text("[tool.templating]\n", encoding="utf-8")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


# A constant in a module with none of the words that make a file scanned, given to an agent by an import
# (absolute, relative, through the package): the constant's findings still come from it.
AGENT = """\
from google.adk.agents import Agent
from {imports} import GREETING

root_agent = Agent(name="helper", model="gemini-2.0-flash", instruction=GREETING + " Reply in {{language}}.")
"""
WORDS = 'GREETING = "Hello {user:name}, you asked about {topic}. {topic?}"\n'

STAR = """\
from google.adk.agents import LlmAgent
from .texts import *

root_agent = LlmAgent(name="helper", model="gemini-2.0-flash", instruction=WELCOME + " Reply in {{language}}.")
other = LlmAgent(name="other", model="gemini-2.0-flash", instruction="Tell me about {topic}.")
"""
ALIASED = """\
from google.adk import agents as adk
from .texts import GREETING as G

root_agent = adk.LlmAgent(name="helper", model="gemini-2.0-flash", instruction=G, output_key="topic")
"""
BUILDER = """\
INTRO = "Hello {user:name}."
TEXT = INTRO + " You asked about {topic}. {topic?}"
"""
BUILT = """\
from google.adk.agents import Agent
from .build import TEXT

root_agent = Agent(name="helper", model="gemini-2.0-flash", instruction=TEXT)
"""
PROVIDER = """\
from .texts import GREETING


def greeting(context):
    return GREETING + " {mood}"
"""
PROVIDED = """\
from google.adk.agents import Agent
from templating import instruction
from .greet import greeting
from .texts import GREETING

root_agent = Agent(name="helper", model="gemini-2.0-flash", instruction=greeting)
other = Agent(name="other", model="gemini-2.0-flash", instruction=instruction(GREETING))
"""
MEMORY = """\
def remember(memory, value):
    memory["topic"] = value
"""
TOOLS = """\
from .memory import remember


def save_topic(tool_context, topic: str) -> str:
    remember(tool_context.state, topic)
    return "saved"
"""
HANDED = """\
from google.adk.agents import Agent
from .tools import save_topic

root_agent = Agent(
    name="helper", model="gemini-2.0-flash", tools=[save_topic], instruction="We talk about {topic}. {other}"
)
"""
FLOW = """\
from google.adk.agents import BaseAgent


class StoryFlow(BaseAgent):
    async def _run_async_impl(self, ctx):
        yield None
"""
FLOW_MAIN = """\
from .flow import StoryFlow
from .texts import GREETING

root_agent = StoryFlow(name="story", description=GREETING)
"""
SEED = """\
def seed(callback_context):
    callback_context.state["topic"] = "news"
"""
CONFIG = """\
name: helper
model: gemini-2.0-flash
instruction: Tell me about {topic} and {user:name}.
before_agent_callback:
  - name: app.seed.seed
"""

PROJECTS = [
    (
        "a-comment-only",
        {"agent.py": AGENT.format(imports="words"), "words.py": WORDS, "x.py": "x = 1  # templating: ignore[T014]\n"},
    ),
    ("relative", {"app/__init__.py": "", "app/agent.py": AGENT.format(imports=".words"), "app/words.py": WORDS}),
    ("absolute", {"app/__init__.py": "", "app/agent.py": AGENT.format(imports="app.words"), "app/words.py": WORDS}),
    ("sibling", {"agent.py": AGENT.format(imports="words"), "words.py": WORDS}),
    (
        "not-python-beside",
        {"app/agent.py": AGENT.format(imports="words"), "app/words.py": WORDS, "tools/broken.py": "def f(:\n"},
    ),
    (
        "two-apps",  # two independent groups, one of them broken
        {
            "one/agent.py": AGENT.format(imports="words"),
            "one/words.py": WORDS,
            "two/agent.py": AGENT.format(imports="words").replace("Agent(", "Agent(output_key=", 1),
            "two/words.py": "GREETING = (\n",
        },
    ),
    # the prefilter's edge cases, in idioms real agent code is written in: a module named by none of the words it
    # looks for still gives what it gives when a scanned file imports it (or is scanned when it must be)
    (
        "star-import",
        {"app/__init__.py": "", "app/agent.py": STAR, "app/texts.py": WORDS.replace("GREETING", "WELCOME")},
    ),
    (
        "aliases",
        {
            "app/__init__.py": "from . import agent\n",
            "app/agent.py": ALIASED,
            "app/texts.py": WORDS,
        },
    ),
    ("built-elsewhere", {"app/__init__.py": "", "app/agent.py": BUILT, "app/build.py": BUILDER}),
    (
        "provider",
        {"app/__init__.py": "", "app/agent.py": PROVIDED, "app/greet.py": PROVIDER, "app/texts.py": WORDS},
    ),
    (
        "state-handed-to-a-helper",
        {"app/__init__.py": "", "app/agent.py": HANDED, "app/tools.py": TOOLS, "app/memory.py": MEMORY},
    ),
    (
        "custom-agent-class",
        {
            "app/__init__.py": "",
            "app/agent.py": AGENT.format(imports=".texts"),
            "app/flow.py": FLOW,
            "app/main.py": FLOW_MAIN,
            "app/texts.py": WORDS,
        },
    ),
    (
        "yaml-config",
        {"app/__init__.py": "", "app/root_agent.yaml": CONFIG, "app/seed.py": SEED, "app/texts.py": WORDS},
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(("files"), [p[1] for p in PROJECTS], ids=[p[0] for p in PROJECTS])
@pytest.mark.parametrize("how", ["one", "pool", "workers", "unfiltered"])
def test_a_run_finds_what_the_whole_scan_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], how: str
) -> None:
    """`pool`: the chunks shared out as a run shares them (who scans which depends on the machine);
    `workers`: every chunk given to the worker."""
    root = write(tmp_path, files)
    expected = run(root, monkeypatch, "whole")
    assert expected[0], "the project has findings to compare"
    if how == "workers":
        chunks = by_workers(monkeypatch)
    assert run(root, monkeypatch, "pool" if how == "workers" else how) == expected
    one_chunk = len(import_groups.groups(sorted(files), files.get)) == 1  # one group is one chunk, scanned here
    if how == "workers" and not one_chunk:
        assert chunks["by workers"] >= 1, chunks


@pytest.mark.slow
def test_on_the_corpus_groups_workers_and_prefilter_find_what_the_whole_scan_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shared corpus as one project (adk-samples, the adk-python samples, the adk-docs examples: hundreds of
    apps, each its own groups): the same findings, files and templates, in the same order, however scanned."""
    if CORPORA is None:
        reason = "the shared corpus (../shared/corpora) is absent"
        if os.environ.get("TEMPLATING_REQUIRE_CORPUS") == "1":
            pytest.fail(f"TEMPLATING_REQUIRE_CORPUS=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    root = tmp_path / "corpora"
    shutil.copytree(CORPORA, root, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    (root / "pyproject.toml").write_text("[tool.templating]\n", encoding="utf-8")
    expected = run(root, monkeypatch, "whole")
    assert len(expected[0]) > 10
    assert len(expected[1]) > 300
    assert len(expected[2]) > 100
    assert run(root, monkeypatch, "unfiltered") == expected
    chunks = by_workers(monkeypatch)
    assert run(root, monkeypatch, "pool") == expected
    assert chunks["by workers"] >= 10, chunks  # most chunks were scanned by the worker and sent back


@pytest.mark.slow
@pytest.mark.parametrize("how", ["one", "pool"])
def test_unsaved_texts_are_scanned_wherever_their_group_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """An editor's unsaved texts (`overrides`), a module that exists only unsaved among them, are what the groups
    are scanned with, in this process and in a worker: the run, and the facts of an editor's folder read, that one
    scan of every file in this process gives."""
    files = {
        "one/__init__.py": "",
        "one/agent.py": AGENT.format(imports=".words"),
        "one/words.py": WORDS,
        "two/agent.py": AGENT.format(imports="words"),
        "two/words.py": WORDS,
    }
    root = write(tmp_path, files)
    unsaved = {
        str(root / "one/agent.py"): AGENT.format(imports=".extra"),
        str(root / "one/extra.py"): 'GREETING = "Tell me about {mood}."\n',  # not on disk
        str(root / "two/words.py"): 'GREETING = "Hello {user:nmae}."\n',
    }

    def scanned(how: str) -> tuple[Any, ...]:
        with monkeypatch.context() as patch:
            patch.chdir(root)
            if how == "whole":
                patch.setattr(ProjectFindings, "_cold_scan", _whole_scan)
            patch.setenv("TEMPLATING_LINT_JOBS", "2" if how == "pool" else "1")
            if how == "pool":
                patch.setattr(cold, "POOL_THRESHOLD", 0)
                patch.setattr(cold, "_CHUNK", 1)
            run = rows(Project(root=root, overrides=unsaved).lint())
            found = Project(root=root, overrides=unsaved).read_context()
            return run, [(item.path, item.text, item.given_at) for item in found.instructions]

    expected = scanned("whole")
    assert any("nmae" in finding[3] for finding in expected[0][0]), "the unsaved text's finding"
    assert ("one/extra.py", "Tell me about {mood}. Reply in {language}.") in [i[:2] for i in expected[1]]
    chunks = by_workers(monkeypatch)
    assert scanned(how) == expected
    if how == "pool":
        assert chunks["by workers"] >= 2, chunks  # the run's and the folder read's


_LINKED = {
    "pkg/__init__.py": "",
    "pkg/agent.py": AGENT.format(imports=".sub.words"),
    "real_sub/__init__.py": "",
    "real_sub/words.py": WORDS,
    "solo/agent.py": AGENT.format(imports="words"),
    "solo/words.py": WORDS,
}


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "symlink") or os.name != "posix", reason="symbolic links")
@pytest.mark.parametrize("how", ["one", "pool"])
def test_an_unsaved_text_reached_through_a_linked_folder_is_scanned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """An unsaved module that an import reaches through a linked package folder (`pkg/sub` -> `real_sub`) is read
    with its unsaved text, in a worker as in this process (found by its real path, as the project finds it)."""
    root = write(tmp_path, _LINKED)
    (root / "pkg/sub").symlink_to("../real_sub")
    unsaved = {"real_sub/words.py": 'GREETING = "Unsaved {mood}."\n'}
    with monkeypatch.context() as patch:
        patch.chdir(root)
        patch.setenv("TEMPLATING_LINT_JOBS", "2" if how == "pool" else "1")
        if how == "pool":
            patch.setattr(cold, "POOL_THRESHOLD", 0)
            patch.setattr(cold, "_CHUNK", 1)
        chunks = by_workers(patch)
        found = Project(root=root, overrides=unsaved).read_context()
    texts = [item.text for item in found.instructions if "{mood}" in item.text or "{topic}" in item.text]
    assert "Unsaved {mood}. Reply in {language}." in texts
    if how == "pool":
        assert chunks["by workers"] >= 1, chunks


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "symlink") or os.name != "posix", reason="symbolic links")
@pytest.mark.parametrize("how", ["one", "pool", "unfiltered"])
@pytest.mark.parametrize("module", [".sub.words", "pkg.sub.words"], ids=["relative", "absolute"])
def test_a_module_reached_through_a_linked_folder_has_the_findings_of_the_whole_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str, module: str
) -> None:
    """A module no word of which the prefilter keeps, imported only through a linked package folder (`pkg/sub` ->
    `real_sub`): it is known by its real path, and the import graph follows the link (its group holds its
    importer)."""
    root = write(tmp_path, {**_LINKED, "pkg/agent.py": AGENT.format(imports=module)})
    (root / "pkg/sub").symlink_to("../real_sub")
    expected = run(root, monkeypatch, "whole")
    assert any(path == "real_sub/words.py" for path, *_ in expected[0]), "the linked module's findings"
    assert run(root, monkeypatch, how) == expected


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "symlink") or os.name != "posix", reason="symbolic links")
@pytest.mark.parametrize("how", ["whole", "one", "pool", "unfiltered"])
def test_a_relative_import_up_out_of_a_linked_folder_is_followed_from_the_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """`app/sub` -> `../real_sub`, whose tool calls `remember` from `..memory`: `app.memory` to Python, which writes
    `topic` (run with google-adk: the tool's write reaches the session; the first turn raises KeyError, the tool
    runs after the instruction is read). So the finding is T024 (written too late), not T014 (never written, as
    when `..` was taken from `real_sub`'s parent, whose `memory.py` writes another key), however the run scans:
    the import graph keeps `app/memory.py` (no word of it is one the prefilter keeps), the workers are given the
    links."""
    root = write_linked(tmp_path, files={**linked_project.FILES, "solo/words.py": "X = 1\n"})  # solo: a 2nd chunk
    chunks = by_workers(monkeypatch)
    found = run(root, monkeypatch, how)
    assert [(path, code) for path, code, *_ in found[0]] == [("app/agent.py", "T024")]
    if how == "pool":
        assert chunks["by workers"] >= 1, chunks


@pytest.mark.skipif(not hasattr(os, "symlink") or os.name != "posix", reason="symbolic links")
@pytest.mark.parametrize("linked", [True, False], ids=["with-the-links", "without"])
def test_the_import_graph_follows_a_relative_import_up_out_of_a_linked_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, linked: bool
) -> None:
    monkeypatch.chdir(tmp_path)
    write_linked(tmp_path)
    files = {name: text for name, text in linked_project.FILES.items() if name.endswith(".py")}
    names = sorted(files)
    links = LinkedFolders([("app/sub", str((tmp_path / "real_sub").resolve()))]) if linked else None
    _, edges = import_groups.import_graph(names, files.get, links=links)
    named = {names[j] for j in edges[names.index("real_sub/tools.py")]}
    assert ("app/memory.py" in named) is linked
    assert "memory.py" in named  # (the real folder's side is still a candidate: the graph over-approximates)


class _Pool:
    """A stand-in for the process pool: each chunk submitted is `started` (done at once with `result`, or failing)
    or never started (a worker busy elsewhere: it can be taken back)."""

    def __init__(self, started: bool, result: Any = "sent", fail: bool = False, only: int | None = None) -> None:
        self.started, self.result, self.fail, self.submitted = started, result, fail, 0
        self.only = only  # the first `only` chunks submitted are started, no other

    def submit(self, fn: Any, task: Any) -> Any:
        from concurrent.futures import Future

        self.submitted += 1
        future: Future[Any] = Future()
        if self.started and (self.only is None or self.submitted <= self.only):
            future.set_running_or_notify_cancel()
            if self.fail:
                future.set_exception(EOFError("a worker lost"))
            else:
                future.set_result((self.result, task))
        return future


SHARING = [
    # (id, the pool, chunks, what each chunk's result is: scanned here, or sent back by a worker, the order of those
    # scanned here)
    ("workers-that-never-start", _Pool(started=False), 6, ["here"] * 6, [5, 4, 3, 2, 1, 0]),  # each taken back
    ("workers-done-at-once", _Pool(started=True), 6, ["sent"] * 5 + ["here"], [5]),  # 4 ahead, here from the back
    ("workers-that-fail", _Pool(started=True, fail=True), 6, ["here"] * 6, [5, 0, 1, 2, 3, 4]),
    ("fewer-chunks-than-ahead", _Pool(started=True), 2, ["sent", "sent"], []),
    # a worker running its first two chunks: the others are taken back one at a time, from the last
    ("two-started", _Pool(started=True, only=2), 6, ["sent", "sent"] + ["here"] * 4, [5, 4, 3, 2]),
]


@pytest.mark.parametrize(("pool", "count", "expected", "order"), [c[1:] for c in SHARING], ids=[c[0] for c in SHARING])
def test_the_chunks_are_shared_out_and_come_back_in_order(
    pool: _Pool, count: int, expected: list[str], order: list[int]
) -> None:
    """Each chunk's result once, in chunk order, whoever scanned it: a worker has `_AHEAD` chunks ahead, this
    process scans from the back and, once none is left to hand out, takes back the last one no worker started,
    one at a time."""
    scanned: list[int] = []

    def here(i: int) -> Any:
        scanned.append(i)
        return ("here", i)

    share: Any = cold._shared  # (a stand-in pool, and a chunk's "task" its number)
    results = share(count, here, lambda i: i, pool, 1)
    assert [who for who, _ in results] == expected
    assert [i for _, i in results] == list(range(count))
    assert scanned == order


# --- the parts


LICENSE = "# Unless required by applicable law or agreed to in writing, software\n"
RELEVANT = [
    ("prompt", 'PROMPT = "Hi {name}"\n', True),
    ("agent", "root_agent = LlmAgent(name='a')\n", True),
    ("agent-imported-under-another-name", "from google.adk.agents import LlmAgent as Brain\n", True),
    ("agent-module-alias", "from google.adk import agents as adk\n\nroot = adk.SequentialAgent(name='s')\n", True),
    ("workflow", "flow = Workflow(name='w', edges=[])\n", True),
    ("state", "def tool(tool_context):\n    tool_context.state['k'] = 1\n", True),
    ("state-delta", "actions = EventActions(state_delta={'k': 1})\n", True),
    ("annotation", "def keep(target: 'State', v):\n    target['k'] = v\n", True),
    ("output-key", "config = dict(output_key='reply')\n", True),
    ("runner", "x = InMemoryRunner(agent=a)\n", True),
    ("app", "app = App(name='a', root_agent=root)\n", True),
    ("state-param", "def keep(state, v):\n    state['k'] = v\n", True),
    ("state-keyword", "session = make(app_name='a', state=initial)\n", True),
    ("templating", "import templating as t\n", True),
    ("instruction-keyword", "make(global_instruction=TEXT)\n", True),
    ("suffix-any-case", "system_prompt = load()\n", True),
    ("suffix-annotated", "GREETING_INSTR: str = load()\n", True),
    ("suffix-formatted", "from .prompts import ROOT_PROMPT\n\ntext = ROOT_PROMPT.format(name=n)\n", True),
    ("suffix-percent", "text = BASE_TEMPLATE % values\n", True),
    ("suffix-passed-on", "chain = ChatPromptTemplate.from_template(SYSTEM_PROMPT)\n", True),
    ("plain", "import math\n\ndef area(r):\n    return math.pi * r * r\n", False),
    ("constant", 'GREETING = "Hello {user:name}"\n', False),  # fed to an instruction only through an import
    ("license-header", LICENSE + "x = 1\n", False),  # "applicable" holds "app" but names no App
    ("evaluator", "from google.adk.evaluation import AgentEvaluator\n", False),
    ("agent-imported-only", "from google.adk.agents import LlmAgent\n", False),  # builds nothing here
    ("docstring", '"""Test deployment of the Research Agent to Agent Engine."""\n', False),
    ("vertex-app", "app = reasoning_engines.AdkApp(agent=root_agent)\n", False),  # not google-adk's App
    ("state-in-prose", "# the state of the order is kept by the shop\nstatus = 'ok'\n", False),
    ("state-read", "def f(states):\n    return states.copy()\n", False),
    ("prompt-in-a-call", "def build_prompt(topic):\n    return topic\n\nbuild_prompt('x')\n", False),
    ("prose", '"""The statement applies to apps and agents; prompts follow."""\n', False),
    ("empty", "", False),
]


@pytest.mark.parametrize(("text", "expected"), [r[1:] for r in RELEVANT], ids=[r[0] for r in RELEVANT])
def test_relevant_tells_the_files_that_may_hold_or_feed_an_instruction(text: str, expected: bool) -> None:
    assert prefilter.relevant(text, CONSTANT_SUFFIXES) is expected


REFUSED = {  # by project: the files the prefilter refuses (none of them is needed as a file of its own)
    "a-comment-only": {"words.py"},  # x.py names templating (in a comment)
    "star-import": {"app/__init__.py", "app/texts.py"},
    "aliases": {"app/__init__.py", "app/texts.py"},
    "built-elsewhere": {"app/__init__.py", "app/build.py"},
    "provider": {"app/__init__.py", "app/greet.py", "app/texts.py"},
    "state-handed-to-a-helper": set(),  # memory.py and __init__.py are kept: tools.py may give them state
    "custom-agent-class": {"app/__init__.py", "app/texts.py"},  # main.py is kept: it builds a StoryFlow
}


@pytest.mark.parametrize(("project", "refused"), list(REFUSED.items()), ids=list(REFUSED))
def test_the_prefilter_refuses_the_files_that_cannot_hold_or_feed_an_instruction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, project: str, refused: set[str]
) -> None:
    files = {name: text for name, text in dict(PROJECTS)[project].items() if name.endswith(".py")}
    monkeypatch.chdir(tmp_path)
    write(tmp_path, files)
    names = sorted(files)
    _, edges = import_groups.import_graph(names, files.get)
    kept = prefilter.wanted([files[n] for n in names], edges, CONSTANT_SUFFIXES)
    assert {n for n, k in zip(names, kept, strict=True) if not k} == refused


@pytest.mark.slow
def test_a_helper_given_state_is_scanned_or_its_write_is_lost(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The import closure of the prefilter is what keeps the write of `memory.py`: refused like a file of no
    words, the run would report `{topic}` as never written."""
    root = write(tmp_path, dict(PROJECTS)["state-handed-to-a-helper"])
    expected = run(root, monkeypatch, "whole")
    assert run(root, monkeypatch, "one") == expected
    with monkeypatch.context() as patch:
        patch.setattr(cold, "wanted", lambda texts, edges, suffixes: [prefilter.relevant(t or "") for t in texts])
        assert run(root, monkeypatch, "one") != expected


def test_relevant_reads_the_configured_constant_suffixes() -> None:
    assert prefilter.relevant('WELCOME_GREETING = "Hello {name}"\n') is False
    assert prefilter.relevant('WELCOME_GREETING = "Hello {name}"\n', ("_GREETING",)) is True


GROUPS = [
    ("relative", {"a/agent.py": "from .words import X\n", "a/words.py": "", "b/other.py": ""}, [[0, 1], [2]]),
    ("absolute", {"a/agent.py": "from a.words import X\n", "a/words.py": "", "b/x.py": ""}, [[0, 1], [2]]),
    ("package", {"a/agent.py": "from pkg import words\n", "a/pkg/words.py": "", "a/pkg/z.py": ""}, [[0, 1, 2]]),
    ("import-list", {"m.py": "import os, n as k, q.r\n", "n.py": "", "q/r.py": "", "z.py": ""}, [[0, 1, 2], [3]]),
    ("init", {"p/__init__.py": "", "p/a.py": "", "p/b.py": "", "c.py": ""}, [[0, 1, 2], [3]]),
    ("parent-level", {"p/q/a.py": "from .. import b\n", "p/b.py": "", "p/c.py": ""}, [[0, 1, 2]]),
    ("independent", {"a.py": "x = 1\n", "b.py": "y = 2\n"}, [[0], [1]]),
    ("libraries", {"a.py": "import os, json\nfrom google.adk.agents import Agent\n", "b.py": ""}, [[0], [1]]),
    (
        "a-folder-named-as-a-library",
        {"a.py": "from google.adk import agents\n", "google/adk/agents.py": "", "z.py": ""},
        [[0, 1], [2]],
    ),
]


@pytest.mark.parametrize(("files", "expected"), [g[1:] for g in GROUPS], ids=[g[0] for g in GROUPS])
def test_groups_keep_together_what_an_import_may_join(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], expected: list[list[int]]
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, text in files.items():
        Path(name).parent.mkdir(parents=True, exist_ok=True)
        Path(name).write_text(text, encoding="utf-8")
    assert import_groups.groups(list(files), files.get) == expected


def test_a_file_not_read_as_text_makes_one_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    texts = {"a.py": "", "b.py": None}
    assert import_groups.groups(["a.py", "b.py"], texts.get) == [[0, 1]]


@pytest.mark.parametrize(("value", "expected"), [("1", 1), ("3", 3), ("0", 1), ("many", 1)])
def test_jobs_reads_the_environment(monkeypatch: pytest.MonkeyPatch, value: str, expected: int) -> None:
    monkeypatch.setenv("TEMPLATING_LINT_JOBS", value)
    assert cold.jobs() == expected


def test_jobs_defaults_to_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TEMPLATING_LINT_JOBS", raising=False)
    assert cold.jobs() == len(os.sched_getaffinity(0))  # under pytest, whose script guards its work


SCRIPTS = [
    ("guarded", 'from templating import lint_project\n\nif __name__ == "__main__":\n    lint_project(["."])\n', True),
    ("unguarded", 'from templating import lint_project\n\nlint_project(["."])\n', False),
]


@pytest.mark.parametrize(("text", "safe"), [s[1:] for s in SCRIPTS], ids=[s[0] for s in SCRIPTS])
def test_workers_start_only_when_they_cannot_run_the_script_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, safe: bool
) -> None:
    """A spawned worker imports the main script: one that lints without the `__main__` guard would lint again
    in each worker, so such a script lints in one process."""
    import sys
    import types

    script = tmp_path / "lint_it.py"
    script.write_text(text, encoding="utf-8")
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", main)
    monkeypatch.delenv("TEMPLATING_LINT_JOBS", raising=False)
    assert cold._spawn_safe() is safe
    assert cold.jobs() == (len(os.sched_getaffinity(0)) if safe else 1)


def test_python_m_templating_may_start_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    main = types.ModuleType("__main__")
    main.__file__ = templating.__file__.replace("__init__.py", "__main__.py")
    main.__spec__ = types.SimpleNamespace(name="templating.__main__")  # type: ignore[assignment]
    monkeypatch.setitem(sys.modules, "__main__", main)
    assert cold._spawn_safe() is True


@pytest.mark.slow
def test_a_worker_writes_nothing_to_the_standard_output(capfd: pytest.CaptureFixture[str]) -> None:
    """A worker shares its parent's standard output (the JSON report, the language server's messages): what it
    would print goes to the standard error instead."""
    import functools

    pool = cold._started(1)
    try:
        pool.submit(functools.partial(print, "from the worker", flush=True)).result()
    finally:
        pool.shutdown()
    out, err = capfd.readouterr()
    assert "from the worker" not in out
    assert "from the worker" in err


def test_a_worker_keeps_no_syntax_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The trees `pysource.reading.parsed` keeps serve an edit's next scan: a worker never has one."""
    from templating.pysource import reading

    monkeypatch.setattr(reading, "_kept", type(reading._kept)())
    monkeypatch.chdir(tmp_path)
    files = {"app/agent.py": AGENT.format(imports="words"), "app/words.py": WORDS}
    links = LinkedFolders()
    write(tmp_path, files)
    task = (
        str(tmp_path),
        [("app/agent.py", True)],
        dict(files),
        ("PROMPT",),
        str(tmp_path),
        2_000_000,
        (),
        None,
        links,
    )
    done = cold._scan_chunk(task)
    assert done is not None
    assert sorted(done[0].sources) == ["app/agent.py", "app/words.py"]  # both parsed
    assert not reading._kept


def test_a_workers_facts_survive_pickling_as_the_project_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's task run here, its `Scan` pickled and read back: the instructions (with each character's place),
    the writes and the errors are those of a scan in this process; no syntax tree, and `sources` without the
    texts the project gave."""
    import pickle

    from templating.pysource import scan

    monkeypatch.chdir(tmp_path)
    files = {
        "app/agent.py": AGENT.format(imports="words").replace("Agent(", "Agent(output_key='reply', ", 1),
        "app/words.py": WORDS.replace("{topic?}", "{topic?} {{x}"),  # T017: a finding of the instruction's own
        "app/broken.py": "PROMPT = (\n",
    }
    write(tmp_path, files)
    chunk = [("app/agent.py", True), ("app/words.py", False), ("app/broken.py", True)]
    from functools import partial

    from templating.linter.findings import own_findings

    codes = frozenset(templating.linter.DEFAULT_RULES)
    own = partial(own_findings, codes=codes, schema=None, allow=())
    task = (str(tmp_path), chunk, dict(files), ("PROMPT",), str(tmp_path), 2_000_000, (), own, LinkedFolders())
    sent = pickle.dumps(cold._scan_chunk(task))
    back, owns = pickle.loads(sent)
    here = scan(["app/agent.py", "app/broken.py"], suffixes=("PROMPT",), keep_going=True, root=str(tmp_path))

    def placed(item: Any) -> Any:
        mapped = item._mapped
        return [(m.path, s) for m, s in zip(mapped.mods, mapped.starts, strict=True)]

    assert [(i.key, i.span, placed(i)) for i in back.instructions] == [
        (i.key, i.span, placed(i)) for i in here.instructions
    ]
    assert back.instructions, "the agent's instruction was found"
    assert all(m.tree.body == [] for i in back.instructions for m in i._mapped.mods)
    assert back.writes == here.writes
    assert [(str(e), e.path, e.span, e.help) for e in back.errors] == [
        (str(e), e.path, e.span, e.help) for e in here.errors
    ]
    assert [e.path for e in back.errors] == ["app/broken.py"]
    assert set(back.sources) == set(here.sources)
    assert back.sources["app/agent.py"] is None  # filled again from the project's own texts
    # the own findings of each instruction, worked out in the worker, come back with the very instruction objects
    assert all(given[0] is item for given, item in zip(owns, back.instructions, strict=True))
    local = [own(item) for item in here.instructions]
    assert [given[1:] for given in owns] == [mine[1:] for mine in local]
    assert any(given[1] for given in owns), "an instruction with findings of its own"


OWNED = [  # paths linted, and the files whose instructions' own findings the scan works out
    ("all", (), ["app/agent.py", "other/agent.py", "other/writer.txt"]),
    ("one folder", ("app",), ["app/agent.py"]),  # not the text file of the other folder's agent
    ("the other folder", ("other",), ["other/agent.py", "other/writer.txt"]),
]
_FROM_FILE = (  # an agent whose instruction is a text file beside it (as google-adk's samples read theirs)
    "import os\n\nfrom google.adk.agents import Agent\n\n\ndef load_instruction_from_file(name):\n"
    "    with open(os.path.join(os.path.dirname(__file__), name)) as f:\n        return f.read()\n\n\n"
    "writer = Agent(name='writer', model='m', instruction=load_instruction_from_file('writer.txt'))\n"
)


@pytest.mark.parametrize(("paths", "owned"), [o[1:] for o in OWNED], ids=[o[0] for o in OWNED])
def test_own_findings_are_worked_out_once_while_scanning_for_the_files_linted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, paths: tuple[str, ...], owned: list[str]
) -> None:
    """The own findings of the instructions this process scans are worked out as it scans each chunk (while the
    workers scan theirs), as a worker's are, and not again after the scan; those of the files read only for
    context (linting one folder of a project) are not worked out at all. (A worker's cannot be counted here:
    the counting function would not pickle; see the next test.)"""
    from templating.linter import findings

    other = AGENT.format(imports="other.words").replace('"helper"', '"other"')
    files = {
        "app/agent.py": AGENT.format(imports="words").replace("GREETING +", '"Hi {{x}" + GREETING +'),
        "app/words.py": WORDS,
        "other/agent.py": other.replace("GREETING +", '"Hi {{y}" + GREETING +'),
        "other/words.py": WORDS,
        "other/writer.py": _FROM_FILE,
        "other/writer.txt": "Write it up {{z}.\n",
    }
    write(tmp_path, files)
    calls: list[tuple[str, bool]] = []  # each instruction's file, and whether the scan was still running
    scanning = [False]
    real_own, real_scanned = findings.own_findings, cold._scanned

    def counted(item: Any, **options: Any) -> Any:
        calls.append((item.path, scanning[0]))
        return real_own(item, **options)

    def scanned(*args: Any) -> Any:
        scanning[0] = True
        try:
            return real_scanned(*args)
        finally:
            scanning[0] = False

    monkeypatch.setattr(findings, "own_findings", counted)
    monkeypatch.setattr(cold, "_scanned", scanned)
    reference = run(tmp_path, monkeypatch, "whole", paths)
    assert sorted(calls) == [(path, False) for path in owned]  # the reference works them out after its scan
    calls.clear()
    assert run(tmp_path, monkeypatch, "one", paths) == reference
    assert any(d[1] == "T017" for d in reference[0]), "a finding of an instruction's own"
    assert sorted(calls) == [(path, True) for path in owned]  # once each, during the scan


def test_a_worker_works_out_the_own_findings_of_the_files_linted_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's chunk holding a file linted and one read for context sends back the own findings of the
    first's instructions only; the findings are those of the whole scan."""
    files = {
        "app/agent.py": AGENT.format(imports="words"),
        "app/words.py": WORDS,
        "app/other.py": STAR.replace(".texts", "words"),  # its instructions are its own (and one reads words.py)
        "lone/agent.py": AGENT.format(imports="words"),  # a group of its own, none of it linted
        "lone/words.py": WORDS,
    }
    write(tmp_path, files)
    sent: list[list[str]] = []  # the files of the instructions each worker's chunk has own findings for

    def shared(count: int, here: Any, task: Any, pool: Any, workers: int) -> Any:
        out = []
        for i in range(count):
            found = pool.submit(cold._scan_chunk, task(i)).result()
            assert found is not None
            sent.append(sorted(item[0].path for item in found[1]))
            out.append(found)
        return out

    linted = ("app/agent.py", "app/words.py")
    reference = run(tmp_path, monkeypatch, "whole", linted)
    monkeypatch.setattr(cold, "_shared", shared)
    assert run(tmp_path, monkeypatch, "pool", linted) == reference
    assert any(d[0] == "app/words.py" for d in reference[0]), "findings of the instruction held by words.py"
    # app/ is one group (all import words.py): other.py's instructions are left out, and all of lone/
    assert sent == [["app/words.py"], []]
