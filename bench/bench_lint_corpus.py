"""`templating lint` on real agent code: the shared corpus (Google's adk-samples), each agent project linted
with its own folder as the root, as it is (1x) and as 23 renamed copies linted as one project (23x, about
5,000 files: each copy's top-level packages renamed in its paths and imports, so copies do not import each
other). Every figure is printed against its target and a reference measured in the same run: `ast.parse`
of the same files (in-process for `lint_project`; for the command line, a Python process that reads and
parses the same files, since what users call is a process).

Figures (issue 24, deliverable 7):
- cold lint / ast.parse: target at most 4;
- warm lint (the persistent cache, nothing changed) / cold lint: target at most 0.33;
- per-file cost at 23x / per-file cost at 1x: linear means about 1.

Usage: `nice -n 5 python bench/bench_lint_corpus.py [--corpus PATH] [--copies N] [--repeat N] [--cpu] [--source]`.
Wall times are inflated on a loaded machine; the ratios are what to read (`--cpu`: CPU times, steadier
when other work shares the machine). `--copies 0`: the projects as they are only.

The processes run as from an installed package: with the bytecode of the modules they import compiled
once (pip compiles it at install), kept in a temporary folder (`PYTHONPYCACHEPREFIX`), not in the checkout,
even when the environment sets `PYTHONDONTWRITEBYTECODE`. `--source`: each process compiles every module
it imports from source again, as a checkout with `PYTHONDONTWRITEBYTECODE` does (start-up then costs about
twice as much).
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "adk-samples" / "python" / "agents"
if not CORPUS.is_dir():
    CORPUS = Path("/work/shared/corpora/adk-samples/python/agents")
PYPROJECT = "[tool.templating]\n"
_PARSE_SCRIPT = (
    "import ast, sys, warnings\n"
    "warnings.simplefilter('ignore')\n"
    "for name in sys.stdin.read().splitlines():\n"
    "    with open(name, 'rb') as f:\n"
    "        ast.parse(f.read())\n"
)


CPU = False  # --cpu: CPU time (this process's, and its children's) instead of wall time
BYTECODE: str | None = None  # where the processes keep their compiled modules; None (--source): nowhere
# What a `templating lint` process imports (`import templating.cli` alone is now only the command line).
LINT_IMPORTS = "import templating.cli, templating.linter.engine, templating.pysource.visitor, templating.linter.outputs"


def _clock() -> float:
    """Wall time, or with `--cpu` the CPU time of this process and of its finished children: on a machine
    other work keeps busy, CPU time is what the run itself costs (the ratios of both are printed)."""
    if not CPU:
        return time.perf_counter()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _packages(project: Path) -> list[str]:
    """The top-level packages (folders holding Python files) and modules of an agent project."""
    names = []
    for item in sorted(project.iterdir()):
        if item.is_dir() and any(item.rglob("*.py")):
            names.append(item.name)
        elif item.suffix == ".py":
            names.append(item.stem)
    return names


def _renamed(text: str, names: dict[str, str]) -> str:
    """`text` with each top-level package renamed in its `import`/`from` lines."""
    if not names:
        return text
    pattern = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, names)) + r")(?![\w])")
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("import ", "from ")):
            lines[i] = pattern.sub(lambda m: names[m.group(1)], line)
    return "".join(lines)


def parses(data: bytes) -> bool:
    """Whether `data` is a module this Python's `ast.parse` reads (the reference parses every file it is given)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a SyntaxWarning (an invalid escape) is still Python
        try:
            ast.parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):  # ValueError: a NUL byte (3.11)
            return False
    return True


