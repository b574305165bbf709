"""The push outbox in the database: written in the transaction of the change, claimed and settled by dispatchers.

Claims are leases (``realtime/lease.py``, shared with the webhook outbox): a dispatcher that dies mid-delivery
leaves its rows to come due again when the lease ends; the notification id is the same, so the partner can drop
the duplicate.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from sqlalchemy import bindparam, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk import i18n
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import DomainEvent
from doctordesk.realtime.lease import lease_due
from doctordesk.store import plain_rows
from doctordesk.store.db import Database
from doctordesk.store.realtime_tables import Device, PushOutbox
from doctordesk.store.tables import User

PENDING, SENT, DROPPED = "pending", "sent", "dropped"


@dataclass(frozen=True, slots=True)
class Due:
    """A claimed notification with the device's current token."""

    id: int
    notification_id: str
    device_id: int
    platform: str
    token: str | None
    text: str | None
    data: str
    attempts: int


async def ping(db: Database) -> None:
    async with db.read() as session:
        await session.execute(text("SELECT 1"))


async def depth(db: Database) -> int:
    async with db.read() as session:
        return int(await session.scalar(select(func.count()).where(PushOutbox.status == PENDING)) or 0)


# Published after a transaction that queued notifications: wakes the push dispatchers (on every instance).
QUEUED_EVENT = EventKind.PUSH_QUEUED


class Recipient(Protocol):
    """A device to notify, as ``enqueue`` reads it."""

    id: int
    device_key: str
    user_id: int


_RECIPIENTS = (
    select(Device.id, Device.device_key, Device.user_id, User.language)
    .join(User, User.id == Device.user_id)
    .where(Device.user_id.in_(bindparam("user_ids", expanding=True)), Device.push_token.is_not(None))
)


async def enqueue(
    session: AsyncSession,
    events: Sequence[DomainEvent],
    *,
    now: datetime,
    data_for: Callable[[DomainEvent, Recipient], str],
) -> int:
    """Outbox rows for the devices whose last active user is to be notified of each event (same transaction),
    written by one plain INSERT (this runs in every write that notifies somebody)."""
    wanted = [e for e in events if e.notify_user_ids]
    if not wanted:
        return 0
    user_ids = sorted({u for e in wanted for u in e.notify_user_ids})
    devices = (await session.execute(_RECIPIENTS, {"user_ids": user_ids})).all()
    rows = [
        {
            "notification_id": str(uuid.uuid4()),
            "device_id": device.id,
            "user_id": device.user_id,
            # In the recipient's language (a Text keeps its template; English without a choice).
            "text": i18n.t(device.language or i18n.DEFAULT, event.notify_text) if event.notify_text else None,
            "data": data_for(event, device),
            "kind": event.kind[:64],
            "created_at": now,
            "next_attempt_at": now,
            "attempts": 0,
            "status": PENDING,
        }
        for event in wanted
        for device in devices
        if device.user_id in event.notify_user_ids
    ]
    await plain_rows.add(session, PushOutbox, rows)
    return len(rows)


async def claim(db: Database, *, now: datetime, limit: int, lease_seconds: float) -> list[Due]:
    """Take up to ``limit`` due notifications for ``lease_seconds``."""
    async with db.transaction() as session:
        ids = await lease_due(
            session, PushOutbox, now=now, limit=limit, lease_seconds=lease_seconds, skip_locked=not db.is_sqlite
        )
        if not ids:
            return []
        rows = await session.execute(
            select(PushOutbox, Device.platform, Device.push_token)
            .join(Device, Device.id == PushOutbox.device_id)
            .where(PushOutbox.id.in_(ids))
            .order_by(PushOutbox.id)
        )
        return [
            Due(o.id, o.notification_id, o.device_id, platform, token, o.text, o.data, o.attempts)
            for o, platform, token in rows.all()
        ]


async def settle(
    db: Database,
    *,
    now: datetime,
    sent: Sequence[int] = (),
    retry: dict[int, tuple[datetime, str]] | None = None,
    dropped: dict[int, str] | None = None,
    invalid_devices: dict[int, str] | None = None,
) -> None:
    """Record the outcome of one round: sent, to retry at a time, dropped for good; invalid tokens are removed."""
    async with db.transaction() as session:
        if sent:
            await session.execute(
                update(PushOutbox).where(PushOutbox.id.in_(list(sent))).values(status=SENT, sent_at=now)
            )
        for row_id, (at, error) in (retry or {}).items():
            await session.execute(
                update(PushOutbox)
                .where(PushOutbox.id == row_id, PushOutbox.status == PENDING)
                .values(next_attempt_at=at, last_error=error[:300])
            )
        for row_id, error in (dropped or {}).items():
            await session.execute(
                update(PushOutbox).where(PushOutbox.id == row_id).values(status=DROPPED, last_error=error[:300])
            )
        for device_id, token in (invalid_devices or {}).items():
            # Only the token the partner refused: the app may have sent a fresh one meanwhile.
            await session.execute(
                update(Device)
                .where(Device.id == device_id, Device.push_token == token)
                .values(push_token=None, token_updated_at=now)
            )
