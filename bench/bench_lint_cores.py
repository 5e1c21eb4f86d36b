"""`templating lint` cold on every core: the shared corpus (Google's adk-samples agents) copied N times (each copy's
top-level packages renamed, as `bench_lint_corpus.py` builds them), linted as one project, as a process.

Each figure is printed against its target and a reference measured in the same run (issue 35, deliverable 2):
- cold lint (wall) / the parse floor: a single Python process that reads and `ast.parse`s the same files;
  target at most 1.0. The lint forced into one process (`TEMPLATING_LINT_JOBS=1`) is printed beside it;
- peak memory of the lint and its worker processes (their resident sets summed, sampled every 10 ms); target
  at most 300 MiB at 20 copies; and MiB per 1,000 files at a quarter of the copies (2 at least) and at all of
  them (linear: about the same, or falling);
- warm lint (the persistent cache, nothing changed) / cold lint; target at most 0.1;
- CPU times (user and system, workers included) beside the wall times: on a machine others keep busy, the
  workers cannot show in wall time what they save.

Usage: `nice -n 5 python bench/bench_lint_cores.py [--copies 20] [--repeat 2]`. Wall times are best-of-`repeat`;
on a machine others share, read the ratios.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_lint_corpus as corpus  # the copies and processes are built as that bench builds them

MIB = 1024 * 1024


def _rss(pid: int) -> int:
    """The resident set of `pid` and of its descendants, in bytes (0 for one already gone)."""
    total = 0
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as children:
                total += sum(_rss(int(child)) for child in children.read().split())
    except (OSError, ValueError):
        pass
    return total


def lint(root: Path, *extra: str, jobs: str | None = None) -> tuple[float, int, float]:
    """One `templating lint .` in `root` as a process: its wall time, peak memory (its workers included) and CPU
    time (user and system, its workers included)."""
    env = corpus._env()
    if jobs is not None:
        env["TEMPLATING_LINT_JOBS"] = jobs
    command = [sys.executable, "-m", "templating", "lint", ".", "--format", "json", *extra]
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        peak = max(peak, _rss(process.pid))
        time.sleep(0.01)
    took = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"templating lint failed in {root}")
    process.returncode = 0  # reaped above
    return took, peak, usage.ru_utime + usage.ru_stime


def _floor_cpu(files: list[str]) -> float:
    """The CPU time of the parse floor's process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    corpus.parse_as_process(files)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def measure(root: Path, repeat: int) -> dict[str, float]:
    files = corpus._py_files(root)
    best: dict[str, float] = {}

    def keep(key: str, value: float) -> None:
        best[key] = min(best.get(key, value), value)

    for _ in range(repeat):
        keep("floor", corpus.parse_as_process(files))
        keep("floor_cpu", _floor_cpu(files))
        took, peak, cpu = lint(root, "--no-cache")
        keep("cold", took)
        keep("peak", peak)
        keep("cold_cpu", cpu)
        took, peak, cpu = lint(root, "--no-cache", jobs="1")
        keep("one", took)
        keep("one_peak", peak)
        keep("one_cpu", cpu)
        shutil.rmtree(root / ".templating_cache", ignore_errors=True)
        keep("first", lint(root)[0])  # cold, writing the cache
        keep("warm", lint(root)[0])
    best["files"] = len(files)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=corpus.CORPUS)
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    print(f"times: wall, best of {args.repeat}; {cores} cores; the lint's default jobs: every core")
    with tempfile.TemporaryDirectory() as folder:
        corpus.BYTECODE = str(Path(folder) / "bytecode")
        quarter = max(2, args.copies // 4)  # 1 would share its folder with the projects as they are
        _, small = corpus.build(args.corpus, Path(folder) / "small", quarter)
        _, big = corpus.build(args.corpus, Path(folder) / "big", args.copies)
        lint(small, "--no-cache")  # the bytecode compiled, the files in the page cache
        low = measure(small, 1)
        m = measure(big, args.repeat)
    n = int(m["files"])
    print(f"\n{args.copies} copies: {n} files")
    print(f"  parse floor (one process reads and ast.parses them) {m['floor'] * 1000:8.0f} ms")
    print(
        f"  templating lint cold                               {m['cold'] * 1000:8.0f} ms   "
        f"{m['cold'] / m['floor']:5.2f}x the parse floor (target <= 1.0)"
    )
    print(
        f"  templating lint cold, one process                  {m['one'] * 1000:8.0f} ms   "
        f"{m['one'] / m['floor']:5.2f}x the parse floor; the workers' speed-up {m['one'] / m['cold']:.2f}x"
    )
    print(
        f"  CPU time (user + system, workers included): parse floor {m['floor_cpu'] * 1000:.0f} ms, lint cold "
        f"{m['cold_cpu'] * 1000:.0f} ms ({m['cold_cpu'] / m['floor_cpu']:.2f}x), one process {m['one_cpu'] * 1000:.0f} "
        f"ms ({m['one_cpu'] / m['floor_cpu']:.2f}x)"
    )
    print(
        f"  peak memory, workers included {m['peak'] / MIB:6.0f} MiB (target <= 300 MiB); one process "
        f"{m['one_peak'] / MIB:.0f} MiB"
    )
    per_low = low["peak"] / MIB / low["files"] * 1000
    per_big = m["peak"] / MIB / n * 1000
    marginal = (m["peak"] - low["peak"]) / MIB / max(n - low["files"], 1) * 1000
    at_100k = m["peak"] / MIB + marginal * (100 - n / 1000)
    print(
        f"  linear: {per_low:.1f} MiB per 1,000 files at {quarter} copies ({int(low['files'])} files), "
        f"{per_big:.1f} at {args.copies} ({per_big / per_low:.2f}x; target about 1 or less); each further 1,000 "
        f"files {marginal:.1f} MiB, so 100,000 files at this rate {at_100k:.0f} MiB"
    )
    print(
        f"  templating lint warm {m['warm'] * 1000:8.0f} ms   {m['warm'] / m['cold']:5.2f}x cold (target <= 0.1); "
        f"the cold run writing the cache {m['first'] / m['cold']:.2f}x cold"
    )


if __name__ == "__main__":
    main()
