"""The real-time stream (spec 4.1, 5, 6.3): one SSE connection per logged-in client, reopened when it drops, the
active screen announced again after each reconnect (docs/client-sdk.md, Keeping screens in sync)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx

from doctordesk.client.errors import ApiError, ClientError, ProtocolError, Unauthorized, decode
from doctordesk.client.host import StreamHost

log = logging.getLogger(__name__)

EVENT_STREAM = "text/event-stream"
MAX_DELAY = 5.0


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One server-sent event."""

    data: str
    event: str = "message"
    id: str | None = None
    retry_ms: int | None = None


async def parse_sse(lines: AsyncIterable[str]) -> AsyncIterator[SseEvent]:
    """Server-sent events from a stream's lines (the WHATWG event-stream rules: ``data``, ``event``, ``id``,
    ``retry`` fields, ``:`` comments, a blank line ends an event; an event without data is not dispatched, but its
    ``id`` and ``retry`` still count and are reported with an empty-data event of type ``""``)."""
    data: list[str] = []
    event = ""
    event_id: str | None = None
    retry: int | None = None
    seen_data = False
    async for raw in lines:
        line = raw.rstrip("\r\n")
        if line == "":
            if seen_data:
                yield SseEvent("\n".join(data), event or "message", event_id, retry)
            elif event_id is not None or retry is not None:
                yield SseEvent("", "", event_id, retry)
            data, event, event_id, retry, seen_data = [], "", None, None, False
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            data.append(value)
            seen_data = True
        elif name == "event":
            event = value
        elif name == "id" and "\0" not in value:
            event_id = value
        elif name == "retry" and value.isdigit():
            retry = int(value)


def stream_path(api: dict[str, Any]) -> str | None:
    """The path of the GET operation answering ``text/event-stream`` in an OpenAPI description."""
    paths = api.get("paths")
    if not isinstance(paths, dict):
        return None
    for path, operations in paths.items():
        get = operations.get("get") if isinstance(operations, dict) else None
        if not isinstance(get, dict):
            continue
        for answer in (get.get("responses") or {}).values():
            if isinstance(answer, dict) and EVENT_STREAM in (answer.get("content") or {}):
                return str(path)
    return None


class RealtimeStream:
    """The SSE connection of a ``Client`` (created by the client on login; integrators rarely touch it).

    ``connected`` is set while a stream is open; ``connections`` counts the streams opened so far.
    """

    def __init__(self, client: StreamHost, *, reconnect_delay: float = 1.0, read_timeout: float = 75.0) -> None:
        self.client = client
        self.reconnect_delay = reconnect_delay
        self.read_timeout = read_timeout
        self.connected = asyncio.Event()
        self.connections = 0
        self.last_event_id: str | None = None
        self.retry_seconds: float | None = None
        self.stopped_by: ClientError | None = None
        self.failures = 0  # failed attempts since the last stream that opened
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        """Close the stream (no reconnect)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self.connected.clear()

    async def wait_connected(self, timeout: float = 5.0) -> None:
        """Wait until a stream is open (``TimeoutError`` otherwise)."""
        async with asyncio.timeout(timeout):
            await self.connected.wait()

    @property
    def delay(self) -> float:
        """How long to wait before reconnecting: the service's ``retry:`` hint (else ``reconnect_delay``), doubled
        for each further failure in a row, at most ``MAX_DELAY`` seconds."""
        base = self.retry_seconds if self.retry_seconds is not None else self.reconnect_delay
        grown: float = base * 2.0 ** max(self.failures - 1, 0)
        return min(grown, max(base, MAX_DELAY))

    async def _run(self) -> None:
        while True:
            started = time.monotonic()
            try:
                await self._once()
                # Closed by the service: reopen at once, unless it keeps closing right away.
                if time.monotonic() - started < 1.0:
                    await asyncio.sleep(self.delay)
            except Unauthorized as exc:
                log.info("real-time stream refused: %s", exc)
                self.stopped_by = exc
                return
            except (ClientError, httpx.HTTPError) as exc:
                self.failures += 1
                log.info("real-time stream failed (%s): reconnecting in %.1f s", type(exc).__name__, self.delay)
                await asyncio.sleep(self.delay)
            finally:
                self.connected.clear()

    async def _once(self) -> None:
        api = await self.client.api_description()
        path = stream_path(api)
        if path is None:
            self.client.forget_api_description()  # look again next time: the service may be mid-upgrade
            raise ProtocolError("the service lists no text/event-stream endpoint")
        headers = self.client.headers()
        headers["Accept"] = EVENT_STREAM
        headers["Cache-Control"] = "no-store"
        if self.last_event_id is not None:
            headers["Last-Event-ID"] = self.last_event_id
        timeout = httpx.Timeout(10.0, read=self.read_timeout)
        async with self.client.http.stream("GET", path, headers=headers, timeout=timeout) as response:
            if response.status_code >= 400:
                await response.aread()
                decode(response)  # raises the ApiError
                raise ApiError("HTTP_ERROR", "stream refused", status=response.status_code)
            if not response.headers.get("content-type", "").startswith(EVENT_STREAM):
                raise ProtocolError("the stream endpoint did not answer text/event-stream")
            self.connections += 1
            self.failures = 0
            self.connected.set()
            if self.connections > 1:
                # The service may have restarted and forgotten which screen this client shows: tell it again.
                self.client._spawn(self.client.reannounce())
            async for event in parse_sse(response.aiter_lines()):
                if event.id is not None:
                    self.last_event_id = event.id
                if event.retry_ms is not None:
                    self.retry_seconds = event.retry_ms / 1000
                if event.event == "message" and event.data:
                    self.client._spawn(self.client.handle_message(event.data))
