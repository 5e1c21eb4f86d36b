"""The ADK dialect's rules (T016..T019): what google-adk 2.x itself does wrong with a string instruction."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ...convert import ADK_CODE_MATCH
from ...nodes import is_adk_state_name
from ..source import _ID, _for_the_reader, _scope_meant, _Source

# --- The ADK dialect (T016..T019): what google-adk 2.x itself does with a string instruction
# (`inject_session_state` in its instruction utilities). Its pattern (convert.ADK_CODE_MATCH):
# a run of "{", text without braces, a run of "}", not right after "$", "{" or "\". It replaces
# the whole match with an artifact when the text inside (stripped of white space, then of one
# trailing "?") starts with "artifact.", with the value of a state key when that text is a state
# name (nodes.is_adk_state_name), and leaves it as written otherwise.
_ADK_MARKS = re.compile(r"(.*?)([ \t]*)(\?*)", re.DOTALL)  # a name, white space, question marks
_ADK_HYPHENATED = re.compile(rf"{_ID}(?:-{_ID})+")
_ARTIFACT = "artifact."


def _adk_fixed_name(name: str) -> tuple[str, list[str]] | None:
    """(the state name `name` was likely meant as, what is wrong with it) for a near miss; else None.

    Near misses: a hyphen between identifier words (`user-name`) and a scope in capitals or close
    to a known one (`User:name`, `usr:name`). Dotted paths, spaced words and the like are left
    alone: JSON, code and prose use them, and ADK has no key they would be close to."""
    reasons: list[str] = []
    head, sep, rest = name.partition(":")
    scope = ""
    if sep:
        meant = _scope_meant(head) if head.isidentifier() else None
        if meant is None:
            return None
        if head.lower() != meant:
            reasons.append(f"unknown scope {head + ':'!r}")
        elif head != meant:
            reasons.append(f"scopes are lowercase: {meant}:")
        scope = meant + ":"
    else:
        rest = name
    if not rest.isidentifier():
        if not _ADK_HYPHENATED.fullmatch(rest) or all(len(word) == 1 for word in rest.split("-")):
            return None  # a-b, x-y: math or ranges, not a key
        if not sep and _for_the_reader(rest):
            return None  # {Ctrl-C}, {your-api-key}: for the reader
        if not any(ch.islower() for ch in rest):
            return None  # {YYYY-MM-DD}, {YOUR-API-KEY}: a format, or a blank for the reader to fill in
        rest = rest.replace("-", "_")
        reasons.append("'-' is not allowed in a name")
    return scope + rest, reasons


def _adk_near_miss(inner: str) -> tuple[str, list[str]] | None:
    """(the placeholder `{inner}` was likely meant as, why ADK leaves it as written) for a near miss."""
    marks = _ADK_MARKS.fullmatch(inner.strip())
    assert marks is not None  # the pattern matches every string
    core, gap, questions = marks.groups()
    if not core or "\n" in core:
        return None
    reasons: list[str] = []
    if is_adk_state_name(core):
        fixed = core
    else:
        near = _adk_fixed_name(core)
        if near is None:
            return None
        fixed, reasons = near
    if len(fixed.rpartition(":")[2]) == 1:  # {x ?}, {a-b}: a set, math, a variable in prose
        return None
    if len(questions) > 1:
        reasons.append("more than one '?'")
    elif questions and gap:
        reasons.append("white space before '?'")
    if not reasons:
        return None
    return "{" + fixed + ("?" if questions else "") + "}", reasons


def _adk_rules(src: _Source, on: frozenset[str]) -> Iterator[tuple[str, int, int, str, str]]:
    """What google-adk 2.x would do wrong with an instruction in its dialect: (code, start, end, message, help).

    T016..T018 report what ADK's code substitutes, wherever it is (a code block included: ADK reads
    it too); T019 reports near misses, which ADK leaves as written, only outside code and math."""
    text = src.text
    for m in ADK_CODE_MATCH.finditer(text):
        opening, inner, closing = m.groups()
        start, end, written = m.start(), m.end(), m.group()
        name = inner.strip()
        optional = name.endswith("?")
        name = name.removesuffix("?")
        mark = "?" if optional else ""
        if name.startswith(_ARTIFACT):
            artifact = name.removeprefix(_ARTIFACT)
            if "T018" in on:
                missing = "renders empty" if optional else "raises KeyError"
                yield (
                    "T018",
                    start,
                    end,
                    f"google-adk loads the artifact {artifact!r} here: it raises ValueError when the Runner has no "
                    f"artifact service, and {missing} when no artifact {artifact!r} is saved",
                    f"give the Runner an artifact_service and save {artifact!r} before the turn"
                    + ("" if optional else f", or write {{{_ARTIFACT}{artifact}?}} so a missing one renders empty")
                    + "; the ADK dialect and `templating convert` keep this text as written",
                )
            continue
        if is_adk_state_name(name):
            placeholder = "{" + name + mark + "}"
            if len(opening) > 1 and "T017" in on:
                yield (
                    "T017",
                    start,
                    end,
                    f"google-adk substitutes {written!r} with the value of {name!r} (it strips every brace), "
                    "though its documentation says doubled braces stay literal"
                    + ("" if optional else f"; it raises KeyError when {name!r} is not in state"),
                    f"write {placeholder} to insert the value; to send {written} as written, "
                    "give ADK an instruction provider (such as templating's static()): ADK injects nothing into one",
                )
            elif len(opening) == 1 and len(closing) > 1 and "T016" in on:
                extra = closing[1:]
                kept = written[: len(written) - len(extra)]
                yield (
                    "T016",
                    start,
                    end,
                    f"google-adk replaces {written!r} as a whole: it inserts the value of {name!r} and drops "
                    f"the {extra!r} after it",
                    f"write {kept} {extra} (a space after the placeholder): ADK then keeps the {extra!r}",
                )
            continue
        if "T019" not in on or len(opening) > 1 or len(closing) > 1 or src.in_code(start) or src.in_math(start):
            continue
        if start and (text[start - 1].isalnum() or text[start - 1] in "_^%#}"):  # \text{first-name}, x^{a-b}
            continue
        if text[start - 1 : start] == "/" or text[end : end + 1] == "/":  # a URL or path: /users/{user-id}/
            continue
        near = _adk_near_miss(inner)
        if near is None:
            continue
        fixed, reasons = near
        yield (
            "T019",
            start,
            end,
            f"{written!r} is not a state name for google-adk ({'; '.join(reasons)}), so it is sent as written; "
            f"did you mean {fixed}?",
            f"write {fixed} to insert the value; ADK substitutes a name only when it is an identifier, alone or "
            "after app:, user: or temp:",
        )
