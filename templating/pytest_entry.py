"""The `pytest11` entry point: loads the snapshot plugin ([`templating.pytest_plugin`][]) when syrupy is installed.

pytest loads this module in every run of an environment where the package is installed, so it must import
without syrupy (the `pytest` extra). Without it, the `prompt_snapshot` and `lint_snapshot` fixtures fail the
tests that use them with a one-line message naming the extra, and every other test runs as usual.
"""

from __future__ import annotations

import importlib.util

import pytest

EXTRA_MISSING = (
    "templating's snapshot fixtures need syrupy, which the 'pytest' extra installs: "
    "pip install 'agent-prompt-templating[pytest]'"
)

if importlib.util.find_spec("syrupy") is not None:
    pytest_plugins = ["templating.pytest_plugin"]  # pytest loads it, with its fixtures and hooks, right after this
else:

    def pytest_addoption(parser: pytest.Parser) -> None:
        # The ini option pytest_plugin declares, so that --strict-config accepts a configuration naming it.
        parser.addini(
            "templating_snapshot_dir", help="templating: folder for prompt/lint snapshots (needs syrupy)", default=""
        )

    @pytest.fixture
    def prompt_snapshot() -> None:
        """Fails: the snapshot fixtures need syrupy (`pip install 'agent-prompt-templating[pytest]'`)."""
        pytest.fail(EXTRA_MISSING, pytrace=False)

    @pytest.fixture
    def lint_snapshot() -> None:
        """Fails: the snapshot fixtures need syrupy (`pip install 'agent-prompt-templating[pytest]'`)."""
        pytest.fail(EXTRA_MISSING, pytrace=False)
