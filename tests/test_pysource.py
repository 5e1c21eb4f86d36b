"""Instructions inside Python code: found with ast (never run), each character placed in the .py file."""

from __future__ import annotations

import ast
import json
import os
import shutil
import sys
import textwrap
import unicodedata
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from linked_project import write_linked

from templating import Template, lint_project, parse
from templating.linter import lint_instruction, never_written, select_rules, skipped_findings
from templating.places import LinkedFolders
from templating.pysource import Instruction, PythonSourceError, Scan, scan


def scan_texts(files: dict[str, str], linted: list[str] | None = None) -> Scan:
    """Scan in-memory files (paths are only names here)."""

    def read(path: str) -> str:
        key = Path(path).as_posix()
        if key not in files:
            raise FileNotFoundError(path)
        return files[key]

    return scan(linted or list(files), read=read)


def decodes_to(piece: str, raw: bool) -> str:
    """What a slice of string-literal source stands for."""
    if piece == "\r\n":
        return "\n"
    if raw or not piece.startswith("\\"):
        return piece
    return str(ast.literal_eval('"' + piece + '"'))


def check_every_character(source: str, found: Instruction, raw: bool = False) -> None:
    previous = -1
    for i, ch in enumerate(found.text):
        _, span = found.locate(i, i + 1)
        assert span.start > previous, (i, span)
        previous = span.start
        piece = source[span.start : span.end]
        assert decodes_to(piece, raw) == ch, (i, piece, ch)
        line_start = source.rfind("\n", 0, span.start) + 1
        assert span.line == source.count("\n", 0, span.start) + 1
        assert span.column == span.start - line_start + 1


# --- the property: every character of a string literal maps back to the source that wrote it

_CHARS = st.characters(codec="utf-8", exclude_categories=("Cs",))


@st.composite
def encoded_part(draw: st.DrawFn, quote: str) -> tuple[str, str]:
    """(value, literal source) of one string part in a non-raw literal with ``quote``, escapes drawn."""
    value = draw(st.text(_CHARS, max_size=12))
    out = []
    for ch in value:
        options = []
        if ch not in "\\\r\x00" and ch != quote[0] and (ch != "\n" or len(quote) == 3):
            options.append(ch)
        if ch == "\n":
            options.append("\\n")
        if ch in "\\'\"":
            options.append("\\" + ch)
        if ord(ch) < 256:
            options += [f"\\x{ord(ch):02x}", f"\\{ord(ch):o}"]
        if ord(ch) < 0x10000:
            options.append(f"\\u{ord(ch):04x}")
        options.append(f"\\U{ord(ch):08x}")
        name = unicodedata.name(ch, None)
        if name is not None:
            options.append("\\N{" + name + "}")
        chosen = draw(st.sampled_from(options))
        if chosen.startswith("\\") and chosen[1] in "01234567":  # an octal escape must not swallow a digit
            chosen = f"\\{int(chosen[1:], 8):03o}"
        out.append(chosen)
        if draw(st.integers(0, 9)) == 0:
            out.append("\\\n")  # a line continuation: no character in the value
    if out and len(quote) == 3 and out[-1].endswith(quote[0]) and not out[-1].startswith("\\"):
        out[-1] = f"\\x{ord(quote[0]):02x}"  # the last " of a triple-quoted string would close it early
    body = "".join(out)
    prefix = draw(st.sampled_from(["", "u", "U"]))
    return value, f"{prefix}{quote}{body}{quote}"


@st.composite
def raw_part(draw: st.DrawFn, quote: str) -> tuple[str, str]:
    """A raw literal: backslashes stay (\\d is two characters)."""
    text = draw(st.text(_CHARS.filter(lambda c: c not in "\\'\"\r\n\x00"), max_size=10))
    letters = draw(st.lists(st.sampled_from("dnwsx"), max_size=3))
    value = text + "".join("\\" + letter for letter in letters)
    return value, f"{draw(st.sampled_from(['r', 'R']))}{quote}{value}{quote}"


@settings(max_examples=300, deadline=None)
@given(
    quotes=st.lists(st.sampled_from(['"', "'", '"""', "'''"]), min_size=1, max_size=3),
    raws=st.lists(st.booleans(), min_size=3, max_size=3),
    data=st.data(),
    separator=st.sampled_from([" ", "\n    ", "  # a comment\n    ", "\r\n  "]),
    lead=st.sampled_from(["x", "café", "数据"]),
)
def test_every_character_maps_to_its_source(
    quotes: list[str], raws: list[bool], data: st.DataObject, separator: str, lead: str
) -> None:
    parts = [data.draw(raw_part(q) if raw else encoded_part(q)) for q, raw in zip(quotes, raws, strict=False)]
    value = "".join(v for v, _ in parts)
    source = f"from templating import Template\n{lead} = Template(("
    raw_ranges = []
    for n, ((_, literal), raw) in enumerate(zip(parts, raws, strict=False)):
        source += separator if n else ""
        if raw:
            raw_ranges.append(range(len(source), len(source) + len(literal)))
        source += literal
    source += "))\n"
    found = scan_texts({"m.py": source}).instructions
    if not value:
        assert found == [] or found[0].text == ""
        return
    assert [f.text for f in found] == [value]
    previous = -1
    for i in range(len(value)):
        _, span = found[0].locate(i, i + 1)
        assert span.start > previous
        previous = span.start
        piece = source[span.start : span.end]
        raw = any(span.start in where for where in raw_ranges)
        assert decodes_to(piece, raw) == value[i], (i, piece)
        assert span.line == source.count("\n", 0, span.start) + 1
        assert span.column == span.start - (source.rfind("\n", 0, span.start) + 1) + 1


# (value, source) pieces of a line inside a non-raw triple-quoted literal: plain text and escapes
_DEDENT_PIECES = st.sampled_from(
    [(c, c) for c in "ab <>{}é"] + [("\t", "\\t"), ("A", "\\x41"), ("é", "\\u00e9"), ("\\", "\\\\"), ("<", "\\074")]
)


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(
        st.tuples(
            st.sampled_from(["", " ", "  ", "    ", "\t", "      ", "\\t", "  \\x20"]),
            st.lists(_DEDENT_PIECES, max_size=8),
        ),
        min_size=1,
        max_size=6,
    ),
    indent=st.sampled_from(["", "    ", "        "]),
    wrap=st.sampled_from([("{}", lambda v: v), ("{}.strip()", str.strip), ('"Intro. " + {}', lambda v: "Intro. " + v)]),
)
def test_dedent_keeps_every_character_in_place(
    lines: list[tuple[str, list[tuple[str, str]]]], indent: str, wrap: tuple[str, Callable[[str], str]]
) -> None:
    """textwrap.dedent over a literal with escapes (an escaped tab is margin too), then + and .strip()."""
    body = "\n".join(indent + pad + "".join(src for _, src in pieces) for pad, pieces in lines) + "\n"
    value = "\n".join(
        indent + pad.replace("\\t", "\t").replace("\\x20", " ") + "".join(v for v, _ in pieces) for pad, pieces in lines
    )
    value = textwrap.dedent(value + "\n")
    call = wrap[0].format(f'textwrap.dedent("""\\\n{body}""")')
    source = f"import textwrap\nfrom templating import Template\nTemplate({call})\n"
    expected = wrap[1](value)  # the same wrapping, applied to the value
    found = scan_texts({"m.py": source}).instructions
    if not expected:
        assert found == [] or found[0].text == ""
        return
    assert [f.text for f in found] == [expected]
    check_every_character(source, found[0])


# --- what is found: table-driven

PROMPT_MODULE = '''\
"""The prompts."""

ROOT_PROMPT = """
You help {user:name} plan a trip to {destination}.
"""

GREETING = "Hello {name}"
UNUSED_PROMPT = "Hi {nmae}"
NO_KEYS_PROMPT = "Nothing to fill in."
'''

# As ADK samples write them: the instruction returned by a function of a prompts module.
PROMPT_FUNCTIONS = '''import textwrap


def return_instructions_root() -> str:
    """The root agent's instruction."""
    instruction_prompt_root = """
    You are a data scientist. Answer {user:name} about {dataset_id}.
    Reply as JSON: {"answer": "..."}
    """
    return instruction_prompt_root


def return_instructions_sql() -> str:
    return textwrap.dedent("""\\
        Write SQL for {question}.
    """).strip()
'''

EXTRACT_CASES = [
    (
        "adk-agent-instruction-returned-by-a-function",
        {
            "ds/__init__.py": "from .prompts import return_instructions_sql\n",
            "ds/prompts.py": PROMPT_FUNCTIONS,
            "ds/agent.py": (
                "from google.adk.agents import Agent\n\nfrom . import prompts\n"
                "from .prompts import return_instructions_root\nfrom ds import return_instructions_sql\n\n"
                'root = Agent(name="root", instruction=return_instructions_root())\n'
                'sql = Agent(name="sql", instruction=prompts.return_instructions_sql())\n'
                'again = Agent(name="again", instruction=return_instructions_sql())\n'  # re-exported by ds/__init__.py
            ),
        },
        ["ds/agent.py"],
        [  # what a function returns is one instruction, however many agents call the function
            ('Agent(name="root").instruction', "adk", ("root", "root.instruction")),
            ('Agent(name="sql").instruction', "adk", ("sql", "sql.instruction", "again", "again.instruction")),
        ],
    ),
    (
        "the-same-text-from-the-same-places-is-one-instruction",
        {
            "m.py": (
                "from google.adk.agents import Agent\nBASE = 'Plan {plan}.'\nTAIL = ' Be brief.'\n"
                "a = Agent(name='a', instruction=BASE + TAIL)\nb = Agent(name='b', instruction=BASE + TAIL)\n"
                "c = Agent(name='c', instruction=BASE + ' Be kind.')\n"
            )
        },
        None,
        [
            ('Agent(name="a").instruction', "adk", ("a", "a.instruction", "b", "b.instruction")),
            ('Agent(name="c").instruction', "adk", ("c", "c.instruction")),
        ],
    ),
    (
        "function-returning-a-constant-aliases-and-module-aliases",
        {
            "pkg/__init__.py": "",
            "pkg/prompt.py": PROMPT_MODULE
            + "\n\ndef root():\n    def inner():\n        return 1\n    return ROOT_PROMPT\n",
            "app.py": (
                "from google.adk.agents import Agent\nfrom pkg.prompt import root as r\nimport pkg.prompt as p\n\n"
                'a = Agent(name="a", instruction=r())\n'
                'b = Agent(name="b", instruction=p.root())\n'
                'c = Agent(name="c", instruction=p.ROOT_PROMPT)\n'
            ),
        },
        ["app.py"],
        [("ROOT_PROMPT", "adk", ("ROOT_PROMPT", "a", "a.instruction", "b", "b.instruction", "c", "c.instruction"))],
    ),
    (
        "adk-agent-constant-from-prompt-module",
        {
            "pkg/prompt.py": PROMPT_MODULE,
            "pkg/agent.py": (
                "from google.adk.agents import LlmAgent\nfrom .prompt import ROOT_PROMPT\n\n"
                'root = LlmAgent(name="planner", instruction=ROOT_PROMPT)\n'
            ),
        },
        ["pkg/agent.py"],
        [("ROOT_PROMPT", "adk", ("ROOT_PROMPT", "planner", "planner.instruction", "root", "root.instruction"))],
    ),
    (
        "module-imported-then-attribute",
        {
            "pkg/prompt.py": PROMPT_MODULE,
            "pkg/agent.py": (
                "from google.adk import agents as adk\nfrom . import prompt\n\n"
                'root = adk.Agent(name="planner", global_instruction=prompt.GREETING)\n'
            ),
        },
        ["pkg/agent.py"],
        [("GREETING", "adk", ("GREETING", "planner", "planner.global_instruction", "root", "root.global_instruction"))],
    ),
    (
        "dotted-module-import-then-attributes",
        {
            "pkg/__init__.py": "",
            "pkg/prompt.py": PROMPT_MODULE,
            "app.py": (
                "import google.adk.agents\nimport pkg.prompt\nimport pkg.prompt as p\n\n"
                'a = google.adk.agents.LlmAgent(name="a", instruction=pkg.prompt.GREETING)\n'
                'b = google.adk.agents.LlmAgent(name="b", instruction=p.ROOT_PROMPT)\n'
            ),
        },
        ["app.py"],
        [
            ("GREETING", "adk", ("GREETING", "a", "a.instruction")),
            ("ROOT_PROMPT", "adk", ("ROOT_PROMPT", "b", "b.instruction")),
        ],
    ),
    (
        "adk-agent-imported-under-another-name",
        {
            "m.py": (
                "from google.adk.agents import LlmAgent as Planner\nfrom templating import Template as T\n"
                'PLAN = "Plan {trip}."\n'
                'a = Planner(name="a", instruction=PLAN + " Then {next}.")\n'
                'b = T("Hi <name>")\n'
            )
        },
        None,
        [('Planner(name="a").instruction', "adk", ("a", "a.instruction")), ("T(...)", "angle", ("b",))],
    ),
    (
        "static-str-parts-of-concat-and-when-are-not-templates",
        {
            "m.py": (
                "from templating import Template, concat, static, when\n"
                'p = concat("Rules <br> x << 2", static("<b>"), when(bool, "<i>"), Template("Hi <name>"))\n'
            )
        },
        None,
        [("Template(...)", "angle", ())],
    ),
    (
        "constants-used-as-python-format-strings-are-not-instructions",
        {
            "m.py": (
                "from google.adk.agents import LlmAgent\n"
                'SUMMARY_PROMPT = "Summarise {text}"\n'
                'CRITIC_PROMPT = "Critique {draft} in {lang}"\n'
                'LEGACY_PROMPT = "Order %s is {status}"\n'
                "def tool(text):\n    return SUMMARY_PROMPT.format(text=text), LEGACY_PROMPT % 1\n"
                'c = LlmAgent(name="c", instruction=CRITIC_PROMPT.format_map({"lang": "en"}))\n'
            )
        },
        None,
        [],
    ),
    (
        "constants-filled-in-by-python-code-are-not-instructions",
        {
            "m.py": (
                "import jinja2\nimport string\nfrom langchain_core.prompts import ChatPromptTemplate, PromptTemplate\n"
                'ALIAS_PROMPT = "Summarise {text} in {language}"\n'
                'REPLACE_PROMPT = "Translate {source_text} to French"\n'
                'STR_FORMAT_PROMPT = "Classify {ticket}"\n'
                'LC_PROMPT = "Answer {question} from {context}"\n'
                'LC_KW_PROMPT = "Rate {answer}"\n'
                'JINJA_PROMPT = "Hi {name} {{ x }}"\n'
                'STRING_TEMPLATE_PROMPT = "Hi $name, {literal}"\n'
                "def summarise(text):\n    template = ALIAS_PROMPT\n"
                "    return template.format(text=text, language='en')\n"
                "def translate(s):\n    return REPLACE_PROMPT.replace('{source_text}', s)\n"
                "def classify(t):\n    return str.format(STR_FORMAT_PROMPT, ticket=t)\n"
                "chain = ChatPromptTemplate.from_template(LC_PROMPT)\n"
                "rater = PromptTemplate(template=LC_KW_PROMPT, input_variables=['answer'])\n"
                "page = jinja2.Environment().from_string(JINJA_PROMPT)\n"
                "hello = string.Template(STRING_TEMPLATE_PROMPT).substitute(name='x')\n"
            )
        },
        None,
        [],
    ),
    (
        "a-constant-given-to-an-agent-through-a-local-name-is-one-instruction",
        {
            "m.py": (
                "from google.adk.agents import LlmAgent\n"
                'ROOT_PROMPT = "Help {user:name}"\n'
                "def build():\n    text = ROOT_PROMPT\n    return LlmAgent(name='r', instruction=text)\n"
            )
        },
        None,
        [("ROOT_PROMPT", "adk", ("ROOT_PROMPT", "r", "r.instruction"))],
    ),
    (
        "unused-xml-tagged-constant-is-angle-only-where-templating-is-used",
        {
            "adk/prompt.py": 'SYSTEM_PROMPT = "<role>Helpful.</role> <br>"\n',
            "ours/prompt.py": 'from templating import instruction\nSYSTEM_PROMPT = "<role>Helpful.</role> <br>"\n',
        },
        None,
        [("SYSTEM_PROMPT", "angle", ("SYSTEM_PROMPT",))],
    ),
    (
        "unused-constants-only-with-a-placeholder",
        {"pkg/prompt.py": PROMPT_MODULE},
        None,
        [("ROOT_PROMPT", "adk", ("ROOT_PROMPT",)), ("UNUSED_PROMPT", "adk", ("UNUSED_PROMPT",))],
    ),
    (
        "templating-calls-angle-jinja-adk",
        {
            "m.py": (
                "import templating as t\nfrom templating import Agent, Template, jinja, render\n"
                'a = t.instruction("Hi <name>")\n'
                'b = Template("{x}", dialect="adk")\n'
                'c = jinja("{{ name }}")\n'
                'd = render("<a>", {})\n'
                'e = Agent(name="helper", instruction="Use <tool>.")\n'
            )
        },
        None,
        [
            ("t.instruction(...)", "angle", ("a",)),
            ("Template(...)", "adk", ("b",)),
            ("jinja(...)", "jinja", ("c",)),
            ("render(...)", "angle", ()),
            ('Agent(name="helper").instruction', "angle", ("helper", "helper.instruction", "e", "e.instruction")),
        ],
    ),
    (
        "agent-given-a-constant-holding-templatings-own-provider-is-linted-once",
        {
            "m.py": (
                "from templating import Agent, instruction, jinja\n"
                'def build():\n    return Agent(name="early", instruction=J)\n'
                'P = instruction("Hi <name>")\n'
                'J = jinja("{{ x }}")\n'
                'a = Agent(name="x", instruction=P)\n'
            )
        },
        None,
        [
            ("jinja(...)", "jinja", ("J", "early", "early.instruction")),
            ("instruction(...)", "angle", ("P", "x", "x.instruction", "a", "a.instruction")),
        ],
    ),
    (
        "provider-inside-an-adk-agent-is-linted-once-as-angle",
        {
            "m.py": (
                "from google.adk.agents import Agent\nfrom templating import instruction\n"
                'a = Agent(name="x", instruction=instruction("Hi <name>"))\n'
            )
        },
        None,
        [("instruction(...)", "angle", ("x", "x.instruction", "a", "a.instruction"))],
    ),
    (
        "concatenation-plus-dedent-strip-and-local-names",
        {
            "m.py": (
                "import textwrap\nfrom google.adk.agents import LlmAgent\n"
                'BASE = "Be brief. "\n'
                "def build():\n"
                '    text = textwrap.dedent("""\n        Plan {plan}.\n    """).strip()\n'
                '    return LlmAgent(name="p", instruction=BASE + text)\n'
            )
        },
        None,
        [('LlmAgent(name="p").instruction', "adk", ("p", "p.instruction"))],
    ),
    (
        "unrelated-agent-class-is-not-an-instruction-site",
        {"m.py": 'class Agent:\n    pass\n\nAgent(instruction="{x}")\nprint("<b>")\n'},
        None,
        [],
    ),
]


