"""Jinja2 mode: rendering over read-only state, the sandbox, and errors that point at the template line."""

from __future__ import annotations

import asyncio
import copy
import re
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType, SimpleNamespace
from typing import Any

import pytest

from templating import (
    CallbackContext,
    CyclicValueError,
    InMemorySessionService,
    JinjaBudget,
    JinjaBudgetError,
    JinjaCyclicValueError,
    JinjaError,
    JinjaProvider,
    JinjaSecurityError,
    JinjaSyntaxError,
    JinjaUndefinedError,
    JinjaUnprintableError,
    ReadonlyContext,
    TemplatingError,
    ToolContext,
    jinja,
    resolve,
)
from templating.jinja_mode.sandbox import _ENVIRONMENT


class AdkLikeState:
    """Like ADK's ``State`` in a CallbackContext: get/__contains__/__getitem__/to_dict, not a Mapping."""

    def __init__(self, values: dict[str, Any]) -> None:
        self._values = values

    def get(self, key: str, default: Any = None) -> Any:
        return self._values.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def to_dict(self) -> dict[str, Any]:
        return dict(self._values)


def make_state() -> dict[str, Any]:
    return {
        "user:name": "Ada",
        "user:items": "user-scoped key named like a dict method",
        "app:brand": "Acme",
        "temp:step": 2,
        "orders": [{"id": "A-1", "total": 3}, {"id": "B-2", "total": 5}],
        "prefs": {"lang": "en"},
        "nothing": None,
        "fmt": "{0.__class__.__mro__}",
        "fmt_globals": "{0.__init__.__globals__}",
        "state": "a session key named state",
        "odd-key": "not an identifier",
    }


RENDERS = [
    ("state-any-key", '{{ state["user:name"] }} {{ state["odd-key"] }}', "Ada not an identifier"),
    ("namespaces", "{{ user.name }} {{ app.brand }} {{ temp.step }}", "Ada Acme 2"),
    ("namespace-item", '{{ user["name"] }}', "Ada"),
    ("namespace-key-named-like-a-method", "{{ user.items }}", "user-scoped key named like a dict method"),
    ("session-keys-directly", "{{ prefs.lang }} {{ orders[1].id }}", "en B-2"),
    ("loop", "{% for o in orders %}{{ o.id }}={{ o.total }};{% endfor %}", "A-1=3;B-2=5;"),
    ("condition", "{% if user.name == 'Ada' %}hi{% else %}who{% endif %}", "hi"),
    ("is-defined", "{% if state['nope'] is defined %}x{% else %}absent{% endif %}", "absent"),
    ("default-filter", "{{ state['nope'] | default('fallback') }}", "fallback"),
    ("no-autoescape", "{{ '<b>&' }}", "<b>&"),
    ("braces-and-angles-literal", '{"a": <name>} {{ "{x}" }}', '{"a": <name>} {x}'),
    ("none-renders-empty", "[{{ nothing }}]", "[]"),
    ("containers-render-as-json", "{{ prefs }} {{ orders[0] }}", '{"lang": "en"} {"id": "A-1", "total": 3}'),
    ("reserved-name-wins", "{{ state['state'] }}", "a session key named state"),
    ("iterate-a-namespace", "{% for k in user|sort %}{{ k }},{% endfor %}", "items,name,"),
    ("length", "{{ app|length }} {{ (state|list)|length }}", "1 11"),
    (
        "namespace-for-counters",
        "{% set ns = namespace(n=0) %}{% for o in orders %}{% set ns.n = ns.n + o.total %}{% endfor %}{{ ns.n }}",
        "8",
    ),
    ("keeps-trailing-newline", "x\n", "x\n"),
]


@pytest.mark.parametrize(("source", "expected"), [c[1:] for c in RENDERS], ids=[c[0] for c in RENDERS])
def test_render(source: str, expected: str) -> None:
    assert jinja(source)(make_state()) == expected


CONTEXTS = [
    ("mapping", lambda s: s),
    ("mapping-proxy", MappingProxyType),
    ("readonly-context", lambda s: SimpleNamespace(state=MappingProxyType(s))),
    ("callback-context-state", lambda s: SimpleNamespace(state=AdkLikeState(s))),
]


@pytest.mark.parametrize("wrap", [c[1] for c in CONTEXTS], ids=[c[0] for c in CONTEXTS])
def test_any_read_only_context(wrap: Any) -> None:
    source = "{{ user.name }} {{ state['app:brand'] }} {{ prefs.lang }} {{ user|length }}"
    assert jinja(source)(wrap(make_state())) == "Ada Acme en 2"


def test_it_is_a_provider_resolve_calls_and_does_not_render_again() -> None:
    provider = jinja("{{ '<user:name>' }} {{ user.name }}")
    assert isinstance(provider, JinjaProvider)
    assert asyncio.run(resolve(provider, make_state())) == "<user:name> Ada"


# Each escape attempt, and the start of the message it must fail with.
ESCAPES = [
    ("dunder-class", "{{ ''.__class__ }}", "access to attribute '__class__' of 'str' object is unsafe"),
    ("mro-chain", "{{ ''.__class__.__mro__[1].__subclasses__() }}", "access to attribute '__class__'"),
    ("mro-method", "{{ orders.__class__.mro() }}", "access to attribute '__class__' of 'list'"),
    ("subclasses-via-base", "{{ [].__class__.__base__.__subclasses__() }}", "access to attribute '__class__'"),
    ("globals-of-namespace", "{{ namespace.__init__.__globals__ }}", "access to attribute '__init__'"),
    ("globals-of-self", "{{ self.__init__.__globals__ }}", "access to attribute '__init__' of 'TemplateReference'"),
    ("state-view-internals", "{{ state.__class__ }}", "access to attribute '__class__' of 'ReadOnlyState'"),
    ("state-view-private", "{{ user._get }}", "access to attribute '_get' of 'ReadOnlyState'"),
    ("attr-filter", "{{ ''|attr('__class__') }}", "access to attribute '__class__' of 'str' object is unsafe"),
    ("attr-filter-on-state", "{{ state|attr('_get') }}", "access to attribute '_get' of 'ReadOnlyState'"),
    ("attr-filter-chain", "{{ (orders|attr('__class__'))|attr('mro') }}", "access to attribute '__class__'"),
    ("str-format-stored", "{{ fmt.format(orders) }}", "access to attribute '__class__' of 'list'"),
    ("str-format-globals", "{{ fmt_globals.format(namespace) }}", "access to attribute '__init__'"),
    ("str-format-map", "{{ '{x.__class__}'.format_map({'x': orders}) }}", "access to attribute '__class__'"),
    ("format-literal-on-state", "{{ '{0._get}'.format(state) }}", "access to attribute '_get'"),
    ("mutate-dict", "{{ prefs.update({'lang': 'xx'}) }}", "access to attribute 'update' of 'dict' object is unsafe"),
    ("mutate-list", "{{ orders.append(1) }}", "access to attribute 'append' of 'list' object is unsafe"),
    ("mutate-nested", "{{ orders[0].pop('id') }}", "access to attribute 'pop' of 'dict' object is unsafe"),
    ("mutate-setdefault", "{{ prefs.setdefault('x', 1) }}", "access to attribute 'setdefault' of 'dict'"),
]


@pytest.mark.parametrize(("source", "message"), [c[1:] for c in ESCAPES], ids=[c[0] for c in ESCAPES])
def test_sandbox_escapes_fail_with_a_clear_error_and_change_nothing(source: str, message: str) -> None:
    state = make_state()
    before = copy.deepcopy(state)
    with pytest.raises(JinjaSecurityError) as caught:
        jinja(source)(state)
    error = caught.value
    assert error.message.startswith("the Jinja2 sandbox refused: " + message)
    assert error.source == source
    assert error.span is not None
    assert error.span.line == 1
    assert "cannot reach internal attributes or change state" in str(error)
    assert state == before


