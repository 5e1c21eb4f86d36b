"""Making a preview: the app read from its code (or imported, with `run`), its initial state, the walk over its
agents with google-adk's own request processors."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable, Collection, Coroutine, Mapping
from typing import Any, TypeVar

from .load import PreviewError, adk_installed
from .result import Preview

__all__ = ["build_preview", "import_adk"]

T = TypeVar("T")


def build_preview(
    target: str,
    *,
    state: Mapping[str, Any] | None = None,
    run: bool = False,
    agent: str | None = None,
    announce: Callable[[str], None] | None = None,
    read: Callable[[str], str] | None = None,
    unsaved: Collection[str] | None = None,
    partial: bool = True,
) -> Preview:
    """The preview of the app `target` names, for the session state `state` (default: the app's declared initial
    state, each key's value a marker; else empty).

    By default the app is read from its code by the agent model and none of it runs (`read` and `unsaved`: an
    editor's unsaved text, as `templating.pysource.scan` takes them). `run`: import the app (this runs its code,
    as `adk run` does) and run its callbacks as google-adk would; `announce` is told before its code runs.
    `agent`: only the agents of that name (a `PreviewError` when there is none). Without google-adk (the `adk`
    extra), a preview read from the code is `partial` (each agent's instructions rendered by this project, marked
    as not the exact request); `partial=False` raises a `PreviewError` instead."""
    from .assemble import Given, Marker
    from .load import load_app, quiet
    from .static import adk_tree, declared_state, read_app
    from .walk import Walk

    static = None
    notes: list[str] = []
    if not run or state is None:
        try:
            static = read_app(target, read=read, unsaved=unsaved)
        except PreviewError:
            if not run:
                raise
    given: dict[str, Given] = {}
    if state is not None:
        given = {key: Given(value) for key, value in state.items()}
    elif static is not None:
        declared, where = declared_state(static)
        given = {key: Given(Marker(value), "state", where) for key, value in declared.items()}
        if where is not None:
            notes.append(f"state: the declared initial state ({where}), each value shown as a marker")
    if not run and not adk_installed():
        if not partial:
            raise PreviewError(
                "the preview assembles each request with google-adk's own code: "
                "pip install 'agent-prompt-templating[adk]'"
            )
        from .partial import ADK_MISSING, partial_previews

        assert static is not None
        previews = partial_previews(static, given)
        return _only(Preview(target, "partial", tuple(previews), (ADK_MISSING, *notes)), agent)
    if run:
        loaded = load_app(target, announce=announce)
        walk = Walk(run_code=True, plugins=list(loaded.plugins))
        root = loaded.root
    else:
        assert static is not None
        try:
            with quiet():
                root, facts = adk_tree(static)
        except PreviewError:
            raise
        except Exception as exc:  # google-adk refuses the agents as the code reads: say so, in one line
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise PreviewError(f"{target}: google-adk refuses its agents as read from the code: {first}") from None
        walk = Walk(facts=facts)
    with quiet():
        previews = _run(lambda: walk.app(root, given))
    result = Preview(target, "run" if run else "static", tuple(previews), tuple([*notes, *walk.notes]))
    return _only(result, agent)


def _run(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to its end, also when this thread already runs an event loop (a notebook, a server): then
    on a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


def import_adk() -> None:
    """Import what a preview uses of google-adk, if it is installed (an editor does it ahead of the first one)."""
    import importlib
    import warnings

    if not adk_installed():
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        importlib.import_module("google.adk.agents")
        importlib.import_module("google.adk.flows.llm_flows.auto_flow")


def _only(result: Preview, agent: str | None) -> Preview:
    if agent is None:
        return result
    chosen = result.named(agent)
    if not chosen:
        names = ", ".join(dict.fromkeys(a.agent for a in result.agents)) or "none"
        raise PreviewError(f"no agent named {agent!r} in {result.target}; its agents: {names}")
    return Preview(result.target, result.mode, tuple(chosen), result.notes)
