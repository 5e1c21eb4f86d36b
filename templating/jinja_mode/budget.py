"""Budgets for Jinja2 mode, and what counts as data that a template may print.

A render gets a [`JinjaBudget`][templating.JinjaBudget]: wall-clock time, total output, the size of
any one value the template builds, the size of all of them together, and loop steps. Its running
totals live in a `Spend` made per render and reached through a context variable, so filters and
operators (which get no render context) charge the render that runs them. This module does not
import Jinja2: the sandbox in `sandbox` calls it, and turns the exceptions raised here into its
`JinjaError`s.
"""

from __future__ import annotations

import datetime
import enum
import fractions
import math
import os
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, fields
from decimal import Decimal
from time import monotonic
from typing import Any

from ..errors import TemplatingError

__all__ = ["BUDGET_ENVIRONMENT", "BudgetSettingError", "JinjaBudget"]

# budget field -> the environment variable that sets its default.
BUDGET_ENVIRONMENT = {
    "max_time": "TEMPLATING_JINJA_MAX_TIME",
    "max_output": "TEMPLATING_JINJA_MAX_OUTPUT",
    "max_value": "TEMPLATING_JINJA_MAX_VALUE",
    "max_loop_steps": "TEMPLATING_JINJA_MAX_LOOP_STEPS",
    "max_total": "TEMPLATING_JINJA_MAX_TOTAL",
}
_DEFAULTS: dict[str, float | int] = {
    "max_time": 1.0,
    "max_output": 1_000_000,
    "max_value": 100_000,
    "max_loop_steps": 100_000,
    "max_total": 20_000_000,
}
# What each budget counts, for messages.
UNITS = {
    "max_time": "seconds",
    "max_output": "characters of output",
    "max_value": "items in one value",
    "max_loop_steps": "loop steps",
    "max_total": "items built in all",
}


class BudgetSettingError(TemplatingError, ValueError):
    """An environment variable setting a budget's default (`TEMPLATING_JINJA_MAX_*`) that is neither a
    positive number nor `off`: the message names it and its value."""


def _from_environment(name: str) -> Callable[[], Any]:
    variable = BUDGET_ENVIRONMENT[name]
    default = _DEFAULTS[name]

    def read() -> float | int | None:
        text = os.environ.get(variable)
        if text is None or not text.strip():
            return default
        text = text.strip()
        if text.lower() == "off":
            return None
        try:
            value: float | int = float(text) if isinstance(default, float) else int(text.replace("_", ""))
        except ValueError:
            value = -1
        if not value > 0 or (isinstance(value, float) and not math.isfinite(value)):
            kind = "number of seconds" if isinstance(default, float) else "whole number"
            raise BudgetSettingError(f"{variable}={text!r}: expected a positive {kind}, or 'off' for no limit")
        return value

    return read


@dataclass(frozen=True, slots=True, kw_only=True)
class JinjaBudget:
    """The limits of one Jinja2 render; `None` turns a limit off.

    A field left out takes its default from its environment variable (`TEMPLATING_JINJA_MAX_TIME`,
    `TEMPLATING_JINJA_MAX_OUTPUT`, `TEMPLATING_JINJA_MAX_VALUE`, `TEMPLATING_JINJA_MAX_LOOP_STEPS`,
    `TEMPLATING_JINJA_MAX_TOTAL`: a positive number, or `off`), read when the budget is made, else
    from the built-in default.
    """

    max_time: float | None = field(default_factory=_from_environment("max_time"))
    """Wall-clock seconds one render may take."""
    max_output: int | None = field(default_factory=_from_environment("max_output"))
    """Characters a render may write in all, counting what macros and `{% set %}` blocks collect."""
    max_value: int | None = field(default_factory=_from_environment("max_value"))
    """Items (characters of a string, elements of a list) in any one value the template builds."""
    max_loop_steps: int | None = field(default_factory=_from_environment("max_loop_steps"))
    """Iterations of all `for` loops of a render together (recursive loops included)."""
    max_total: int | None = field(default_factory=_from_environment("max_total"))
    """Items of all the values a render builds together (each counted as `max_value` counts it):
    bounds the memory a loop can fill with fresh values, each under `max_value`."""

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if value is None:
                continue
            integral = item.name != "max_time"
            if isinstance(value, bool) or not isinstance(value, int if integral else (int, float)):
                kind = "an int" if integral else "a number of seconds"
                raise TypeError(f"JinjaBudget({item.name}=...) takes {kind} or None, not {type(value).__name__}")
            if not value > 0 or not math.isfinite(value):
                raise ValueError(f"JinjaBudget({item.name}={value!r}): a limit must be positive (None: no limit)")

    @classmethod
    def unlimited(cls) -> JinjaBudget:
        """No limit at all: for trusted templates only (each operation is still size-checked)."""
        return cls(max_time=None, max_output=None, max_value=None, max_loop_steps=None, max_total=None)


