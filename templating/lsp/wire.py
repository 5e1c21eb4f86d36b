"""The server's side of the wire: LSP frames read from a byte stream, and the JSON-RPC and LSP rules
for what arrives in them.

pygls frames stdin with a loop that trusts the client: a `Content-Length` of 2**40 is read whole,
a garbage or short header leaves it waiting for a blank line that never comes, a message it cannot
read is logged with a traceback and never answered. Here a [`Framer`][templating.lsp.wire.Framer]
reads frames with bounded memory and recovers at the next header after anything malformed, and a
[`Protocol`][templating.lsp.wire.Protocol] (pygls' language server protocol, specialised) answers as
the specifications say:

- a body that is not JSON: `-32700` (parse error), with a `null` id;
- JSON that is no JSON-RPC message (an array, a number, no `method`): `-32600` (invalid request);
- params that do not fit the method: `-32602` (invalid params), for the request's id;
- a request before `initialize`: `-32002` (server not initialized); a notification then is dropped;
- a second `initialize`, or a request after `shutdown`: `-32600`;
- `exit`: exit code 0 after `shutdown`, 1 without;
- `$/cancelRequest` for a request already answered (an editor cancels what it no longer needs, often
  after the answer left): ignored quietly, as the specification allows; pygls logs a warning for each.

A body over [`MAX_BODY`][templating.lsp.wire.MAX_BODY] bytes is never read: it is dropped with a log
line (its id is unknown) and reading goes on at the next header."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.io_ import StdoutWriter
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage

__all__ = ["MAX_BODY", "Frame", "Framer", "Protocol", "run_stdio"]

log = logging.getLogger(__name__)

# The largest message read (bytes): far above an editor's didOpen of a large file, far below what hurts.
MAX_BODY = 64 * 1024 * 1024
# The longest header block kept while looking for its end: a real one is under 100 bytes.
MAX_HEADER = 16 * 1024
_CHUNK = 64 * 1024

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = -32002
# How many answered requests' ids are remembered, to tell a late cancel from one for an id never received.
ANSWERED_IDS = 4096

# A header that starts a message. Its CR LF cannot occur inside a JSON body (a string escapes it, and
# `Content-Length` is no JSON token), so finding it inside a body proves the body was cut short.
_HEADER_START = re.compile(rb"Content-Length:[ \t]*\d+[ \t]*\r\n", re.IGNORECASE)
_HEADER_LINE = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*")


@dataclass(frozen=True, slots=True)
class Frame:
    """What the framer read: a message's body, or (`body` None) why bytes were dropped."""

    body: bytes | None
    problem: str = ""


class Framer:
    """LSP frames (`Content-Length` headers, a blank line, a body) from `read`, a function that returns
    the bytes available (at most the number asked, empty at the end of the stream).

    Memory stays within `max_body` plus a few chunks whatever the stream holds. After a malformed
    header or body, reading resumes at the next `Content-Length` header."""

    def __init__(self, read: Callable[[int], bytes], *, max_body: int = MAX_BODY) -> None:
        self.read = read
        self.max_body = max_body
        self.buffer = bytearray()
        self.ended = False

    def _fill(self) -> bool:
        if self.ended:
            return False
        chunk = self.read(_CHUNK)
        if not chunk:
            self.ended = True
            return False
        self.buffer += chunk
        return True

    def _resync(self, start: int, fallback: int) -> int:
        """Drop the bytes before the next header found at or after `start` (else before `fallback`);
        the number dropped."""
        found = _HEADER_START.search(self.buffer, start)
        drop = found.start() if found is not None else fallback
        del self.buffer[:drop]
        return drop

    def next(self) -> Frame | None:
        """The next frame; None at the end of the stream."""
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > MAX_HEADER:  # no header this long: garbage, kept only from a header on
                    dropped = self._resync(1, len(self.buffer) - 64)
                    return Frame(None, f"{dropped} bytes that are no message header")
                if not self._fill():
                    if self.buffer.strip():
                        size = len(self.buffer)
                        self.buffer.clear()
                        return Frame(None, f"{size} bytes of an unfinished message at the end of the stream")
                    return None
                continue
            length, problem = _content_length(bytes(self.buffer[:end]))
            if problem:
                dropped = self._resync(1, end + 4)
                return Frame(None, f"{problem} ({dropped} bytes dropped)")
            assert length is not None
            del self.buffer[: end + 4]
            if length > self.max_body:
                # never read: the bytes that follow (its body, if sent) are skipped as garbage
                return Frame(None, f"a message of {length} bytes, over the limit of {self.max_body}: not read")
            return self._body(length)

    def _body(self, length: int) -> Frame:
        checked = 0
        while len(self.buffer) < length:
            cut = _HEADER_START.search(self.buffer, max(0, checked - 64))
            if cut is not None:  # the next message began: this one was shorter than its header said
                body = bytes(self.buffer[: cut.start()])
                del self.buffer[: cut.start()]
                return Frame(body)
            checked = len(self.buffer)
            if not self._fill():
                body = bytes(self.buffer)
                self.buffer.clear()
                return Frame(body)
        body = bytes(self.buffer[:length])
        del self.buffer[:length]
        return Frame(body)


