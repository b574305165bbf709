"""The patient cancels their own appointment from "Your appointment" (docs/booking.md#cancelling): requested, waiting
for their answer to offers, or approved, up to the clinic's deadline (``DOCTORDESK_PATIENT_CANCEL_HOURS`` before the
start). One transaction through ``lifecycle.transitions.transition`` — status, version, history (who: the patient),
audit, the event that updates the doctor's list and tells the doctor — with the open offers withdrawn. The history
records ``by: patient`` as a clinic system's cancel does, so webhooks and FHIR say who canceled."""

from __future__ import annotations

from doctordesk.domain.appointments.decisions import Trigger, patient_cancel_status
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import Moment, Text
from doctordesk.runtime import Runtime
from doctordesk.services.lifecycle.transitions import transition
from doctordesk.services.review.offers import answering
from doctordesk.services.uow import unit_of_work
from doctordesk.store.review_tables import OfferState
from doctordesk.store.tables import Location


async def cancel_appointment(
    rt: Runtime, actor: Actor, appointment_id: int, *, version: int | None, reason: str
) -> Status:
    """The patient cancels their own appointment: the new status. Another's appointment is NOT_FOUND, a stale
    ``version`` APPOINTMENT_CHANGED, a closed one or one past the clinic's deadline INVALID_TRANSITION; a refusal
    writes nothing."""
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        a, offers = await answering(session, actor, appointment_id, version=version)
        to = patient_cancel_status(Status(a.status), a.start_at, now=now, hours=rt.settings.patient_cancel_hours)
        withdrawn = [o for o in offers if o.state == OfferState.OPEN]
        for o in withdrawn:
            o.state, o.answered_at = OfferState.WITHDRAWN, now
        doctors = {a.doctor_id, *(o.doctor_id for o in withdrawn)}
        location = await session.get(Location, a.location_id)
        when = Moment(a.start_at, location.timezone if location else "UTC")
        text = (
            Text("{patient} canceled the appointment on {when}: {reason}", patient=actor.display_name, when=when,
                 reason=reason)
            if reason
            else Text("{patient} canceled the appointment on {when}.", patient=actor.display_name, when=when)
        )  # fmt: skip
        details = {"action": "cancel", "by": "patient", "reason": reason, "offers": [o.id for o in withdrawn]}
        await transition(
            uow,
            actor,
            a,
            to,
            Trigger.CANCEL,
            details,
            now=now,
            also_doctors=doctors,
            notify=tuple(sorted(doctors)),
            text=text,
        )
    return to
