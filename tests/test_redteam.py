"""The red-team table: hostile inputs, each ending in a clear `TemplatingError`.

Each row says what the code promises for its input: the error it ends in and, for a Jinja2 render, the
budget that stops it (`budget` and `limit` of the `JinjaBudgetError`: a size, a step count, the
recursion limit, or the time budget where nothing else bounds the work). No row asserts a time or a
memory figure, which a busy machine cannot keep: what the rows take and allocate, against a plain
render in the same process, is printed by bench/bench_redteam.py. Each input is as large as its limit
needs (a value nested past the depth Python prints, not 100,000 deep), so the table runs in seconds.
Sections: Jinja2 templates, state values on every session service, snapshot ids, the Python API.
"""

from __future__ import annotations

import asyncio
import functools
import sys
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


def raised_by(action: Callable[[], Any]) -> BaseException | None:
    """What `action` raised, if anything."""
    try:
        action()
    except BaseException as error:
        return error
    return None


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
# (id, template, state, the error it must raise, the budget that stops it: a JinjaBudget field, "recursion",
# or None for an error that is not a budget's). Each row renders with the time budget off, so that the
# limit it asserts, a size or a step count, is the one that stops it however busy the machine is; a row
# whose only bound is the clock ("slow-steps": every step is small) gets a short time budget instead.
JINJA_ROWS: list[tuple[str, str, dict[str, Any], type[TemplatingError], str | None]] = [
    (
        "nested-range-loops",
        "{% for i in range(100000) %}{% for j in range(100000) %}{{ i }}{% endfor %}{% endfor %}",
        {},
        JinjaBudgetError,
        "max_loop_steps",
    ),
    ("list-of-big-strings", "{% set s = 'a' * 100000 %}{{ [s] * 100000 }}", {}, JinjaBudgetError, "max_output"),
    (
        "wordwrap-amplifies",
        "{{ ('a ' * 1000) | wordwrap(1, wrapstring='x' * 99999) }}",
        {},
        JinjaBudgetError,
        "max_value",
    ),
    ("wordwrap-quadratic", "{{ 'x'|center(99999)|wordwrap(1) }}", {}, JinjaBudgetError, "max_value"),
    ("str-repeat", "{{ 'a' * 10**9 }}", {}, JinjaBudgetError, "max_value"),
    ("power", "{{ 2 ** 10000000 }}", {}, JinjaSecurityError, None),
    ("join-of-repeats", "{% set s = 'a' * 100000 %}{{ ([s] * 100000)|join }}", {}, JinjaBudgetError, "max_value"),
    (
        "map-builds-copies",
        "{% set s = 'a' * 99999 %}{{ ([s] * 99999)|map('upper')|list }}",
        {},
        JinjaBudgetError,
        "max_value",
    ),
    (
        "sum-concatenates",
        "{% set s = 'a' * 9 %}{{ ([[s]] * 100000)|sum(start=[]) }}",
        {},
        JinjaBudgetError,
        "max_output",
    ),
    ("tojson-of-repeats", "{% set s = 'a' * 100000 %}{{ ([s] * 100000)|tojson }}", {}, JinjaBudgetError, "max_value"),
    ("string-of-repeats", "{% set s = 'a' * 100000 %}{{ ([s] * 100000)|string }}", {}, JinjaBudgetError, "max_value"),
    ("pprint-of-repeats", "{% set s = 'a' * 100000 %}{{ ([s] * 100000)|pprint }}", {}, JinjaBudgetError, "max_value"),
    (
        "tilde-in-a-loop",
        "{% set ns = namespace(s='ab') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
        {},
        JinjaBudgetError,
        "max_value",
    ),
    (
        "plus-in-a-loop",
        "{% set ns = namespace(l=[0]) %}{% for i in range(60) %}{% set ns.l = ns.l + ns.l %}{% endfor %}",
        {},
        JinjaBudgetError,
        "max_value",
    ),
    ("format-width", "{{ '%1000000000s'|format('') }}", {}, JinjaBudgetError, "max_value"),
    ("str-format-width", "{{ '{:>1000000000}'.format('') }}", {}, JinjaBudgetError, "max_value"),
    ("center-width", "{{ ''|center(1000000000) }}", {}, JinjaBudgetError, "max_value"),
    ("indent-width", "{{ 'a\nb'|indent(1000000000) }}", {}, JinjaBudgetError, "max_value"),
    ("replace-amplifies", "{{ ('a' * 100000)|replace('a', 'b' * 100000) }}", {}, JinjaBudgetError, "max_value"),
    (
        "output-in-a-loop",
        "{% for i in range(100000) %}{{ 'x' * 100000 }}{% endfor %}",
        {},
        JinjaBudgetError,
        "max_output",
    ),
    (
        "output-in-a-macro-buffer",
        "{% macro m() %}{% for i in range(100000) %}{{ 'x' * 99999 }}{% endfor %}{% endmacro %}{{ m()|length }}",
        {},
        JinjaBudgetError,
        "max_output",
    ),
    (
        "slow-steps",
        "{% for i in range(100000) %}{{ (range(100000)|list|sort|length) }}{% endfor %}",
        {},
        JinjaBudgetError,
        "max_time",
    ),
    (
        "recursive-loop",
        "{% for x in range(1000) recursive %}{{ loop(range(1000)) }}{% endfor %}",
        {},
        JinjaBudgetError,
        "recursion",
    ),
    (
        "macro-fan-out",
        "{% macro m(n) %}{{ m(n + 1) }}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}",
        {},
        JinjaBudgetError,
        "recursion",
    ),
    ("print-cyclic-list", "{{ l }}", {"l": _cyclic_list()}, JinjaCyclicValueError, None),
    ("print-cyclic-dict", "{{ d }}", {"d": _cyclic_dict()}, JinjaCyclicValueError, None),
    ("join-cyclic", "{{ [l]|join }}", {"l": _cyclic_list()}, JinjaCyclicValueError, None),
    ("tojson-cyclic", "{{ d|tojson }}", {"d": _cyclic_dict()}, JinjaCyclicValueError, None),
    ("address-of-a-global", "{{ range|string }}", {}, JinjaUnprintableError, None),
    ("address-of-an-object", "{{ '%s' % o }}", {"o": _Object()}, JinjaUnprintableError, None),
    ("address-of-a-method", "{% for i in [1] %}{{ [loop.cycle]|join }}{% endfor %}", {}, JinjaUnprintableError, None),
    ("sandbox-escape", "{{ ''.__class__.__mro__[1].__subclasses__() }}", {}, JinjaSecurityError, None),
]
# The time budget of "slow-steps": any positive time stops it (its other limits would let it run for
# half a minute), so a short one keeps the row short.
SLOW_STEPS_TIME = 0.1


