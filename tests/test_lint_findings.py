"""`templating.linter.findings`: what the engine works out of a scan (here, the order of its agent facts)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import pytest

from templating.linter import findings
from templating.linter.findings import in_order
from templating.nodes import Span
from templating.pysource import Scan


@dataclass(frozen=True, eq=False)
class _Fact:
    """An agent fact as `in_order` reads it: a file, a place and (an agent call's) id."""

    path: str
    start: int
    id: str = ""
    label: str = ""

    @property
    def span(self) -> Span:
        return Span(self.start, self.start + 1, 1, self.start + 1)


def _facts(*places: tuple[str, int, str]) -> list[_Fact]:
    return [_Fact(path, start, id_, label=f"{path}@{start}#{n}") for n, (path, start, id_) in enumerate(places)]


KEPT = _facts(("a.py", 10, "a@10"), ("a.py", 50, "a@50"), ("c.py", 5, "c@5"), ("e.py", 1, "e@1"))
ORDER = [
    # (id, the items after the kept ones)
    ("none-after", []),
    ("one-in-the-middle", _facts(("b.py", 3, "b@3"))),
    ("before-all-and-after-all", _facts(("z.py", 0, "z@0"), ("a.py", 0, "a@0"))),
    ("same-place-as-a-kept-one", _facts(("c.py", 5, "c@5"))),  # after it, as a sort keeps them
    ("same-place-twice", _facts(("b.py", 1, "b@1"), ("b.py", 1, "b@1"))),
    ("many", _facts(*((f"m{n % 7}.py", n, f"m@{n}") for n in range(100)))),  # more than a few: sorted again
]


@pytest.mark.parametrize("after", [o[1] for o in ORDER], ids=[o[0] for o in ORDER])
def test_facts_put_in_place_after_those_in_order_are_as_sorted(after: list[_Fact]) -> None:
    """An edit's merge gives the facts kept (in order already) then those of the files scanned again: put in
    place one by one, they are in the order a sort of the whole list gives, the very objects, ties as a sort
    leaves them."""
    lists = {name: KEPT + after for name in findings._LISTED_FACTS}
    merged = in_order(Scan(**lists), sorted_up_to={name: len(KEPT) for name in lists})  # type: ignore[arg-type]
    for name in findings._LISTED_FACTS:
        expected = sorted(KEPT + after, key=lambda f: (f.path, f.start, f.id))
        assert _labels(getattr(merged, name)) == _labels(expected)
        assert all(a is b for a, b in zip(getattr(merged, name), expected, strict=True))


def test_without_what_is_in_order_every_list_is_sorted() -> None:
    mixed = list(reversed(KEPT))
    merged = in_order(Scan(agents=mixed, runners=list(mixed)))  # type: ignore[arg-type]
    assert _labels(merged.agents) == _labels(KEPT)
    assert _labels(merged.runners) == _labels(KEPT)


def _labels(items: Sequence[object]) -> list[str]:
    return [cast(_Fact, item).label for item in items]
