"""A Subscription's delivery log for its owner (docs/fhir.md#delivery-log): ``GET
/fhir/Subscription/<id>/$deliveries``, the notifications written for it, newest first, as a Parameters resource
(R4 has no resource for a delivery): each one's stable event id (``webhook-id``), event, subject, state,
attempts and the last attempt's outcome. The rights are the subscription's read: its owner only (404 for anyone
else, 410 once deleted)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.runtime import Runtime
from doctordesk.services.fhir.access import Caller
from doctordesk.services.fhir.subscriptions import owned_row, require_subscriber
from doctordesk.store.webhook_tables import WebhookDelivery

OPERATION = "urn:doctordesk:fhir:OperationDefinition/Subscription-deliveries"


def _delivery(d: WebhookDelivery) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [
        {"name": "id", "valueString": d.message_id},
        {"name": "event", "valueString": d.event_type},
    ]
    if d.subject:
        parts.append({"name": "subject", "valueReference": {"reference": d.subject}})
    parts += [
        {"name": "status", "valueCode": d.status},
        {"name": "created", "valueInstant": fhir_mapping.instant(d.created_at)},
        {"name": "attempts", "valueInteger": d.attempts},
    ]
    if d.last_attempt_at is not None:
        parts.append({"name": "lastAttempt", "valueInstant": fhir_mapping.instant(d.last_attempt_at)})
    if d.last_status_code is not None:
        parts.append({"name": "lastStatusCode", "valueInteger": d.last_status_code})
    if d.last_error:
        parts.append({"name": "lastError", "valueString": d.last_error})
    if d.delivered_at is not None:
        parts.append({"name": "delivered", "valueInstant": fhir_mapping.instant(d.delivered_at)})
    return {"name": "delivery", "part": parts}


async def deliveries(rt: Runtime, caller: Caller, sub_id: int, count: int) -> dict[str, Any]:
    """The ``count`` newest deliveries of the caller's subscription."""
    require_subscriber(caller)
    async with rt.db.read() as session:
        sub, _endpoint = await owned_row(session, caller, sub_id)
        rows = (
            await session.scalars(
                select(WebhookDelivery)
                .where(WebhookDelivery.endpoint_id == sub.endpoint_id)
                .order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.id.desc())
                .limit(count)
            )
        ).all()
    out: dict[str, Any] = {"resourceType": "Parameters"}
    if rows:
        out["parameter"] = [_delivery(d) for d in rows]
    return out