@pytest.mark.parametrize(
    ("files", "linted", "expected"), [c[1:] for c in EXTRACT_CASES], ids=[c[0] for c in EXTRACT_CASES]
)
def test_what_is_found(
    files: dict[str, str], linted: list[str] | None, expected: list[tuple[str, str, tuple[str, ...]]]
) -> None:
    found = scan_texts(files, linted).instructions
    assert [(f.label, f.dialect, f.names) for f in found] == expected


def test_an_instruction_returned_by_a_function_is_read_at_its_place() -> None:
    (files,) = [dict(case[1]) for case in EXTRACT_CASES if case[0] == "adk-agent-instruction-returned-by-a-function"]
    root, sql = scan_texts(files, ["ds/agent.py"]).instructions
    assert root.text.strip().startswith("You are a data scientist. Answer {user:name}")
    assert sql.text == "Write SQL for {question}."
    for found in (root, sql):
        assert found.path == "ds/prompts.py"
        check_every_character(files["ds/prompts.py"], found)


def test_concatenated_instruction_text_and_places() -> None:
    (files,) = [dict(case[1]) for case in EXTRACT_CASES if case[0] == "concatenation-plus-dedent-strip-and-local-names"]
    found = scan_texts(files).instructions[0]
    assert found.text == "Be brief. Plan {plan}."
    check_every_character(files["m.py"], found)


SKIP_CASES = [
    ("f-string", 'Agent(name="a", instruction=f"Hi {x}")', "an f-string"),
    ("call", 'Agent(name="a", instruction=load("p.txt"))', "a call (load(...))"),
    ("provider-function", 'Agent(name="a", instruction=provide)', "'provide' is a function (an instruction provider)"),
    ("parameter", "def make(text):\n    return Agent(name='a', instruction=text)", "'text' is a parameter"),
    ("outside-module", 'Agent(name="a", instruction=OTHER)', "'OTHER' is imported from a module outside"),
    ("rebound-local", "def f():\n    t = 'a'\n    t += 'b'\n    return Agent(name='a', instruction=t)", "bound more"),
    # a function called without arguments is followed to its one final return; what it returns decides
    (
        "returns-an-f-string",
        "def p():\n    return f'Hi {x}'\nAgent(name='a', instruction=p())",
        "p() returns: an f-string",
    ),
    ("returns-a-parameter", "def p(t='x'):\n    return t\nAgent(name='a', instruction=p())", "'t' is a parameter"),
    ("called-with-arguments", "def p(t):\n    return t\nAgent(name='a', instruction=p('x'))", "p() is called with"),
    (
        "return-inside-if",
        "def p(a=1):\n    if a:\n        return 'x'\nAgent(name='a', instruction=p())",
        "does not end",
    ),
    (
        "return-inside-try",
        "def p():\n    try:\n        return 'x'\n    except OSError:\n        raise\nAgent(name='a', instruction=p())",
        "does not end in its one return",
    ),
    (
        "bare-return",
        "def p():\n    print('x')\n    return\nAgent(name='a', instruction=p())",
        "does not end in its one",
    ),
    ("recursive", "def p():\n    return p()\nAgent(name='a', instruction=p())", "p() calls itself"),
    (
        "mutually-recursive",
        "def p():\n    return q()\ndef q():\n    return p()\nAgent(name='a', instruction=p())",
        "p() calls itself",
    ),
    ("async", "async def p():\n    return 'x'\nAgent(name='a', instruction=p())", "p() is an async function"),
    ("decorated", "@cache\ndef p():\n    return 'x'\nAgent(name='a', instruction=p())", "p() is a decorated function"),
    ("generator", "def p():\n    yield 'x'\n    return 'y'\nAgent(name='a', instruction=p())", "p() is a generator"),
    (
        "returns-in-two-places",
        "def p(a=1):\n    if a:\n        return 'x'\n    return 'y'\nAgent(name='a', instruction=p())",
        "p() is a function that does not end in its one return",
    ),
    ("returns-nothing", "def p():\n    print('x')\nAgent(name='a', instruction=p())", "does not end in its one return"),
    (
        "a-local-function",
        "def f():\n    def p():\n        return 'x'\n    return Agent(name='a', instruction=p())",
        "a call (p(...))",
    ),
]


@pytest.mark.parametrize(("code", "reason"), [c[1:] for c in SKIP_CASES], ids=[c[0] for c in SKIP_CASES])
def test_dynamic_values_are_skipped_with_the_reason(code: str, reason: str) -> None:
    source = (
        "from google.adk.agents import Agent\nfrom elsewhere import OTHER\n"
        f"def provide(ctx):\n    return 'x'\n\n{code}\n"
    )
    result = scan_texts({"m.py": source})
    assert result.instructions == []
    assert len(result.skipped) == 1
    assert reason in result.skipped[0].reason
    (finding,) = skipped_findings(result)
    assert finding.code == "T015"
    assert finding.severity == "info"
    assert finding.path == "m.py"
    assert source.splitlines()[finding.span.line - 1][finding.span.column - 1 :].startswith(
        source[finding.span.start : finding.span.end]
    )


ENCODED = [
    # (name, the file's bytes, the instruction's text or None when the file is refused, where it starts)
    (
        "coding-line",
        b"# -*- coding: latin-1 -*-\nfrom google.adk.agents import Agent\n"
        b'A = Agent(name="a", instruction="Gr\xfc\xdfe {name}")\n',
        "Grüße {name}",
        (3, 34),
    ),
    (
        "utf8-bom",
        b"\xef\xbb\xbffrom google.adk.agents import Agent\n"
        b'A = Agent(name="a", instruction="Gr\xc3\xbc\xc3\x9fe {name}")\n',
        "Grüße {name}",
        (2, 34),
    ),
    (
        "utf8",
        'from google.adk.agents import Agent\nA = Agent(name="a", instruction="Grüße {name}")\n'.encode(),
        "Grüße {name}",
        (2, 34),
    ),
    (  # Python refuses the file; read as UTF-8, it is linted all the same
        "a-codec-that-is-no-text-encoding",
        b"# coding: rot13\nfrom google.adk.agents import Agent\n"
        b'A = Agent(name="a", instruction="Gr\xc3\xbc\xc3\x9fe {name}")\n',
        "Grüße {name}",
        (3, 34),
    ),
    (
        "not-utf8-without-a-coding-line",
        b'from google.adk.agents import Agent\nA = Agent(name="a", instruction="Gr\xfc\xdfe {name}")\n',
        None,
        (2, 36),
    ),
]


@pytest.mark.parametrize(("data", "text", "where"), [c[1:] for c in ENCODED], ids=[c[0] for c in ENCODED])
def test_scan_reads_files_as_python_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes, text: str | None, where: tuple[int, int]
) -> None:
    """``scan()``'s own reader honours a PEP 263 coding line and a byte order mark, as the command line does."""
    monkeypatch.chdir(tmp_path)
    Path("agent.py").write_bytes(data)
    if text is None:
        with pytest.raises(PythonSourceError, match=r"byte 0xfc is not UTF-8") as info:
            scan(["agent.py"])
        assert (info.value.span.line, info.value.span.column) == where
        return
    (found,) = scan(["agent.py"]).instructions
    assert found.text == text
    assert (found.span.line, found.span.column) == where


def test_a_file_that_is_not_python_is_an_error_naming_the_place() -> None:
    with pytest.raises(PythonSourceError, match=r"bad\.py:2:\d+: not valid Python"):
        scan_texts({"bad.py": "x = 1\nif x\n"})


@pytest.mark.parametrize(
    ("text", "line", "column", "marked"),
    [
        ("x = 1\nif x\n", 2, 5, "\n"),
        ("x = 1\r\nif x\r\n", 2, 5, "\r"),
        ("def f(:\n    pass\n", 1, 7, ":"),
        ('café = "é" +\n', 1, 13, "\n"),  # columns count characters, not UTF-8 bytes
        ("x = (\n", 1, 5, "("),
        ("x = 1  # a page break: \f\nif x\n", 2, 5, "\n"),  # \f and \u2028 end no line, for Python
        ('s = "\u2028"\nif x\n', 2, 5, "\n"),
    ],
    ids=["end-of-line", "crlf", "mid-line", "non-ascii", "unclosed-bracket", "form-feed", "line-separator"],
)
def test_a_syntax_error_is_placed_in_the_file(text: str, line: int, column: int, marked: str) -> None:
    with pytest.raises(PythonSourceError) as info:
        scan_texts({"bad.py": text})
    error = info.value
    assert (error.path, error.span.line, error.span.column) == ("bad.py", line, column)
    assert error.message == f"bad.py:{line}:{column}: {error.reason}"
    assert text[error.span.start : error.span.start + 1] == marked
    assert error.source == text


# Python 3.12 syntax in agent code: read whatever Python runs the linter (3.11 included), with every
# instruction and state write beside it found at its place.
NEWER_SYNTAX = [
    ("type-alias", "type Handler = dict[str, str]\n"),
    ("generic-type-alias", "type Pair[T] = tuple[T, T]\n"),
    ("generic-function", "def first[T](items: list[T]) -> T:\n    return items[0]\n"),
    ("generic-class", "class Box[T: (int, str), *Ts, **P]:\n    pass\n"),
    ("generic-method", "class Repo:\n    async def get[K](self, key: K) -> K:\n        return key\n"),
    ("multi-line-parameters", "def pick[\n    T,\n    U,\n](a: T, b: U) -> T:\n    return a\n"),
    ("alias-after-semicolon", "x = 1; type Row = list[int]\n"),
    ("f-string-reusing-its-quotes", "x = f\"{d[\"k\"]}\" + f'{d['k']!r:>10}'\n"),
    ("f-string-nested", 'x = f"{f"{f"{1}"}"}" + f"""{"a" + """b"""}"""\n'),
    ("f-string-backslash-and-comment", "x = f\"{'\\n'.join(a)}\" + f'''{\n1 # one\n}'''\n"),
    ("f-string-format-spec", 'x = f"{n:\'>10}" + f"{d["k"]:>{w}}" + f"{{literal}} {a!=b}"\n'),
    ("f-string-and-type-parameters", 'def f[T](x: T) -> str:\n    return f"{x["k"]}"\n'),
    ("f-string-issue-25", 'x = f"{f(\'... "table"\')}"\ny = f"{f(\'SELECT * FROM "table" WHERE id = 1\')}"\n'),
    (
        "f-string-nested-string-holding-its-quote",
        'x = f"{q(\'select * from "table"\')}" + f"{q(\'... "t"\')} {q("x")}"\n',
    ),
    ("f-string-triple-quoted-holding-a-quote", 'x = f"""{q(\'a " b\')} {d["k"]}"""\n'),
    ("f-string-field-over-lines", 'x = f"{a\n    + b}" + f\'{", ".join([\n    "a",\n])}\'\n'),
    ("f-string-field-over-crlf-lines", 'x = f"{a\r\n    + b}"\r\n'),
    ("f-string-comment-in-one-line-string", 'x = f"{a  # the a\n}"\n'),
    ("f-string-backslash-in-nested-string", "x = f\"{'\\t'.join(a)}\" + f'{a!r:>{\"\\n\".count(b)}}'\n"),
    ("type-parameter-defaults", "type Pair[T = int] = tuple[T, T]\ndef f[T = str](x: T) -> T:\n    return x\n"),
    ("type-parameters-not-ascii", "def f[Tü](x: Tü) -> Tü:\n    return x\nclass Bäx[T]:\n    pass\n"),
    ("type-as-a-name", "type = 3\ntype(x)\nprint(type)\ndef f[T](type: T) -> T:\n    return type\n"),
]


@pytest.mark.parametrize("code", [c for _, c in NEWER_SYNTAX], ids=[i for i, _ in NEWER_SYNTAX])
def test_python_312_syntax_is_read_under_any_python(code: str) -> None:
    head = "from google.adk.agents import LlmAgent\n" + code
    tail = 'agent = LlmAgent(name="a", instruction="Hi 🙂 {user:name}", output_key="done")\n'
    tail += "def tool(tool_context):\n    tool_context.state['user:name'] = 1\n"
    text = head + tail
    result = scan_texts({"agent.py": text})
    (found,) = result.instructions
    assert found.text == "Hi 🙂 {user:name}"
    start = found.text.index("{")
    path, span = found.locate(start, start + len("{user:name}"))
    assert (path, span.line) == ("agent.py", head.count("\n") + 1)
    assert text[span.start : span.end] == "{user:name}"
    assert text.splitlines()[span.line - 1][span.column - 1 :].startswith("{user:name}")
    assert result.written == {"done", "user:name"}


def test_an_f_string_only_312_reads_is_still_an_f_string() -> None:
    source = 'from google.adk.agents import LlmAgent\nLlmAgent(name="b", instruction=f"Hi {ctx["name"]} 🙂")\n'
    result = scan_texts({"m.py": source})
    assert result.instructions == []
    (skipped,) = result.skipped
    assert skipped.reason.startswith("an f-string")
    assert (skipped.span.line, skipped.span.column) == (2, 32)


