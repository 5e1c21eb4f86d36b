"""The cyclic garbage collector paused while many objects that hold no cycle are made at once: a large
template's nodes and plan, a scan's syntax trees, a large state copied for a caller. Left on, the
collector walks them again and again as they grow and frees none of them.

One count for every caller in every thread: the collector runs again when the last pause ends, and
only if it was running when the first began (a caller that had turned it off keeps it off).
Standard library only, below everything that pauses it.
"""

from __future__ import annotations

import _thread
import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused"]

_lock = _thread.allocate_lock()
_pauses = 0  # pauses running, in every thread
_resume = False  # whether the collector was running when the first of them began


@contextmanager
def paused() -> Iterator[None]:
    """The collector paused for the block (an error inside ends the pause too)."""
    global _pauses, _resume
    with _lock:
        if _pauses == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _pauses == 0 and _resume:
                gc.enable()