STATE_WRITES = [
    ("set-only-shadows", "{% set prefs = 1 %}{{ prefs }}", "1"),
    ("set-state-only-shadows", "{% set state = {} %}{{ state|length }}", "0"),
    ("update-method-is-a-key-lookup", "{{ state.update is defined }}", "False"),
]


@pytest.mark.parametrize(("source", "expected"), [c[1:] for c in STATE_WRITES], ids=[c[0] for c in STATE_WRITES])
def test_state_cannot_be_mutated_from_a_template(source: str, expected: str) -> None:
    state = make_state()
    before = copy.deepcopy(state)
    assert jinja(source)(state) == expected
    assert state == before


UNDEFINED = [
    ("name", "line one\n  {{ nmae }}", "'nmae' is undefined", 2, 6, "nmae"),
    ("name-suggestion", "{{ prefz.lang }}", "'prefz' is undefined; did you mean 'prefs'?", 1, 4, "prefz"),
    ("no-suggestion-from-a-shared-scope", "{{ app.plan }}", "state has no key 'app:plan'", 1, 4, "app.plan"),
    ("state-key-suggestion", "{{ state['prefz'] }}", "state has no key 'prefz'; did you mean 'prefs'?", 1, 11, "prefz"),
    (
        "state-key",
        "a\nb\n{{ state['user:nmae'] }}",
        "state has no key 'user:nmae'; did you mean 'user:name'?",
        3,
        11,
        "user:nmae",
    ),
    ("namespace-key", "{{ user.nmae }}", "state has no key 'user:nmae'; did you mean 'user:name'?", 1, 4, "user.nmae"),
    ("name-also-in-text", "nmae: {{ nmae }}", "'nmae' is undefined", 1, 10, "nmae"),
    ("nested", "{% for o in orders %}\n{{ o.nope }}\n{% endfor %}", "has no attribute 'nope'", 2, 6, "nope"),
    ("global-removed", "{{ cycler }}", "'cycler' is undefined", 1, 4, "cycler"),
]


@pytest.mark.parametrize(
    ("source", "message", "line", "column", "text"), [c[1:] for c in UNDEFINED], ids=[c[0] for c in UNDEFINED]
)
def test_undefined_names_raise_with_the_template_line(
    source: str, message: str, line: int, column: int, text: str
) -> None:
    with pytest.raises(JinjaUndefinedError) as caught:
        jinja(source)(make_state())
    error = caught.value
    assert error.message.endswith(message)
    assert error.span is not None
    assert (error.span.line, error.span.column) == (line, column)
    assert source[error.span.start : error.span.end] == text
    assert f"at {line}:{column}" in str(error)


def test_undefined_error_prints_line_and_caret(snapshot: Any) -> None:
    with pytest.raises(JinjaUndefinedError) as caught:
        jinja("Hello {{ user.name }}.\nYour plan: {{ app.plan }}\n")(make_state())
    assert str(caught.value) == snapshot


SYNTAX = [
    ("unclosed-expression", "ok\n{{ x }", 2),
    ("unknown-tag", "{% frobnicate %}", 1),
    ("unclosed-block-points-at-its-opening", "a\n{% if x %}\nb", 2),
    ("assignment-to-state", "{% set state['a'] = 1 %}", 1),
]


@pytest.mark.parametrize(("source", "line"), [c[1:] for c in SYNTAX], ids=[c[0] for c in SYNTAX])
def test_syntax_errors_fail_at_definition_time(source: str, line: int) -> None:
    with pytest.raises(JinjaSyntaxError) as caught:
        jinja(source)
    assert caught.value.message.startswith("invalid Jinja2 template: ")
    assert caught.value.span is not None
    assert caught.value.span.line == line


def test_other_runtime_errors_are_jinja_errors_with_the_line() -> None:
    with pytest.raises(JinjaError) as caught:
        jinja("a\n{{ 1 / 0 }}")({})
    assert caught.value.message == "Jinja2 template failed: ZeroDivisionError: division by zero"
    assert caught.value.span is not None
    assert caught.value.span.line == 2


def test_errors_are_templating_errors() -> None:
    for cls in (JinjaSyntaxError, JinjaUndefinedError, JinjaSecurityError):
        assert issubclass(cls, JinjaError)
    assert issubclass(JinjaError, TemplatingError)


def test_compiled_once_when_made(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str] = []
    real_compile = _ENVIRONMENT.compile

    def counting_compile(source: Any, *args: Any, **kwargs: Any) -> Any:
        compiled.append(source)
        return real_compile(source, *args, **kwargs)

    monkeypatch.setattr(_ENVIRONMENT, "compile", counting_compile)
    provider = jinja("{{ user.name }}")
    assert compiled == ["{{ user.name }}"]
    assert provider(make_state()) == "Ada"
    assert provider(make_state()) == "Ada"
    assert compiled == ["{{ user.name }}"], "rendering never compiles again"


def test_jinja_takes_a_string() -> None:
    with pytest.raises(TypeError, match="jinja\\(\\) takes a template source"):
        jinja(3)  # type: ignore[arg-type]


def test_providers_compare_by_source() -> None:
    assert jinja("{{ a }}") == jinja("{{ a }}")
    assert hash(jinja("{{ a }}")) == hash(jinja("{{ a }}"))
    assert jinja("{{ a }}") != jinja("{{ b }}")


class Counter:
    """A non-JSON object in state whose method mutates it: the sandbox must never run it."""

    def __init__(self) -> None:
        self.count = 0
        self.label = "counter"

    def bump(self) -> int:
        self.count += 1
        return self.count


# Anything beyond the read-only methods of JSON types, and the sizes an operator may build.
REFUSED = [
    ("object-method-call", "{{ obj.bump() }}", "access to attribute 'bump' of 'Counter' object is unsafe"),
    ("object-method-item", "{{ obj['bump']() }}", "access to attribute 'bump' of 'Counter' object is unsafe"),
    ("object-method-attr-filter", "{{ (obj|attr('bump'))() }}", "access to attribute 'bump' of 'Counter'"),
    ("object-data-attribute", "{{ obj.label }}", "access to attribute 'label' of 'Counter' object is unsafe"),
    ("object-method-in-loop", "{% for i in range(3) %}{{ obj.bump() }}{% endfor %}", "attribute 'bump'"),
    ("object-via-str-format", "{{ '{0.bump}'.format(obj) }}", "access to attribute 'bump' of 'Counter' object"),
    ("str-padding", "{{ 'a'.center(10) }}", "access to attribute 'center' of 'str' object is unsafe"),
    ("str-encode", "{{ 'a'.encode() }}", "access to attribute 'encode' of 'str' object is unsafe"),
    ("int-to-bytes", "{{ (5).to_bytes(2, 'big') }}", "access to attribute 'to_bytes' of 'int' object is unsafe"),
    ("str-times-huge", "{{ 'a' * 10**9 }}", "'*' would build a value of 1000000000 items"),
    ("huge-times-str", "{{ 10**9 * 'a' }}", "'*' would build a value of 1000000000 items"),
    ("list-times-huge", "{{ [0] * 200000 }}", "'*' would build a value of 200000 items"),
    ("power-huge", "{{ 2 ** 1000000 }}", "'**' would build a number of more than 100000 bits"),
    ("plus-doubling", "{% set s = 'a' * 60000 %}{{ s + s }}", "'+' would build a value of 120000 items"),
    ("replace-amplifies", "{{ ('a' * 1000).replace('a', 'b' * 1000) }}", "str.replace() would build a value"),
]


