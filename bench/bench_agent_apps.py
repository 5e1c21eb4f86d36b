"""`templating lint` app by app over the shared corpus: the findings per rule and per app, and what linting each app
costs against `ast.parse` of the same files (issue 33, deliverable 10).

An app is what google-adk loads as one, counted as /work/notes/adk-truth/corpus-survey.md counts them (99 apps in
the shared corpus): an adk-samples agent folder (`python/agents/<name>`), an adk-python sample
(`contributing/samples/<name>`, or a file at the top of `samples`), else the outermost package folder holding the
file (a folder with `__init__.py`), else the single `.py` file. Each app is copied alone into a temporary folder
marked as a project root (a `pyproject.toml` with an empty `[tool.templating]`), so that no app sees another's
state writes, and linted there as `templating lint .` lints it (`lint_project`, in this process, no cache). Its
reference is `ast.parse` of the same `.py` files, in this process; a file this Python cannot parse is left out of
both (counted). A crash of the linter on an app is printed with the app and the run goes on; the exit status is
then 1.

Printed: one line per app (files, findings, errors, lint and parse time, their ratio, the findings by rule), the
findings per rule over all apps, and the totals. `--json` prints the same as one JSON object instead.

Usage: `nice -n 5 python bench/bench_agent_apps.py [--corpus PATH] [--repeat N] [--cpu] [--app TEXT] [--show]
[--json]`. `--repeat N`: each app linted and parsed N times, the fastest kept; `--cpu`: CPU time instead of wall time
(steadier when other work shares the machine); `--app TEXT`: only the apps whose name contains TEXT; `--show`: each
finding under its app.
"""

from __future__ import annotations

import argparse
import ast
import json
import statistics
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench_lint_corpus import parses

from templating import lint_project
from templating.linter.registry import described

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpora"
if not CORPUS.is_dir():
    CORPUS = Path("/work/shared/corpora")
PYPROJECT = "[tool.templating]\n"
# Files copied with an app besides its Python: instruction text files, Agent Config YAML, eval sets.
DATA_SUFFIXES = frozenset({".txt", ".md", ".yaml", ".yml", ".json", ".toml", ".j2", ".jinja"})


@dataclass
class App:
    """One app of the corpus: its name (its path in the corpus), the folder its files are copied relative to, and
    its files."""

    name: str
    base: Path
    files: list[Path]


@dataclass
class AppRun:
    """What linting one app gave."""

    app: str
    files: int
    left_out: int
    findings: dict[str, int] = field(default_factory=dict)
    errors: int = 0
    lint_s: float = 0.0
    parse_s: float = 0.0
    crash: str | None = None
    # each finding: the file (relative to the app), line, code, severity, message
    details: list[dict[str, object]] = field(default_factory=list)

    @property
    def ratio(self) -> float | None:
        return self.lint_s / self.parse_s if self.parse_s > 0 else None


def app_of(path: Path, corpus: Path) -> tuple[str, Path, Path | None]:
    """The app `path` belongs to: its name, the folder its files are copied relative to, and its folder (None for a
    single-file app)."""
    parts = path.relative_to(corpus).parts
    for i in range(len(parts) - 2):
        if (parts[i], parts[i + 1]) in (("python", "agents"), ("contributing", "samples")):
            if len(parts) > i + 3:  # inside a folder of `agents` / `samples`: the folder is the app
                folder = corpus.joinpath(*parts[: i + 3])
                return "/".join(parts[: i + 3]), folder, folder
            return "/".join(parts), path.parent, None
    folder, top = path.parent, None
    while folder != corpus and (folder / "__init__.py").is_file():
        top, folder = folder, folder.parent
    if top is not None:
        return str(top.relative_to(corpus)), top.parent, top
    return str(path.relative_to(corpus)), path.parent, None


def apps_of(corpus: Path) -> list[App]:
    """Every app of `corpus`, with its Python files and the data files of its folder, in name order."""
    apps: dict[str, App] = {}
    for path in sorted(corpus.rglob("*.py")):
        if not path.is_file() or path.is_symlink():
            continue
        name, base, folder = app_of(path, corpus)
        if name not in apps:
            data = []
            if folder is not None:
                data = [p for p in sorted(folder.rglob("*")) if p.suffix in DATA_SUFFIXES and p.is_file()]
            apps[name] = App(name, base, [p for p in data if not p.is_symlink()])
        apps[name].files.append(path)
    return [apps[name] for name in sorted(apps)]


