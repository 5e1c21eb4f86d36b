"""State keys an instruction names where nothing inserts their value (`templating.linter.rules.state_names`):
T029 (`<key>` in a google-adk string), T030 (a written key named in the prose), T032 (a placeholder in a
static_instruction), their fixes, and the same findings whether a file is linted alone or with its project.

The phrasings are those of public ADK code and of reports on ADK's trackers (each case says where)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from templating.linter import Diagnostic, lint_project
from templating.linter.fix_regions import Region, fix_file
from templating.linter.fixes import fixes_for
from templating.linter.result import LintResult
from templating.linter.rules.state_names import (
    angle_placeholders,
    named_not_injected,
    static_placeholders,
    written_keys,
)
from templating.pysource import Instruction, scan

KEYS = {
    key: "written by output_key at agent.py:1"
    for key in ("topic", "user:name", "plan", "origin", "itinerary", "user_id", "br", "draft", "notes")
}


def _instruction(text: str, *, static: bool = False) -> Instruction:
    """The instruction (or static instruction) of one google-adk agent whose argument is `text`, written in a
    triple-quoted literal: each character of `text` is one of the file."""
    assert '"""' not in text
    assert not text.endswith('"')
    assert "\\" not in text
    argument = "static_instruction" if static else "instruction"
    code = f'from google.adk.agents import LlmAgent\n\nagent = LlmAgent(name="a", {argument}="""{text}""")\n'
    found = scan(["agent.py"], read={"agent.py": code}.__getitem__)
    (item,) = found.static_instructions if static else found.instructions
    return item


def _shown(item: Instruction, findings: list[Diagnostic]) -> list[str]:
    """The text of each finding, as written."""
    source = item.file_text(item.path) or ""
    return [source[d.span.start : d.span.end] for d in findings if d.span]


# --- T029: <key> in a google-adk string

T029_CASES = [
    ("a-story-about", "Write a short story about <topic>.", ["<topic>"]),
    ("scoped-and-optional", "Greet <user:name> warmly, then go over <plan?> with them.", ["<user:name>", "<plan?>"]),
    ("not-a-state-key", "Think in <thinking>, then answer. Use <example> as a guide.", []),
    ("a-tag-then-a-key", "Think in <thinking>, then write about <topic>.", ["<topic>"]),
    ("a-tag-then-a-key-in-code", "Use <example> as a guide. Then `<topic>`.", []),
    ("a-closed-tag", "Here is the plan:\n<itinerary>\nday 1\n</itinerary>", []),
    ("around-its-own-value", "<itinerary>\n{itinerary}\n<itinerary>", []),  # travel-concierge: a slash missing
    ("a-self-closing-tag", "If <origin/> is empty, ask. Fill <origin> in.", []),
    ("a-json-blank", 'Return them as {"origin": "<origin>", "start": "YYYY-MM-DD"}', []),
    ("a-quoted-blank", "Reply with 'Going to <origin>' only.", []),
    ("a-format-blank", "Answer as:\nTitle: <topic>\nBody: <notes>", []),
    ("a-path", "Call GET /users/<user_id>/orders for the orders.", []),
    ("in-code", "Call `lookup(<user_id>)` first.\n```\n<topic>\n```", []),
    ("named-as-a-tag", "Put your notes inside <notes> tags, and the draft in a <draft> block.", []),
    ("an-html-void-tag", "Separate lines with <br> when needed.", []),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in T029_CASES], ids=[c[0] for c in T029_CASES])
def test_t029_angle_brackets_of_a_state_key_in_an_adk_string(text: str, expected: list[str]) -> None:
    item = _instruction(text)
    findings = angle_placeholders(item, KEYS)
    assert _shown(item, findings) == expected
    assert all(d.code == "T029" and d.severity == "warning" for d in findings)


def test_t029_says_why_and_what_to_write() -> None:
    item = _instruction("Write a short story about <topic>.")
    (finding,) = angle_placeholders(item, {"topic": 'read by LlmAgent(name="critic").instruction'})
    assert finding.message == (
        "'<topic>' is sent to the model as written: google-adk substitutes only {key} placeholders, and 'topic' "
        'is a state key (read by LlmAgent(name="critic").instruction)'
    )
    assert finding.help == (
        "write {topic} to insert its value ({topic?} if it may be missing); <key> is templating's own syntax, "
        "read by instruction(...)"
    )
    assert (finding.path, finding.origin) == ("agent.py", 'LlmAgent(name="a").instruction')