@pytest.mark.parametrize(("source", "message"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_only_read_only_methods_and_bounded_sizes(source: str, message: str) -> None:
    counter = Counter()
    with pytest.raises(JinjaSecurityError) as caught:
        jinja(source)({"obj": counter, "prefs": {"lang": "en"}})
    assert message in caught.value.message
    assert counter.count == 0, "the object's method never ran"


ALLOWED = [
    (
        "str-methods",
        "{{ 'ab'.upper() }} {{ 'a,b'.split(',') }} {{ ' x '.strip() }} {{ 'ab'.startswith('a') }}",
        'AB ["a", "b"] x True',
    ),
    (
        "dict-methods",
        "{{ prefs.get('lang') }} {{ prefs.items()|list }} {{ prefs.keys()|list }}",
        'en [["lang", "en"]] ["lang"]',
    ),
    ("list-tuple-methods", "{{ [1, 2, 1].count(1) }} {{ (1, 2).index(2) }}", "2 1"),
    ("number-methods", "{{ (1.5).is_integer() }} {{ (3).bit_length() }} {{ (2).real }}", "False 2 2"),
    ("str-format", "{{ '{} and {}'.format(1, 'b') }}", "1 and b"),
    ("loop-machinery", "{% for i in range(3) %}{{ loop.index }}{{ loop.cycle('a', 'b') }}{% endfor %}", "1a2b3a"),
    ("macro-and-caller", "{% macro box() %}[{{ caller() }}]{% endmacro %}{% call box() %}in{% endcall %}", "[in]"),
    (
        "namespace",
        "{% set ns = namespace(n=0) %}{% for i in range(3) %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}",
        "3",
    ),
    (
        "small-operators",
        "{{ 2 ** 10 }} {{ 'ab' * 3 }} {{ [1] + [2] }} {{ 'a' + 'b' }} {{ 3 * 4 }}",
        "1024 ababab [1, 2] ab 12",
    ),
    ("replace-small", "{{ 'a-b'.replace('-', '+') }}", "a+b"),
]


@pytest.mark.parametrize(("source", "expected"), [c[1:] for c in ALLOWED], ids=[c[0] for c in ALLOWED])
def test_read_only_methods_and_jinja_machinery_work(source: str, expected: str) -> None:
    assert jinja(source)({"prefs": {"lang": "en"}}) == expected


SHADOWING = [
    ("range", "{{ range(3)|list }} {{ state['range'] }}", "[0, 1, 2] a session key named range"),
    ("namespace", "{% set ns = namespace(a=1) %}{{ ns.a }} {{ state['namespace'] }}", "1 shadow"),
]


@pytest.mark.parametrize(("source", "expected"), [c[1:] for c in SHADOWING], ids=[c[0] for c in SHADOWING])
def test_globals_win_over_state_keys_of_the_same_name(source: str, expected: str) -> None:
    assert jinja(source)({"range": "a session key named range", "namespace": "shadow"}) == expected


# --- size limits on what a template may build (each of these used to allocate a gigabyte or more) ---------
OVERSIZED = [
    ("percent-width", "{{ '%1000000000s' % '' }}", "'%' would build a value of"),
    ("percent-precision", "{{ '%.1000000000f' % 1.5 }}", "'%' would build a value of"),
    ("percent-star-width", "{{ '%*s' % (1000000000, '') }}", "'*' width or precision"),
    ("percent-many-widths", "{{ ('%60000s' * 2) % ('', '') }}", "'%' would build a value of 120"),
    ("format-width", "{{ '{:>1000000000}'.format('') }}", "str.format() would build a value of"),
    ("format-map-width", "{{ '{a:>1000000000}'.format_map({'a': ''}) }}", "str.format() would build a value of"),
    ("format-nested-width", "{{ '{:>{}}'.format('', 10**9) }}", "width or precision taken from an argument"),
    ("format-filter", "{{ '%1000000000s'|format('') }}", "the format filter would build a value of"),
    ("replace-filter", "{{ ('a' * 1000)|replace('a', 'b' * 1000) }}", "the replace filter would build a value"),
    ("join-filter", "{{ ['a' * 60000, 'b' * 60000]|join }}", "the join filter would build a value of 120000"),
    ("str-join-separator", "{{ ('x' * 60000).join(['a', 'b', 'c']) }}", "str.join() would build a value of 120003"),
    ("str-join-items", "{{ ''.join(['a' * 60000, 'b' * 60000]) }}", "str.join() would build a value of 120000"),
    ("join-filter-separator", "{{ ['a', 'b', 'c']|join('x' * 60000) }}", "the join filter would build a value"),
    ("center-filter", "{{ ''|center(1000000000) }}", "the center filter would build a value of 1000000000"),
    ("indent-filter", "{{ 'a\nb'|indent(1000000000) }}", "the indent filter would build a value"),
    ("batch-filter", "{{ [1]|batch(1000000000, 0)|list }}", "the batch filter would build a value"),
    ("slice-filter", "{{ [1]|slice(1000000000)|list }}", "the slice filter would build a value"),
    ("tojson-indent", "{{ [1]|tojson(1000000000) }}", "the tojson filter's indent would build a value"),
    ("int-times-int", "{{ (2 ** 60000) * (2 ** 60000) }}", "'*' would build a number of more than 100000 bits"),
    (
        "int-repeated-squaring",
        "{% set ns = namespace(n=3) %}{% for i in range(40) %}{% set ns.n = ns.n * ns.n %}{% endfor %}",
        "'*' would build a number of more than 100000 bits",
    ),
    (
        "tilde-doubling",
        "{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
        "'~' would build a value of 131072",
    ),
]


@pytest.mark.parametrize(("source", "message"), [c[1:] for c in OVERSIZED], ids=[c[0] for c in OVERSIZED])
def test_oversized_values_are_refused(source: str, message: str) -> None:
    with pytest.raises(JinjaSecurityError) as caught:
        jinja(source)({})
    assert message in caught.value.message


WITHIN_LIMITS = [
    ("percent", "{{ '%5s|%-3d|%.2f|%%' % ('ab', 7, 1.234) }}", "   ab|7  |1.23|%"),
    ("percent-mapping", "{{ '%(a)s' % {'a': 1} }}", "1"),
    ("int-modulo", "{{ 7 % 3 }}", "1"),
    ("format-width", "{{ '{:>4}|{:.1f}'.format('a', 2.25) }}", "   a|2.2"),
    ("format-filter", "{{ '%s-%s'|format(1, 2) }}", "1-2"),
    ("replace-filter", "{{ 'a-b'|replace('-', '+') }}", "a+b"),
    ("str-join", "{{ ', '.join(['a', 'b']) }} {{ '-'.join(range(3)|map('string')) }}", "a, b 0-1-2"),
    ("replace-filter-count", "{{ 'aaa'|replace('a', 'b', 2) }}", "bba"),
    ("join-filter", "{{ [1, 2]|join(', ') }} {{ [{'n': 'x'}, {'n': 'y'}]|join('', attribute='n') }}", "1, 2 xy"),
    ("center-filter", "[{{ 'a'|center(5) }}]", "[  a  ]"),
    ("indent-filter", "{{ 'a\nb'|indent(2) }}", "a\n  b"),
    ("batch-slice", "{{ [1, 2, 3]|batch(2, 0)|list }} {{ [1, 2, 3]|slice(2)|list }}", "[[1, 2], [3, 0]] [[1, 2], [3]]"),
    ("tojson", "{{ {'b': [1], 'a': '<'}|tojson }} {{ [1]|tojson(1) }}", '{"a": "\\u003c", "b": [1]} [\n 1\n]'),
    ("int-times-int", "{{ 12 * 12 }} {{ (2 ** 100) * 2 == 2 ** 101 }}", "144 True"),
    ("tilde", "{{ 'a' ~ 1 ~ none }}", "a1None"),
]


@pytest.mark.parametrize(("source", "expected"), [c[1:] for c in WITHIN_LIMITS], ids=[c[0] for c in WITHIN_LIMITS])
def test_string_building_within_the_limits_works(source: str, expected: str) -> None:
    assert jinja(source)({}) == expected


UNPRINTABLE = [
    ("global-function", "{{ range }}", "{{ range }} is a function (safe_range)"),
    ("bound-methods", "{{ ['s']|map(attribute='upper')|list }}", "holds a builtin_function_or_method (upper)"),
    ("method", "{{ 'a'.upper }}", "{{ 'a'.upper }} is a builtin_function_or_method (upper)"),
    ("generator", "{{ [1, 2]|map('string') }}", "{{ [1, 2]|map('string') }} is a generator"),
    ("macro", "{% macro m() %}{% endmacro %}{{ m }}", "{{ m }} is a Macro"),
]


@pytest.mark.parametrize(("source", "message"), [c[1:] for c in UNPRINTABLE], ids=[c[0] for c in UNPRINTABLE])
def test_functions_and_iterators_are_not_printed_with_their_address(source: str, message: str) -> None:
    with pytest.raises(JinjaSecurityError) as caught:
        jinja(source)({})
    assert message in caught.value.message
    assert "0x" not in str(caught.value)


def test_lookups_never_write_to_a_defaultdict_in_state() -> None:
    from collections import defaultdict

    nested: defaultdict[str, list[int]] = defaultdict(list)
    state = {"d": nested, "outer": {"inner": nested}}
    source = (
        "{{ d.foo is defined }} {{ d['bar'] is defined }} {{ outer.inner.baz is defined }} "
        "{{ d.get('x', 'dflt') }} {% for k in d %}{{ k }}{% endfor %}"
    )
    assert jinja(source)(state) == "False False False dflt "
    assert dict(nested) == {}
    nested["real"].append(1)
    assert jinja("{{ d.real }} {{ d['real'] }} {{ d.items()|list }}")(state) == '[1] [1] [["real", [1]]]'


def test_a_subclass_that_redefines_an_allowlisted_method_is_refused() -> None:
    class Sneaky(dict[str, Any]):
        def get(self, key: str, default: Any = None) -> Any:
            raise AssertionError("a redefined method ran")

    with pytest.raises(JinjaSecurityError, match="attribute 'get' of 'Sneaky' object is unsafe"):
        jinja("{{ s.get('a') }}")({"s": Sneaky(a=1)})


def test_other_objects_with_their_own_text_still_print() -> None:
    import datetime

    class Opaque:
        pass

    assert jinja("{{ when }}")({"when": datetime.date(2024, 5, 1)}) == "2024-05-01"
    with pytest.raises(JinjaSecurityError, match=re.escape("{{ thing }} is a Opaque")):
        jinja("{{ thing }}")({"thing": Opaque()})


# --- a render reads only what the template uses --------------------------------------------------


class CountingState(Mapping[str, Any]):
    """State that records every key looked up and counts reads of the whole (iterating, its size)."""

    def __init__(self, values: dict[str, Any]) -> None:
        self._values = values
        self.looked_up: list[str] = []
        self.whole_reads = 0

    def __getitem__(self, key: str) -> Any:
        self.looked_up.append(key)
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        self.whole_reads += 1
        return iter(self._values)

    def __len__(self) -> int:
        self.whole_reads += 1
        return len(self._values)


LOOKUPS = [
    ("names", "{{ prefs.lang }} {{ orders[1].id }}", "en B-2", {"prefs", "orders"}),
    ("namespaces", "{{ user.name }} {{ app.brand }} {{ state['odd-key'] }}", "Ada Acme not an identifier", None),
    ("absent-name-is-looked-up-once", "{{ nope is defined }}", "False", {"nope"}),
    ("macro-body", "{% macro m() %}{{ prefs.lang }}{% endmacro %}{{ m() }}", "en", {"prefs"}),
    ("set-in-a-branch", "{% if nothing %}{% set prefs = 1 %}{% endif %}{{ prefs.lang }}", "en", {"nothing", "prefs"}),
    ("loop-and-call", "{% for o in orders %}{{ loop.index }}{% endfor %}{{ range(2)|list }}", "12[0, 1]", {"orders"}),
    ("nothing-from-state", "{% set x = 3 %}{{ x }} {{ 'text' }}", "3 text", set()),
]


@pytest.mark.parametrize(("source", "expected", "keys"), [c[1:] for c in LOOKUPS], ids=[c[0] for c in LOOKUPS])
def test_a_render_looks_up_only_the_names_the_template_uses(source: str, expected: str, keys: set[str] | None) -> None:
    extra = {f"filler_{n}": n for n in range(1_000)}
    state = CountingState({**make_state(), **extra})
    assert jinja(source)(state) == expected
    assert state.whole_reads == 0
    if keys is None:  # the namespaces and ``state`` read the keys they are asked for, with their prefix
        assert set(state.looked_up) == {"user:name", "app:brand", "odd-key"}
    else:
        assert set(state.looked_up) == keys


def test_did_you_mean_still_considers_every_state_key() -> None:
    state = CountingState({**make_state(), "shipping_address": "x"})
    with pytest.raises(JinjaUndefinedError, match="did you mean 'shipping_address'"):
        jinja("{{ shiping_address }}")(state)


def session_of(values: dict[str, Any]) -> Any:
    service = InMemorySessionService()
    return asyncio.run(service.create_session(app_name="shop", user_id="ada", state=values))


OUR_CONTEXTS: list[tuple[str, Callable[[Any], Any]]] = [
    ("readonly-context", ReadonlyContext),
    ("callback-context", CallbackContext),
    ("tool-context", ToolContext),
    ("readonly-state-view", lambda session: ReadonlyContext(session).state),
]
MUTATIONS = [c for c in ESCAPES if c[0].startswith("mutate-")] + [
    ("mutate-via-state", "{{ state.prefs.clear() }}", "access to attribute 'clear' of 'dict' object is unsafe"),
    ("internals-via-namespace", "{{ user.name.upper() }}{{ app.brand.__init__ }}", "access to attribute '__init__'"),
    ("mutate-in-loop", "{% for o in orders %}{{ o.update(total=0) }}{% endfor %}", "attribute 'update' of 'dict'"),
]


@pytest.mark.parametrize(("source", "message"), [c[1:] for c in MUTATIONS], ids=[c[0] for c in MUTATIONS])
@pytest.mark.parametrize("make", [c[1] for c in OUR_CONTEXTS], ids=[c[0] for c in OUR_CONTEXTS])
def test_values_read_through_our_contexts_cannot_be_changed_by_a_template(
    make: Callable[[Any], Any], source: str, message: str
) -> None:
    session = session_of(make_state())
    before = copy.deepcopy(session.state)
    ctx = make(session)
    with pytest.raises(JinjaSecurityError, match=re.escape(message.split(" of ")[0])):  # refused, whatever the type
        jinja(source)(ctx)
    assert session.state == before
    actions = getattr(ctx, "actions", None)
    assert actions is None or actions.state_delta == {}


# --- budgets: each render stays within its JinjaBudget ------------------------------------------------
# The clock is off in SMALL: the budget a row names stops it however busy the machine. Only the "time" row
# (its steps are each within the other limits) runs with a time budget.
SMALL = JinjaBudget(max_time=None, max_output=1_000, max_value=500, max_loop_steps=100, max_total=20_000)
OVER_BUDGET = [
    ("loop-steps", "a\n{% for i in range(50) %}{% for j in range(50) %}{% endfor %}{% endfor %}", "max_loop_steps", 2),
    ("recursive-loop", "{% for x in [1, 2] recursive %}{{ loop(range(200)) }}{% endfor %}", "max_loop_steps", 1),
    ("output-text", "{% for i in range(90) %}twelve chars{% endfor %}", "max_output", 1),
    ("output-values", "{% for i in range(20) %}{{ 'x' * 400 }}{% endfor %}", "max_output", 1),
    (
        "output-in-a-macro",
        "{% macro m() %}{% for i in range(90) %}twelve chars{% endfor %}{% endmacro %}{{ m() }}",
        "max_output",
        1,
    ),
    ("output-of-one-container", "{{ ['y' * 400] * 10 }}", "max_output", 1),
    ("value-repeat", "{{ 'a' * 501 }}", "max_value", 1),
    ("value-join", "{{ ['a' * 300, 'b' * 300]|join }}", "max_value", 1),
    (
        "value-tilde-in-a-loop",
        "{% set ns = namespace(s='') %}{% for i in range(60) %}{% set ns.s = ns.s ~ 'abcdefghij' %}{% endfor %}",
        "max_value",
        1,
    ),
    ("value-wordwrap", "{{ ('a ' * 100)|wordwrap(1, wrapstring='x' * 10) }}", "max_value", 1),
    ("value-map", "{{ (['a' * 100] * 10)|map('upper')|list }}", "max_value", 1),
    ("value-sum", "{{ ([[1] * 100] * 10)|sum(start=[]) }}", "max_value", 1),
    ("value-string", "{{ (['a' * 100] * 10)|string }}", "max_value", 1),
    ("value-tojson", "{{ (['a' * 100] * 10)|tojson }}", "max_value", 1),
    ("time", "{% for i in range(90) %}{{ (range(100000)|list|sort|length) }}{% endfor %}", "max_time", 1),
    (
        "total-of-fresh-values",
        "{% set ns = namespace(l=[]) %}\n{% for i in range(100) %}{% set ns.l = ns.l + ['x' * 400] %}{% endfor %}",
        "max_total",
        2,
    ),
]


@pytest.mark.parametrize(("source", "budget", "line"), [c[1:] for c in OVER_BUDGET], ids=[c[0] for c in OVER_BUDGET])
def test_going_over_a_budget_names_it_its_limit_and_the_line(source: str, budget: str, line: int) -> None:
    timed = JinjaBudget(max_time=0.2, max_output=1_000, max_value=100_000, max_loop_steps=100)
    used = timed if budget == "max_time" else SMALL
    with pytest.raises(JinjaBudgetError) as caught:
        jinja(source, budget=used)({})
    error = caught.value
    assert isinstance(error, JinjaSecurityError)
    assert error.budget == budget
    assert error.limit == getattr(used, budget)
    assert f"({budget}={error.limit})" in error.message
    assert error.span is not None
    assert error.span.line == line
    assert f"JinjaBudget({budget}=...)" in str(error)


def test_a_budget_of_none_is_no_limit() -> None:
    source = "{% for i in range(300) %}{{ 'ab' * 300 }}{% endfor %}"
    with pytest.raises(JinjaBudgetError):
        jinja(source, budget=SMALL)({})
    assert len(jinja(source, budget=JinjaBudget.unlimited())({})) == 300 * 600


def test_generous_defaults_render_a_100_kb_prompt_over_10_000_loop_steps() -> None:
    rows = [{"id": f"A-{n:05}", "note": "x" * 3} for n in range(10_000)]
    source = "Orders:\n{% for row in rows %}- {{ row.id }}: {{ row.note }}\n{% endfor %}"
    # Every default but the clock's: a busy machine may take more than its second, and no test judges by it.
    text = jinja(source, budget=JinjaBudget(max_time=None))({"rows": rows})
    assert len(text) > 100_000
    assert text.count("\n") == 10_001


def test_defaults_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPLATING_JINJA_MAX_LOOP_STEPS", "5")
    monkeypatch.setenv("TEMPLATING_JINJA_MAX_OUTPUT", "off")
    monkeypatch.setenv("TEMPLATING_JINJA_MAX_TIME", "2.5")
    monkeypatch.setenv("TEMPLATING_JINJA_MAX_TOTAL", "1_000")
    assert JinjaBudget() == JinjaBudget(
        max_time=2.5, max_output=None, max_value=100_000, max_loop_steps=5, max_total=1_000
    )
    with pytest.raises(JinjaBudgetError, match="1001 items in all"):
        jinja("{{ 'a' * 1001 }}")({})
    with pytest.raises(JinjaBudgetError, match="more than 5 loop steps"):
        jinja("{% for i in range(6) %}{% endfor %}")({})
    assert jinja("{% for i in range(6) %}{% endfor %}", budget=JinjaBudget(max_loop_steps=6))({}) == ""


BAD_ENVIRONMENT = [
    ("TEMPLATING_JINJA_MAX_TIME", "soon"),
    ("TEMPLATING_JINJA_MAX_TIME", "-1"),
    ("TEMPLATING_JINJA_MAX_TIME", "inf"),
    ("TEMPLATING_JINJA_MAX_OUTPUT", "1.5"),
    ("TEMPLATING_JINJA_MAX_VALUE", "0"),
    ("TEMPLATING_JINJA_MAX_TOTAL", "lots"),
    ("TEMPLATING_JINJA_MAX_LOOP_STEPS", "-5"),
    ("TEMPLATING_JINJA_MAX_TIME", "abc"),
]


@pytest.mark.parametrize(("variable", "value"), BAD_ENVIRONMENT, ids=[f"{v}={x}" for v, x in BAD_ENVIRONMENT])
def test_a_bad_environment_variable_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValueError, match=f"{variable}={value!r}: expected a positive") as caught:
        jinja("x")
    assert isinstance(caught.value, TemplatingError)  # the command line's one line and exit 2


BAD_BUDGETS: list[tuple[str, dict[str, Any], type[Exception]]] = [
    ("negative", {"max_output": -1}, ValueError),
    ("zero-time", {"max_time": 0}, ValueError),
    ("float-size", {"max_value": 1.5}, TypeError),
    ("bool", {"max_loop_steps": True}, TypeError),
    ("float-total", {"max_total": 1e9}, TypeError),
]


@pytest.mark.parametrize(("options", "kind"), [c[1:] for c in BAD_BUDGETS], ids=[c[0] for c in BAD_BUDGETS])
def test_a_bad_budget_is_refused_when_made(options: dict[str, Any], kind: type[Exception]) -> None:
    with pytest.raises(kind, match="JinjaBudget"):
        JinjaBudget(**options)


def test_budget_is_keyword_only_and_part_of_the_provider() -> None:
    with pytest.raises(TypeError):
        JinjaBudget(1.0)  # type: ignore[misc]
    with pytest.raises(TypeError, match="budget= takes a JinjaBudget"):
        jinja("x", budget={"max_time": 1})  # type: ignore[arg-type]
    assert jinja("x", budget=SMALL) == jinja("x", budget=SMALL) != jinja("x")
    assert jinja("x", budget=SMALL).budget is SMALL


def test_each_render_has_its_own_budget() -> None:
    provider = jinja("{% for i in range(60) %}.{% endfor %}", budget=SMALL)
    assert [provider({}) for _ in range(5)] == ["." * 60] * 5


# --- only data prints ----------------------------------------------------------------------------------
def a_function() -> None:
    """A function in state: printing it would show its address."""


class Opaque:
    pass


def hostile_state() -> dict[str, Any]:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    return {"f": a_function, "o": Opaque(), "cls": Opaque, "mod": re, "gen": iter([1]), "cyc": cyclic, "s": "text"}


# Every way a value can become text; none may print an address.
PROBES = [
    ("print-global", "{{ range }}", JinjaUnprintableError),
    ("string-filter-global", "{{ range|string }}", JinjaUnprintableError),
    ("print-function", "{{ f }}", JinjaUnprintableError),
    ("print-class", "{{ cls }}", JinjaUnprintableError),
    ("print-module", "{{ mod }}", JinjaUnprintableError),
    ("print-generator", "{{ gen }}", JinjaUnprintableError),
    ("print-object", "{{ o }}", JinjaUnprintableError),
    ("tilde", "{{ o ~ '' }}", JinjaUnprintableError),
    ("percent", "{{ '%s' % o }}", JinjaUnprintableError),
    ("percent-repr", "{{ '%r' % (f,) }}", JinjaUnprintableError),
    ("format-filter", "{{ '%s'|format(f) }}", JinjaUnprintableError),
    ("format-filter-on-object", "{{ o|format }}", JinjaUnprintableError),
    ("str-format", "{{ '{}'.format(o) }}", JinjaUnprintableError),
    ("str-format-map", "{{ '{a}'.format_map({'a': f}) }}", JinjaUnprintableError),
    ("join", "{{ [o]|join }}", JinjaUnprintableError),
    ("pprint", "{{ f|pprint }}", JinjaUnprintableError),
    ("tojson", "{{ [o]|tojson }}", JinjaUnprintableError),
    ("list-of-methods", "{{ ['s']|map(attribute='upper')|list }}", JinjaUnprintableError),
    ("map-string", "{{ [o]|map('string')|list }}", JinjaUnprintableError),
    ("attribute-chain", "{{ s.upper }}", JinjaUnprintableError),
    ("method-to-string", "{{ s.upper|string }}", JinjaUnprintableError),
    ("range-object", "{{ range(3) }}", JinjaUnprintableError),
    ("loop-object", "{% for i in [1] %}{{ loop }}{% endfor %}", JinjaUnprintableError),
    ("loop-to-string", "{% for i in [1] %}{{ loop|string }}{% endfor %}", JinjaUnprintableError),
    ("loop-method", "{% for i in [1] %}{{ loop.cycle }}{% endfor %}", JinjaUnprintableError),
    ("namespace-class", "{{ namespace }}", JinjaUnprintableError),
    ("namespace-object", "{{ namespace(a=f)|string }}", JinjaUnprintableError),
    ("self", "{{ self }}", JinjaUnprintableError),
    ("macro", "{% macro m() %}{% endmacro %}{{ m|string }}", JinjaUnprintableError),
    ("escape-filter", "{{ f|e }}", JinjaUnprintableError),
    ("upper-filter", "{{ o|upper }}", JinjaUnprintableError),
    ("in-a-dict", "{{ {'a': o} }}", JinjaUnprintableError),
    ("dict-key", "{{ {cls: 1}|dictsort }}", JinjaUnprintableError),
    ("first", "{{ [f]|first|string }}", JinjaUnprintableError),
    ("cyclic-print", "{{ cyc }}", JinjaCyclicValueError),
    ("cyclic-string", "{{ cyc|string }}", JinjaCyclicValueError),
    ("cyclic-tojson", "{{ cyc|tojson }}", JinjaCyclicValueError),
    ("lipsum-removed", "{{ lipsum }}", JinjaUndefinedError),
    ("cycler-removed", "{{ cycler|string }}", JinjaUndefinedError),
    ("joiner-removed", "{{ joiner() }}", JinjaUndefinedError),
]
ADDRESS = re.compile(r"0x[0-9a-f]+|<function|<bound method|<built-in|<class|<module|<generator")


@pytest.mark.parametrize(("source", "kind"), [c[1:] for c in PROBES], ids=[c[0] for c in PROBES])
def test_only_data_prints(source: str, kind: type[JinjaError]) -> None:
    with pytest.raises(kind) as caught:
        jinja(source)(hostile_state())
    assert not ADDRESS.search(str(caught.value))
    if kind is not JinjaUndefinedError:
        assert caught.value.message.startswith("the Jinja2 sandbox refused to print: ")
        assert isinstance(caught.value, JinjaSecurityError)
    if kind is JinjaCyclicValueError:
        assert isinstance(caught.value, CyclicValueError)
        assert "contains itself" in caught.value.message


NAMED = [
    ("name", "{{ f }}", "{{ f }} is a function (a_function)"),
    ("attribute", "{{ s.upper }}", "{{ s.upper }} is a builtin_function_or_method (upper)"),
    ("filter", "{{ ['a']|map('upper') }}", "{{ ['a']|map('upper') }} is a generator"),
    ("inside", "{{ [1, o] }}", "{{ [1, o] }} holds a Opaque"),
    ("filter-input", "{{ o|string }}", "the value given to the string filter is a Opaque"),
]


@pytest.mark.parametrize(("source", "message"), [c[1:] for c in NAMED], ids=[c[0] for c in NAMED])
def test_a_refused_print_names_the_expression(source: str, message: str) -> None:
    with pytest.raises(JinjaUnprintableError) as caught:
        jinja(source)(hostile_state())
    assert caught.value.message == "the Jinja2 sandbox refused to print: " + message


DATA = [
    ("text-numbers-bools-none", "{{ s }} {{ 1 }} {{ 1.5 }} {{ true }} [{{ none }}]", "text 1 1.5 True []"),
    ("containers", "{{ {'a': [1, none, true]} }} {{ (1, 'b') }}", '{"a": [1, null, true]} [1, "b"]'),
    ("string-filter-on-data", "{{ 3|string }} {{ [1]|string }}", "3 [1]"),
    ("loop-index", "{% for i in 'ab' %}{{ loop.index|string }}{{ loop.index ~ '' }}{% endfor %}", "1122"),
    ("dates-and-decimals", "{{ when }} {{ price }} {{ when ~ '' }}", "2024-05-01 1.50 2024-05-01"),
    ("pprint-data", "{{ {'b': 1}|pprint }}", "{'b': 1}"),
    ("namespace-attribute", "{% set ns = namespace(a=2) %}{{ ns.a }}", "2"),
]


@pytest.mark.parametrize(("source", "expected"), [c[1:] for c in DATA], ids=[c[0] for c in DATA])
def test_data_still_prints(source: str, expected: str) -> None:
    import datetime
    from decimal import Decimal

    state = {**hostile_state(), "when": datetime.date(2024, 5, 1), "price": Decimal("1.50")}
    assert jinja(source)(state) == expected


def test_a_macro_or_loop_without_end_is_a_clear_error() -> None:
    with pytest.raises(JinjaBudgetError, match="nests too deeply") as caught:
        jinja("{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}")({})
    assert caught.value.budget == "recursion"


# --- the state keys a template reads (templating.jinja_mode.reads), as the mode maps names to keys

# (id, template, [(key, the text read, required)]): each key once, where it is first read
READS = [
    (
        "names-and-namespaces",
        "Hi {{ user.name }} ({{ state['user:name'] }}), {{ app.tier }}",
        [
            ("user:name", "user.name", True),
            ("app:tier", "app.tier", True),
        ],
    ),
    (
        "a-loop-and-its-locals",
        "{% for o in orders %}{{ o.id }} {{ loop.index }}{% endfor %}{% set n = 1 %}{{ n }}",
        [
            ("orders", "orders", True),
        ],
    ),
    (
        "guards",
        "{% if notes is defined %}{{ notes }}{% endif %}{{ tips | default('') }}{{ plan | d }}",
        [
            ("notes", "notes", False),
            ("tips", "tips", False),
            ("plan", "plan", False),
        ],
    ),
    (
        "a-guard-elsewhere-makes-it-optional",
        "{{ notes }} {% if notes is undefined %}-{% endif %}",
        [
            ("notes", "notes", False),
        ],
    ),
    (
        "not-a-guard-of-the-name",
        "{{ order.id | default('') }} {{ state.plan }} {{ temp [ 'step' ] }}",
        [
            ("order", "order", True),
            ("plan", "state.plan", True),
            ("temp:step", "temp [ 'step' ]", True),
        ],
    ),
    (
        "globals-literals-and-macros",
        "{{ range(2) | list }} {{ true }} {% macro m(a) %}{{ a }}{{ b }}{% endmacro %}{{ m(1) }}",
        [
            ("b", "b", True),
        ],
    ),
    ("a-method-of-state-is-a-key", "{{ state.get('x') }}", [("get", "state.get", True)]),
    ("dynamic-keys-are-unknown", "{% for k in keys %}{{ state[k] }}{% endfor %}", [("keys", "keys", True)]),
    (
        "whitespace-control",
        "a\n  {%- if flag -%}\n  {{ x }}\n  {%- endif %}",
        [
            ("flag", "flag", True),
            ("x", "x", True),
        ],
    ),
    ("windows-line-ends", "a\r\n{{ first }}\r\n{{ second }}", [("first", "first", True), ("second", "second", True)]),
    ("not-valid-jinja", "{% if x %}{{ y }}", []),
]


@pytest.mark.parametrize(("source", "expected"), [c[1:] for c in READS], ids=[c[0] for c in READS])
def test_state_reads_are_placed_where_they_are_written(source: str, expected: list[tuple[str, str, bool]]) -> None:
    from templating.jinja_mode.reads import state_reads

    reads = state_reads(source)
    assert [(r.key, source[r.start : r.end], r.required) for r in reads] == expected


EVERY_READ = [
    (
        "each-place-in-order",
        "Hi {{ name }}, {{ name | upper }}\n{% for o in orders %}{{ o }} {{ name }}{% endfor %}",
        [("name", "name"), ("name", "name"), ("orders", "orders"), ("name", "name")],
    ),
    ("twice-on-one-line", "{{ user.tier }}/{{ user.tier }}", [("user:tier", "user.tier"), ("user:tier", "user.tier")]),
    ("item-and-attribute", "{{ state['k'] }} {{ state.k }}", [("k", "state['k']"), ("k", "state.k")]),
    ("set-later-only-the-first", "{{ x }}{% set x = 1 %}{{ x }}", [("x", "x")]),
    ("loop-variable-is-no-key", "{% for x in xs %}{{ x }}{% endfor %}{{ xs }}", [("xs", "xs"), ("xs", "xs")]),
]


@pytest.mark.parametrize(("source", "expected"), [c[1:] for c in EVERY_READ], ids=[c[0] for c in EVERY_READ])
def test_state_reads_every_place(source: str, expected: list[tuple[str, str]]) -> None:
    """`every=True` gives each place a key is read (the editor's hover and definition), each a real read: with
    `every=False` the same keys, each at its first place."""
    from templating.jinja_mode.reads import state_reads

    every = state_reads(source, every=True)
    assert [(r.key, source[r.start : r.end]) for r in every] == expected
    first = {r.key: (r.start, r.end) for r in reversed(every)}
    assert [(r.key, (r.start, r.end)) for r in state_reads(source)] == sorted(first.items(), key=lambda i: i[1])


_RENDERED = [c for c in READS if c[0] not in ("not-valid-jinja", "a-method-of-state-is-a-key")]


@pytest.mark.parametrize(("source", "expected"), [c[1:] for c in _RENDERED], ids=[c[0] for c in _RENDERED])
def test_state_reads_are_what_rendering_looks_up(source: str, expected: list[tuple[str, str, bool]]) -> None:
    """With every key read given, the template renders; without a required one, it raises JinjaUndefinedError.
    (A key read only under a guard renders without it; one guarded somewhere and read elsewhere without a
    guard is not required either: the linter stays quiet rather than be wrong.)"""
    state: dict[str, Any] = {key: [] if key in ("orders", "keys") else "v" for key, _, _ in expected}
    jinja(source)(dict(state))
    for key, _, required in expected:
        if required:
            with pytest.raises(JinjaUndefinedError):
                jinja(source)({k: v for k, v in state.items() if k != key})


def test_keys_read_only_under_a_guard_may_be_missing() -> None:
    source = "{% if notes is defined %}{{ notes }}{% endif %}{{ tips | default('') }}{{ plan | d }}"
    assert jinja(source)({}) == ""


class _Overdrawn(BaseException):
    """Raised by `Endless` past any budget (a BaseException: no `except Exception` turns it into an error)."""


class Endless(Mapping[str, Any]):
    """A mapping whose keys never end (`k0`, `k1`, ... each holding "v"; `len()` lies): asked for more than
    `limit` keys, it fails the test instead of hanging it."""

    def __init__(self, limit: int = 1_000_000) -> None:
        self.limit = limit
        self.drawn = 0

    def __getitem__(self, key: str) -> Any:
        if isinstance(key, str) and key[:1] == "k" and key[1:].isdigit():
            return "v"
        raise KeyError(key)

    def __len__(self) -> int:
        return 2

    def __iter__(self) -> Iterator[str]:
        index = 0
        while True:
            self.drawn += 1
            if self.drawn > self.limit:
                raise _Overdrawn(f"{self.drawn} keys drawn: iterated past every budget")
            yield f"k{index}"
            index += 1


ENDLESS_TEMPLATES = [
    "{{ m }}",
    "{{ m|list }}",
    "{{ m|join(',') }}",
    "{{ ', '.join(m) }}",
    "{{ m|tojson }}",
    "{{ m|dictsort }}",
    "{{ m|sort }}",
    "{{ m|unique|list }}",
    "{{ m|items|list }}",
    "{{ m|reverse|list }}",
    "{{ m|max }}",
    "{{ m|last }}",
    "{{ m|sum }}",
    "{{ m|batch(2)|list }}",
    "{{ m|map('upper')|list }}",
    "{{ m|select|list }}",
    "{{ m ~ 'x' }}",
    "{{ m == {} }}",
    "{{ m.items()|list }}",
    "{% for k in m %}{% endfor %}",
    "{% for k, v in d.items() %}{{ v|list }}{% endfor %}",
    "{{ d.a == {} }}",
    "{{ d['a']|list }}",
    "{{ d.values()|first|list }}",
    "{{ (d.items()|first)[1] == {} }}",
]
ENDLESS_BUDGET = JinjaBudget(
    max_time=None, max_output=10_000, max_value=10_000, max_loop_steps=1_000, max_total=100_000
)


@pytest.mark.parametrize("source", ENDLESS_TEMPLATES)
def test_a_mapping_that_never_ends_stops_at_a_budget(source: str) -> None:
    """Whatever iterates a state mapping (a loop, a filter, a method, a comparison, printing), each key it
    draws is charged to a budget: one whose keys never end is an error, not a hang."""
    endless = Endless()
    with pytest.raises(TemplatingError):
        jinja(source, budget=ENDLESS_BUDGET)({"m": endless, "d": {"a": endless}})
    assert endless.drawn <= 20_000


class EndlessItems:
    """An iterable that is not a mapping and whose items never end: asked for more than `limit`, it fails
    the test instead of filling the memory of the process."""

    def __init__(self, limit: int = 1_000_000) -> None:
        self.limit = limit
        self.drawn = 0

    def __iter__(self) -> Iterator[int]:
        while True:
            self.drawn += 1
            if self.drawn > self.limit:
                raise _Overdrawn(f"{self.drawn} items drawn: iterated past every budget")
            yield self.drawn


ENDLESS_ITEMS_TEMPLATES = {
    "list": "{{ m|list }}",
    "join": "{{ m|join(',') }}",
    "str-join": "{{ ','.join(m) }}",
    "sum": "{{ m|sum }}",
    "sort": "{{ m|sort }}",
    "max": "{{ m|max }}",
    "unique": "{{ m|unique|list }}",
    "reverse": "{{ m|reverse|list }}",
    "batch": "{{ m|batch(2)|list }}",
    "map": "{{ m|map('string')|list }}",
    "select": "{{ m|select|list }}",
    "in": "{{ -1 in m }}",
    "loop": "{% for k in m %}{% endfor %}",
    "nested": "{{ d.a|list }}",
    "item": "{{ l[0]|list }}",
}


@pytest.mark.parametrize("source", ENDLESS_ITEMS_TEMPLATES.values(), ids=ENDLESS_ITEMS_TEMPLATES.keys())
@pytest.mark.parametrize("kind", ["object", "generator", "list-subclass"])
def test_an_iterable_that_never_ends_stops_at_a_budget(source: str, kind: str) -> None:
    """An iterable from state that is not a container of data (a generator, an object with its own
    `__iter__`, a list iterating with an `__iter__` of its own) is drawn under the value budget whatever
    consumes it, C-level `list()` and `in` included: an error, not a process filling its memory."""
    endless = EndlessItems()
    value = _endless(kind, endless)
    with pytest.raises(JinjaBudgetError):
        jinja(source, budget=ENDLESS_BUDGET)({"m": value, "d": {"a": value}, "l": [value]})
    assert endless.drawn <= 20_000


class EndlessList(list[int]):
    """A list from state that iterates with an `__iter__` of its own, which never ends."""

    def __init__(self, endless: EndlessItems) -> None:
        super().__init__([1, 2, 3])
        self.endless = endless

    def __iter__(self) -> Iterator[int]:
        return iter(self.endless)


def _endless(kind: str, endless: EndlessItems) -> Any:
    return {"object": endless, "generator": iter(endless), "list-subclass": EndlessList(endless)}[kind]


class _Sized:
    def __init__(self, size: int) -> None:
        self.size = size

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.size))

    def __len__(self) -> int:
        return self.size


