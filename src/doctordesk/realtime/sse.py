"""The ``text/event-stream`` response: a small ASGI response that writes one stream's messages and heartbeats.

Frames: ``retry: <ms>`` once, then ``id: <id>`` + ``data: <real-time message>`` per event. A heartbeat is an event
with an id and empty data: browsers do not dispatch it but remember its id (so ``Last-Event-ID`` stays current),
other clients read it as the empty message (nothing to do).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from doctordesk.realtime.hub import Close, Hub, Stream, frame
from doctordesk.realtime.message import RealtimeMessage

HEADERS = {
    "Cache-Control": "no-store",
    "X-Accel-Buffering": "no",
    "Connection": "keep-alive",
}


class EventStreamResponse(Response):
    media_type = "text/event-stream"

    def __init__(
        self,
        hub: Hub,
        stream: Stream,
        *,
        retry_ms: int,
        first: RealtimeMessage | None = None,
        on_close: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__(content=None, headers=HEADERS, media_type=self.media_type)
        # A stream has no length: drop the Content-Length: 0 the base class derives from the empty body.
        self.raw_headers = [(k, v) for k, v in self.raw_headers if k != b"content-length"]
        self.hub = hub
        self.stream = stream
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
            watcher.cancel()
            self.hub.close(stream)
            self.on_close()

    async def _watch(self, receive: Receive) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                self.stream.close()
                return
