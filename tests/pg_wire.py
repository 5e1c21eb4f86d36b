"""A TCP proxy in front of a PostgreSQL server that records what a client sends, round trip by round trip, so a
test can see how many round trips, statements and transactions a call of the database service costs.

A round trip is what the client sends before the server answers it: the proxy starts a new one each time the
client speaks after the server has. Each message is kept as its type (the protocol's letter) and, for a simple
query (`Q`), a statement being prepared (`P`) or a prepared statement bound to run (`B`), its SQL text.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from dataclasses import dataclass, field

_NEGOTIATION = (80877103, 80877104)  # SSLRequest, GSSENCRequest: another startup message follows


@dataclass
class WireLog:
    """The round trips of every connection through the proxy, in the order they began."""

    server: tuple[str, int]
    trips: list[list[tuple[str, str]]] = field(default_factory=list)
    _listener: asyncio.Server | None = None

    async def start(self) -> int:
        """Listen on a free port of 127.0.0.1; return it."""
        self._listener = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self._listener.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        if self._listener is not None:
            self._listener.close()
            with contextlib.suppress(Exception):
                await self._listener.wait_closed()

    async def _serve(self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter) -> None:
        server_in, server_out = await asyncio.open_connection(*self.server)
        answered = [True]  # the server has spoken since the client last did (so the client's next bytes begin a trip)

        async def from_server() -> None:
            while data := await server_in.read(65536):
                answered[0] = True
                client_out.write(data)
                await client_out.drain()
            client_out.close()

        async def from_client() -> None:
            buffer, startup, trip = b"", True, None
            prepared: dict[bytes, str] = {}  # the SQL of each named statement of this connection
            while data := await client_in.read(65536):
                if answered[0]:
                    answered[0] = False
                    trip = []
                    self.trips.append(trip)
                assert trip is not None
                buffer += data
                while True:
                    if startup:  # untyped: length, then a code
                        if len(buffer) < 8:
                            break
                        (length,) = struct.unpack("!i", buffer[:4])
                        if len(buffer) < length:
                            break
                        (code,) = struct.unpack("!i", buffer[4:8])
                        trip.append(("startup", ""))
                        startup = code in _NEGOTIATION
                    else:
                        if len(buffer) < 5:
                            break
                        (length,) = struct.unpack("!i", buffer[1:5])
                        length += 1
                        if len(buffer) < length:
                            break
                        kind, body = chr(buffer[0]), buffer[5:length]
                        text = ""
                        if kind == "Q":
                            text = body.rstrip(b"\x00").decode("utf-8", "replace")
                        elif kind == "P":
                            name, sql = body.split(b"\x00")[:2]
                            text = prepared[name] = sql.decode("utf-8", "replace")
                        elif kind == "B":
                            text = prepared.get(body.split(b"\x00")[1], "")
                        trip.append((kind, text))
                    buffer = buffer[length:]
                server_out.write(data)
                await server_out.drain()
            server_out.close()

        await asyncio.gather(from_server(), from_client(), return_exceptions=True)


def without_pings(trips: list[list[tuple[str, str]]]) -> list[list[tuple[str, str]]]:
    """The round trips left once the pool's checks of the connections it hands out are taken out (SQLAlchemy's
    pre-ping: the empty query `;`)."""
    return [trip for trip in trips if {text for kind, text in trip if kind in "QPB"} != {";"}]


def assert_one_statement(every: list[list[tuple[str, str]]], *, prepared: bool = True) -> None:
    """`every` round trip of one call: the pool's check of the connection, then one statement executed (no
    BEGIN, COMMIT or COPY; with `prepared`, none prepared again either)."""
    trips = without_pings(every)
    assert len(trips) == 1, trips
    assert len(every) == 2, every  # the pool's check of the connection is one round trip
    kinds = [kind for kind, _ in trips[0]]
    assert "Q" not in kinds, trips
    if prepared:
        assert "P" not in kinds, trips
    assert kinds.count("E") == 1, trips
