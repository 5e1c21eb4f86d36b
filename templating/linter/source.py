"""A template's text with indexes the rules share: offsets to spans, code and math regions, closing tags."""

from __future__ import annotations

import bisect
import re

from ..nodes import SCOPES, Span
from .registry import PREFIX_ALTERNATIVES as _PREFIX_ALTERNATIVES

# --------------------------------------------------------------------------------------------
# The rules

_ID = r"[^\W\d]\w*"
_SEG = rf"(?:{_ID}|\d+)"
_SCOPE = rf"(?:{_PREFIX_ALTERNATIVES})"
_KEY = rf"{_SCOPE}?{_ID}(?:\.{_SEG})*"

_SPACED = re.compile(rf"(?<!<)<([ \t]*)({_KEY})([ \t]*)(\??)([ \t]*)>(?!>)")
_SCOPED = re.compile(rf"(?<!<)<({_ID}):({_ID}(?:\.{_SEG})*)(\??)>(?!>)")
_UNCLOSED = re.compile(rf"(?<![\w<)\]}}])<({_KEY})(\??)(?=[\s,;!)\]\"']|\.(?:\s|\Z)|\Z)")
_BAD_NAME = re.compile(rf"(?<!<)<({_SCOPE}?[\w-]+(?:\.[\w-]+)*)(\??)>(?!>)")
_DOUBLED = re.compile(rf"(?<!<)<[ \t]*({_KEY})[ \t]*\?{{2,}}[ \t]*>(?!>)")
_BRACES = re.compile(rf"(?<![\w$\\{{}}%#^]){{((?:{_PREFIX_ALTERNATIVES}|artifact\.)?{_ID}(?:\.{_SEG})*)(\??)}}(?!}})")
_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[^\n]*$|\Z)", re.DOTALL | re.MULTILINE)
_INLINE_CODE = re.compile(r"`[^`\n]+`")
# A markdown indented code block: lines indented by 4 spaces or a tab, after a blank line.
_INDENTED_CODE = re.compile(r"(?:\A|\n[ \t]*\n)((?:(?: {4}|\t)[^\n]*(?:\n|\Z)|[ \t]*\n(?= {4}|\t))+)")
# Not prose either: Jinja blocks and HTML comments.
# Each scan stops at the next opener, so unclosed openers cost linear time, not quadratic.
_OTHER_CODE = re.compile(
    r"\{\{(?:(?!\{\{|\}\}).)*\}\}|\{%(?:(?!\{%|%\}).)*%\}|\{#(?:(?!\{#|#\}).)*#\}|<!--(?:(?!<!--|-->).)*(?:-->|\Z)",
    re.DOTALL,
)
# The rest of an HTML/XML start tag after its name: attributes (across lines), then > or />.
_TAG_REST = re.compile(r"""(?:\s+[\w:.@-]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'<>=`]+))?)*\s*/?>""")
# Comparisons in prose: a condition word before, a number, a single letter or a closing bracket as left operand.
_CONDITION = re.compile(r"\b(?:if|while|when|whenever|unless|until|where|whether|assert|check|ensure)\b", re.I)
_RIGHT_OPERAND = re.compile(r"[ \t]+[\w(]")  # the c of a < b > c
_TAG_WORD = re.compile(r"[ \t]*(?:tags?|elements?|components?)\b", re.IGNORECASE)  # "<answer-block> tags"
_CLOSING_TAG = re.compile(r"</([^\s<>/]+)>")
# Inline math, as pandoc reads it: $ not followed by a space, closed by $ not after a space nor before a digit.
_MATH = re.compile(r"\$\$[^$]{1,2000}\$\$|\$(?![\s$])[^$\n]{0,200}?(?<![\s\\])\$(?!\d)")
# T002: `cmd < in > out` is shell redirection: a word before, one token after, then the end of the command.
_REDIRECT_AFTER = re.compile(r"[ \t]+[\w/~$-]+(?:\.[\w/~$-]+)*[ \t]*(?:$|[|;&]|2>)", re.MULTILINE)
_WORD_BEFORE = re.compile(r"[\w./-]+[ \t]+\Z")
# T005: a hyphenated name written as a tag in prose: "inside <scratch-pad>", "the <tool-call> format".
_TAG_BEFORE = re.compile(
    r"\b(?:the|a|an|your|its|their|each|every|this|that|in|inside|into|within|between|using|use|with|after|before"
    r"|open|close|wrap|emit|output)[ \t]+\Z",
    re.IGNORECASE,
)
# ... or listed after another tag: "such as <sku> or <order-id>", "<thinking>, <final-answer>".
_TAG_LISTED_BEFORE = re.compile(r"</?<?[^\W\d][\w.:-]*>>?[ \t]*(?:,|/|\bor\b|\band\b|,[ \t]*(?:or|and)\b)[ \t]*\Z")
_TAG_AFTER = re.compile(
    r"[ \t]*(?:tags?|elements?|components?|format|formats|blocks?|sections?|markers?|delimiters?|wrappers?|"
    r"containers?|syntax)\b",
    re.IGNORECASE,
)
# T013: escapes that cannot be one: <</tag>> and <<tag attr="1">> render with their doubled brackets.
_ESCAPED_CLOSING = re.compile(r"(?<!<)<<(/[^\W\d][\w.:-]*)>>(?!>)")
_ESCAPED_ATTRS = re.compile(  # on one line, so each try stops at the line's end
    r"""(?<!<)<<([^\W\d][\w.:-]*)"""
    r"""((?:[ \t]+[\w:.@-]+(?:[ \t]*=[ \t]*(?:"[^"\n]*"|'[^'\n]*'|[^\s"'<>=`]+))?)+[ \t]*/?)>>(?!>)"""
)
# Placeholders that are HTML void elements (never closed, so T007 cannot see them as tags) and never keys.
_VOID_TAGS = frozenset({"br", "hr", "wbr"})


