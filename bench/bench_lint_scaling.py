"""`templating lint` on generated trees of 1,000, 10,000 and 100,000 files: the cost per file at
each size against the cost per file at the smallest, and against the size before, measured in the
same run (target: linear, a ratio near 1; a quadratic step would show as 10x at each step). The
smallest tree's figure includes the process's start (a fixed cost), so the step from one size to the
next is the one to read for the larger sizes. Times are CPU times (the process's own, and the
`templating lint` process's): wall times of a busy machine are not comparable across sizes.

Each tree has folders of 100 files: a quarter `.prompt` files, a quarter small Python modules, half
other files the include globs leave out, a `.gitignore` of 2,000 lines (plain names and wildcards)
and a few links (one out of the tree: an E003 finding). Two lines per size: the files a run selects
(the walk, the globs, `.gitignore`, identities) in this process, and the whole command as a user
runs it (a new process). `--sizes 1000,10000` to stop earlier; `--no-cli` for the first line only."""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from templating.linter.engine import Project

HERE = Path(__file__).resolve().parent.parent


def build(root: Path, files: int) -> None:
    (root / ".git").mkdir()
    (root / "pyproject.toml").write_text('[tool.templating]\nexclude = ["**/skip_*"]\n', encoding="utf-8")
    ignore = [f"generated_{i}.txt" for i in range(1000)] + [f"*.tmp{i}" for i in range(1000)]
    (root / ".gitignore").write_text("\n".join(ignore) + "\n", encoding="utf-8")
    (root.parent / "outside.py").write_text("X = 1\n", encoding="utf-8")
    for i in range(files):
        folder = root / f"pkg_{i // 100}"
        if i % 100 == 0:
            folder.mkdir()
            (folder / "link.py").symlink_to(root.parent / "outside.py") if i == 0 else None
        kind = i % 4
        if kind == 0:
            (folder / f"p_{i}.prompt").write_text(f"You help <user:name> with order <order_{i}?>.\n", encoding="utf-8")
        elif kind == 1:
            (folder / f"m_{i}.py").write_text(f'HELP_{i}_PROMPT = "Use {{plan_{i}?}}."\n', encoding="utf-8")
        else:
            (folder / f"notes_{i}.txt").write_text("x\n", encoding="utf-8")


def _children_cpu() -> float:
    """The CPU time (user and system) of the processes this one started and waited for."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--no-cli", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    base_select = base_cli = 0.0
    last_select = last_cli = 0.0
    for size in sizes:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder) / "tree"
            root.mkdir()
            build(root, size)
            os.chdir(root)
            start = time.process_time()
            files, notes = Project(root).files(["."])
            select = (time.process_time() - start) / size
            base_select = base_select or select
            line = (
                f"{size:>7} files: select {select * 1e6:6.1f} us/file ({select / base_select:.2f}x the "
                f"{sizes[0]}-file tree, {select / (last_select or select):.2f}x the size before; target <= 2x),"
                f" {len(files)} selected, {len(notes)} E003"
            )
            last_select = select
            if not args.no_cli:
                start = _children_cpu()
                done = subprocess.run(
                    [sys.executable, "-m", "templating", "lint", "."], capture_output=True, text=True, env=env
                )
                cli = (_children_cpu() - start) / size
                base_cli = base_cli or cli
                tail = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.stdout.strip()[-80:]
                line += (
                    f"; templating lint . {cli * 1e6:7.1f} us/file ({cli / base_cli:.2f}x, "
                    f"{cli / (last_cli or cli):.2f}x the size before; target <= 2x), exit {done.returncode}: {tail}"
                )
                last_cli = cli
            print(line, flush=True)
            os.chdir(HERE)


if __name__ == "__main__":
    main()
