"""The lint engine on a generated 1,000-file ADK-style project: a full run against `ast.parse` of the
same files (measured in the same process), and re-linting one changed file (target: <= 50 ms).

`--corpus PATH` (say ../shared/corpora/adk-samples/python): the same full run on real code, with
the share of it spent choosing the files (the walk, the globs, `.gitignore`), and `templating lint`
as a process, each against `ast.parse` of the same Python files in this process (target: 4x).
`--copies N`: on N renamed copies of the corpus side by side (23 copies of adk-samples: about
5,000 Python files), to compare the cost per file with the corpus as it is.

Then `Project.update` against a fresh `lint_project` with the same unsaved text, on a copy of the shared
corpus's travel-concierge (adk-samples; skipped when absent): the time of each (median of 7, interleaved) and their
ratio (target: at most 0.5), and whether the update published what the fresh run reports."""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from templating.linter.engine import Project
from templating.linter.run import lint_project

PACKAGES = 250  # four files each: __init__.py, agent.py, prompt.py, tools.py


def build(root: Path, packages: int = PACKAGES, *, config: str = "[tool.templating]\n") -> None:
    """An ADK-style project of `packages` agent packages under `root`, each agent's instruction a
    constant of its prompt module, reading the key its `output_key=` writes and one a tool writes."""
    (root / "pyproject.toml").write_text(config, encoding="utf-8")
    for i in range(packages):
        pkg = root / f"agent_{i}"
        pkg.mkdir()
        (pkg / "__init__.py").write_text("from . import agent\n", encoding="utf-8")
        (pkg / "prompt.py").write_text(
            f'INSTR_{i} = """You plan trip {i} for {{user:name?}}.\nUse {{plan_{i}}} and {{notes_{i}?}}."""\n',
            encoding="utf-8",
        )
        (pkg / "tools.py").write_text(
            f"def save(tool_context):\n    tool_context.state['notes_{i}'] = 1\n", encoding="utf-8"
        )
        (pkg / "agent.py").write_text(
            "from google.adk.agents import LlmAgent\n"
            f"from .prompt import INSTR_{i}\n"
            f"root_agent = LlmAgent(name='a{i}', instruction=INSTR_{i}, output_key='plan_{i}')\n",
            encoding="utf-8",
        )


