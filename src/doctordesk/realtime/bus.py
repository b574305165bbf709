"""The event bus: domain events, published after commit, handed to every subscriber of this process.

``MemoryBus`` serves one process. A Redis-backed bus (``DOCTORDESK_REDIS_URL``) carries the same events between
instances; both call the local handlers the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

import orjson

from doctordesk.domain.event_kinds import check_payload, checked_kind
from doctordesk.domain.events import DomainEvent

log = logging.getLogger(__name__)

Handler = Callable[[DomainEvent], Awaitable[None]]
_WIRE = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_APPEND_NEWLINE


def to_wire(body: Any) -> bytes:
    """A value as the shared buses carry it: one line of JSON (orjson: several times faster than ``json`` at the
    sizes a bus moves, a chat page among them). Datetimes and anything else JSON has no form for are written as
    their ``str``, as ``json.dumps(..., default=str)`` writes them."""
    return orjson.dumps(body, default=str, option=_WIRE)


def from_wire(line: bytes | str) -> Any:
    """The value of one line of ``to_wire`` (``ValueError`` for what is not JSON)."""
    return orjson.loads(line)


def event_to_json(event: DomainEvent) -> dict[str, Any]:
    """The event's fields as a JSON object (its ``data`` as it is, not copied: it is written out at once)."""
    return {
        "kind": event.kind,
        "topics": event.topics,
        "data": event.data,
        "notify_user_ids": event.notify_user_ids,
        "notify_text": event.notify_text,
    }


def event_from_json(data: dict[str, Any]) -> DomainEvent:
    """The event as another process sent it; ``BadEvent`` for an unknown kind or a payload its kind does not carry
    (``event_kinds.PAYLOADS``), ``KeyError``/``TypeError`` for what is no event at all."""
    kind = checked_kind(data["kind"])
    payload = dict(data.get("data", {}))
    check_payload(kind, payload)
    return DomainEvent(
        kind=kind,
        topics=tuple(data.get("topics", ())),
        data=payload,
        notify_user_ids=tuple(data.get("notify_user_ids", ())),
        notify_text=data.get("notify_text"),
    )


class EventBus(Protocol):
    async def publish(self, events: Sequence[DomainEvent]) -> None: ...

    def subscribe(self, handler: Handler) -> None: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


class LocalHandlers:
    """The handlers of this process, called in subscription order; one failing handler does not stop the rest."""

    def __init__(self) -> None:
        self._handlers: list[Handler] = []

    def subscribe(self, handler: Handler) -> None:
        self._handlers.append(handler)

    async def deliver(self, event: DomainEvent) -> None:
        for handler in self._handlers:
            try:
                await handler(event)
            except Exception:  # a subscriber's bug must not break the publisher
                log.exception("event handler failed for %s", event.kind)


class MemoryBus(LocalHandlers):
    """One process: publishing delivers to the local handlers directly."""

    async def publish(self, events: Sequence[DomainEvent]) -> None:
        for event in events:
            await self.deliver(event)

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None
