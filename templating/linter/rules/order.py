"""The run-order rules over the agent model (`templating.agent_model`): for each key an agent's instruction reads,
whether google-adk's state holds it when the instruction is injected on the app's first turn.

- T014 `key-never-written`: nothing in the agent's app writes the key (another app's writer does not count); a
  write whose key is known only at run time, running before or alongside the agent, weakens it: a warning that
  names that write when a key written by name is close (a misspelling), else nothing;
- T024 `written-later`: the first writer runs after the agent in a SequentialAgent or Workflow (its own
  output_key included);
- T025 `parallel-race`: only a ParallelAgent sibling (or a concurrent workflow branch) writes it;
- T026 `loop-first-iteration`: in a LoopAgent (or a workflow cycle), it is written only later in the body;
- T027 `maybe-written`: only a write that may not happen writes it (a tool the model may not call, a write under
  a condition, an agent reached only if a model transfers to it or calls it as a tool).

A finding is an error when the app's initial state is declared and google-adk is certain to raise (the agent
surely runs, the write surely comes too late, the key is not shared across sessions); otherwise a warning whose
help says how to declare what the caller gives. A `jinja(...)` instruction's reads (`jinja_mode.reads`; a guarded
one is optional) are held to the same rules. Instructions no agent of an app is given keep the project-wide T014
(`rules.python.never_written`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..registry import RULES, Diagnostic, Severity
from ..util import close_match
from .python import _declared, _unwritten

if TYPE_CHECKING:
    from ...agent_model import Agent, AgentModel, App, Availability, Read
    from ...pysource import Instruction, InstructionKey

__all__ = ["ORDER_RULES", "OrderIndex", "attached", "order_findings"]

# The availability kinds that are findings, and their rule.
_RULE_OF = {"nowhere": "T014", "unknown": "T014", "later": "T024", "sibling": "T025", "loop": "T026", "maybe": "T027"}
ORDER_RULES = frozenset({"T014", "T024", "T025", "T026", "T027"})
# Which finding of a placeholder read by several agents is shown: certain ones first, then by how sure the miss is.
_RANK = {"nowhere": 0, "later": 1, "loop": 2, "sibling": 3, "maybe": 4, "unknown": 5}
_DECLARE_DOCS = "Linting, The initial state"


@dataclass(frozen=True, slots=True)
class _Part:
    """What one app's agents (or those of no app: `app` None) give the index: each instruction's readers among
    them with the keys read, in run order, and the instructions given to them; with the reads each agent's entries
    were made from (by agent id), for the next index to take the part when they are the very same."""

    app: App | None
    readers: dict[InstructionKey, list[tuple[Agent, Read]]]
    attached: frozenset[InstructionKey]
    made_from: dict[str, tuple[Read, ...]]


def _part(model: AgentModel, app: App | None, agents: Iterable[Agent]) -> _Part:
    readers: dict[InstructionKey, list[tuple[Agent, Read]]] = {}
    attached: set[InstructionKey] = set()
    made_from: dict[str, tuple[Read, ...]] = {}
    for agent in agents:
        if app is not None:
            attached.update(i.ref.key for i in agent.instructions if i.ref.key is not None)
        reads = made_from[agent.id] = model.reads(agent)
        for read in reads:
            if read.instruction is not None:
                readers.setdefault(read.instruction, []).append((agent, read))
    return _Part(app, readers, frozenset(attached), made_from)


class _Hashed:
    """An instruction's key with its hash worked out once (an `InstructionKey` works it out at each lookup), to
    look it up in every part's readers. A part's key meets it through `_Hashed.__eq__` only because
    `InstructionKey.__eq__` (a dataclass's) answers NotImplemented for another type."""

    __slots__ = ("hash", "key")

    def __init__(self, key: object) -> None:
        self.key, self.hash = key, hash(key)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return bool(self.key == other)


class _Readers(Mapping["InstructionKey", list[tuple["Agent", "Read"]]]):
    """The agents reading each instruction, with the keys they read (in app order, each agent once: where its
    first app has it), gathered from the parts when first asked for."""

    def __init__(self, parts: Sequence[_Part]) -> None:
        self._parts = parts
        self._found: dict[InstructionKey, list[tuple[Agent, Read]]] = {}

    def __getitem__(self, key: InstructionKey) -> list[tuple[Agent, Read]]:
        found = self._found.get(key)
        if found is None:
            found = []
            earlier: set[str] = set()  # the agents of the parts before (an agent reached by two apps: the first's)
            hashed = _Hashed(key)
            for part in self._parts:
                here = part.readers.get(hashed)  # type: ignore[call-overload]
                if here:
                    found += [pair for pair in here if pair[0].id not in earlier]
                    earlier.update(pair[0].id for pair in here)
            self._found[key] = found
        if not found:
            raise KeyError(key)
        return found

    def __iter__(self) -> Iterator[InstructionKey]:
        return iter(dict.fromkeys(key for part in self._parts for key in part.readers))

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _Attached(Set["InstructionKey"]):
    """The instructions given to an agent of some app (see `OrderIndex`): one set, the union of the app parts',
    made when first asked for. Making it copies each part's keys with the hashes the part's set holds (no key is
    hashed again), so an edit asking for a few keys pays little; a lookup then hashes the key once and compares it
    with keys of its own type only (unlike `_Hashed`, it does not rely on `InstructionKey.__eq__` answering
    NotImplemented for another type)."""

    def __init__(self, parts: Sequence[_Part]) -> None:
        self._parts = [part.attached for part in parts if part.app is not None]
        self._union: frozenset[InstructionKey] | None = None

    def _keys(self) -> frozenset[InstructionKey]:
        if self._union is None:
            self._union = frozenset().union(*self._parts)
            self._parts = []
        return self._union

    def __contains__(self, key: object) -> bool:
        return key in self._keys()

    def __iter__(self) -> Iterator[InstructionKey]:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())


