"""State keys an instruction names where nothing inserts their value: T029 (`<key>` in a google-adk string,
which substitutes only `{key}`), T030 (a written key named in prose, `state["plan"]`, `the 'plan' state
key`, but not inserted) and T032 (a placeholder in a `static_instruction=`, which is sent as written).

Each check takes the keys it knows as a parameter (`keys`: key -> where it is known, for the message), so
that whoever knows better which keys a given agent's app writes (the agent model) can pass exactly those.
Only known keys are reported: an XML tag (`<example>`), a word in quotes or a `{field}` of an output format
is not a state key of the project, and is left alone."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from ...convert import ADK_CODE_MATCH
from ...errors import TemplatingError
from ...nodes import SCOPE_PREFIXES, is_adk_state_name
from ...template import parse
from ..registry import RULES, Diagnostic
from ..source import _FENCE, _ID, _VOID_TAGS, _Source

if TYPE_CHECKING:
    from ...pysource import Instruction, Write

__all__ = ["angle_placeholders", "named_not_injected", "static_placeholders", "written_keys"]

_KEY = rf"(?:(?:{'|'.join(re.escape(p) for p in SCOPE_PREFIXES)}){_ID}|{_ID})"

# T029: `<key>` or `<key?>` (google-adk sends angle brackets as written).
_ANGLE = re.compile(rf"(?<!<)<({_KEY})(\??)>(?!>)")

# Before a `<key>` that is a blank of an output format for the model to fill in, not a value to insert: a quote,
# "Title:", "name=".
_A_BLANK = re.compile(r"(?:[\"'`]|[:=][ \t]*)\Z")
# A line of JSON (`{"origin": "<origin>"}`, `"destination": <destination>,`): its angle brackets are blanks too.
_JSON_LINE = re.compile(r"[\"'][\w:-]+[\"'][ \t]*:|\{[ \t]*[\"']")

# T030: a key named as state.


def _quoted(tag: str) -> str:
    """A key in quotes ('plan', "plan", `plan`, curly quotes), its groups named after `tag`."""
    return rf"(?:(?P<{tag}q>['\"`])(?P<{tag}a>{_KEY})(?P={tag}q)|[\u2018\u201c](?P<{tag}b>{_KEY})[\u2019\u201d])"


# `state["plan"]`, `session.state['plan']`, `state.get("plan")`: the whole access is flagged.
_ACCESS = re.compile(
    rf"(?<![\w.])(?:\w+\.)*state\s*(?:\[\s*{_quoted('i')}\s*\]|\.get\(\s*{_quoted('g')}(?:[^()\n]{{0,40}}\))?)"
)
# "state key 'plan'", "state under the key 'plan'", "state with key 'plan'", "state for 'plan'", "the state of
# 'plan'" (of a written key: its value, which the model cannot see): the key.
_PROSE_BEFORE = re.compile(
    r"\bstate\s+(?:(?:key|variable|value|entry|field)s?\s*(?:named\s+|called\s+|:\s*)?"
    r"|(?:under|with|for|of)\s+(?:the\s+)?(?:(?:key|name|field)\s+)?(?:named\s+|called\s+)?)" + _quoted("b"),
    re.IGNORECASE,
)
# "'plan' state key", "'plan' from state", "'plan' key in the session state", "'plan' (from state key)".
_PROSE_AFTER = re.compile(
    _quoted("a") + r"(?:\s+(?:session\s+)?state\s+(?:key|variable|value|entry|field)s?\b"
    r"|\s+(?:(?:key|field|entry|value|variable)\s+)?(?:in|from)\s+(?:the\s+)?(?:session\s+)?state\b(?![\w\[.(])"
    r"|\s*\(\s*from\s+(?:the\s+)?(?:session\s+)?state(?:\s+key)?\s*\))",
    re.IGNORECASE,
)
# A key without quotes, only right beside the words "state key": "the market_data_analysis_output state key",
# "market_data_analysis_output (from state key)", "Required State Key: market_data_analysis_output".
_BARE = (
    re.compile(
        rf"(?<![\w'\"`.:])({_KEY})(?:\s+(?:session\s+)?state\s+key\b"
        r"|\s*\(\s*from\s+(?:the\s+)?(?:session\s+)?state(?:\s+key)?\s*\))",
        re.IGNORECASE,
    ),
    re.compile(rf"\bstate\s+key\s*(?::\s*|\s(?:named\s+|called\s+)?)({_KEY})(?![\w'\"`:]|\.\w)", re.IGNORECASE),
)
# Where the clause before a mention tells the model to write the key (a tool or its output does), not to read
# it: a verb of writing, a few words, then "to/in/into/under/as" state or the mention itself ("Save to
# state['plan']", "must be stored in the state key 'plan'", "your answer is saved in state under 'summary'").
# A participle alone describes where a value is ("the plan stored in state under 'plan'"): a read.
_WRITING = re.compile(
    r"\b(?:(?:save|store|write|put|set|update|record|persist|assign|add)s?"
    r"|saving|storing|writing|putting|setting|updating|recording|persisting|assigning|adding"
    r"|(?:be|been|being|is|are|was|were|gets?|got)\s+(?:saved|stored|written|set|put|updated|recorded|persisted"
    r"|assigned|added|kept))"
    r"(?:\s+[\w'`\"-]+){0,4}?\s+(?:to|in|into|under|as|at)\s+(?:(?:the|a|an|new|session|its|your)\s+)*(?:state\b|\Z)",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[.;!?:\n](?:\s|\Z)|\n")


def written_keys(writes: Iterable[Write]) -> dict[str, str]:
    """Each key the project's code writes (known keys only), with its first write: `output_key at agent.py:12`."""
    out: dict[str, str] = {}
    for write in sorted(writes, key=lambda w: (w.path, w.span.start)):
        if write.key is not None and write.key not in out:
            out[write.key] = f"written by {write.how} at {write.path}:{write.span.line}"
    return out


