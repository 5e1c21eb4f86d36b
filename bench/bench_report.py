"""HTML lint report benchmark: render time as the number of findings grows.

Run: python bench/bench_report.py

Everything is timed in this one process, and reported as ratios against the smallest size, so
numbers from different machines are never compared. Target: linear in the number of findings
(8,000 findings take about 10 times as long as 800, not 100 times), and 8,000 findings render
in well under a second.
"""

from __future__ import annotations

import time

from templating.linter import lint
from templating.linter.outputs.html import FileReport, render_html

# Each line gives one T002 finding, one T001 finding (schema: name) and two placeholders.
LINE = "Hi < name >, your <nmae> and <name> are here.\n"


def render_seconds(findings: int) -> tuple[float, int]:
    """(best seconds of three renders, findings actually reported) for a template with about ``findings``."""
    source = LINE * (findings // 2)
    diagnostics = tuple(lint(source, schema=["name"], path="big.prompt"))
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        render_html([FileReport("big.prompt", source, diagnostics)])
        best = min(best, time.perf_counter() - start)
    return best, len(diagnostics)


def main() -> None:
    sizes = [800, 2_000, 4_000, 8_000]
    results = [render_seconds(size) for size in sizes]
    base_seconds, base_count = results[0]
    print(f"{'findings':>9} {'seconds':>9} {'x time':>7} {'x findings':>10}")
    for seconds, count in results:
        print(f"{count:>9} {seconds:>9.3f} {seconds / base_seconds:>7.1f} {count / base_count:>10.1f}")
    seconds, count = results[-1]
    growth = (seconds / base_seconds) / (count / base_count)
    print(f"time grows {growth:.2f}x as fast as the findings (1.0: linear; ~10 would be quadratic here)")


if __name__ == "__main__":
    main()
