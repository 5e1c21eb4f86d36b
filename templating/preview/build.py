"""Making a preview: the app read from its code (or imported, with `run`), its initial state, the walk over its
agents with google-adk's own request processors."""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Coroutine, Hashable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from .load import PreviewError, adk_installed
from .result import AgentPreview, Preview

if TYPE_CHECKING:
    from .static import StaticApp

__all__ = ["build_preview", "clear_cache", "import_adk", "static_preview"]

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
    from .static import read_app

    static = None
    if not run or state is None:
        try:
            static = read_app(target, read=read, unsaved=unsaved)
        except PreviewError:
            if not run:
                raise
    if not run:
        assert static is not None
        return static_preview(target, static, state=state, agent=agent, partial=partial)
    from .load import load_app, quiet
    from .walk import Walk

    notes: list[str] = []
    given = _given(static, state, notes)
    with _ADK:
        loaded = load_app(target, announce=announce)
        walk = Walk(run_code=True, plugins=list(loaded.plugins))
        with quiet():
            previews = _run(lambda: walk.app(loaded.root, given))
    return _only(Preview(target, "run", tuple(previews), tuple([*notes, *walk.notes])), agent)


def static_preview(
    target: str,
    static: StaticApp,
    *,
    state: Mapping[str, Any] | None = None,
    agent: str | None = None,
    partial: bool = True,
    keep: bool = True,
) -> Preview:
    """The preview of the app `static` (read from the code: by `read_app`, or taken from a language server's
    agent model), as `build_preview` makes it; `keep`: keep it (by everything it is made of) for the next one."""
    from . import trees
    from .load import quiet
    from .static import adk_tree
    from .walk import Walk

    notes: list[str] = []
    given = _given(static, state, notes)
    if not adk_installed():
        if not partial:
            raise PreviewError(
                "the preview assembles each request with google-adk's own code: "
                "pip install 'agent-prompt-templating[adk]'"
            )
        from .partial import ADK_MISSING, partial_previews

        previews = partial_previews(static, given)
        return _only(Preview(target, "partial", tuple(previews), (ADK_MISSING, *notes)), agent)
    key = _cache_key(target, static, given) if keep else None
    with _LOCK:
        cached = _CACHE.get(key) if key is not None else None
        if cached is not None:
            _CACHE.move_to_end(key)
    if cached is not None:
        return _only(Preview(target, "static", cached[0], cached[1]), agent)
    # the objects the last preview of this app made (taken by this one only): those whose facts did not change
    # are taken again, with their tokens (see `trees`)
    app = (target, str(static.root), static.config)
    kept = trees.checkout(app)
    with _ADK:
        try:
            with quiet():
                root, facts = adk_tree(static, kept=kept)
        except PreviewError:
            raise
        except Exception as exc:  # google-adk refuses the agents as the code reads: say so, in one line
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise PreviewError(f"{target}: google-adk refuses its agents as read from the code: {first}") from None
        walk = Walk(facts=facts, reuse=True, _tokens=kept.tokens)
        with quiet():
            previews = _run(lambda: walk.app(root, given))
    kept.tokens = walk.kept_tokens()
    trees.keep(app, kept)
    result = Preview(target, "static", tuple(previews), tuple([*notes, *walk.notes]))
    if key is not None:
        with _LOCK:
            _CACHE[key] = (result.agents, result.notes)
            while len(_CACHE) > CACHE_SIZE:
                _CACHE.popitem(last=False)
    return _only(result, agent)


def _given(static: StaticApp | None, state: Mapping[str, Any] | None, notes: list[str]) -> dict[str, Any]:
    """The state each agent starts from: `state`, else the app's declared initial state (each value a marker,
    said in `notes`)."""
    from .assemble import Given, Marker
    from .static import declared_state

    if state is not None:
        return {key: Given(value) for key, value in state.items()}
    if static is None:
        return {}
    declared, where = declared_state(static)
    if where is not None:
        notes.append(f"state: the declared initial state ({where}), each value shown as a marker")
    return {key: Given(Marker(value), "state", where) for key, value in declared.items()}


# The static previews made last, by everything they are made of: an editor asks again for an app none of whose
# files changed (an edit of another app, a panel shown again) and gets the same answer without google-adk's work.
CACHE_SIZE = 16
_LOCK = threading.Lock()  # the language server makes previews on worker threads
_CACHE: OrderedDict[Hashable, tuple[tuple[AgentPreview, ...], tuple[str, ...]]] = OrderedDict()


def _plain(value: Any) -> bool:
    """Whether `value` is JSON data (its repr then says all of it)."""
    if value is None or isinstance(value, bool | int | float | str):
        return True
    if isinstance(value, list | tuple):
        return all(_plain(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def _cache_key(target: str, static: Any, given: Mapping[str, Any]) -> Hashable | None:
    """What a static preview is made of, as a key: the target, every file read (its text), the project's
    configuration, the state (each value's type and repr; None when a value is not JSON data) and google-adk's
    version."""
    state = []
    for name, item in given.items():
        if not _plain(item.value):
            return None
        state.append((name, type(item.value).__name__, repr(item.value), item.source, item.by))
    # google-adk's own version attribute (the package is loaded for the preview anyway): importlib.metadata's
    # lookup would cost a process more than the rest of the key
    adk = getattr(importlib.import_module("google.adk.version"), "__version__", None)
    return (target, tuple(sorted(static.sources.items())), static.config, tuple(state), adk)


def clear_cache() -> None:
    """Forget the previews made so far."""
    from . import trees
    from .walk import REQUESTS

    with _LOCK:
        _CACHE.clear()
    REQUESTS.clear()
    trees.forget()


def _run(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to its end, also when this thread already runs an event loop (a notebook, a server): then
    on a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


def import_adk() -> bool:
    """Import what a preview uses of google-adk, if it is installed (an editor does it ahead of the first one);
    whether it is imported (done: not merely begun by another thread)."""
    import warnings

    if not adk_installed():
        return False
    with _ADK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        importlib.import_module("google.adk.agents")
        importlib.import_module("google.adk.flows.llm_flows.auto_flow")
    return True


# google-adk is used by one thread at a time (an editor's warm-up import, the previews it asks for): its modules
# import each other when first used, and one that another thread is still importing is half made ("cannot import
# name ... from partially initialized module")
_ADK = threading.RLock()


def _only(result: Preview, agent: str | None) -> Preview:
    if agent is None:
        return result
    chosen = result.named(agent)
    if not chosen:
        names = ", ".join(dict.fromkeys(a.agent for a in result.agents)) or "none"
        raise PreviewError(f"no agent named {agent!r} in {result.target}; its agents: {names}")
    return Preview(result.target, result.mode, tuple(chosen), result.notes)