def _finding(found: Instruction, code: str, start: int, end: int, message: str, help: str) -> Diagnostic:
    path, span = found.locate(start, end)
    return Diagnostic(code, RULES[code].severity, message, span, path, help, found.label)


def angle_placeholders(found: Instruction, keys: Mapping[str, str]) -> list[Diagnostic]:
    """T029: each `<key>` in an ADK-dialect instruction whose key is one of `keys` (the project's state keys):
    google-adk substitutes only `{key}`, so the model receives the angle brackets. Only in prose: not in
    code, not a tag (closed somewhere in the text, around the key's own `{key}`, or named as a tag in the
    sentence), not in a path (`/users/<user_id>/`), not a blank of an output format for the model to fill in
    (`"<origin>"`, `Title: <title>`, a line of JSON)."""
    if found.dialect != "adk" or "<" not in found.text:
        return []
    text = found.text
    src: _Source | None = None  # (the text's indexes and placeholders: worked out once a state key is met)
    inserted: set[str] = set()
    out: list[Diagnostic] = []
    for m in _ANGLE.finditer(text):
        key, question = m.groups()
        start, end = m.start(), m.end()
        if key not in keys or key in _VOID_TAGS:
            continue
        if src is None:
            try:  # a key the instruction inserts as {key} too: <key> around it is a tag (`<plan>{plan}<plan>`)
                inserted = {node.name for node in parse(text, dialect="adk").placeholders}
            except TemplatingError:  # a text that is no template
                return []
            src = _Source(text)
        if key in inserted or src.in_code(start) or src.closed_anywhere(key):
            continue
        if f"<{key}/>" in text:
            continue
        if text[start - 1 : start] == "/" or text[end : end + 1] == "/" or src.tag_in_prose(start, end):
            continue
        if _A_BLANK.search(text, max(0, start - 40), start) or text[end : end + 1] in "\"'`":
            continue  # {"origin": "<origin>"}, Title: <title>, name=<name>: a blank the model fills in
        line_start, line_end = text.rfind("\n", 0, start) + 1, src.line_end(start)
        if _JSON_LINE.search(text, line_start, line_end):
            continue
        written = m.group()
        meant = "{" + key + question + "}"
        out.append(
            _finding(
                found,
                "T029",
                start,
                end,
                f"{written!r} is sent to the model as written: google-adk substitutes only {{key}} placeholders, "
                f"and {key!r} is a state key ({keys[key]})",
                f"write {meant} to insert its value"
                + ("" if question else f" ({{{key}?}} if it may be missing)")
                + "; <key> is templating's own syntax, read by instruction(...)",
            )
        )
    return out


# Every pattern of a mention holds the word "state" (as they match it): a text without it names no key as state,
# and is not searched by the patterns, whose look-behinds and leading names are tried at each of its characters.
_STATE_WORD = re.compile("state", re.IGNORECASE)
# A mention is made of names, spaces, quotes and `.:()[]`, but for the up to 40 characters before the `)` that
# may close `state.get('key', ...)`, which come after the word "state". So a mention starts in a run of those
# characters holding "state", and the rest of the text is not searched (its characters no mention starts at).
_RUN = re.compile("[\\w\\s'\"`\u2018\u2019\u201c\u201d.:()\\[\\]]*")
_TAIL = 45  # characters searched past a run: the `.get(...)` tail, and what a look-ahead after a mention sees


def _runs(text: str) -> list[tuple[int, int]]:
    """The runs of `text` a mention may start in (see `_RUN`), in order: each found from a "state" in it, going
    back (in the reversed text) and forward; runs apart by less than `_TAIL` are one (with what is between them,
    where no mention starts)."""
    out: list[tuple[int, int]] = []
    backwards = ""
    for m in _STATE_WORD.finditer(text):
        at = m.start()
        if out and at < out[-1][1]:
            continue
        backwards = backwards or text[::-1]
        before = _RUN.match(backwards, len(text) - at)  # (both match, if only the empty string)
        after = _RUN.match(text, at)
        start, end = at - (before.end() - before.start() if before else 0), after.end() if after else at
        if out and start - out[-1][1] <= _TAIL:  # one search for runs closer than a tail: "state-state-..."
            start = out.pop()[0]
        out.append((start, end))
    return out


