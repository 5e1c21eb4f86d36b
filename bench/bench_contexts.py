"""Reading state through a ReadonlyContext against reading it from a plain dict.

Run: python bench/bench_contexts.py

A large state (2,000 orders) and a template with 20 nested placeholders (``<orders.N.id>``), rendered
from the session's state dict and through ``ReadonlyContext(session)``; the same for a Jinja2
provider. Both are timed here, in one process, and reported as a ratio (context / dict), so numbers
from different machines are never compared. Read-only views wrap one level when it is read, never
the whole value, so the ratio stays small (it was in the thousands with deep copies).
"""

from __future__ import annotations

import asyncio
import timeit
from collections.abc import Callable

from templating import InMemorySessionService, ReadonlyContext, Template, jinja

ORDERS = 2_000
PLACEHOLDERS = 20


def best(fn: Callable[[], object], *, number: int, repeat: int = 5) -> float:
    """Best per-call time in seconds over ``repeat`` runs of ``number`` calls."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main() -> None:
    state = {
        "orders": [{"id": f"A-{n}", "total": n, "lines": [{"sku": f"s{n}", "qty": 1}]} for n in range(ORDERS)],
        "user:name": "Ada",
        "profile": {"tier": "gold", "history": list(range(1_000))},
    }
    service = InMemorySessionService()
    session = asyncio.run(service.create_session(app_name="bench", user_id="u", state=state))
    ctx = ReadonlyContext(session)
    step = ORDERS // PLACEHOLDERS
    template = Template(" ".join(f"<orders.{n * step}.id>" for n in range(PLACEHOLDERS)))
    provider = jinja(" ".join(f"{{{{ orders[{n * step}].id }}}}" for n in range(PLACEHOLDERS)))
    assert template.render(ctx) == template.render(session.state)
    assert provider(ctx) == provider(session.state)

    print(f"state: {ORDERS} orders; {PLACEHOLDERS} placeholders <orders.N.id>")
    for name, render in (("angle template", template.render), ("jinja provider", provider)):
        direct = best(lambda render=render: render(session.state), number=200)
        through = best(lambda render=render: render(ctx), number=200)
        print(
            f"{name:15s} from dict {direct * 1e6:8.1f} us   through ReadonlyContext {through * 1e6:8.1f} us"
            f"   ratio {through / direct:5.2f}x"
        )


if __name__ == "__main__":
    main()
