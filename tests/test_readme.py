"""The README's examples run: every ```python block, and every ```py-adk block when google-adk is installed.

With ``TEMPLATING_REQUIRE_ADK=1`` (set by CI) a ``py-adk`` block fails instead of skipping when
google-adk is missing.

Each block runs on its own, in a fresh namespace (a block does not see names from the blocks
before it), so every example is complete as written. Examples check themselves with ``assert``;
a block fails the test by raising.
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
# A fence opening at the start of a line: ```python or ```py-adk, up to the closing ``` line.
FENCE = re.compile(r"^```(?P<lang>[\w-]+)[ \t]*\n(?P<code>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
RUN = {"python": None, "py-adk": "google.adk"}  # block language -> module it needs (None: always runs)


def blocks() -> list[tuple[str, int, str]]:
    """(language, line of the opening fence, code) for each runnable block, in README order."""
    text = README.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        if match["lang"] in RUN:
            found.append((match["lang"], text.count("\n", 0, match.start()) + 1, match["code"]))
    return found


BLOCKS = blocks()


def test_the_readme_has_python_examples() -> None:
    assert any(lang == "python" for lang, _, _ in BLOCKS)


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


@pytest.mark.parametrize(("lang", "line", "code"), BLOCKS, ids=[f"{lang}-line-{line}" for lang, line, _ in BLOCKS])
def test_readme_example_runs(lang: str, line: int, code: str) -> None:
    needs = RUN[lang]
    if needs is not None and not _has(needs):
        if os.environ.get("TEMPLATING_REQUIRE_ADK") == "1":  # CI: the ADK examples must run, not skip
            pytest.fail(f"README.md:{line} needs {needs}, and TEMPLATING_REQUIRE_ADK=1", pytrace=False)
        pytest.skip(f"README.md:{line} needs {needs} (pip install '.[adk]')")
    exec(compile(code, f"README.md:{line}", "exec"), {"__name__": f"readme_line_{line}"})
