"""The prefilter of a cold run: the files that may hold an instruction or feed the agent model, told from their
text without parsing it; the others are not scanned as files of their own (`templating.linter.cold`).

A file is kept when it names something the scan acts on, as it is written where the scan acts on it (a word
in a docstring, `AgentEvaluator`, `AdkApp(` or "applicable" in the license header are not enough):

- state: `x.state`, `state_delta`, `state_schema`, `State`, `output_key`, or a name `state` that is assigned,
  subscripted, updated or given as a keyword (`state=...`, `state[...]`, `state.update(...)`);
- a call of google-adk's agents, apps, runners and workflows by their names (`LlmAgent(`, `InMemoryRunner(`,
  `Workflow(`), or those names imported under another (`import LlmAgent as Brain`); a project class deriving
  from an agent class (found as long as more are found: the file defining `class StoryFlow(BaseAgent)` and each
  file naming `StoryFlow`);
- an instruction constant or its use: a name ending in `instruction`, `prompt`, `instr` or `template` (any case,
  and the project's constant suffixes) that is assigned, annotated, formatted (`.format`, `%`) or passed on
  (`from_template(SYSTEM_PROMPT)`); `templating` (its own providers);
- a function a kept file gives a context's state to (`save(data, callback_context.state)`): each module the
  kept file's imports may name is kept too, as the scan then reads that function's writes.

A file refused is still read and parsed when a scanned file imports it (the scan follows imports as before);
what is lost is only its own walk, which would find nothing.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

__all__ = ["relevant", "wanted"]

_MAX_HOPS = 40  # rounds of project agent classes deriving from project agent classes

_WORDS = ("State", "output_key", "templating", "state_delta", "state_schema")  # as names
_ANY_CASE = ("instruction", "prompt", "instr", "template")  # names ending so, any case; and the constant suffixes
_CLASS = re.compile(r"class[ \t]+(\w+)[ \t]*\(([^)]*)\)")
_GIVES_STATE = re.compile(r"\.state(?:_delta)?[ \t]*(?:#[^\n]*)?\s*[,)]")
_AFTER_STATE = re.compile(r"[ \t]*(?:=(?!=)|\[|\.(?:update|setdefault)\b)")
_AFTER_CONSTANT = re.compile(r"[ \t]*(?:=(?!=)|[:.%),])")
_AFTER_CLASS = re.compile(r"[ \t]*\(|[ \t]+as[ \t]")


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _found(text: str, word: str, after: re.Pattern[str] | None = None, *, ending: bool = False) -> bool:
    """Whether `text` holds `word` as a name (`ending`: or as the end of one), followed by what `after` matches
    (None: by anything). `str.find` and a look at either side: faster than a pattern that cannot search for a
    text of its own (a look-behind, alternatives)."""
    at, size = text.find(word), len(text)
    while at >= 0:
        end = at + len(word)
        if (
            (ending or at == 0 or not _word_char(text[at - 1]))
            and (end == size or not _word_char(text[end]))
            and (after is None or after.match(text, end))
        ):
            return True
        at = text.find(word, end)
    return False


def _state(text: str) -> bool:
    """`x.state`, `x.state_delta`, or a name `state` assigned, subscripted, updated or given as a keyword."""
    at, size = text.find("state"), len(text)
    while at >= 0:
        end = at + 5
        if end == size or not _word_char(text[end]):
            if at > 0 and text[at - 1] == ".":
                return True
            if (at == 0 or not _word_char(text[at - 1])) and _AFTER_STATE.match(text, end):
                return True
        elif text.startswith("_delta", end) and at > 0 and text[at - 1] == ".":
            return True
        at = text.find("state", end)
    return False


def _class_call(text: str, names: frozenset[str], ends: tuple[str, ...]) -> bool:
    """Whether `text` calls (or imports under another name) one of `names`, each ending in one of `ends`: one
    `str.find` an ending, the whole name read back from where it ends."""
    for end_word in ends:
        at, size = text.find(end_word), len(text)
        while at >= 0:
            end = at + len(end_word)
            if (end == size or not _word_char(text[end])) and _AFTER_CLASS.match(text, end):
                start = at
                while start > 0 and _word_char(text[start - 1]):
                    start -= 1
                if text[start:end] in names:
                    return True
            at = text.find(end_word, end)
    return False


@functools.lru_cache(maxsize=16)
def _vocabulary(suffixes: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...], tuple[str, ...]]:
    """The names of google-adk's classes the scan reads calls of, the words they end with, and the endings of
    instruction constants."""
    from ..pysource.agent_refs import _GOOGLE_KINDS, _RUNNERS

    names = frozenset({*_GOOGLE_KINDS, *_RUNNERS})
    ends = tuple(
        sorted(
            {e for e in ("Agent", "Runner") if any(n.endswith(e) for n in names)}
            | {n for n in names if not n.endswith(("Agent", "Runner"))}
        )
    )
    endings = {*_ANY_CASE, *(s.strip("_").lower() for s in suffixes if s.strip("_"))}
    return names, ends, tuple(sorted(endings))


def relevant(text: str, suffixes: Sequence[str] = ()) -> bool:
    """Whether `text` names one of the things above where the scan acts on it (no parsing)."""
    names, ends, endings = _vocabulary(tuple(suffixes))
    if _state(text) or any(_found(text, word) for word in _WORDS) or _class_call(text, names, ends):
        return True
    lowered = text.lower()
    return any(_found(lowered, end, _AFTER_CONSTANT, ending=True) for end in endings)


def _classes(text: str) -> list[tuple[str, str]]:
    """The classes `text` defines, each with the text of its bases."""
    if "class" not in text:
        return []
    out = []
    for m in _CLASS.finditer(text):
        if m.start() == 0 or not _word_char(text[m.start() - 1]):
            out.append((m.group(1), m.group(2)))
    return out


def wanted(texts: Sequence[str | None], edges: Sequence[Sequence[int]], suffixes: Sequence[str] = ()) -> list[bool]:
    """For each of a run's files (`texts`: each one's text, None when not read as text: kept), whether it is
    scanned as a file of its own. `edges[i]`: the files the imports of file `i` may name."""
    kept = [text is None or relevant(text, suffixes) for text in texts]
    classes: dict[int, list[tuple[str, str]]] = {}
    known: set[str] = set()
    looked = ["Agent"]  # the words a file defining a project agent class holds: first google-adk's, then found
    for _ in range(_MAX_HOPS):  # project agent classes, the files defining them and each file naming one
        found: set[str] = set()
        for i, text in enumerate(texts):
            if text is None or not any(word in text for word in looked):
                continue
            if i not in classes:
                classes[i] = _classes(text)
            for name, bases in classes[i]:
                if name not in known and (_found(bases, "Agent", ending=True) or any(_found(bases, k) for k in known)):
                    found.add(name)
                    kept[i] = True
        if not found:
            break
        known |= found
        looked = sorted(found)
        for i, text in enumerate(texts):
            if not kept[i] and text is not None and any(_found(text, name) for name in found):
                kept[i] = True
    for i, text in enumerate(texts):
        if kept[i] and text is not None and ".state" in text and _GIVES_STATE.search(text):
            for j in edges[i] if i < len(edges) else ():
                kept[j] = True
    return kept