# Files no Python accepts: an error (E002) where Python 3.12 reports it, 3.12 syntax before it read (id, source,
# line and column of the error), and no hint to run a newer Python, which would refuse the file too.
NO_NEWER_PYTHON_HINT = [
    ("unclosed-bracket", "PROMPT = (\n    '<b>Plan</b> {trip}'\n", 1, 10),
    ("unterminated-string", "PROMPT = '## Plan {trip}\n", 1, 10),
    ("null-byte", "PROMPT = 'a'\x00\n", 1, 1),
    ("unmatched-bracket", "PROMPT = '{trip}')\n", 1, 18),
    ("unexpected-indent", "PROMPT = 'x'\n    OTHER = 'y'\n", 2, 4),
    ("after-a-type-alias", "type X = int\nif x\n", 2, 5),
    ("after-an-f-string-reusing-its-quote", 'A = f"{d["k"]}" + f"{q(\'"t"\')}"\nif x\n', 2, 5),
    ("after-an-f-string-over-lines", 'A = f"{a\n  + b}"\nif x\n', 3, 5),
    ("jinja-templated-module", "{% if tools %}\nfrom .tools import search\n{% endif %}\nPROMPT = '{{ p }}'\n", 1, 2),
    ("jinja-templated-statement", "def f():\n    {% for x in xs %}\n    pass\n", 2, 6),
    ("ten-thousand-nested-parentheses", "x = " + "(" * 10_000 + ")" * 10_000 + "\n", 1, 205),
    ("template-string-then-a-mistake", 'PROMPT = t"Hi {name}"\nif x\n', 2, 5),  # 3.14 refuses it too
    ("except-without-parentheses-then-a-mistake", "try:\n    pass\nexcept A, B:\n    pass\nif x\n", 5, 5),
    ("except-without-parentheses-with-as", "try:\n    pass\nexcept A, B as e:\n    pass\n", 3, 8),
]


@pytest.mark.parametrize(
    ("source", "line", "column"), [c[1:] for c in NO_NEWER_PYTHON_HINT], ids=[c[0] for c in NO_NEWER_PYTHON_HINT]
)
def test_errors_no_python_accepts_get_no_newer_python_hint(source: str, line: int, column: int) -> None:
    with pytest.raises(PythonSourceError) as info:
        scan_texts({"bad.py": source})
    if "\x00" not in source:  # null bytes: Python gives no position
        assert (info.value.span.line, info.value.span.column) == (line, column)
    assert info.value.help is None


# Syntax of a Python newer than 3.12 (3.14's template strings, its except without parentheses): Python 3.11
# to 3.13 refuse the file, a newer one accepts it, and the help says to run templating under it.
NEWER_THAN_312 = [
    ("template-string", 'PROMPT = t"Hi {name}"\n', 1, 10),
    ("raw-template-string", "PROMPT = rt'Hi {name}' + Tr'x'\n", 1, 11),
    ("except-without-parentheses", "try:\n    pass\nexcept KeyError, ValueError:\n    pass\n", 3, 8),
    ("except-expressions", "try:\n    pass\nexcept (A), b.C, d[0]:\n    pass\n", 3, 8),
    ("template-string-beside-a-312-f-string", 'A = f"{d["k"]}"\nPROMPT = t"Hi {name}"\n', 2, 10),
]


@pytest.mark.skipif(sys.version_info >= (3, 14), reason="Python 3.14 reads these")
@pytest.mark.parametrize(
    ("source", "line", "column"), [c[1:] for c in NEWER_THAN_312], ids=[c[0] for c in NEWER_THAN_312]
)
def test_syntax_of_a_newer_python_gets_the_newer_python_hint(source: str, line: int, column: int) -> None:
    with pytest.raises(PythonSourceError) as info:
        scan_texts({"new.py": source})
    assert info.value.span.line == line
    assert info.value.help is not None
    assert "run templating under that version" in info.value.help
    assert f"read by Python {sys.version_info[0]}.{sys.version_info[1]}" in info.value.help


@pytest.mark.parametrize(
    "source",
    ["except (KeyError, ValueError) as e, f:\n", "x = t + 'a'\nif x\n", "x = at'b'\n"],
    ids=["except-with-as", "a-name-t", "a-name-ending-in-t"],
)
def test_look_alikes_of_newer_syntax_get_no_hint(source: str) -> None:
    with pytest.raises(PythonSourceError) as info:
        scan_texts({"bad.py": source})
    assert info.value.help is None


def test_keep_going_records_a_file_that_is_not_python_and_scans_the_others() -> None:
    files = {
        "agents/bad.py": "def broken(:\n",
        "agents/agent.py": 'from google.adk.agents import Agent\nAgent(name="a", instruction="Hi {name}")\n',
        "agents/tools.py": 'def t(tool_context):\n    tool_context.state["name"] = "Ada"\n',
    }

    def read(path: str) -> str:
        return files[Path(path).as_posix()]

    result = scan(list(files), read=read, keep_going=True)
    assert [(e.path, e.span.line, e.span.column) for e in result.errors] == [("agents/bad.py", 1, 12)]
    assert [i.text for i in result.instructions] == ["Hi {name}"]
    assert result.sources["agents/bad.py"] == files["agents/bad.py"]
    # what the broken file writes is unknown: no key can be said to be never written
    assert result.written is None
    del files["agents/bad.py"]
    assert scan(list(files), read=read, keep_going=True).written == frozenset({"name"})


def test_an_unreadable_import_is_not_followed() -> None:
    source = "from google.adk.agents import Agent\nfrom .prompt import P\nAgent(name='a', instruction=P)\n"
    result = scan_texts({"pkg/agent.py": source, "pkg/prompt.py": "P = (\n"}, ["pkg/agent.py"])
    assert result.instructions == []
    assert "outside the linted files" in result.skipped[0].reason


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks as on POSIX")
@pytest.mark.parametrize("importer", ["from loop import P", "from pkg.loop import P"], ids=["module", "in-package"])
def test_an_import_of_a_symlink_loop_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, importer: str
) -> None:
    (tmp_path / "pkg").mkdir()
    for folder in (tmp_path, tmp_path / "pkg"):
        (folder / "loop.py").symlink_to(folder / "loop.py")  # resolving it loops
    (tmp_path / "agent.py").write_text(
        f"from google.adk.agents import Agent\n{importer}\nAgent(name='a', instruction=P)\n", encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    result = scan(["agent.py"])
    assert result.instructions == []
    assert "outside the linted files" in result.skipped[0].reason
    assert list(result.sources) == ["agent.py"]


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks as on POSIX")
@pytest.mark.parametrize(
    "importer", ["from .sub.words import P", "from pkg.sub.words import P"], ids=["relative", "absolute"]
)
def test_a_module_imported_through_a_linked_folder_is_named_by_its_real_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, importer: str
) -> None:
    """`pkg/sub` -> `../real_sub`: the module is the file `real_sub/words.py` (as a run lists its files), however
    the import names it."""
    for name, text in {
        "pkg/__init__.py": "",
        "pkg/agent.py": f"from google.adk.agents import Agent\n{importer}\nAgent(name='a', instruction=P)\n",
        "real_sub/__init__.py": "",
        "real_sub/words.py": "P = 'Hi {name}'\n",
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "pkg/sub").symlink_to("../real_sub")
    monkeypatch.chdir(tmp_path)
    result = scan(["pkg/agent.py"])
    assert [(item.path, item.text) for item in result.instructions] == [("real_sub/words.py", "Hi {name}")]
    assert "real_sub/words.py" in result.sources


_UP_TOOLS = """\
from google.adk.tools import ToolContext

from .helpers import clean
from {memory} import remember


def note_topic(topic: str, tool_context: ToolContext) -> dict:
    remember(tool_context.state, clean(topic))
    return {{"ok": True}}
"""


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks as on POSIX")
@pytest.mark.parametrize(
    ("tools", "memory", "linked", "expected"),
    [
        pytest.param("real_sub/tools.py", "..memory", True, ["app/memory.py"], id="up-out-of-the-link-from-its-side"),
        pytest.param("real_sub/tools.py", "..memory", False, ["memory.py"], id="without-the-links-the-real-parent"),
        pytest.param("real_sub/deeper/tools.py", "...memory", True, ["app/memory.py"], id="from-a-folder-below"),
        pytest.param("real_sub/tools.py", ".helpers", True, ["real_sub/helpers.py"], id="inside-the-target-unchanged"),
        pytest.param("real_sub/tools.py", "..nowhere", True, [], id="found-on-neither-side"),
    ],
)
def test_a_relative_import_up_out_of_a_linked_folder_starts_next_to_the_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tools: str, memory: str, linked: bool, expected: list[str]
) -> None:
    """`app/sub` -> `../real_sub`: `from ..memory import remember` in the module imported as `app.sub.tools` is
    `app.memory` to Python (checked by running google-adk: the tool's write reaches the session), not the
    `memory.py` beside `real_sub`; an import that stays inside `real_sub` reaches the same file either way."""
    helpers = 'def clean(text):\n    return text\n\ndef remember(memory, topic):\n    memory["mine"] = topic\n'
    files = {
        "app/__init__.py": "",
        "app/agent.py": "from .sub.tools import note_topic\n",
        "app/memory.py": 'def remember(memory, topic):\n    memory["app/memory.py"] = topic\n',
        "memory.py": 'def remember(memory, topic):\n    memory["memory.py"] = topic\n',
        "real_sub/__init__.py": "",
        "real_sub/helpers.py": helpers.replace('"mine"', '"real_sub/helpers.py"'),
        "real_sub/deeper/__init__.py": "",
        "real_sub/deeper/helpers.py": helpers,
        tools: _UP_TOOLS.format(memory=memory),
    }
    write_linked(tmp_path, files=files)
    monkeypatch.chdir(tmp_path)
    links = LinkedFolders([("app/sub", str((tmp_path / "real_sub").resolve()))]) if linked else None
    result = scan(sorted(files), links=links)
    assert [write.key for write in result.writes] == expected
    assert all(write.path == write.key for write in result.writes)  # (each module writes its own path's key)


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks as on POSIX")
@pytest.mark.parametrize("packaged", [True, False], ids=["lib-a-package", "lib-no-package"])
def test_a_linked_folder_is_read_from_the_link_side_first_even_inside_a_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, packaged: bool
) -> None:
    """`app/sub` -> `../lib/shared`: `app.sub.tools` imports `..memory` as `app.memory` (what Python runs when the
    app imports its tools), whether or not `lib` is a package that could also import `lib.shared.tools` (whose
    `..memory` would be `lib/memory.py`): a module is scanned once, and the link's side comes first."""
    files = {
        "app/__init__.py": "",
        "app/agent.py": "from .sub.tools import note_topic\n",
        "app/memory.py": 'def remember(memory, topic):\n    memory["app/memory.py"] = topic\n',
        "lib/memory.py": 'def remember(memory, topic):\n    memory["lib/memory.py"] = topic\n',
        "lib/shared/__init__.py": "",
        "lib/shared/helpers.py": "def clean(text):\n    return text\n",
        "lib/shared/tools.py": _UP_TOOLS.format(memory="..memory"),
    }
    if packaged:
        files["lib/__init__.py"] = ""
    write_linked(tmp_path, files=files, to="../lib/shared")
    monkeypatch.chdir(tmp_path)
    links = LinkedFolders([("app/sub", str((tmp_path / "lib/shared").resolve()))])
    result = scan(sorted(files), links=links)
    assert [(write.key, write.path) for write in result.writes] == [("app/memory.py", "app/memory.py")]


