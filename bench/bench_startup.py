"""Start-up benchmark: the command line as whole processes, against importing the package's core.

Run: python bench/bench_startup.py [RUNS] [--source]

Every command a pre-commit hook or a script runs starts a new interpreter, so what it costs is
the whole process: interpreter, imports, the parser's regular expression, the work itself. Each
command is run RUNS times (default 21), interleaved with the references so that a busy machine
slows all alike, and the medians are compared. The reference is a process importing the core
(parsing, rendering, the providers, the converter and the linter: what `import templating` loaded
before its names were imported on first use); also printed, each command against the interpreter
alone (`python -c pass`). Target (issue 10): `templating render`, `keys` and `lint FILE` each
within 1.5 times the reference; no Lark parser is built on the way.

The processes run as from an installed package: the bytecode of the modules compiled once (pip does it
at install), kept in a temporary folder, even when the environment sets `PYTHONDONTWRITEBYTECODE`;
`--source` compiles every module from source in each process instead.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 1.5
CORE = "import templating.convert, templating.linter.engine, templating.providers, templating.template"
REFERENCE = "python -c 'import the core'"
INTERPRETER = "python -c pass"


def command_prefix() -> list[str]:
    """How to start the `templating` command installed beside this interpreter (or ``-m templating``)."""
    script = shutil.which("templating", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "templating"]


def environment(bytecode: str | None) -> dict[str, str]:
    """The processes' environment: bytecode kept in `bytecode` (compiled once, as installed), or, when it
    is None, compiled from source in each process."""
    env = dict(os.environ)
    if bytecode is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = bytecode
    return env


ENV: dict[str, str] = dict(os.environ)


def elapsed(argv: list[str], cwd: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):  # 1: findings or missing keys are fine, a crash is not
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.decode()}")
    return seconds


def main() -> None:
    global ENV
    numbers = [arg for arg in sys.argv[1:] if arg != "--source"]
    runs = int(numbers[0]) if numbers else 21
    source = "--source" in sys.argv[1:]
    template = str(ROOT / "examples" / "support_agent.txt")
    state = str(ROOT / "examples" / "state.json")
    cli = command_prefix()
    commands = {
        REFERENCE: [sys.executable, "-c", CORE],
        INTERPRETER: [sys.executable, "-c", "pass"],
        'python -c "import templating"': [sys.executable, "-c", "import templating"],
        "templating render FILE --state S": [*cli, "render", template, "--state", state],
        "templating keys FILE": [*cli, "keys", template],
        "templating lint FILE": [*cli, "lint", template],
        "templating --version": [*cli, "--version"],
    }
    # Outside the checkout: no pyproject.toml to find for lint's configuration, as for a user's file.
    with tempfile.TemporaryDirectory() as cwd:
        ENV = environment(None if source else os.path.join(cwd, ".bytecode"))
        # Is a Lark parser built on the way? It must not be (the shipped expression is used).
        probe = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from templating.cli import main; main(['keys', sys.argv[1]]); "
                "print('LARK-IMPORTED' if 'lark' in sys.modules else 'NO-LARK', file=sys.stderr)",
                template,
            ],
            cwd=cwd,
            capture_output=True,
            text=True,
            env=ENV,
            check=True,
        )
        lark_loaded = "LARK-IMPORTED" in probe.stderr
        for argv in commands.values():  # warm the file system cache and the .pyc files
            elapsed(argv, cwd)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, argv in commands.items():
                times[name].append(elapsed(argv, cwd))
        version_line = version_lookups(runs)
    medians = {name: statistics.median(values) for name, values in times.items()}
    reference, interpreter = medians[REFERENCE], medians[INTERPRETER]
    print(f"whole processes, median of {runs} runs each (interleaved)")
    print(f"modules: {'compiled from source in each process' if source else 'bytecode compiled once, as installed'}")
    print(f"{'':<34} {'median':>11}   {'/ core':>11}   {'/ python':>8}")
    ok = not lark_loaded
    for name, seconds in medians.items():
        ratio = seconds / reference
        verdict = "" if name.startswith("python") else ("pass" if ratio <= TARGET else "FAIL")
        ok = ok and verdict != "FAIL"
        print(f"{name:<34} {seconds * 1e3:8.1f} ms   ratio {ratio:5.2f}   {seconds / interpreter:5.2f}x   {verdict}")
    print(f"Lark imported by `templating keys`: {'yes (FAIL)' if lark_loaded else 'no (pass)'}")
    print(version_line)
    print(f"target: each command <= {TARGET:.1f}x importing the core: {'pass' if ok else 'FAIL'}")


def version_lookups(runs: int) -> str:
    """The import change of `--version`: its METADATA read directly, against `importlib.metadata`, each
    in a fresh interpreter (what a process pays), the median of `runs` interleaved runs."""
    code = {
        "importlib.metadata.version()": (
            "import importlib.metadata as m; m.version('agent-prompt-templating')",
            "",
        ),
        "templating.cli.parser.version()": (
            "from templating.cli.parser import version; version()",
            "from templating.cli import parser",
        ),
    }
    times: dict[str, list[float]] = {name: [] for name in code}
    for _ in range(runs):
        for name, (work, setup) in code.items():
            # An empty setup must leave no empty statement (`import time; ; t = ...` is a syntax error).
            timed = "; ".join(part for part in ("import time", setup, "t = time.perf_counter()", work) if part)
            timed += "; print(time.perf_counter() - t)"
            done = subprocess.run([sys.executable, "-c", timed], capture_output=True, text=True, env=ENV, check=True)
            times[name].append(float(done.stdout))
    medians = {name: statistics.median(values) for name, values in times.items()}
    ours, reference = medians["templating.cli.parser.version()"], medians["importlib.metadata.version()"]
    return (
        f"--version lookup in a fresh process: METADATA read directly {ours * 1e3:6.2f} ms, "
        f"importlib.metadata {reference * 1e3:6.2f} ms, ratio {ours / reference:5.2f}"
    )


if __name__ == "__main__":
    main()
