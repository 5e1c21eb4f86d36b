"""The README's examples run: every ```python block, and every ```py-adk block when google-adk is installed.

With ``TEMPLATING_REQUIRE_ADK=1`` (set by CI) a ``py-adk`` block fails instead of skipping when
google-adk is missing.

Each block runs on its own, in a fresh Python process (``python -I``, so it imports the installed
package and sees nothing from the blocks before it or from the test run), so every example is
complete as written. Examples check themselves with ``assert``; a block fails the test by
raising. A block that defines pytest tests (``def test_...``) is run by pytest instead, twice:
once to write its snapshots, once to check against them.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
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
def test_readme_example_runs(lang: str, line: int, code: str, tmp_path: Path) -> None:
    needs = RUN[lang]
    if needs is not None and not _has(needs):
        if os.environ.get("TEMPLATING_REQUIRE_ADK") == "1":  # CI: the ADK examples must run, not skip
            pytest.fail(f"README.md:{line} needs {needs}, and TEMPLATING_REQUIRE_ADK=1", pytrace=False)
        pytest.skip(f"README.md:{line} needs {needs} (pip install '.[adk]')")
    if re.search(r"^def test_", code, re.MULTILINE):
        run_as_pytest(code, line, tmp_path)
        return
    result = subprocess.run(
        [sys.executable, "-I", "-c", code], cwd=README.parent, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, f"README.md:{line} failed:\n{result.stderr}"


def run_as_pytest(code: str, line: int, folder: Path) -> None:
    (folder / f"test_readme_line_{line}.py").write_text(code, encoding="utf-8")
    for extra in (["--snapshot-update"], []):
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra],
            cwd=folder,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, f"README.md:{line} tests failed:\n{result.stdout}\n{result.stderr}"
    assert list(folder.glob("__snapshots__/**/*.txt")), "the example's snapshots were written"