def _limit_of(budget: JinjaBudget, name: str) -> float | int | None:
    return sys.getrecursionlimit() if name == "recursion" else getattr(budget, name)


@pytest.mark.parametrize(
    ("source", "state", "expected", "budget_name"),
    [row[1:] for row in JINJA_ROWS],
    ids=[row[0] for row in JINJA_ROWS],
)
def test_jinja_row(
    source: str, state: dict[str, Any], expected: type[TemplatingError], budget_name: str | None
) -> None:
    budget = JinjaBudget(max_time=SLOW_STEPS_TIME if budget_name == "max_time" else None)
    raised = raised_by(lambda: jinja(source, budget=budget)(state))
    assert type(raised) is expected, f"raised {raised!r}"
    if budget_name is not None:
        assert isinstance(raised, JinjaBudgetError)
        assert (raised.budget, raised.limit) == (budget_name, _limit_of(budget, budget_name))
    assert "0x" not in str(raised)


# Fresh values, each under max_value, kept in a namespace: 100,000 steps of 100 KB ask for 10 GB. With the
# time budget off, only max_total stops them. (id, template)
TOTAL_ROWS = [
    (
        "namespace-of-fresh-strings",
        "{% set ns = namespace(l=[]) %}{% for i in range(100000) %}"
        "{% set ns.l = ns.l + [('a' * 99990) ~ i] %}{% endfor %}{{ ns.l|length }}",
    ),
    (
        "namespace-of-fresh-lists",
        "{% set ns = namespace(l=[]) %}{% for i in range(100000) %}"
        "{% set ns.l = ns.l + [[i] * 99999] %}{% endfor %}{{ ns.l|length }}",
    ),
]


@pytest.mark.parametrize("source", [r[1] for r in TOTAL_ROWS], ids=[r[0] for r in TOTAL_ROWS])
def test_jinja_total_budget_row(source: str) -> None:
    budget = JinjaBudget(max_time=None)
    raised = raised_by(lambda: jinja(source, budget=budget)({}))
    assert type(raised) is JinjaBudgetError, f"raised {raised!r}"
    assert (raised.budget, raised.limit) == ("max_total", budget.max_total)


CYCLIC_TEMPLATE_ROWS = [
    ("angle", "Hi <l>", "angle"),
    ("adk", "Hi {l}", "adk"),
]


