"""A small SSE reader over an httpx streaming response, for end-to-end tests of the real-time stream."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx


@dataclass(frozen=True)
class Event:
    id: str | None
    data: str


@dataclass
class Stream:
    response: httpx.Response
    events: asyncio.Queue[Event | None] = field(default_factory=asyncio.Queue)
    retry: int | None = None
    closed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def status_code(self) -> int:
        return self.response.status_code

    async def next(self, timeout: float = 5.0) -> Event:
        """The next event (heartbeats included); AssertionError if the stream ended or nothing came in time."""
        item = await asyncio.wait_for(self.events.get(), timeout)
        assert item is not None, "the stream ended"
        return item

    async def next_message(self, timeout: float = 5.0) -> Event:
        """The next event with non-empty data (skips heartbeats)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            event = await self.next(max(0.01, deadline - loop.time()))
            if event.data:
                return event

    async def quiet(self, seconds: float) -> list[Event]:
        """Messages (non-empty) that arrive within ``seconds``."""
        got: list[Event] = []
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                while True:
                    item = await self.events.get()
                    if item is None:
                        break
                    if item.data:
                        got.append(item)
        return got

    async def _read(self) -> None:
        event_id: str | None = None
        data: list[str] = []
        try:
            async for line in self.response.aiter_lines():
                if line == "":
                    if data or event_id is not None:
                        await self.events.put(Event(event_id, "\n".join(data)))
                    event_id, data = None, []
                    continue
                name, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if name == "id":
                    event_id = value
                elif name == "data":
                    data.append(value)
                elif name == "retry":
                    self.retry = int(value)
        except httpx.HTTPError:
            pass
        finally:
            self.closed.set()
            await self.events.put(None)


@contextlib.asynccontextmanager
async def open_stream(client: httpx.AsyncClient, path: str = "/profile/stream", **kwargs: Any) -> AsyncIterator[Stream]:
    """Open the stream; the body is read in the background when the status is 200."""
    request = client.build_request("GET", path, timeout=httpx.Timeout(30.0, read=None), **kwargs)
    response = await client.send(request, stream=True)
    stream = Stream(response)
    task = None
    if response.status_code == 200:
        task = asyncio.create_task(stream._read())
    else:
        await response.aread()
        stream.closed.set()
    try:
        yield stream
    finally:
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await response.aclose()
