"""Memory benchmark: peak memory of parsing a node-dense megabyte, and of a 10,000-template lint run.

Run: python bench/bench_memory.py [TEMPLATES]

Peaks are measured with tracemalloc (Python allocations only), each from a clean start, and
compared with a reference from the same run:

- parsing 1 MB of `<a>` (some 350,000 placeholders): the peak against what the nodes keep
  (the tuple, nodes and spans left once the parse is done) and against Lark's full LALR parse
  of the same input (the tokens and tree it builds, plus the same nodes);
- `templating lint DIR` over TEMPLATES files (default 10,000) run in this process: the peak
  against the size of the sources it reads (which it keeps, to print excerpts), and against a
  run over a tenth as many files (flat per file: nothing kept per template beyond its source
  and findings).

Nodes are slotted dataclasses: no node or span has a per-instance dictionary (checked below).
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import tempfile
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from templating.cli import main as cli_main
from templating.parser import _cached, lalr_nodes, parse_nodes

MB = 2**20


def peak(fn: Callable[[], object]) -> tuple[int, int, object]:
    """(peak bytes while ``fn`` ran, bytes still held by its result, the result)."""
    gc.collect()
    tracemalloc.start()
    try:
        result = fn()
        held, top = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return top, held, result


def template(index: int) -> str:
    """A realistic instruction, different for every index: Markdown, XML-tagged sections, JSON, <br>."""
    return (
        f"# Support agent {index}\n\n"
        "<instructions>\n"
        f"You help <user:name> with order <order_id> (status: <status?>).<br>\n"
        f"Answer in <user:language?>; escalate to <app:team_{index % 50}> when unsure.\n"
        "Never invent an order number. Quote the policy, <<policy>>, word for word.\n"
        "</instructions>\n\n"
        "## Output\n"
        '```json\n{"order": "<order_id>", "reply": "...", "items": [<items.0>]}\n```\n'
        f"Context: <temp:step_{index % 7}> of <plan>. Near misses: < name >, <nmae>.\n"
    )


def lint_run(folder: Path) -> int:
    with (
        open(os.devnull, "w", encoding="utf-8") as sink,
        contextlib.redirect_stdout(sink),
        contextlib.redirect_stderr(sink),
    ):
        return cli_main(["lint", str(folder)])


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    dense = ("<a>" * (MB // 3 + 1))[:MB]
    parse_nodes("<warm>")  # compile the scanner outside the measurement

    def fast() -> object:
        _cached.cache_clear()
        return parse_nodes(dense)

    top, held, nodes = peak(fast)
    assert isinstance(nodes, tuple)
    assert not any(hasattr(node, "__dict__") or hasattr(node.span, "__dict__") for node in nodes)
    _cached.cache_clear()
    del nodes
    lalr_nodes("<warm>")  # build the Lark parser outside the measurement
    lark_top, _, _ = peak(lambda: lalr_nodes(dense))
    print(f"parse 1 MB of '<a>' ({len(parse_nodes(dense))} nodes, slotted: no __dict__ on any node or span)")
    print(f"  peak {top / MB:7.1f} MB   kept by the nodes {held / MB:6.1f} MB   peak / kept {top / held:4.2f}")
    print(
        f"  per node: peak {top / len(parse_nodes(dense)):5.0f} bytes, kept {held / len(parse_nodes(dense)):5.0f} bytes"
    )
    print(
        f"  Lark's full LALR parse of the same input: peak {lark_top / MB:7.1f} MB   fast / LALR {top / lark_top:4.2f}"
    )
    _cached.cache_clear()

    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        for n in (count // 10, count):
            folder = Path(tmp) / f"run{n}"
            folder.mkdir()
            size = 0
            for index in range(n):
                text = template(index)
                size += len(text.encode("utf-8"))
                (folder / f"agent_{index:05}.prompt").write_text(text, encoding="utf-8")
            old = Path.cwd()
            os.chdir(folder)  # no pyproject.toml above: the default configuration, as for a user's folder
            try:
                run_top, _, code = peak(lambda folder=folder: lint_run(folder))  # type: ignore[misc]
            finally:
                os.chdir(old)
            assert code in (0, 1), f"lint exited {code}"  # 1: findings, as expected
            runs[n] = (run_top, size)
            print(
                f"templating lint over {n:6} templates ({size / MB:5.1f} MB of sources): "
                f"peak {run_top / MB:7.1f} MB   peak / sources {run_top / size:5.1f}"
            )
        (small_top, small_size), (big_top, big_size) = runs[count // 10], runs[count]
        print(
            f"  {count} against {count // 10} templates: peak x{big_top / small_top:4.1f} "
            f"for x{big_size / small_size:4.1f} the sources (linear: the same factor)"
        )


if __name__ == "__main__":
    main()
