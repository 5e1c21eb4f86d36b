"""ADK dialect benchmark: cold parse time as templates grow, adversarial "{" input included, and warm render.

Run: python bench/bench_adk.py

As in bench_core.py, everything is timed in this one process and reported against a reference
measured the same way: the angle syntax's parse of the same text with "<key>" for "{key}", and
str.format_map for rendering. Targets: parse time linear in size, 1 MB (realistic or
adversarial) under 100 ms; a warm render no slower than str.format_map.
"""

from __future__ import annotations

import statistics
import timeit

from bench_core import KEYS, STATE, best, cold_parse, megabyte, two_kb_text

from templating import Template
from templating.parser import _cached, parse_nodes


def main() -> None:
    adk_text = two_kb_text(lambda key: f"{{{key}}}")
    angle_text = two_kb_text(lambda key: f"<{key}>")
    template = Template(adk_text, dialect="adk")
    assert template.keys == tuple(KEYS)
    assert template.render(STATE) == adk_text.format_map(STATE), "the two renderings must be identical"

    ours = best(lambda: template.render(STATE), number=20_000)
    reference = best(lambda: adk_text.format_map(STATE), number=20_000)
    print(f"ADK template: {len(adk_text)} characters, {len(template.keys)} placeholders")
    print(
        f"warm render          {ours * 1e6:8.2f} us   "
        f"str.format_map {reference * 1e6:8.2f} us   ratio {ours / reference:5.2f}"
    )

    realistic = megabyte(adk_text)
    cases = {
        "2 KB template": adk_text,
        "256 KB realistic": realistic[: 2**18],
        "1 MB realistic": realistic,
        "1 MB of '{'": "{" * 2**20,
        "1 MB of '{{{{a'": megabyte("{{{{a"),
        "1 MB of '{a'": megabyte("{a"),
        "1 MB of '{ '": megabyte("{ "),
        "1 MB of '{a:b}'": megabyte("{a:b}"),
        "1 MB of '{a ?}'": megabyte("{a ?}"),
        "1 MB of '${a}'": megabyte("${a}"),
        "1 MB of '{{a}}'": megabyte("{{a}}"),
        "1 MB of '{{a'": megabyte("{{a"),
        "1 MB of '${{a'": megabyte("${{a"),
        "1 MB of '{{ {a} }}'": megabyte("{{ {a} }}"),
        "'{{' + 1 MB of 'a'": "{{" + "a" * 2**20,
        "'{' + 1 MB of ' '": "{" + " " * 2**20,
        "1 MB, no '{'": "x" * 2**20,
    }
    parse_nodes(adk_text, "adk")  # compile the scanners outside the timings
    parse_nodes(angle_text)
    times = {name: cold_parse_adk(source) for name, source in cases.items()}
    print()
    for name, seconds in times.items():
        size = len(cases[name])
        print(f"cold parse {name:<20} {seconds * 1e3:8.2f} ms   {seconds / size * 1e9:7.1f} ns/char")
    angle_1mb = cold_parse(megabyte(angle_text))
    ratio = times["1 MB realistic"] / angle_1mb
    print(f"\nsame 1 MB, angle syntax: {angle_1mb * 1e3:.2f} ms; ADK / angle = {ratio:.2f}")
    growth = times["1 MB realistic"] / times["256 KB realistic"]
    print(f"linearity: 1 MB / 256 KB realistic parse time = {growth:.2f} (4.00 is linear)")
    worst = max(v for k, v in times.items() if "1 MB" in k)
    print(f"slowest 1 MB parse: {worst * 1e3:.1f} ms (target < 100 ms)")
    print(f"warm render / format_map: {ours / reference:.2f} (target <= 1.00)")


def cold_parse_adk(source: str, *, repeat: int = 5) -> float:
    """Median seconds for an uncached parse of ``source`` in the ADK dialect."""
    times = []
    for _ in range(repeat):
        _cached.cache_clear()
        times.append(timeit.timeit(lambda: parse_nodes(source, "adk"), number=1))
    return statistics.median(times)


if __name__ == "__main__":
    main()
