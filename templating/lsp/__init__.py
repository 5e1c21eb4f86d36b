"""`templating lsp`: a language server for instructions in prompt files and Python agent code.

It needs the `lsp` extra (pygls and lsprotocol), imported only when the server starts."""

from __future__ import annotations

import os
import sys

__all__ = ["main"]

EXTRA_MISSING = (
    "templating: error: `templating lsp` needs the lsp extra (pygls, lsprotocol): "
    "pip install 'agent-prompt-templating[lsp]'"
)


def main() -> int:
    """Serve over stdio; exit code 2 with a one-line error when the `lsp` extra is missing."""
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError:
        print(EXTRA_MISSING, file=sys.stderr)
        return 2
    from .server import serve

    code = serve()
    # the protocol's channel is closed with the connection: nothing may be flushed to it any more
    sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    return code
