"""Token reads that arrive together share one query.

Thousands of clients reconnecting at once (a restart, a network blip) each open a stream with a token the process
has not cached. Read one by one, every open pays a database round trip of its own (a session, a connection from
the pool, the statement, the rollback): that was half of the server's busy time while streams opened. Here the
reads asked for in one turn of the event loop are collected and answered by one query of up to ``MAX_BATCH``
tokens, issued at the next turn. At most ``IN_FLIGHT`` such queries run at once: reads arriving while they do
wait for one to finish and then go together, so the busier the process, the larger the batches. An idle process
reads a single token at most one loop turn later than before. A read of a key already asked for, waiting or
under way, shares that read (the polls of one client arriving together ask the database once).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

V = TypeVar("V")

MAX_BATCH = 500
IN_FLIGHT = 2

Fetch = Callable[[Sequence[str]], Awaitable[dict[str, V]]]


class BatchedReads(Generic[V]):
    """``await reads.get(key, fetch)``: the value ``fetch`` finds for ``key`` (None when absent), where ``fetch``
    answers for every key asked for in the same loop turn at once. One instance serves one kind of read."""

    def __init__(self, max_batch: int = MAX_BATCH, in_flight: int = IN_FLIGHT) -> None:
        self.max_batch = max_batch
        self.in_flight = in_flight
        self._waiting: dict[str, asyncio.Future[V | None]] = {}
        self._reading: dict[str, asyncio.Future[V | None]] = {}  # keys of the batches under way
        self._fetch: Fetch[V] | None = None
        self._running = 0
        self._flush_due = False
        self.queries = 0  # how many fetches ran (tests, metrics)

    async def get(self, key: str, fetch: Fetch[V]) -> V | None:
        future = self._waiting.get(key) or self._reading.get(key)
        if future is None:
            loop = asyncio.get_running_loop()
            future = self._waiting[key] = loop.create_future()
            self._fetch = fetch
            self._schedule(loop)
        return await asyncio.shield(future)

    def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        if not self._flush_due and self._waiting and self._running < self.in_flight:
            self._flush_due = True
            loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_due = False
        fetch = self._fetch
        if fetch is None:
            return
        while self._waiting and self._running < self.in_flight:
            keys = list(itertools.islice(self._waiting, self.max_batch))
            batch = {k: self._waiting.pop(k) for k in keys}
            self._reading.update(batch)
            self._running += 1
            self.queries += 1
            asyncio.ensure_future(self._answer(fetch, batch))
        if not self._waiting:
            self._fetch = None

    async def _answer(self, fetch: Fetch[V], batch: dict[str, asyncio.Future[V | None]]) -> None:
        try:
            await self._answer_batch(fetch, batch)
        finally:
            for key, future in batch.items():
                if self._reading.get(key) is future:
                    del self._reading[key]
            self._running -= 1
            self._schedule(asyncio.get_running_loop())

    @staticmethod
    async def _answer_batch(fetch: Fetch[V], batch: dict[str, asyncio.Future[V | None]]) -> None:
        try:
            found = await fetch(list(batch))
        except asyncio.CancelledError:  # the process is stopping: so are the readers
            for future in batch.values():
                future.cancel()
            raise
        except Exception as exc:  # every reader of the batch gets the failure (a database away: a 503)
            for future in batch.values():
                if not future.done():
                    future.set_exception(exc)
                    future.exception()  # retrieved: readers that went away log nothing
            return
        for key, future in batch.items():
            if not future.done():
                future.set_result(found.get(key))