def test_t029_reads_only_adk_strings() -> None:
    files = {"p.py": "from templating import instruction\n\nP = instruction('Write about <topic>.')\n"}
    (item,) = scan(["p.py"], read=files.__getitem__).instructions
    assert item.dialect == "angle"
    assert angle_placeholders(item, KEYS) == []


# --- T030: a written key named as state, never inserted

WRITTEN = {
    key: "written by output_key at agent.py:1"
    for key in (
        *("research_evaluation", "current_code", "requirements", "generated_script", "visual_concepts"),
        *("current_document", "initial_topic", "generated_code", "topic", "plan", "market_data_analysis_output"),
        *("last_math_operation", "meeting_summary", "user:plan"),
    )
}

T030_CASES = [
    (  # adk-samples #671 (deep-search)
        "quoted-then-state-key",
        "1.  Review the 'research_evaluation' state key to understand the feedback and required fixes.",
        ["'research_evaluation'"],
    ),
    (  # adk-python #1948
        "python-access",
        "Read state['current_code'] (if exists) and state['requirements']. Generate the code.",
        ["state['current_code']", "state['requirements']"],
    ),
    (  # adk-docs' youtube_shorts_assistant
        "python-access-in-backticks",
        "Combine the script from `state['generated_script']` and the visuals from session.state[\"visual_concepts\"].",
        ["state['generated_script']", 'session.state["visual_concepts"]'],
    ),
    (  # adk-docs' loop agent tutorial (adk-python #315)
        "state-for-and-state-key",
        "Check the session state for 'current_document'. Base it on the topic in state key 'initial_topic'.",
        ["'current_document'", "'initial_topic'"],
    ),
    (  # adk-docs' sequential agent sample (adk-docs #150)
        "state-under-the-key",
        "Review the Python code provided in the session state under the key 'generated_code'.",
        ["'generated_code'"],
    ),
    (  # adk-docs' custom agent sample (adk-docs #460)
        "state-with-key",
        "Write a story based on the topic provided in session state with key 'topic'.",
        ["'topic'"],
    ),
    ("stored-in-state-under", 'Follow the plan stored in state under "plan".', ['"plan"']),
    (
        "from-state",
        "Summarize `user:plan` from the session state, and state.get('topic').",
        ["`user:plan`", "state.get('topic')"],
    ),
    (  # adk-samples' financial-advisor: no quotes, right beside "state key"
        "bare-beside-state-key",
        "* Required State Key: market_data_analysis_output.\nRead the market_data_analysis_output state key.",
        ["market_data_analysis_output"],
    ),
    ("bare-from-state-key", "The market_data_analysis_output (from state key).", ["market_data_analysis_output"]),
    ("curly-quotes", "Review the \u2018plan\u2019 state key.", ["\u2018plan\u2019"]),
    (  # adk-docs' toolset sample: a tool writes the key
        "the-state-of-a-written-key",
        "Announce the state of 'last_math_operation' if it's set.",
        ["'last_math_operation'"],
    ),
    # left alone
    ("inserted-too", "Review the 'plan' state key:\n{plan}", []),
    ("inserted-optional", "Use state['plan'] if given: {plan?}", []),
    ("not-written", "Transform the idea from `state['raw_idea']`.", []),
    ("a-write", "Save to state['current_code'].", []),
    ("a-write-by-a-tool", "Call the store_state tool with key 'meeting_summary' and the summary.", []),
    ("a-passive-write", "The plan MUST be stored in the state key 'plan'.", []),
    ("its-own-output", "Your answer is saved in state under 'topic'.", []),
    ("prose-state-of", "Research the current state of 'carbon capture methods'.", []),
    ("the-state-of-a-word", "Describe the state of 'economy' in one line.", []),  # no key of the project
    ("fenced-code", "Example:\n```python\nvalue = state['plan']\n```\nExplain it.", []),
    ("fenced-then-prose", "Example:\n```\nx = state['plan']\n```\nThen read state['plan'] again.", ["state['plan']"]),
    ("a-write-then-a-read", "Save to state['plan']. Later, read state['plan'] again.", ["state['plan']"]),
    ("quoted-without-state", "Execute every query listed in 'topic' with the search tool.", []),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in T030_CASES], ids=[c[0] for c in T030_CASES])