def test_a_relative_import_going_above_the_current_folder_reads_the_module_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Linted from `pkg/app` (a folder below the project's root: `templating lint ../..`), `from ..memory import
    remember` in `agent.py` is `pkg/memory.py`, as Python imports `pkg.app.agent`, named absolute as a file outside
    the current folder is; not `pkg/app/memory.py` (going up stopped at the current folder)."""
    agent = _UP_TOOLS.format(memory="..memory").replace("from .helpers import clean\n", "")
    for name, text in {
        "pkg/__init__.py": "",
        "pkg/memory.py": 'def remember(memory, topic):\n    memory["topic"] = topic\n',
        "pkg/app/__init__.py": "",
        "pkg/app/memory.py": 'def remember(memory, topic):\n    memory["other"] = topic\n',
        "pkg/app/agent.py": agent.replace("clean(topic)", "topic"),
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path / "pkg/app")
    memory = str(tmp_path / "pkg/memory.py")
    result = scan(["agent.py", memory, "memory.py"])
    assert [(write.key, write.path) for write in result.writes] == [("topic", memory)]


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks as on POSIX")
@pytest.mark.parametrize("named", ["relative", "absolute"])
def test_a_module_found_next_to_a_link_is_named_as_its_importer_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named: str
) -> None:
    """The prompt `real_sub/words.py` imports from `..texts` is `app/texts.py` (through the link `app/sub`), named
    as the importing file is: relative to the current folder, or absolute (the editor's index names files so)."""
    agent = "from google.adk.agents import Agent\nfrom .sub.words import P\nAgent(name='a', instruction=P)\n"
    texts = {"app/__init__.py": "", "app/agent.py": agent, "app/texts.py": "GREETING = 'Hi {name}'\n"}
    texts |= {"real_sub/__init__.py": "", "real_sub/words.py": "from ..texts import GREETING\n\nP = GREETING\n"}
    write_linked(tmp_path, files=texts)
    monkeypatch.chdir(tmp_path)
    paths = ["real_sub/words.py", "app/agent.py"]
    if named == "absolute":
        paths = [str(tmp_path / path) for path in paths]
    links = LinkedFolders([("app/sub", str((tmp_path / "real_sub").resolve()))])
    result = scan(paths, links=links)
    texts = "app/texts.py" if named == "relative" else str(tmp_path / "app/texts.py")
    assert [(item.path, item.text) for item in result.instructions] == [(texts, "Hi {name}")]


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks as on POSIX")
def test_a_module_outside_the_current_folder_is_named_as_its_importer_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files named through a link (`/tmp` -> `/private/tmp` on macOS), the current folder elsewhere: the module a
    relative import finds keeps the name its importer was given, as the run lists the files it was named."""
    (tmp_path / "real/pkg").mkdir(parents=True)
    (tmp_path / "real/pkg/agent.py").write_text(
        "from google.adk.agents import Agent\nfrom .words import P\nAgent(name='a', instruction=P)\n", encoding="utf-8"
    )
    (tmp_path / "real/pkg/words.py").write_text("P = 'Hi {name}'\n", encoding="utf-8")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    result = scan([str(tmp_path / "link/pkg/agent.py")])
    assert [item.path for item in result.instructions] == [str(tmp_path / "link/pkg/words.py")]


# --- linting in each dialect, at the place in the .py file

LINT_CASES = [
    # (id, module source, code, the text the finding points at)
    ("angle-near-miss", 'from templating import instruction\ni = instruction("Hi < name >")\n', "T002", "< name >"),
    (
        "angle-through-escapes",
        'from templating import Template\nt = Template("a\\tb\\n" "c <usr:name>")\n',
        "T003",
        "<usr:name>",
    ),
    (
        "adk-temp-key",
        'from google.adk.agents import Agent\na = Agent(name="a", instruction="Step { temp:step }")\n',
        "T012",
        "{ temp:step }",
    ),
    (
        "adk-eaten-brace-through-escapes",
        'from google.adk.agents import Agent\na = Agent(name="a", instruction="JSON: {\\"id\\": {order_id}}")\n',
        "T016",
        "{order_id}}",
    ),
    (
        "adk-near-miss-in-implicit-concatenation",
        'from google.adk.agents import Agent\na = Agent(\n    name="a",\n'
        '    instruction="Hi "\n    "{user-name}.",\n)\n',
        "T019",
        "{user-name}",
    ),
    (
        "jinja-syntax",
        'from templating import jinja\np = jinja("""Hello\n{% if x %}never closed""")\n',
        "E001",
        "if",  # what Jinja's message quotes, on the line it names
    ),
]


@pytest.mark.parametrize(("source", "code", "flagged"), [c[1:] for c in LINT_CASES], ids=[c[0] for c in LINT_CASES])
def test_findings_point_into_the_python_file(source: str, code: str, flagged: str) -> None:
    (found,) = scan_texts({"m.py": source}).instructions
    findings = lint_instruction(found, select=select_rules(select="ALL"))
    assert [d.code for d in findings] == [code]
    span = findings[0].span
    assert span is not None
    assert source[span.start : span.end] == flagged
    assert findings[0].path == "m.py"
    assert findings[0].origin == found.label


def test_adk_instructions_get_no_angle_syntax_rules() -> None:
    source = (
        "from google.adk.agents import Agent\n"
        'a = Agent(name="a", instruction="<itinerary>\\n{itinerary}\\n</itinerary> < name > <br> {nick}")\n'
    )
    (found,) = scan_texts({"m.py": source}).instructions
    findings = lint_instruction(found, schema=["itinerary", "nick?"], select=select_rules(select="ALL"))
    assert [(d.code, source[d.span.start : d.span.end]) for d in findings if d.span] == [("T009", "{nick}")]


# --- T014: keys read that nothing writes

WRITES = """\
from google.adk.agents import LlmAgent
from google.adk.events import EventActions

researcher = LlmAgent(name="researcher", instruction="Find facts.", output_key="facts")

def save(tool_context, value):
    tool_context.state["draft"] = value
    tool_context.state.update({"score": 1}, mood="ok")

def before(callback_context):
    callback_context.state["user:lang"] = "en"
    callback_context.state.setdefault("tally", 0)

def event():
    return EventActions(state_delta={"verdict": "yes"})

async def start(service):
    initial = {"app:region": "eu"}
    await service.create_session(app_name="a", user_id="u", state=initial)
"""

WRITE_CASES = [
    ("output-key", "{facts}", []),
    ("tool-state", "{draft} {score} {mood}", []),
    ("callback-state", "{user:lang} {tally}", []),
    ("state-delta", "{verdict}", []),
    ("create-session-through-a-name", "{app:region}", []),
    ("exempt-temp-and-optional", "{temp:step} {maybe?}", []),
    ("never-written", "{facts} {plan} {plan}", ["{plan}"]),
]


@pytest.mark.parametrize(("prompt", "flagged"), [c[1:] for c in WRITE_CASES], ids=[c[0] for c in WRITE_CASES])
def test_keys_nothing_writes(prompt: str, flagged: list[str]) -> None:
    user = f'from google.adk.agents import LlmAgent\nw = LlmAgent(name="writer", instruction="{prompt}")\n'
    result = scan_texts({"writes.py": WRITES, "user.py": user})
    written = result.written
    assert written is not None
    assert {"facts", "draft", "score", "mood", "user:lang", "tally", "verdict", "app:region"} <= written
    (found,) = [f for f in result.instructions if f.label.startswith('LlmAgent(name="writer")')]
    findings = never_written(found, written)
    assert [user[d.span.start : d.span.end] for d in findings if d.span] == flagged
    assert all(d.code == "T014" and d.path == "user.py" for d in findings)


@pytest.mark.parametrize(
    ("prompt", "hint"),
    [("{user:lnag}", "did you mean 'user:lang', which is written? "), ("{zebra}", "")],
    ids=["typo-of-a-written-key", "nothing-close"],
)
def test_a_key_nothing_writes_suggests_a_written_one(prompt: str, hint: str) -> None:
    user = f'from google.adk.agents import LlmAgent\nw = LlmAgent(name="w", instruction="{prompt}")\n'
    (found,) = scan_texts({"user.py": user}).instructions
    (finding,) = never_written(found, frozenset({"user:lang", "tally"}))
    assert finding.help is not None
    assert finding.help.startswith(hint + ("Otherwise set" if hint else "set"))


def test_schema_keys_count_as_written() -> None:
    user = 'from google.adk.agents import LlmAgent\nw = LlmAgent(name="w", instruction="{plan}")\n'
    (found,) = scan_texts({"user.py": user}).instructions
    assert never_written(found, frozenset(), schema=["plan"]) == []


# T014 where the braces sit in a URL or in code: the help is an escape ({key?} would drop the text there)
LITERAL_PLACES = [
    ("code-span", "Start it with `POST /run/{suite_id}`.", "{suite_id}", "sits in code"),
    ("url", "Poll https://ci.example.com/status?id={run_id} until done.", "{run_id}", "sits in a URL"),
    ("path", "Open /runs/{run_id}/logs first.", "{run_id}", "sits in a URL"),
    ("prose", "Report {result} to the user.", "{result}", None),
]


@pytest.mark.parametrize(
    ("prompt", "flagged", "place"), [c[1:] for c in LITERAL_PLACES], ids=[c[0] for c in LITERAL_PLACES]
)
def test_a_key_nothing_writes_in_a_url_or_code_gets_an_escape_as_help(
    prompt: str, flagged: str, place: str | None
) -> None:
    from templating.linter.fixes import fixes_for

    user = f'from google.adk.agents import LlmAgent\nw = LlmAgent(name="w", instruction="{prompt}")\n'
    (found,) = scan_texts({"user.py": user}).instructions
    (finding,) = never_written(found, frozenset())
    assert user[finding.span.start : finding.span.end] == flagged
    assert finding.help is not None
    titles = [fix.title for fix in fixes_for(finding, user, dialect="adk")]
    if place is None:
        assert finding.help.startswith("set ")
        assert titles == [f"Make it optional: {flagged[:-1]}?}}"]
        return
    key = flagged[1:-1]
    assert finding.help == (
        f"{flagged!r} {place}, where google-adk substitutes it too ({{{key}?}} would drop it from the text): to "
        f"send the braces as written, write \\{flagged} (google-adk keeps it, backslash included), or give the "
        "agent an instruction provider, which google-adk does not fill in (templating's static(...) sends its text "
        f"as written); if the value is meant, set {key!r} before this agent runs"
    )
    assert titles == []  # no "make it optional": it would send the text around the key without it


def test_a_key_nothing_writes_in_an_angle_url_gets_the_escape_as_an_unsafe_fix() -> None:
    from templating.linter.fixes import fixes_for

    user = 'from templating import instruction\nP = instruction("Open /runs/<run_id>/logs.")\n'
    (found,) = scan_texts({"user.py": user}).instructions
    (finding,) = never_written(found, frozenset())
    assert finding.help == (
        "'<run_id>' sits in a URL: to send <run_id> as written, escape it as <<run_id>>; if the value is meant, "
        "set 'run_id' before this agent runs"
    )
    (fix,) = fixes_for(finding, user, dialect="angle")
    assert (fix.edits, fix.safe) == ([(finding.span.start, finding.span.end, "<<run_id>>")], False)


# T014, T012 and T001 on a jinja(...) instruction's state reads, each placed at the variable
JINJA_PROMPT = (
    "from templating import jinja\n"
    "PROMPT = jinja(\n"
    '    "Plan for {{ user.name }}:\\n"\n'
    '    "{% for leg in legs %}- {{ leg.origin }}{% endfor %}\\n"\n'
    "    \"{% if notes is defined %}{{ notes }}{% endif %} {{ temp.step }} {{ state['plan'] }}\"\n"
    "    \" {{ tips | default('') }}\"\n"
    ")\n"
)


def test_a_jinja_instruction_s_reads_get_the_key_checks() -> None:
    (found,) = scan_texts({"p.py": JINJA_PROMPT}).instructions
    assert found.dialect == "jinja"
    unwritten = never_written(found, frozenset({"plan"}))
    assert [(d.code, JINJA_PROMPT[d.span.start : d.span.end], d.span.line) for d in unwritten if d.span] == [
        ("T014", "user.name", 3),
        ("T014", "legs", 4),
    ]
    assert unwritten[0].message == (
        "'user.name' reads state key 'user:name', which nothing in the linted files writes: the Jinja2 instruction "
        "raises JinjaUndefinedError without it"
    )
    assert unwritten[1].help is not None
    assert unwritten[1].help.endswith("{% if legs is defined %}...{% endif %}, or legs | default('')")
    assert never_written(found, frozenset({"plan", "legs"}), schema=["user"]) == [unwritten[0]]
    own = lint_instruction(found, select=select_rules(), schema=["user:name", "legs", "plan", "notes?"])
    assert [(d.code, JINJA_PROMPT[d.span.start : d.span.end]) for d in own if d.span] == [
        ("T012", "temp.step"),
        ("T001", "temp.step"),
        ("T001", "tips"),
    ]


def test_a_jinja_syntax_error_is_its_only_finding() -> None:
    (found,) = scan_texts({"p.py": "from templating import jinja\nP = jinja('{% if x %}{{ temp.y }}')\n"}).instructions
    assert [d.code for d in lint_instruction(found, select=select_rules())] == ["E001"]
    assert never_written(found, frozenset()) == []


STATIC = """\
from google.adk.agents import LlmAgent
from google.genai import types

from .prompts import GUIDE_STATIC_INSTRUCTION

guide = LlmAgent(name="guide", static_instruction=GUIDE_STATIC_INSTRUCTION, instruction="Greet {visitor}.")
reader = LlmAgent(name="reader", static_instruction=types.Content(parts=[]), instruction=provide)
plain = LlmAgent(name="plain", static_instruction=None, instruction="Read.")
"""


def test_a_static_instruction_is_kept_apart_and_its_constant_is_no_instruction() -> None:
    files = {
        "app/agent.py": STATIC,
        "app/prompts.py": 'GUIDE_STATIC_INSTRUCTION = "You are {persona}, a guide."\n',
        "app/__init__.py": "",
    }
    result = scan_texts(files, ["app/agent.py", "app/prompts.py"])
    (static,) = result.static_instructions
    assert (static.label, static.names, static.dialect) == (
        "GUIDE_STATIC_INSTRUCTION",
        ("GUIDE_STATIC_INSTRUCTION", "guide.static_instruction"),
        "adk",
    )
    assert (static.path, static.text) == ("app/prompts.py", "You are {persona}, a guide.")
    # the constant is not an instruction of its own (it would read {persona}); only the agents' instructions are
    assert [item.label for item in result.instructions] == [
        'LlmAgent(name="guide").instruction',
        'LlmAgent(name="plain").instruction',
    ]
    # a Content or None is no static text; an instruction provider is skipped, and says by which names
    assert [(item.label, item.names) for item in result.skipped] == [
        ('LlmAgent(name="reader").instruction', ("reader", "reader.instruction"))
    ]


@pytest.mark.parametrize(
    "dynamic",
    [
        "tool_context.state[key] = 1",
        "tool_context.state.update(values)",
        "EventActions(state_delta=delta)",
        'LlmAgent(name="b", output_key=KEY)',
    ],
)
def test_a_dynamic_write_makes_the_tree_unknown(dynamic: str) -> None:
    source = f"from google.adk.agents import LlmAgent\ndef f(tool_context, key, values, delta, KEY):\n    {dynamic}\n"
    assert scan_texts({"m.py": source}).written is None


# Keys written through names: constants (in the module or imported), and the dict handed to
# create_session(state=...) filled in after it was made.
KEY_MODULES = {
    "app/__init__.py": "",
    "app/helpers.py": "def put(into, v):\n    into['plan'] = v\ndef load(target):\n    target.update(DATA)\n",
    "app/constants.py": 'ITINERARY_KEY = "itinerary"\nPROFILE_KEY: str = "user:profile"\nOUT = "summary"\n',
}
NAMED_WRITES = [
    (
        "module-attribute",
        "from . import constants\ndef f(tool_context):\n    tool_context.state[constants.ITINERARY_KEY] = 1\n",
        {"itinerary"},
    ),
    (
        "imported-constant",
        "from .constants import PROFILE_KEY\ndef f(tool_context):\n    tool_context.state[PROFILE_KEY] = 1\n",
        {"user:profile"},
    ),
    ("local-constant", 'KEY = "k"\ndef f(callback_context):\n    callback_context.state.setdefault(KEY, 0)\n', {"k"}),
    (
        "function-constant",
        'def f(tool_context):\n    key = "user:" + "lang"\n    tool_context.state[key] = 1\n',
        {"user:lang"},
    ),
    (
        "output-key-constant",
        "from google.adk.agents import LlmAgent\nfrom . import constants\n"
        "LlmAgent(name='a', output_key=constants.OUT)\n",
        {"summary"},
    ),
    (
        "state-delta-constant",
        "from .constants import OUT\ndef f(EventActions):\n    return EventActions(state_delta={OUT: 1})\n",
        {"summary"},
    ),
    (
        "create-session-dict-filled-later",
        'INITIAL: dict = {"a": 1}\nINITIAL["b"] = 2\nINITIAL.update({"c": 3}, d=4)\nINITIAL.setdefault("e", 5)\n'
        "async def start(svc):\n    await svc.create_session(app_name='x', user_id='u', state=INITIAL)\n",
        {"a", "b", "c", "d", "e"},
    ),
    ("create-session-dict-updated-from-a-call", "S = {'a': 1}\nS.update(load())\nsvc.create_session(state=S)\n", None),
    # a helper's parameter that holds state: named state, annotated State, or given ctx.state by a caller
    (
        "session-made-in-a-test",
        "from google.adk.sessions import Session\ndef test_it():\n"
        "    s = Session(id='1', app_name='a', user_id='u', state={'plan': 1, 'user:lang': 'en'})\n",
        {"plan", "user:lang"},
    ),
    (
        "adk-state-prefixes",
        "from google.adk.sessions.state import State\nfrom .constants import OUT\n"
        "def f(tool_context):\n    tool_context.state[State.USER_PREFIX + 'lang'] = 1\n"
        "    tool_context.state[State.APP_PREFIX + OUT] = 2\n",
        {"user:lang", "app:summary"},
    ),
    ("helper-named-state", "def put(state, v):\n    state['plan'] = v\n", {"plan"}),
    (
        "helper-annotated-state",
        "from google.adk.sessions.state import State\n"
        "def put(target: State | dict, v):\n    target.setdefault('plan', v)\n",
        {"plan"},
    ),
    (
        "helper-given-context-state",
        "def _set_initial_states(source, target):\n    target.update(source)\n"
        "def load(callback_context):\n    _set_initial_states({}, callback_context.state)\n",
        None,
    ),
    (
        "helper-given-state-by-keyword-nested",
        "def put(v, target=None):\n    def inner():\n        target['plan'] = v\n    inner()\n"
        "def cb(tool_context):\n    put(1, target=tool_context.state)\n",
        {"plan"},
    ),
    (
        "method-given-state",
        "class Memory:\n    def save(self, into, v):\n        into['plan'] = v\n"
        "    def cb(self, ctx):\n        self.save(ctx.state, 1)\n",
        {"plan"},
    ),
    (
        "helper-in-another-module-given-state",
        "from .helpers import put\nfrom . import helpers\n"
        "def cb(callback_context):\n    put(callback_context.state, 1)\n    helpers.load(callback_context.state)\n",
        None,
    ),
    ("helper-never-given-state", "def put(target, v):\n    target['plan'] = v\n", set()),
    ("key-from-a-parameter", "def f(tool_context, key):\n    tool_context.state[key] = 1\n", None),
    ("key-from-an-f-string", "def f(tool_context, n):\n    tool_context.state[f'user:{n}'] = 1\n", None),
]


@pytest.mark.parametrize(("code", "written"), [c[1:] for c in NAMED_WRITES], ids=[c[0] for c in NAMED_WRITES])
def test_keys_written_through_names(code: str, written: set[str] | None) -> None:
    linted = ["app/m.py", "app/helpers.py"] if "helpers" in code else ["app/m.py"]
    assert scan_texts({**KEY_MODULES, "app/m.py": code}, linted).written == written


# A session seeded from a pydantic model (`create_session(state=TripState(...).model_dump())`): pydantic dumps
# every field, defaults included, so each is written (id, app/main.py, the keys written or None: unknown).
STATE_MODEL = (
    "from pydantic import BaseModel, ConfigDict\n"
    "class TripState(BaseModel):\n    destination: str\n    budget_pref: str = 'mid-range'\n"
    "class Open(BaseModel):\n    model_config = ConfigDict(extra='allow')\n    destination: str\n"
)
SEED = "async def f(s):\n    await s.create_session(app_name='a', user_id='u', state={})\n"
MODEL_DUMPS = [
    ("model-dump", "from .state import TripState\n" + SEED.format("TripState(destination='x').model_dump()"), True),
    (
        "model-dump-json",
        "from . import state\n" + SEED.format("state.TripState(destination='x').model_dump(mode='json')"),
        True,
    ),
    ("dict", "from .state import TripState\n" + SEED.format("TripState(destination='x').dict()"), True),
    (
        "name-in-function",
        "from .state import TripState\nasync def f(s):\n    t = TripState(destination='x')\n"
        "    await s.create_session(app_name='a', user_id='u', state=t.model_dump())\n",
        True,
    ),
    (
        "module-constant",
        "from .state import TripState\nT = TripState(destination='x')\n" + SEED.format("T.model_dump()"),
        True,
    ),
    (
        "exclude-unset",
        "from .state import TripState\n" + SEED.format("TripState(destination='x').model_dump(exclude_unset=True)"),
        False,
    ),
    ("open-model", "from .state import Open\n" + SEED.format("Open(destination='x').model_dump()"), False),
    ("not-a-model", SEED.format("s.model_dump()"), False),
    (
        "a-name-bound-twice",
        "from .state import TripState\nT = TripState(destination='x')\nT = None\n" + SEED.format("T.model_dump()"),
        False,
    ),
]


@pytest.mark.parametrize(("code", "known"), [c[1:] for c in MODEL_DUMPS], ids=[c[0] for c in MODEL_DUMPS])
def test_a_session_seeded_from_a_model_dump_writes_every_field(code: str, known: bool) -> None:
    files = {"app/__init__.py": "", "app/state.py": STATE_MODEL, "app/main.py": code}
    written = scan_texts(files, ["app/main.py"]).written
    assert written == ({"destination", "budget_pref"} if known else None)


def test_a_name_bound_to_state_in_a_function_writes_state() -> None:
    source = (
        "def tool(tool_context):\n    memory = tool_context.state\n    memory['plan'] = 1\n    memory.update(score=2)\n"
    )
    assert scan_texts({"m.py": source}).written == {"plan", "score"}
    dynamic = "def tool(tool_context, key):\n    memory = tool_context.state\n    memory[key] = 1\n"
    assert scan_texts({"m.py": dynamic}).written is None


# --- the fixture tree: a repository laid out like real ADK agent projects

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "adk_project"


def lint_tree(root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    from templating.cli import main

    monkeypatch.chdir(root)
    # the run-order rules have their own test of this tree (test_the_fixture_tree_lints_clean)
    code = main(["lint", ".", "--format", "json", "--extend-select", "T015", "--ignore", "T024,T025,T026,T027"])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    findings: list[dict[str, Any]] = json.loads(out)
    return findings


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "project"  # no pyproject.toml above it: the default include patterns
    shutil.copytree(FIXTURE, root)
    return root


def test_the_fixture_tree_lints_clean(
    tree: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert lint_tree(tree, monkeypatch, capsys) == []
    ordered = lint_project(["."], root=tree, select=["T024", "T025", "T026", "T027"]).diagnostics
    # true in google-adk: data_science_root reads {dataset_id}, which only its own tool writes (after its first
    # request); db_agent reads what only that tool writes; booking reads what agents reached by transfer write
    assert sorted((d.path, d.code, d.message.split("`")[1]) for d in ordered) == [
        ("data_science/prompts.py", "T024", "dataset_id"),
        ("data_science/prompts.py", "T027", "dataset_id"),
        ("data_science/prompts.py", "T027", "schema_summary"),
        ("travel_concierge/sub_agents/booking/prompt.py", "T027", "itinerary"),
        ("travel_concierge/sub_agents/booking/prompt.py", "T027", "plan"),
    ]
    files = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*.py"))
    found = scan(files, read=lambda p: (tree / p).read_text(encoding="utf-8"))
    assert sorted((f.label, f.dialect) for f in found.instructions) == [
        ('Agent(name="data_science_root").instruction', "adk"),
        ('Agent(name="triage").instruction', "angle"),
        ("BOOKING_AGENT_INSTR", "adk"),
        ("CHECKOUT_INSTRUCTION", "angle"),
        ("DB_PROMPT", "adk"),  # returned by return_instructions_db(), which db_agent calls
        ("GLOBAL_INSTRUCTION", "adk"),
        ("ITINERARY_AGENT_INSTR", "adk"),
        ("PLANNING_AGENT_INSTR", "adk"),
        ("ROOT_AGENT_INSTR", "adk"),
        ("SHOP_ROOT_INSTRUCTION", "adk"),
        ("SUPPORT_PROMPT", "angle"),
        ("jinja(...)", "jinja"),
    ]
    assert found.skipped == []
    (db,) = [f for f in found.instructions if f.label == "DB_PROMPT"]
    assert db.names == ("DB_PROMPT", "db_agent", "db_agent.instruction")  # followed through the function


