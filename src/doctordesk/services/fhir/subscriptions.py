"""FHIR R4 Subscriptions (docs/fhir.md#subscription): create, read, search, update and delete, and the service
putting a subscription into ``error`` when its endpoint keeps failing.

A subscription's channel is a webhook endpoint of kind ``fhir-subscription`` (URL, signing secret, enabled state,
failing streak), so its notifications go through the webhook outbox and dispatcher
(``services/webhooks/subscription_outbox.py`` picks them). Owners: a service account (keys with ``subscriptions:write``)
or a staff user (doctor, support, admin); each sees only its own subscriptions, anything else is 404. Nothing is
ever deleted: a deleted subscription is off and reads 410.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, false, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.errors import Forbidden, NotFound, ValidationFailed
from doctordesk.domain.events import DomainEvent
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.fhir import subscriptions as rules
from doctordesk.domain.fhir.errors import Gone, Unprocessable
from doctordesk.domain.fhir.subscriptions import SubscriptionInput
from doctordesk.domain.integration import Integration, Scope
from doctordesk.domain.keyset import Position
from doctordesk.domain.roles import Role
from doctordesk.domain.texts import N_, Text
from doctordesk.domain.webhooks import rules as webhook_rules
from doctordesk.domain.webhooks.signing_secrets import new_secret
from doctordesk.runtime import Runtime
from doctordesk.services.audit.entries import audit
from doctordesk.services.fhir.access import Caller
from doctordesk.services.fhir.search import Search, bundle, check
from doctordesk.services.uow import UnitOfWork, unit_of_work
from doctordesk.store import keyset
from doctordesk.store.fhir_tables import FhirSubscription
from doctordesk.store.integration_tables import ServiceAccount
from doctordesk.store.tables import User
from doctordesk.store.webhook_tables import WebhookEndpoint

log = logging.getLogger(__name__)

SEARCH_PARAMETERS = ("status",)
SUBSCRIPTION_STATUSES = frozenset({"requested", "active", "error", "off"})
OFF_REASON = "Turned off by its owner."
DELETED_REASON = "Deleted by its owner."
Row = tuple[FhirSubscription, WebhookEndpoint]


def require_subscriber(caller: Caller) -> None:
    """API keys need ``subscriptions:write``; users must be staff (doctor, support, admin)."""
    if isinstance(caller, Integration):
        if not caller.has(Scope.SUBSCRIPTIONS_WRITE):
            raise Forbidden(N_("This API key lacks the scope subscriptions:write."))
    elif caller.role is Role.PATIENT:
        raise Forbidden(N_("Subscriptions are for the clinic's staff and systems."))


def _check_rights(caller: Caller, wanted: SubscriptionInput) -> None:
    """What the owner could never be sent is refused up front: a key without any appointments scope, a doctor
    naming another practitioner. (Deliveries are narrowed to the owner's rights at each change anyway.)"""
    if isinstance(caller, Integration):
        if not (caller.has(Scope.APPOINTMENTS_READ) or caller.has(Scope.APPOINTMENTS_WRITE)):
            raise Forbidden(N_("This API key lacks the scope appointments:read (or appointments:write)."))
    elif caller.role is Role.DOCTOR and rules.practitioners(wanted.match) - {caller.user_id}:
        raise Forbidden(fields={"criteria": N_("A doctor subscribes to their own appointments only.")})


def _mine(caller: Caller) -> ColumnElement[bool]:
    if isinstance(caller, Integration):
        return FhirSubscription.service_account_id == caller.service_account_id
    return FhirSubscription.user_id == caller.user_id


def resource(sub: FhirSubscription, endpoint: WebhookEndpoint, *, now: datetime) -> dict[str, Any]:
    """A subscription as an R4 Subscription resource."""
    status, error = rules.status_of(
        asked=sub.status, enabled=endpoint.enabled, end=sub.end_at, now=now, disabled_reason=endpoint.disabled_reason
    )
    channel: dict[str, Any] = {"type": rules.CHANNEL, "endpoint": endpoint.url}
    if sub.payload:
        channel["payload"] = sub.payload
    if sub.headers:
        channel["header"] = list(sub.headers)
    body: dict[str, Any] = {
        "resourceType": "Subscription",
        "id": str(sub.id),
        "meta": {"lastUpdated": fhir_mapping.instant(max(sub.updated_at, endpoint.updated_at))},
        "status": status,
    }
    if sub.end_at is not None:
        body["end"] = fhir_mapping.instant(sub.end_at)
    body["reason"] = sub.reason
    body["criteria"] = sub.criteria
    if error:
        body["error"] = error
    body["channel"] = channel
    return body


def _audited(sub: FhirSubscription, endpoint: WebhookEndpoint) -> dict[str, Any]:
    """What the audit keeps: everything but the header values (they often carry the receiver's credentials)."""
    return {
        "criteria": sub.criteria,
        "endpoint": endpoint.url,
        "payload": sub.payload,
        "headers": [name for name, _ in rules.header_pairs(sub.headers)],
        "status": sub.status,
        "enabled": endpoint.enabled,
        "end": sub.end_at.isoformat() if sub.end_at else None,
    }


def _record(
    session: AsyncSession, caller: Caller | None, action: str, row: Row, before: dict[str, Any] | None, *, now: datetime
) -> None:
    details: dict[str, Any] = {"before": before, "after": _audited(*row)}
    if isinstance(caller, Integration):
        details.update(caller.audit_details())
    actor_id = caller.user_id if caller is not None and not isinstance(caller, Integration) else None
    audit(
        session, at=now, actor_id=actor_id, action=action, entity="fhir_subscription", entity_id=row[0].id,
        details=details,
    )  # fmt: skip


async def _row(session: AsyncSession, caller: Caller, sub_id: int, *, lock: bool = False) -> Row:
    """The caller's subscription (404 for anyone else's, as for an unknown id; 410 once deleted)."""
    query = (
        select(FhirSubscription, WebhookEndpoint)
        .join(WebhookEndpoint, WebhookEndpoint.id == FhirSubscription.endpoint_id)
        .where(FhirSubscription.id == sub_id, _mine(caller))
    )
    if lock:
        query = query.with_for_update()
    found = (await session.execute(query)).first()
    if found is None:
        raise NotFound(N_("Subscription not found."))
    sub, endpoint = found
    if sub.deleted_at is not None:
        raise Gone(N_("This subscription was deleted."))
    return sub, endpoint


async def _check_room(session: AsyncSession, caller: Caller, *, now: datetime) -> None:
    """Refused when the owner already has the most subscriptions on. The owner's row is locked first (PostgreSQL;
    SQLite's writers take turns anyway), so two creates at the same moment are counted one after the other."""
    if session.get_bind().dialect.name != "sqlite":
        owner = (
            select(ServiceAccount.id).where(ServiceAccount.id == caller.service_account_id)
            if isinstance(caller, Integration)
            else select(User.id).where(User.id == caller.user_id)
        )
        await session.execute(owner.with_for_update())
    taken = await session.scalar(
        select(func.count())
        .select_from(FhirSubscription)
        .where(
            _mine(caller),
            FhirSubscription.status == "active",
            FhirSubscription.deleted_at.is_(None),
            or_(FhirSubscription.end_at.is_(None), FhirSubscription.end_at > now),
        )
    )
    if int(taken or 0) >= rules.MAX_ACTIVE_PER_OWNER:
        raise Unprocessable(
            Text(
                "At most {max_active_per_owner} subscriptions may be on at once; turn one off first.",
                max_active_per_owner=rules.MAX_ACTIVE_PER_OWNER,
            ),
            fields={
                "status": Text(
                    "At most {max_active_per_owner} subscriptions that are not off.",
                    max_active_per_owner=rules.MAX_ACTIVE_PER_OWNER,
                )
            },
        )


def _parse(rt: Runtime, caller: Caller, body: dict[str, Any]) -> SubscriptionInput:
    require_subscriber(caller)
    wanted = rules.parse(body, allow_private=rt.settings.webhook_allow_private_addresses)
    _check_rights(caller, wanted)
    return wanted


def _switch(uow: UnitOfWork, endpoint: WebhookEndpoint, *, on: bool, reason: str, now: datetime) -> None:
    """Deliveries on (a failing streak forgotten; what waited goes out) or off (queued ones wait)."""
    if on and not endpoint.enabled:
        endpoint.enabled, endpoint.disabled_at, endpoint.disabled_reason, endpoint.failing_since = (
            True,
            None,
            None,
            None,
        )
        uow.emit(DomainEvent(webhook_rules.QUEUED_EVENT, topics=()))
    elif not on and (endpoint.enabled or endpoint.disabled_reason != reason):
        endpoint.enabled, endpoint.disabled_at, endpoint.disabled_reason = False, now, reason


def _apply(sub: FhirSubscription, endpoint: WebhookEndpoint, wanted: SubscriptionInput, *, now: datetime) -> None:
    sub.criteria, sub.match, sub.reason = wanted.criteria, wanted.match, wanted.reason
    sub.payload, sub.headers, sub.end_at, sub.status = wanted.payload, wanted.headers, wanted.end, wanted.status
    sub.updated_at = now
    endpoint.url, endpoint.description, endpoint.updated_at = wanted.endpoint, wanted.reason, now


async def create(rt: Runtime, caller: Caller, body: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A new subscription (``requested`` → ``active``), and its signing secret (shown this once)."""
    wanted = _parse(rt, caller, body)
    now = rt.clock.now()
    secret = new_secret()
    async with unit_of_work(rt) as uow:
        if wanted.status == "active":
            await _check_room(uow.session, caller, now=now)
        on = wanted.status == "active"
        endpoint = WebhookEndpoint(
            kind=webhook_rules.SUBSCRIPTION_KIND, url=wanted.endpoint, description=wanted.reason, event_types=[],
            include_content=False, secret=secret, enabled=on, disabled_at=None if on else now,
            disabled_reason=None if on else OFF_REASON, created_by=None, created_at=now, updated_at=now,
        )  # fmt: skip
        uow.session.add(endpoint)
        await uow.session.flush()
        sub = FhirSubscription(endpoint_id=endpoint.id, created_at=now)
        if isinstance(caller, Integration):
            sub.service_account_id, sub.api_key_id = caller.service_account_id, caller.key_id
        else:
            sub.user_id = endpoint.created_by = caller.user_id
        _apply(sub, endpoint, wanted, now=now)
        uow.session.add(sub)
        await uow.session.flush()
        _record(uow.session, caller, "fhir-subscription.create", (sub, endpoint), None, now=now)
    return resource(sub, endpoint, now=now), secret


async def owned_row(session: AsyncSession, caller: Caller, sub_id: int) -> Row:
    """The caller's subscription and its channel (404 for anyone else's, 410 once deleted)."""
    return await _row(session, caller, sub_id)


async def read(rt: Runtime, caller: Caller, sub_id: int) -> dict[str, Any]:
    require_subscriber(caller)
    async with rt.db.read() as session:
        sub, endpoint = await _row(session, caller, sub_id)
    return resource(sub, endpoint, now=rt.clock.now())


def _status_filter(values: list[str], now: datetime) -> ColumnElement[bool]:
    ended = and_(FhirSubscription.end_at.is_not(None), FhirSubscription.end_at <= now)
    running = and_(FhirSubscription.status == "active", ~ended)
    conditions = {
        "active": and_(running, WebhookEndpoint.enabled.is_(True)),
        "error": and_(running, WebhookEndpoint.enabled.is_(False)),
        "off": or_(FhirSubscription.status == "off", ended),
    }
    wanted = fhir_mapping.token_list(values)
    if any(v not in SUBSCRIPTION_STATUSES for v in wanted):
        raise ValidationFailed(fields={"status": N_("Use requested, active, error or off.")})
    return or_(false(), *(conditions[v] for v in wanted if v in conditions))


async def search(rt: Runtime, caller: Caller, request: Search) -> dict[str, Any]:
    """The caller's subscriptions (deleted ones left out), oldest first, by ``status``."""
    require_subscriber(caller)
    checked = check(request, SEARCH_PARAMETERS)
    now = rt.clock.now()
    query = (
        select(FhirSubscription, WebhookEndpoint)
        .join(WebhookEndpoint, WebhookEndpoint.id == FhirSubscription.endpoint_id)
        .where(_mine(caller), FhirSubscription.deleted_at.is_(None))
    )
    for values in checked.params.get("status", []):
        query = query.where(_status_filter([values], now))
    if checked.after is not None:
        query = query.where(keyset.beyond(FhirSubscription.created_at, FhirSubscription.id, checked.after))
    query = query.order_by(*keyset.ordered(FhirSubscription.created_at, FhirSubscription.id))
    async with rt.db.read() as session:
        rows = (await session.execute(query.limit(checked.count + 1))).all()
    return bundle(
        request,
        checked,
        rows,
        to_resource=lambda r: resource(r[0], r[1], now=now),
        position=lambda r: Position(r[0].created_at, r[0].id),
    )


async def update(rt: Runtime, caller: Caller, sub_id: int, body: dict[str, Any]) -> dict[str, Any]:
    """Replace the subscription (FHIR update): ``off`` pauses it, ``requested`` or ``active`` turns it on again
    (also after ``error``: the failing streak starts anew). A key updating it makes its own rights the ones
    deliveries are narrowed by."""
    if body.get("id") != str(sub_id):
        raise ValidationFailed(fields={"id": N_("Must be the id in the URL.")})
    wanted = _parse(rt, caller, body)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        sub, endpoint = await _row(uow.session, caller, sub_id, lock=True)
        before = _audited(sub, endpoint)
        if wanted.status == "active" and sub.status == "off":
            await _check_room(uow.session, caller, now=now)
        _apply(sub, endpoint, wanted, now=now)
        _switch(uow, endpoint, on=wanted.status == "active", reason=OFF_REASON, now=now)
        if isinstance(caller, Integration):
            sub.api_key_id = caller.key_id
        _record(uow.session, caller, "fhir-subscription.update", (sub, endpoint), before, now=now)
    return resource(sub, endpoint, now=now)


async def delete(rt: Runtime, caller: Caller, sub_id: int) -> None:
    """Turn the subscription off for good; it reads 410 from now on (deleting it again is a no-op)."""
    require_subscriber(caller)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        try:
            sub, endpoint = await _row(uow.session, caller, sub_id, lock=True)
        except Gone:
            return
        before = _audited(sub, endpoint)
        sub.status, sub.deleted_at, sub.updated_at = "off", now, now
        _switch(uow, endpoint, on=False, reason=DELETED_REASON, now=now)
        endpoint.updated_at = now
        _record(uow.session, caller, "fhir-subscription.delete", (sub, endpoint), before, now=now)


async def mark_error(session: AsyncSession, endpoint_ids: Sequence[int], *, now: datetime, reason: str) -> list[int]:
    """The dispatcher gives up on subscription endpoints (failing too long, or 410 Gone): no more deliveries,
    and the subscription reads ``error`` with ``reason`` until its owner turns it on again. Audited, with no
    actor. The endpoint ids actually stopped (other kinds and those already stopped are left alone)."""
    rows = (
        await session.execute(
            select(FhirSubscription, WebhookEndpoint)
            .join(WebhookEndpoint, WebhookEndpoint.id == FhirSubscription.endpoint_id)
            .where(
                WebhookEndpoint.id.in_(list(endpoint_ids)),
                WebhookEndpoint.kind == webhook_rules.SUBSCRIPTION_KIND,
                WebhookEndpoint.enabled.is_(True),
            )
            .order_by(WebhookEndpoint.id)
            .with_for_update()
        )
    ).all()
    for sub, endpoint in rows:
        before = _audited(sub, endpoint)
        endpoint.enabled, endpoint.disabled_at, endpoint.disabled_reason = False, now, reason[:300]
        endpoint.updated_at = now
        _record(session, None, "fhir-subscription.error", (sub, endpoint), before, now=now)
        log.warning("FHIR subscription %s stopped: %s", sub.id, reason)
    return [endpoint.id for _, endpoint in rows]