def copy_app(app: App, target: Path) -> tuple[list[str], int]:
    """`app`'s files copied under `target` (a project root), but the `.py` files this Python cannot parse; returns
    the `.py` files copied and how many were left out."""
    python, left_out = [], 0
    for path in app.files:
        data = path.read_bytes()
        if path.suffix == ".py" and not parses(data):
            left_out += 1
            continue
        out = target / path.relative_to(app.base)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        if path.suffix == ".py":
            python.append(str(out))
    target.mkdir(parents=True, exist_ok=True)
    if not (target / "pyproject.toml").is_file():
        (target / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    return sorted(python), left_out


def _parse_all(files: list[str]) -> None:
    for name in files:
        with open(name, "rb") as handle:
            ast.parse(handle.read())


def lint_app(app: App, folder: Path, *, repeat: int, clock: Callable[[], float]) -> AppRun:
    """Lint one app copied alone into `folder`: its findings by rule, and the time against `ast.parse` (the fastest
    of `repeat` runs of each)."""
    python, left_out = copy_app(app, folder)
    run = AppRun(app.name, len(python), left_out)
    if not python:
        return run
    parse_times, lint_times = [], []
    for _ in range(repeat):
        start = clock()
        _parse_all(python)
        parse_times.append(clock() - start)
    try:
        for _ in range(repeat):
            start = clock()
            result = lint_project([str(folder)], root=folder)
            lint_times.append(clock() - start)
    except Exception:  # a crash on real code is the finding: report it, go on
        run.crash = traceback.format_exc().strip().splitlines()[-1]
        return run
    run.parse_s, run.lint_s = min(parse_times), min(lint_times)
    run.findings = dict(sorted(Counter(d.code for d in result.diagnostics).items()))
    run.errors = result.errors
    for d in result.diagnostics:
        where = Path(d.path).resolve().relative_to(folder.resolve()).as_posix() if d.path else None
        line = d.span.line if d.span else None
        run.details.append({"path": where, "line": line, "code": d.code, "severity": d.severity, "message": d.message})
    return run


def lint_corpus(corpus: Path, *, repeat: int = 1, cpu: bool = False, only: str | None = None) -> list[AppRun]:
    clock = time.process_time if cpu else time.perf_counter
    apps = [app for app in apps_of(corpus) if only is None or only in app.name]
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-agent-apps-") as tmp:
        for i, app in enumerate(apps):
            if i == 0:  # warm up: the first lint imports the linter's modules
                lint_app(app, Path(tmp) / "warm-up", repeat=1, clock=clock)
            runs.append(lint_app(app, Path(tmp) / f"app{i:03d}", repeat=repeat, clock=clock))
    return runs


def summary(runs: list[AppRun]) -> dict[str, object]:
    """The totals and the findings per rule (count, apps, severity) over all apps."""
    per_rule: Counter[str] = Counter()
    apps_per_rule: Counter[str] = Counter()
    for run in runs:
        per_rule.update(run.findings)
        apps_per_rule.update(run.findings.keys())
    lint_s = sum(r.lint_s for r in runs)
    parse_s = sum(r.parse_s for r in runs)
    ratios = [r.ratio for r in runs if r.ratio is not None and r.crash is None]
    rules = {}
    for code in sorted(per_rule):
        rule = described(code)
        rules[code] = {
            "name": rule.name if rule else None,
            "severity": rule.severity if rule else None,
            "findings": per_rule[code],
            "apps": apps_per_rule[code],
        }
    return {
        "apps": len(runs),
        "files": sum(r.files for r in runs),
        "left_out": sum(r.left_out for r in runs),
        "findings": sum(per_rule.values()),
        "errors": sum(r.errors for r in runs),
        "apps_with_findings": sum(1 for r in runs if r.findings),
        "crashes": [r.app for r in runs if r.crash],
        "lint_s": lint_s,
        "parse_s": parse_s,
        "ratio": lint_s / parse_s if parse_s else None,
        "median_app_ratio": statistics.median(ratios) if ratios else None,
        "rules": rules,
    }


# Path segments every app of a corpus repeats, left out of the app names printed (not of the JSON).
_REPEATED = ("examples/python/", "python/agents/", "contributing/samples/")


def shown(name: str) -> str:
    """An app's name as printed: without the segments every app of its corpus repeats."""
    for segment in _REPEATED:
        name = name.replace("/" + segment, "/", 1)
    return name


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f}"


