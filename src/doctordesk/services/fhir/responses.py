"""AppointmentResponse resources as read: each alternative the doctor offered, and the patient's answer
(docs/fhir.md#appointmentresponse); the answers' writes are in ``answers``."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.store.review_tables import AppointmentOffer, OfferState
from doctordesk.store.tables import Appointment, Location

OFFER_LOCATION = "urn:doctordesk:fhir:offer-location"
_OFFER_STATUS = {
    OfferState.OPEN: "tentative",
    OfferState.ACCEPTED: "accepted",
    OfferState.REJECTED: "declined",
    OfferState.WITHDRAWN: "declined",
}


def _offer(a: Appointment, offer: AppointmentOffer, loc: Location) -> dict[str, Any]:
    zone = ZoneInfo(loc.timezone)
    comment = f"Alternative {offer.n} at {loc.name}."
    if offer.coverage_warning:
        comment += f" {offer.coverage_warning}"
    return {
        "resourceType": "AppointmentResponse",
        "id": f"offer-{offer.id}",
        "meta": {"versionId": str(a.version), "lastUpdated": fhir_mapping.instant(a.updated_at)},
        "extension": [{"url": OFFER_LOCATION, "valueReference": fhir_mapping.reference("Location", loc.id, loc.name)}],
        "appointment": fhir_mapping.reference("Appointment", a.id),
        "start": fhir_mapping.local_instant(offer.start_at, zone),
        "end": fhir_mapping.local_instant(offer.start_at + timedelta(minutes=offer.duration_minutes), zone),
        "actor": fhir_mapping.reference("Practitioner", offer.doctor_id),
        "participantStatus": _OFFER_STATUS.get(offer.state, "declined"),
        "comment": comment,
    }


def _answer(a: Appointment, rows: list[tuple[AppointmentOffer, Location]]) -> dict[str, Any] | None:
    """The patient's answer, as the offers' states record it; None while unanswered."""
    accepted = [(o, loc) for o, loc in rows if o.state == OfferState.ACCEPTED]
    rejected = rows and all(o.state == OfferState.REJECTED for o, _ in rows)
    if not accepted and not rejected:
        return None
    body: dict[str, Any] = {
        "resourceType": "AppointmentResponse",
        "id": f"answer-{a.id}",
        "meta": {"versionId": str(a.version), "lastUpdated": fhir_mapping.instant(a.updated_at)},
        "appointment": fhir_mapping.reference("Appointment", a.id),
    }
    if accepted:
        offer, loc = accepted[0]
        zone = ZoneInfo(loc.timezone)
        body["start"] = fhir_mapping.local_instant(offer.start_at, zone)
        body["end"] = fhir_mapping.local_instant(offer.start_at + timedelta(minutes=offer.duration_minutes), zone)
    body["actor"] = fhir_mapping.reference("Patient", a.patient_id)
    body["participantStatus"] = "accepted" if accepted else "declined"
    return body


async def responses(session: AsyncSession, appointments: list[Appointment]) -> list[dict[str, Any]]:
    if not appointments:
        return []
    rows = (
        await session.execute(
            select(AppointmentOffer, Location)
            .join(Location, Location.id == AppointmentOffer.location_id)
            .where(AppointmentOffer.appointment_id.in_([a.id for a in appointments]))
            .order_by(AppointmentOffer.appointment_id, AppointmentOffer.n, AppointmentOffer.id)
        )
    ).all()
    out: list[dict[str, Any]] = []
    for a in appointments:
        mine = [(o, loc) for o, loc in rows if o.appointment_id == a.id]
        out.extend(_offer(a, o, loc) for o, loc in mine)
        answer = _answer(a, mine)
        if answer is not None:
            out.append(answer)
    return out