FINITE_ITERABLES = {
    "length": ("{{ b|length }}", "4"),
    "list": ("{{ b|list }}", "[0, 1, 2, 3]"),
    "sum": ("{{ b|sum }}", "6"),
    "truth-full": ("{% if b %}y{% endif %}", "y"),
    "truth-empty": ("{% if e %}y{% else %}n{% endif %}", "n"),
    "in": ("{{ 2 in b }}", "True"),
    "generator-join": ("{{ g|join('-') }}", "a-b-c"),
    "generator-loop": ("{% for x in g %}{{ x }}{% endfor %}", "abc"),
    "map": ("{{ b|map('string')|join }}", "0123"),
}


@pytest.mark.parametrize(("source", "expected"), FINITE_ITERABLES.values(), ids=FINITE_ITERABLES.keys())
def test_an_iterable_that_ends_reads_as_before(source: str, expected: str) -> None:
    state = {"b": _Sized(4), "e": _Sized(0), "g": (letter for letter in "abc")}
    assert jinja(source)(state) == expected


ENDLESS_THROUGH_FILTERS = {
    "select-map-unique": "{{ m|select|map('string')|unique|join(',') }}",
    "reject-batch": "{{ m|reject('odd')|batch(3)|list }}",
    "select-slice": "{{ m|select('odd')|slice(3)|list }}",
    "map-reverse": "{{ m|map('string')|reverse|list }}",
    "in": "{{ -1 in m|select|map('abs') }}",
    "str-join": "{{ ','.join(m|map('string')|select) }}",
    "loop": "{% for x in m|select|map('string') %}{% endfor %}",
    "nested": "{{ l[0]|select|map('string')|list }}",
    "item-passed-on": "{{ l|select|first|list }}",  # `first` gives the state's own iterable: capped as it leaves
}


