"""google-adk made impossible to import, as in an install without the `adk` extra: a test starts Python with this
folder first on PYTHONPATH (Python imports `sitecustomize` at start-up), so a subprocess of the full venv runs as
one without google-adk."""

import sys
from typing import Any


class _WithoutAdk:
    """A meta-path finder refusing `google.adk` and its modules, as Python does for a package not installed."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "google.adk" or name.startswith("google.adk."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _WithoutAdk())