@dataclass(frozen=True, slots=True)
class OrderIndex:
    """What the rules need of a model, worked out once per model: the agents reading each instruction (with the
    keys they read, in app order), and the instructions given to an agent of some app (whose keys the model
    decides, read or not: a sub-agent's global_instruction, which google-adk ignores, is given but never read).

    Made of one part per app (and one for the agents of no app): `of(model, before=)` takes the part of an app
    that is the very same object in the index before when each of its agents' reads is the very object it was
    made from (`AgentModel._kept_reads`): an edit works out the parts of the apps it touches only."""

    readers: Mapping[InstructionKey, list[tuple[Agent, Read]]]
    attached: Set[InstructionKey]
    # each app's keys written by name or declared (`_app_keys`), worked out when first asked for
    app_keys: dict[str, set[str]] = field(default_factory=dict)
    parts: dict[str | None, _Part] = field(default_factory=dict)  # by app id (None: the agents of no app)

    @classmethod
    def of(cls, model: AgentModel, *, before: OrderIndex | None = None) -> OrderIndex:
        parts: dict[str | None, _Part] = {}
        earlier = before.parts if before is not None else {}
        seen: set[str] = set()
        for app in model.apps:
            part = earlier.get(app.id)
            if (
                part is None
                or part.app is not app
                or not all(model._kept_reads(agent, reads) for agent, reads in part.made_from.items())
            ):
                part = _part(model, app, (model.agents[a] for a in app.agents if a in model.agents))
            parts[app.id] = part
            seen.update(app.agents)
        part = earlier.get(None)
        alone = [agent for agent in model.agents.values() if agent.id not in seen]
        if (
            part is None
            or len(part.made_from) != len(alone)
            or not all(
                model._kept_reads(agent.id, reads) and agent.id == key
                for agent, (key, reads) in zip(alone, part.made_from.items(), strict=True)
            )
        ):
            part = _part(model, None, alone)
        parts[None] = part
        ordered = list(parts.values())
        return cls(_Readers(ordered), _Attached(ordered), parts=parts)


def order_findings(
    model: AgentModel,
    index: OrderIndex,
    item: Instruction,
    *,
    codes: Collection[str],
    given: Collection[str] = (),
) -> list[Diagnostic]:
    """The order findings of the instruction `item` (one of `index.attached`): for each placeholder, the worst
    availability among the agents reading it. `given`: keys that count as given everywhere (templating's own
    schema's)."""
    # each key once an instruction (at its first required placeholder), as the agent it is worst for sees it
    first: dict[str, int] = {}
    for _, read in index.readers.get(item.key, ()):
        if not read.optional:
            first[read.key] = min(first.get(read.key, read.span.start), read.span.start)
    worst: dict[str, tuple[tuple[int, int], Diagnostic]] = {}
    for agent, read in index.readers.get(item.key, ()):
        if read.optional or read.key in given or read.span.start != first[read.key]:
            continue
        found = model.availability(agent, read.key)
        diag = _finding(model, index, item, agent, read, found, codes)
        if diag is None:
            continue
        rank = (0 if diag.severity == "error" else 1, _RANK[found.kind])
        if read.key not in worst or rank < worst[read.key][0]:
            worst[read.key] = (rank, diag)
    return [diag for _, diag in sorted(worst.values(), key=lambda pair: pair[1].span.start if pair[1].span else -1)]


