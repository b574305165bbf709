"""What happened to a screen: ``Change`` records, and the async iterator that hands them out."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from doctordesk.client.errors import ClientError

ChangeKind = Literal["page", "update", "error", "closed"]
Trigger = Literal["open", "reload", "navigate", "poll", "stream", "action", "patch", "close"]


@dataclass(frozen=True, slots=True)
class Change:
    """What happened to a screen.

    ``kind``: ``page`` (a whole page arrived: open, reload, navigate), ``update`` (a non-empty update set was
    applied), ``error`` (a background poll or real-time PATCH failed; the cycle goes on) or ``closed``.
    ``trigger`` says what caused it; ``patches``, ``notice`` and ``navigate`` are the update set's.
    """

    kind: ChangeKind
    screen: str
    trigger: Trigger
    patches: tuple[dict[str, Any], ...] = ()
    notice: dict[str, str] | None = None
    navigate: str | None = None
    error: ClientError | None = None


class ChangeFeed(Protocol):
    """What ``Changes`` reads of its screen: whether it is closed, and the queues its changes go to."""

    closed: bool
    _queues: list[asyncio.Queue[Change]]


class Changes:
    """An async iterator over a screen's changes from the moment it was created; ends after ``closed``."""

    def __init__(self, screen: ChangeFeed) -> None:
        self._screen = screen
        self._queue: asyncio.Queue[Change] = asyncio.Queue()
        self._done = screen.closed
        screen._queues.append(self._queue)

    def __aiter__(self) -> Changes:
        return self

    async def __anext__(self) -> Change:
        if self._done and self._queue.empty():
            raise StopAsyncIteration
        change = await self._queue.get()
        if change.kind == "closed":
            self._done = True
            self.close()
        return change

    def close(self) -> None:
        """Stop receiving changes."""
        if self._queue in self._screen._queues:
            self._screen._queues.remove(self._queue)
