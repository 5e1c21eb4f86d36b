"""Parsing benchmark: what users call, `templating.parse()` / `Template(...)`, cold, per node on
node-dense input, on adversarial megabytes, and on a 2 KB template; `parser.parse_nodes` (the nodes
alone, without the `Template` around them) printed beside it.

Run: python bench/bench_parse.py

Everything is timed in this one process, each figure the best of several uncached parses (the
run least disturbed by other work on the machine), and compared with a reference timed the
same way in the same run. Targets (issues 10 and 20), for an idle machine:

- node-dense input: the public parse at most 1.5 microseconds per node (a megabyte of `<a>`, some
  350,000 placeholders, in at most about 520 ms), `parse_nodes` at most 1 microsecond. Printed next
  to them, as the reference that shows how fast this machine is right now: building the same
  nodes with their constructors, without parsing;
- every adversarial megabyte at most 3 times a realistic megabyte of the same dialect. For a
  node-dense megabyte the bench also prints a floor: the scanning expression's `findall` alone
  plus allocating two empty objects per node, against the same realistic megabyte. No parse in
  pure Python that makes the nodes can be faster than that, and the floor is above 3;
- a 2 KB template (10 placeholders) through `Template(...)` in at most 50 microseconds.

A `Template` builds its render plan on its first render, not when parsed. The first render of a
node-dense template (1 MB of `<a>`, some 350,000 placeholders, whose plan is built with hundreds of
thousands of other objects alive) is printed per node, plan building included, at 100 KB and at 1 MB:
target (issue 35) at most 1.2 microseconds per node at 1 MB, and linear (1 MB per node / 100 KB per
node at most 1.25). `python bench/bench_parse.py first-render` runs that section alone.

The ADK dialect's adversarial megabyte `{a:b}` (a scoped-looking key the dialect must read as text)
is printed against a realistic ADK megabyte with its own target (issue 35): at most 2.5.
`python bench/bench_parse.py adk-colon` runs that section alone.

The 2 KB template is timed with the heap frozen (`gc.freeze()`) after one full collection, so
that the collection that settles the collector before each parse passes over no objects: a
full pass over the heap flushes the CPU caches, and a parse of a few dozen objects right after
it pays for that (10 to 20 microseconds even once the megabytes parsed before are released).
That figure is printed too, for comparison.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

import templating
from templating import Escaped, Literal, Node, Placeholder, Span, Template
from templating.nodes import Dialect
from templating.parser import _GRAMMARS, _cached, _scanner, parse_nodes
from templating.template import _parse

KEYS = ["name", "order_id", "status", "plan", "language", "company", "agent", "tier", "city", "step"]
PROSE = "The assistant answers politely, cites the policy and never invents an order number. "
MB = 2**20


def realistic(placeholder: Callable[[str], str], size: int) -> str:
    """Prose with a placeholder every ~200 characters (the 2 KB instruction of bench_core, repeated)."""
    unit = "".join(PROSE * 2 + placeholder(key) + ". " for key in KEYS) + PROSE * 2
    return (unit * (size // len(unit) + 1))[:size]


def megabyte(unit: str) -> str:
    return (unit * (MB // len(unit) + 1))[:MB]


def best(
    fn: Callable[[], object],
    *,
    repeat: int,
    before: Callable[[], object] = lambda: None,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Best seconds of ``repeat`` calls, ``before()`` run and the collector settled before each.

    What a call returns is freed after its time is taken, not within it: freeing the nodes of
    one parse is no part of the next one's cost.
    """
    times = []
    for _ in range(repeat):
        before()
        gc.collect()
        start = clock()
        result = fn()
        times.append(clock() - start)
        del result
    return min(times)


def best_on_a_frozen_heap(
    fn: Callable[[], object], *, repeat: int, before: Callable[[], object] = lambda: None
) -> float:
    """Best seconds of ``repeat`` calls, collected and frozen once: the collections before each see nothing."""
    gc.collect()
    gc.freeze()
    try:
        return best(fn, repeat=repeat, before=before)
    finally:
        gc.unfreeze()


def clear_caches() -> None:
    """Forget every parse: `templating.parse()`'s templates and `parse_nodes`' nodes."""
    _parse.cache_clear()
    _cached.cache_clear()


def cold_parse(source: str, dialect: Dialect, *, repeat: int = 5) -> float:
    """Best seconds of an uncached `templating.parse()` (the caches, and the previous parse, cleared before each)."""
    return best(lambda: templating.parse(source, dialect=dialect), repeat=repeat, before=clear_caches)


