"""The one count of the cyclic collector's pauses (`templating._collector`), shared by the parser, the scan of
Python sources and the copies of large state."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import AbstractContextManager

import pytest

from templating import _collector
from templating.parser import _PAUSE_COLLECTOR_FROM, collector_paused

PAUSES = {
    "parse": lambda: collector_paused(_PAUSE_COLLECTOR_FROM),
    "scan": lambda: _collector.paused(),
}


@pytest.fixture
def collector() -> Iterator[None]:
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


# Two callers' pauses entered one after the other and ended in either order (as two threads end them).
ORDERS = {
    "parse-then-scan-ends-first-first": (("parse", "scan"), (0, 1)),
    "parse-then-scan-ends-last-first": (("parse", "scan"), (1, 0)),
    "scan-then-parse-ends-first-first": (("scan", "parse"), (0, 1)),
    "scan-then-parse-ends-last-first": (("scan", "parse"), (1, 0)),
}


@pytest.mark.parametrize(("callers", "ends"), ORDERS.values(), ids=ORDERS.keys())
@pytest.mark.parametrize("collector_on", [True, False], ids=["collector-on", "collector-off"])
@pytest.mark.usefixtures("collector")
def test_pauses_of_every_caller_count_together(
    callers: tuple[str, str], ends: tuple[int, int], collector_on: bool
) -> None:
    (gc.enable if collector_on else gc.disable)()
    managers: list[AbstractContextManager[None]] = [PAUSES[name]() for name in callers]
    for manager in managers:
        manager.__enter__()
        assert not gc.isenabled()
    managers[ends[0]].__exit__(None, None, None)
    assert not gc.isenabled()  # the other pause still runs, whichever caller made it
    managers[ends[1]].__exit__(None, None, None)
    assert gc.isenabled() is collector_on


@pytest.mark.usefixtures("collector")
def test_an_error_inside_ends_the_pause() -> None:
    gc.enable()
    with pytest.raises(ValueError, match="inside"), _collector.paused():
        raise ValueError("inside")
    assert gc.isenabled()
