"""Helpers of the waitlist's tests: the demo's approved visit whose cancellation frees a time, joining for exactly
that time, and reading offers back."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select

from doctordesk.domain.waitlist.rules import DAY_KEYS
from doctordesk.runtime import Runtime
from doctordesk.store.tables import Appointment
from doctordesk.store.waitlist.tables import WaitlistOffer, WaitlistTime

APPROVED_TUESDAY = 6  # Dr. Berger, Berlin, Oliver Brown (patient4), approved, the day after the test's Monday, 16:00
WAITLIST = "/profile/waitlist"


@dataclass(frozen=True, slots=True)
class Slot:
    appointment_id: int
    doctor_id: int
    location_id: int
    start: datetime
    service: str

    def form(self, **extra: str) -> dict[str, str]:
        """A join form for exactly this time: its doctor, place, service, weekday and half hour, until its day."""
        local = self.start.astimezone(ZoneInfo("Europe/Berlin"))
        end = local + timedelta(minutes=30)
        return {
            "doctor": str(self.doctor_id),
            "location": str(self.location_id),
            "service": self.service,
            "until": local.date().isoformat(),
            f"days-{DAY_KEYS[local.weekday()]}": "true",
            "from": f"{local:%H:%M}",
            "to": f"{end:%H:%M}",
            **extra,
        }


async def slot_of(runtime: Runtime, appointment_id: int) -> Slot:
    async with runtime.db.read() as s:
        a = await s.get(Appointment, appointment_id)
        assert a is not None
        return Slot(a.id, a.doctor_id, a.location_id, a.start_at, a.service)


async def offers(runtime: Runtime) -> list[tuple[int, str, datetime]]:
    """Every offer: (patient, state, time's start), oldest first."""
    async with runtime.db.read() as s:
        rows = await s.execute(
            select(WaitlistOffer.patient_id, WaitlistOffer.state, WaitlistTime.start_at)
            .join(WaitlistTime, WaitlistTime.id == WaitlistOffer.time_id)
            .order_by(WaitlistOffer.id)
        )
        return [tuple(r) for r in rows.all()]  # type: ignore[misc]


async def offer_ids(runtime: Runtime, patient_id: int, state: str = "open") -> list[int]:
    async with runtime.db.read() as s:
        return list(
            await s.scalars(
                select(WaitlistOffer.id).where(WaitlistOffer.patient_id == patient_id, WaitlistOffer.state == state)
            )
        )


async def join(client: Any, who: Any, form: dict[str, str]) -> Any:
    return await client.post(WAITLIST, headers=who.headers, data=form)


async def cancel(client: Any, who: Any, appointment_id: int) -> None:
    url = f"/profile/appointments/{appointment_id}/offers/cancel"
    response = await client.post(url, headers=who.headers, data={"version": "1"})
    assert response.status_code == 200, response.text