BOOKING = "travel_concierge/sub_agents/booking/prompt.py"
PLANNING = "travel_concierge/sub_agents/planning/prompt.py"
ROOT = "travel_concierge/prompt.py"
PLANNING_AGENT = "travel_concierge/sub_agents/planning/agent.py"
SUPPORT = "customer_service/prompts.py"
SHOP_AGENT = "shop_assistant/agent.py"
SHOP_CHECKOUT = "shop_assistant/sub_agents/checkout/prompt.py"
SHOP_CONSTANTS = "shop_assistant/constants.py"
SHOP_PROMPT = "shop_assistant/prompt.py"
SHOP_RUN = "shop_assistant/run.py"
DATA_PROMPTS = "data_science/prompts.py"
DATA_TOOLS = "data_science/tools.py"
# (id, file to edit, text there, replacement, code expected, file it is reported in, the flagged text)
SEEDED = [
    ("adk-key-nothing-writes", "travel_concierge/prompt.py", "{_time}", "{_tme}", "T014", None, "{_tme}"),
    ("adk-temp-key", BOOKING, "{reservations?}", "{temp:reservations}", "T012", None, "{temp:reservations}"),
    ("adk-typo-inside-dedent", BOOKING, "{plan}", "{plans}", "T014", None, "{plans}"),
    ("output-key-removed", PLANNING_AGENT, '    output_key="plan",\n', "", "T014", BOOKING, "{plan}"),
    ("angle-spaced", SUPPORT, "<ticket_id>", "< ticket_id >", "T002", None, "< ticket_id >"),
    ("angle-bad-scope", SUPPORT, "<user:name?>", "<usr:name?>", "T003", None, "<usr:name?>"),
    ("angle-markup-tag", SUPPORT, "<<example>>", "<example>", "T007", None, "<example>"),
    ("angle-br", SUPPORT, "<<br>>", "<br>", "T007", None, "<br>"),
    ("angle-adk-leftover", SUPPORT, "<app:brand>", "{app:brand}", "T008", None, "{app:brand}"),
    ("angle-escaped-closing-tag", SUPPORT, "</example>", "<</example>>", "T013", None, "<</example>>"),
    (
        "angle-inline-agent",
        "customer_service/agent.py",
        "<user:name?> in",
        "<user:name??> in",
        "T006",
        None,
        "<user:name??>",
    ),
    ("jinja-syntax", "customer_service/agent.py", "{% endfor %}", "{% endfo %}", "E001", None, "endfo"),
    # instructions returned by functions (ADK samples' return_instructions_root()), found in their function
    ("function-hyphen", DATA_PROMPTS, "dataset {dataset_id}.", "dataset {dataset-id}.", "T019", None, "{dataset-id}"),
    (
        "function-key-unwritten",
        DATA_TOOLS,
        '["schema_summary"]',
        '["schema"]',
        "T014",
        DATA_PROMPTS,
        "{schema_summary}",
    ),
    ("function-doubled", DATA_PROMPTS, "{sql_result?}", "{{sql_result?}}", "T017", None, "{{sql_result?}}"),
    # ADK-dialect rules: what google-adk would do wrong at run time, found inside the .py files
    (
        "adk-eaten-brace",
        PLANNING,
        '"departure_airport": "SFO"}',
        '"departure_airport": {origin}}',
        "T016",
        None,
        "{origin}}",
    ),
    ("adk-doubled-braces", ROOT, "Current time: {_time}", "Current time: {{_time}}", "T017", None, "{{_time}}"),
    (
        "adk-artifact-inside-dedent",
        BOOKING,
        "{reservations?}",
        "{artifact.receipts}",
        "T018",
        None,
        "{artifact.receipts}",
    ),
    ("adk-near-miss-hyphen", ROOT, "  {user_profile}\n", "  {user-profile}\n", "T019", None, "{user-profile}"),
    ("adk-near-miss-scope", BOOKING, "{plan}", "{usr:plan}", "T019", None, "{usr:plan}"),
    # the shop: 3.12 syntax, keys named by constants, a session dict filled after it is made
    ("shop-constant-key", SHOP_CONSTANTS, '"cart_total"', '"cart_sum"', "T014", SHOP_CHECKOUT, "<cart_total>"),
    (
        "shop-session-dict",
        SHOP_RUN,
        'INITIAL_STATE["user:customer_name"] = "Ada"\n',
        "",
        "T014",
        SHOP_CHECKOUT,
        "<user:customer_name>",
    ),
    (
        "shop-callback-write",
        SHOP_AGENT,
        '"customer_profile"] = profile',
        '"profile"] = profile',
        "T014",
        SHOP_PROMPT,
        "{customer_profile}",
    ),
    (
        "shop-near-miss",
        SHOP_PROMPT,
        "{user:customer_name?}",
        "{user:customer-name?}",
        "T019",
        None,
        "{user:customer-name?}",
    ),
    ("shop-adk-typo", SHOP_PROMPT, "{customer_profile}", "{customer_profle}", "T014", None, "{customer_profle}"),
    (
        "shop-session-update",
        SHOP_RUN,
        'INITIAL_STATE.update({"currency": "EUR"})\n',
        "",
        "T014",
        SHOP_CHECKOUT,
        "<currency>",
    ),
    ("shop-angle-spaced", SHOP_CHECKOUT, "<cart_total> <", "< cart_total > <", "T002", None, "< cart_total >"),
    ("shop-bad-syntax", SHOP_AGENT, "type Pair[T] = tuple[T, T]", "type Pair[T] = tuple[T, T] $", "E002", None, "$"),
    (
        "dynamic-instruction",
        "travel_concierge/sub_agents/booking/agent.py",
        "instruction=BOOKING_AGENT_INSTR",
        'instruction=f"{BOOKING_AGENT_INSTR} {booked_today}"',  # a field known only at run time
        "T015",
        None,
        'f"{BOOKING_AGENT_INSTR} {booked_today}"',
    ),
]


@pytest.mark.parametrize(
    ("edit", "old", "new", "code", "reported", "flagged"), [c[1:] for c in SEEDED], ids=[c[0] for c in SEEDED]
)
def test_each_seeded_mistake_is_found_at_its_place(
    tree: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    edit: str,
    old: str,
    new: str,
    code: str,
    reported: str | None,
    flagged: str,
) -> None:
    path = tree / edit
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")
    findings = lint_tree(tree, monkeypatch, capsys)
    assert [f["code"] for f in findings] == [code]
    (finding,) = findings
    where = reported or edit
    assert finding["path"] == where
    source = (tree / where).read_text(encoding="utf-8")
    assert source[finding["start"] : finding["end"]] == flagged
    assert source.count(flagged) == 1 or reported is not None
    line_start = source.rfind("\n", 0, finding["start"]) + 1
    assert (finding["line"], finding["column"]) == (
        source.count("\n", 0, finding["start"]) + 1,
        finding["start"] - line_start + 1,
    )
    assert finding["origin"] or code == "E002"  # a file that is not Python has no instruction


ADK_INSTRUCTIONS = [
    "ROOT_AGENT_INSTR",
    "PLANNING_AGENT_INSTR",
    "ITINERARY_AGENT_INSTR",
    "BOOKING_AGENT_INSTR",
    "GLOBAL_INSTRUCTION",
    "SHOP_ROOT_INSTRUCTION",
]