class _Source:
    """A source with indexes: offsets to spans, code regions, and where each closing tag last appears."""

    def __init__(self, text: str, *, markdown: bool = False) -> None:
        self.text = text
        self.line_starts = [0, *(m.end() for m in re.finditer(r"\n", text))]
        regions = (
            [(m.start(), m.end()) for m in _FENCE.finditer(text)]
            + [(m.start(), m.end()) for m in _INLINE_CODE.finditer(text)]
            + [(m.start(), m.end()) for m in _OTHER_CODE.finditer(text)]
        )
        if markdown:  # only markdown reads an indented block as code; elsewhere indentation is layout
            regions += [(m.start(1), m.end(1)) for m in _INDENTED_CODE.finditer(text)]
        self.code_starts, self.code_ends = self._merge(regions)
        self.math_starts, self.math_ends = self._merge([(m.start(), m.end()) for m in _MATH.finditer(text)])
        self.closings: dict[str, list[int]] = {}  # every </name>, in order, by name
        for m in _CLOSING_TAG.finditer(text):
            self.closings.setdefault(m.group(1), []).append(m.start())
        self.closing: dict[str, int] = {name: starts[-1] for name, starts in self.closings.items()}

    @staticmethod
    def _merge(regions: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
        merged: list[tuple[int, int]] = []
        for start, end in sorted(regions):
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        return [start for start, _ in merged], [end for _, end in merged]

    def in_math(self, offset: int) -> bool:
        i = bisect.bisect_right(self.math_starts, offset) - 1
        return i >= 0 and offset < self.math_ends[i]

    def span(self, start: int, end: int) -> Span:
        line = bisect.bisect_right(self.line_starts, start)
        return Span(start, end, line, start - self.line_starts[line - 1] + 1)

    def line_end(self, offset: int) -> int:
        """The offset of the newline ending the line of `offset` (the text's length on the last line)."""
        i = bisect.bisect_right(self.line_starts, offset)
        return self.line_starts[i] - 1 if i < len(self.line_starts) else len(self.text)

    def in_code(self, offset: int) -> bool:
        i = bisect.bisect_right(self.code_starts, offset) - 1
        return i >= 0 and offset < self.code_ends[i]

    def closed_after(self, name: str, offset: int) -> bool:
        """Whether `</name>` appears at or after `offset`."""
        return self.closing.get(name, -1) >= offset

    def closed_between(self, name: str, start: int, end: int) -> bool:
        """Whether a `</name>` starts in `start`..`end`."""
        starts = self.closings.get(name, [])
        i = bisect.bisect_left(starts, start)
        return i < len(starts) and starts[i] < end

    def closed_anywhere(self, name: str) -> bool:
        """Whether `</name>` appears anywhere: `name` is used as a markup tag in this text."""
        return name in self.closing

    def tag_like(self, offset: int) -> bool:
        """Whether the text from `offset` (just after `<name`) reads as the rest of an HTML/XML start
        tag, attributes across lines included: `<div\n  class="card">`, `<img src=x />`."""
        return _TAG_REST.match(self.text, offset, offset + 4000) is not None

    def redirection(self, start: int, end: int) -> bool:
        """Whether `< x >` at `start`..`end` reads as shell redirection, `cmd < in > out`: a word
        before it, one file-like token after it, then the end of the line or of the command."""
        line_start = self.line_starts[bisect.bisect_right(self.line_starts, start) - 1]
        before = self.text[max(line_start, start - 200) : start]
        return _WORD_BEFORE.search(before) is not None and _REDIRECT_AFTER.match(self.text, end) is not None

    def tag_in_prose(self, start: int, end: int) -> bool:
        """Whether a `<name>` at `start`..`end` is named as a tag in the sentence around it: after
        an article or a preposition ("inside <scratch-pad>"), after another tag in a list ("<sku> or
        <order-id>"), or before a word such as "format"."""
        line_start = self.line_starts[bisect.bisect_right(self.line_starts, start) - 1]
        before = self.text[max(line_start, start - 40) : start]
        return (
            _TAG_BEFORE.search(before) is not None
            or _TAG_LISTED_BEFORE.search(before) is not None
            or _TAG_AFTER.match(self.text, end) is not None
        )

    def comparison_before(self, offset: int) -> bool:
        """Whether the text before `offset` (a `<` in prose) reads as the left side of a comparison:
        `x <y`, `3 <n`, `if count <limit`."""
        line_start = self.line_starts[bisect.bisect_right(self.line_starts, offset) - 1]
        before = self.text[max(line_start, offset - 200) : offset]  # bounded, so linting stays linear
        operand = before.rstrip(" \t")
        if operand == before or not operand:  # no space before "<", or nothing before it on the line
            return False
        if operand[-1] in ")]}":  # f(x) <y
            return True
        i = len(operand)
        while i > 0 and (operand[i - 1].isalnum() or operand[i - 1] in "_."):
            i -= 1
        token = operand[i:]
        if not token or not (token[0].isalnum() or token[0] == "_"):
            return False
        if len(token) == 1 or token[0].isdigit():  # x <y, 3 <n
            return True
        clause = re.split(r"[.;!?](?:\s|\Z)", before)[-1]
        return _CONDITION.search(clause) is not None  # if count <limit


# Words one typo away from a scope that are words of their own: {api:key} is no misspelt {app:key}.
_NOT_SCOPE_TYPOS = frozenset({"api", "ape", "use", "usa"})


# Hyphenated names that are text for the reader, not keys: a key combination (<Ctrl-C>, {Shift-Tab})
# or a blank for the reader to fill in (<your-api-key>). T005 and T019 both leave them alone.
# The first words that make one: key modifiers that are nothing else, and "your".
_FOR_THE_READER = frozenset({"ctrl", "shift", "alt", "cmd", "your"})


def _for_the_reader(name: str) -> bool:
    """Whether a hyphenated name without a scope is a key combination or a blank to fill in."""
    first, hyphen, _ = name.partition("-")
    return bool(hyphen) and ":" not in name and first.lower() in _FOR_THE_READER


def _one_typo(word: str, scope: str) -> bool:
    """Whether `word` is `scope` with one letter left out, added, changed or swapped with the next
    (the first letter kept): usr, users, tmp, ap, uesr. Stricter than a similarity ratio, which would
    also take team for temp."""
    if word == scope or word[:1] != scope[:1] or abs(len(word) - len(scope)) > 1:
        return False
    if len(word) == len(scope):
        diff = [i for i, (a, b) in enumerate(zip(word, scope, strict=True)) if a != b]
        swapped = len(diff) == 2 and diff[1] == diff[0] + 1 and word[diff[0]] == scope[diff[1]]
        return len(diff) == 1 or (swapped and word[diff[1]] == scope[diff[0]])
    short, long = sorted((word, scope), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def _scope_meant(prefix: str) -> str | None:
    """The scope a prefix that is not exactly one was likely meant as: the same letters in other
    case (`User`) or one typo away (`usr`, `tmp`, `ap`); None for any other word (`team`,
    `step`, `api`: words of their own). T003 and T019 both ask it."""
    lowered = prefix.lower()
    if lowered in SCOPES:
        return lowered
    if lowered in _NOT_SCOPE_TYPOS:
        return None
    return next((scope for scope in SCOPES if _one_typo(lowered, scope)), None)
