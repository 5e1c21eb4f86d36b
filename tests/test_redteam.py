"""The red-team table: hostile inputs, each ending in a clear `TemplatingError` within its bounds.

Each row says which error it must end in, and the time and memory it may take before it does:
bounds far below what the input asks for (gigabytes, minutes), proving the attack is stopped,
not measuring speed. Sections: Jinja2 templates (below); other sections (state values, snapshot
ids) sit in their own blocks.
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from typing import Any

import pytest

from templating import (
    CyclicValueError,
    JinjaBudgetError,
    JinjaCyclicValueError,
    JinjaSecurityError,
    JinjaUnprintableError,
    Template,
    TemplatingError,
    jinja,
)


def measured(action: Any) -> tuple[BaseException | None, float, int]:
    """Run `action`; what it raised, the seconds it took and the peak bytes it allocated."""
    gc.collect()
    tracemalloc.start()
    started = time.perf_counter()
    raised: BaseException | None = None
    try:
        action()
    except BaseException as error:
        raised = error
    elapsed = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return raised, elapsed, peak


# --- Jinja2 templates -------------------------------------------------------------------------------------


def _cyclic_list() -> list[Any]:
    value: list[Any] = []
    value.append(value)
    return value


def _cyclic_dict() -> dict[str, Any]:
    value: dict[str, Any] = {}
    value["self"] = {"again": value}
    return value


class _Object:
    pass


MB = 1 << 20
# (id, template, state, the error it must raise, at most seconds, at most bytes allocated)
JINJA_ROWS: list[tuple[str, str, dict[str, Any], type[TemplatingError], float, int]] = [
    (
        "nested-range-loops",
        "{% for i in range(100000) %}{% for j in range(100000) %}{{ i }}{% endfor %}{% endfor %}",
        {},
        JinjaBudgetError,
        5.0,
        200 * MB,
    ),
    ("list-of-big-strings", "{% set s = 'a' * 100000 %}{{ [s] * 100000 }}", {}, JinjaBudgetError, 2.0, 200 * MB),
    (
        "wordwrap-amplifies",
        "{{ ('a ' * 1000) | wordwrap(1, wrapstring='x' * 99999) }}",
        {},
        JinjaBudgetError,
        2,
        200 * MB,
    ),
    ("wordwrap-quadratic", "{{ 'x'|center(99999)|wordwrap(1) }}", {}, JinjaBudgetError, 2.0, 200 * MB),
    ("str-repeat", "{{ 'a' * 10**9 }}", {}, JinjaBudgetError, 2.0, 200 * MB),
    ("power", "{{ 2 ** 10000000 }}", {}, JinjaSecurityError, 2.0, 200 * MB),
    ("join-of-repeats", "{% set s = 'a' * 100000 %}{{ ([s] * 100000)|join }}", {}, JinjaBudgetError, 2.0, 200 * MB),
    (
        "map-builds-copies",
        "{% set s = 'a' * 99999 %}{{ ([s] * 99999)|map('upper')|list }}",
        {},
        JinjaBudgetError,
        2,
        200 * MB,
    ),
    (
        "sum-concatenates",
        "{% set s = 'a' * 9 %}{{ ([[s]] * 100000)|sum(start=[]) }}",
        {},
        JinjaBudgetError,
        2.0,
        200 * MB,
    ),
    ("tojson-of-repeats", "{% set s = 'a' * 100000 %}{{ ([s] * 100000)|tojson }}", {}, JinjaBudgetError, 2.0, 200 * MB),
    ("string-of-repeats", "{% set s = 'a' * 100000 %}{{ ([s] * 100000)|string }}", {}, JinjaBudgetError, 2.0, 200 * MB),
    ("pprint-of-repeats", "{% set s = 'a' * 100000 %}{{ ([s] * 100000)|pprint }}", {}, JinjaBudgetError, 2.0, 200 * MB),
    (
        "tilde-in-a-loop",
        "{% set ns = namespace(s='ab') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
        {},
        JinjaBudgetError,
        2.0,
        200 * MB,
    ),
    (
        "plus-in-a-loop",
        "{% set ns = namespace(l=[0]) %}{% for i in range(60) %}{% set ns.l = ns.l + ns.l %}{% endfor %}",
        {},
        JinjaBudgetError,
        2.0,
        200 * MB,
    ),
    ("format-width", "{{ '%1000000000s'|format('') }}", {}, JinjaBudgetError, 2.0, 200 * MB),
    ("str-format-width", "{{ '{:>1000000000}'.format('') }}", {}, JinjaBudgetError, 2.0, 200 * MB),
    ("center-width", "{{ ''|center(1000000000) }}", {}, JinjaBudgetError, 2.0, 200 * MB),
    ("indent-width", "{{ 'a\nb'|indent(1000000000) }}", {}, JinjaBudgetError, 2.0, 200 * MB),
    ("replace-amplifies", "{{ ('a' * 100000)|replace('a', 'b' * 100000) }}", {}, JinjaBudgetError, 2.0, 200 * MB),
    (
        "output-in-a-loop",
        "{% for i in range(100000) %}{{ 'x' * 100000 }}{% endfor %}",
        {},
        JinjaBudgetError,
        2,
        200 * MB,
    ),
    (
        "output-in-a-macro-buffer",
        "{% macro m() %}{% for i in range(100000) %}{{ 'x' * 99999 }}{% endfor %}{% endmacro %}{{ m()|length }}",
        {},
        JinjaBudgetError,
        2.0,
        200 * MB,
    ),
    (
        "slow-steps",
        "{% for i in range(100000) %}{{ (range(100000)|list|sort|length) }}{% endfor %}",
        {},
        JinjaBudgetError,
        5.0,
        200 * MB,
    ),
    (
        "recursive-loop",
        "{% for x in range(1000) recursive %}{{ loop(range(1000)) }}{% endfor %}",
        {},
        JinjaBudgetError,
        2,
        200 * MB,
    ),
    (
        "macro-fan-out",
        "{% macro m(n) %}{{ m(n + 1) }}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}",
        {},
        JinjaBudgetError,
        2,
        200 * MB,
    ),
    ("print-cyclic-list", "{{ l }}", {"l": _cyclic_list()}, JinjaCyclicValueError, 2.0, 200 * MB),
    ("print-cyclic-dict", "{{ d }}", {"d": _cyclic_dict()}, JinjaCyclicValueError, 2.0, 200 * MB),
    ("join-cyclic", "{{ [l]|join }}", {"l": _cyclic_list()}, JinjaCyclicValueError, 2.0, 200 * MB),
    ("tojson-cyclic", "{{ d|tojson }}", {"d": _cyclic_dict()}, JinjaCyclicValueError, 2.0, 200 * MB),
    ("address-of-a-global", "{{ range|string }}", {}, JinjaUnprintableError, 2.0, 200 * MB),
    ("address-of-an-object", "{{ '%s' % o }}", {"o": _Object()}, JinjaUnprintableError, 2.0, 200 * MB),
    (
        "address-of-a-method",
        "{% for i in [1] %}{{ [loop.cycle]|join }}{% endfor %}",
        {},
        JinjaUnprintableError,
        2,
        200 * MB,
    ),
    ("sandbox-escape", "{{ ''.__class__.__mro__[1].__subclasses__() }}", {}, JinjaSecurityError, 2.0, 200 * MB),
]


@pytest.mark.parametrize(
    ("source", "state", "expected", "seconds", "memory"),
    [row[1:] for row in JINJA_ROWS],
    ids=[row[0] for row in JINJA_ROWS],
)
def test_jinja_row(
    source: str, state: dict[str, Any], expected: type[TemplatingError], seconds: float, memory: int
) -> None:
    provider = jinja(source)
    raised, elapsed, peak = measured(lambda: provider(state))
    assert type(raised) is expected, f"raised {raised!r}"
    assert elapsed < seconds, f"stopped after {elapsed:.2f} s"
    assert peak < memory, f"allocated {peak / MB:.0f} MB"
    assert "0x" not in str(raised)


CYCLIC_TEMPLATE_ROWS = [
    ("angle", "Hi <l>", "angle"),
    ("adk", "Hi {l}", "adk"),
]


@pytest.mark.parametrize(
    ("source", "dialect"), [r[1:] for r in CYCLIC_TEMPLATE_ROWS], ids=[r[0] for r in CYCLIC_TEMPLATE_ROWS]
)
def test_cyclic_values_in_the_other_syntaxes(source: str, dialect: Any) -> None:
    template = Template(source, dialect=dialect)
    raised, elapsed, peak = measured(lambda: template.render({"l": _cyclic_list()}))
    assert type(raised) is CyclicValueError
    assert elapsed < 2.0
    assert peak < 200 * MB


# --- end of the Jinja2 templates section ------------------------------------------------------------------
