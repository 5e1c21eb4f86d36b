"""Suppression comments in Python code: `# templating: ignore[T014]` silences one rule's findings on the
line of the comment, or anywhere in the statement the comment's line belongs to.

A statement is read from the file's syntax tree: an assignment or a call spanning many lines (an
`LlmAgent(...)` call, a prompt constant's triple-quoted string) is one statement, so the comment may
sit on any of its lines (the placeholder itself is inside a string, where a comment cannot go). A
compound statement (`def`, `class`, `if`, `with`, ...) counts only its header: a comment on a
function's first line does not silence its body.

Comments are found with `tokenize`, so a `#` inside a string is not a comment. Each directive must
name its codes (`ignore[T014, T009]`): a bare `# templating: ignore` silences nothing and is itself a
finding (T023), as is a code that is not a rule; a code that silences nothing is T022 (unused). The
syntax checks (E001 to E003) and T022 and T023 themselves cannot be silenced by a comment (use
`ignore` or `per-file-ignores`). Template files get no comments: a comment there would reach the
model; they keep `allow` and `per-file-ignores`.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..nodes import Span
from .registry import INVALID_SUPPRESSION, RULES, SYNTAX_CHECKS, UNUSED_SUPPRESSION, Diagnostic

__all__ = ["Directive", "Suppressions", "apply_suppressions", "read_suppressions"]

# `# templating: ignore` or `# templating: ignore[T014, T009]`, at a comment's start or after another
# comment (`# type: ignore  # templating: ignore[T014]`).
_DIRECTIVE = re.compile(r"#\s*templating:\s*ignore\b(?P<list>\[(?P<codes>[^\]]*)\])?")
# The codes a comment cannot silence: the syntax checks (not rules) and the findings about comments.
UNSILENCEABLE = frozenset({*SYNTAX_CHECKS, UNUSED_SUPPRESSION, INVALID_SUPPRESSION})


@dataclass(slots=True)
class Directive:
    """One `# templating: ignore[...]` comment: where it is (`span`, the directive's text), the lines it
    covers (`first` to `last`: its statement's, or its own line), and each code it names with its span."""

    path: str
    span: Span
    first: int
    last: int
    codes: list[tuple[str, Span]]
    used: set[str] = field(default_factory=set)


@dataclass(slots=True)
class Suppressions:
    """The directives of one file, and the findings about the directives themselves (T023)."""

    directives: list[Directive]
    invalid: list[Diagnostic]


_NONE = Suppressions([], [])


def read_suppressions(path: str, text: str) -> Suppressions:
    """The `# templating: ignore[...]` comments of the Python file `path` with text `text`.

    Only the statements holding a line that looks like a directive are tokenized (each from its first
    line, where no string is open), so a large file with one comment costs one `ast.parse`. A file that
    cannot be parsed is tokenized whole; one that cannot be tokenized (syntax this Python cannot read)
    has none: its findings are all reported."""
    if _DIRECTIVE.search(text) is None:  # most files: nothing to tokenize
        return _NONE
    starts = [0, *(m.end() for m in re.finditer("\n", text))]  # as tokenize counts lines
    candidates = sorted({bisect_right(starts, m.start()) for m in _DIRECTIVE.finditer(text)})
    statements = _statement_lines(text)
    found: dict[tuple[int, int], str] = {}  # (line, column) -> comment
    if statements is None:
        found = _comments(text, 1) or {}
        statements = _alone
    else:
        done: set[int] = set()
        for line in candidates:
            if line in done:
                continue
            first, last = statements(line)
            end = starts[last] if last < len(starts) else len(text)
            chunk = _comments(text[starts[first - 1] : end], first)
            if chunk is None:  # the line starts inside another statement's string (`x = """\n"""; y = 1`)
                found = _comments(text, 1) or {}
                break
            found.update(chunk)
            done.update(range(first, last + 1))
    if not found:
        return _NONE
    directives: list[Directive] = []
    invalid: list[Diagnostic] = []

    def span(line: int, column: int, length: int) -> Span:
        start = starts[line - 1] + column
        return Span(start, start + max(length, 1), line, column + 1)

    for (line, column), comment in sorted(found.items()):
        for match in _DIRECTIVE.finditer(comment):
            where = span(line, column + match.start(), match.end() - match.start())
            first, last = statements(line)
            directive = Directive(path, where, first, last, [])
            if match["list"] is None or not match["codes"].strip():
                invalid.append(
                    Diagnostic(
                        INVALID_SUPPRESSION,
                        RULES[INVALID_SUPPRESSION].severity,
                        "a suppression must name the rules it silences: it silences nothing",
                        where,
                        path,
                        "name the codes, as in `# templating: ignore[T014]` (one or more, comma-separated)",
                    )
                )
                continue
            offset = column + match.start("codes")
            for part in re.finditer(r"[^,]+", match["codes"]):
                code = part.group().strip()
                if not code:
                    continue
                at = span(line, offset + part.start() + part.group().index(code), len(code))
                problem = _unknown(code)
                if problem is not None:
                    invalid.append(
                        Diagnostic(
                            INVALID_SUPPRESSION, RULES[INVALID_SUPPRESSION].severity, problem[0], at, path, problem[1]
                        )
                    )
                    continue
                directive.codes.append((code, at))
            if directive.codes:
                directives.append(directive)
    return Suppressions(directives, invalid)


def _unknown(code: str) -> tuple[str, str] | None:
    """Why `code` cannot be named in a suppression (message, help), or `None` when it can."""
    if code in UNSILENCEABLE:
        why = "a syntax check" if code in SYNTAX_CHECKS else "a finding about suppressions"
        return (
            f"{code} is {why}: a comment cannot silence it",
            "remove it from the comment (fix the code, or turn the rule off with ignore or per-file-ignores)",
        )
    if code in RULES:
        return None
    near = code.strip().upper()
    if near in RULES:
        return f"unknown rule code {code!r} in a suppression", f"codes are written in capitals: {near}"
    by_name = next((c for c, rule in RULES.items() if rule.name == code), None)
    if by_name is not None:
        return f"a suppression names rules by code, not by name: {code!r}", f"write {by_name}"
    return (
        f"unknown rule code {code!r} in a suppression: it silences nothing",
        "use a code from the rule list (T001...)",
    )


def _comments(text: str, first: int) -> dict[tuple[int, int], str] | None:
    """The comments of `text` (Python lines starting at line `first` of their file) that mention
    `templating`, by (line, column); `None` when `text` cannot be tokenized."""
    found: dict[tuple[int, int], str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT and "templating" in token.string:
                found[token.start[0] + first - 1, token.start[1]] = token.string
    except (tokenize.TokenError, SyntaxError):
        return None
    return found


def _alone(line: int) -> tuple[int, int]:
    return line, line


def _statement_lines(text: str) -> Callable[[int], tuple[int, int]] | None:
    """A function giving, for a line, the lines of the innermost statement it belongs to (a compound
    statement's header only), or the line alone when none holds it; `None` when `text` cannot be parsed."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    ranges: list[tuple[int, int]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            last = max(node.lineno, body[0].lineno - 1)  # the header: up to the body
            if body[0].lineno == node.lineno:  # `if x: y = 1` on one line
                last = node.lineno
        else:
            last = node.end_lineno or node.lineno
        ranges.append((first, last))

    # Each line's innermost statement: the widest first, overwritten by those inside. Simple statements do
    # not nest and a compound one counts its header only, so this is linear in the file's lines.
    owner: dict[int, tuple[int, int]] = {}
    for first, last in sorted(ranges, key=lambda r: r[0] - r[1]):
        for line in range(first, last + 1):
            owner[line] = (first, last)
    return lambda line: owner.get(line, (line, line))


Place = tuple[str, Span]


def apply_suppressions(
    findings: Sequence[Diagnostic],
    places: Mapping[tuple[object, ...], Iterable[Place]],
    files: Mapping[str, Suppressions],
    *,
    report_in: set[str],
    rule_on: Callable[[str, str], bool],
    unsure: Iterable[Place] = (),
) -> list[Diagnostic]:
    """`findings` without those a directive silences, with T022 and T023 findings for the directives of the
    files in `report_in` (the files whose findings this run reports).

    A finding is silenced by a directive of its own file that covers its line, or by one covering a place
    in `places` (keyed by `(path, start, end, code)`: where the code gives the finding's instruction,
    its call sites). A code is unused (T022) when it silenced nothing, its rule is on for the file
    (`rule_on(code, path)`), and the directive covers none of the places in `unsure` (call sites of
    instructions this run did not lint, whose findings are not known)."""
    by_path: dict[str, list[Directive]] = {path: s.directives for path, s in files.items() if s.directives}
    kept: list[Diagnostic] = []
    for diag in findings:
        if diag.code in UNSILENCEABLE or diag.span is None or not by_path:
            kept.append(diag)
            continue
        key = (diag.path, diag.span.start, diag.span.end, diag.code)
        spots = [(diag.path or "", diag.span), *places.get(key, ())]
        silenced = False
        for path, where in spots:
            for directive in by_path.get(path, ()):
                covers = directive.first <= where.line <= directive.last or directive.span.line == where.line
                if covers and any(code == diag.code for code, _ in directive.codes):
                    directive.used.add(diag.code)
                    silenced = True
        if not silenced:
            kept.append(diag)
    doubt = [(path, where.line) for path, where in unsure]
    for path in sorted(report_in):
        suppressions = files.get(path)
        if suppressions is None:
            continue
        kept += [d for d in suppressions.invalid if rule_on(INVALID_SUPPRESSION, path)]
        if not rule_on(UNUSED_SUPPRESSION, path):
            continue
        for directive in suppressions.directives:
            if any(p == path and directive.first <= line <= directive.last for p, line in doubt):
                continue
            for code, at in directive.codes:
                if code in directive.used or not rule_on(code, path):
                    continue
                kept.append(
                    Diagnostic(
                        UNUSED_SUPPRESSION,
                        RULES[UNUSED_SUPPRESSION].severity,
                        f"unused suppression: no {code} finding here to silence",
                        at,
                        path,
                        f"remove {code} from the comment",
                    )
                )
    return kept
