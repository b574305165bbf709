"""Admins' view of webhook deliveries: the log per endpoint (newest first, keyset paged), replays that keep the
delivery's ``webhook-id`` (so receivers de-duplicate), a test event, and the admin notices."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select, update

from doctordesk.domain.errors import NotFound
from doctordesk.domain.events import DomainEvent
from doctordesk.domain.roles import Actor, require_admin
from doctordesk.domain.texts import N_, from_json
from doctordesk.domain.webhooks import rules as webhook_rules
from doctordesk.domain.webhooks.views import DeliveryView, NoticeView
from doctordesk.runtime import Runtime
from doctordesk.services.audit.changes import record_change
from doctordesk.services.uow import UnitOfWork, unit_of_work
from doctordesk.services.webhooks.endpoints import MESSAGE, endpoint_row
from doctordesk.services.webhooks.outbox import FAILED, PENDING, delivery_values
from doctordesk.store.webhook_tables import AdminNotice, WebhookDelivery


def delivery_view(delivery: WebhookDelivery) -> DeliveryView:
    return DeliveryView(
        delivery.id,
        delivery.message_id,
        delivery.endpoint_id,
        delivery.event_type,
        delivery.created_at,
        delivery.status,
        delivery.attempts,
        delivery.next_attempt_at if delivery.status == PENDING else None,
        delivery.delivered_at,
        delivery.last_attempt_at,
        delivery.last_status_code,
        delivery.last_error,
        delivery.replays,
        delivery.payload,
    )


async def list_deliveries(
    rt: Runtime,
    actor: Actor,
    endpoint_id: int,
    *,
    status: str | None = None,
    before_id: int | None = None,
    limit: int,
) -> list[DeliveryView]:
    """An endpoint's deliveries, newest first, continuing below ``before_id``; up to ``limit``."""
    require_admin(actor)
    async with rt.db.read() as session:
        await endpoint_row(session, endpoint_id)
        query = select(WebhookDelivery).where(WebhookDelivery.endpoint_id == endpoint_id)
        if status is not None:
            query = query.where(WebhookDelivery.status == status)
        if before_id is not None:
            query = query.where(WebhookDelivery.id < before_id)
        rows = (await session.scalars(query.order_by(WebhookDelivery.id.desc()).limit(limit))).all()
        return [delivery_view(r) for r in rows]


async def get_delivery(rt: Runtime, actor: Actor, endpoint_id: int, delivery_id: int) -> DeliveryView:
    require_admin(actor)
    async with rt.db.read() as session:
        await endpoint_row(session, endpoint_id)
        row = await session.get(WebhookDelivery, delivery_id)
        if row is None or row.endpoint_id != endpoint_id:
            raise NotFound(N_("No such delivery."))
        return delivery_view(row)


def _audited(d: WebhookDelivery) -> dict[str, object]:
    """What the audit keeps of a delivery: which message, and its state (never the body)."""
    return {"delivery_id": d.id, "message_id": d.message_id, "event_type": d.event_type, "status": d.status,
            "attempts": d.attempts, "replays": d.replays}  # fmt: skip


def _queued(uow: UnitOfWork) -> None:
    uow.emit(DomainEvent(webhook_rules.QUEUED_EVENT, topics=()))


async def replay(rt: Runtime, actor: Actor, endpoint_id: int, delivery_id: int) -> DeliveryView:
    """Send a delivery again, whatever its state: the same ``webhook-id`` and body, due now, attempts from zero."""
    require_admin(actor)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        await endpoint_row(uow.session, endpoint_id)
        row = await uow.session.get(WebhookDelivery, delivery_id, with_for_update=True)
        if row is None or row.endpoint_id != endpoint_id:
            raise NotFound(N_("No such delivery."))
        before = _audited(row)
        row.status, row.attempts, row.next_attempt_at, row.replays = PENDING, 0, now, row.replays + 1
        record_change(
            uow.session, actor, at=now, action="webhook.replay", entity="webhook_endpoint", entity_id=endpoint_id,
            before=before, after=_audited(row),
        )  # fmt: skip
        _queued(uow)
    return delivery_view(row)


async def replay_failed(rt: Runtime, actor: Actor, endpoint_id: int, *, since: datetime) -> int:
    """Send again every failed delivery of the endpoint created at or after ``since``; how many."""
    require_admin(actor)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        await endpoint_row(uow.session, endpoint_id)
        result = await uow.session.execute(
            update(WebhookDelivery)
            .where(
                WebhookDelivery.endpoint_id == endpoint_id,
                WebhookDelivery.status == FAILED,
                WebhookDelivery.created_at >= since,
            )
            .values(status=PENDING, attempts=0, next_attempt_at=now, replays=WebhookDelivery.replays + 1)
        )
        count = int(getattr(result, "rowcount", 0) or 0)
        record_change(
            uow.session, actor, at=now, action="webhook.replay-failed", entity="webhook_endpoint",
            entity_id=endpoint_id, before={"status": FAILED, "since": since.isoformat(), "count": count},
            after={"status": PENDING, "since": since.isoformat(), "count": count},
        )  # fmt: skip
        if count:
            _queued(uow)
    return count


async def send_test(rt: Runtime, actor: Actor, endpoint_id: int) -> DeliveryView:
    """Queue a ``webhook.test`` event to the endpoint (whatever it subscribes to)."""
    require_admin(actor)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        await endpoint_row(uow.session, endpoint_id)
        body = webhook_rules.payload(webhook_rules.TEST_EVENT, at=now, data={"endpoint_id": endpoint_id})
        row = WebhookDelivery(**delivery_values(endpoint_id, webhook_rules.TEST_EVENT, body, now=now))
        uow.session.add(row)
        await uow.session.flush()
        record_change(
            uow.session, actor, at=now, action="webhook.send-test", entity="webhook_endpoint",
            entity_id=endpoint_id, before=None, after=_audited(row),
        )  # fmt: skip
        _queued(uow)
    return delivery_view(row)


async def list_notices(rt: Runtime, actor: Actor, *, before_id: int | None = None, limit: int) -> list[NoticeView]:
    """Notices for admins, newest first."""
    require_admin(actor)
    async with rt.db.read() as session:
        query = select(AdminNotice)
        if before_id is not None:
            query = query.where(AdminNotice.id < before_id)
        rows = (await session.scalars(query.order_by(AdminNotice.id.desc()).limit(limit))).all()
    out = []
    for r in rows:
        details = dict(r.details or {})
        # The text as a template (a Text, given in the reader's language) where the notice kept one.
        text = from_json(details.pop(MESSAGE, None)) or r.text
        out.append(NoticeView(r.id, r.created_at, r.kind, text, details))
    return out
