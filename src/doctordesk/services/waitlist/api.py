"""The integration API's view of the waitlist (docs/integration.md, docs/waitlist.md): the offers open now, for a
clinic's systems to see which freed times are promised to whom. Ids and times only, as the webhooks carry them."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select

from doctordesk.domain.integration import Integration, Scope
from doctordesk.domain.waitlist.rules import OfferState
from doctordesk.runtime import Runtime
from doctordesk.services.integration.requests import require
from doctordesk.services.scheduling.clinic_facts import cached_clinic
from doctordesk.services.waitlist.policy import policy
from doctordesk.store.waitlist.tables import WaitlistEntry, WaitlistOffer, WaitlistTime

LIMIT = 500


async def open_offers(rt: Runtime, caller: Integration) -> dict[str, Any]:
    """The open waitlist offers, earliest time first (at most ``LIMIT``); scope ``appointments:read``."""
    require(caller, Scope.APPOINTMENTS_READ)
    now = rt.clock.now()
    async with rt.db.read() as session:
        c = await cached_clinic(rt, session)
        rows = (
            await session.execute(
                select(WaitlistOffer, WaitlistTime, WaitlistEntry.service)
                .join(WaitlistTime, WaitlistTime.id == WaitlistOffer.time_id)
                .join(WaitlistEntry, WaitlistEntry.id == WaitlistOffer.entry_id)
                .where(WaitlistOffer.state == OfferState.OPEN, WaitlistOffer.expires_at > now)
                .order_by(WaitlistTime.start_at, WaitlistOffer.id)
                .limit(LIMIT)
            )
        ).all()
    mode = (await policy(rt)).mode.value
    offers = []
    for o, t, service in rows:
        zone = ZoneInfo(c.directory.locations.get(t.location_id, "UTC"))
        offers.append(
            {
                "offer_id": o.id,
                "entry_id": o.entry_id,
                "patient_id": o.patient_id,
                "doctor_id": t.doctor_id,
                "location_id": t.location_id,
                "service": service,
                "start": t.start_at.astimezone(zone).isoformat(),
                "duration_minutes": t.duration_minutes,
                "offered_at": o.offered_at.isoformat(),
                "expires_at": o.expires_at.astimezone(zone).isoformat(),
            }
        )
    return {"mode": mode, "offers": offers}
