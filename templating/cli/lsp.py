"""`templating lsp`: the language server over stdio, for editors (the `lsp` extra)."""

from __future__ import annotations

import argparse
from typing import Any

from ..linter.registry import DOCS_URL
from .common import RawFormatter

__all__ = ["add_command"]

_LSP_HELP = f"""\
Run templating's language server: the linter's findings on prompt files and on the instructions in
Python agent code, shown by the editor as you type, with hover, completion of state keys,
go-to-definition and quick fixes. It reads the [tool.templating] settings of the workspace's
pyproject.toml, as `templating lint` does.

You do not run it by hand: your editor starts it. Give the command `templating lsp` (or
`python -m templating lsp`) to the editor's LSP client (Neovim's lspconfig, Emacs' eglot, ...),
which talks to it over stdin and stdout (stdio); it takes no options. Set-ups for each editor:
{DOCS_URL}editors/

It needs the lsp extra (pygls, lsprotocol; from a checkout: pip install '.[lsp]'). Without it the
command prints which extra to install and exits with status 2.
"""


def add_command(commands: Any) -> None:
    lsp = commands.add_parser(
        "lsp",
        help="run the language server over stdio, for editors (needs the lsp extra)",
        description=_LSP_HELP,
        formatter_class=RawFormatter,
    )
    lsp.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    from ..lsp import main as serve  # pygls is imported by this command only

    return serve()
