"""Whether an appointment request came from the waitlist (Review and Approve says so: docs/waitlist.md)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.waitlist.rules import OfferState
from doctordesk.store.waitlist.tables import WaitlistOffer


async def from_waitlist(session: AsyncSession, appointment_id: int) -> bool:
    """True when the appointment is the request placed by accepting a waitlist offer (not a direct move: a moved
    appointment was the patient's before)."""
    found = await session.scalar(
        select(WaitlistOffer.id).where(
            WaitlistOffer.appointment_id == appointment_id,
            WaitlistOffer.state == OfferState.ACCEPTED,
            WaitlistOffer.moved.is_(False),
        )
    )
    return found is not None