def cold_parse_nodes(source: str, dialect: Dialect, *, repeat: int = 5) -> float:
    """Best seconds of an uncached `parse_nodes` (the nodes alone, no Template)."""
    return best(lambda: parse_nodes(source, dialect), repeat=repeat, before=clear_caches)


def construct(nodes: tuple[Node, ...]) -> Callable[[], object]:
    """Building ``nodes`` again with their dataclass constructors: the same objects, no parsing."""
    fields = [(type(node), node.key if isinstance(node, Placeholder) else node.text, node) for node in nodes]

    def build() -> list[Node]:
        out: list[Node] = []
        for cls, value, node in fields:
            span = Span(node.span.start, node.span.end, node.span.line, node.span.column)
            if cls is Placeholder:
                out.append(Placeholder(value, node.optional, span))  # type: ignore[union-attr]
            elif cls is Escaped:
                out.append(Escaped(value, span))
            else:
                out.append(Literal(value, span))
        return out

    return build


class _Empty:
    __slots__ = ("a", "b")


def floor(source: str, dialect: Dialect, node_count: int) -> float:
    """A lower bound for any parse of ``source`` in pure Python, in seconds: the scanning
    expression's ``findall`` alone (a string per token, nothing else), plus allocating two empty
    slotted objects per node (a node and its span, no fields filled), each timed the same way."""
    tokens = _scanner(_GRAMMARS[dialect]).tokens

    def allocate() -> list[_Empty]:
        gc.disable()  # as the parser does for a large source
        try:
            objects: list[_Empty] = []
            append = objects.append
            for _ in range(node_count):
                append(_Empty())
                append(_Empty())
            return objects
        finally:
            gc.enable()

    return best(lambda: tokens.findall(source), repeat=3) + best(allocate, repeat=3)


FIRST_RENDER_TARGET = 1.2  # microseconds per node at 1 MB, plan building included
LINEAR_TARGET = 1.25  # per node at 1 MB / per node at 100 KB


