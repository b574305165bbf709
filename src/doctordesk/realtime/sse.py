"""The ``text/event-stream`` response: a small ASGI response that writes one stream's messages and heartbeats.

Frames: ``retry: <ms>`` once, then ``id: <id>`` + ``data: <real-time message>`` per event. A heartbeat is an event
with an id and empty data: browsers do not dispatch it but remember its id (so ``Last-Event-ID`` stays current),
other clients read it as the empty message (nothing to do).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from datetime import UTC, datetime

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from doctordesk.realtime.hub import Close, Hub, Stream
from doctordesk.realtime.message import RealtimeMessage

HEADERS = {
    "Cache-Control": "no-store",
    "X-Accel-Buffering": "no",
    "Connection": "keep-alive",
}


def frame(event_id: str, message: RealtimeMessage | str) -> bytes:
    return f"id: {event_id}\ndata: {message}\n\n".encode()


class EventStreamResponse(Response):
    media_type = "text/event-stream"

    def __init__(
        self,
        hub: Hub,
        stream: Stream,
        *,
        heartbeat: float,
        retry_ms: int,
        first: RealtimeMessage | None = None,
        on_close: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__(content=None, headers=HEADERS, media_type=self.media_type)
        # A stream has no length: drop the Content-Length: 0 the base class derives from the empty body.
        self.raw_headers = [(k, v) for k, v in self.raw_headers if k != b"content-length"]
        self.hub = hub
        self.stream = stream
        self.heartbeat = heartbeat
        self.retry_ms = retry_ms
        self.first = first
        self.on_close = on_close

    async def __call__(self, _scope: Scope, receive: Receive, send: Send) -> None:
        stream = self.stream
        watcher = asyncio.create_task(self._watch(receive))
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            opening = f"retry: {self.retry_ms}\n".encode() + frame(
                self.hub.event_id(self.hub.stamp()), self.first or ""
            )
            await send({"type": "http.response.body", "body": opening, "more_body": True})
            while True:
                try:
                    async with asyncio.timeout(self.heartbeat):
                        item = await stream.queue.get()
                except TimeoutError:
                    if stream.expires_at is not None and stream.expires_at <= datetime.now(UTC):
                        break
                    body = frame(self.hub.event_id(self.hub.stamp()), "")
                else:
                    if isinstance(item, Close):
                        break
                    event_id, message = item
                    if stream.overflowed:
                        stream.overflowed = False
                        message = self.hub.recovery_message()
                    body = frame(event_id, message)
                await send({"type": "http.response.body", "body": body, "more_body": True})
            with contextlib.suppress(OSError, RuntimeError):
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        except (OSError, RuntimeError):
            pass  # the client went away mid-write
        finally:
            watcher.cancel()
            self.hub.close(stream)
            self.on_close()

    async def _watch(self, receive: Receive) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                self.stream.close()
                return