def test_t030_a_written_key_named_as_state_but_never_inserted(text: str, expected: list[str]) -> None:
    item = _instruction(text)
    findings = named_not_injected(item, WRITTEN)
    assert _shown(item, findings) == expected
    assert all(d.code == "T030" and d.severity == "warning" for d in findings)


def test_t030_one_finding_per_key_and_the_angle_syntax() -> None:
    item = _instruction("Read state['plan']. Then review the 'plan' state key again.")
    (finding,) = named_not_injected(item, WRITTEN)
    assert finding.message == (
        "state['plan'] names state key 'plan', but this instruction never inserts it: the model reads the words, "
        "not the value ('plan' is written by output_key at agent.py:1)"
    )
    assert finding.help == (
        "write {plan} where the value belongs (google-adk inserts a placeholder's value; a name in the prose stays "
        "a name), or {plan?} if it may be missing"
    )
    files = {"p.py": "from templating import instruction\n\nP = instruction(\"Review the 'plan' state key.\")\n"}
    (angle,) = scan(["p.py"], read=files.__getitem__).instructions
    (finding,) = named_not_injected(angle, WRITTEN)
    assert finding.help is not None
    assert finding.help.startswith("write <plan> where the value belongs (templating inserts")


# --- T032: a placeholder in a static_instruction

T032_CASES = [
    ("a-written-key", "You are {persona}, a museum guide.", {"persona"}, ["{persona}"]),
    ("optional-and-scoped", "Hello {user:name?}. {persona}", {"user:name", "persona"}, ["{user:name?}", "{persona}"]),
    ("not-a-key", 'Answer as {"answer": "{answer}"}; cite {source}.', {"persona"}, []),
    ("no-braces", "You are a museum guide.", {"persona"}, []),
]


@pytest.mark.parametrize(("text", "keys", "expected"), [c[1:] for c in T032_CASES], ids=[c[0] for c in T032_CASES])
def test_t032_a_state_key_s_placeholder_in_a_static_instruction(text: str, keys: set[str], expected: list[str]) -> None:
    item = _instruction(text, static=True)
    findings = static_placeholders(item, dict.fromkeys(keys, "written by output_key at agent.py:3"))
    assert _shown(item, findings) == expected
    assert all(d.code == "T032" for d in findings)


def test_t032_in_templating_s_own_agent_reads_angle_placeholders() -> None:
    files = {
        "agent.py": "from templating import Agent\n\n"
        "guide = Agent(name='guide', static_instruction='You are <persona>. Never say <thinking>.', instruction='Hi')\n"
    }
    (item,) = scan(["agent.py"], read=files.__getitem__).static_instructions
    assert item.dialect == "angle"
    findings = static_placeholders(item, {"persona": "written by output_key at agent.py:3", "x": "..."})
    assert _shown(item, findings) == ["<persona>"]


def test_written_keys_names_the_first_write_of_each_key() -> None:
    files = {
        "b.py": "def save(tool_context):\n    tool_context.state['plan'] = 1\n    tool_context.state[name] = 2\n",
        "a.py": "from google.adk.agents import LlmAgent\n\nw = LlmAgent(name='w', output_key='plan')\n",
    }
    found = scan(["b.py", "a.py"], read=files.__getitem__)
    assert written_keys(found.writes) == {"plan": "written by output_key at a.py:3"}


# --- the rules in a run: the project's keys, suppressions, a file linted alone