def _matches(pattern: re.Pattern[str], text: str, runs: list[tuple[int, int]]) -> Iterator[re.Match[str]]:
    """The matches of `pattern` in `text`, as `pattern.finditer(text)` finds them (each search resumes where the
    last match ended), starting in `runs` only."""
    resume = 0
    for start, end in runs:
        for m in pattern.finditer(text, max(start, resume), end + _TAIL):
            if m.start() >= end:
                break
            resume = m.end()
            yield m


def _mentions(text: str) -> Iterator[tuple[int, int, str]]:
    """Each place `text` names a state key as state: (start, end, key), in order."""
    found: list[tuple[int, int, str]] = []
    if _STATE_WORD.search(text) is None:
        return
    runs = _runs(text)
    for m in _matches(_ACCESS, text, runs):
        found.append((m.start(), m.end(), m["ia"] or m["ib"] or m["ga"] or m["gb"]))
    for pattern, tag in ((_PROSE_BEFORE, "b"), (_PROSE_AFTER, "a")):
        for m in _matches(pattern, text, runs):
            group = f"{tag}q" if m[f"{tag}a"] else f"{tag}b"
            start = m.start(group) if m[f"{tag}a"] else m.start(group) - 1
            key = m[f"{tag}a"] or m[f"{tag}b"]
            found.append((start, start + len(key) + 2, key))
    for pattern in _BARE:
        for m in _matches(pattern, text, runs):
            found.append((m.start(1), m.end(1), m.group(1)))
    yield from sorted(found)


def _writing(text: str, start: int) -> bool:
    """Whether the clause ending at `start` tells the model (or says that its output is) to write state."""
    window = text[max(0, start - 100) : start]
    ends = list(_CLAUSE_END.finditer(window))
    clause = window[ends[-1].end() :] if ends else window
    return _WRITING.search(clause) is not None


def named_not_injected(found: Instruction, written: Mapping[str, str]) -> list[Diagnostic]:
    """T030: each key of `written` (the keys the project writes) that the instruction names as state in its
    prose (`state["plan"]`, `the 'plan' state key`, `the session state under the key 'plan'`) without
    inserting it anywhere (no `{plan}`, `{plan?}`): the model reads the words, never the value. Fenced code
    blocks, and clauses that tell the model to store the key, are left alone."""
    if found.dialect == "jinja" or "state" not in found.text.lower():
        return []
    text = found.text
    read: set[str] | None = None  # (the keys it inserts and its fenced blocks: worked out once a written key is met)
    fences: list[tuple[int, int]] = []
    adk = found.dialect == "adk"
    out: list[Diagnostic] = []
    reported: set[str] = set()
    for start, end, key in _mentions(text):
        if key not in written or key in reported:
            continue
        if read is None:
            try:
                read = {node.name for node in parse(text, dialect=found.dialect).placeholders}
            except TemplatingError:  # a text that is no template
                return []
            fences = [(m.start(), m.end()) for m in _FENCE.finditer(text)]
        if key in read:
            continue
        if any(a <= start < b for a, b in fences) or _writing(text, start):
            continue
        reported.add(key)
        shown = text[start:end]
        quoted = shown[:1] in "'\"`\u2018\u201c" or "(" in shown or "[" in shown  # as written: 'plan', state['plan']
        placeholder = "{" + key + "}" if adk else "<" + key + ">"
        inserts = "google-adk inserts" if adk else "templating inserts"
        out.append(
            _finding(
                found,
                "T030",
                start,
                end,
                f"{shown if quoted else repr(shown)} names state key {key!r}, but this instruction never inserts it: "
                "the model reads the "
                f"words, not the value ({key!r} is {written[key]})",
                f"write {placeholder} where the value belongs ({inserts} a placeholder's value; a name in the "
                f"prose stays a name), or {placeholder[:-1]}?{placeholder[-1]} if it may be missing",
            )
        )
    return out


def static_placeholders(found: Instruction, keys: Mapping[str, str]) -> list[Diagnostic]:
    """T032: each placeholder of a state key of `keys` in an agent's `static_instruction=` (`found`, in the
    dialect of its agent: `{key}` for google-adk's, `<key>` for templating's): a static instruction is sent
    as written, never rendered, so the model receives the placeholder."""
    text = found.text
    out: list[Diagnostic] = []
    if found.dialect == "adk":
        places = [
            (m.start(), m.end(), inner.strip().removesuffix("?"))
            for m in ADK_CODE_MATCH.finditer(text)
            if is_adk_state_name((inner := m.group(2)).strip().removesuffix("?"))
        ]
    else:
        places = [(m.start(), m.end(), m.group(1)) for m in _ANGLE.finditer(text)]
    src = _Source(text)
    for start, end, key in places:
        if key not in keys or (found.dialect != "adk" and src.closed_anywhere(key)):
            continue
        written = text[start:end]
        out.append(
            _finding(
                found,
                "T032",
                start,
                end,
                f"{written!r} is sent to the model as written: a static_instruction is never rendered, and "
                f"{key!r} is a state key ({keys[key]})",
                f"move the text that reads {key!r} to the agent's instruction= (rendered each turn, and sent after the "
                "static part), or write the value itself into the static text",
            )
        )
    return out
