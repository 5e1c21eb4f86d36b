"""`templating lsp` on a generated 500-file ADK-style project, through a real LSP client over stdio
(pygls's): after an edit of one file, the time until its diagnostics are published (median and p95
over 30 edits; targets 100 ms / 250 ms), against the time of the engine's own one-file re-lint
(`Project.update`) measured in this process, and the server's resident memory (VmRSS)."""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import bench_lint_project
from editor_client import watching
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from templating.linter.engine import Project

PACKAGES = 125  # four files each: __init__.py, agent.py, prompt.py, tools.py
EDITS = 30


def build(root: Path) -> None:
    bench_lint_project.build(root, PACKAGES, config='[tool.templating]\ninclude = ["**/*.py"]\n')


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


async def measure(root: Path) -> tuple[list[float], int, float]:
    client = LanguageClient("bench", "1")
    published: dict[str, asyncio.Event] = {}

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        event = published.get(params.uri)
        if event is not None:
            event.set()

    await client.start_io(sys.executable, "-m", "templating", "lsp")
    started = time.perf_counter()
    await client.initialize_async(
        types.InitializeParams(capabilities=watching(client), root_uri=root.as_uri(), process_id=os.getpid())
    )
    client.initialized(types.InitializedParams())
    target = root / "agent_7" / "prompt.py"
    uri = target.as_uri()
    text = target.read_text(encoding="utf-8")
    published[uri] = asyncio.Event()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text)))
    await published[uri].wait()
    ready = time.perf_counter() - started
    times = []
    for n in range(EDITS):
        published[uri] = asyncio.Event()
        new = text.replace("{plan_7}", f"{{plan_7{'x' * (n % 2)}}}")  # alternately wrong and right
        start = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(n + 2, uri), [types.TextDocumentContentChangeWholeDocument(new)]
            )
        )
        await published[uri].wait()
        times.append(time.perf_counter() - start)
    assert client._server is not None
    memory = rss_kib(client._server.pid)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return times, memory, ready


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder).resolve()
        build(root)
        os.chdir(root)
        files = len(list(root.rglob("*.py")))
        project = Project(root)
        project.lint(["."])
        target = "agent_7/prompt.py"
        text = (root / target).read_text(encoding="utf-8")
        engine = []
        for n in range(EDITS):
            start = time.perf_counter()
            project.update(target, text.replace("{plan_7}", f"{{plan_7{'x' * (n % 2)}}}"))
            engine.append(time.perf_counter() - start)
        times, memory, ready = asyncio.run(measure(root))
    ms = sorted(t * 1000 for t in times)
    median = statistics.median(ms)
    p95 = ms[round(0.95 * (len(ms) - 1))]
    reference = statistics.median(engine) * 1000
    print(f"{files} files; server ready (initialize to first diagnostics): {ready * 1000:.0f} ms")
    print(f"edit -> diagnostics published, over {EDITS} edits: median {median:.1f} ms (target 100), p95 {p95:.1f} ms")
    print(f"  (target 250); the engine's one-file re-lint in this process: median {reference:.1f} ms,")
    print(f"  ratio {median / reference:.1f}x")
    print(f"server resident memory (VmRSS): {memory / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
