"""The prefilter of a cold run: the files that may hold an instruction or feed the agent model, told from their
text without parsing it; the others are not scanned as files of their own (`templating.linter.cold`).

A file is kept when it names something the scan acts on, as a word (so `AgentEvaluator`, `statement` or the
license header's "applicable" are not enough):

- state: `state`, `State` (an annotation, `State.USER_PREFIX`), `state_delta`, `state_schema`, `output_key`;
- an agent, app, runner or workflow of google-adk: a name ending in `Agent`, `App`, `Runner`, `Workflow` or
  `JoinNode` (`LlmAgent`, `BaseAgent`, `InMemoryRunner`), or a project class deriving from one (found in the
  kept files, as long as more are found: `class StoryFlow(BaseAgent)` keeps each file naming `StoryFlow`);
- an instruction: a name ending in `instruction`, `prompt`, `instr` or `template` (any case: `instruction=`,
  `SYSTEM_PROMPT`), or in one of the project's constant suffixes; `templating` (its own providers);
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

# words of a kept file, as written: (the word, whether a name may end with it rather than be it)
_CASED = (
    ("state", False),
    ("State", False),
    ("state_delta", False),
    ("state_schema", False),
    ("output_key", False),
    ("templating", False),
    ("Agent", True),
    ("App", True),
    ("Runner", True),
    ("Workflow", True),
    ("JoinNode", True),
)
_ANY_CASE = ("instruction", "prompt", "instr", "template")  # names ending so, any case; and the constant suffixes
_CLASS = re.compile(r"class[ \t]+(\w+)[ \t]*\(([^)]*)\)")
_GIVES_STATE = re.compile(r"\.state(?:_delta)?[ \t]*(?:#[^\n]*)?\s*[,)]")


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _names(text: str, word: str, *, ending: bool = False) -> bool:
    """Whether `text` holds `word` as a name (`ending`: or as the end of one). `str.find` and a look at the
    characters on either side: faster than a pattern with a look-behind, which cannot search for its text."""
    at, size = text.find(word), len(text)
    while at >= 0:
        end = at + len(word)
        if (ending or at == 0 or not _word_char(text[at - 1])) and (end == size or not _word_char(text[end])):
            return True
        at = text.find(word, end)
    return False


@functools.lru_cache(maxsize=16)
def _endings(suffixes: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted({*_ANY_CASE, *(s.strip("_").lower() for s in suffixes if s.strip("_"))}))


def relevant(text: str, suffixes: Sequence[str] = ()) -> bool:
    """Whether `text` names one of the words above (the cheap test: no parsing, no pattern)."""
    if any(_names(text, word, ending=ending) for word, ending in _CASED):
        return True
    lowered = text.lower()
    return any(_names(lowered, end, ending=True) for end in _endings(tuple(suffixes)))


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
    for _ in range(_MAX_HOPS):  # project agent classes, and each file that names one
        found: set[str] = set()
        for i, text in enumerate(texts):
            if kept[i] and text is not None:
                if i not in classes:
                    classes[i] = _classes(text)
                for name, bases in classes[i]:
                    if name not in known and (
                        _names(bases, "Agent", ending=True) or any(_names(bases, k) for k in known)
                    ):
                        found.add(name)
        if not found:
            break
        known |= found
        for i, text in enumerate(texts):
            if not kept[i] and text is not None and any(_names(text, name) for name in found):
                kept[i] = True
    for i, text in enumerate(texts):
        if kept[i] and text is not None and ".state" in text and _GIVES_STATE.search(text):
            for j in edges[i] if i < len(edges) else ():
                kept[j] = True
    return kept