@pytest.mark.parametrize("name", ADK_INSTRUCTIONS)
def test_converted_adk_instructions_lint_clean(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    from templating.cli import main
    from templating.linter import lint

    files = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*.py"))
    found = scan(files, read=lambda p: (tree / p).read_text(encoding="utf-8"))
    (item,) = [f for f in found.instructions if f.label == name]
    source = tmp_path / f"{name}.txt"
    source.write_text(item.text, encoding="utf-8")
    assert main(["convert", str(source), "--from", "adk"]) == 0
    converted, _ = capsys.readouterr()
    assert Template(converted).keys == Template(item.text, dialect="adk").keys
    assert lint(converted) == []  # the XML-tag idiom, <<itinerary>> <itinerary> </itinerary>, included
    assert lint(item.text, dialect="adk") == []


# --- input cannot reach the recursion limit: cycles of imports and names, long and deep expressions

CYCLES = [
    # (name, files, the reason the instruction of m.py is skipped)
    (
        "a-module-importing-a-name-from-itself",
        {"pkg/__init__.py": "", "pkg/m.py": "from .m import X\nAgent(name='a', instruction=X)\n"},
        "'X' is imported in a cycle (pkg/m.py -> pkg/m.py)",
    ),
    (
        "two-modules-importing-from-each-other",
        {
            "pkg/__init__.py": "",
            "pkg/m.py": "from .other import X\nAgent(name='a', instruction=X)\n",
            "pkg/other.py": "from .m import X\n",
        },
        "'X' is imported in a cycle (pkg/m.py -> pkg/other.py -> pkg/m.py)",
    ),
    (
        "a-package-importing-from-itself-absolutely",
        {"pkg/__init__.py": "from pkg import X\n", "pkg/m.py": "from pkg import X\nAgent(name='a', instruction=X)\n"},
        "'X' is imported in a cycle",
    ),
    ("names-bound-to-each-other", {"pkg/m.py": "A = B\nB = A\nAgent(name='a', instruction=A)\n"}, "too long to follow"),
    (
        "a-function-imported-from-itself",
        {"pkg/__init__.py": "", "pkg/m.py": "from .m import p\nAgent(name='a', instruction=p())\n"},
        "a call (p(...))",
    ),
]


@pytest.mark.parametrize(("files", "reason"), [c[1:] for c in CYCLES], ids=[c[0] for c in CYCLES])
def test_a_cycle_of_imports_or_names_is_skipped_with_the_reason(files: dict[str, str], reason: str) -> None:
    header = "from google.adk.agents import Agent\n"
    files = {path: (header + code if path == "pkg/m.py" else code) for path, code in files.items()}
    result = scan_texts(files, ["pkg/m.py"])
    assert result.instructions == []
    (skipped,) = result.skipped
    assert reason in skipped.reason
    assert files["pkg/m.py"][skipped.span.start : skipped.span.end] in ("X", "A", "p()")


def test_an_unused_constant_imported_from_itself_is_not_an_instruction() -> None:
    result = scan_texts({"pkg/__init__.py": "", "pkg/m.py": "from .m import ROOT_PROMPT\n"}, ["pkg/m.py"])
    assert (result.instructions, result.skipped) == ([], [])


def test_a_long_concatenation_is_read_in_one_piece() -> None:
    parts = [f'"{{k{i}}} "' for i in range(800)]
    source = (
        "from google.adk.agents import Agent\n"
        f"Agent(name='a', instruction={' + '.join(parts)})\n"
        f"def f(ctx):\n    ctx.state[{' + '.join(['STEM'] * 800)}] = 1\nSTEM = 'a'\n"
    )
    result = scan_texts({"m.py": source})
    (found,) = result.instructions
    assert found.text == "".join(f"{{k{i}}} " for i in range(800))
    check_every_character(source, found)
    assert result.written == frozenset({"a" * 800})


@pytest.mark.parametrize("depth", [100, 900, 5000], ids=["100", "900", "5000"])
def test_deeply_nested_expressions_never_raise_recursion_error(depth: int) -> None:
    chain, calls, subscripts = "x" + ".a" * depth, "f" + "()" * depth, "s" + "[0]" * depth
    source = (
        "from google.adk.agents import Agent\n"
        f"def f(ctx):\n    ctx.state[{chain}] = 1\n    ctx.state[{subscripts}] = 2\n    {calls}\n"
        f"Agent(name='a', instruction={chain})\nAgent(name='b', instruction={calls})\n"
        f"Agent(name='c', instruction={'-' * depth}x)\nX_PROMPT = {subscripts}\n"
    )
    try:
        ast.parse(source)
    except (RecursionError, MemoryError, SyntaxError):  # too deep for Python's own parser: an error naming the file
        with pytest.raises(PythonSourceError, match=r"m\.py"):
            scan_texts({"m.py": source})
        return
    result = scan_texts({"m.py": source})
    assert result.instructions == []
    assert [s.label for s in result.skipped] == [f'Agent(name="{n}").instruction' for n in "abc"]
    assert result.written is None


# --- google-adk 2.x: workflow nodes write state with Event(state=...)

ADK2 = Path(__file__).resolve().parent / "fixtures" / "adk2_project"


def scan_adk2(*files: str) -> Scan:
    return scan(list(files), read=lambda p: (ADK2 / p).read_text(encoding="utf-8"))


def test_workflow_nodes_write_state_with_events() -> None:
    result = scan_adk2("weekend_planner/agent.py")
    assert result.written == {"request", "weekend_budget", "plan_kind", "spent", "currency", "plan"}
    assert {w.how for w in result.writes} >= {"Event(state=...)", "state_delta"}
    flagged = {
        found.label: [
            result.sources[d.path][d.span.start : d.span.end]
            for d in never_written(found, result.written)
            if d.span and d.path
        ]
        for found in result.instructions
    }
    assert flagged == {
        'Agent(name="planner").instruction': [],
        'Agent(name="reviewer").instruction': ["{traveller_count}"],  # the seeded key nothing writes
        'Agent(name="summary").instruction': [],  # ${weekend_budget.budget}: text (T020), not a placeholder
    }


EVENT_WRITES = [
    ("yield-event-state", "def n(node_input):\n    yield Event(state={'a': node_input, 'b': 1})\n", {"a", "b"}),
    ("return-event-state", "def n(x):\n    return Event(output=x, route='r', state={'a': x})\n", {"a"}),
    ("event-state-through-a-name", "def n(x):\n    clear = {'a': None}\n    return Event(state=clear)\n", {"a"}),
    ("event-state-none", "def n(x):\n    return Event(state=None)\n", set()),
    ("event-state-from-a-call", "def n(x):\n    return Event(state=load(x))\n", None),
    ("state-delta-dict-call", "def n(x):\n    return EventActions(state_delta=dict(a=1, b=x))\n", {"a", "b"}),
    ("state-delta-dict-of-a-dict", "def n(x):\n    return EventActions(state_delta=dict({'a': 1}, b=2))\n", {"a", "b"}),
    ("state-delta-dict-unpacked", "def n(x):\n    return EventActions(state_delta=dict(**x))\n", None),
    ("state-delta-dict-of-a-name", "def n(x):\n    return EventActions(state_delta=dict(x))\n", None),
]


@pytest.mark.parametrize(("code", "written"), [c[1:] for c in EVENT_WRITES], ids=[c[0] for c in EVENT_WRITES])
def test_events_write_state(code: str, written: set[str] | None) -> None:
    source = "from google.adk import Event\nfrom google.adk.events import EventActions\n" + code
    assert scan_texts({"m.py": source}).written == written


# --- google-adk's state_schema=: a pydantic model of the project, read from its source


def test_state_schemas_are_read_from_the_project() -> None:
    result = scan_adk2("trip_desk/agent.py")
    read = [
        (s.agent, s.model, s.path, s.span.line, s.reason, list(s.schema.fields) if s.schema else None)
        for s in result.state_schemas
    ]
    trip = ["destination", "budget", "traveller", "legs", "notes", "preferences", "itinerary"]  # bases' fields first
    assert read == [
        ('Agent(name="trip_planner")', "TripState", "trip_desk/state.py", 23, None, trip),
        ('Agent(name="booker")', "TripState", "trip_desk/state.py", 23, None, trip),
        ('Agent(name="researcher")', "ScratchState", "trip_desk/state.py", 31, None, ["topic"]),
    ]
    assert [s.schema.open for s in result.state_schemas if s.schema] == [False, False, True]
    labels = {f.label: [s.agent for s in f.state_schemas] for f in result.instructions}
    assert labels == {
        'Agent(name="trip_planner").instruction': ['Agent(name="trip_planner")'],
        "instruction(...)": ['Agent(name="booker")'],  # a provider given to the agent: linted at its call
        'Agent(name="researcher").instruction': ['Agent(name="researcher")'],
    }


def test_instructions_are_checked_against_their_agents_state_schema() -> None:
    from templating.linter.adk_schema import check_against_schema, schema_keys

    result = scan_adk2("trip_desk/agent.py")
    found = {
        f.label: [
            (d.code, result.sources[d.path][d.span.start : d.span.end])
            for d in check_against_schema(f)
            if d.span and d.path
        ]
        for f in result.instructions
    }
    assert found == {
        'Agent(name="trip_planner").instruction': [
            ("T001", "{destinaton}"),  # no T009 on {budget} nor T010 on {itinerary?}: ADK fills no field
        ],
        "instruction(...)": [("T001", "<traveller.nmae>")],  # legs.0 may be missing if legs is: T014's question
        'Agent(name="researcher").instruction': [],  # extra="allow": any other key goes
    }
    (planner, *_) = result.instructions
    (typo, *_) = check_against_schema(planner)
    assert typo.message == (
        "'destinaton' is not in TripState, the state_schema of Agent(name=\"trip_planner\") (trip_desk/state.py:23); "
        "did you mean 'destination'?"
    )
    assert typo.origin == planner.label
    assert check_against_schema(planner, select={"T010", "T014"}) == []
    # a key a state_schema declares is not written by it: google-adk never fills state from the schema
    assert schema_keys(planner) >= {"budget", "itinerary", "destination"}
    unwritten = never_written(planner, frozenset())
    flagged = [result.sources[d.path][d.span.start : d.span.end] for d in unwritten if d.span and d.path]
    assert flagged == ["{destinaton}", "{budget}", "{user:lang}"]
    budget = unwritten[1]
    assert 'google-adk raises KeyError for it when Agent(name="trip_planner") runs' in budget.message
    assert "TripState declares it with the default 500" in budget.message
    assert "create_session(..., state={'budget': 500})" in (budget.help or "")
    assert (budget.help or "").endswith("write {budget?} only if the agent can do without it")


def describe(fields: Any, depth: int = 3) -> dict[str, Any]:
    """A schema's fields as plain data, ``depth`` levels deep: required (``?`` when not), lists, open objects."""
    out: dict[str, Any] = {}
    for name in fields:
        f = fields[name]
        key = name + ("" if f.required else "?")
        inner: Any = None
        if f.is_list:
            item = f.items
            inner = ["list", describe(item.fields, depth - 1) if item and item.fields and depth else None]
        elif f.fields is not None and depth:
            inner = describe(f.fields, depth - 1)
            if f.open:
                inner["..."] = None
        out[key] = inner
    return out


MODEL_HEADER = (
    "from typing import Annotated, Any, ClassVar, List, Optional, Union\n"
    "from pydantic import BaseModel, ConfigDict, Field\nfrom google.adk import Agent\n"
)
MODELS = [
    # (name, the model S (and what it uses), its fields as `describe` shows them, open)
    (
        "defaults",
        "class S(BaseModel):\n    a: str\n    b: int = 1\n    c: str = Field(...)\n    d: str = Field('x')\n"
        "    e: list[str] = Field(default_factory=list)\n    f: str = Field(default=None)\n    g: int = ...\n"
        "    h: str = Field(description='no default')\n",
        {"a": None, "b?": None, "c": None, "d?": None, "e?": ["list", None], "f?": None, "g": None, "h": None},
        False,
    ),
    (
        "types",
        "class In(BaseModel):\n    x: int\nclass S(BaseModel):\n    a: Optional[In]\n    b: In | None = None\n"
        "    c: Annotated[In, 'meta']\n    d: dict[str, In]\n    e: List[In]\n    f: 'In'\n    g: Union[In, None]\n"
        "    h: Union[In, str]\n    i: Any\n    j: 'list[In] | None' = None\n",
        {
            "a": {"x": None},
            "b?": {"x": None},
            "c": {"x": None},
            "d": None,
            "e": ["list", {"x": None}],
            "f": {"x": None},
            "g": {"x": None},
            "h": None,
            "i": None,
            "j?": ["list", {"x": None}],
        },
        False,
    ),
    (
        "not-fields",
        "class S(BaseModel):\n    a: str\n    _cache: dict = {}\n    LIMIT: ClassVar[int] = 3\n"
        "    def m(self) -> str:\n        return self.a\n",
        {"a": None},
        False,
    ),
    (
        "alias",
        "class S(BaseModel):\n    lang: str = Field(alias='user:lang')\n    b: str\n",
        {"user:lang": None, "b": None},
        False,
    ),
    (
        "extra-allow",
        "class S(BaseModel):\n    model_config = ConfigDict(extra='allow')\n    a: str\n",
        {"a": None},
        True,
    ),
    ("extra-as-dict", "class S(BaseModel):\n    model_config = {'extra': 'allow'}\n    a: str\n", {"a": None}, True),
    ("extra-class-keyword", "class S(BaseModel, extra='allow'):\n    a: str\n", {"a": None}, True),
    (
        "extra-forbid",
        "class S(BaseModel):\n    model_config = ConfigDict(extra='forbid')\n    a: str\n",
        {"a": None},
        False,
    ),
    (
        "inherited-and-overridden",
        "class B(BaseModel):\n    model_config = ConfigDict(extra='allow')\n    a: str\n    b: str\n"
        "class S(B):\n    model_config = ConfigDict(extra='ignore')\n    b: str = ''\n    c: int\n",
        {"a": None, "b?": None, "c": None},
        False,
    ),
    (
        "open-base-inherited",
        "class B(BaseModel, extra='allow'):\n    a: str\nclass S(B):\n    c: int\n",
        {"a": None, "c": None},
        True,
    ),
    ("library-base", "from lib import Base\nclass S(Base):\n    a: str\n", {"a": None}, True),
    (
        "nested-in-another-module",
        "from .models import Inner\nclass S(BaseModel):\n    i: Inner\n",
        {"i": {"x": None}},
        False,
    ),
    ("bases-in-a-cycle", "class S(T):\n    a: str\nclass T(S):\n    b: str\n", None, False),
]


@pytest.mark.parametrize(("code", "fields", "is_open"), [c[1:] for c in MODELS], ids=[c[0] for c in MODELS])
def test_a_state_schema_model_is_read_statically(code: str, fields: dict[str, Any] | None, is_open: bool) -> None:
    files = {
        "app/__init__.py": "",
        "app/models.py": "from pydantic import BaseModel\nclass Inner(BaseModel):\n    x: int\n",
        "app/m.py": MODEL_HEADER + code + "a = Agent(name='a', state_schema=S, instruction='{a}')\n",
    }
    (state,) = scan_texts(files, ["app/m.py"]).state_schemas
    if fields is None:
        assert state.schema is None
        assert state.reason == "S is not a pydantic model (no BaseModel among its bases)"
        return
    assert state.schema is not None, state.reason
    assert describe(state.schema.fields) == fields
    assert state.schema.open is is_open
    assert state.schema.origin == "pydantic"


TYPED_FIELDS = [
    ("plain-required", "a: str", "str", None),
    ("literal-default", "a: str = 'en'", "str", "'en'"),
    ("field-positional", "a: int = Field(3)", "int", "3"),
    ("field-default", "a: int = Field(default=500)", "int", "500"),
    ("field-ellipsis", "a: str = Field(...)", "str", None),
    ("factory-list", "a: list[str] = Field(default_factory=list)", "list[str]", "[]"),
    ("factory-dict", "a: dict[str, int] = Field(default_factory=dict)", "dict[str, int]", "{}"),
    ("factory-lambda", "a: list[int] = Field(default_factory=lambda: [1, 2])", "list[int]", "[1, 2]"),
    ("factory-callable", "a: Any = Field(default_factory=make)", "Any", "make()"),
    ("optional-none", "a: Optional[str] = None", "Optional[str]", "None"),
    ("forward-reference", "a: 'list[S] | None' = None", "list[S] | None", "None"),
    ("annotated", "a: Annotated[int, 'meta'] = 1", "int", "1"),
]


@pytest.mark.parametrize(("line", "type_", "default"), [c[1:] for c in TYPED_FIELDS], ids=[c[0] for c in TYPED_FIELDS])
def test_a_state_schema_field_carries_its_type_and_default(line: str, type_: str, default: str | None) -> None:
    source = (
        f"{MODEL_HEADER}class S(BaseModel):\n    {line}\na = Agent(name='a', state_schema=S, instruction='{{a}}')\n"
    )
    (state,) = scan_texts({"app/__init__.py": "", "app/m.py": source}, ["app/m.py"]).state_schemas
    assert state.schema is not None, state.reason
    field = state.schema.fields["a"]
    assert (field.type, field.default, field.required) == (type_, default, default is None)


UNREADABLE_SCHEMAS = [
    ("from-a-library", "from lib.models import S\n", "'S' is imported from a module outside the linted files"),
    ("not-a-model", "class S:\n    a: str\n", "S is not a pydantic model"),
    ("not-a-class", "S = make_model()\n", "'S' is not a class defined at module level"),
    ("not-bound", "", "'S' is not a class defined at module level"),
    ("a-call", "", "a call (make(...)) is not a class name"),
    ("imported-from-itself", "from .m import S\n", "'S' is imported in a cycle (app/m.py -> app/m.py)"),
]


@pytest.mark.parametrize(
    ("code", "reason"), [c[1:] for c in UNREADABLE_SCHEMAS], ids=[c[0] for c in UNREADABLE_SCHEMAS]
)
def test_a_state_schema_that_cannot_be_read_says_why(code: str, reason: str) -> None:
    given = "make()" if "a call" in reason else "S"
    source = f"{MODEL_HEADER}{code}a = Agent(name='a', state_schema={given}, instruction='{{a}}')\n"
    result = scan_texts({"app/__init__.py": "", "app/m.py": source}, ["app/m.py"])
    (state,) = result.state_schemas
    assert (state.schema, state.agent, state.path) == (None, 'Agent(name="a")', "app/m.py")
    assert state.reason is not None
    assert state.reason.startswith(reason)
    assert source[state.span.start : state.span.end] == given
    from templating.linter.adk_schema import check_against_schema, schema_keys

    (found,) = result.instructions
    assert (check_against_schema(found), schema_keys(found)) == ([], frozenset())


def test_a_model_that_contains_itself_is_read_as_deep_as_a_key_goes() -> None:
    from templating.linter.adk_schema import check_against_schema

    code = "class S(BaseModel):\n    name: str\n    children: list['S'] = []\n    parent: 'S | None' = None\n"
    keys = "<parent.parent.parent.name> <children.0.parent.nmae> <parent.children.0.children?>"
    agent = f"Agent(name='a', state_schema=S, instruction=instruction('{keys}'))\n"
    source = f"{MODEL_HEADER}from templating import instruction\n{code}{agent}"
    result = scan_texts({"m.py": source})
    (state,) = result.state_schemas
    assert state.schema is not None
    fields = state.schema.fields
    assert fields["parent"].fields is fields  # the same fields, not a copy: nothing is built twice
    assert fields["children"].items is not None
    assert fields["children"].items.fields is fields
    (found,) = result.instructions
    assert [(d.code, source[d.span.start : d.span.end]) for d in check_against_schema(found) if d.span] == [
        ("T009", "<parent.parent.parent.name>"),  # parent has a default: it may be missing
        ("T001", "<children.0.parent.nmae>"),
    ]


def test_a_chain_of_a_thousand_models_is_read_only_as_deep_as_a_key_goes() -> None:
    from templating.linter.adk_schema import check_against_schema

    models = "".join(f"class M{i}(BaseModel):\n    next: 'M{i + 1}'\n    v: int = 0\n" for i in range(1000))
    deep = ".".join(["next"] * 1000)
    source = (
        f"{MODEL_HEADER}from templating import instruction\n{models}class M1000(BaseModel):\n    v: int\n"
        f"a = Agent(name='a', state_schema=M0, instruction=instruction('<{deep}.v> <{deep}.w> <next.v?>'))\n"
    )
    (found,) = scan_texts({"m.py": source}).instructions
    findings = [(d.code, source[d.span.start : d.span.end]) for d in check_against_schema(found) if d.span]
    assert findings == [("T001", f"<{deep}.w>")]


# --- f-strings whose fields are strings known in the code: read as their text, every place exact

FSTRINGS = [
    # (name, m.py after the header, the instruction's text, what each placeholder's place in the file shows)
    (
        "module-constant-and-doubled-braces",
        'DONE = "TASK COMPLETE"\nAgent(name="a", instruction=f"Say {DONE} when {{current_document}} is final.")\n',
        "Say TASK COMPLETE when {current_document} is final.",
        ["{{current_document}}"],
    ),
    (
        "imported-constant-with-a-placeholder",
        'from .phrases import SIGN_OFF\nAgent(name="a", instruction=f"Reply to {{user:name}}. {SIGN_OFF}")\n',
        "Reply to {user:name}. Thanks, {agent_name}.",
        ["{{user:name}}", "{agent_name}"],
    ),
    (
        "implicit-concatenation-triple-quotes-and-dedent",
        'import textwrap\nDONE = "END"\nAgent(name="a", instruction=textwrap.dedent(f"""\n'
        '    Write {{topic}}.\n    Then say {DONE}.\n""") + "Plain {tail}" f" and {{more}}")\n',
        "\nWrite {topic}.\nThen say END.\nPlain {tail} and {more}",
        ["{{topic}}", "{tail}", "{{more}}"],
    ),
    (
        "literal-field-and-concatenated-constants",
        'A = "{left} "\nB = "{right}"\nAgent(name="a", instruction=f"{A + B}|{\'{lit}\'}|\\N{EM DASH}{{x}}")\n',
        "{left} {right}|{lit}|\u2014{x}",
        ["{left}", "{right}", "{lit}", "{{x}}"],
    ),
    (
        "a-constant-named-as-a-prompt",
        'STOP = "STOP"\nWRITER_PROMPT = f"Draft {{draft}} until {STOP}."\n',
        "Draft {draft} until STOP.",
        ["{{draft}}"],
    ),
]


@pytest.mark.parametrize(("code", "text", "shown"), [c[1:] for c in FSTRINGS], ids=[c[0] for c in FSTRINGS])
def test_an_f_string_of_known_strings_is_read_at_its_places(code: str, text: str, shown: list[str]) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/phrases.py": 'SIGN_OFF = "Thanks, {agent_name}."\n',
        "pkg/m.py": "from google.adk.agents import Agent\n" + code,
    }
    result = scan_texts(files, ["pkg/m.py"])
    assert result.skipped == []
    (found,) = result.instructions
    assert found.text == text
    placed = []
    for node in parse(found.text, dialect="adk").placeholders:
        path, span = found.locate(node.span.start, node.span.end)
        placed.append(files[path][span.start : span.end])
    assert placed == shown


