"""The transitions of an appointment (spec section 3) as one table and a few functions; anything not in the table is
INVALID_TRANSITION (docs/review-and-approve.md#transitions, docs/integration.md for the integration's triggers)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from enum import StrEnum

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.errors import InvalidTransition, ValidationFailed
from doctordesk.domain.inputs import text_problem
from doctordesk.domain.texts import N_, Text

MAX_REASON_CHARS = 1000


class Trigger(StrEnum):
    APPROVE = "approve"
    SUGGEST = "suggest"
    AUTO_APPROVE = "auto-approve"
    DECLINE = "decline"
    ACCEPT_OFFER = "accept-offer"
    REJECT_OFFERS = "reject-offers"
    # Outside events, reported through the integration API (docs/integration.md).
    REQUEST = "request"
    CANCEL = "cancel"
    COMPLETE = "complete"
    NO_SHOW = "no-show"
    RESCHEDULE_REQUEST = "reschedule-request"


DOCTOR_TRIGGERS = frozenset({Trigger.APPROVE, Trigger.SUGGEST, Trigger.AUTO_APPROVE, Trigger.DECLINE})
PATIENT_TRIGGERS = frozenset({Trigger.ACCEPT_OFFER, Trigger.REJECT_OFFERS})
# Statuses an appointment can still be canceled or moved from: it is open (not decided against, not over).
OPEN = frozenset({Status.REQUESTED, Status.APPROVED, Status.PENDING_RESPONSE, Status.PENDING_RESPONSE_COVERAGE_RISK})
# Outside events that report how an approved visit went.
VISIT_TRIGGERS = frozenset({Trigger.COMPLETE, Trigger.NO_SHOW})


def can_decide(status: Status) -> bool:
    """Whether the doctor's three actions (Approve, Suggest another alternative, Decline) are available."""
    return status is Status.REQUESTED


def can_answer(status: Status) -> bool:
    """Whether the patient may accept or reject offers."""
    return status.is_pending_response


def why_not(status: Status) -> str:
    if status.is_final:
        return Text("This appointment is {status}: no decision is possible.", status=status.in_words)
    if status.is_pending_response:
        return N_("Alternatives were sent; the patient's answer is awaited.")
    return Text("This appointment is already {status}.", status=status.in_words)


def outside_next_status(current: Status, trigger: Trigger, *, started: bool) -> Status:
    """The status after an outside event (cancel, complete, no-show, reschedule-request); ``started``: the
    appointment's time has come. INVALID_TRANSITION when the table has no such row."""
    if trigger in VISIT_TRIGGERS:
        if current is not Status.APPROVED:
            raise InvalidTransition(
                why_not(current)
                if current.is_final
                else Text("Only an approved appointment can be {done}.", done=_past(trigger))
            )
        if not started:
            raise InvalidTransition(
                Text("The appointment has not started yet: it cannot be {done}.", done=_past(trigger))
            )
        return Status.COMPLETED if trigger is Trigger.COMPLETE else Status.NO_SHOW
    if trigger in (Trigger.CANCEL, Trigger.RESCHEDULE_REQUEST):
        if current not in OPEN:
            raise InvalidTransition(why_not(current))
        return Status.CANCELED if trigger is Trigger.CANCEL else Status.REQUESTED
    raise InvalidTransition(Text("{trigger} is not an outside event.", trigger=trigger.value))


def patient_cancel_deadline(start: datetime, *, hours: int) -> datetime:
    """The last moment the patient may cancel in the app (the clinic's rule: up to ``hours`` before the start)."""
    return start - timedelta(hours=hours)


def patient_may_cancel(status: Status, start: datetime, *, now: datetime, hours: int) -> bool:
    """The patient's "Cancel appointment" is offered: the appointment is open and the clinic's deadline not passed."""
    return status in OPEN and now < patient_cancel_deadline(start, hours=hours)


def too_late_to_cancel(hours: int) -> str:
    """What the patient is told once the deadline has passed (on the screen, and as the refusal of a cancel)."""
    if hours == 0:
        return N_("This appointment has started: it can no longer be canceled here. Please contact the clinic.")
    return Text(
        "Appointments can be canceled here up to {hours} hours before they start. Please contact the clinic.",
        hours=hours,
    )


def patient_cancel_status(current: Status, start: datetime, *, now: datetime, hours: int) -> Status:
    """The status after the patient cancels their own appointment: canceled, when it is open and the clinic's
    deadline has not passed; INVALID_TRANSITION otherwise (nothing is written)."""
    if current not in OPEN:
        raise InvalidTransition(why_not(current))
    if not patient_may_cancel(current, start, now=now, hours=hours):
        raise InvalidTransition(too_late_to_cancel(hours))
    return Status.CANCELED


def clean_cancel_reason(raw: str | None) -> str:
    """The patient's reason for canceling: optional (empty when not given), with the free-text rule of every field;
    errors name the ``reason`` field."""
    reason = (raw or "").strip()
    problem = text_problem(reason, max_chars=MAX_REASON_CHARS, multiline=True) if reason else None
    if problem is not None:
        raise ValidationFailed(fields={"reason": problem})
    return reason


def _past(trigger: Trigger) -> str:
    return Text("marked completed") if trigger is Trigger.COMPLETE else Text("marked as a no-show")


def next_status(current: Status, trigger: Trigger, *, coverage_warnings: Sequence[str | None] = ()) -> Status:
    """The status after ``trigger``; INVALID_TRANSITION when the table has no such row."""
    if trigger in DOCTOR_TRIGGERS and not can_decide(current):
        raise InvalidTransition(why_not(current))
    if trigger in PATIENT_TRIGGERS and not can_answer(current):
        raise InvalidTransition(why_not(current))
    if trigger in (Trigger.APPROVE, Trigger.AUTO_APPROVE, Trigger.ACCEPT_OFFER):
        return Status.APPROVED
    if trigger is Trigger.DECLINE:
        return Status.DECLINED
    if trigger is Trigger.REJECT_OFFERS:
        return Status.CANCELED
    if not coverage_warnings:
        raise ValidationFailed(N_("Suggest at least one alternative."))
    if any(coverage_warnings):
        return Status.PENDING_RESPONSE_COVERAGE_RISK
    return Status.PENDING_RESPONSE


def clean_reason(raw: str | None) -> str:
    """The decline reason, required and bounded; errors name the ``reason`` field."""
    reason = (raw or "").strip()
    if not reason:
        raise ValidationFailed(N_("A reason is required to decline."), fields={"reason": N_("Enter a reason.")})
    problem = text_problem(reason, max_chars=MAX_REASON_CHARS, multiline=True)
    if problem is not None:
        raise ValidationFailed(fields={"reason": problem})
    return reason


FLAG_VALUES = {"true": True, "false": False}


def parse_flag(raw: str | None, *, field: str) -> bool:
    """A form's yes/no field: ``true`` or ``false`` as documented (absent: false); any other text is refused."""
    if raw is None:
        return False
    value = FLAG_VALUES.get(raw)
    if value is None:
        raise ValidationFailed(fields={field: N_("Use true or false.")})
    return value
