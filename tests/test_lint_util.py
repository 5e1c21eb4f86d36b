"""The linter's shared helpers: a process-wide setting held while scans run."""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Callable
from typing import Any

import pytest

from templating.linter import cold, findings
from templating.linter.util import WhileRunning

HELD: list[tuple[str, WhileRunning[Any], Callable[[], Any], Callable[[Any], Any]]] = [
    # (id, the setting held, how to read it, what it is while held given what it was)
    ("switch-interval", cold._short_switches, sys.getswitchinterval, lambda before: cold._SWITCH),
    ("no-full-collections", findings._no_full_collections, gc.get_threshold, lambda t: (t[0], t[1], 1_000_000)),
]


@pytest.mark.parametrize(("held", "read", "during"), [h[1:] for h in HELD], ids=[h[0] for h in HELD])
@pytest.mark.parametrize("last", ["first-ends-last", "first-ends-first"])
def test_a_setting_held_by_overlapping_runs_is_put_back_when_the_last_ends(
    held: WhileRunning[Any], read: Callable[[], Any], during: Callable[[Any], Any], last: str
) -> None:
    """The language server runs scans on threads: the setting before the first is put back by the last, whichever
    that is, and stays changed while any runs."""
    before = read()
    first, second = held(), held()
    with contextlib.ExitStack() as stack:  # (both ended whatever happens: the setting is the whole session's)
        stack.enter_context(first)
        assert read() == during(before)
        stack.enter_context(second)
        ending = [second, first] if last == "first-ends-last" else [first, second]
        ending[0].__exit__(None, None, None)
        assert read() == during(before)  # the other still runs
        ending[1].__exit__(None, None, None)
        assert read() == before
        stack.pop_all()


def test_a_run_that_fails_puts_the_setting_back() -> None:
    values: list[str] = ["before"]
    held = WhileRunning(lambda: values[-1], lambda _: values.append("during"), values.append)
    seen: list[str] = []

    def fails() -> None:
        with held():
            seen.append(values[-1])
            raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        fails()
    assert seen == ["during"]
    assert values[-1] == "before"


def test_a_change_that_fails_puts_the_setting_back_and_holds_nothing() -> None:
    values: list[str] = ["before"]

    def change(_: str) -> None:
        values.append("half")
        raise OSError("cannot")

    held = WhileRunning(lambda: values[-1], change, values.append)
    with pytest.raises(OSError, match="cannot"), held():
        pass
    assert values[-1] == "before"
    values.clear()
    values.append("later")
    with pytest.raises(OSError, match="cannot"), held():  # the next run reads the setting again
        pass
    assert values[-1] == "later"
