"""The rules over instructions found in Python code: each instruction linted in its dialect and placed in
its file, E001 (Jinja2 syntax), T014 (keys nothing in the project writes), T015 (instructions not
readable without running the code). E002 (a file that is not Python) is made by the engine. A Jinja2
instruction's state reads (`templating.jinja_mode.reads`) get T014, T012 and T001 (T014 here only when no agent of an
app is given it: otherwise `rules.order`'s)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ...nodes import TEMP_PREFIX, Span
from ...template import Template, parse
from ..check import lint
from ..registry import JINJA_SYNTAX, PYTHON_SYNTAX, RULES, TREE_RULES, Diagnostic
from ..schema import load_schema
from ..source import _Source
from ..util import close_match

if TYPE_CHECKING:
    from ...pysource import Instruction, Scan

__all__ = ["JINJA_SYNTAX", "PYTHON_SYNTAX", "lint_instruction", "never_written", "skipped_findings"]


def lint_instruction(
    found: Instruction,
    *,
    schema: Any = None,
    select: frozenset[str],
    allow: Iterable[str] = (),
) -> list[Diagnostic]:
    """Lint one instruction in its dialect; every finding is placed in the Python file it was written in.

    Angle syntax: every selected rule of that syntax. ADK dialect: the rules of that dialect
    (T016..T020, what google-adk would do wrong at run time) and the placeholder rules (T001,
    T009, T010, T012), as `templating.linter.lint` applies them. Jinja2: Jinja's own syntax check, then
    T012 and T001 on the state keys its variables read."""
    if found.dialect == "jinja":
        return _jinja_syntax(found) or _jinja_keys(found, schema=schema, select=select)
    on = select - TREE_RULES
    if not on:
        return []
    findings = lint(found.text, schema=schema, select=on, allow=allow, dialect=found.dialect)
    return [_placed(found, d) for d in findings]


def _placed(found: Instruction, diag: Diagnostic) -> Diagnostic:
    assert diag.span is not None
    path, span = found.locate(diag.span.start, diag.span.end)
    return dataclasses.replace(diag, path=path, span=span, origin=found.label)


def _jinja_syntax(found: Instruction) -> list[Diagnostic]:
    from ...jinja_mode.mode import JinjaProvider, JinjaSyntaxError

    try:
        JinjaProvider(found.text)
    except JinjaSyntaxError as exc:
        span = exc.span or Span(0, len(found.text), 1, 1)
        path, where = found.locate(span.start, span.end)
        return [Diagnostic(JINJA_SYNTAX, "error", exc.message, where, path, exc.help, found.label)]
    return []


def _jinja_keys(found: Instruction, *, schema: Any, select: frozenset[str]) -> list[Diagnostic]:
    """T012 (a `temp.x` read) and, with a schema, T001 (a key it does not declare) for the state keys a
    Jinja2 instruction reads, each placed at the variable."""
    from ...jinja_mode.reads import state_reads

    loaded = load_schema(schema) if schema is not None and "T001" in select else None
    out: list[Diagnostic] = []
    for read in state_reads(found.text):
        shown = found.text[read.start : read.end]
        path, span = found.locate(read.start, read.end)
        if read.key.startswith(TEMP_PREFIX) and "T012" in select:
            out.append(
                Diagnostic(
                    "T012",
                    RULES["T012"].severity,
                    f"{shown!r} reads the {TEMP_PREFIX} key {read.key!r}, which is empty at the start of every turn",
                    span,
                    path,
                    f"{TEMP_PREFIX} state lives for one invocation; it has a value only if set earlier in the "
                    "same turn",
                    found.label,
                )
            )
        if loaded is not None and not loaded.open and read.key not in loaded.fields:
            close = close_match(read.key, sorted(loaded.fields))
            out.append(
                Diagnostic(
                    "T001",
                    RULES["T001"].severity,
                    f"{shown!r} reads {read.key!r}, which is not in the schema"
                    + (f"; did you mean {close!r}?" if close else ""),
                    span,
                    path,
                    "add the key to the schema or fix the name",
                    found.label,
                )
            )
    return out


def _text_of(found: Instruction) -> Template | None:
    if found.dialect == "jinja":
        return None
    return parse(found.text, dialect=found.dialect)


def never_written(found: Instruction, written: frozenset[str], *, schema: Any = None) -> list[Diagnostic]:
    """T014 for one instruction: required placeholders (not `temp:`) whose key nothing writes.

    `written`: the keys the linted code writes; the top-level keys of `schema` (templating's own, given
    with `--schema` or in the config) count as written. The `state_schema=` of a google-adk agent does
    not: google-adk validates writes against it and never fills state from it, defaults included, so
    a key it declares that nothing writes raises `KeyError` all the same; the finding says so."""
    known = set(written)
    if schema is not None:
        known.update(load_schema(schema).fields)
    if found.dialect == "jinja":
        return _jinja_unwritten(found, known)
    template = _text_of(found)
    if template is None:
        return []
    src = _Source(found.text)
    out: list[Diagnostic] = []
    reported: set[str] = set()
    for node in template.placeholders:
        if node.optional or node.scope == "temp" or node.name in known or node.name in reported:
            continue
        reported.add(node.name)
        path, span = found.locate(node.span.start, node.span.end)
        shown = found.text[node.span.start : node.span.end]
        close = close_match(node.name, sorted(known), cutoff=0.8)
        hint = f"did you mean {close!r}, which is written? Otherwise " if close else ""
        message, help_ = _unwritten(found, node.name, node.key, shown, _declared(found, node.name))
        where = _literal_place(found.text, node.span.start, node.span.end, src)
        if where is not None:  # /run/{suite_id}: {suite_id?} would send "/run/"; the text wants an escape
            help_ = _escape_help(found.dialect, node.key, shown, where)
        out.append(Diagnostic("T014", RULES["T014"].severity, message, span, path, hint + help_, found.label))
    return out


def _jinja_unwritten(found: Instruction, known: set[str]) -> list[Diagnostic]:
    """T014 for a Jinja2 instruction: each state key it reads with no guard, that nothing writes."""
    from ...jinja_mode.reads import state_reads

    out: list[Diagnostic] = []
    for read in state_reads(found.text):
        if not read.required or read.key.startswith(TEMP_PREFIX) or read.key in known:
            continue
        path, span = found.locate(read.start, read.end)
        shown = found.text[read.start : read.end]
        close = close_match(read.key, sorted(known), cutoff=0.8)
        hint = f"did you mean {close!r}, which is written? Otherwise " if close else ""
        model = _declared(found, read.key)
        message = (
            f"{shown!r} reads state key {read.key!r}, which nothing in the linted files writes: the Jinja2 "
            "instruction raises JinjaUndefinedError without it"
            + (f" ({model[0].model} declares it, but a state_schema writes nothing)" if model else "")
        )
        guard = f"{{% if {shown} is defined %}}...{{% endif %}}" if "[" not in shown else "an {% if ... is defined %}"
        help_ = (
            f"set {read.key!r} before this agent runs (an earlier agent's output_key, a tool's "
            f"tool_context.state[{read.key!r}] = ...), declare it in the schema, or guard it if it may be missing: "
            f"{guard}, or {shown} | default('')"
        )
        out.append(Diagnostic("T014", RULES["T014"].severity, message, span, path, hint + help_, found.label))
    return out


def _literal_place(text: str, start: int, end: int, src: _Source) -> str | None:
    """Where the placeholder at `start`..`end` sits when it is in "a URL" (`/run/{suite_id}`, `https://x/{id}`)
    or in "code" (a code span): text meant as written, rarely a value to insert. None elsewhere."""
    if src.in_code(start):
        return "code"
    if text[start - 1 : start] == "/" or text[end : end + 1] == "/":
        return "a URL"
    token_start = start
    while token_start > 0 and not text[token_start - 1].isspace() and text[token_start - 1] not in "\"'`(<[":
        token_start -= 1
    return "a URL" if "://" in text[token_start:start] else None


def _escape_help(dialect: str, key: str, shown: str, where: str) -> str:
    """T014's help for a placeholder in a URL or in code: how to send it as written (making it optional would
    send the text around it without it)."""
    if dialect == "adk":
        return (
            f"{shown!r} sits in {where}, where google-adk substitutes it too ({{{key}?}} would drop it from the "
            f"text): to send the braces as written, write \\{{{key}}} (google-adk keeps it, backslash included), "
            "or give the agent an instruction provider, which google-adk does not fill in (templating's "
            f"static(...) sends its text as written); if the value is meant, set {key!r} before this agent runs"
        )
    return (
        f"{shown!r} sits in {where}: to send {shown} as written, escape it as <{shown}>; if the value is "
        f"meant, set {key!r} before this agent runs"
    )


def _declared(found: Instruction, key: str) -> tuple[Any, Any] | None:
    """The first `state_schema=` of the agents given `found` that declares the top-level `key`, with its field."""
    for state in found.state_schemas:
        if state.schema is not None and key in state.schema.fields:
            return state, state.schema.fields[key]
    return None


def _unwritten(found: Instruction, name: str, key: str, shown: str, model: Any) -> tuple[str, str]:
    """T014's message and help for the key `name` read as `shown` (`key`: its whole path), nothing writing it;
    `model`: the (state schema, field) of an agent's `state_schema=` that declares it, or None."""
    adk = found.dialect == "adk"
    optional = f"{{{key}?}}" if adk else f"<{key}?>"
    raises = "google-adk raises KeyError" if adk else "templating raises MissingKeyError"
    if model is None:
        return (
            f"{shown!r} reads state key {name!r}, which nothing in the linted files writes "
            "(no output_key, state write, state_delta or create_session state sets it)",
            f"set {name!r} before this agent runs (an earlier agent's output_key, a tool's "
            f"tool_context.state[{name!r}] = ...), declare it in the schema, or write {optional} "
            "if it may be missing",
        )
    state, field = model
    default = field.default
    if default is not None:
        why = (
            f"{state.model} declares it with the default {default}, but google-adk never fills state from a "
            "state_schema (it only validates what is written)"
        )
        value = default
    else:
        why = f"{state.model} declares it, but a state_schema only validates what is written: it writes nothing"
        value = "..."
    return (
        f"{shown!r} reads state key {name!r}, which nothing in the linted files writes: {raises} for it "
        f"when {state.agent} runs; {why}",
        f"write {name!r} before {state.agent} runs: in the session's initial state "
        f"(create_session(..., state={{{name!r}: {value}}})), in a before_agent_callback "
        f"(callback_context.state[{name!r}] = {value}), or as an earlier agent's output_key; "
        f"write {optional} only if the agent can do without it",
    )


def skipped_findings(result: Scan) -> list[Diagnostic]:
    """T015: the instructions skipped because their text is known only at run time."""
    return [
        Diagnostic(
            "T015",
            RULES["T015"].severity,
            f"this instruction is not checked: {item.reason}",
            item.span,
            item.path,
            "lint sees only strings written in the code (literals, +, textwrap.dedent, module constants, "
            "a function without arguments that returns one)",
            item.label,
        )
        for item in result.skipped
    ]
