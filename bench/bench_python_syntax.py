"""What a Python file that does not parse costs the linter (E002), against one that does.

Run: python bench/bench_python_syntax.py [FOLDER]   (default: the adk-samples corpus, else this repository)

Under Python 3.11 a file that ``ast.parse`` refuses is read again as Python 3.12 reads it (its f-strings and
type parameters rewritten in place), and, when the error stands at Python 3.14 syntax, once more with that
syntax written as 3.12's, to know whether the "newer Python" help applies. This times, in this one process,
best of three, over every ``.py`` file of FOLDER:

- ``_parse`` of the files as they are (the reference: valid code, one ``ast.parse`` each);
- the same files with a mistake at the end (``if x``): read again, then reported;
- the same files with 3.14's ``except A, B:`` at the end: read again, tokenized, parsed once more;
- the same files with 3.12 f-strings (``f"{d["k"]}"``) at the end, read under 3.11.

It prints each against the reference. Nothing here is asserted: the ratios are compared on one machine.
"""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path

from templating.pysource.reading import _parse, python_text

CORPUS = Path("/work/shared/corpora/adk-samples")


def _texts(folder: Path) -> list[str]:
    texts = []
    for path in sorted(folder.rglob("*.py")):
        try:
            texts.append(python_text(path.read_bytes()))
        except (OSError, UnicodeDecodeError):
            continue
    return texts


def _time(texts: list[str]) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for text in texts:
            with contextlib.suppress(SyntaxError, ValueError, RecursionError, MemoryError):
                _parse(text, "bench.py")
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else CORPUS if CORPUS.is_dir() else Path(__file__).parent.parent
    texts = [text for text in _texts(folder) if text.strip()]
    variants = {
        "valid files (reference)": texts,
        "a mistake at the end": [text + "\nif x\n" for text in texts],
        "3.14 except at the end": [text + "\ntry:\n    pass\nexcept A, B:\n    pass\n" for text in texts],
        "3.12 f-strings at the end": [text + '\nX = f"{d["k"]}" + f"{q(\'"t"\')}"\n' for text in texts],
    }
    print(f"{len(texts)} files from {folder}, Python {sys.version_info[0]}.{sys.version_info[1]}")
    reference = _time(texts)
    for name, variant in variants.items():
        took = _time(variant)
        print(f"  {name:28s} {took * 1000:8.1f} ms  {took / reference:5.2f}x the reference")


if __name__ == "__main__":
    main()