@pytest.mark.parametrize("source", ENDLESS_THROUGH_FILTERS.values(), ids=ENDLESS_THROUGH_FILTERS.keys())
@pytest.mark.parametrize("kind", ["object", "generator", "list-subclass"])
def test_an_iterable_that_never_ends_stops_at_a_budget_through_a_filter_chain(source: str, kind: str) -> None:
    """The filters' own generators are not wrapped again: what they draw from state is, so a chain of them
    over an iterable from state that never ends stops at a budget."""
    endless = EndlessItems()
    value = _endless(kind, endless)
    with pytest.raises(JinjaBudgetError):
        jinja(source, budget=ENDLESS_BUDGET)({"m": value, "l": [value]})
    assert endless.drawn <= 20_000


ORDERS = [{"id": f"A-{n}", "status": ("shipped", "pending")[n % 2]} for n in range(4)]
PIPELINES = {
    "selectattr-map-join": (
        "{{ orders|selectattr('status', 'equalto', 'shipped')|map(attribute='id')|join(', ') }}",
        "A-0, A-2",
    ),
    "unique-reverse": ("{{ orders|map(attribute='status')|unique|reverse|join(' ') }}", "pending shipped"),
    "batch-map-join": ("{{ orders|map(attribute='id')|batch(2)|map('join', '+')|join('; ') }}", "A-0+A-1; A-2+A-3"),
    "slice-length": ("{{ orders|rejectattr('status', 'equalto', 'shipped')|slice(2)|map('length')|list }}", "[1, 1]"),
    "in": ("{{ 'A-1' in orders|rejectattr('status', 'equalto', 'shipped')|map(attribute='id') }}", "True"),
    "loop": ("{% for id in orders|map(attribute='id')|reverse %}{{ id }} {% endfor %}", "A-3 A-2 A-1 A-0 "),
    "str-join": ("{{ '/'.join(orders|map(attribute='id')|select) }}", "A-0/A-1/A-2/A-3"),
    "generator-from-state": ("{{ g|map('upper')|join }}", "ABC"),
}