@pytest.mark.parametrize(
    ("source", "dialect"), [r[1:] for r in CYCLIC_TEMPLATE_ROWS], ids=[r[0] for r in CYCLIC_TEMPLATE_ROWS]
)
def test_cyclic_values_in_the_other_syntaxes(source: str, dialect: Any) -> None:
    template = Template(source, dialect=dialect)
    raised = raised_by(lambda: template.render({"l": _cyclic_list()}))
    assert type(raised) is CyclicValueError
    assert "contains itself" in str(raised)


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


# id, a maker of the hostile value, the exception it must end in, words of its message
STATE_ROWS: list[tuple[str, Callable[[], Any], type[TemplatingError], str]] = [
    ("nested-500", lambda: _nested(500), InvalidStateError, "nests lists and dicts more than 100 deep"),
    ("nested-100000", lambda: _nested(100_000), InvalidStateError, "more than 100 deep"),
    ("dicts-nested-100000", lambda: _nested(100_000, kind="dict"), InvalidStateError, "more than 100 deep"),
    ("list-containing-itself", _cyclic_list, InvalidStateError, "contains itself"),
    ("dict-containing-itself", _cyclic_dict, InvalidStateError, "contains itself"),
    ("lone-surrogate", lambda: "\ud800", InvalidStateError, "lone surrogate"),
    ("lone-surrogate-key", lambda: {"a": {"\udc00": 1}}, InvalidStateError, "has a key that holds the lone"),
    ("int-10-to-5000", lambda: 10**5000, InvalidStateError, "int of about 5001 digits"),
    ("int-2-to-64", lambda: 2**64, InvalidStateError, "outside the 64-bit range"),
    ("nan", lambda: float("nan"), InvalidStateError, "which JSON cannot hold"),
    ("wide-then-deep", lambda: [list(range(10_000)), _nested(1_000)], InvalidStateError, "more than 100 deep"),
    ("object", lambda: object(), InvalidStateError, "is of type object"),
]
_STATE_IDS = [row[0] for row in STATE_ROWS]


