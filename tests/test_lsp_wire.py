"""`templating lsp` fed malformed bytes on stdin (templating/lsp/wire.py): each input gets the answer the
JSON-RPC and LSP specifications ask for, and a valid request afterwards still gets its answer.

The server runs as a process; the test writes raw bytes to its stdin and reads the frames of its stdout.
Timeouts are liveness bounds for a busy machine, not speed checks."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
WAIT = 60  # seconds: how long a frame may take on a loaded machine before the server is deemed deaf

try:
    from templating.lsp.wire import MAX_BODY, Frame, Framer
except ImportError:
    if os.environ.get("TEMPLATING_REQUIRE_LSP") == "1":
        raise
    pytest.skip("the lsp extra (pygls, lsprotocol) is not installed", allow_module_level=True)


def frame(message: dict[str, Any] | bytes) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Wire:
    """A server process spoken to in raw bytes."""

    def __init__(self, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "templating", "lsp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=ENV,
        )
        self.frames: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stderr = b""
        threading.Thread(target=self._read, daemon=True).start()
        self.errors = threading.Thread(target=self._read_stderr, daemon=True)
        self.errors.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.frames.put(None)
                    return
                if line == b"\r\n":
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert length is not None
            self.frames.put(json.loads(out.read(length)))

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr += line

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def message(self, **fields: Any) -> None:
        self.send(frame({"jsonrpc": "2.0", **fields}))

    def answer(self, msg_id: int | str | None) -> dict[str, Any]:
        """The next response for `msg_id` (None: an error response with a null id); notifications skipped."""
        while True:
            got = self.frames.get(timeout=WAIT)
            assert got is not None, "the server closed its output"
            if "method" in got:
                continue
            if got.get("id") == msg_id:
                return got
            raise AssertionError(f"expected the answer to {msg_id!r}, got {got}")

    def initialize(self, root: Path) -> None:
        self.message(
            id=1, method="initialize", params={"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
        )
        assert "result" in self.answer(1)
        self.message(method="initialized", params={})

    def hover(self, root: Path, msg_id: int = 99) -> None:
        uri = (root / "nothing.prompt").as_uri()
        self.message(
            id=msg_id,
            method="textDocument/hover",
            params={"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}},
        )

    def still_answers(self, root: Path, msg_id: int = 99, *, sent: bool = False) -> None:
        """A valid request after the malformed input gets its (null) answer."""
        if not sent:
            self.hover(root, msg_id)
        assert self.answer(msg_id) == {"jsonrpc": "2.0", "id": msg_id, "result": None}

    def finish(self, *, shutdown: bool = True) -> int:
        if shutdown:
            self.message(id=1000, method="shutdown")
            assert self.answer(1000)["result"] is None
        self.message(method="exit")
        code = self.proc.wait(timeout=WAIT)
        self.errors.join(timeout=WAIT)  # all of stderr read
        return code

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "pyproject.toml").write_text('[tool.templating]\ninclude = ["**/*.prompt"]\n', encoding="utf-8")
    (folder / "hello.prompt").write_text("Hello <name>.\n", encoding="utf-8")
    return folder


@pytest.fixture
def wire(root: Path):  # type: ignore[no-untyped-def]
    server = Wire(root)
    yield server
    server.close()


HUGE = b"Content-Length: 1099511627776\r\n\r\n"


@pytest.mark.parametrize(
    ("raw", "problem", "code"),
    [
        (HUGE, "over the limit", None),
        (HUGE + b'{"jsonrpc": "2.0", "id": 5, "method": "shutdown"}', "over the limit", None),
        (b"GARBAGE\r\n\r\n", "malformed header", None),
        (b"\x00\xff\xfe garbage without an end", "", None),
        (b"Content-Length: 12\r\n", "", None),  # a header never finished by its blank line
        (b"Content-Length:\r\n\r\n", "no number of bytes", None),
        (b"Content-Length: -5\r\n\r\n", "no number of bytes", None),
        (b"Content-Type: application/json\r\n\r\n{}", "without Content-Length", None),
        (b"Content-Length: 500\r\n\r\n" + b'{"jsonrpc": "2.0", "id": 7, "method": "shut', "", -32700),  # cut short
    ],
    ids=[
        "content-length-2**40",
        "content-length-2**40-with-body",
        "garbage-header",
        "binary-garbage",
        "unfinished-header",
        "empty-content-length",
        "negative-content-length",
        "no-content-length",
        "short-body",
    ],
)
def test_bad_framing_is_dropped_and_the_next_message_answered(
    wire: Wire, root: Path, raw: bytes, problem: str, code: int | None
) -> None:
    wire.initialize(root)
    wire.send(raw)
    wire.hover(root)
    if code is not None:  # the cut message is read up to the next header: not JSON
        assert wire.answer(None)["error"]["code"] == code
    wire.still_answers(root, sent=True)
    assert wire.finish() == 0
    if problem:
        assert problem in wire.stderr.decode()
    assert b"Traceback" not in wire.stderr


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (frame(b'{"jsonrpc": "2.0", "id": 3, "method": '), -32700),
        (frame(b"\xff\xfe not utf-8"), -32700),
        (frame(b"[1, 2]"), -32600),
        (frame(b"42"), -32600),
        (frame(b'{"jsonrpc": "1.0", "method": "x"}'), -32600),
        (frame(b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "shutdown"}'), -32600),
    ],
    ids=["truncated-json", "not-utf-8", "batch", "number", "wrong-version", "object-id"],
)
def test_unreadable_messages_get_a_null_id_error(wire: Wire, root: Path, raw: bytes, code: int) -> None:
    wire.initialize(root)
    wire.send(raw)
    answer = wire.answer(None)
    assert answer["error"]["code"] == code
    assert answer["id"] is None
    wire.still_answers(root)
    assert wire.finish() == 0
    assert b"Traceback" not in wire.stderr


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("textDocument/hover", {"textDocument": {"uri": 5}}),
        ("textDocument/hover", {"position": {"line": -1, "character": 0}}),
        ("textDocument/completion", "not an object"),
        ("textDocument/codeAction", {}),
    ],
    ids=["uri-number", "negative-line", "params-string", "params-empty"],
)
def test_invalid_params_get_an_invalid_params_error(wire: Wire, root: Path, method: str, params: Any) -> None:
    wire.initialize(root)
    wire.message(id=8, method=method, params=params)
    answer = wire.answer(8)
    assert answer["error"]["code"] == -32602
    assert method in answer["error"]["message"]
    wire.still_answers(root)
    assert wire.finish() == 0
    assert b"Traceback" not in wire.stderr


def test_invalid_params_of_a_notification_are_dropped(wire: Wire, root: Path) -> None:
    wire.initialize(root)
    wire.message(method="textDocument/didOpen", params={"textDocument": {"uri": 1}})
    wire.still_answers(root)
    assert wire.finish() == 0
    assert b"Traceback" not in wire.stderr


def test_requests_before_initialize_are_refused(wire: Wire, root: Path) -> None:
    uri = (root / "hello.prompt").as_uri()
    wire.message(
        id=2,
        method="textDocument/hover",
        params={"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}},
    )
    assert wire.answer(2)["error"]["code"] == -32002
    wire.message(id=3, method="shutdown")
    assert wire.answer(3)["error"]["code"] == -32002
    wire.message(
        method="textDocument/didOpen",
        params={"textDocument": {"uri": uri, "languageId": "x", "version": 1, "text": "<a>"}},
    )
    wire.initialize(root)  # the notification before it was dropped, and initialize still works
    wire.message(id=4, method="initialize", params={"processId": None, "rootUri": None, "capabilities": {}})
    assert wire.answer(4)["error"]["code"] == -32600  # only once
    wire.still_answers(root)
    assert wire.finish() == 0


def test_requests_after_shutdown_are_invalid(wire: Wire, root: Path) -> None:
    wire.initialize(root)
    wire.message(id=5, method="shutdown")
    assert wire.answer(5) == {"jsonrpc": "2.0", "id": 5, "result": None}
    uri = (root / "hello.prompt").as_uri()
    wire.message(
        id=6,
        method="textDocument/hover",
        params={"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}},
    )
    answer = wire.answer(6)
    assert answer["error"]["code"] == -32600
    assert "after shutdown" in answer["error"]["message"]
    assert wire.finish(shutdown=False) == 0


@pytest.mark.parametrize(("shutdown", "code"), [(True, 0), (False, 1)], ids=["after-shutdown", "without-shutdown"])
def test_exit_code_tells_whether_shutdown_came_first(wire: Wire, root: Path, shutdown: bool, code: int) -> None:
    wire.initialize(root)
    assert wire.finish(shutdown=shutdown) == code


def test_exit_before_initialize_is_code_1(wire: Wire) -> None:
    assert wire.finish(shutdown=False) == 1


def test_end_of_input_ends_the_server(wire: Wire, root: Path) -> None:
    wire.initialize(root)
    assert wire.proc.stdin is not None
    wire.proc.stdin.close()
    assert wire.proc.wait(timeout=WAIT) == 1


# The framer alone, on bytes fed in small pieces (as a pipe delivers them).


def _framer(data: bytes, piece: int = 7, max_body: int = MAX_BODY) -> Framer:
    chunks = [data[i : i + piece] for i in range(0, len(data), piece)]
    return Framer(lambda n: chunks.pop(0) if chunks else b"", max_body=max_body)


def _all(framer: Framer) -> list[Frame]:
    out = []
    while (got := framer.next()) is not None:
        out.append(got)
    return out


GOOD = frame({"jsonrpc": "2.0", "id": 1, "method": "shutdown"})


@pytest.mark.parametrize(
    ("data", "bodies"),
    [
        (GOOD + GOOD, 2),
        (b"Content-Length: 40\r\n\r\n{}" + GOOD, 2),  # the short one, then the next
        (b"xx" * 20_000 + GOOD, 1),
        (b"content-length: 2\r\ncontent-type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}" + GOOD, 2),
    ],
    ids=["two", "short-body-then-next", "long-garbage-then-next", "lower-case-and-content-type"],
)
def test_framer_recovers_at_the_next_header(data: bytes, bodies: int) -> None:
    found = [f.body for f in _all(_framer(data)) if f.body is not None]
    assert len(found) == bodies
    assert found[-1] == GOOD.partition(b"\r\n\r\n")[2]


def test_framer_never_reads_a_body_over_the_limit() -> None:
    asked: list[int] = []
    pieces = [b"Content-Length: 1099511627776\r\n\r\n", b"x" * 100, GOOD]

    def read(n: int) -> bytes:
        asked.append(n)
        return pieces.pop(0) if pieces else b""

    frames = _all(Framer(read, max_body=1000))
    assert frames[0].body is None
    assert "over the limit" in frames[0].problem
    assert frames[-1].body == GOOD.partition(b"\r\n\r\n")[2]
    assert max(asked) <= 64 * 1024


def test_shutdown_is_answered_while_a_large_folder_is_read(tmp_path: Path) -> None:
    """The folder is read off the message loop: `shutdown` is answered before its first findings."""
    big = tmp_path / "big"
    big.mkdir()
    (big / "pyproject.toml").write_text("[tool.templating]\n", encoding="utf-8")
    for n in range(3000):
        (big / f"agent_{n}.py").write_text(
            f'from google.adk.agents import LlmAgent\n\nagent_{n} = LlmAgent(name="a{n}", model="m", '
            f'instruction="Use {{key_{n}}} and {{key_{n + 1}?}}.", output_key="key_{n + 1}")\n',
            encoding="utf-8",
        )
    wire = Wire(big)
    try:
        wire.initialize(big)
        uri = (big / "agent_7.py").as_uri()
        text = (big / "agent_7.py").read_text(encoding="utf-8")
        wire.message(
            method="textDocument/didOpen",
            params={"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        wire.message(id=1000, method="shutdown")
        seen = []
        while True:
            got = wire.frames.get(timeout=WAIT)
            assert got is not None
            seen.append(got.get("method") or got.get("id"))
            if got.get("id") == 1000:
                break
        assert "textDocument/publishDiagnostics" not in seen  # the folder was still being read
        wire.message(method="exit")
        assert wire.proc.wait(timeout=WAIT) == 0
    finally:
        wire.close()