FSTRING_SKIPS = [
    (
        "a-local-value",
        'def f(name):\n    return Agent(name="a", instruction=f"Hi {name}")\n',
        "field {name} is known only",
    ),
    ("a-call", 'Agent(name="a", instruction=f"Today is {today()}")\n', "field {today()} is known only at run time"),
    ("a-conversion", 'X = "x"\nAgent(name="a", instruction=f"{X!r}")\n', "a conversion or format spec in {X}"),
    ("a-format-spec", 'X = "x"\nAgent(name="a", instruction=f"{X:>10}")\n', "a conversion or format spec in {X}"),
    (
        "a-number",
        'N = 3\nAgent(name="a", instruction=f"Use {N} tools")\n',
        "field {N} is known only at run time (not a",
    ),
]


@pytest.mark.parametrize(("code", "reason"), [c[1:] for c in FSTRING_SKIPS], ids=[c[0] for c in FSTRING_SKIPS])
def test_an_f_string_with_other_fields_is_skipped_with_the_reason(code: str, reason: str) -> None:
    result = scan_texts({"m.py": "from google.adk.agents import Agent\n" + code})
    assert result.instructions == []
    (skipped,) = result.skipped
    assert skipped.reason.startswith("an f-string")
    assert reason in skipped.reason


# --- an instruction a project function reads from a file next to its module


def test_instructions_read_from_files_are_linted_there(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ADK2)
    result = scan(["story_studio/agent.py"])
    assert result.skipped == []
    where = {f.label: (f.path, f.span.line, f.dialect) for f in result.instructions}
    assert where == {
        'Agent(name="scriptwriter").instruction': ("story_studio/scriptwriter_instruction.txt", 1, "adk"),
        'Agent(name="critic").instruction': ("story_studio/prompts/critic.md", 1, "adk"),
        'Agent(name="editor").instruction': ("story_studio/agent.py", 47, "adk"),
    }
    written = result.written
    assert written is not None
    findings = [
        (d.code, d.path, d.span.line, result.sources[d.path][d.span.start : d.span.end])
        for found in result.instructions
        for d in [*lint_instruction(found, select=select_rules()), *never_written(found, written)]
        if d.span and d.path
    ]
    assert findings == [
        ("T019", "story_studio/scriptwriter_instruction.txt", 3, "{visual-style}"),
        ("T014", "story_studio/agent.py", 50, "{{current_document}}"),
    ]
    (script,) = [f for f in result.instructions if f.label.startswith('Agent(name="scriptwriter")')]
    assert script.text == Path("story_studio/scriptwriter_instruction.txt").read_text(encoding="utf-8")  # \r\n read


READERS = [
    # (name, the reader function of m.py, the call, the file it reads or the reason it is skipped)
    (
        "os-path-join",
        "def load(name):\n    with open(os.path.join(os.path.dirname(__file__), name)) as f:\n"
        "        return f.read()\n",
        'load("p.txt")',
        "pkg/p.txt",
    ),
    (
        "absolute-dirname-a-subfolder-and-a-keyword",
        "def load(name, default=''):\n    here = os.path.dirname(os.path.abspath(__file__))\n"
        "    path = os.path.join(here, 'prompts', name)\n    with open(path, 'r', encoding='utf-8') as f:\n"
        "        return f.read()\n",
        'load(name="q.txt")',
        "pkg/prompts/q.txt",
    ),
    (
        "pathlib-read-text",
        "def load(name):\n    return (Path(__file__).resolve().parent / name).read_text()\n",
        "load(FILE)",
        "pkg/p.txt",
    ),
    (
        "pathlib-with-name-and-open",
        "def load(name):\n    with Path(__file__).with_name(name).open() as f:\n        return f.read()\n",
        'load("p.txt")',
        "pkg/p.txt",
    ),
    (
        "a-folder-above",
        "def load(name):\n    return (Path(__file__).parent / name).read_text()\n",
        'load("../up.txt")',
        "up.txt",
    ),
    (
        "outside-the-project",
        "def load(name):\n    return (Path(__file__).parent / name).read_text()\n",
        'load("../../../../../../../../../../etc/hostname")',
        "which is outside the project: not followed",
    ),
    (
        "not-a-regular-file",
        "def load(name):\n    return (Path(__file__).parent / name).read_text()\n",
        'load("prompts")',
        "which is not a regular file",
    ),
    (
        "missing",
        "def load(name):\n    return (Path(__file__).parent / name).read_text()\n",
        'load("nope.txt")',
        "which cannot be read (No such file or directory)",
    ),
    (
        "not-utf-8",
        "def load(name):\n    return (Path(__file__).parent / name).read_text()\n",
        'load("latin.txt")',
        "which is not UTF-8 text",
    ),
    (
        "too-large",
        "def load(name):\n    return (Path(__file__).parent / name).read_text()\n",
        'load("big.txt")',
        "which is larger than 1000000 bytes",
    ),
    (
        "a-name-known-at-run-time",
        "def load(name):\n    return (Path(__file__).parent / name).read_text()\n",
        "load(os.environ['P'])",
        "load() reads a file whose name is known only at run time",
    ),
    (
        "not-beside-the-module",
        "def load(name):\n    with open(name) as f:\n        return f.read()\n",
        'load("p.txt")',
        "load() is called with arguments",
    ),
    (
        "reads-nothing",
        "def load(name):\n    return os.path.join(os.path.dirname(__file__), name)\n",
        'load("p.txt")',
        "load() is called with arguments",
    ),
]


