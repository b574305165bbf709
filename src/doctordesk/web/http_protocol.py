"""The HTTP/1.1 protocol `serve` gives uvicorn (its ``http`` option): uvicorn's httptools protocol, holding less per
connection while the connection rests.

One process holds tens of thousands of open event streams, each a connection whose request is read and whose
response goes on for hours; what uvicorn keeps per connection for requests that come and go was most of what such
a stream cost (docs/realtime.md#the-stream). This class keeps uvicorn's HTTP behaviour (keep-alive, pipelining,
flow control, disconnect detection, HEAD, the access log, proxy headers) and changes only what a resting
connection holds:

- it lets go of its httptools parser once a keep-alive request has been read to its end and nothing of a next
  one has arrived; the next bytes get a new parser, which starts where the old one stood (at the start of a
  message);
- requests that arrive while a response is under way (pipelining) wait in a list rather than a deque;
- flow control makes its event only while writing is paused (the transport's buffer is full);
- the request's event (body arrived, client left) keeps its waiters in a list made when one waits;
- connections to one listening address share one server address tuple.

What it relies on in uvicorn (``HttpToolsProtocol`` and ``RequestResponseCycle``: the attributes ``parser``,
``pipeline``, ``flow``, ``cycle``, ``transport``, the cycle's ``message_event`` and ``keep_alive``) is pinned by
``tests/e2e/server/test_http_protocol.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import httptools
from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

# The addresses the server listens on (a few per process).
_SERVER_ADDRESSES: dict[tuple[str, int | None], tuple[str, int | None]] = {}

# `serve`'s value for uvicorn's ``http`` option (an import string, so that `serve --workers N` hands it on too).
PROTOCOL = "doctordesk.web.http_protocol:HttpProtocol"


class HttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with less held per resting connection (the module's docstring says what)."""

    __slots__ = ("_message_read",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._message_read = False
        super().__init__(*args, **kwargs)
        self.pipeline = Pipeline()  # type: ignore[assignment]  # appendleft and pop, as uvicorn uses its deque

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.flow = LazyFlowControl(transport)
        # Every connection to one listening address has the same server address: one copy, not one per connection.
        if self.server is not None:
            self.server = _SERVER_ADDRESSES.setdefault(self.server, self.server)

    def data_received(self, data: bytes) -> None:
        if self.parser is None:  # let go of while the connection rested: the next message starts here
            self.parser = new_parser(self)
        super().data_received(data)
        if self._message_read and self._resting():
            self.parser = None  # type: ignore[assignment]

    def _resting(self) -> bool:
        """Whether the parser stands between two messages of a keep-alive connection that goes on (not closing,
        not switching protocols), so that a new parser would read what follows the same way."""
        cycle = self.cycle
        return (
            cycle is not None
            and cycle.keep_alive
            and not self.transport.is_closing()
            and self.parser is not None
            and not self.parser.should_upgrade()
        )

    def on_message_begin(self) -> None:
        self._message_read = False
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        before = self.cycle
        super().on_headers_complete()
        if self.cycle is not before:  # a new request (not an upgrade): nothing waits on its event yet
            self.cycle.message_event = LeanEvent()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._message_read = True


def new_parser(protocol: HttpToolsProtocol) -> httptools.HttpRequestParser:
    """A parser for ``protocol``'s connection, set up as uvicorn sets up its own."""
    parser = httptools.HttpRequestParser(protocol)
    # As uvicorn: answer the first of pipelined requests even when data follows a request that closes.
    parser.set_dangerous_leniencies(lenient_data_after_close=True)
    return parser


class Pipeline(list[Any]):
    """Requests read while an earlier one's response is under way, oldest last: uvicorn's ``appendleft`` and
    ``pop``. An empty list is 56 bytes where an empty deque is 0.7 KiB, and nearly every connection's stays
    empty."""

    __slots__ = ()

    def appendleft(self, item: Any) -> None:
        self.insert(0, item)


class LazyFlowControl(FlowControl):
    """uvicorn's flow control with its "writable" event made only while writing is paused (an event is 0.8 KiB;
    an idle connection's buffer is never full)."""

    def __init__(self, transport: asyncio.Transport) -> None:  # not the base's: it makes the event
        self._transport = transport
        self.read_paused = False
        self.write_paused = False
        self._writable: asyncio.Event | None = None

    async def drain(self) -> None:
        writable = self._writable
        if writable is not None:
            await writable.wait()

    def pause_writing(self) -> None:
        if not self.write_paused:
            self.write_paused = True
            self._writable = asyncio.Event()

    def resume_writing(self) -> None:
        if self.write_paused:
            self.write_paused = False
            writable, self._writable = self._writable, None
            if writable is not None:
                writable.set()


class LeanEvent(asyncio.Event):
    """``asyncio.Event`` with its waiters in a list made when one waits (the event's deque is 0.7 KiB, and an
    open stream's request event always has its one waiter: the watch for the client leaving)."""

    __slots__ = ()

    def __init__(self) -> None:  # not the base's: it makes the deque
        self._value = False
        self._waiters: list[asyncio.Future[Literal[True]]] | None = None  # type: ignore[assignment]

    def is_set(self) -> bool:
        return self._value

    def set(self) -> None:
        if not self._value:
            self._value = True
            waiters, self._waiters = self._waiters, None
            for waiter in waiters or ():
                if not waiter.done():
                    waiter.set_result(True)

    def clear(self) -> None:
        self._value = False

    async def wait(self) -> Literal[True]:
        if self._value:
            return True
        waiter: asyncio.Future[Literal[True]] = asyncio.get_running_loop().create_future()
        if self._waiters is None:
            self._waiters = [waiter]
        else:
            self._waiters.append(waiter)
        try:
            return await waiter
        finally:
            if self._waiters is not None and waiter in self._waiters:
                self._waiters.remove(waiter)
                if not self._waiters:
                    self._waiters = None
