"""The run order of a google-adk 2.x `Workflow`, from its edges: what has certainly completed before a node starts
(its predecessors on every path from START, and everything before a `JoinNode`, which waits for all of its), what
may have (a predecessor on some path only: a route not taken, the other branch of a merge without a join), what
runs concurrently (fan-out branches), and cycles (a node reached again: loop semantics)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal, TypeAlias

__all__ = ["Order", "WorkflowOrder"]

# How a node `a` stands to a node `b` in a workflow's runs: `a` completes before `b` starts on every run
# (`before`), on some runs (`maybe`), `b` runs first and `a` only after it (`later`), both run again in a cycle
# (`loop`), or neither leads to the other (`apart`: concurrent branches, or routes of which one is taken).
Order: TypeAlias = Literal["before", "maybe", "later", "loop", "apart", "same"]

_MAX_ROUNDS = 1000  # rounds of the fixpoint (each round only shrinks or grows the sets: it ends far sooner)


class WorkflowOrder:
    """The order of one workflow's nodes, from its `edges` `(source, target, routed)`; `is_join(node)` says which
    nodes are `JoinNode`s."""

    def __init__(self, edges: Iterable[tuple[str, str, bool]], is_join: Callable[[str], bool]) -> None:
        self.successors: dict[str, list[str]] = {}
        self.predecessors: dict[str, list[str]] = {}
        for source, target, _ in edges:
            self.successors.setdefault(source, []).append(target)
            self.predecessors.setdefault(target, []).append(source)
            self.successors.setdefault(target, [])
            self.predecessors.setdefault(source, [])
        self.nodes = [n for n in self.successors if n != "START"]
        self._reach: dict[str, frozenset[str]] = {}
        self.completed = self._completed(is_join)

    def reaches(self, a: str, b: str) -> bool:
        """Whether a run can go from `a` to `b` along the edges."""
        found = self._reach.get(a)
        if found is None:
            seen: set[str] = set()
            stack = list(self.successors.get(a, ()))
            while stack:
                node = stack.pop()
                if node not in seen:
                    seen.add(node)
                    stack.extend(self.successors.get(node, ()))
            found = self._reach[a] = frozenset(seen)
        return b in found

    def _completed(self, is_join: Callable[[str], bool]) -> dict[str, frozenset[str]]:
        """For each node, the nodes certainly completed before it starts: what every predecessor had completed
        and the predecessor itself (the one that triggered it), or, for a `JoinNode`, all of its predecessors'."""
        every = frozenset(self.successors)
        done: dict[str, frozenset[str]] = {node: every for node in self.successors}
        done["START"] = frozenset()
        reachable = {"START"} | set(self._reached_from_start())
        for _ in range(_MAX_ROUNDS):
            changed = False
            for node in self.successors:
                if node == "START":
                    continue
                preds = [p for p in self.predecessors.get(node, ()) if p in reachable]
                if not preds:
                    new: frozenset[str] = frozenset()
                elif is_join(node):
                    new = frozenset().union(*(done[p] | {p} for p in preds))
                else:
                    new = frozenset.intersection(*(done[p] | {p} for p in preds))
                if new != done[node]:
                    done[node], changed = new, True
            if not changed:
                break
        return done

    def _reached_from_start(self) -> Iterable[str]:
        seen: set[str] = set()
        stack = list(self.successors.get("START", ()))
        while stack:
            node = stack.pop()
            if node not in seen:
                seen.add(node)
                stack.extend(self.successors.get(node, ()))
        return seen

    def order(self, a: str, b: str) -> Order:
        """How `a` stands to `b` (see `Order`)."""
        if a == b:
            return "same"
        if a in self.completed.get(b, ()):
            return "before"
        forward, back = self.reaches(a, b), self.reaches(b, a)
        if forward and back:
            return "loop"
        if forward:
            return "maybe"
        if back:
            return "later"
        return "apart"

    def always_runs(self, node: str) -> bool:
        """Whether every run of the workflow that ends runs `node` (it has completed before each node with no
        successor, or is one of them)."""
        sinks = [n for n in self._reached_from_start() if not self.successors.get(n)]
        return bool(sinks) and all(node == s or node in self.completed.get(s, ()) for s in sinks)
