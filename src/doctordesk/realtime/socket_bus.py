"""A worker's side of the Unix-socket event bus (``realtime/broker.py``): the bus of ``serve --workers N`` on one
host without Redis.

Every event, this process's own included, is delivered in the broker's order when the broker sends it back
numbered; ``publish`` returns once that happened here. When the broker does not answer within the publish timeout
the events are delivered here alone (``SharedBus._unnumbered``) and the connection is made again; a connection
that drops is made again with backoff, and each new one adopts the bus's state from its ``hello`` (``on_reconnect``
runs after a loss, as for Redis).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Sequence
from typing import Any

from doctordesk.domain.events import DomainEvent
from doctordesk.realtime.broker import LINE_LIMIT
from doctordesk.realtime.bus import from_wire, to_wire
from doctordesk.realtime.shared import SharedBus, batch_body

log = logging.getLogger(__name__)


class SocketBus(SharedBus):
    kind = "socket"
    first_wait = 5.0

    def __init__(self, path: str, *, instance: str, publish_timeout: float = 2.0) -> None:
        super().__init__(instance=instance, publish_timeout=publish_timeout)
        self.path = path
        self._writer: asyncio.StreamWriter | None = None
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._ids = itertools.count(1)
        self._publishing: dict[int, Sequence[DomainEvent]] = {}  # the events of the publishes waiting, by request

    async def publish(self, events: Sequence[DomainEvent]) -> None:
        body = {"op": "publish", **batch_body(self.instance, events)}
        if await self._ask(body, events) is None:
            log.warning("event bus: the broker did not take %d event(s); delivered on this worker only", len(events))
            await self._unnumbered(events)
            self._drop()

    async def remember(self, key: str, value: str, *, ttl_seconds: int) -> None:
        """Keep a small value for every worker; returns once the broker has it (so a request answered after it
        finds it on any worker, as with Redis), or gave up waiting (``publish_timeout``; never raises)."""
        await self._ask({"op": "set", "key": key, "value": value, "ttl": ttl_seconds})

    async def recall(self, key: str) -> str | None:
        answer = await self._ask({"op": "get", "key": key})
        return answer.get("value") if isinstance(answer, dict) else None

    async def ping(self, *, timeout: float) -> bool:
        """Whether the broker answers within ``timeout`` seconds (readiness)."""
        try:
            async with asyncio.timeout(timeout):
                return await self._ask({"op": "get", "key": ""}) is not None
        except TimeoutError:
            return False

    def _send(self, body: dict[str, Any]) -> bool:
        if self._writer is None or self._writer.is_closing():
            return False
        self._writer.write(to_wire(body))
        return True

    async def _ask(self, body: dict[str, Any], events: Sequence[DomainEvent] = ()) -> dict[str, Any] | None:
        """Send ``body`` and wait for its answer (for a publish: its ``events``, delivered here when the batch comes
        back numbered: these objects, not the batch read back); None: no answer."""
        rid = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = future
        if events:
            self._publishing[rid] = events
        try:
            if not self._send({**body, "rid": rid}):
                return None
            async with asyncio.timeout(self.publish_timeout):
                return dict(await future)
        except (TimeoutError, ConnectionError):
            return None
        finally:
            self._waiting.pop(rid, None)
            self._publishing.pop(rid, None)

    def _drop(self) -> None:
        if self._writer is not None:
            self._writer.close()

    async def _listen(self) -> None:
        delay, lost = 0.05, False
        while True:
            try:
                reader, self._writer = await asyncio.open_unix_connection(self.path, limit=LINE_LIMIT)
                hello = from_wire(await reader.readline())["hello"]
                self._joined(
                    epoch=hello["epoch"], key=bytes.fromhex(hello["key"]), marks=hello["marks"], seq=hello["seq"]
                )
                self._connected_after(lost)
                delay, lost = 0.05, False
                while line := await reader.readline():
                    await self._receive(from_wire(line))
                raise ConnectionError("the broker closed the connection")
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # broker away, restarting, or a broken line: join again with backoff
                self._lost(not lost, exc)
                lost = True
                for future in self._waiting.values():
                    if not future.done():
                        future.set_exception(ConnectionError("broker lost"))
                if self.screens is not None:
                    self.screens.revisions.invalidate()
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
            finally:
                self._drop()

    async def _receive(self, body: dict[str, Any]) -> None:
        rid = int(body.get("rid") or 0)
        mine = body.get("origin") == self.instance
        waiting = self._waiting.get(rid) if mine or "seq" not in body else None
        own = self._publishing.pop(rid, None) if mine and waiting is not None else None
        if own is not None and "seq" in body:  # its own batch, back in the broker's order: delivered now
            await self._numbered(own, int(body["seq"]))
        elif "seq" in body:
            # Its own batch whose publish gave up waiting was delivered here already.
            await self._from_bus(int(body["seq"]), body, delivered_here=mine and waiting is None, mine=mine)
        if waiting is not None and not waiting.done():
            waiting.set_result(body)