def print_text(corpus: Path, runs: list[AppRun], total: dict[str, object], *, cpu: bool, show: bool = False) -> None:
    clock = "CPU" if cpu else "wall"
    print(f"corpus {corpus}: {total['apps']} apps, {total['files']} .py files linted", end="")
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    print(f" ({total['left_out']} left out: not valid Python {version})" if total["left_out"] else "")
    width = max([len(shown(r.app)) for r in runs] + [3])
    print(f"{'app':<{width}}  files  findings  errors   lint ms  parse ms   ratio  findings by rule ({clock} time)")
    for run in runs:
        ratio = f"{run.ratio:7.1f}" if run.ratio is not None else "      -"
        rules = "CRASH " + run.crash if run.crash else " ".join(f"{c}x{n}" for c, n in run.findings.items())
        print(
            f"{shown(run.app):<{width}}  {run.files:5d}  {sum(run.findings.values()):8d}  {run.errors:6d}  "
            f"{_ms(run.lint_s)}  {_ms(run.parse_s)}  {ratio}  {rules}"
        )
        if show:
            for d in run.details:
                print(f"    {d['path']}:{d['line']}: {d['code']} {d['severity']}: {d['message']}")
    print()
    print("findings per rule (all apps):")
    rules = total["rules"]
    assert isinstance(rules, dict)
    for code, info in rules.items():
        name, severity = info["name"] or "?", info["severity"] or "?"
        print(f"  {code} {name:<28} {severity:<8} {info['findings']:5d} in {info['apps']} apps")
    if not rules:
        print("  none")
    ratio, median = total["ratio"], total["median_app_ratio"]
    print()
    print(
        f"total: {total['apps']} apps ({total['apps_with_findings']} with findings), {total['files']} files, "
        f"{total['findings']} findings ({total['errors']} errors); lint {total['lint_s']:.2f} s, "
        f"ast.parse {total['parse_s']:.3f} s: ratio {ratio:.1f}" + (f" (median per app {median:.1f})" if median else "")
        if isinstance(ratio, float)
        else f"total: {total['apps']} apps, nothing to lint"
    )
    crashes = total["crashes"]
    assert isinstance(crashes, list)
    if crashes:
        print(f"the linter crashed on {len(crashes)} app(s): {', '.join(crashes)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the folder of agent code (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per app, the fastest kept (default: 1)")
    parser.add_argument("--cpu", action="store_true", help="CPU time instead of wall time")
    parser.add_argument("--app", help="only the apps whose name contains this text")
    parser.add_argument("--show", action="store_true", help="print each finding under its app")
    parser.add_argument("--json", action="store_true", help="print JSON (with each finding) instead of text")
    args = parser.parse_args(argv)
    corpus = args.corpus.resolve()
    if not corpus.is_dir():
        print(f"bench_agent_apps: no corpus at {corpus} (see /work/shared/corpora/README.md)", file=sys.stderr)
        return 2
    if args.repeat < 1:
        print("bench_agent_apps: --repeat must be at least 1", file=sys.stderr)
        return 2
    runs = lint_corpus(corpus, repeat=args.repeat, cpu=args.cpu, only=args.app)
    total = summary(runs)
    if args.json:
        out = {"corpus": str(corpus), "clock": "cpu" if args.cpu else "wall", "repeat": args.repeat}
        out |= {"total": total, "apps": [asdict(r) | {"ratio": r.ratio} for r in runs]}
        json.dump(out, sys.stdout, indent=2)
        print()
    else:
        print_text(corpus, runs, total, cpu=args.cpu, show=args.show)
    return 1 if total["crashes"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
