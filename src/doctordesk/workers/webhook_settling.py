"""Recording webhook outcomes in one transaction: attempts settled, unused leases given back, and endpoints that
answered 410 or failed too long stopped (an admin's webhook disabled, a FHIR Subscription put into ``error``)."""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.config import Settings
from doctordesk.domain.texts import Text
from doctordesk.services.fhir import subscriptions as fhir_subscriptions
from doctordesk.services.webhooks import outbox as webhook_outbox
from doctordesk.services.webhooks.endpoints import disable_and_tell_admins
from doctordesk.services.webhooks.outbox import Attempt, GivenBack
from doctordesk.store.db import Database
from doctordesk.store.webhook_tables import WebhookEndpoint

log = logging.getLogger("doctordesk.workers.webhook_dispatcher")

GONE_REASON = Text("The endpoint answered 410 Gone.")


async def settle(
    db: Database,
    settings: Settings,
    attempts: Sequence[Attempt],
    *,
    gone: Collection[int],
    now: datetime,
    given_back: Sequence[GivenBack],
) -> set[int]:
    """Record outcomes, give back unused leases, and stop endpoints that answered 410 or failed too long. The
    endpoints stopped."""
    succeeded = {a.endpoint_id for a in attempts if a.ok}
    failing = {a.endpoint_id for a in attempts if not a.ok} - succeeded - set(gone)
    limit = now - timedelta(seconds=settings.webhook_disable_after_seconds)
    stopped: set[int] = set()
    async with db.transaction() as session:
        await webhook_outbox.settle(session, attempts, now=now)
        if given_back:
            await webhook_outbox.give_back(session, given_back)
        if gone:
            await _stop(session, sorted(gone), now=now, reason=GONE_REASON)
            stopped |= set(gone)
        if failing:
            too_long = (
                await session.scalars(
                    select(WebhookEndpoint.id).where(
                        WebhookEndpoint.id.in_(sorted(failing)),
                        WebhookEndpoint.failing_since <= limit,
                        WebhookEndpoint.enabled.is_(True),
                    )
                )
            ).all()
            if too_long:
                days = f"{settings.webhook_disable_after_seconds / 86400:g}"
                reason = Text("Every delivery attempt failed for {days} days.", days=days)
                disabled = await _stop(session, too_long, now=now, reason=reason)
                stopped |= set(disabled)
                for endpoint_id in disabled:
                    log.warning("webhook endpoint %s disabled: failing too long", endpoint_id)
    return stopped


async def _stop(session: AsyncSession, endpoint_ids: Sequence[int], *, now: datetime, reason: str) -> list[int]:
    """Stop delivering to endpoints: an admin's webhook is disabled (and the admins told), a FHIR
    Subscription goes into ``error``."""
    disabled = await disable_and_tell_admins(session, endpoint_ids, now=now, reason=reason)
    return disabled + await fhir_subscriptions.mark_error(session, endpoint_ids, now=now, reason=reason)