def _finding(
    model: AgentModel,
    index: OrderIndex,
    item: Instruction,
    agent: Agent,
    read: Read,
    found: Availability,
    codes: Collection[str],
) -> Diagnostic | None:
    code = _RULE_OF.get(found.kind)
    if code is None or code not in codes:
        return None
    if found.kind == "unknown" and found.writer is None:
        return None  # a session's initial state known only at run time may give it
    if found.kind == "nowhere" and read.key.startswith("temp:"):
        return None  # T012's: a temp: key read, empty at the start of every turn
    if found.kind == "maybe" and found.app is None:
        return None  # an agent of no app: written somewhere in the project, as T014 always counted it
    declared = found.app is not None and model.initial_state(found.app).declared
    severity: Severity = "error" if declared and found.certain else RULES[code].severity
    path, span = item.locate(read.span.start, read.span.end)
    message = _message(model, code, found, agent, read)
    shown = item.text[read.span.start : read.span.end]
    help_ = _help(code, found, agent, read, declared=declared, shown=shown)
    schema = _declared(item, read.key) if found.kind == "nowhere" else None
    if schema is not None:  # an agent's state_schema declares it: google-adk still never fills state from it
        message += f" ({schema[0].model} declares it, but a state_schema writes nothing)"
        help_ = _unwritten(item, read.key, read.key, shown, schema)[1]
    if found.kind in ("nowhere", "unknown") and found.app is not None:
        keys = index.app_keys.get(found.app)
        if keys is None:
            keys = index.app_keys[found.app] = _app_keys(model, found.app)
        close = None if read.key in keys else close_match(read.key, sorted(keys), cutoff=0.8)
        if close:
            help_ = f"did you mean {close!r}, which is written? Otherwise {help_}"
        elif found.kind == "unknown":
            # the write known only at run time may well give it (a state loaded from a file), unless the key looks
            # like a misspelling of one written by name
            return None
    return Diagnostic(code, severity, message, span, path, help_, item.label)


def _message(model: AgentModel, code: str, found: Availability, agent: Agent, read: Read) -> str:
    whose = "the global instruction" if read.role == "global_instruction" else "the instruction"
    if read.dialect == "jinja":  # templating's provider renders it: a missing key is its own error
        who, error = "the Jinja2 instruction", "JinjaUndefinedError"
    else:
        who, error = "google-adk", "KeyError"
    raises = f"{who} raises {error}" if found.certain else f"{who} may raise {error}"
    if found.kind == "nowhere":
        other = _other_app_writer(model, found)
        return f"`{read.key}` is read by {whose} of {agent.shown}, but {found.order_text}{other}: {raises} when it runs"
    if found.kind == "unknown":
        return (
            f"`{read.key}` is read by {whose} of {agent.shown}, and nothing in its app writes it by name; "
            f"{found.order_text.split(' ', 1)[1]}: not checked further"
        )
    if code == "T025":
        return f"{found.order_text}: {raises} when {agent.shown}'s instruction is read first"
    if code == "T027":
        return f"{found.order_text}: otherwise {raises} when {agent.shown} runs"
    return f"{found.order_text}: {raises} when {agent.shown} reads it"


def _help(code: str, found: Availability, agent: Agent, read: Read, *, declared: bool, shown: str) -> str:
    key = read.key
    if read.dialect == "jinja":  # as it is written: `user.name`, `state["x"]`
        optional = (
            f"guard it ({{% if {shown} is defined %}}...{{% endif %}}, or {shown} | default(''))"
            if "[" not in shown
            else "guard it ({% if ... is defined %}, or | default(''))"
        )
    else:
        optional = (
            f"make the placeholder optional ({{{key}?}})"
            if read.dialect == "adk"
            else f"make the placeholder optional (<{key}?>)"
        )
    what = {
        "T014": f"set {key!r} before {agent.shown} runs (an earlier agent's output_key, a before_agent_callback)",
        "T024": f"run the writer before {agent.shown}, or seed {key!r} earlier (a before_agent_callback)",
        "T025": f"write {key!r} before the ParallelAgent starts, or read it after it",
        "T026": f"seed {key!r} before the loop (a before_agent_callback), or reorder the loop's body",
        "T027": f"write {key!r} unconditionally before {agent.shown} runs",
    }[code]
    out = f"{what}, or {optional} if {agent.shown} can do without it"
    if found.kind == "unknown":
        out = f"if that write does not give {key!r}, {out}"
    if not declared and found.app is not None:
        out += (
            f"; if the caller gives {key!r} (create_session(state=...), an eval set, a web front end), declare the "
            f"initial state: initial-state = [{key!r}] in [tool.templating] (see {_DECLARE_DOCS})"
        )
    elif declared and found.app is not None:
        out += f"; or add {key!r} to the declared initial state, if the caller gives it"
    return out


def _app_keys(model: AgentModel, app_id: str) -> set[str]:
    """The keys the app's agents write by name, and those its declared initial state gives."""
    app = next(a for a in model.apps if a.id == app_id)
    keys = {w.key for member in app.agents for w in model.agents[member].writes if w.key is not None}
    return keys | set(model.initial_state(app).keys)


def _other_app_writer(model: AgentModel, found: Availability) -> str:
    """` (the app billing writes it: invoice_agent's output_key)` when another app writes the key."""
    if found.writer is not None:
        return ""
    for app in model.apps:
        if app.id == found.app:
            continue
        writes = model.writers(found.key, app)
        if writes:
            owner = model.agents[writes[0].agent].shown
            return f" (only the app {app.name} writes it: {owner}'s {writes[0].how})"
    return ""


def attached(index: OrderIndex, items: Iterable[Instruction]) -> Sequence[Instruction]:
    """The `items` whose keys the model decides."""
    return [item for item in items if item.key in index.attached]
