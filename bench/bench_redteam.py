"""How long the red-team rows run before they are stopped, and what they allocate meanwhile.

Run: python bench/bench_redteam.py

tests/test_redteam.py asserts what the code promises for each hostile input (the error, and for a
Jinja2 render the budget that stops it); it asserts no time or memory, which a busy machine cannot
keep. This script prints those figures instead, each against a reference measured in this same
process: a warm render of the 2 KB instruction of bench_core.py (10 placeholders) through `render`
for the rows of the Python API, through `jinja()` for the Jinja2 rows. For every row: milliseconds
(best of the rounds), that time as a multiple of the reference render, and the peak of Python
allocations (tracemalloc, in a separate run, so that tracing does not slow the timed one).

The Jinja2 rows run as a user's render would, with the default budget (the clock included:
`slow-steps` stops at `max_time`, one second). Besides the test's rows, sized to just reach their
limit, the "full size" section runs the inputs the table used to hold: values and schemas nested
100,000 deep.
"""

from __future__ import annotations

import contextlib
import gc
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_core import STATE, two_kb_text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import test_redteam as table  # the rows themselves: the figures are of what is tested

from templating import jinja, lint, render

ROUNDS = 3
MB = 1 << 20


def elapsed(action: Callable[[], Any]) -> float:
    """Seconds for one call of `action` (which may raise: a hostile row ends in an error)."""
    gc.collect()
    started = time.perf_counter()
    with contextlib.suppress(Exception):
        action()
    return time.perf_counter() - started


def best(action: Callable[[], Any], rounds: int = ROUNDS) -> float:
    return min(elapsed(action) for _ in range(rounds))


def peak(action: Callable[[], Any]) -> int:
    """Peak bytes of Python allocations during one call of `action`."""
    gc.collect()
    tracemalloc.start()
    try:
        action()
    except Exception:
        pass
    finally:
        top = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return top


def reference(render_once: Callable[[], Any]) -> float:
    """Seconds per warm call, best of 7 runs of 200 calls."""
    render_once()
    return min(elapsed(lambda: [render_once() for _ in range(200)]) for _ in range(7)) / 200


def report(title: str, rows: list[tuple[str, Callable[[], Any]]], unit: float) -> list[tuple[str, float]]:
    print(f"\n{title}")
    print(f"{'row':>34} {'ms':>9} {'x reference':>12} {'peak MB':>9}")
    ratios = []
    for name, action in rows:
        seconds = best(action)
        ratios.append((name, seconds / unit))
        print(f"{name:>34} {seconds * 1e3:9.2f} {seconds / unit:12.0f} {peak(action) / MB:9.2f}")
    return ratios


def main() -> None:
    angle = two_kb_text(lambda key: f"<{key}>")
    braces = two_kb_text(lambda key: f"{{{{ {key} }}}}")
    provider = jinja(braces)
    plain = reference(lambda: render(angle, STATE))
    templated = reference(lambda: provider(STATE))
    print(f"reference: a warm render of the 2 KB instruction, {plain * 1e6:.1f} us (render),", end=" ")
    print(f"{templated * 1e6:.1f} us (jinja)")

    jinja_rows = [(name, lambda s=source, st=state: jinja(s)(st)) for name, source, state, _, _ in table.JINJA_ROWS]
    jinja_rows += [
        (f"{name} (max_time off)", lambda s=source: jinja(s, budget=table.JinjaBudget(max_time=None))({}))
        for name, source in table.TOTAL_ROWS
    ]
    ratios = report("Jinja2 rows, default budget (x the jinja reference)", jinja_rows, templated)
    ratios += report(
        "Python API rows (x the render reference)", [(name, action) for name, action, _ in table.API_ROWS], plain
    )

    full = 100_000
    deep_list = table._nested(full)
    deep_dict = table._nested(full, kind="dict")

    def deep_schema() -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "string"}
        for _ in range(full):
            schema = {"type": "object", "properties": {"a": schema}}
        return schema

    schema = deep_schema()
    ratios += report(
        f"full size: nested {full:,} deep (x the render reference)",
        [
            ("render-deep-list", lambda: render("<a>", {"a": deep_list})),
            ("render-deep-dict", lambda: render("<a>", {"a": deep_dict})),
            ("render-adk-deep-list", lambda: render("{a}", {"a": deep_list}, dialect="adk")),
            ("jinja-deep-list", lambda: jinja("{{ a }}")({"a": deep_list})),
            ("lint-deep-schema", lambda: lint("<a>", schema=schema)),
            ("lint-deep-list-schema", lambda: lint("<a>", schema={"a": deep_list})),
        ],
        plain,
    )
    name, worst = max(ratios, key=lambda item: item[1])
    print(f"\nslowest row: {name}, {worst:.0f} x its reference render")


if __name__ == "__main__":
    main()