PROJECT = {
    "app/__init__.py": "from . import agent\n",
    "app/prompt.py": (
        "WRITER_INSTR = 'Write a script about <topic> for the audience.'\n"
        "FORMATTER_INSTR = \"Format the script from state['generated_script'].\"\n"
        "GUIDE_STATIC = 'You are {persona}, a guide.'\n"
    ),
    "app/agent.py": (
        "from google.adk.agents import LlmAgent, SequentialAgent\n\n"
        "from .prompt import FORMATTER_INSTR, GUIDE_STATIC, WRITER_INSTR\n\n"
        "picker = LlmAgent(name='picker', instruction='Pick a topic and a persona.', output_key='topic')\n"
        "writer = LlmAgent(name='writer', instruction=WRITER_INSTR, output_key='generated_script')\n"
        "formatter = LlmAgent(name='formatter', instruction=FORMATTER_INSTR)\n"
        "guide = LlmAgent(name='guide', static_instruction=GUIDE_STATIC, instruction='Greet.', output_key='persona')\n"
        "root_agent = SequentialAgent(name='root', sub_agents=[picker, writer, formatter, guide])\n"
    ),
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, text in PROJECT.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _rows(result: LintResult) -> list[tuple[str, str, int, str]]:
    return [
        (d.code, d.path or "", d.span.line, result.sources[d.path or ""][d.span.start : d.span.end])
        for d in result.diagnostics
        if d.span
    ]


def test_a_run_reports_the_three_rules_where_they_are_written(project: Path) -> None:
    whole = lint_project(["."])
    assert _rows(whole) == [
        ("T029", "app/prompt.py", 1, "<topic>"),
        ("T030", "app/prompt.py", 2, "state['generated_script']"),
        ("T032", "app/prompt.py", 3, "{persona}"),
    ]
    # the prompt module alone gets the whole tree's findings (the agents writing the keys are its context)
    assert _rows(lint_project(["app/prompt.py"])) == _rows(whole)
    assert _rows(lint_project(["."], ignore=["T029", "T030", "T032"])) == []
    # GUIDE_STATIC is given only as a static instruction: no instruction of its own (no T014 on {persona})
    assert [t.name for t in whole.templates if t.name == "GUIDE_STATIC"] == []


def test_a_suppression_comment_silences_them(project: Path) -> None:
    prompt = project / "app" / "prompt.py"
    prompt.write_text(
        PROJECT["app/prompt.py"]
        .replace("audience.'\n", "audience.'  # templating: ignore[T029]\n")
        .replace(']."\n', ']."  # templating: ignore[T030]\n'),
        encoding="utf-8",
    )
    assert [row[0] for row in _rows(lint_project(["."]))] == ["T032"]


# --- fixes


def _fix(path: Path, *, unsafe: bool) -> str:
    from templating.linter.engine import Project

    text = path.read_text(encoding="utf-8")
    project = Project(paths=[str(path)], root=path.parent)
    result = project.lint([str(path)])
    items, _ = project.instructions(str(path))
    regions = [Region(item.text, item.dialect, tuple(item.written_as_is(str(path)))) for item in items]
    return fix_file(str(path), text, result.diagnostics, regions, unsafe=unsafe).after


FIX_CASES = [
    (  # T029: <topic> -> {topic}, only with unsafe fixes
        "t029",
        "topic_finder = LlmAgent(name='t', instruction='Pick.', output_key='topic')\n"
        "writer = LlmAgent(name='writer', instruction='Write about <topic>.')\n",
        "Write about {topic}.",
    ),
    (  # T030: the access -> the placeholder
        "t030",
        "writer = LlmAgent(name='w', instruction='Draft.', output_key='draft')\n"
        "editor = LlmAgent(name='e', instruction=\"Edit the draft in state['draft'] now.\")\n",
        "Edit the draft in {draft} now.",
    ),
]


@pytest.mark.parametrize(("code", "expected"), [c[1:] for c in FIX_CASES], ids=[c[0] for c in FIX_CASES])
def test_the_fixes_are_unsafe_and_write_the_adk_placeholder(tmp_path: Path, code: str, expected: str) -> None:
    path = tmp_path / "agent.py"
    source = "from google.adk.agents import LlmAgent\n\n" + code
    path.write_text(source, encoding="utf-8")
    assert _fix(path, unsafe=False) == source
    assert expected in _fix(path, unsafe=True)


def test_no_brace_is_written_into_an_f_string(tmp_path: Path) -> None:
    path = tmp_path / "agent.py"
    source = (
        "from google.adk.agents import LlmAgent\n\nKIND = 'short'\n\n"
        "topic_finder = LlmAgent(name='t', instruction='Pick.', output_key='topic')\n"
        "writer = LlmAgent(name='writer', instruction=f'Write a {KIND} story about <topic>.')\n"
    )
    path.write_text(source, encoding="utf-8")
    result = lint_project([str(path)], root=tmp_path)
    (finding,) = result.diagnostics
    assert finding.code == "T029"
    assert [fix.title for fix in fixes_for(finding, source, dialect="adk")] == ["Replace with {topic}"]
    assert _fix(path, unsafe=True) == source  # {topic} in an f-string would be Python's replacement field


def test_t030_has_no_fix_for_a_phrase() -> None:
    item = _instruction("Review the 'plan' state key.")
    (finding,) = named_not_injected(item, WRITTEN)
    text = item.file_text(item.path) or ""
    assert fixes_for(finding, text, dialect="adk") == []


GLOBAL_AND_STATIC = (
    "from google.adk.agents import LlmAgent\n\n"
    "picker = LlmAgent(name='picker', instruction='Pick a topic.', output_key='topic')\n"
    "root_agent = LlmAgent(\n"
    "    name='root',\n"
    "    global_instruction=\"Stay on <topic>; read state['topic'] first; answer in {lang}.\",\n"
    "    static_instruction=\"Stay on <topic>; read state['topic'] first; answer in {lang}.\",\n"
    "    instruction='Help the user.',\n"
    "    sub_agents=[picker],\n"
    ")\n"
)


def test_a_global_instruction_gets_the_instruction_s_checks_and_a_static_one_only_t032(tmp_path: Path) -> None:
    """google-adk injects a string global_instruction (T014, T029, T030 as for an instruction); it sends a
    static_instruction as written: only its placeholders of state keys are reported (T032: `lang` is one, the
    global instruction reads it), nothing it would look up."""
    (tmp_path / "agent.py").write_text(GLOBAL_AND_STATIC, encoding="utf-8")
    result = lint_project([str(tmp_path / "agent.py")], root=tmp_path)
    rows = [(d.code, d.span.line, GLOBAL_AND_STATIC[d.span.start : d.span.end]) for d in result.diagnostics if d.span]
    assert rows == [
        ("T029", 6, "<topic>"),
        ("T030", 6, "state['topic']"),
        ("T014", 6, "{lang}"),
        ("T032", 7, "{lang}"),
    ]
    assert [d.origin for d in result.diagnostics] == [
        *['LlmAgent(name="root").global_instruction'] * 3,
        'LlmAgent(name="root").static_instruction',
    ]


_FRAGMENTS = ["state", "State", "STATE", "\u017ftate", "stat", "key", " ", "'plan'", '"plan"', "plan", "from", "the"]
_FRAGMENTS += ["session", "(", ")", ".get(", "[", "]", "\n", "named ", "ctx.", ": "]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=14).map("".join))
def test_a_text_without_the_word_state_is_not_searched_and_nothing_is_lost(text: str) -> None:
    """The mentions are found only in a text holding "state" as the patterns match it (any case, the long s too):
    the same mentions as when every text is searched."""
    import re

    from templating.linter.rules import state_names

    found = list(state_names._mentions(text))
    searched = state_names._STATE_WORD
    try:
        state_names._STATE_WORD = re.compile("")  # every text searched
        assert found == list(state_names._mentions(text))
    finally:
        state_names._STATE_WORD = searched