def first_render(size: int, *, repeat: int = 5) -> tuple[float, float, int]:
    """Seconds of the first render of ``size`` characters of node-dense ``<a>`` (the plan built, then the
    render), of a warm render, and the node count. The parse is done before each first render and not
    timed; its nodes, and the template's, stay alive through it, as they do in a program."""
    source = megabyte("<a>")[:size] if size <= MB else ("<a>" * (size // 3 + 1))[:size]
    state = {"a": 1}
    templates: list[Template] = []

    def fresh() -> None:
        templates.clear()
        clear_caches()
        templates.append(Template(source))

    # CPU time (this process's): on a machine shared with other work, wall time mostly measures the others.
    first = best(lambda: templates[0].render(state), repeat=repeat, before=fresh, clock=time.process_time)
    warm = best(lambda: templates[0].render(state), repeat=repeat, clock=time.process_time)
    return first, warm, len(templates[0].nodes)


def first_render_section() -> bool:
    """The first render per node at 100 KB and 1 MB, and their ratio; whether both targets are met."""
    small, small_warm, small_nodes = first_render(100_000)
    large, large_warm, large_nodes = first_render(MB)
    per_small, per_large = small / small_nodes * 1e6, large / large_nodes * 1e6
    warm_small, warm_large = small_warm / small_nodes * 1e6, large_warm / large_nodes * 1e6
    ratio = per_large / per_small
    met = per_large <= FIRST_RENDER_TARGET and ratio <= LINEAR_TARGET
    print("first render of node-dense '<a>' (plan building included; the parse before it, not timed; CPU time)")
    print(f"  100 KB ({small_nodes:,} nodes): {per_small:5.2f} us/node (a warm render {warm_small:5.2f})")
    print(
        f"  1 MB ({large_nodes:,} nodes):  {per_large:5.2f} us/node (a warm render {warm_large:5.2f})"
        f"   target <= {FIRST_RENDER_TARGET}: {'pass' if per_large <= FIRST_RENDER_TARGET else 'FAIL'}"
    )
    print(
        f"  linear: per node at 1 MB / at 100 KB = {ratio:4.2f}   target <= {LINEAR_TARGET}: "
        f"{'pass' if ratio <= LINEAR_TARGET else 'FAIL'}"
    )
    return met


ADK_COLON_TARGET = 2.5  # the ADK dialect's megabyte of '{a:b}' / a realistic ADK megabyte, at most


def adk_colon_section(rounds: int = 7) -> bool:
    """The ADK dialect's adversarial megabyte `{a:b}` (a key with a scope that is none: text) against a
    realistic ADK megabyte: cold `templating.parse()`, CPU time, the best of `rounds` interleaved rounds."""
    realistic_mb = realistic(lambda key: f"{{{key}}}", MB)
    colon_mb = megabyte("{a:b}")
    times = {"realistic": float("inf"), "colon": float("inf")}
    for _ in range(rounds):
        for name, source in (("realistic", realistic_mb), ("colon", colon_mb)):
            seconds = best(
                lambda source=source: templating.parse(source, dialect="adk"),  # type: ignore[misc]
                repeat=1,
                before=clear_caches,
                clock=time.process_time,
            )
            times[name] = min(times[name], seconds)
    ratio = times["colon"] / times["realistic"]
    print(
        f"adk: 1 MB of '{{a:b}}' {times['colon'] * 1e3:6.1f} ms against a realistic ADK megabyte "
        f"{times['realistic'] * 1e3:6.1f} ms (CPU): ratio {ratio:4.2f}   target <= {ADK_COLON_TARGET}: "
        f"{'pass' if ratio <= ADK_COLON_TARGET else 'FAIL'}"
    )
    return ratio <= ADK_COLON_TARGET


def main() -> None:
    parse_nodes("<warm> up")  # the scanner is compiled once per process, outside the timings
    parse_nodes("{warm} up", "adk")

    print(
        "node-dense input: cold templating.parse() per node (target <= 1.50 us/node),"
        " parse_nodes alone (target <= 1.00 us/node)"
    )
    dense = {
        "1 MB of '<a>'": megabyte("<a>"),
        "1 MB of '<<a>>'": megabyte("<<a>>"),
        "1 MB of '<a?>'": megabyte("<a?>"),
        "1 MB of '<b>x</b>\\n'": megabyte("<b>x</b>\n"),
    }
    dense_ok = nodes_ok = True
    for name, source in dense.items():
        nodes = parse_nodes(source)
        seconds = cold_parse(source, "angle", repeat=5)
        alone = cold_parse_nodes(source, "angle", repeat=3)
        reference = best(construct(nodes), repeat=3)
        per_node, alone_per_node = seconds / len(nodes) * 1e6, alone / len(nodes) * 1e6
        dense_ok = dense_ok and per_node <= 1.5
        nodes_ok = nodes_ok and alone_per_node <= 1.0
        print(
            f"  {name:<22} {seconds * 1e3:7.1f} ms  {len(nodes):7} nodes  {per_node:5.2f} us/node"
            f" {'pass' if per_node <= 1.5 else 'FAIL'}   parse_nodes {alone_per_node:5.2f} us/node"
            f" {'pass' if alone_per_node <= 1.0 else 'FAIL'}"
            f"   (building them with constructors: {reference / len(nodes) * 1e6:5.2f} us/node,"
            f" parse / build = {seconds / reference:4.2f})"
        )
    print()
    first_render_section()

    adversarial: dict[Dialect, dict[str, str]] = {
        "angle": {
            "1 MB of '<a>'": dense["1 MB of '<a>'"],
            "1 MB of '<<a>>'": dense["1 MB of '<<a>>'"],
            "1 MB of '<a?>'": dense["1 MB of '<a?>'"],
            "1 MB of '<b>x</b>\\n'": dense["1 MB of '<b>x</b>\\n'"],
            "1 MB of '<'": "<" * MB,
            "1 MB of '<<<<a'": megabyte("<<<<a"),
            "1 MB of '<a'": megabyte("<a"),
            "1 MB of '< '": megabyte("< "),
            "1 MB of '<a:b>'": megabyte("<a:b>"),
            "1 MB of '<a.'": "<" + megabyte("a.")[1:],
            "1 MB of '{a}' (text)": megabyte("{a}"),
            "1 MB of '{'": "{" * MB,
        },
        "adk": {
            "1 MB of '{a}'": megabyte("{a}"),
            "1 MB of '{a?}'": megabyte("{a?}"),
            "1 MB of '{'": "{" * MB,
            "1 MB of '{{{{a'": megabyte("{{{{a"),
            "1 MB of '{a'": megabyte("{a"),
            "1 MB of '{ '": megabyte("{ "),
            "1 MB of '{a:b}'": megabyte("{a:b}"),
            "1 MB of '${a}'": megabyte("${a}"),
            "1 MB of '{{ {a} }}'": megabyte("{{ {a} }}"),
            "1 MB of '{{a'": megabyte("{{a"),
            "1 MB of '<a>' (text)": dense["1 MB of '<a>'"],
        },
    }
    placeholder = {"angle": lambda key: f"<{key}>", "adk": lambda key: f"{{{key}}}"}
    worst_ratio = 0.0
    worst_bytes_ratio = 0.0
    lowest_dense_floor = float("inf")
    for dialect, cases in adversarial.items():
        reference = cold_parse(realistic(placeholder[dialect], MB), dialect)
        print(f"\n{dialect}: adversarial megabytes against a realistic one ({reference * 1e3:.1f} ms; target <= 3.00)")
        for name, source in cases.items():
            seconds = cold_parse(source, dialect, repeat=3)
            ratio = seconds / reference
            node_count = len(parse_nodes(source, dialect))
            dense_input = node_count > MB // 20  # far more nodes than a realistic megabyte's ~5,000
            worst_ratio = max(worst_ratio, ratio)
            if not dense_input:
                worst_bytes_ratio = max(worst_bytes_ratio, ratio)
            verdict = "pass" if ratio <= 3.0 else "FAIL"
            line = f"  {name:<24} {seconds * 1e3:8.1f} ms  {node_count:7} nodes  ratio {ratio:6.2f}  {verdict}"
            if dense_input:
                floor_ratio = floor(source, dialect, node_count) / reference
                lowest_dense_floor = min(lowest_dense_floor, floor_ratio)
                line += f"   (floor {floor_ratio:5.2f})"
            print(line)

    del nodes, dense, adversarial  # release what the megabytes left, before the small template
    clear_caches()
    two_kb = realistic(placeholder["angle"], 2048)

    small = best_on_a_frozen_heap(lambda: Template(two_kb), repeat=200, before=clear_caches)
    small_nodes = best_on_a_frozen_heap(lambda: parse_nodes(two_kb), repeat=200, before=clear_caches)
    after_full_collection = cold_parse(two_kb, "angle", repeat=200)
    render_text = two_kb.replace("<", "{").replace(">", "}")
    values = {key: key for key in KEYS}
    format_map = best_on_a_frozen_heap(lambda: render_text.format_map(values), repeat=200)
    print(
        f"\n2 KB template ({len(parse_nodes(two_kb))} nodes): cold Template(...) {small * 1e6:6.1f} us"
        f" (target <= 50 us: {'pass' if small <= 50e-6 else 'FAIL'}), parse_nodes {small_nodes * 1e6:6.1f} us;"
        f" str.format_map on the same text {format_map * 1e6:5.1f} us, ratio {small / format_map:5.1f};"
        f" with a full collection of this process's heap before each parse {after_full_collection * 1e6:6.1f} us"
    )
    print()
    adk_colon_section()
    print(f"\nnode-dense templating.parse() per node <= 1.5 us: {'pass' if dense_ok else 'FAIL'}")
    print(f"node-dense parse_nodes per node <= 1 us: {'pass' if nodes_ok else 'FAIL'}")
    print(f"worst adversarial / realistic megabyte: {worst_ratio:.2f} (node-dense included)")
    print(f"worst adversarial / realistic megabyte, inputs without dense nodes: {worst_bytes_ratio:.2f}")
    print(
        f"lowest floor of a node-dense megabyte / realistic megabyte: {lowest_dense_floor:.2f}"
        " (the scan alone plus two empty objects per node; above 3, no pure-Python parse can meet 3 on it)"
    )
    collector_effect()


def collector_effect() -> None:
    """The collector paused while a large source is parsed (parser._PAUSE_COLLECTOR_FROM), against the
    same parse with it running, on a megabyte of dense `<a>` with a heap of other objects alive."""
    import templating.parser as parser

    source = "<a>" * (1_000_000 // 3)
    heap = [{"n": number} for number in range(200_000)]  # what a long-lived process holds
    times: dict[bool, list[float]] = {True: [], False: []}
    threshold = parser._PAUSE_COLLECTOR_FROM
    try:
        for _ in range(5):
            for paused in (True, False):
                parser._PAUSE_COLLECTOR_FROM = threshold if paused else len(source) + 1
                clear_caches()
                start = time.process_time()
                parse_nodes(source)
                times[paused].append(time.process_time() - start)
    finally:
        parser._PAUSE_COLLECTOR_FROM = threshold
    del heap
    on, off = min(times[True]), min(times[False])
    print(
        f"1 MB of dense <a>: collector paused {on * 1e3:7.1f} ms, running {off * 1e3:7.1f} ms, "
        f"ratio {on / off:4.2f} (the collections a parse no longer pays)"
    )


if __name__ == "__main__":
    import sys

    sections = {"first-render": first_render_section, "adk-colon": adk_colon_section}
    chosen = sys.argv[1:]
    unknown = [name for name in chosen if name not in sections]
    if unknown:
        raise SystemExit(f"unknown section {unknown[0]!r}: choose from {', '.join(sections)}, or none for all")
    if chosen:
        parse_nodes("<warm> up")
        for name in chosen:
            sections[name]()
    else:
        main()