def _content_length(head: bytes) -> tuple[int | None, str]:
    """The Content-Length of a header block, or why the block is no header."""
    length = None
    for line in head.split(b"\r\n"):
        match = _HEADER_LINE.fullmatch(line)
        if match is None:
            return None, f"a malformed header line {line[:80]!r}"
        if match.group(1).lower() == b"content-length":
            value = match.group(2)
            if not value.isdigit() or len(value) > 15:
                return None, f"a Content-Length that is no number of bytes: {value[:40]!r}"
            length = int(value)
    if length is None:
        return None, "a header without Content-Length"
    return length, ""


def _valid_id(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


class Protocol(LanguageServerProtocol):
    """pygls' language server protocol with the checks the JSON-RPC and LSP specifications ask for
    (see the module's description); messages arrive as bytes through `receive`."""

    # Requests of this server's own whose params stay plain JSON (pygls makes an unknown method's objects into
    # named tuples, renaming keys that are no identifiers: a state key such as "user:name" would be lost).
    PLAIN_PARAMS: frozenset[str] = frozenset({"templating/preview"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.initialize_received = False
        self.received_ids: dict[int | str, None] = {}  # the last ANSWERED_IDS requests' ids, oldest first

    def send_error(self, msg_id: int | str | None, code: int, message: str) -> None:
        """An error response; `msg_id` None when the request's id is unknown (sent as `null`)."""
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    def receive(self, body: bytes) -> None:
        """Handle one message's body."""
        try:
            data = json.loads(body)
        except (ValueError, RecursionError) as exc:
            log.warning("a message that is not JSON: %s", exc)
            self.send_error(None, PARSE_ERROR, f"Parse error: the message is not JSON ({exc})")
            return
        if not isinstance(data, dict):
            what = "a batch (an array), which LSP does not use" if isinstance(data, list) else "not an object"
            self.send_error(None, INVALID_REQUEST, f"Invalid request: the message is {what}")
            return
        msg_id = data.get("id")
        answer_to = msg_id if _valid_id(msg_id) else None
        method = data.get("method")
        if data.get("jsonrpc") != "2.0":
            self.send_error(answer_to, INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"')
            return
        if method is None:
            if "id" in data and ("result" in data or "error" in data):
                self._dispatch(data, None)  # a response to one of the server's requests
            else:
                self.send_error(answer_to, INVALID_REQUEST, "Invalid request: no method")
            return
        if not isinstance(method, str) or ("id" in data and not _valid_id(msg_id)):
            self.send_error(answer_to, INVALID_REQUEST, "Invalid request: a bad method or id")
            return
        request = "id" in data
        if request and msg_id is not None:  # a valid id (checked above)
            self._remember(msg_id)
        refusal = self._refusal(method, request)
        if refusal is not None:
            code, message = refusal
            if request:
                self.send_error(msg_id, code, message)
            else:
                log.info("notification %s dropped: %s", method, message)
            return
        self._dispatch(data, msg_id if request else None, method)

    def _remember(self, msg_id: int | str) -> None:
        self.received_ids.pop(msg_id, None)
        self.received_ids[msg_id] = None
        if len(self.received_ids) > ANSWERED_IDS:
            del self.received_ids[next(iter(self.received_ids))]

    def _handle_cancel_notification(self, msg_id: int | str) -> None:
        """A request still running is cancelled (pygls); one already answered is left quietly, as is
        usual (the client cancelled after the answer left); only an id never received is worth a line."""
        if msg_id in self._request_futures:
            super()._handle_cancel_notification(msg_id)
        elif msg_id in self.received_ids:
            log.debug("a cancel of request %r, already answered: ignored", msg_id)
        else:
            log.warning("a cancel of request %r, which was never received: ignored", msg_id)

    def _refusal(self, method: str, request: bool) -> tuple[int, str] | None:
        if method == types.EXIT:
            return None
        if not self.initialize_received and method != types.INITIALIZE:
            return SERVER_NOT_INITIALIZED, f"Server not initialized: {method} before initialize"
        if self.initialize_received and method == types.INITIALIZE:
            return INVALID_REQUEST, "Invalid request: initialize was already received"
        if self._shutdown:
            return INVALID_REQUEST, f"Invalid request: {method} after shutdown"
        return None

    def _dispatch(self, data: dict[str, Any], msg_id: int | str | None, method: str | None = None) -> None:
        try:
            message = self.structure_message(data)
        except Exception as exc:
            problem = _first_line(exc)
            if msg_id is not None:
                self.send_error(msg_id, INVALID_PARAMS, f"Invalid params for {method}: {problem}")
            else:
                log.warning("message %s dropped: its params do not fit (%s)", method or "(response)", problem)
            return
        if method == types.INITIALIZE:
            self.initialize_received = True
        self.handle_message(message)

    def structure_message(self, data: dict[str, Any]) -> Any:
        """The message as lsprotocol's type for its method; an invalid-params error saying what does
        not fit (pygls' own logs a traceback and loses the request's id)."""
        method = data.get("method")
        if not isinstance(method, str) or "jsonrpc" not in data:
            return super().structure_message(data)
        if method in self.PLAIN_PARAMS and "id" in data:
            return JsonRPCRequestMessage(id=data["id"], method=method, params=data.get("params"), jsonrpc="2.0")
        kind = self.get_message_type(method) or (JsonRPCRequestMessage if "id" in data else JsonRPCNotification)
        try:
            return self._converter.structure(data, kind)
        except Exception as exc:
            raise ValueError(_cattrs_summary(exc)) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def _cattrs_summary(exc: Exception) -> str:
    try:
        from cattrs import transform_error

        found = transform_error(exc)
    except Exception:
        return _first_line(exc)
    return "; ".join(found[:3]) if found else _first_line(exc)


def run_stdio(protocol: Protocol, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Serve `protocol` over the two streams until `exit` or the end of the input; the exit code (0
    after `shutdown`, else 1).

    A daemon thread reads and frames the input, so nothing the client sends (or fails to send) holds
    the event loop, and an exit never waits on a blocked read."""
    protocol.set_writer(StdoutWriter(stdout))
    fd = stdin.fileno()
    return asyncio.run(_serve(protocol, lambda n: os.read(fd, n)))


async def _serve(protocol: Protocol, read: Callable[[int], bytes]) -> int:
    loop = asyncio.get_running_loop()
    frames: asyncio.Queue[Frame | None] = asyncio.Queue()
    framer = Framer(read)

    def reader() -> None:
        try:
            while True:
                frame = framer.next()
                loop.call_soon_threadsafe(frames.put_nowait, frame)
                if frame is None:
                    return
        except OSError as exc:
            log.warning("reading the client's messages failed: %s", exc)
            loop.call_soon_threadsafe(frames.put_nowait, None)
        except RuntimeError:  # the loop closed: the server is exiting
            return

    threading.Thread(target=reader, name="lsp-reader", daemon=True).start()
    while True:
        frame = await frames.get()
        if frame is None:
            log.info("the client closed the input")
            return 0 if protocol._shutdown else 1
        if frame.body is None:
            log.warning("input dropped: %s", frame.problem)
            continue
        try:
            protocol.receive(frame.body)
        except SystemExit as exc:  # the exit notification
            return exc.code if isinstance(exc.code, int) else 1
        except BrokenPipeError:
            log.error("the connection to the client is lost")
            return 1
        await asyncio.sleep(0)  # let what the message started (an async handler) begin before the next one