def corpus(path: Path) -> None:
    """A cold full run on a real tree, against `ast.parse` of its Python files."""
    root = path.resolve()
    os.chdir(root)
    project = Project(root)
    start = time.perf_counter()
    files, _ = project.files(["."])
    select = time.perf_counter() - start
    python = [name for name in files if name.endswith(".py")]
    start = time.perf_counter()
    for name in python:
        ast.parse(Path(name).read_bytes())
    parse_time = time.perf_counter() - start
    start = time.perf_counter()
    result = Project(root).lint(["."])
    full = time.perf_counter() - start
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "templating", "lint", "."], capture_output=True, env=env, check=False)
    cli = time.perf_counter() - start
    print(f"{root}: {len(files)} files ({len(python)} Python), {len(result.templates)} instructions")
    print(f"ast.parse of the Python files: {parse_time * 1000:.0f} ms")
    print(f"choosing the files (walk, globs): {select * 1000:.0f} ms ({select / parse_time:.2f}x ast.parse)")
    print(f"full lint run (in process):      {full * 1000:.0f} ms ({full / parse_time:.1f}x ast.parse; target 4x)")
    print(f"templating lint . (a process):   {cli * 1000:.0f} ms ({cli / parse_time:.1f}x ast.parse)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, help="lint this tree instead of a generated one")
    parser.add_argument("--copies", type=int, default=0, help="also lint this many renamed copies of --corpus")
    args = parser.parse_args()
    if args.corpus:
        corpus(args.corpus)
        if args.copies:
            with tempfile.TemporaryDirectory() as folder:
                root = Path(folder)
                (root / ".git").mkdir()
                for i in range(args.copies):
                    shutil.copytree(args.corpus, root / f"copy_{i}", symlinks=True)
                corpus(root)
        return
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        build(root)
        os.chdir(root)
        files = sorted(root.rglob("*.py"))
        start = time.perf_counter()
        for path in files:
            ast.parse(path.read_text(encoding="utf-8"))
        parse_time = time.perf_counter() - start
        project = Project(root)
        start = time.perf_counter()
        result = project.lint(["."])
        full = time.perf_counter() - start
        edits = [
            # a key nothing writes (plan_77 would be agent_77's output_key), and a write removed in another file
            ("prompt edit", "agent_7/prompt.py", "{plan_7}", "{plan_7_draft}"),
            ("output_key removed", "agent_7/agent.py", ", output_key='plan_7'", ""),
        ]
        print(f"{len(files)} files, {len(result.templates)} instructions, {len(result.diagnostics)} findings")
        print(f"ast.parse of every file: {parse_time * 1000:.0f} ms")
        print(f"full lint run:           {full * 1000:.0f} ms ({full / parse_time:.1f}x ast.parse)")
        for label, target, old, new in edits:
            original = (root / target).read_text(encoding="utf-8")
            text = original.replace(old, new)
            times = []
            for _ in range(10):
                project.update(target, original)
                start = time.perf_counter()
                again = project.update(target, text)
                times.append(time.perf_counter() - start)
            fresh = lint_project(["."], overrides={target: text})
            same = all(
                [d for d in again.diagnostics if d.path == name] == [d for d in fresh.diagnostics if d.path == name]
                for name in again.files
            )
            findings = sorted({(d.path, d.code) for d in again.diagnostics})
            print(
                f"re-lint, {label + ':':19} {min(times) * 1000:.1f} ms (best of 10; target <= 50 ms); "
                f"findings {findings}; same as a fresh run: {same}"
            )
            project.update(target, original)


CORPUS = next(
    (
        p / "shared/corpora/adk-samples/python/agents"
        for p in Path(__file__).resolve().parents
        if (p / "shared").is_dir()
    ),
    Path("adk-samples/python/agents"),
)
CORPUS_EDITS = [
    # (label, file, old, new) in travel-concierge
    (
        "prompt: placeholder added",
        "travel_concierge/sub_agents/planning/prompt.py",
        "{itinerary}",
        "{itinerary} {budget}",
    ),
    ("agent: output_key removed", "travel_concierge/sub_agents/planning/agent.py", 'output_key="itinerary",', ""),
    ("tool: write removed", "travel_concierge/tools/memory.py", "tool_context.state[key] = []", "pass"),
    ("root agent: import removed", "travel_concierge/agent.py", "from travel_concierge import prompt\n", ""),
]


def corpus_update_vs_fresh() -> None:
    source = Path(os.environ.get("TEMPLATING_ADK_SAMPLES", "")) / "python" / "agents"
    source = source if source.is_dir() else CORPUS
    if not (source / "travel-concierge").is_dir():
        print("travel-concierge: the shared corpus is absent (set TEMPLATING_ADK_SAMPLES): skipped")
        return
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "travel-concierge"
        shutil.copytree(source / "travel-concierge", root, ignore=shutil.ignore_patterns("__pycache__", ".*"))
        (root / ".git").mkdir()
        os.chdir(root)
        project = Project(root)
        project.lint(["."])
        print("travel-concierge (adk-samples): Project.update vs a fresh lint_project, same unsaved text")
        for label, target, old, new in CORPUS_EDITS:
            original = (root / target).read_text(encoding="utf-8")
            if old not in original:
                print(f"  {label}: {old!r} not in {target}: skipped")
                continue
            text = original.replace(old, new)
            fresh_times, update_times = [], []
            for _ in range(7):  # interleaved, so that both see the same load
                start = time.perf_counter()
                lint_project(["."], root=root, overrides={target: text})
                fresh_times.append(time.perf_counter() - start)
                project.update(target, original)
                start = time.perf_counter()
                project.update(target, text)
                update_times.append(time.perf_counter() - start)
            fresh, both = statistics.median(fresh_times), 2 * statistics.median(update_times)
            project.update(target, original)
            again = project.update(target, text)
            expected = lint_project(["."], root=root, overrides={target: text})
            same = all(
                sorted(str(d) for d in again.diagnostics if d.path == name)
                == sorted(str(d) for d in expected.diagnostics if d.path == name)
                for name in again.files
            )
            project.update(target, original)
            print(
                f"  {label + ':':28} update {both / 2 * 1000:6.1f} ms, fresh {fresh * 1000:6.1f} ms, "
                f"ratio {both / 2 / fresh:.2f} (target <= 0.5); {len(again.files)} files published; "
                f"same as fresh: {same}"
            )


if __name__ == "__main__":
    main()
    corpus_update_vs_fresh()
