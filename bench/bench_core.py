"""Core benchmark: warm render against str.format_map, and cold parse time as templates grow.

Run: python bench/bench_core.py

Everything is timed in this one process on this machine, and reported as a ratio against a
reference measured the same way, so numbers from different machines are never compared.
Targets (from the core issue): a warm render of a cached 2 KB template with 10 placeholders no
slower than str.format_map on the same text and values; cold parse time linear in size, with
1 MB (realistic or adversarial) under 100 ms.
"""

from __future__ import annotations

import gc
import statistics
import timeit
from collections.abc import Callable

from templating import Template
from templating.parser import _cached, parse_nodes

KEYS = ["name", "order_id", "status", "plan", "language", "company", "agent", "tier", "city", "step"]
STATE = {key: f"value-of-{key}" for key in KEYS}


def two_kb_text(placeholder: Callable[[str], str]) -> str:
    """About 2 KB of prose with the ten keys spread evenly through it."""
    filler = "The assistant answers politely, cites the policy and never invents an order number. "
    chunk = filler * 2
    return "".join(chunk + placeholder(key) + ". " for key in KEYS) + filler * 2


def best(fn: Callable[[], object], *, number: int, repeat: int = 7) -> float:
    """Best per-call time in seconds over ``repeat`` runs of ``number`` calls (the least disturbed run)."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def cold_parse(source: str, *, repeat: int = 5) -> float:
    """Median seconds for an uncached parse of ``source``.

    The cache (and the previous parse's nodes) is cleared, and the collector run, before each
    parse, outside its time: the garbage the sections before leave in the heap (hundreds of
    thousands of objects) otherwise slows a node-dense parse by half again."""
    times = []
    for _ in range(repeat):
        _cached.cache_clear()
        gc.collect()
        times.append(timeit.timeit(lambda: parse_nodes(source), number=1))
    return statistics.median(times)


def megabyte(unit: str) -> str:
    return (unit * (2**20 // len(unit) + 1))[: 2**20]


def main() -> None:
    ours_text = two_kb_text(lambda key: f"<{key}>")
    format_text = two_kb_text(lambda key: f"{{{key}}}")
    template = Template(ours_text)
    assert template.render(STATE) == format_text.format_map(STATE), "the two renderings must be identical"

    ours = best(lambda: template.render(STATE), number=20_000)
    reference = best(lambda: format_text.format_map(STATE), number=20_000)
    print(f"template: {len(ours_text)} characters, {len(template.keys)} placeholders")
    print(
        f"warm render          {ours * 1e6:8.2f} us   "
        f"str.format_map {reference * 1e6:8.2f} us   ratio {ours / reference:5.2f}"
    )

    realistic_1mb = megabyte(ours_text)
    cases = {
        "2 KB template": ours_text,
        "256 KB realistic": realistic_1mb[: 2**18],
        "1 MB realistic": realistic_1mb,
        "1 MB of '<'": "<" * 2**20,
        "1 MB of '<<<<a'": megabyte("<<<<a"),
        "1 MB of '<a'": megabyte("<a"),
        "1 MB of '< '": megabyte("< "),
        "1 MB of '<a:b>'": megabyte("<a:b>"),
        "1 MB, no '<'": "x" * 2**20,
    }
    parse_nodes(ours_text)  # compile the scanner outside the timings
    times = {name: cold_parse(source) for name, source in cases.items()}
    print()
    for name, seconds in times.items():
        size = len(cases[name])
        print(f"cold parse {name:<20} {seconds * 1e3:8.2f} ms   {seconds / size * 1e9:7.1f} ns/char")
    growth = times["1 MB realistic"] / times["256 KB realistic"]
    print(f"\nlinearity: 1 MB / 256 KB realistic parse time = {growth:.2f} (4.00 is linear)")
    worst = max(v for k, v in times.items() if k.startswith("1 MB"))
    print(f"slowest 1 MB parse above: {worst * 1e3:.1f} ms (target < 100 ms)")

    # Node-dense input: every few characters a placeholder, an escape or an XML-style tag. Each
    # node costs a token and a node object, so these are linear in the number of nodes, not in
    # bytes, and a megabyte of them is above the 100 ms target: reported, not hidden (per node,
    # against their own targets, by bench_parse.py).
    dense = {
        "256 KB of '<a>'": megabyte("<a>")[: 2**18],
        "1 MB of '<a>'": megabyte("<a>"),
        "1 MB of '<b>x</b>'": megabyte("<b>x</b>\n"),
        "1 MB of '<<a>>'": megabyte("<<a>>"),
    }
    dense_times = {name: cold_parse(source, repeat=3) for name, source in dense.items()}
    print()
    for name, seconds in dense_times.items():
        count = len(parse_nodes(dense[name]))
        print(f"cold parse {name:<20} {seconds * 1e3:8.1f} ms   {count:7} nodes   {seconds / count * 1e6:5.2f} us/node")
    dense_growth = dense_times["1 MB of '<a>'"] / dense_times["256 KB of '<a>'"]
    print(f"linearity: 1 MB / 256 KB of '<a>' = {dense_growth:.2f} (4.00 is linear)")
    print(f"\nwarm render / format_map: {ours / reference:.2f} (target <= 1.00)")


if __name__ == "__main__":
    main()
