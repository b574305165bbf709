"""`serve`'s HTTP protocol (web/http_protocol.py) keeps uvicorn's HTTP behaviour while holding less per resting
connection: a slow reader still pauses the writes, pipelined requests are answered in order, a client leaving an
idle stream is noticed, HEAD and keep-alive go on after a rest. A real uvicorn (on uvloop, as `serve` runs:
conftest.py) on a loopback port, in this process so that the tests can look at the connection's protocol; a raw
socket client.

These tests also pin what the class relies on in uvicorn (its ``parser``, ``pipeline``, ``flow`` and ``cycle``
attributes, the cycle's ``message_event``): a uvicorn that renames or rebuilds them fails here."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import uvicorn
from uvicorn.importer import import_from_string

from doctordesk.cli import server_options
from doctordesk.web.http_protocol import HttpProtocol, LazyFlowControl, LeanEvent, Pipeline
from tests.support.live import free_port

BIG = 32 * 1024 * 1024  # far more than the kernel's buffers and the transport's hold for a reader that stops
CHUNK = 64 * 1024


class App:
    """``/hold``: answers once released; ``/big``: BIG bytes, counting what it has handed to ``send``; ``/stream``:
    an open stream that waits for the client to leave; anything else: its path."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.sent = 0
        self.left = asyncio.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        path = scope["path"]
        if path == "/stream":
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"open\n", "more_body": True})
            while (await receive())["type"] != "http.disconnect":
                pass  # the request's (empty) body
            self.left.set()
            return
        if path == "/big":
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"%d" % BIG)]})
            for start in range(0, BIG, CHUNK):
                await send({"type": "http.response.body", "body": pattern(start, CHUNK), "more_body": True})
                self.sent += CHUNK
            await send({"type": "http.response.body", "body": b""})
            return
        if path == "/hold":
            await self.release.wait()
        body = path.encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"%d" % len(body))]})
        await send({"type": "http.response.body", "body": body})


def pattern(start: int, size: int) -> bytes:
    return bytes((start + i) % 251 for i in range(size))


class Served:
    def __init__(self, app: App, server: uvicorn.Server, port: int) -> None:
        self.app, self.server, self.port = app, server, port
        self.clients: list[asyncio.StreamWriter] = []

    async def connect(self, *, receive_buffer: int | None = None) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A raw connection to the server (cut by the fixture at the end, whatever the test left open)."""
        sock = socket.socket()
        if receive_buffer is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", self.port))
        reader, writer = await asyncio.open_connection(sock=sock)
        self.clients.append(writer)
        return reader, writer

    def protocol(self) -> HttpProtocol:
        (connection,) = self.server.server_state.connections
        assert isinstance(connection, HttpProtocol)
        return connection


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    app = App()
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, http=HttpProtocol, lifespan="off", log_level="warning")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    await until(lambda: server.started)
    served = Served(app, server, port)
    try:
        yield served
    finally:
        for writer in served.clients:
            writer.transport.abort()
        server.should_exit = True
        await asyncio.wait_for(task, 10)


async def until(condition: Callable[[], object], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the condition did not hold in time"
        await asyncio.sleep(0.01)


async def close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()


async def response(reader: asyncio.StreamReader, *, head: bool = False) -> tuple[bytes, bytes]:
    """One response with a Content-Length: its head and its body (none for HEAD)."""
    head_bytes = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    length = next(
        int(line.split(b":")[1]) for line in head_bytes.lower().split(b"\r\n") if line.startswith(b"content-length")
    )
    body = b"" if head else await asyncio.wait_for(reader.readexactly(length), 30)
    return head_bytes, body


async def test_a_client_that_stops_reading_pauses_the_writes_until_it_reads_again(served: Served) -> None:
    reader, writer = await served.connect(receive_buffer=4096)
    writer.write(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
    protocol_flow = None

    def paused() -> bool:
        nonlocal protocol_flow
        if not served.server.server_state.connections:
            return False
        protocol_flow = served.protocol().flow
        return protocol_flow.write_paused

    await until(paused)
    assert isinstance(protocol_flow, LazyFlowControl)
    # The app waits in ``send`` while the client does not read: most of the body is not even handed over yet.
    await asyncio.sleep(0)
    assert served.app.sent < BIG // 2
    head, body = await response(reader)
    assert head.startswith(b"HTTP/1.1 200")
    assert body == pattern(0, BIG)
    assert served.app.sent == BIG
    assert not protocol_flow.write_paused
    assert protocol_flow._writable is None
    await close(writer)


async def test_pipelined_requests_are_answered_in_order_and_the_connection_goes_on_after_a_rest(served: Served) -> None:
    reader, writer = await served.connect()
    writer.write(
        b"GET /hold HTTP/1.1\r\nHost: x\r\n\r\nGET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    await until(lambda: served.server.server_state.connections and len(served.protocol().pipeline) == 2)
    protocol = served.protocol()
    assert isinstance(protocol.pipeline, Pipeline)
    served.app.release.set()
    bodies = [(await response(reader))[1] for _ in range(3)]
    assert bodies == [b"/hold", b"/a", b"/b"]
    # At rest between requests the connection holds no parser; the next request gets a new one.
    await until(lambda: protocol.parser is None)
    writer.write(b"HEAD /c HTTP/1.1\r\nHost: x\r\n\r\n")
    head, _ = await response(reader, head=True)
    assert head.startswith(b"HTTP/1.1 200") and b"content-length: 2" in head
    writer.write(b"GET /d HTTP/1.1\r\nHost: x\r\n\r\n")
    assert (await response(reader))[1] == b"/d"
    assert served.server.server_state.connections == {protocol}  # the same connection throughout
    await close(writer)


async def test_a_request_that_arrives_in_parts_after_a_rest_is_read_whole(served: Served) -> None:
    reader, writer = await served.connect()
    writer.write(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
    assert (await response(reader))[1] == b"/a"
    protocol = served.protocol()
    await until(lambda: protocol.parser is None)
    writer.write(b"GET /sp")
    # The server has read the first part (a new request has begun): the parser now holds a request half read.
    await until(lambda: protocol.scope is not protocol.cycle.scope)
    assert protocol.parser is not None
    writer.write(b"lit HTTP/1.1\r\nHost: x\r\n\r\n")
    assert (await response(reader))[1] == b"/split"
    await close(writer)


async def test_a_client_leaving_an_idle_stream_is_noticed(served: Served) -> None:
    reader, writer = await served.connect()
    writer.write(b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
    await asyncio.wait_for(reader.readuntil(b"open\n"), 10)
    protocol = served.protocol()
    # What an idle stream holds: no parser, no flow-control event, its request event's one waiter in a list.
    await until(lambda: protocol.parser is None)
    assert isinstance(protocol.flow, LazyFlowControl) and protocol.flow._writable is None
    event = protocol.cycle.message_event
    assert isinstance(event, LeanEvent)
    assert isinstance(event._waiters, list) and len(event._waiters) == 1
    await close(writer)
    await asyncio.wait_for(served.app.left.wait(), 10)
    await until(lambda: not served.server.server_state.connections)


def test_serve_runs_uvicorn_with_this_protocol(settings: Any) -> None:
    options = server_options(settings)
    assert import_from_string(options["http"]) is HttpProtocol
    config = uvicorn.Config(lambda: None, **{k: v for k, v in options.items() if k != "factory"})
    config.load()
    assert config.http_protocol_class is HttpProtocol
