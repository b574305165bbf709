"""The patient's policies against a picked time, by the rules Review and Approve applies: the verdict the booking
screen shows, and the refusal of a time the doctor could not approve (booking's request and accepting a waitlist
offer ask the same)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from zoneinfo import ZoneInfo

from doctordesk.domain.review import coverage
from doctordesk.runtime import Runtime
from doctordesk.services.lifecycle.placing import RequestInput
from doctordesk.services.scheduling.clinic_facts import cached_clinic, policies_of


@dataclass(frozen=True, slots=True)
class AtBooking:
    """The picked time against the patient's policies: the verdict, and the days their policies cover from today."""

    verdict: coverage.Coverage
    covered: tuple[date, date] | None


async def coverage_at(
    rt: Runtime, patient_id: int, *, doctor_id: int, location_id: int, service: str, start: datetime, timezone: str
) -> AtBooking:
    """The picked time against the patient's policies, by the rules Review and Approve applies
    (``domain/review/coverage.check``)."""
    async with rt.db.read() as session:
        policies = await policies_of(session, patient_id)
    day = start.astimezone(ZoneInfo(timezone)).date()
    verdict = coverage.check(policies, day=day, doctor_id=doctor_id, location_id=location_id, service=service)
    today = rt.clock.now().astimezone(ZoneInfo(timezone)).date()  # the location's today
    return AtBooking(verdict, coverage.covered_ahead(policies, today=today))


async def refuse_uncovered(rt: Runtime, req: RequestInput) -> None:
    """A time the doctor could not approve for the patient's policy is not requested (docs/booking.md; accepting a
    waitlist offer asks the same, docs/waitlist.md): the verdict's
    error (APPOINTMENT_DATE_NOT_COVERED, FORBIDDEN_DUE_TO_POLICY_TERMS, THIRD_PARTY_DATA_INVALID) with the
    screen's words on ``start``, before anything is written. An out-of-network warning alone is no refusal."""
    async with rt.db.read() as session:
        c = await cached_clinic(rt, session)
    timezone = c.directory.locations.get(req.location_id, "UTC")
    at_booking = await coverage_at(
        rt,
        req.patient_id,
        doctor_id=req.doctor_id,
        location_id=req.location_id,
        service=req.service,
        start=req.start,
        timezone=timezone,
    )
    error = at_booking.verdict.error
    if error is not None:
        why = coverage.booking_warning(at_booking.verdict)
        raise type(error)(why, fields={"start": why or ""})