@pytest.mark.parametrize(("source", "expected"), PIPELINES.values(), ids=PIPELINES.keys())
def test_a_filter_pipeline_over_state_reads_as_before(source: str, expected: str) -> None:
    assert jinja(source)({"orders": ORDERS, "g": (letter for letter in "abc")}) == expected


def test_only_what_comes_from_state_is_capped() -> None:
    """What a filter builds from a value is passed on as it is (no second step per item); an iterable from
    state that is not a container of data is `Capped` when it is read."""
    from types import GeneratorType

    from templating.jinja_mode.budget import Capped
    from templating.jinja_mode.views import bounded

    filters = _ENVIRONMENT.filters
    made = {
        "unique": filters["unique"](_ENVIRONMENT, [1, 1, 2]),
        "batch": filters["batch"]([1, 2, 3], 2),
        "slice": filters["slice"]([1, 2, 3], 2),
        "reverse": filters["reverse"]([1, 2, 3]),
    }
    assert {name: type(value) is Capped for name, value in made.items()} == dict.fromkeys(made, False)
    assert type(made["unique"]) is GeneratorType
    assert [list(value) for value in made.values()] == [[1, 2], [[1, 2], [3]], [[1, 2], [3]], [3, 2, 1]]
    assert type(bounded(letter for letter in "abc")) is Capped
    drawing = filters["unique"](_ENVIRONMENT, iter("abc"))  # an iterator given to a filter: capped as it enters
    assert type(drawing) is GeneratorType
    assert type(drawing.gi_frame.f_locals["value"]) is Capped


@pytest.mark.parametrize(
    ("source", "message"),
    [
        pytest.param("{{ m|list }}", "a generator gave more than 10000 items", id="budget"),
        pytest.param("{{ m }}", "is a generator", id="print"),
        pytest.param("{{ m|length }}", "object of type 'generator' has no len()", id="length"),
    ],
)
def test_an_iterable_from_state_is_named_as_itself(source: str, message: str) -> None:
    with pytest.raises(TemplatingError, match=re.escape(message)):
        jinja(source, budget=ENDLESS_BUDGET)({"m": iter(EndlessItems())})


@pytest.mark.parametrize("source", ["{% for k in state %}{% endfor %}", "{{ state|list }}", "{{ nope }}"])
def test_a_state_that_never_ends_stops_at_a_budget(source: str) -> None:
    endless = Endless()
    with pytest.raises(TemplatingError):
        jinja(source, budget=ENDLESS_BUDGET)(endless)
    assert endless.drawn <= 200_000
