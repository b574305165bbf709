"""What admins see of webhook endpoints, deliveries and notices, as plain values."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class DeliveryView:
    id: int
    message_id: str
    endpoint_id: int
    event_type: str
    created_at: datetime
    status: str
    attempts: int
    next_attempt_at: datetime | None
    delivered_at: datetime | None
    last_attempt_at: datetime | None
    last_status_code: int | None
    last_error: str | None
    replays: int
    payload: str


@dataclass(frozen=True, slots=True)
class NoticeView:
    id: int
    created_at: datetime
    kind: str
    text: str
    details: dict[str, object]


@dataclass(frozen=True, slots=True)
class EndpointView:
    id: int
    url: str
    description: str
    event_types: tuple[str, ...]
    include_content: bool
    enabled: bool
    disabled_at: datetime | None
    disabled_reason: str | None
    failing_since: datetime | None
    created_at: datetime
    updated_at: datetime
