"""Admins' webhook use cases: register, read, change, disable and enable endpoints, rotate the signing secret; and
disabling an endpoint (also done by the dispatcher, which then tells the admins).

Every change is audited with the endpoint before and after (never a secret). Endpoints are never deleted: their
deliveries are the log.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.errors import NotFound, ValidationFailed
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import DomainEvent
from doctordesk.domain.roles import Actor, Role, require_admin
from doctordesk.domain.texts import N_, Text, from_json, to_json
from doctordesk.domain.webhooks import rules as webhook_rules
from doctordesk.domain.webhooks.signing_secrets import new_secret
from doctordesk.domain.webhooks.views import EndpointView
from doctordesk.realtime import outbox
from doctordesk.realtime.message import TIMEOUT_ONLY
from doctordesk.runtime import Runtime
from doctordesk.services.audit.changes import record_change
from doctordesk.services.uow import unit_of_work
from doctordesk.store.tables import User
from doctordesk.store.webhook_tables import AdminNotice, WebhookEndpoint

ENDPOINT_DISABLED = EventKind.WEBHOOK_ENDPOINT_DISABLED
# An admin notice's text as a template and values (domain/texts.py), kept in its details: read in the reader's
# language.
MESSAGE = "message"


@dataclass(frozen=True, slots=True)
class EndpointChanges:
    """What an update sets; None leaves a field as it is."""

    url: str | None = None
    description: str | None = None
    event_types: Sequence[str] | None = None
    include_content: bool | None = None


def endpoint_view(endpoint: WebhookEndpoint) -> EndpointView:
    return EndpointView(
        endpoint.id,
        endpoint.url,
        endpoint.description,
        tuple(endpoint.event_types or ()),
        endpoint.include_content,
        endpoint.enabled,
        endpoint.disabled_at,
        from_json(endpoint.disabled_message) or endpoint.disabled_reason,
        endpoint.failing_since,
        endpoint.created_at,
        endpoint.updated_at,
    )


def _audited(e: WebhookEndpoint) -> dict[str, Any]:
    """What the audit keeps of an endpoint: everything but its secrets (and when the previous one expires)."""
    return {
        "url": e.url,
        "description": e.description,
        "event_types": list(e.event_types),
        "include_content": e.include_content,
        "enabled": e.enabled,
        "disabled_reason": e.disabled_reason,
        "previous_secret_until": e.previous_secret_until.isoformat() if e.previous_secret_until else None,
    }


def _record(
    session: AsyncSession,
    actor: Actor | None,
    row: WebhookEndpoint,
    action: str,
    before: dict[str, Any] | None,
    *,
    now: datetime,
) -> None:
    record_change(
        session,
        actor,
        at=now,
        action=action,
        entity="webhook_endpoint",
        entity_id=row.id,
        before=before,
        after=_audited(row),
    )


async def endpoint_row(session: AsyncSession, endpoint_id: int, *, lock: bool = False) -> WebhookEndpoint:
    """An admin's webhook endpoint (a FHIR Subscription's channel is not one: NotFound)."""
    query = select(WebhookEndpoint).where(
        WebhookEndpoint.id == endpoint_id, WebhookEndpoint.kind == webhook_rules.WEBHOOK_KIND
    )
    if lock:
        query = query.with_for_update()
    row = await session.scalar(query)
    if row is None:
        raise NotFound(N_("No such webhook endpoint."))
    return row


def _description(raw: str | None) -> str:
    text = (raw or "").strip()
    if len(text) > webhook_rules.MAX_DESCRIPTION_CHARS:
        raise ValidationFailed(
            fields={"description": Text("At most {count} characters.", count=webhook_rules.MAX_DESCRIPTION_CHARS)}
        )
    return text


async def create_endpoint(
    rt: Runtime,
    actor: Actor,
    *,
    url: str,
    event_types: Sequence[str],
    description: str | None = None,
    include_content: bool = False,
) -> tuple[EndpointView, str]:
    """Register an endpoint; the answer carries its signing secret (shown this once)."""
    require_admin(actor)
    allow_private = rt.settings.webhook_allow_private_addresses
    fields: dict[str, str] = {}
    checked: dict[str, Any] = {}
    for name, check in (
        ("url", lambda: webhook_rules.check_url(url, allow_private=allow_private)),
        ("event_types", lambda: webhook_rules.clean_event_types(event_types)),
        ("description", lambda: _description(description)),
    ):
        try:
            checked[name] = check()
        except ValidationFailed as exc:
            fields.update(exc.fields)
    if fields:
        raise ValidationFailed(fields=fields)
    now = rt.clock.now()
    secret = new_secret()
    async with unit_of_work(rt) as uow:
        row = WebhookEndpoint(
            url=checked["url"],
            description=checked["description"],
            event_types=checked["event_types"],
            include_content=include_content,
            secret=secret,
            enabled=True,
            created_by=actor.user_id,
            created_at=now,
            updated_at=now,
        )
        uow.session.add(row)
        await uow.session.flush()
        _record(uow.session, actor, row, "webhook.create", None, now=now)
    return endpoint_view(row), secret


async def list_endpoints(rt: Runtime, actor: Actor) -> list[EndpointView]:
    """Every endpoint, disabled ones included, oldest first."""
    require_admin(actor)
    async with rt.db.read() as session:
        rows = (
            await session.scalars(
                select(WebhookEndpoint)
                .where(WebhookEndpoint.kind == webhook_rules.WEBHOOK_KIND)
                .order_by(WebhookEndpoint.id)
            )
        ).all()
        return [endpoint_view(r) for r in rows]


async def get_endpoint(rt: Runtime, actor: Actor, endpoint_id: int) -> EndpointView:
    require_admin(actor)
    async with rt.db.read() as session:
        return endpoint_view(await endpoint_row(session, endpoint_id))


async def update_endpoint(rt: Runtime, actor: Actor, endpoint_id: int, changes: EndpointChanges) -> EndpointView:
    """Change the URL, description, subscribed types or the content flag (deliveries already queued keep the
    body they were created with)."""
    require_admin(actor)
    values: dict[str, Any] = {}
    if changes.url is not None:
        values["url"] = webhook_rules.check_url(changes.url, allow_private=rt.settings.webhook_allow_private_addresses)
    if changes.event_types is not None:
        values["event_types"] = webhook_rules.clean_event_types(changes.event_types)
    if changes.description is not None:
        values["description"] = _description(changes.description)
    if changes.include_content is not None:
        values["include_content"] = changes.include_content
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        row = await endpoint_row(uow.session, endpoint_id, lock=True)
        before = _audited(row)
        for name, value in values.items():
            setattr(row, name, value)
        row.updated_at = now
        _record(uow.session, actor, row, "webhook.update", before, now=now)
    return endpoint_view(row)


async def set_enabled(
    rt: Runtime, actor: Actor, endpoint_id: int, *, enabled: bool, reason: str | None = None
) -> EndpointView:
    """Disable (with an optional reason) or enable again. Enabling clears the failing streak; deliveries that
    waited meanwhile go out, failed ones only when replayed."""
    require_admin(actor)
    text = _description(reason) or Text("Disabled by an admin.")
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        row = await endpoint_row(uow.session, endpoint_id, lock=True)
        if not enabled:
            if row.enabled:
                disable(uow.session, row, now=now, reason=text, actor=actor)
        elif not row.enabled:
            before = _audited(row)
            row.enabled, row.disabled_at, row.disabled_reason, row.failing_since = True, None, None, None
            row.disabled_message = None
            row.updated_at = now
            _record(uow.session, actor, row, "webhook.enable", before, now=now)
            uow.emit(DomainEvent(webhook_rules.QUEUED_EVENT, topics=()))
    return endpoint_view(row)


async def rotate_secret(rt: Runtime, actor: Actor, endpoint_id: int) -> tuple[EndpointView, str, datetime]:
    """A new signing secret (shown this once); the old one keeps signing too until the returned time."""
    require_admin(actor)
    now = rt.clock.now()
    until = now + timedelta(seconds=rt.settings.webhook_secret_overlap_seconds)
    secret = new_secret()
    async with unit_of_work(rt) as uow:
        row = await endpoint_row(uow.session, endpoint_id, lock=True)
        before = _audited(row)
        row.previous_secret, row.previous_secret_until = row.secret, until
        row.secret = secret
        row.updated_at = now
        _record(uow.session, actor, row, "webhook.rotate-secret", before, now=now)
    return endpoint_view(row), secret, until


def disable(session: AsyncSession, row: WebhookEndpoint, *, now: datetime, reason: str, actor: Actor | None) -> None:
    """Mark an endpoint disabled (its pending deliveries wait) and audit it; ``actor`` None: the service did."""
    before = _audited(row)
    row.enabled = False
    row.disabled_at = now
    row.disabled_reason = reason[:300]
    # The service's reasons are texts, shown in each reader's language; a reason an admin typed stays as typed.
    row.disabled_message = to_json(reason) if isinstance(reason, Text) else None
    row.updated_at = now
    _record(session, actor, row, "webhook.disable", before, now=now)


async def disable_and_tell_admins(
    session: AsyncSession, endpoint_ids: Sequence[int], *, now: datetime, reason: str
) -> list[int]:
    """The service disables endpoints on its own (failing too long, or 410 Gone): audited, a notice for the
    admins, and a push to every active admin's devices. The ids actually disabled (not already disabled; FHIR
    Subscriptions' endpoints are left to ``fhir_subscriptions.mark_error``)."""
    rows = (
        await session.scalars(
            select(WebhookEndpoint)
            .where(
                WebhookEndpoint.id.in_(list(endpoint_ids)),
                WebhookEndpoint.enabled.is_(True),
                WebhookEndpoint.kind == webhook_rules.WEBHOOK_KIND,
            )
            .order_by(WebhookEndpoint.id)
            .with_for_update()
        )
    ).all()
    if not rows:
        return []
    for row in rows:
        disable(session, row, now=now, reason=reason, actor=None)
        told = Text("Webhook endpoint #{id} ({url}) was disabled: {reason}", id=row.id, url=row.url, reason=reason)
        session.add(
            AdminNotice(
                created_at=now,
                kind=ENDPOINT_DISABLED,
                text=told[:1000],
                details={
                    "endpoint_id": row.id,
                    "url": row.url,
                    "reason": row.disabled_reason,
                    MESSAGE: to_json(told),
                },
            )
        )
    admins = (await session.scalars(select(User.id).where(User.role == Role.ADMIN.value, User.active.is_(True)))).all()
    if admins:
        text = (
            Text("{count} webhook endpoints were disabled: {reason}", count=len(rows), reason=reason)
            if len(rows) > 1
            else Text("A webhook endpoint was disabled: {reason}", reason=reason)
        )
        event = DomainEvent(ENDPOINT_DISABLED, topics=(), notify_user_ids=tuple(admins), notify_text=text)
        await outbox.enqueue(session, [event], now=now, data_for=lambda _e, _d: str(TIMEOUT_ONLY))
    return [r.id for r in rows]
