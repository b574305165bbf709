"""Deciding on an appointment: approve (as requested, or by auto-approval), suggest alternatives, decline; each is
recorded by the one ``transition`` every status change goes through (``services/lifecycle/transitions.py``).

A decision locks the appointment, checks its version, applies every rule through ``domain.review.assessment.assess`` and
records the transition: status, version, offers, history, audit and the event, in one transaction. The screen's
answer to a decision is ``services.review.decisions_screen``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from doctordesk.domain.appointments.decisions import Trigger, can_decide, clean_reason, next_status, parse_flag, why_not
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.errors import AppointmentChanged, InvalidTransition
from doctordesk.domain.review.assessment import Assessment
from doctordesk.domain.roles import Actor
from doctordesk.domain.scheduling.suggestions import is_timezone
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.services.lifecycle.transitions import transition
from doctordesk.services.review.cards import assess_cards, cards_from_form, version_from
from doctordesk.services.review.subject import subject_for
from doctordesk.services.scheduling.clinic_facts import cached_clinic
from doctordesk.services.uow import unit_of_work
from doctordesk.store.review_tables import AppointmentOffer, OfferState
from doctordesk.store.tables import Appointment


async def approve(rt: Runtime, actor: Actor, appointment_id: int, form: Mapping[str, str]) -> tuple[Status, Trigger]:
    """POST approve: the requested time (no alternatives), or 1..3 alternatives sent to the patient (status 5,
    or 9 with an out-of-network warning), or auto-approval when an alternative equals the request. The new status
    and the trigger it came by."""
    cards, form_errors = cards_from_form(form)
    version = version_from(form)
    timezone_field = (form.get("timezone") or "").strip() or None
    if timezone_field is not None and not is_timezone(timezone_field):
        form_errors["timezone"] = N_("Choose a timezone from the list.")
        timezone_field = None
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        subject = await subject_for(session, actor, appointment_id, lock=True)
        a, draft = subject.appointment, subject.draft
        if a.version != version:
            raise AppointmentChanged()
        if not can_decide(Status(a.status)):
            raise InvalidTransition(why_not(Status(a.status)))
        timezone = timezone_field or (draft.timezone if draft else None)
        if "disclaimer-displayed" in form:
            acknowledged = parse_flag(form["disclaimer-displayed"], field="disclaimer-displayed")
        else:
            acknowledged = bool(draft and draft.disclaimer_acknowledged_at)
        assessment = await assess_cards(
            session,
            rt,
            actor,
            a,
            cards,
            timezone=timezone,
            acknowledged=acknowledged,
            submitted=True,
            clinic=await cached_clinic(rt, session),
            form_errors=form_errors,
            lock=True,
        )
        error = assessment.blocking_error()
        if error is not None:
            raise error
        trigger = Trigger.APPROVE if not cards else _trigger_of(assessment)
        warnings = [c.coverage_warning for c in assessment.cards]
        to = next_status(Status(a.status), trigger, coverage_warnings=warnings)
        details = _details(a, trigger, assessment if cards else None)
        if trigger is Trigger.SUGGEST:
            session.add_all(_offers(a.id, assessment, now))
        offer_doctors = {c.proposal.doctor_id for c in assessment.cards if c.proposal is not None}
        await transition(
            uow,
            actor,
            a,
            to,
            trigger,
            details,
            now=now,
            also_doctors=offer_doctors,
            text=_patient_text(subject.doctor_name, trigger, len(cards)),
            notify=subject.notify,
        )
    return to, trigger


def _trigger_of(assessment: Assessment) -> Trigger:
    """Alternatives sent: approved at once when one is the requested time itself, suggested otherwise."""
    return Trigger.AUTO_APPROVE if any(c.equals_request for c in assessment.cards) else Trigger.SUGGEST


def _details(a: Appointment, trigger: Trigger, alternatives: Assessment | None) -> dict[str, Any]:
    """What the history and audit say of the decision (with the alternatives sent, if any)."""
    details: dict[str, Any] = {"action": trigger.value, "version": a.version + 1}
    if a.disclaimer_required:
        details["disclaimer_acknowledged"] = True
    if alternatives is not None:
        details["timezone"] = alternatives.entry_timezone
        details["alternatives"] = [
            {
                "n": c.n,
                "doctor_id": c.proposal.doctor_id,
                "location_id": c.proposal.location_id,
                "start": c.proposal.start.isoformat(),
                "coverage_warning": c.coverage_warning,
                "equals_request": c.equals_request,
            }
            for c in alternatives.cards
            if c.proposal is not None
        ]
    return details


def _offers(appointment_id: int, assessment: Assessment, now: datetime) -> list[AppointmentOffer]:
    """The open offers of the suggested alternatives, each with its fee and coverage warning."""
    offers = []
    for card in assessment.cards:
        p = card.proposal
        assert p is not None
        offers.append(
            AppointmentOffer(
                appointment_id=appointment_id,
                n=card.n,
                doctor_id=p.doctor_id,
                location_id=p.location_id,
                start_at=p.start,
                duration_minutes=p.duration_minutes,
                doctor_fee_cents=card.fees.doctor_fee_cents if card.fees else None,
                total_fee_cents=card.fees.total_fee_cents if card.fees else None,
                currency=card.fees.currency if card.fees else "EUR",
                coverage_warning=card.coverage_warning,
                state=OfferState.OPEN,
                created_at=now,
            )
        )
    return offers


async def decline(rt: Runtime, actor: Actor, appointment_id: int, form: Mapping[str, str]) -> Status:
    """POST decline with a required ``reason``: the new status."""
    reason = clean_reason(form.get("reason"))
    version = version_from(form)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        subject = await subject_for(uow.session, actor, appointment_id, lock=True)
        a = subject.appointment
        if a.version != version:
            raise AppointmentChanged()
        to = next_status(Status(a.status), Trigger.DECLINE)
        a.decline_reason = reason
        await transition(
            uow,
            actor,
            a,
            to,
            Trigger.DECLINE,
            {"action": "decline", "reason": reason},
            now=now,
            text=Text(
                "{doctor} declined your appointment request: {reason}", doctor=subject.doctor_name, reason=reason
            ),
            notify=subject.notify,
        )
    return to


def _patient_text(doctor: str, trigger: Trigger, count: int) -> str:
    if trigger is Trigger.SUGGEST and count > 1:
        return Text("{doctor} suggested {count} other times for your appointment.", doctor=doctor, count=count)
    if trigger is Trigger.SUGGEST:
        return Text("{doctor} suggested another time for your appointment.", doctor=doctor)
    return Text("{doctor} approved your appointment.", doctor=doctor)
