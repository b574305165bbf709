"""Which FHIR Subscriptions an appointment change notifies (docs/fhir.md#subscription), decided in the transaction
of the change, for the webhook outbox (``services/webhooks/outbox.enqueue`` writes the deliveries).

An appointment changed by the events of one transaction is notified once per subscription, in its state at the
end of the transaction: when it meets the subscription's criteria and the subscription's owner may read it now
(the owner's rights as they are at the change: a doctor their own appointments, support and admins all; a key
with ``appointments:read`` all, one with only ``appointments:write`` what its account requested; nothing for a
deactivated user, a revoked key or a deactivated account). The body is the Appointment as the FHIR interface
reads it, or empty when the subscription asked for no payload.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.event_kinds import APPOINTMENT_KINDS
from doctordesk.domain.events import DomainEvent
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.fhir import subscriptions as rules
from doctordesk.domain.integration import Scope
from doctordesk.domain.roles import Role
from doctordesk.services.appointments.reading import base_query
from doctordesk.services.fhir import appointments as fhir_appointments
from doctordesk.store.fhir_tables import FhirSubscription
from doctordesk.store.integration_tables import ApiKey, IntegrationRequest, ServiceAccount
from doctordesk.store.tables import Appointment, User

# (endpoint id, event type, body, subject): one delivery.
Notification = tuple[int, str, str, str]


@dataclass(frozen=True, slots=True)
class Subscriber:
    """An active subscription and what its owner may read now: everything, one doctor's appointments, or the
    appointments one service account requested."""

    endpoint_id: int
    match: dict[str, Any]
    payload: str | None
    everything: bool = False
    doctor_id: int | None = None
    account_id: int | None = None


def _subscriber(row: Any) -> Subscriber | None:
    endpoint_id, match, payload, user_id, role, user_active, scopes, revoked_at, account_id, account_active = row
    base = {"endpoint_id": endpoint_id, "match": match or {}, "payload": payload}
    if user_id is not None:
        if not user_active:
            return None
        if role == Role.DOCTOR.value:
            return Subscriber(**base, doctor_id=user_id)
        return Subscriber(**base, everything=True) if role in (Role.SUPPORT.value, Role.ADMIN.value) else None
    granted = set(scopes or ())
    if revoked_at is not None or not account_active or Scope.SUBSCRIPTIONS_WRITE.value not in granted:
        return None
    if Scope.APPOINTMENTS_READ.value in granted:
        return Subscriber(**base, everything=True)
    return Subscriber(**base, account_id=account_id) if Scope.APPOINTMENTS_WRITE.value in granted else None


async def _subscribers(session: AsyncSession, channels: Sequence[int], *, now: datetime) -> list[Subscriber]:
    rows = await session.execute(
        select(
            FhirSubscription.endpoint_id,
            FhirSubscription.match,
            FhirSubscription.payload,
            FhirSubscription.user_id,
            User.role,
            User.active,
            ApiKey.scopes,
            ApiKey.revoked_at,
            FhirSubscription.service_account_id,
            ServiceAccount.active,
        )
        .outerjoin(User, User.id == FhirSubscription.user_id)
        .outerjoin(ApiKey, ApiKey.id == FhirSubscription.api_key_id)
        .outerjoin(ServiceAccount, ServiceAccount.id == FhirSubscription.service_account_id)
        .where(
            FhirSubscription.endpoint_id.in_(list(channels)),
            FhirSubscription.status == "active",
            FhirSubscription.deleted_at.is_(None),
            or_(FhirSubscription.end_at.is_(None), FhirSubscription.end_at > now),
        )
        .order_by(FhirSubscription.endpoint_id)
    )
    return [s for row in rows.all() if (s := _subscriber(row)) is not None]


async def _may_read(session: AsyncSession, s: Subscriber, a: Appointment) -> bool:
    if s.everything:
        return True
    if s.doctor_id is not None:
        return a.doctor_id == s.doctor_id
    origin = await session.get(IntegrationRequest, a.id)
    return origin is not None and origin.service_account_id == s.account_id


async def _resource(session: AsyncSession, appointment_id: int) -> str:
    row = (await session.execute(base_query().where(Appointment.id == appointment_id))).first()
    body = await fhir_appointments.resource_of(session, row)
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


async def notifications(
    session: AsyncSession, typed: Sequence[tuple[DomainEvent, str]], *, channels: Sequence[int], now: datetime
) -> list[Notification]:
    """The notifications the appointment events of a transaction cause (``typed``: each event with its webhook
    event type) among the subscription endpoints ``channels`` (enabled ones)."""
    changed: dict[int, str] = {}
    for event, event_type in typed:
        appointment_id = event.data.get("appointment_id")
        if event.kind in APPOINTMENT_KINDS and isinstance(appointment_id, int):
            changed[appointment_id] = event_type  # the last event names the change
    if not changed:
        return []
    subscribers = await _subscribers(session, channels, now=now)
    out: list[Notification] = []
    for appointment_id, event_type in changed.items():
        a = await session.get(Appointment, appointment_id)
        if a is None or not subscribers:
            continue
        facts = {
            "status": fhir_mapping.APPOINTMENT_STATUS[Status(a.status)],
            "practitioner": a.doctor_id,
            "patient": a.patient_id,
            "location": a.location_id,
        }
        subject = f"Appointment/{a.id}"
        body: str | None = None
        for s in subscribers:
            if not rules.matches(s.match, facts) or not await _may_read(session, s, a):
                continue
            if s.payload and body is None:
                body = await _resource(session, a.id)
            out.append((s.endpoint_id, event_type, body if s.payload and body else "", subject))
    return out