def copy_project(source: Path, target: Path, suffix: str = "") -> list[Path]:
    """`source` copied to `target` (its `.py` files, a `pyproject.toml` marking the root), with each
    top-level package renamed `NAME{suffix}` in paths and imports when `suffix` is given. A file this
    Python cannot parse (newer syntax, a NUL byte, a mistake) is left out, so that the lint and its
    reference read the same files; the files left out are returned."""
    names = {name: name + suffix for name in _packages(source)} if suffix else {}
    skipped = []
    for path in sorted(source.rglob("*.py")):
        if not path.is_file():
            continue
        data = _renamed(path.read_text(encoding="utf-8", errors="replace"), names).encode("utf-8")
        if not parses(data):
            skipped.append(path)
            continue
        rel = path.relative_to(source)
        parts = list(rel.parts)
        if suffix:
            first = parts[0] if len(parts) > 1 else rel.stem
            if first in names:
                parts[0] = names[first] if len(parts) > 1 else names[first] + ".py"
        out = target.joinpath(*parts)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    target.mkdir(parents=True, exist_ok=True)
    (target / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    return skipped


def projects_of(corpus: Path) -> tuple[list[Path], list[Path]]:
    """The agent projects of `corpus` (its folders holding a `.py` file; the corpus itself when only its
    top level does), and the folders left out because they hold none."""
    folders = sorted(p for p in corpus.iterdir() if p.is_dir() and not p.name.startswith("."))
    projects = [p for p in folders if any(f.is_file() for f in p.rglob("*.py"))]
    if not projects and any(f.is_file() for f in corpus.glob("*.py")):
        return [corpus], []
    return projects, [p for p in folders if p not in projects]


def build(corpus: Path, folder: Path, copies: int) -> tuple[list[Path], Path]:
    """The 1x projects (one folder each) and the root of the `copies` renamed copies (one project).

    Folders without a `.py` file, and files this Python cannot parse, are left out and counted."""
    projects, empty = projects_of(corpus)
    ones = []
    skipped: list[Path] = []
    for project in projects:
        target = folder / "1x" / project.name
        left_out = copy_project(project, target)
        skipped += left_out
        if any(target.rglob("*.py")):
            ones.append(target)
        else:  # nothing but files it cannot parse
            empty.append(project)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    print(
        f"corpus {corpus}: {len(ones)} projects; left out: {len(empty)} folders without a .py file this Python "
        f"parses, {len(skipped)} .py files that are not valid Python {version}"
        + (f" (e.g. {skipped[0].relative_to(corpus)})" if skipped else "")
    )
    if not ones:
        raise SystemExit(f"bench_lint_corpus: no folder of {corpus} holds a .py file that Python {version} parses")
    many = folder / f"{copies}x"
    if copies <= 0:  # --copies 0: the projects as they are, one at a time, only
        return ones, many
    for project in projects:
        if project in empty:
            continue
        for i in range(copies):
            copy_project(project, many / f"{project.name}-c{i:02d}", suffix=f"_c{i:02d}")
    (many / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    return ones, many


def _py_files(root: Path) -> list[str]:
    return sorted(str(p) for p in root.rglob("*.py") if ".templating_cache" not in p.parts)


def parse_in_process(files: list[str]) -> float:
    start = _clock()
    for name in files:
        with open(name, "rb") as handle:
            ast.parse(handle.read())
    return _clock() - start


def parse_as_process(files: list[str]) -> float:
    start = _clock()
    subprocess.run([sys.executable, "-c", _PARSE_SCRIPT], input="\n".join(files), text=True, env=_env(), check=True)
    return _clock() - start


def startup(roots: list[Path]) -> float:
    """`python -c "import ..."` of the modules a lint imports, once per root: the floor of a `templating lint`
    process."""
    start = _clock()
    for root in roots:
        subprocess.run([sys.executable, "-c", LINT_IMPORTS], cwd=root, env=_env(), check=True)
    return _clock() - start


def _env() -> dict[str, str]:
    env = dict(os.environ)
    here = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = here + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("TEMPLATING_CACHE_DIR", None)
    if BYTECODE is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:  # as installed: compiled once, then read
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = BYTECODE
    return env


def cli(root: Path, *extra: str) -> float:
    """One `templating lint .` in `root`, as a process (output to a pipe, thrown away)."""
    start = _clock()
    done = subprocess.run(
        [sys.executable, "-m", "templating", "lint", ".", "--format", "json", *extra],
        cwd=root,
        env=_env(),
        capture_output=True,
        text=True,
    )
    took = _clock() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"templating lint failed in {root}: {done.stderr[-2000:]}")
    return took


def in_process(root: Path, **options: object) -> float:
    from templating.linter.run import lint_project

    here = os.getcwd()
    os.chdir(root)
    try:
        start = _clock()
        lint_project(["."], **options)  # type: ignore[arg-type]
        return _clock() - start
    finally:
        os.chdir(here)


def _supports_cache() -> bool:
    import inspect

    from templating.linter.run import lint_project

    return "cache_dir" in inspect.signature(lint_project).parameters


def _clear(roots: list[Path]) -> None:
    for root in roots:
        shutil.rmtree(root / ".templating_cache", ignore_errors=True)


def measure(label: str, roots: list[Path], repeat: int, cached: bool) -> dict[str, float]:
    """Best-of-`repeat` sums over `roots`: ast.parse (in-process, as a process), lint cold and warm
    (in-process and as a process)."""
    files = [f for root in roots for f in _py_files(root)]
    best: dict[str, float] = {}

    def keep(key: str, value: float) -> None:
        best[key] = min(best.get(key, value), value)

    cache_off = ["--no-cache"] if cached else []
    for _ in range(repeat):
        keep("parse", parse_in_process(files))
        keep("parse_proc", sum(parse_as_process(_py_files(root)) for root in roots))
        keep("startup", startup(roots))
        _clear(roots)
        keep("lint", sum(in_process(root) for root in roots))
        keep("cli", sum(cli(root, *cache_off) for root in roots))
        if cached:
            _clear(roots)
            keep("cli_first", sum(cli(root) for root in roots))  # cold, writing the cache
            keep("cli_warm", sum(cli(root) for root in roots))
            _clear(roots)
            keep("lint_first", sum(in_process(root, cache=True) for root in roots))
            keep("lint_warm", sum(in_process(root, cache=True) for root in roots))
    best["files"] = len(files)
    return best


def report(label: str, m: dict[str, float], cached: bool) -> None:
    n = int(m["files"])
    print(f"\n{label}: {n} files")
    print(f"  ast.parse in-process   {m['parse'] * 1000:8.0f} ms   ({m['parse'] / n * 1e6:.0f} us/file)")
    print(f"  ast.parse as a process {m['parse_proc'] * 1000:8.0f} ms")
    print(
        f"  lint_project cold      {m['lint'] * 1000:8.0f} ms   {m['lint'] / m['parse']:5.2f}x ast.parse "
        f"(target <= 4)   {m['lint'] / n * 1e6:.0f} us/file"
    )
    print(
        f"  templating lint cold   {m['cli'] * 1000:8.0f} ms   {m['cli'] / m['parse_proc']:5.2f}x the parsing process "
        f"(target <= 4); of which starting up (importing what it uses) {m['startup'] * 1000:.0f} ms"
    )
    if cached:
        print(
            f"  lint_project warm      {m['lint_warm'] * 1000:8.0f} ms   {m['lint_warm'] / m['lint']:5.2f}x cold "
            f"(target <= 0.33); cold run writing the cache {m['lint_first'] / m['lint']:.2f}x cold"
        )
        print(
            f"  templating lint warm   {m['cli_warm'] * 1000:8.0f} ms   {m['cli_warm'] / m['cli']:5.2f}x cold "
            f"(target <= 0.33); cold run writing the cache {m['cli_first'] / m['cli']:.2f}x cold"
        )
        work = max(m["cli"] - m["startup"], 1e-9)
        print(f"  templating lint warm, after starting up: {(m['cli_warm'] - m['startup']) / work:5.2f}x cold's")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--copies", type=int, default=23, help="renamed copies linted as one project (0: none)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--cpu", action="store_true", help="time CPU (process and children), not wall")
    parser.add_argument("--source", action="store_true", help="processes compile every module from source")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        parser.error(f"--corpus {args.corpus}: not a folder")
    global CPU, BYTECODE
    CPU = args.cpu
    print(f"times: {'CPU (user + system, the processes started included)' if CPU else 'wall'}")
    compiled = "compiled from source in each process" if args.source else "bytecode compiled once, as installed"
    print(f"modules: {compiled}")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    cached = _supports_cache()
    with tempfile.TemporaryDirectory() as folder:
        BYTECODE = None if args.source else str(Path(folder) / "bytecode")
        ones, many = build(args.corpus, Path(folder), args.copies)
        startup(ones[:1])  # compile the bytecode (and warm the file system cache) before measuring
        cli(ones[0], "--no-cache")
        one = measure("1x", ones, args.repeat, cached)
        report(f"1x: {len(ones)} agent projects, each its own root", one, cached)
        if args.copies <= 0:
            return
        big = measure(f"{args.copies}x", [many], max(1, args.repeat - 1), cached)
        report(f"{args.copies}x: renamed copies, one root", big, cached)
        per_one, per_big = one["lint"] / one["files"], big["lint"] / big["files"]
        print(
            f"\nlinear: lint_project per file at {args.copies}x / at 1x = {per_big / per_one:.2f} (target about 1; "
            f"ast.parse per file: {big['parse'] / big['files'] / (one['parse'] / one['files']):.2f})"
        )


if __name__ == "__main__":
    main()
