"""The webhook outbox: deliveries written in the transaction of the change (one per event per subscribed
endpoint), leased by dispatchers (``realtime/lease.py``, as the push outbox) and settled with their outcome.

A delivery row is also the endpoint's delivery log: attempts, the last status code or error and when.

FHIR Subscriptions are endpoints of their own kind: the same transaction queues their notifications
(``services/webhooks/subscription_outbox.py`` decides which), and the same dispatcher sends them, as the Subscription
asks (an Appointment PUT to the receiver's FHIR base, or an empty POST) with its extra headers.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import String, Table, bindparam, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.util import identity_key

from doctordesk.domain.events import DomainEvent
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.fhir.subscriptions import header_pairs
from doctordesk.domain.webhooks import rules as webhook_rules
from doctordesk.services.uow import worker_transaction
from doctordesk.services.webhooks import subscription_outbox
from doctordesk.store.chat_tables import ChatMessage
from doctordesk.store.db import Database
from doctordesk.store.fhir_tables import FhirSubscription
from doctordesk.store.tables import Appointment
from doctordesk.store.webhook_tables import WebhookDelivery, WebhookEndpoint

PENDING, DELIVERED, FAILED = "pending", "delivered", "failed"


def new_message_id() -> str:
    """A delivery's stable id (the ``webhook-id`` header): ``msg_`` and a random UUID."""
    return f"msg_{uuid.uuid4().hex}"


def delivery_values(
    endpoint_id: int, event_type: str, body: str, *, now: datetime, subject: str | None = None
) -> dict[str, Any]:
    """A new delivery row's columns: due now, with a fresh message id."""
    return {
        "message_id": new_message_id(),
        "endpoint_id": endpoint_id,
        "event_type": event_type,
        "payload": body,
        "subject": subject,
        "created_at": now,
        "status": PENDING,
        "attempts": 0,
        "next_attempt_at": now,
        "replays": 0,
    }


@functools.cache
def _endpoints_statement() -> Any:
    """The enabled endpoints, as plain SQL built once (it runs in every transaction with a webhook event type, a
    chat send's among them)."""
    e = cast(Table, WebhookEndpoint.__table__).c
    return select(e.id, e.kind, e.event_types, e.include_content).where(e.enabled.is_(True))


async def enqueue(session: AsyncSession, events: Sequence[DomainEvent], *, now: datetime) -> int:
    """Deliveries for the enabled endpoints subscribed to each event's type, and for the FHIR Subscriptions whose
    criteria the changed appointments now match, in the caller's transaction (one INSERT for them all)."""
    typed = [(e, t) for e in events if (t := webhook_rules.event_type_for(e.kind)) is not None]
    if not typed:
        return 0
    endpoints = (await session.execute(_endpoints_statement())).all()
    hooks = [(i, types, content) for i, kind, types, content in endpoints if kind == webhook_rules.WEBHOOK_KIND]
    channels = [i for i, kind, _, _ in endpoints if kind == webhook_rules.SUBSCRIPTION_KIND]
    if not channels and not any(t in (types or ()) for _, t in typed for _, types, _ in hooks):
        return 0  # nobody subscribed: no appointment to read
    rows: list[dict[str, Any]] = []
    with session.no_autoflush:  # the event's rows are in the session already; nothing to write before reading
        loaded = await _load_appointments(session, typed)
        for event, event_type in typed:
            wanting = [(i, content) for i, types, content in hooks if event_type in (types or ())]
            bodies: dict[bool, str] = {}
            for endpoint_id, include_content in wanting:
                # Only a chat message's body depends on the endpoint (its text or not): an appointment's is built
                # once for all its endpoints.
                key = include_content and event_type == webhook_rules.CHAT_MESSAGE_CREATED
                if key not in bodies:
                    data = await _data(session, event, event_type, include_content=include_content)
                    bodies[key] = webhook_rules.payload(event_type, at=now, data=data)
                rows.append(delivery_values(endpoint_id, event_type, bodies[key], now=now))
        if channels:
            for endpoint_id, event_type, body, subject in await subscription_outbox.notifications(
                session, typed, channels=channels, now=now
            ):
                rows.append(delivery_values(endpoint_id, event_type, body, now=now, subject=subject))
        del loaded
    if rows:
        await session.execute(insert(WebhookDelivery), rows)
    return len(rows)


async def _load_appointments(session: AsyncSession, typed: Sequence[tuple[DomainEvent, str]]) -> list[Appointment]:
    """The events' appointments that the session does not hold yet, read in one query (a transaction's own
    changes are in the session already; events queued from elsewhere name many appointments). The caller keeps the
    list while it reads them through ``session.get``: the session holds unchanged rows only weakly."""
    ids = {
        i
        for event, event_type in typed
        if event_type != webhook_rules.CHAT_MESSAGE_CREATED
        and event_type not in webhook_rules.WAITLIST_TYPES
        and isinstance(i := event.data.get("appointment_id"), int)
    }
    missing = sorted(i for i in ids if identity_key(Appointment, i) not in session.identity_map)
    if not missing:
        return []
    return list((await session.scalars(select(Appointment).where(Appointment.id.in_(missing)))).all())


