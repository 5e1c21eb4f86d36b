"""The one registry of lint rules: code, name, severity, default, dialects, scope and summary of each.

Every other part of the linter (rule selection, which rules apply to which text, the docs' rule
table, SARIF's rule list) reads this table; a rule's check lives in its module under
`templating/linter/rules/`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, TypeAlias
from typing import Literal as _Literal

from ..nodes import SCOPE_PREFIXES, TEMP_PREFIX, Span

Severity: TypeAlias = _Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
# What a rule reads: one template's text, the instructions of one Python file, or a whole run.
Scope: TypeAlias = _Literal["template", "python", "project"]

# The scope prefixes (defined in nodes.py), as a regex alternative and in prose.
PREFIX_ALTERNATIVES = "|".join(re.escape(prefix) for prefix in SCOPE_PREFIXES)
PREFIXES_OR = ", ".join(SCOPE_PREFIXES[:-1]) + " or " + SCOPE_PREFIXES[-1]
PREFIXES_AND = ", ".join(SCOPE_PREFIXES[:-1]) + " and " + SCOPE_PREFIXES[-1]

_BOTH = frozenset({"angle", "adk"})
_ANGLE = frozenset({"angle"})
_ADK = frozenset({"adk"})


@dataclass(frozen=True, slots=True)
class Rule:
    """A lint rule: its stable code, a short name, its severity, what it catches, and where it applies.

    `dialects`: the template syntaxes it reads (`angle`, `adk`, `jinja`); `scope`: `template` (one
    text), `python` (instructions found in Python files, over the project's code) or `project` (a
    whole run); `default`: on unless selected."""

    code: str
    name: str
    severity: Severity
    summary: str
    example: str
    default: bool = True
    dialects: frozenset[str] = _BOTH
    scope: Scope = "template"


RULES: dict[str, Rule] = {
    rule.code: rule
    for rule in (
        Rule("T001", "unknown-key", "error", "placeholder key not in the declared schema", "<nmae> (schema: name)"),
        Rule(
            "T002",
            "spaced-placeholder",
            "warning",
            "whitespace inside a would-be placeholder",
            "< name >",
            True,
            _ANGLE,
        ),
        Rule("T003", "unknown-scope", "error", f"scope prefix close to {PREFIXES_OR}", "<usr:name>", True, _ANGLE),
        Rule(
            "T004",
            "unclosed-placeholder",
            "warning",
            "a placeholder with no closing >",
            "Hello <name, welcome",
            True,
            _ANGLE,
        ),
        Rule("T005", "bad-name", "warning", "a key that is not an identifier", "<first-name>", True, _ANGLE),
        Rule(
            "T006",
            "doubled-question-mark",
            "error",
            "more than one ? in an optional placeholder",
            "<name??>",
            True,
            _ANGLE,
        ),
        Rule(
            "T007",
            "markup-tag",
            "error",
            "an XML-style tag parsed as a placeholder",
            "<example>...</example>",
            True,
            _ANGLE,
        ),
        Rule(
            "T008",
            "adk-braces",
            "warning",
            "an ADK-style {key} placeholder left over",
            "Hello {user:name}",
            True,
            _ANGLE,
        ),
        Rule("T009", "required-but-optional", "warning", "required placeholder on a field with a default", "<nick>"),
        Rule("T010", "optional-but-required", "info", "optional placeholder on a required field", "<name?>"),
        Rule(
            "T011",
            "unused-schema-key",
            "warning",
            "schema key no linted template uses (opt-in)",
            "(per run)",
            False,
            scope="project",
        ),
        Rule("T012", "temp-key-read", "warning", f"a {TEMP_PREFIX} key read by an instruction", "<temp:step>"),
        Rule(
            "T013",
            "escaped-tag",
            "warning",
            "a closing tag or a tag with attributes escaped as <<...>>",
            "<</a>>",
            True,
            _ANGLE,
        ),
        Rule(
            "T014",
            "key-never-written",
            "warning",
            "a required key nothing in the agent's app (or the project) writes",
            "<plan>",
            scope="python",
        ),
        Rule(
            "T015",
            "dynamic-instruction",
            "info",
            "an instruction in Python that is not a string",
            'f"..."',
            False,
            scope="python",
        ),
        Rule(
            "T016",
            "adk-eaten-braces",
            "error",
            "ADK drops the braces right after a placeholder",
            '{"a": {key}}',
            True,
            _ADK,
        ),
        Rule(
            "T017",
            "adk-doubled-braces",
            "warning",
            "ADK substitutes {{key}}, which its docs keep",
            "{{key}}",
            True,
            _ADK,
        ),
        Rule(
            "T018",
            "adk-artifact",
            "warning",
            "ADK loads an artifact here (needs an artifact service)",
            "{artifact.x}",
            True,
            _ADK,
        ),
        Rule(
            "T019",
            "adk-near-miss-key",
            "warning",
            "a brace run that is almost a key, left literal",
            "{user-name}",
            True,
            _ADK,
        ),
        Rule(
            "T020",
            "adk-literal-braces",
            "warning",
            "${key} or {a.b}: google-adk sends the braces as written",
            "${weekend_budget.budget}",
            True,
            _ADK,
        ),
        Rule(
            "T021",
            "adk-unread-state-schema",
            "info",
            "an ADK agent's state_schema= that cannot be read from the code",
            "state_schema=make_model()",
            True,
            _ADK,
            scope="python",
        ),
        Rule(
            "T022",
            "unused-suppression",
            "warning",
            "a # templating: ignore[...] code that silences nothing",
            "# templating: ignore[T014] (no T014 there)",
            scope="python",
        ),
        Rule(
            "T023",
            "invalid-suppression",
            "warning",
            "a suppression comment naming no rule or an unknown code",
            "# templating: ignore[T999]",
            scope="python",
        ),
        Rule(
            "T024",
            "written-later",
            "warning",
            "a key read before its first writer runs (a later agent, its own output_key)",
            "writer reads {critique}; critic writes it next",
            scope="python",
        ),
        Rule(
            "T025",
            "parallel-race",
            "warning",
            "a key only a ParallelAgent sibling writes: a race",
            "{pricing} from a parallel sibling",
            scope="python",
        ),
        Rule(
            "T026",
            "loop-first-iteration",
            "warning",
            "a key written only later in a LoopAgent's body: missing on the first iteration",
            "refiner reads {criticism}; critic writes it later",
            scope="python",
        ),
        Rule(
            "T027",
            "maybe-written",
            "warning",
            "a key only a write that may not happen gives (a tool, a condition, a transfer)",
            "{cart} from a tool only",
            scope="python",
        ),
        Rule(
            "T028",
            "schema-undeclared-write",
            "error",
            "a state write the state_schema google-adk enforces there does not declare",
            'output_key="draft" (Workflow(state_schema=S), no field draft)',
            True,
            _ADK,
            scope="python",
        ),
        Rule(
            "T029",
            "angle-placeholder-in-adk",
            "warning",
            "<key> in a google-adk string, which substitutes only {key}",
            "<plan>",
            True,
            _ADK,
            scope="python",
        ),
        Rule(
            "T030",
            "key-named-not-injected",
            "warning",
            "a written state key named in the prose, its value never inserted",
            "state['plan']",
            scope="python",
        ),
        Rule(
            "T031",
            "workflow-placeholder",
            "warning",
            "{Class.field} or <Class.field from node>: Python google-adk sends them as written",
            "{CityTime.city}",
            True,
            _ADK,
        ),
        Rule(
            "T032",
            "static-instruction-placeholder",
            "warning",
            "a placeholder of a state key in a static_instruction, which is sent as written",
            "static_instruction='{persona}'",
            scope="python",
        ),
    )
}
# The codes of the findings about suppression comments (templating.linter.suppress).
UNUSED_SUPPRESSION = "T022"
INVALID_SUPPRESSION = "T023"
# The rules that read one dialect's own syntax; the others (placeholders against a schema, temp: keys) apply to both.
ANGLE_ONLY: frozenset[str] = frozenset(code for code, rule in RULES.items() if rule.dialects == _ANGLE)
ADK_ONLY: frozenset[str] = frozenset(code for code, rule in RULES.items() if rule.dialects == _ADK)
DEFAULT_RULES: frozenset[str] = frozenset(code for code, rule in RULES.items() if rule.default)
# The rules over a project's Python code or a whole run, not over one instruction's text.
TREE_RULES: frozenset[str] = frozenset(code for code, rule in RULES.items() if rule.scope != "template")

# Checks that are not rules: a text that cannot be read at all as what it must be. No option selects or
# ignores them (the code would fail when run); each has its documentation page, as a rule does.
JINJA_SYNTAX = "E001"
PYTHON_SYNTAX = "E002"
SKIPPED_FILE = "E003"
SYNTAX_CHECKS: dict[str, Rule] = {
    check.code: check
    for check in (
        Rule(
            JINJA_SYNTAX,
            "jinja-syntax",
            "error",
            "a jinja(...) instruction Jinja2 cannot parse",
            "{% if x %} (no endif)",
            dialects=frozenset({"jinja"}),
            scope="python",
        ),
        Rule(
            PYTHON_SYNTAX,
            "python-syntax",
            "error",
            "a Python file to lint that is not valid Python",
            "if x",
            dialects=frozenset(),
            scope="python",
        ),
        Rule(
            SKIPPED_FILE,
            "skipped-file",
            "info",
            "a file left unread: not a regular file, too large, or a link out of the project",
            "a FIFO",
            dialects=frozenset(),
            scope="project",
        ),
    )
}


def described(code: str) -> Rule | None:
    """The rule or syntax check with this code, if it is one."""
    return RULES.get(code) or SYNTAX_CHECKS.get(code)


# Where the documentation lives: the one place the address is written in code. It equals `site_url` in
# mkdocs.yml (tests/test_docs.py checks), and every rule has its page at rule_url(code).
DOCS_URL = "https://agent-prompt-templating.github.io/agent-prompt-templating/"


def rule_url(code: str) -> str:
    """The stable address of a rule's (or syntax check's) documentation page: `DOCS_URL` + `rules/<code>/`."""
    if described(code) is None:
        raise ValueError(f"unknown rule {code!r} (known: {', '.join([*RULES, *SYNTAX_CHECKS])})")
    return f"{DOCS_URL}rules/{code}/"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding: `code` (`T001`...), `severity`, `message`, where (`span`, `path`), and `help`.

    `span` is `None` only for findings about a whole run (unused schema keys) or a whole file (one
    skipped as too large). `origin` names the instruction in a Python file (the constant
    `ROOT_PROMPT`, or `LlmAgent(name="planner").instruction`).
    """

    code: str
    severity: Severity
    message: str
    span: Span | None
    path: str | None = None
    help: str | None = None
    origin: str | None = None

    @property
    def url(self) -> str | None:
        """The address of the rule's documentation page (`None` for a code that is not a rule)."""
        return rule_url(self.code) if described(self.code) else None

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping: line and column 1-based; `start`/`end` character offsets, `end` exclusive;
        `url` is the rule's documentation page."""
        span = self.span
        return {
            "path": self.path,
            "code": self.code,
            "name": rule.name if (rule := described(self.code)) else None,
            "severity": self.severity,
            "message": self.message,
            "line": span.line if span else None,
            "column": span.column if span else None,
            "start": span.start if span else None,
            "end": span.end if span else None,
            "help": self.help,
            "url": self.url,
            "origin": self.origin,
        }
