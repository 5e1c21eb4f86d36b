"""The run-order rules (templating/linter/rules/order.py): T014 on an app's agents, T024 written-later, T025
parallel-race, T026 loop-first-iteration, T027 maybe-written, each on a small ADK app written as authors write them,
linted as `templating lint .` lints it; warning until the app's initial state is declared, then an error where
google-adk is certain to raise (tests/test_adk_truth.py holds the same findings to google-adk itself)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import model_edits
import pytest

from templating import lint_project
from templating.agent_model import AgentModel, build
from templating.linter.config import LintConfig
from templating.linter.fixes import fixes_for
from templating.linter.registry import Diagnostic
from templating.linter.rules.order import OrderIndex

HEAD = "from google.adk.agents import LlmAgent, LoopAgent, ParallelAgent, SequentialAgent\n\n"

SEQUENTIAL = HEAD + (
    'writer = LlmAgent(name="writer", instruction="Draft. Critique so far: {critique}", output_key="draft")\n'
    'critic = LlmAgent(name="critic", instruction="Review {draft}.", output_key="critique")\n'
    'root_agent = SequentialAgent(name="blog", sub_agents=[writer, critic])\n'
)
OWN_OUTPUT = HEAD + (
    'narrator = LlmAgent(name="narrator", instruction="Improve {audio_content}.", output_key="audio_content")\n'
    'root_agent = SequentialAgent(name="studio", sub_agents=[narrator])\n'
)
PARALLEL = HEAD + (
    'a = LlmAgent(name="pricing", instruction="Price it.", output_key="pricing")\n'
    'b = LlmAgent(name="market", instruction="Avoid {pricing}.", output_key="market")\n'
    'fan = ParallelAgent(name="fan", sub_agents=[a, b])\n'
    'merge = LlmAgent(name="merge", instruction="Merge {pricing} and {market}.")\n'
    'root_agent = SequentialAgent(name="research", sub_agents=[fan, merge])\n'
)
LOOP = HEAD + (
    'refiner = LlmAgent(name="refiner", instruction="Refine with {criticism}.", output_key="essay")\n'
    'critic = LlmAgent(name="critic", instruction="Criticise {essay}.", output_key="criticism")\n'
    'root_agent = LoopAgent(name="essay_loop", sub_agents=[refiner, critic], max_iterations=3)\n'
)
TOOL = HEAD + (
    "def add_to_cart(item: str, tool_context) -> dict:\n"
    '    tool_context.state["cart"] = [item]\n'
    '    return {"ok": True}\n\n'
    'shop = LlmAgent(name="shop", instruction="Help them shop.", tools=[add_to_cart])\n'
    'checkout = LlmAgent(name="checkout", instruction="Check out {cart}.")\n'
    'root_agent = SequentialAgent(name="store", sub_agents=[shop, checkout])\n'
)
NOWHERE = HEAD + 'root_agent = LlmAgent(name="helper", instruction="Help {customer_name}.")\n'

# (id, agent.py, declared initial state, (code, severity, the message's start))
CASES = [
    (
        "later",
        SEQUENTIAL,
        None,
        (
            "T024",
            "warning",
            "`critique` is first written by critic's output_key, which runs after writer in blog's sub_agents",
        ),
    ),
    ("later-declared", SEQUENTIAL, "[]", ("T024", "error", "`critique` is first written by critic's output_key")),
    (
        "own-output-key",
        OWN_OUTPUT,
        "[]",
        (
            "T024",
            "error",
            "`audio_content` is written only by narrator's output_key, after narrator's instruction is read",
        ),
    ),
    (
        "parallel",
        PARALLEL,
        "[]",
        (
            "T025",
            "error",
            "`pricing` is written only by pricing's output_key, which runs alongside market (fan's sub_agents): a race",
        ),
    ),
    (
        "loop",
        LOOP,
        "[]",
        ("T026", "error", "`criticism` is first written by critic's output_key, later in essay_loop's sub_agents"),
    ),
    (
        "tool-only",
        TOOL,
        "[]",
        (
            "T027",
            "warning",
            "`cart` is written only by the tool add_to_cart of shop, which runs only if the model calls it",
        ),
    ),
    (
        "nowhere",
        NOWHERE,
        None,
        ("T014", "warning", "`customer_name` is read by the instruction of helper, but nothing in the app"),
    ),
    (
        "nowhere-declared",
        NOWHERE,
        '["user:name"]',
        ("T014", "error", "`customer_name` is read by the instruction of helper"),
    ),
]


def app_at(tmp_path: Path, files: dict[str, str], initial: str | None = None) -> Path:
    setting = "" if initial is None else f"initial-state = {initial}\n"
    (tmp_path / "pyproject.toml").write_text(f"[tool.templating]\n{setting}", encoding="utf-8")
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def order_findings(root: Path) -> list[Diagnostic]:
    codes = {"T014", "T024", "T025", "T026", "T027"}
    return [d for d in lint_project([str(root)], root=root).diagnostics if d.code in codes]


@pytest.mark.parametrize(("code", "initial", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_order_finding(tmp_path: Path, code: str, initial: str | None, expected: tuple[str, str, str]) -> None:
    root = app_at(tmp_path, {"shop/__init__.py": "from . import agent\n", "shop/agent.py": code}, initial)
    (finding,) = order_findings(root)
    rule, severity, start = expected
    assert (finding.code, finding.severity) == (rule, severity)
    assert finding.message.startswith(start), finding.message
    assert code[finding.span.start : finding.span.end].startswith("{")
    declare = "initial-state = [" in (finding.help or "")
    assert declare == (initial is None), finding.help  # undeclared: the help says how to declare it
    (optional,) = [fix for fix in fixes_for(finding, code, dialect="adk") if fix.title.startswith("Make it optional")]
    assert not optional.safe


def test_the_order_that_works_has_no_finding(tmp_path: Path) -> None:
    fixed = SEQUENTIAL.replace("[writer, critic]", "[critic, writer]").replace("{draft}", "{draft?}")
    root = app_at(tmp_path, {"blog/__init__.py": "from . import agent\n", "blog/agent.py": fixed}, "[]")
    assert order_findings(root) == []


def test_a_key_the_declared_initial_state_gives_is_no_finding(tmp_path: Path) -> None:
    root = app_at(
        tmp_path, {"help/__init__.py": "from . import agent\n", "help/agent.py": NOWHERE}, '["customer_name"]'
    )
    assert order_findings(root) == []


def test_another_apps_writer_does_not_count(tmp_path: Path) -> None:
    billing = HEAD + 'root_agent = LlmAgent(name="biller", instruction="Bill.", output_key="invoice")\n'
    support = HEAD + 'root_agent = LlmAgent(name="support", instruction="Explain {invoice}.")\n'
    files = {
        "billing/__init__.py": "from . import agent\n",
        "billing/agent.py": billing,
        "support/__init__.py": "from . import agent\n",
        "support/agent.py": support,
    }
    (finding,) = order_findings(app_at(tmp_path, files, "[]"))
    assert (finding.code, finding.severity, finding.path.endswith("support/agent.py")) == ("T014", "error", True)
    assert "only the app billing writes it: biller's output_key" in finding.message


def test_a_write_known_only_at_run_time_weakens_only_the_agents_it_reaches(tmp_path: Path) -> None:
    code = HEAD + (
        "def remember(key: str, value: str, tool_context) -> dict:\n"
        "    tool_context.state[key] = value\n"
        '    return {"ok": True}\n\n'
        'first = LlmAgent(name="first", instruction="Start with {plan}.", output_key="start")\n'
        'memo = LlmAgent(name="memo", instruction="Note things.", tools=[remember], output_key="approved_plan")\n'
        'last = LlmAgent(name="last", instruction="Finish {aproved_plan} for {budget}.")\n'
        'root_agent = SequentialAgent(name="flow", sub_agents=[first, memo, last])\n'
    )
    found = order_findings(app_at(tmp_path, {"flow/__init__.py": "from . import agent\n", "flow/agent.py": code}, "[]"))
    by_key = {code[d.span.start : d.span.end]: d for d in found}
    assert (by_key["{plan}"].code, by_key["{plan}"].severity) == ("T014", "error")  # it runs before the write
    weak = by_key["{aproved_plan}"]
    assert (weak.code, weak.severity) == ("T014", "warning")
    assert "known only at run time" in weak.message
    assert "not checked further" in weak.message
    assert weak.help.startswith("did you mean 'approved_plan', which is written?")
    assert "{budget}" not in by_key  # no key close to it: the write known only at run time may give it


def test_an_instruction_of_no_app_keeps_the_project_wide_check(tmp_path: Path) -> None:
    code = HEAD + (
        'writer = LlmAgent(name="writer", instruction="Use {notes}.")\n'
        'keeper = LlmAgent(name="keeper", instruction="Keep.", output_key="notes")\n'
    )
    root = app_at(tmp_path, {"lib/agents.py": code}, "[]")
    assert order_findings(root) == []  # no root agent: a writer anywhere in the project counts, as always
    alone = app_at(tmp_path, {"lib/agents.py": code.replace('output_key="notes"', 'output_key="other"')}, "[]")
    (finding,) = order_findings(alone)
    assert (finding.code, finding.severity) == ("T014", "warning")


def test_a_sub_agents_global_instruction_is_not_read(tmp_path: Path) -> None:
    code = HEAD + (
        'child = LlmAgent(name="child", instruction="Help.", global_instruction="Customer: {customer}.")\n'
        'root_agent = LlmAgent(name="root", instruction="Route.", sub_agents=[child])\n'
    )
    root = app_at(tmp_path, {"desk/__init__.py": "from . import agent\n", "desk/agent.py": code}, "[]")
    assert order_findings(root) == []  # google-adk uses only the tree root's global_instruction
    rooted = code.replace('instruction="Route."', 'instruction="Route.", global_instruction="For {customer}."')
    (finding,) = order_findings(app_at(tmp_path, {"desk/agent.py": rooted}, "[]"))
    assert (finding.code, finding.severity) == ("T014", "error")
    assert "the global instruction of root" in finding.message


def test_a_user_severity_wins(tmp_path: Path) -> None:
    root = app_at(tmp_path, {"blog/__init__.py": "from . import agent\n", "blog/agent.py": SEQUENTIAL}, "[]")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.templating]\ninitial-state = []\nseverity = { T024 = "info" }\n', encoding="utf-8"
    )
    (finding,) = order_findings(root)
    assert (finding.code, finding.severity) == ("T024", "info")


JINJA_SEQUENTIAL = (
    "from google.adk.agents import LlmAgent, SequentialAgent\n\n"
    "from templating import jinja\n\n"
    "writer = LlmAgent(\n"
    '    name="writer",\n'
    '    instruction=jinja("Draft for {{ user.name }}.{% if notes is defined %} {{ notes }}{% endif %} '
    'Critique: {{ critique }}"),\n'
    '    output_key="draft",\n'
    ")\n"
    'critic = LlmAgent(name="critic", instruction="Review {draft}.", output_key="critique")\n'
    'root_agent = SequentialAgent(name="blog", sub_agents=[writer, critic])\n'
)


@pytest.mark.parametrize(
    ("initial", "expected"),
    [
        (None, {"critique": ("T024", "warning"), "user.name": ("T014", "warning")}),
        ('["user:name"]', {"critique": ("T024", "error")}),
    ],
    ids=["undeclared", "declared"],
)
def test_a_jinja_instruction_gets_the_order_rules(
    tmp_path: Path, initial: str | None, expected: dict[str, tuple[str, str]]
) -> None:
    root = app_at(tmp_path, {"blog/__init__.py": "from . import agent\n", "blog/agent.py": JINJA_SEQUENTIAL}, initial)
    found = {JINJA_SEQUENTIAL[d.span.start : d.span.end]: d for d in order_findings(root)}
    assert {shown: (d.code, d.severity) for shown, d in found.items()} == expected  # `notes` is guarded
    later = found["critique"]
    assert later.message.startswith("`critique` is first written by critic's output_key, which runs after writer")
    assert "JinjaUndefinedError" in later.message
    assert "{% if critique is defined %}" in later.help
    assert fixes_for(later, JINJA_SEQUENTIAL, dialect="jinja") == []  # no `{critique?}` written into Jinja2
    in_order = JINJA_SEQUENTIAL.replace("[writer, critic]", "[critic, writer]").replace("{draft}", "{draft?}")
    (root / "blog/agent.py").write_text(in_order, encoding="utf-8")
    assert [in_order[d.span.start : d.span.end] for d in order_findings(root)] == (
        ["user.name"] if initial is None else []
    )


def test_a_jinja_instruction_of_no_app_keeps_the_project_wide_check(tmp_path: Path) -> None:
    code = (
        "from google.adk.agents import LlmAgent\n\nfrom templating import jinja\n\n"
        'writer = LlmAgent(name="writer", instruction=jinja("Use {{ notes }} and {{ topic }}."))\n'
        'keeper = LlmAgent(name="keeper", instruction="Keep.", output_key="notes")\n'
    )
    (finding,) = order_findings(app_at(tmp_path, {"lib/agents.py": code}, "[]"))
    assert (finding.code, finding.severity, code[finding.span.start : finding.span.end]) == ("T014", "warning", "topic")
    assert "nothing in the linted files writes" in finding.message  # the project-wide T014, as before


# --- the index of a model built after an edit takes the parts of the apps the edit does not touch


def index_of(index: OrderIndex) -> tuple[list[tuple[object, list[tuple[str, object]]]], set[object]]:
    """The index's readers in its order (the instructions, then each one's readers: app order) and what is attached."""
    readers = [(key, [(agent.id, read) for agent, read in index.readers[key]]) for key in index.readers]
    return readers, set(index.attached)


def assert_index_after(earlier: OrderIndex, model: AgentModel, fresh: AgentModel) -> None:
    index = OrderIndex.of(model, before=earlier)
    assert index_of(index) == index_of(OrderIndex.of(fresh))
    assert any(index.parts[app.id] is earlier.parts.get(app.id) for app in model.apps), "some part is taken"


@pytest.mark.parametrize("edit", model_edits.EDITS, ids=[e.id for e in model_edits.EDITS])
def test_the_order_index_after_an_edit_is_a_fresh_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: model_edits.Edit
) -> None:
    monkeypatch.chdir(tmp_path)
    _, before, model, fresh = model_edits.edited(tmp_path, edit)
    assert_index_after(OrderIndex.of(before), model, fresh)


@pytest.mark.parametrize("change", [c[1] for c in model_edits.SCAN_EDITS], ids=[c[0] for c in model_edits.SCAN_EDITS])
def test_the_order_index_takes_no_part_whose_agents_read_otherwise(tmp_path: Path, change: Any) -> None:
    """An app taken whole whose agent now reads another tree root's global instruction: its part is made again."""
    found = model_edits.scanned(tmp_path)
    config = LintConfig(root=tmp_path)
    before = build(found, config, tmp_path)
    earlier = OrderIndex.of(before)
    edited = change(found)
    assert_index_after(earlier, build(edited, config, tmp_path, before=before), build(edited, config, tmp_path))