@pytest.mark.parametrize(("make", "error", "words"), [r[1:] for r in STATE_ROWS], ids=_STATE_IDS)
@pytest.mark.parametrize("how", ["create", "append"])
def test_hostile_state_on_every_service(
    make: Callable[[], Any],
    error: type[TemplatingError],
    words: str,
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

    with pytest.raises(error) as info:
        asyncio.run(call())
    assert words in str(info.value)
    stored = asyncio.run(service.get_session(app_name="red", user_id="u", session_id="s"))
    assert stored is not None
    assert (stored.state, stored.events) == ({"keep": 1}, [])
    assert asyncio.run(service.get_session(app_name="red", user_id="u", session_id="t")) is None


@pytest.mark.parametrize(("make", "error", "words"), [r[1:] for r in STATE_ROWS], ids=_STATE_IDS)
def test_hostile_state_through_state(make: Callable[[], Any], error: type[TemplatingError], words: str) -> None:
    value = make()
    state = State({"keep": 1})
    with pytest.raises(error) as info:
        state["v"] = value
    with pytest.raises(error):
        State({"v": value})
    assert words in str(info.value)
    assert state.to_dict() == {"keep": 1}


# === snapshot ids: hostile parametrized ids (issue 19, item 5) =======================================

# id, the test ids given to one parametrized test, how many of them would share a file
SNAPSHOT_ROWS: list[tuple[str, list[str], int]] = [
    ("slash", ["a/b", "ab"], 2),
    ("slash-plain-angle", ["a/b", "ab", "a<b"], 3),
    ("colon-pipe-quote", ["a:b", "a|b", 'a"b', "a-b"], 3),
    ("star-question-backslash", ["a*b", "a?b", "a\\b"], 3),
    ("escaped-control", ["a\x1bb", "ax1bb"], 2),  # pytest writes \x1b into the id, the file name drops "\"
    ("cut-at-251", ["x" * 300 + "1", "x" * 300 + "2", "short"], 2),
    ("distinct", ["a-b", "a_b", "a.b", "a b"], 0),
]


@pytest.mark.parametrize(("ids", "colliding"), [r[1:] for r in SNAPSHOT_ROWS], ids=[r[0] for r in SNAPSHOT_ROWS])
def test_hostile_snapshot_ids(pytester: pytest.Pytester, ids: list[str], colliding: int) -> None:
    pytester.makepyfile(
        test_hostile=(
            "import pytest\n\n"
            f"@pytest.mark.parametrize('n', list(range({len(ids)})), ids={ids!r})\n"
            "def test_x(prompt_snapshot, snapshot, n):\n"
            "    assert prompt_snapshot('Hi <n>', {'n': n}) == snapshot\n"
        )
    )
    result = pytester.runpytest("--snapshot-update", "-p", "no:cacheprovider")
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


# Deeper than a recursive walk could go: the schema readers walk without recursion.
_PAST_RECURSION = 10 * sys.getrecursionlimit()


def _deep_schema() -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(_PAST_RECURSION):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


@functools.cache
def _too_deep_to_print(kind: str) -> int:
    """A depth of nested lists (or dicts) that `str()` cannot print here: twice the recursion limit on
    Python 3.11, whose `str()` stops there; doubled until it fails on a Python that stops elsewhere.
    The renderer promises an `UnprintableValueError` for any such value, however deep."""
    depth = 2 * sys.getrecursionlimit()
    while depth <= 1 << 22:
        try:
            str(_nested(depth, kind=kind))
        except RecursionError:
            return depth
        depth *= 2
    pytest.fail(f"str() printed {kind}s nested {depth // 2} deep: no depth here is too deep to print")


def _too_deep(kind: str = "list") -> Any:
    return _nested(_too_deep_to_print(kind), kind=kind)


# id, what to call, the exception it must end in (None: it must succeed)
API_ROWS: list[tuple[str, Callable[[], Any], type[BaseException] | None]] = [
    ("render-deep-list", lambda: render("<a>", {"a": _too_deep()}), UnprintableValueError),
    ("render-deep-dict", lambda: render("<a>", {"a": _too_deep("dict")}), UnprintableValueError),
    ("render-adk-deep-list", lambda: render("{a}", {"a": _too_deep()}, dialect="adk"), UnprintableValueError),
    ("render-int-10-to-5000", lambda: render("<a>", {"a": 10**5000}), UnprintableValueError),
    ("render-adk-int-10-to-5000", lambda: render("{a}", {"a": 10**5000}, dialect="adk"), UnprintableValueError),
    ("render-int-in-dict", lambda: Template("<a.b>").render({"a": {"b": [10**5000]}}), UnprintableValueError),
    ("render-cyclic", lambda: render("<a>", {"a": _cyclic_list()}), CyclicValueError),
    ("instruction-deep-list", lambda: instruction("<a>")(_Holder({"a": _too_deep()})), UnprintableValueError),
    ("instruction-int", lambda: instruction("<a>")(_Holder({"a": 10**5000})), UnprintableValueError),
    ("jinja-deep-list", lambda: jinja("{{ a }}")(_Holder({"a": _too_deep()})), JinjaUnprintableError),
    ("jinja-int", lambda: jinja("{{ a }}")(_Holder({"a": 10**5000})), JinjaUnprintableError),
    ("jinja-int-concat", lambda: jinja("{{ a ~ '' }}")(_Holder({"a": 10**5000})), JinjaUnprintableError),
    ("jinja-int-tojson", lambda: jinja("{{ [a]|tojson }}")(_Holder({"a": 10**5000})), JinjaUnprintableError),
    ("lint-deep-schema", lambda: lint("<a>", schema=_deep_schema()), None),
    ("lint-deep-list-schema", lambda: lint("<a>", schema={"a": _nested(_PAST_RECURSION)}), SchemaError),
    ("escape-1mb-of-angles", lambda: escape("<" * MB), None),
    ("convert-1mb-of-braces", lambda: convert_adk("{" * MB + "a" + "}" * MB), None),
    ("template-1mb-nested-angles", lambda: Template("<" * MB + "a" + ">" * MB), None),
    ("lint-1mb-nested-braces", lambda: lint("{" * MB + "a" + "}" * MB, dialect="adk"), None),
]
# The words each error's message must hold: it says what was wrong.
_API_WORDS = {
    UnprintableValueError: ("nests too deeply to print", "digits"),
    CyclicValueError: ("contains itself",),
    JinjaUnprintableError: ("nests too deeply to print", "digits"),
    SchemaError: ("schema",),
}


@pytest.mark.parametrize(("action", "expected"), [r[1:] for r in API_ROWS], ids=[r[0] for r in API_ROWS])
def test_python_api_row(action: Callable[[], Any], expected: type[BaseException] | None) -> None:
    raised = raised_by(action)
    if expected is None:
        assert raised is None, f"raised {raised!r}"
    else:
        assert type(raised) is expected, f"raised {raised!r}"
        assert isinstance(raised, TemplatingError)
        assert not isinstance(raised, RecursionError)
        assert any(words in str(raised) for words in _API_WORDS[expected]), str(raised)


# --- end of the Python API section ------------------------------------------------------------------------
