"""The red-team table: hostile inputs, each ending in a clear `TemplatingError` within its bounds.

Each row says which error it must end in, and the time (and, for Jinja2, memory) it may take before it
does: ceilings far below what the input asks for (gigabytes, minutes) and far above what a row takes, so
they catch a hang or a runaway, never a slowdown (bench/ measures speed). Sections: Jinja2 templates,
state values on every session service, snapshot ids, the Python API.
"""

from __future__ import annotations

import asyncio
import gc
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

from templating import (
    CyclicValueError,
    Event,
    EventActions,
    InvalidStateError,
    JinjaBudget,
    JinjaBudgetError,
    JinjaCyclicValueError,
    JinjaSecurityError,
    JinjaUnprintableError,
    SchemaError,
    SessionService,
    State,
    Template,
    TemplatingError,
    UnprintableValueError,
    convert_adk,
    escape,
    instruction,
    jinja,
    lint,
    render,
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


# Fresh values, each under max_value, kept in a namespace: 100,000 steps of 100 KB ask for 10 GB. With the
# time budget off, only max_total stops them. (id, template, at most seconds, at most bytes allocated)
TOTAL_ROWS = [
    (
        "namespace-of-fresh-strings",
        "{% set ns = namespace(l=[]) %}{% for i in range(100000) %}"
        "{% set ns.l = ns.l + [('a' * 99990) ~ i] %}{% endfor %}{{ ns.l|length }}",
        2.0,
        100 * MB,
    ),
    (
        "namespace-of-fresh-lists",
        "{% set ns = namespace(l=[]) %}{% for i in range(100000) %}"
        "{% set ns.l = ns.l + [[i] * 99999] %}{% endfor %}{{ ns.l|length }}",
        5.0,
        400 * MB,
    ),
]


@pytest.mark.parametrize(("source", "seconds", "memory"), [r[1:] for r in TOTAL_ROWS], ids=[r[0] for r in TOTAL_ROWS])
def test_jinja_total_budget_row(source: str, seconds: float, memory: int) -> None:
    provider = jinja(source, budget=JinjaBudget(max_time=None))
    raised, elapsed, peak = measured(lambda: provider({}))
    assert type(raised) is JinjaBudgetError, f"raised {raised!r}"
    assert raised.budget == "max_total"
    assert elapsed < seconds, f"stopped after {elapsed:.2f} s"
    assert peak < memory, f"allocated {peak / MB:.0f} MB"


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


# === state values: hostile state on every session service (issue 19, items 3 and 4) ================


def _nested(depth: int, *, kind: str = "list") -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


def _cyclic_list() -> Any:
    value: list[Any] = []
    value.append(value)
    return value


def _cyclic_dict() -> Any:
    value: dict[str, Any] = {}
    value["self"] = [value]
    return value


# id, a maker of the hostile value, the exception it must end in, words of its message, seconds it may take
STATE_ROWS: list[tuple[str, Callable[[], Any], type[TemplatingError], str, float]] = [
    ("nested-500", lambda: _nested(500), InvalidStateError, "nests lists and dicts more than 100 deep", 5.0),
    ("nested-100000", lambda: _nested(100_000), InvalidStateError, "more than 100 deep", 5.0),
    ("dicts-nested-100000", lambda: _nested(100_000, kind="dict"), InvalidStateError, "more than 100 deep", 5.0),
    ("list-containing-itself", _cyclic_list, InvalidStateError, "contains itself", 5.0),
    ("dict-containing-itself", _cyclic_dict, InvalidStateError, "contains itself", 5.0),
    ("lone-surrogate", lambda: "\ud800", InvalidStateError, "lone surrogate", 5.0),
    ("lone-surrogate-key", lambda: {"a": {"\udc00": 1}}, InvalidStateError, "has a key that holds the lone", 5.0),
    ("int-10-to-5000", lambda: 10**5000, InvalidStateError, "int of about 5001 digits", 5.0),
    ("int-2-to-64", lambda: 2**64, InvalidStateError, "outside the 64-bit range", 5.0),
    ("nan", lambda: float("nan"), InvalidStateError, "which JSON cannot hold", 5.0),
    ("wide-then-deep", lambda: [list(range(10_000)), _nested(1_000)], InvalidStateError, "more than 100 deep", 5.0),
    ("object", lambda: object(), InvalidStateError, "is of type object", 5.0),
]
_STATE_IDS = [row[0] for row in STATE_ROWS]


@pytest.mark.parametrize(("make", "error", "words", "seconds"), [r[1:] for r in STATE_ROWS], ids=_STATE_IDS)
@pytest.mark.parametrize("how", ["create", "append"])
def test_hostile_state_on_every_service(
    make: Callable[[], Any],
    error: type[TemplatingError],
    words: str,
    seconds: float,
    how: str,
    service: SessionService,
) -> None:
    value = make()
    session = asyncio.run(service.create_session(app_name="red", user_id="u", session_id="s", state={"keep": 1}))
    bad = Event(author="a", actions=EventActions())
    bad.actions.state_delta["v"] = value  # as a model_construct()ed event would carry it

    def call() -> Any:
        if how == "create":
            return service.create_session(app_name="red", user_id="u", session_id="t", state={"v": value})
        return service.append_event(session, bad)

    started = time.perf_counter()
    with pytest.raises(error) as info:
        asyncio.run(call())
    assert time.perf_counter() - started < seconds
    assert words in str(info.value)
    stored = asyncio.run(service.get_session(app_name="red", user_id="u", session_id="s"))
    assert stored is not None
    assert (stored.state, stored.events) == ({"keep": 1}, [])
    assert asyncio.run(service.get_session(app_name="red", user_id="u", session_id="t")) is None


@pytest.mark.parametrize(("make", "error", "words", "seconds"), [r[1:] for r in STATE_ROWS], ids=_STATE_IDS)
def test_hostile_state_through_state(
    make: Callable[[], Any], error: type[TemplatingError], words: str, seconds: float
) -> None:
    value = make()
    state = State({"keep": 1})
    started = time.perf_counter()
    with pytest.raises(error) as info:
        state["v"] = value
    with pytest.raises(error):
        State({"v": value})
    assert time.perf_counter() - started < seconds
    assert words in str(info.value)
    assert state.to_dict() == {"keep": 1}


# === snapshot ids: hostile parametrized ids (issue 19, item 5) =======================================

# id, the test ids given to one parametrized test, how many of them would share a file, seconds it may take
SNAPSHOT_ROWS: list[tuple[str, list[str], int, float]] = [
    ("slash", ["a/b", "ab"], 2, 30.0),
    ("slash-plain-angle", ["a/b", "ab", "a<b"], 3, 30.0),
    ("colon-pipe-quote", ["a:b", "a|b", 'a"b', "a-b"], 3, 30.0),
    ("star-question-backslash", ["a*b", "a?b", "a\\b"], 3, 30.0),
    ("escaped-control", ["a\x1bb", "ax1bb"], 2, 30.0),  # pytest writes \x1b into the id, the file name drops "\"
    ("cut-at-251", ["x" * 300 + "1", "x" * 300 + "2", "short"], 2, 30.0),
    ("distinct", ["a-b", "a_b", "a.b", "a b"], 0, 30.0),
]


@pytest.mark.parametrize(
    ("ids", "colliding", "seconds"), [r[1:] for r in SNAPSHOT_ROWS], ids=[r[0] for r in SNAPSHOT_ROWS]
)
def test_hostile_snapshot_ids(pytester: pytest.Pytester, ids: list[str], colliding: int, seconds: float) -> None:
    pytester.makepyfile(
        test_hostile=(
            "import pytest\n\n"
            f"@pytest.mark.parametrize('n', list(range({len(ids)})), ids={ids!r})\n"
            "def test_x(prompt_snapshot, snapshot, n):\n"
            "    assert prompt_snapshot('Hi <n>', {'n': n}) == snapshot\n"
        )
    )
    started = time.perf_counter()
    result = pytester.runpytest("--snapshot-update", "-p", "no:cacheprovider")
    assert time.perf_counter() - started < seconds
    result.assert_outcomes(passed=len(ids) - colliding, errors=colliding)
    folder = pytester.path / "__snapshots__" / "test_hostile"
    written = list(folder.iterdir()) if folder.exists() else []
    assert len(written) == len(ids) - colliding  # one file per test that ran, none shared
    if colliding:
        assert "snapshot name collision: test_hostile.py::test_x[" in result.stdout.str()
    again = pytester.runpytest("-p", "no:cacheprovider")  # a later run: the same, never a flip-flop between tests
    again.assert_outcomes(passed=len(ids) - colliding, errors=colliding)


# === Python API: hostile values and templates given straight to the functions (issue 19, item 4) =====
# No session between the caller and the renderer: the values are not checked by the state contract, so
# the renderer itself must end in a clear error (never a raw RecursionError or ValueError).


class _Holder:
    """An agent context: what providers render from."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.state = state


_SCHEMA_DEPTH = 100_000


def _deep_schema() -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(_SCHEMA_DEPTH):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


# id, what to call, the exception it must end in (None: it must succeed), seconds, bytes it may allocate
# (the time includes building the 100,000-deep values, under tracemalloc)
API_ROWS: list[tuple[str, Callable[[], Any], type[BaseException] | None, float, int]] = [
    ("render-deep-list", lambda: render("<a>", {"a": _nested(100_000)}), UnprintableValueError, 15.0, 200 * MB),
    (
        "render-deep-dict",
        lambda: render("<a>", {"a": _nested(100_000, kind="dict")}),
        UnprintableValueError,
        5.0,
        200 * MB,
    ),
    (
        "render-adk-deep-list",
        lambda: render("{a}", {"a": _nested(100_000)}, dialect="adk"),
        UnprintableValueError,
        5.0,
        200 * MB,
    ),
    ("render-int-10-to-5000", lambda: render("<a>", {"a": 10**5000}), UnprintableValueError, 2.0, 50 * MB),
    (
        "render-adk-int-10-to-5000",
        lambda: render("{a}", {"a": 10**5000}, dialect="adk"),
        UnprintableValueError,
        2.0,
        50 * MB,
    ),
    (
        "render-int-in-dict",
        lambda: Template("<a.b>").render({"a": {"b": [10**5000]}}),
        UnprintableValueError,
        2.0,
        50 * MB,
    ),
    ("render-cyclic", lambda: render("<a>", {"a": _cyclic_list()}), CyclicValueError, 2.0, 50 * MB),
    (
        "instruction-deep-list",
        lambda: instruction("<a>")(_Holder({"a": _nested(100_000)})),
        UnprintableValueError,
        5.0,
        200 * MB,
    ),
    ("instruction-int", lambda: instruction("<a>")(_Holder({"a": 10**5000})), UnprintableValueError, 2.0, 50 * MB),
    (
        "jinja-deep-list",
        lambda: jinja("{{ a }}")(_Holder({"a": _nested(100_000)})),
        JinjaUnprintableError,
        5.0,
        200 * MB,
    ),
    ("jinja-int", lambda: jinja("{{ a }}")(_Holder({"a": 10**5000})), JinjaUnprintableError, 2.0, 50 * MB),
    ("jinja-int-concat", lambda: jinja("{{ a ~ '' }}")(_Holder({"a": 10**5000})), JinjaUnprintableError, 2.0, 50 * MB),
    (
        "jinja-int-tojson",
        lambda: jinja("{{ [a]|tojson }}")(_Holder({"a": 10**5000})),
        JinjaUnprintableError,
        2.0,
        50 * MB,
    ),
    ("lint-deep-schema", lambda: lint("<a>", schema=_deep_schema()), None, 15.0, 400 * MB),
    ("lint-deep-list-schema", lambda: lint("<a>", schema={"a": _nested(100_000)}), SchemaError, 15.0, 200 * MB),
    ("escape-1mb-of-angles", lambda: escape("<" * MB), None, 2.0, 50 * MB),
    ("convert-1mb-of-braces", lambda: convert_adk("{" * MB + "a" + "}" * MB), None, 5.0, 400 * MB),
    ("template-1mb-nested-angles", lambda: Template("<" * MB + "a" + ">" * MB), None, 5.0, 400 * MB),
    ("lint-1mb-nested-braces", lambda: lint("{" * MB + "a" + "}" * MB, dialect="adk"), None, 15.0, 400 * MB),
]


@pytest.mark.parametrize(
    ("action", "expected", "seconds", "memory"), [r[1:] for r in API_ROWS], ids=[r[0] for r in API_ROWS]
)
def test_python_api_row(
    action: Callable[[], Any], expected: type[BaseException] | None, seconds: float, memory: int
) -> None:
    raised, elapsed, peak = measured(action)
    if expected is None:
        assert raised is None, f"raised {raised!r}"
    else:
        assert type(raised) is expected, f"raised {raised!r}"
        assert isinstance(raised, TemplatingError)
        assert not isinstance(raised, RecursionError)
    assert elapsed < seconds, f"stopped after {elapsed:.2f} s"
    assert peak < memory, f"allocated {peak / MB:.0f} MB"


# --- end of the Python API section ------------------------------------------------------------------------