async def _data(session: AsyncSession, event: DomainEvent, event_type: str, *, include_content: bool) -> dict[str, Any]:
    if event_type == webhook_rules.CHAT_MESSAGE_CREATED:
        content = None
        if include_content:
            # The changed rows are in the session already: no extra query on the hot path.
            message = await session.get(ChatMessage, event.data["message_id"])
            content = message.content if message is not None else None
        return webhook_rules.chat_data(event.data, content=content)
    if event_type in webhook_rules.WAITLIST_TYPES:
        return webhook_rules.waitlist_data(event.data)
    appointment = await session.get(Appointment, event.data["appointment_id"])
    known: dict[str, Any] = dict(event.data)
    if appointment is not None:
        # The event describes the change; the row (current in this transaction) fills what an event leaves out.
        known.setdefault("status", appointment.status)
        known.setdefault("version", appointment.version)
        known.setdefault("start", appointment.start_at.isoformat())
    return webhook_rules.appointment_data(
        known,
        doctor_id=appointment.doctor_id if appointment else None,
        patient_id=appointment.patient_id if appointment else None,
        location_id=appointment.location_id if appointment else None,
    )


@dataclass(frozen=True, slots=True)
class Due:
    """A leased delivery with what signing and sending it needs: a webhook is a JSON POST; a FHIR Subscription's
    notification a PUT of its resource to ``{endpoint}/{subject}``, or an empty POST, with its own headers."""

    id: int
    message_id: str
    endpoint_id: int
    url: str
    payload: str
    attempts: int
    secrets: tuple[str, ...]
    method: str = "POST"
    content_type: str | None = "application/json"
    headers: tuple[tuple[str, str], ...] = ()


def _notification(due: Due, *, subject: str | None, headers: list[str] | None) -> Due:
    """A FHIR Subscription's delivery: its resource PUT to ``{endpoint}/{subject}`` (the endpoint is the
    receiver's FHIR base, as R4's rest-hook says), or an empty POST to the endpoint; with the subscription's own
    headers (as they are now: a changed token applies to retries too)."""
    extra = tuple(header_pairs(headers or ()))
    if due.payload and subject:
        url = f"{due.url.rstrip('/')}/{subject}"
        return replace(due, url=url, method="PUT", content_type=fhir_mapping.MEDIA_TYPE, headers=extra)
    return replace(due, content_type=None, headers=extra)


async def claim(
    db: Database, *, now: datetime, limit: int, lease_seconds: float, skip_endpoints: Collection[int] = ()
) -> list[Due]:
    """Lease up to ``limit`` due deliveries of enabled endpoints (but those of ``skip_endpoints``) for
    ``lease_seconds``, oldest due first: one ``UPDATE … WHERE id IN (SELECT … LIMIT n) RETURNING`` takes them
    (``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so concurrent claims never take one row twice; SQLite has one
    writer at a time anyway), a second statement reads their endpoints. Each comes with what sending it needs.
    A read first: a claim that finds nothing due writes nothing (no transaction holding SQLite's write lock)."""
    table = cast(Table, WebhookDelivery.__table__)
    enabled = select(WebhookEndpoint.id).where(WebhookEndpoint.enabled.is_(True))
    due = (
        select(table.c.id)
        .where(table.c.status == PENDING, table.c.next_attempt_at <= now, table.c.endpoint_id.in_(enabled))
        .order_by(table.c.next_attempt_at, table.c.id)
        .limit(limit)
    )
    if skip_endpoints:
        due = due.where(table.c.endpoint_id.not_in(sorted(skip_endpoints)))
    async with db.read() as session:  # nothing due (most claims of most clinics): no write transaction
        if await session.scalar(due.limit(1)) is None:
            return []
    if not db.is_sqlite:
        due = due.with_for_update(of=table, skip_locked=True)
    lease = (
        update(table)
        .where(table.c.id.in_(due.scalar_subquery()))
        .values(next_attempt_at=now + timedelta(seconds=lease_seconds), attempts=table.c.attempts + 1)
        .returning(
            table.c.id, table.c.message_id, table.c.endpoint_id, table.c.payload, table.c.attempts, table.c.subject
        )
    )
    async with worker_transaction(db) as session:
        leased = sorted((await session.execute(lease)).all())
        if not leased:
            return []
        endpoints = {
            row[0]: row
            for row in await session.execute(
                select(
                    WebhookEndpoint.id,
                    WebhookEndpoint.url,
                    WebhookEndpoint.secret,
                    WebhookEndpoint.previous_secret,
                    WebhookEndpoint.previous_secret_until,
                    WebhookEndpoint.kind,
                    FhirSubscription.headers,
                )
                .outerjoin(FhirSubscription, FhirSubscription.endpoint_id == WebhookEndpoint.id)
                .where(WebhookEndpoint.id.in_({row.endpoint_id for row in leased}))
            )
        }
    due_rows = []
    for row_id, message_id, endpoint_id, body, attempts, subject in leased:
        _, url, secret, previous, until, kind, headers = endpoints[endpoint_id]
        keys = (secret, previous) if previous and until and until > now else (secret,)
        due_row = Due(row_id, message_id, endpoint_id, url, body, attempts, keys)
        if kind == webhook_rules.SUBSCRIPTION_KIND:
            due_row = _notification(due_row, subject=subject, headers=headers)
        due_rows.append(due_row)
    return due_rows


