"""What suppression comments and a baseline cost a full lint run, on real code.

`python bench/bench_suppress.py --corpus ../shared/corpora/adk-samples/python` copies the corpus, then
prints, measured in this process (ratios, not times: the machine may be busy):

- the share of a full `lint_project` run spent in the suppression step (a file with no
  `# templating: ignore` comment costs one regular-expression search);
- the same with a directive appended to every Python file (the worst case: each file is parsed once
  more, and the statement holding the comment tokenized), and that step against `ast.parse` of the files;
- applying a baseline of the run's findings, against a full run.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from templating.linter import engine
from templating.linter.baseline import apply_baseline, baseline_of
from templating.linter.run import lint_project


def best(run: Callable[[], Any], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def _share(run: Callable[[], Any], spent: list[float]) -> float:
    spent[0] = 0.0
    begin = time.perf_counter()
    run()
    return spent[0] / (time.perf_counter() - begin)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", required=True, type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "corpus"
        shutil.copytree(args.corpus, root, symlinks=True)
        (root / "pyproject.toml").write_text("[tool.templating]\n", encoding="utf-8")
        os.chdir(root)
        python = sorted(str(p) for p in root.rglob("*.py") if p.is_file())

        def run() -> Any:
            return lint_project(["."], root=root)

        spent = [0.0]
        step = engine.Project._suppressed

        def timed(self: engine.Project, *args: Any) -> Any:
            begin = time.perf_counter()
            try:
                return step(self, *args)
            finally:
                spent[0] += time.perf_counter() - begin

        engine.Project._suppressed = timed  # type: ignore[method-assign]

        def share() -> float:  # the suppression step's share of a full run (the least of 3 runs)
            return min(_share(run, spent) for _ in range(3))

        print(f"{len(python)} Python files; the suppression step / a full run: {share():.4f}")
        texts = {name: Path(name).read_text(encoding="utf-8", errors="replace") for name in python}
        parse = best(lambda: [ast.parse(text) for text in texts.values()])
        for name, text in texts.items():
            Path(name).write_text(text + "\nX = 1  # templating: ignore[T014]\n", encoding="utf-8")
        print(f"a directive in every file: the suppression step / a full run: {share():.4f}")
        spent[0] = 0.0
        run()
        print(f"  the step / ast.parse of every file: {spent[0] / parse:.3f}")

        result = run()
        baseline = baseline_of(result)
        whole = best(run)
        result = run()
        drop = time.perf_counter()
        apply_baseline(result, baseline)
        drop = time.perf_counter() - drop
        print(f"{baseline.total} findings; applying the baseline / a full run: {drop / whole:.4f}")


if __name__ == "__main__":
    main()