_SPLIT = [*_FRAGMENTS, ", ", "-", "*", "{", "}", "# ", "\u2018plan\u2019", "`plan`", "user:plan", "x" * 30, "!"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_SPLIT), max_size=16).map("".join))
def test_only_the_runs_holding_state_are_searched_and_nothing_is_lost(text: str) -> None:
    """A mention starts in a run of names, spaces, quotes and `.:()[]` holding "state" (`state.get('plan', ...)`
    goes on past it): searching those runs finds what searching the whole text finds."""
    import re

    from templating.linter.rules import state_names

    found = list(state_names._mentions(text))
    runs = state_names._RUN
    try:
        state_names._RUN = re.compile(r"(?s).*")  # the whole text one run
        assert found == list(state_names._mentions(text))
    finally:
        state_names._RUN = runs


@pytest.mark.parametrize(
    ("text", "mentions"),
    [
        pytest.param("state.get('a', x, state['b'])", [(0, 29, "a")], id="a-get-tail-holding-another-access"),
        pytest.param("Use state.get('a', 1 + 2 * 3).", [(4, 29, "a")], id="a-get-tail-past-its-run"),
        pytest.param("- 'plan' state key; * state['b']", [(2, 8, "plan"), (22, 32, "b")], id="two-runs"),
        pytest.param("{'plan' state key}", [(1, 7, "plan")], id="run-inside-braces"),
    ],
)
def test_mentions_across_runs(text: str, mentions: list[tuple[int, int, str]]) -> None:
    """Mentions in runs apart, and a `.get(...)` tail that goes past the run it starts in."""
    from templating.linter.rules import state_names

    assert list(state_names._mentions(text)) == mentions