@dataclass(frozen=True, slots=True)
class Attempt:
    """The outcome of one delivery attempt. ``retry_at`` None with ``ok`` False: given up (status failed).
    ``lease`` is the delivery's ``attempts`` as its claim left them: an outcome other than delivered is recorded
    only while the row still carries that lease (not after the lease ran out and another dispatcher took it)."""

    id: int
    endpoint_id: int
    lease: int
    ok: bool
    status_code: int | None = None
    error: str | None = None
    retry_at: datetime | None = None


async def settle(session: AsyncSession, attempts: Sequence[Attempt], *, now: datetime) -> None:
    """Record outcomes, any number in one go: the delivered ones with one statement per status code, the retried
    and the given-up ones with one batched statement each; and each endpoint's failing streak: cleared by any
    success, started by the first failure after one. A delivery that is no longer pending (delivered by another
    dispatcher meanwhile, replayed and delivered) is left as it is."""
    table = cast(Table, WebhookDelivery.__table__)
    pending = table.c.status == PENDING
    ours = (table.c.id == bindparam("row_id")) & pending & (table.c.attempts == bindparam("lease"))
    delivered: dict[int | None, list[int]] = {}
    for a in attempts:
        if a.ok:
            delivered.setdefault(a.status_code, []).append(a.id)
    for code, ids in delivered.items():
        await session.execute(
            update(table)
            .where(table.c.id.in_(ids), pending)
            .values(status=DELIVERED, delivered_at=now, last_error=None, last_attempt_at=now, last_status_code=code)
        )
    retried = [
        {"row_id": a.id, "lease": a.lease, "code": a.status_code, "error": (a.error or "")[:300], "at": a.retry_at}
        for a in attempts
        if not a.ok and a.retry_at is not None
    ]
    gave_up = [
        {"row_id": a.id, "lease": a.lease, "code": a.status_code, "error": (a.error or "")[:300]}
        for a in attempts
        if not a.ok and a.retry_at is None
    ]
    common = {"last_attempt_at": now, "last_status_code": bindparam("code"), "last_error": bindparam("error")}
    for rows, values in ((retried, {"next_attempt_at": bindparam("at")}), (gave_up, {"status": FAILED})):
        if rows:
            await session.execute(update(table).where(ours).values(**common, **values), rows)
    succeeded = {a.endpoint_id for a in attempts if a.ok}
    failed = {a.endpoint_id for a in attempts if not a.ok} - succeeded
    if succeeded:
        await session.execute(
            update(WebhookEndpoint)
            .where(WebhookEndpoint.id.in_(sorted(succeeded)), WebhookEndpoint.failing_since.is_not(None))
            .values(failing_since=None)
        )
    if failed:
        await session.execute(
            update(WebhookEndpoint)
            .where(WebhookEndpoint.id.in_(sorted(failed)), WebhookEndpoint.failing_since.is_(None))
            .values(failing_since=now)
        )


@dataclass(frozen=True, slots=True)
class GivenBack:
    """A leased delivery that was not sent (its endpoint is held or was disabled, the dispatcher is stopping):
    due again at ``at``, the lease's attempt not counted; ``note`` (why) goes into the delivery log's last error
    (None: the log is left as it was). ``lease`` as in ``Attempt``."""

    id: int
    lease: int
    at: datetime
    note: str | None = None


async def give_back(session: AsyncSession, rows: Sequence[GivenBack]) -> None:
    """Return leases unused (one batched statement)."""
    table = cast(Table, WebhookDelivery.__table__)
    await session.execute(
        update(table)
        .where(table.c.id == bindparam("row_id"), table.c.status == PENDING, table.c.attempts == bindparam("lease"))
        .values(
            next_attempt_at=bindparam("at"),
            attempts=table.c.attempts - 1,
            last_error=func.coalesce(bindparam("note", type_=String), table.c.last_error),
        ),
        [{"row_id": r.id, "lease": r.lease, "at": r.at, "note": r.note and r.note[:300]} for r in rows],
    )


async def depth(db: Database) -> int:
    """Deliveries waiting (for enabled and disabled endpoints)."""
    async with db.read() as session:
        return int(await session.scalar(select(func.count()).where(WebhookDelivery.status == PENDING)) or 0)
