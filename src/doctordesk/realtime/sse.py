"""The ``text/event-stream`` response: a small ASGI response that writes one stream's messages and heartbeats.

Frames: ``retry: <ms>`` once, then ``id: <id>`` + ``data: <real-time message>`` per event. A heartbeat is an event
with an id and empty data: browsers do not dispatch it but remember its id (so ``Last-Event-ID`` stays current),
other clients read it as the empty message (nothing to do).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Coroutine
from typing import Any

from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from doctordesk.realtime.hub import Close, Hub, Stream, frame
from doctordesk.realtime.message import RealtimeMessage

HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-store"),
    (b"x-accel-buffering", b"no"),
    (b"connection", b"keep-alive"),
]


class EventStreamResponse(Response):
    """One open stream's response. Its headers are one list shared by every stream (``raw_headers``: the server
    copies them as it writes them), and it waits for the client to go away without a task of its own
    (``Departure``): tens of thousands are open at once, so each keeps only what is its own."""

    media_type = "text/event-stream"

    def __init__(
        self,
        hub: Hub,
        stream: Stream,
        *,
        retry_ms: int,
        first: RealtimeMessage | None = None,
        on_close: Callable[[], None] = lambda: None,
        raw_headers: list[tuple[bytes, bytes]] = HEADERS,
    ) -> None:
        # Not the base class's __init__: it would build a header list (and a Content-Length: 0) per stream.
        self.status_code = 200
        self.background = None
        self.body = b""
        self.raw_headers = raw_headers
        self.hub = hub
        self.stream = stream
        self.retry_ms = retry_ms
        self.first = first
        self.on_close = on_close

    async def __call__(self, _scope: Scope, receive: Receive, send: Send) -> None:
        stream = self.stream
        departure = Departure(receive, stream.close)
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            opening = f"retry: {self.retry_ms}\n".encode() + frame(
                self.hub.event_id(self.hub.stamp()), self.first or ""
            )
            await send({"type": "http.response.body", "body": opening, "more_body": True})
            stream.last_sent = time.monotonic()
            while True:
                item = await stream.get()
                if isinstance(item, Close):
                    break
                if stream.overflowed:
                    stream.overflowed = False
                    stream.pending.clear()
                    item = frame(self.hub.event_id(self.hub.stamp()), self.hub.recovery_message())
                await send({"type": "http.response.body", "body": item, "more_body": True})
                stream.last_sent = time.monotonic()
            with contextlib.suppress(OSError, RuntimeError):
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        except (OSError, RuntimeError):
            pass  # the client went away mid-write
        finally:
            departure.close()
            self.hub.close(stream)
            self.on_close()


class Departure:
    """Calls ``gone`` once the server's ``receive`` says the client disconnected. It steps ``receive()`` by hand
    from the callbacks of the futures that coroutine waits for, as a task would, but without a task (a task, its
    coroutine and its entry in the loop's set of tasks are ≈ 0.6 KiB per open stream)."""

    __slots__ = ("receive", "gone", "waiting")

    def __init__(self, receive: Receive, gone: Callable[[], None]) -> None:
        self.receive = receive
        self.gone = gone
        self.waiting: Coroutine[Any, Any, Message] | None = None
        self._next()

    def _next(self) -> None:
        self.waiting = self.receive()  # type: ignore[assignment]
        self._step()

    def _step(self, _done: object = None) -> None:
        waiting = self.waiting
        if waiting is None:
            return
        try:
            awaited = waiting.send(None)
        except StopIteration as finished:
            self.waiting = None
            message = finished.value
            if isinstance(message, dict) and message.get("type") == "http.disconnect":
                self.gone()
            else:
                self._next()  # the request's own body: wait on
            return
        except (Exception, asyncio.CancelledError):  # the server's receive broke: the client is as good as gone
            self.waiting = None
            self.gone()
            return
        if isinstance(awaited, asyncio.Future):
            awaited._asyncio_future_blocking = False
            awaited.add_done_callback(self._step)
        else:  # a bare yield (``asyncio.sleep(0)``): step again on the next turn of the loop
            asyncio.get_running_loop().call_soon(self._step)

    def close(self) -> None:
        """Stop waiting (the stream ended on this side)."""
        waiting, self.waiting = self.waiting, None
        if waiting is not None:
            waiting.close()
