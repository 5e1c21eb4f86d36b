"""What Jinja2 mode's budgets and data checks cost on the real-path render.

Run: python bench/bench_jinja_budgets.py

The 2 KB instruction of bench_core.py (10 placeholders), a loop over 100 orders, and filter pipelines
over those orders (select, map, unique, reverse, batch, join), rendered three ways in this one process,
interleaved, best of the rounds: our provider with its default budget; our provider with
`JinjaBudget.unlimited()`; and a plain Jinja2 `ImmutableSandboxedEnvironment` (StrictUndefined, values
formatted as ours) without budgets, data checks or our state views. Target (issue 19): the budgets cost at
most 10% on the real-path render: the provider with its default budget / the same provider with
`JinjaBudget.unlimited()` <= 1.10, on each template. The ratio to the plain sandbox is printed for
information: it also counts the data-only printing, the state views and the wrappers that draw iterables
from state under the value budget, which are on whatever the budget.
"""

from __future__ import annotations

import timeit
from collections.abc import Callable

from bench_core import KEYS, STATE, two_kb_text
from jinja2 import StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from templating import JinjaBudget, format_value, jinja

ROUNDS = 9
TARGET = 1.10


def cases() -> dict[str, dict[str, Callable[[], object]]]:
    plain = ImmutableSandboxedEnvironment(undefined=StrictUndefined, finalize=format_value, keep_trailing_newline=True)
    flat_source = two_kb_text(lambda key: f"{{{{ {key} }}}}")
    loop_source = "Orders:\n{% for o in orders %}- {{ o.id }}: {{ o.status }} ({{ loop.index }})\n{% endfor %}"
    pipeline_source = (
        "Shipped: {{ orders|selectattr('status', 'equalto', 'shipped')|map(attribute='id')|unique|join(', ') }}\n"
        "Latest first: {{ orders|map(attribute='id')|reverse|batch(10)|map('join', ' ')|join('; ') }}"
    )
    statuses = ("shipped", "pending", "shipped", "cancelled")
    orders = {"orders": [{"id": f"A-{n}", "status": statuses[n % 4]} for n in range(100)], **STATE}
    result: dict[str, dict[str, Callable[[], object]]] = {}
    for name, source, state in (
        ("2 KB instruction", flat_source, STATE),
        ("loop of 100", loop_source, orders),
        ("filters over 100", pipeline_source, orders),
    ):
        budgeted = jinja(source)
        unlimited = jinja(source, budget=JinjaBudget.unlimited())
        reference = plain.from_string(source)
        assert budgeted(state) == unlimited(state) == reference.render(state), name
        result[name] = {
            "budgets": lambda p=budgeted, s=state: p(s),  # type: ignore[misc]
            "unlimited": lambda p=unlimited, s=state: p(s),  # type: ignore[misc]
            "plain sandbox": lambda t=reference, s=state: t.render(s),  # type: ignore[misc]
        }
    return result


def main() -> None:
    print(f"microseconds per render, best of {ROUNDS} interleaved rounds; {len(KEYS)} placeholders")
    verdicts = []
    for name, variants in cases().items():
        best = dict.fromkeys(variants, float("inf"))
        for _ in range(ROUNDS):
            for variant, render in variants.items():
                number = 2_000 if name.startswith("2 KB") else 200
                best[variant] = min(best[variant], timeit.timeit(render, number=number) / number)
        plain = best["budgets"] / best["plain sandbox"]
        cells = "  ".join(f"{variant} {seconds * 1e6:8.2f}" for variant, seconds in best.items())
        ratio = best["budgets"] / best["unlimited"]
        print(f"{name:>18}: {cells}  budgets/unlimited {ratio:.2f}  budgets/plain sandbox {plain:.2f}")
        met = "met" if ratio <= TARGET else "NOT met"
        verdicts.append(f"{name}: budgets / unlimited = {ratio:.2f} (target <= {TARGET}): {met}")
    print("\n".join(verdicts))


if __name__ == "__main__":
    main()
