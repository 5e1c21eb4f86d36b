"""`templating lint --diff` and `--fix` on real agent code: a copy of the shared corpus (Google's adk-samples)
with one near-miss placeholder put in each agent module that has an instruction (`{itinerary}` written
`{itinerary ??}`, a T019 finding whose fix is safe), timed as users call them (a process each) against a
plain `templating lint` of the same copy in the same run.

Figures printed (read the ratios: wall times are inflated on a loaded machine):
- `--diff` / lint: what planning the fixes costs on top of a lint (fixing until stable: one more lint in
  memory per pass, and for each Python file with a fixable finding, its instructions read with the
  project's context);
- `--fix` / lint: the same, plus writing each file and the lint of what is left from disk;
- a second `--fix` / lint: nothing left to fix (the usual pre-commit run once the tree is clean).

It also checks what it times: `--diff` and the first `--fix` change exactly the placeholders put in (each
`{key ??}` becomes `{key?}`, nothing else), and the second `--fix` writes nothing.

Usage: `nice -n 5 python bench/bench_lint_fix.py [--corpus PATH] [--repeat N]`.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CORPUS = Path("/work/shared/corpora/adk-samples/python")
ROOT = Path(__file__).resolve().parents[1]
_PLACEHOLDER = re.compile(r"(?<![{$\\])\{([a-z][a-z_]{2,})\}(?!\})")


def _mutate(folder: Path) -> dict[Path, str]:
    """Put one `{key ??}` in each agent module with an instruction; what each file should become when fixed."""
    expected = {}
    for path in sorted(folder.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        m = _PLACEHOLDER.search(text)
        if m is None or ("instruction" not in text.lower() and "prompt" not in path.name):
            continue
        path.write_text(text[: m.start()] + "{" + m.group(1) + " ??}" + text[m.end() :], encoding="utf-8")
        expected[path] = text[: m.start()] + "{" + m.group(1) + "?}" + text[m.end() :]
    return expected


def _time(args: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "templating", "lint", "--no-cache", *args, "python"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return time.perf_counter() - start, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    best: dict[str, float] = {}
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            shutil.copytree(args.corpus, work / "python")
            (work / "pyproject.toml").write_text("[tool.templating]\n", encoding="utf-8")
            expected = _mutate(work / "python")
            before = {path: path.read_text(encoding="utf-8") for path in expected}
            runs = {}
            runs["lint"], _ = _time([], work)
            runs["--diff"], diff = _time(["--diff"], work)
            assert all(path.read_text(encoding="utf-8") == text for path, text in before.items()), "--diff wrote"
            fixed_by_diff = diff.stdout.count("\n+++ b/") + diff.stdout.startswith("+++ b/")
            runs["--fix"], fix = _time(["--fix"], work)
            changed = [path for path in expected if path.read_text(encoding="utf-8") != before[path]]
            assert all(path.read_text(encoding="utf-8") == expected[path] for path in changed), "--fix wrote more"
            snapshot = {path: path.read_text(encoding="utf-8") for path in expected}
            runs["second --fix"], again = _time(["--fix"], work)
            assert {path: path.read_text(encoding="utf-8") for path in expected} == snapshot, "a second --fix wrote"
            assert "applied 0 fixes in 0 files" in again.stdout + again.stderr, again.stderr
            for name, seconds in runs.items():
                best[name] = min(best.get(name, seconds), seconds)
    print(
        f"corpus: {args.corpus} ({len(expected)} modules given a near miss, {len(changed)} fixed, "
        f"{fixed_by_diff} files in --diff)"
    )
    print(f"  {fix.stderr.strip().splitlines()[0] if fix.stderr.strip() else fix.stdout.strip().splitlines()[-2]}")
    for name, seconds in best.items():
        ratio = "" if name == "lint" else f"  {seconds / best['lint']:.2f}x lint"
        print(f"  {name:>14}: {seconds:6.2f} s{ratio}")


if __name__ == "__main__":
    main()
