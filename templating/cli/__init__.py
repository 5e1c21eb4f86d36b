"""The `templating` command: render an instruction, list its keys, lint instructions, convert an ADK
instruction, run the language server.

One module per command (`render`, `keys`, `lint`, `convert`, `lsp`), each parsing its options and printing
what the library gives back; `parser` builds the argument parser from them, `common` holds what they share.
Each command imports what it uses when it runs (`lint` the linter, `render` the renderer, ...), so that
starting one does not pay for the others: `import templating.cli` loads only argparse and the errors.

Exit codes: 0 success, 1 missing keys (or other findings), 2 bad usage or unreadable input.
Errors are one clear message on stderr, never a traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from ..errors import TemplatingError
from .common import EXIT_OK, EXIT_USAGE, UsageError, error

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    from .parser import build_parser

    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as exc:  # --help, --version and usage errors: argparse has printed its text
            _flush_stdout()
            return exc.code if isinstance(exc.code, int) else EXIT_USAGE
        if sys.stdout is None:
            raise UsageError("stdout is closed: there is nowhere to write the result")
        code: int = args.run(args)
        _flush_stdout()
    except UsageError as exc:
        error(f"templating: error: {exc}")
        return EXIT_USAGE
    except TemplatingError as exc:  # an input that cannot be read, an instruction not found
        error(f"templating: error: {exc.message}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        error("templating: interrupted")
        return 130
    except BrokenPipeError:  # e.g. piped into `head`: the reader has all it wanted
        _quiet_stdout()
        return EXIT_OK
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end]
        error(f"templating: error: cannot write the output as {exc.encoding}: {bad!r} ({exc.reason})")
        return EXIT_USAGE
    except OSError as exc:
        if exc.filename is not None:  # a file this command tried to open, not the output
            error(f"templating: error: cannot access {exc.filename}: {exc.strerror or exc}")
        else:
            _quiet_stdout()
            error(f"templating: error: cannot write the output: {exc.strerror or exc}")
        return EXIT_USAGE
    return code


def _flush_stdout() -> None:
    """Surface write errors (a full disk, a closed pipe) here, not at interpreter exit."""
    if sys.stdout is not None:
        sys.stdout.flush()


def _quiet_stdout() -> None:
    """Point stdout at the null device, so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, AttributeError, ValueError):
        pass