class BudgetExceeded(Exception):
    """A render went over one of its budgets (`budget` names the field, `limit` its value)."""

    def __init__(self, budget: str, limit: float, message: str) -> None:
        super().__init__(message)
        self.budget = budget
        self.limit = limit


class NotData(Exception):
    """A value that is not data was about to be printed or turned into text."""


class CyclicValue(NotData):
    """A value that contains itself was about to be printed or turned into text."""


_NO_LIMIT = 1 << 62


class Spend:
    """What one render has used so far, against its budget."""

    __slots__ = (
        "budget",
        "built",
        "deadline",
        "max_loop_steps",
        "max_output",
        "max_total",
        "max_value",
        "output",
        "steps",
    )

    def __init__(self, budget: JinjaBudget) -> None:
        self.budget = budget
        self.deadline = math.inf if budget.max_time is None else monotonic() + budget.max_time
        self.max_output = _NO_LIMIT if budget.max_output is None else budget.max_output
        self.max_value = _NO_LIMIT if budget.max_value is None else budget.max_value
        self.max_loop_steps = _NO_LIMIT if budget.max_loop_steps is None else budget.max_loop_steps
        self.max_total = _NO_LIMIT if budget.max_total is None else budget.max_total
        self.built = 0
        self.output = 0
        self.steps = 0

    def write(self, size: int) -> None:
        """Charge `size` characters of output."""
        self.output += size
        if self.output > self.max_output:
            raise BudgetExceeded(
                "max_output",
                self.max_output,
                f"the output budget is spent: the render would write more than {self.max_output} characters",
            )

    def check_time(self) -> None:
        if monotonic() > self.deadline:
            raise BudgetExceeded(
                "max_time", self.budget.max_time or 0, f"the time budget is spent: {self.budget.max_time} s"
            )

    def over_loop(self) -> None:
        """Raise for the loop or time budget, whichever a loop step went over."""
        if self.steps > self.max_loop_steps:
            raise BudgetExceeded(
                "max_loop_steps",
                self.max_loop_steps,
                f"the loop budget is spent: more than {self.max_loop_steps} loop steps",
            )
        self.check_time()

    def check_size(self, size: int, what: str) -> None:
        """Charge a value of `size` items about to be built: to `max_value`, and to `max_total`."""
        if size > self.max_value:
            raise BudgetExceeded(
                "max_value",
                self.max_value,
                f"{what} would build a value of {size} items, more than the limit of {self.max_value}",
            )
        self.built += size
        if self.built > self.max_total:
            raise BudgetExceeded(
                "max_total",
                self.max_total,
                f"{what} would bring the values this render built to {self.built} items in all, "
                f"more than the limit of {self.max_total}",
            )


# The budget of the render running in this context. Outside a render (compiling constants), the defaults.
CURRENT: ContextVar[Spend] = ContextVar("templating_jinja_spend")
_OUTSIDE = Spend(
    JinjaBudget(
        max_time=None, max_output=None, max_value=int(_DEFAULTS["max_value"]), max_loop_steps=None, max_total=None
    )
)


def spend() -> Spend:
    return CURRENT.get(_OUTSIDE)