@pytest.mark.parametrize(("reader", "call", "expected"), [c[1:] for c in READERS], ids=[c[0] for c in READERS])
def test_a_file_a_project_function_reads_is_followed_inside_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: str, call: str, expected: str
) -> None:
    (tmp_path / "pkg" / "prompts").mkdir(parents=True)
    (tmp_path / "pkg" / "p.txt").write_text("Plan {plan}.\n", encoding="utf-8")
    (tmp_path / "pkg" / "prompts" / "q.txt").write_text("Quote {quote}.", encoding="utf-8")
    (tmp_path / "up.txt").write_text("Up {up}.", encoding="utf-8")
    (tmp_path / "pkg" / "latin.txt").write_bytes("caf\xe9 {x}".encode("latin-1"))
    (tmp_path / "pkg" / "big.txt").write_text("{big} " * 200_000, encoding="utf-8")
    source = (
        "import os\nfrom pathlib import Path\nfrom google.adk.agents import Agent\nFILE = 'p.txt'\n"
        f"{reader}Agent(name='a', instruction={call})\n"
    )
    (tmp_path / "pkg" / "m.py").write_text(source, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = scan(["pkg/m.py"])
    if expected.endswith(".txt"):
        assert result.skipped == []
        (found,) = result.instructions
        assert (found.path, found.text) == (expected, Path(expected).read_text(encoding="utf-8"))
        node = parse(found.text, dialect="adk").placeholders[0]
        path, span = found.locate(node.span.start, node.span.end)
        assert (
            Path(path).read_text(encoding="utf-8")[span.start : span.end] == found.text[node.span.start : node.span.end]
        )
    else:
        assert result.instructions == []
        (skipped,) = result.skipped
        assert expected in skipped.reason


def test_a_file_read_through_a_symlink_out_of_the_root_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "secret.txt").write_text("secret {key}", encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    (project / "p.txt").symlink_to(tmp_path / "secret.txt")
    (project / "m.py").write_text(
        "from pathlib import Path\nfrom google.adk.agents import Agent\n"
        "def load(name):\n    return (Path(__file__).parent / name).read_text()\n"
        "Agent(name='a', instruction=load('p.txt'))\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(project)
    result = scan(["m.py"])
    assert result.instructions == []
    assert "outside the project" in result.skipped[0].reason
    assert "secret" not in "".join(result.sources.values())
    assert scan(["m.py"], root=str(tmp_path)).instructions[0].text == "secret {key}"  # a root that holds it


# --- identity: an instruction is its file, name and span (with its dialect and text), not where it starts

SHARED_PIECES = {
    "tutor/prompts.py": 'BASE = """Tutor {user:name}.\n"""\nQUIZ = "Ask about {topic}."\nMEMORY = "Skip {covered}. "\n',
    "tutor/agent.py": (
        "from google.adk.agents import LlmAgent\n\nfrom .prompts import BASE, MEMORY, QUIZ\n\n"
        'quiz_agent = LlmAgent(name="quiz", instruction=BASE + QUIZ)\n'
        'review_agent = LlmAgent(name="review", instruction=BASE + MEMORY + QUIZ)\n'
        "sub_agents = [LlmAgent(instruction=BASE + QUIZ + MEMORY), LlmAgent(instruction=BASE + MEMORY)]\n"
    ),
    "tutor/__init__.py": "",
}


def test_instructions_starting_at_one_character_have_their_own_keys() -> None:
    found = scan_texts(SHARED_PIECES, ["tutor/agent.py"]).instructions
    assert [(f.label, f.names[:1], f.path, f.span.start) for f in found] == [
        ('LlmAgent(name="quiz").instruction', ("quiz",), "tutor/prompts.py", 10),
        ('LlmAgent(name="review").instruction', ("review",), "tutor/prompts.py", 10),
        ("LlmAgent(...).instruction", (), "tutor/prompts.py", 10),
        ("LlmAgent(...).instruction", (), "tutor/prompts.py", 10),
    ]
    keys = [f.key for f in found]
    assert len(set(keys)) == 4  # no two alike, though all start at one character (two share label and span too)
    assert (keys[2].name, keys[2].start, keys[2].end) == (keys[3].name, keys[3].start, keys[3].end)
    assert all(key.file.endswith("tutor/prompts.py") and Path(key.file).is_absolute() for key in keys)
    assert [f.given_in for f in found] == [("tutor/agent.py",)] * 4
    assert [(path, span.line) for f in found for path, span in f.given_at] == [
        ("tutor/agent.py", 5),
        ("tutor/agent.py", 6),
        ("tutor/agent.py", 7),
        ("tutor/agent.py", 7),
    ]
    # the same instruction read by another scan (the whole folder) has the same key
    again = scan_texts(SHARED_PIECES, ["tutor/prompts.py", "tutor/agent.py", "tutor/__init__.py"]).instructions
    assert {f.key for f in again} == set(keys)


def test_an_instruction_s_span_ends_in_its_own_file() -> None:
    """A composition that starts in one file and ends in another: its span is the part in its first file."""
    files = {
        "p.py": 'BASE = "Tutor {user:name}. "\n',
        "a.py": (
            "from google.adk.agents import LlmAgent\nfrom p import BASE\n"
            'x = LlmAgent(name="x", instruction=BASE + "Quiz on {topic}, and be kind to the learner.")\n'
        ),
    }
    (item,) = scan_texts(files, ["a.py"]).instructions
    assert (item.path, item.span.start, item.span.end) == ("p.py", 8, 27)
    assert files["p.py"][item.span.start : item.span.end] == "Tutor {user:name}. "
    assert item.locate(0, len(item.text)) == (item.path, item.span)


def test_an_import_is_read_from_the_reader_when_it_may_give_a_file_not_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An import's candidate files are first looked for on disk (one stat each); a reader of one's own
    may give a file that is not there (an editor's unsaved buffer): unless `unsaved` says which files
    those are, every candidate is read through it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent.py").write_text(
        "from google.adk.agents import LlmAgent\nfrom prompts import ROOT\nroot = LlmAgent(instruction=ROOT)\n",
        encoding="utf-8",
    )
    unsaved = {"prompts.py": 'ROOT = "Help {user:name}."\n'}
    asked: list[str] = []

    def read(path: str) -> str:
        asked.append(path)
        if path in unsaved:
            return unsaved[path]
        return Path(path).read_text(encoding="utf-8")

    def texts(**options: Any) -> list[str]:
        asked.clear()
        return [item.text for item in scan(["agent.py"], read=read, **options).instructions]

    assert texts() == ["Help {user:name}."]  # a reader of one's own: any file may be its own
    assert texts(unsaved=["prompts.py"]) == ["Help {user:name}."]
    assert "prompts.py" in asked
    assert texts(unsaved=[]) == []  # none: prompts.py is not on disk, so it is not asked for
    assert asked == ["agent.py"]
    (tmp_path / "prompts.py").write_text('ROOT = "On disk {user:name}."\n', encoding="utf-8")
    assert [item.text for item in scan(["agent.py"]).instructions] == ["On disk {user:name}."]


LITERALS = [
    ("plain", 'P = "Hello {name}, how are you?"\n'),
    ("single quotes", "P = 'it is {name}'\n"),
    ("triple", 'P = """\n  Line one {a}\n  "quoted" and \'x\'\n"""\n'),
    ("triple single", "P = '''{a} \"\"\" {b}'''\n"),
    ("u prefix", 'P = u"{a} and {b}"\n'),
    ("raw with backslashes", 'P = r"C:\\path\\{a}"\n'),
    ("raw quote escaped", 'P = r"say \\"{a}\\""\n'),
    ("escapes", 'P = "tab\\there {a}\\n"\n'),
    ("unknown escape", 'P = "\\d+ {a}"\n'),
    ("escaped quote", 'P = "a \\"{b}\\" c"\n'),
    ("implicit concatenation", 'P = ("{a} " "and {b}")\n'),
    ("concatenation of two quotes", "P = '{a}' \"{b}\"\n"),
    ("line continuation", 'P = "one {a} \\\ntwo"\n'),
    ("crlf", 'P = """one {a}\r\ntwo {b}\r\n"""\r\n'),
    ("non-ascii", 'P = "héllo {a} ✓ {b}"\n'),
    ("empty", 'P = ""\n'),
]


@pytest.mark.parametrize("source", [c[1] for c in LITERALS], ids=[c[0] for c in LITERALS])
def test_a_literal_read_whole_is_placed_as_read_character_by_character(
    source: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain literal's characters are placed by a range over its body; every literal is placed exactly as
    the character-by-character reading places it (which every other literal still goes through)."""
    from templating.pysource import positions
    from templating.pysource.positions import _literal, _Module

    with warnings.catch_warnings():  # "\d" is an invalid escape: a warning, still a string
        warnings.simplefilter("ignore")
        tree = ast.parse(source)
    module = _Module("p.py", "p.py", source, tree, linted=True)
    node = module.bindings["P"]
    assert isinstance(node, ast.Constant)
    fast = _literal(module, node)
    monkeypatch.setattr(positions, "_written_as_is", lambda *args: -1)
    slow = _literal(module, node)
    assert (fast.text, list(fast.starts), list(fast.ends)) == (slow.text, list(slow.starts), list(slow.ends))
    assert fast.text == node.value


def test_a_scan_lets_go_of_its_syntax_trees_unless_a_state_schema_needs_them() -> None:
    """The result keeps each module's text, not its tree (a large project's trees would be walked by every
    full pass of the garbage collector while the result lives); a state_schema= model's nested models are
    read from the trees when first looked into, so then they are kept."""
    plain = scan_texts({"a.py": 'from google.adk.agents import Agent\nA = Agent(instruction="Hi {name}")\n'})
    (item,) = plain.instructions
    assert [module.tree.body for module in item._mapped.mods] == [[]] * len(item.text)
    path, span = item.locate(0, 2)  # places are still given, from the text
    assert (path, plain.sources[path][span.start : span.end], span.line) == ("a.py", "Hi", 2)
    with_schema = scan_adk2("trip_desk/agent.py")
    assert all(m.tree.body for item in with_schema.instructions for m in item._mapped.mods)


@pytest.mark.parametrize("enabled", [True, False], ids=["collector on", "collector off"])
@pytest.mark.parametrize("fails", [False, True], ids=["scan done", "scan raises"])
def test_a_scan_pauses_the_garbage_collector_and_leaves_it_as_it_found_it(enabled: bool, fails: bool) -> None:
    import gc

    seen: list[bool] = []

    def read(path: str) -> str:
        seen.append(gc.isenabled())
        if fails:
            raise OSError("unreadable")
        return 'ROOT_PROMPT = "Hi {name}"\n'

    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        if fails:
            with pytest.raises(OSError, match="unreadable"):
                scan(["p.py"], read=read)
        else:
            assert [item.text for item in scan(["p.py"], read=read).instructions] == ["Hi {name}"]
        assert seen == [False]
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


# --- the trees of the files parsed last, kept for the next scan (an edit in the editor)


@pytest.fixture
def kept_trees(monkeypatch: pytest.MonkeyPatch) -> Any:
    from templating.pysource import reading

    monkeypatch.setattr(reading, "_kept", type(reading._kept)())
    monkeypatch.setattr(reading, "_kept_size", 0)
    monkeypatch.setattr(reading, "_walks", {})
    monkeypatch.setattr(reading, "_kept_ids", set())
    return reading


KEPT_CASES = {
    "same-text": ("x = 1\n", "x = 1\n", True),
    "edited": ("x = 1\n", "x = 2\n", False),
    "another-path": ("x = 1\n", "x = 1\n", False),
}


@pytest.mark.parametrize(("first", "second", "same"), KEPT_CASES.values(), ids=KEPT_CASES.keys())
def test_a_file_parsed_again_unchanged_gives_the_tree_kept(
    kept_trees: Any, first: str, second: str, same: bool
) -> None:
    one = kept_trees.parsed(first, "a.py")
    other = kept_trees.parsed(second, "a.py" if same or first != second else "b.py")
    assert (one is other) is same
    assert ast.dump(other) == ast.dump(ast.parse(second))


def test_the_trees_kept_are_bounded_by_their_text(kept_trees: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept_trees, "KEPT_TEXT", 100)
    monkeypatch.setattr(kept_trees, "KEPT_FILE", 40)
    texts = [f"name_{n} = '{n:018d}'\n" for n in range(10)]  # 30 characters each: three fit
    trees = [kept_trees.parsed(text, f"m{n}.py") for n, text in enumerate(texts)]
    assert kept_trees._kept_size <= 100
    assert len(kept_trees._kept) == 3
    assert kept_trees.parsed(texts[-1], "m9.py") is trees[-1]  # among the last
    assert kept_trees.parsed(texts[0], "m0.py") is not trees[0]  # let go: parsed again
    large = "x = 1\n" * 10
    assert kept_trees.parsed(large, "big.py") is not kept_trees.parsed(large, "big.py")  # over KEPT_FILE


def test_within_trees_not_kept_no_tree_is_kept_in_that_thread_only(kept_trees: Any) -> None:
    import threading

    before = kept_trees.parsed("x = 1\n", "a.py")
    with kept_trees.trees_not_kept():
        assert kept_trees.parsed("x = 1\n", "a.py") is before  # one kept before is still given
        kept_trees.parsed("y = 2\n", "b.py")
        other = threading.Thread(target=kept_trees.parsed, args=("z = 3\n", "c.py"))  # a thread of its own
        other.start()
        other.join()
        with pytest.raises(SyntaxError), kept_trees.trees_not_kept():  # nested, left by an error
            kept_trees.parsed("def (:\n", "bad.py")
        kept_trees.parsed("w = 4\n", "d.py")
    assert sorted(path for path, _ in kept_trees._kept) == ["a.py", "c.py"]
    kept_trees.parsed("y = 2\n", "b.py")  # after the block: kept again
    assert sorted(path for path, _ in kept_trees._kept) == ["a.py", "b.py", "c.py"]


def test_a_kept_tree_is_walked_once_until_it_is_let_go(kept_trees: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept_trees, "KEPT_TEXT", 100)
    walks: list[ast.Module] = []

    def walk(tree: ast.Module) -> list[str]:
        walks.append(tree)
        return [type(node).__name__ for node in ast.walk(tree)]

    tree = kept_trees.parsed("x = 1\n", "a.py")
    first = kept_trees.kept_walk(tree, walk)
    assert kept_trees.kept_walk(kept_trees.parsed("x = 1\n", "a.py"), walk) is first  # parsed again: the same
    assert first == [type(node).__name__ for node in ast.walk(ast.parse("x = 1\n"))]
    loose = ast.parse("y = 2\n")  # a tree not kept: walked each time
    assert kept_trees.kept_walk(loose, walk) is not kept_trees.kept_walk(loose, walk)
    for n in range(10):  # `a.py` let go, its walk with it
        kept_trees.parsed(f"name_{n} = '{n:018d}'\n", f"m{n}.py")
    assert id(tree) not in kept_trees._walks
    assert walks.count(tree) == 1
    assert len(kept_trees._walks) <= len(kept_trees._kept)
    # a tree let go otherwise than by `parsed` (its id then names another tree): its walk is not taken for another's
    kept = kept_trees.parsed("z = 3\n", "z.py")
    walked = kept_trees.kept_walk(kept, walk)
    kept_trees._walks[id(loose)] = (kept, walked)  # as if `loose` reused the id of a tree no longer kept
    assert kept_trees.kept_walk(loose, walk) == [type(node).__name__ for node in ast.walk(loose)]


def test_a_file_that_does_not_parse_is_not_kept(kept_trees: Any) -> None:
    for _ in range(2):
        with pytest.raises(SyntaxError):
            kept_trees.parsed("def (:\n", "bad.py")
    assert not kept_trees._kept


# --- a scan done leaves nothing for the cyclic garbage collector (an editor scans again at each keystroke)

_FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.mark.parametrize(
    ("fixture", "broken", "cycles"),
    [
        pytest.param("tutor_project", None, False, id="no-state-schema-freed-by-reference-counting"),
        pytest.param("tutor_project", "language_tutor/prompts.py", False, id="a-syntax-error-mid-typing-freed-too"),
        pytest.param("tutor_project", "language_tutor/agent.py", False, id="a-syntax-error-in-the-agent-freed-too"),
        pytest.param("adk2_project", None, True, id="state-schema-trees-kept-in-cycles"),
    ],
)
def test_a_scan_done_leaves_reference_cycles_only_when_it_keeps_trees(
    fixture: str, broken: str | None, cycles: bool
) -> None:
    import gc

    root = _FIXTURES / fixture
    paths = sorted(str(p.relative_to(root)) for p in root.rglob("*.py"))

    def read(path: str) -> str:
        text = (root / path).read_text(encoding="utf-8")
        return text + "\ndef broken(:\n" if path == broken else text

    found = scan(paths, read=read, root=str(root), keep_going=True)
    assert any(s.schema is not None for s in found.state_schemas) is cycles  # the fixtures are what we say
    assert [e.path for e in found.errors] == ([broken] if broken else [])
    del found
    gc.collect()
    gc.disable()
    try:
        found = scan(paths, read=read, root=str(root), keep_going=True)
        del found
        assert (gc.collect() > 0) is cycles
    finally:
        gc.enable()


def test_a_scan_that_fails_midway_leaves_no_reference_cycle(monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    from templating.pysource import visitor

    root = _FIXTURES / "tutor_project"
    paths = sorted(str(p.relative_to(root)) for p in root.rglob("*.py"))

    def too_deep(self: Any) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(visitor._AgentReader, "finish", too_deep)  # every module read, the agents half made
    gc.collect()
    gc.disable()
    try:
        with pytest.raises(RecursionError):
            scan(paths, read=lambda path: (root / path).read_text(encoding="utf-8"), root=str(root), keep_going=True)
        assert gc.collect() == 0
    finally:
        gc.enable()


# -- the file system's answers kept from one scan to the next (`FileAnswers`, the linter's project keeps them)

_IMPORTER = (
    "from google.adk.agents import LlmAgent\nfrom prompts import ROOT\nroot_agent = LlmAgent(instruction=ROOT)\n"
)

ANSWERS_KEPT = {
    # the module `prompts` made after a first scan (where, relative to the folder above the root; as an unsaved
    # text or on disk): found by a scan with the first one's answers, and by one after they are dropped
    "created-inside-the-root": ("root/app/prompts.py", False, False, True),
    "created-outside-the-root": ("prompts.py", False, True, True),
    "unsaved-inside-the-root": ("root/app/prompts.py", True, True, True),
    "unsaved-outside-the-root": ("prompts.py", True, True, True),
}


@pytest.mark.parametrize(
    ("created", "unsaved", "found_kept", "found_after"), ANSWERS_KEPT.values(), ids=ANSWERS_KEPT.keys()
)
def test_a_scan_keeps_the_file_systems_answers_inside_the_root_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, created: str, unsaved: bool, found_kept: bool, found_after: bool
) -> None:
    """An import's candidates not there inside the root stay so for the scans given the same answers (until
    `forget`); outside it they are looked for again by each scan; an unsaved file's name is never taken as not
    there."""
    from templating.pysource.imports import FileAnswers

    root = tmp_path / "root"
    (root / "app").mkdir(parents=True)
    (root / "app" / "agent.py").write_text(_IMPORTER, encoding="utf-8")
    monkeypatch.chdir(root)
    texts: dict[str, str] = {}

    def read(path: str) -> str:
        return texts[path] if path in texts else Path(path).read_text(encoding="utf-8")

    answers = FileAnswers(str(root))

    def found() -> list[str]:
        kept = scan(["app/agent.py"], read=read, root=str(root), unsaved=list(texts), answers=answers)
        return [item.text for item in kept.instructions]

    assert found() == []
    assert answers.missing, "the first scan's answers inside the root are kept"
    assert all(path.startswith(("app", str(root))) for path in answers.missing), "none outside the root"
    module = tmp_path / created
    if unsaved:
        texts[os.path.relpath(module, root) if module.is_relative_to(root) else str(module)] = 'ROOT = "Help."\n'
    else:
        module.write_text('ROOT = "Help."\n', encoding="utf-8")
    assert found() == (["Help."] if found_kept else [])
    answers.forget()
    assert found() == (["Help."] if found_after else [])


# --- a fact read again as it was (`same_as`): what an edit keeps as the very object

_SAME_BASE = {
    "prompt.py": "A = 'Plan the {trip}. '\nB = 'Mind the {budget}.'\n",
    "agent.py": "from google.adk.agents import LlmAgent\n\nfrom prompt import A, B\n\n"
    "root_agent = LlmAgent(name='root', model='m', instruction=A + B, output_key='trip')\n",
}
SAME_CASES = {  # the edit, then whether the instruction and the agent call read again are the same
    "read-again": ({}, True, True),
    "the-calling-file-edited-after-the-call": ({"agent.py": _SAME_BASE["agent.py"] + "# later\n"}, True, True),
    "its-file-edited-after-it": ({"prompt.py": _SAME_BASE["prompt.py"] + "C = 'unused'\n"}, False, True),
    "a-part-moved-in-its-file": ({"prompt.py": "A = 'Plan the {trip}. '\n\nB = 'Mind the {budget}.'\n"}, False, False),
    "a-part-written-otherwise": ({"prompt.py": "A = 'Plan the {trip}. '\nB = \"Mind the {budget}.\"\n"}, False, True),
    "its-call-moved": ({"agent.py": "# moved\n" + _SAME_BASE["agent.py"]}, False, False),
    "its-text-changed": ({"prompt.py": _SAME_BASE["prompt.py"].replace("budget", "money")}, False, False),
}


@pytest.mark.parametrize(("edits", "same", "same_call"), SAME_CASES.values(), ids=SAME_CASES.keys())
def test_an_instruction_and_a_call_read_again_are_the_same_only_when_nothing_of_them_moved(
    tmp_path: Path, edits: dict[str, str], same: bool, same_call: bool
) -> None:
    # (an instruction's characters must come from files of the same text: their lines and columns are then the same)
    def scanned(files: dict[str, str]) -> Scan:
        for name, text in files.items():
            (tmp_path / name).write_text(text, encoding="utf-8")
        return scan([str(tmp_path / "agent.py")], root=str(tmp_path), keep_going=True)

    before = scanned(_SAME_BASE)
    after = scanned({**_SAME_BASE, **edits})
    (was,) = [i for i in before.instructions if i.text.startswith("Plan")]
    (now,) = [i for i in after.instructions if i.text.startswith("Plan")]
    assert was is not now
    assert was.same_as(now) is same
    assert was.same_as(was)
    assert now.same_as(now)
    (call_was,) = before.agents
    (call_now,) = after.agents
    assert call_was.same_as(call_now) is same_call


@pytest.mark.parametrize(("tail", "same"), [("", True), ("# later\n", False)], ids=["again", "one-file-edited"])
def test_an_instruction_written_in_two_files_is_the_same_only_when_both_are(
    tmp_path: Path, tail: str, same: bool
) -> None:
    # its characters come from two files: each must be the same file, with the same text, in the same order
    base = "from google.adk.agents import LlmAgent\n\nfrom prompt import A\n\nroot_agent = LlmAgent(name='root', "
    agent = base + "model='m', instruction=A + 'Mind the {budget}.', output_key='trip')\n"
    (tmp_path / "prompt.py").write_text("A = 'Plan the {trip}. '\n", encoding="utf-8")
    found = []
    for text in (agent, agent + tail, agent.replace("Mind the", "Mind  the")):
        (tmp_path / "agent.py").write_text(text, encoding="utf-8")
        (item,) = scan([str(tmp_path / "agent.py")], root=str(tmp_path), keep_going=True).instructions
        found.append(item)
    assert len(found[0].files) == 2
    assert found[0].same_as(found[1]) is same
    assert not found[0].same_as(found[2])


def test_an_instruction_given_a_state_schema_is_never_the_same_as_another() -> None:
    # (a StateSchema compares by identity: one read again is another object)
    text = (
        "from google.adk.agents import LlmAgent\nfrom pydantic import BaseModel\n\n\nclass S(BaseModel):\n"
        "    trip: str = ''\n\n\nroot_agent = LlmAgent(name='r', model='m', instruction='Plan {trip}.', "
        "state_schema=S)\n"
    )
    path = "schema_agent.py"
    first = scan([path], read=lambda _: text, keep_going=True).instructions
    second = scan([path], read=lambda _: text, keep_going=True).instructions
    assert first
    assert first[0].state_schemas
    assert first[0] != second[0]  # (its StateSchema is another object)
    assert first[0].same_as(first[0])
    assert not first[0].same_as(second[0])