def counted(iterable: Any) -> Iterator[Any]:
    """Iterate `iterable`, charging each step to the render's loop and time budgets."""
    current = CURRENT.get(_OUTSIDE)
    for item in iterable:
        current.steps += 1
        if current.steps > current.max_loop_steps or monotonic() > current.deadline:
            current.over_loop()
        yield item


class Capped:
    """An iterable read from state that is none of the finite data types (a generator, an object with an
    `__iter__` of its own), as a template reads it: each iteration stops at the value budget and runs on
    the render's clock, whatever draws it (`|list`, `|join`, `|sort`, `str.join()`, `in`), so one that
    never ends is an error, not a process filling its memory. `len()` is the value's own."""

    __slots__ = ("inner",)

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __iter__(self) -> Iterator[Any]:
        current = CURRENT.get(_OUTSIDE)
        for drawn, item in enumerate(self.inner, 1):
            if drawn > current.max_value:
                raise BudgetExceeded(
                    "max_value",
                    current.max_value,
                    f"the value budget is spent: {describe(self.inner)} gave more than {current.max_value} items",
                )
            if not drawn & 1023:
                current.check_time()
            yield item

    def __len__(self) -> int:
        return len(self.inner)

    def __bool__(self) -> bool:
        return bool(self.inner)


# --- what is data ---------------------------------------------------------------------------------

# Scalars that print as text of their own (never an address): the JSON ones, and value types.
_SCALARS = (
    str,
    int,
    float,
    type(None),
    Decimal,
    fractions.Fraction,
    datetime.date,
    datetime.time,
    datetime.timedelta,
    uuid.UUID,
)


class _Leave:
    """A marker on the walk's stack: the container with this id is no longer being walked."""

    __slots__ = ("ident",)

    def __init__(self, ident: int) -> None:
        self.ident = ident


def describe(value: Any) -> str:
    """What a value is, in words, for an error message (never its repr: it may hold an address)."""
    if type(value) is Capped:
        value = value.inner
    if isinstance(value, type):
        return f"the class {value.__name__}"
    name = getattr(value, "__name__", None)
    kind = type(value).__name__
    if callable(value) and isinstance(name, str):
        return f"a {kind} ({name})"
    return f"a {kind}"


def measure(value: Any, limit: int, what: str) -> int:
    """About how many characters `value` prints as; raises `NotData` for anything but data (at any
    depth), `CyclicValue` for a value that contains itself, and stops at once past `limit` (returning
    a size over it). Text is counted exactly, numbers and punctuation roughly."""
    if type(value) is str:
        return len(value)
    size = 0
    stack: list[Any] = [value]
    path: set[int] = set()
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            size += len(item)
        elif isinstance(item, bool) or item is None:
            size += 5
        elif isinstance(item, int):
            size += item.bit_length() // 3 + 2
        elif isinstance(item, _SCALARS):
            size += 32
        elif isinstance(item, (list, tuple, Mapping)):
            ident = id(item)
            if ident in path:
                raise CyclicValue(f"{what} contains itself (a list or dict that holds itself), it cannot be printed")
            path.add(ident)
            stack.append(_Leave(ident))
            size += 2 + 2 * len(item)
            if isinstance(item, Mapping):  # counted as it is iterated: keys that never end stop at the limit
                for key, inner in item.items():
                    if not isinstance(key, (str, int, float, bool, type(None))):
                        raise NotData(f"{what} has a key that is {describe(key)}, not text or a number")
                    size += (len(key) if isinstance(key, str) else 8) + 2
                    stack.append(inner)
                    if size > limit:
                        return size
            else:
                stack.extend(item)
        elif type(item) is _Leave:
            path.discard(item.ident)
        elif isinstance(item, enum.Enum):
            stack.append(item.value)
            size += len(type(item).__name__) + len(item.name)
        else:
            undefined = getattr(type(item), "_fail_with_undefined_error", None)
            if undefined is not None:  # Jinja2's Undefined: raises its own error, naming what is undefined
                undefined(item)
            raise NotData(f"{what} is {describe(item)}" if item is value else f"{what} holds {describe(item)}")
        if size > limit:
            return size
    return size
