"""The transitions of an appointment request (spec section 3), as one table and a few functions.

    current                       trigger                                   next
    requested (1)                 approve as proposed                       approved (2)
    requested (1)                 approve with 1..3 valid alternatives      pending-response: 5 all in network,
                                                                            9 at least one out-of-network warning
    requested (1)                 an alternative equal to the request       approved (2)  (auto-approval)
    requested (1)                 decline with a non-empty reason           declined (3)
    pending-response (5, 9)       patient accepts one offer                 approved (2) at the offer's time
    pending-response (5, 9)       patient rejects every offer               canceled (4)
    canceled (4), completed (6)   anything                                  unchanged (final: actions disabled)

Anything not in the table is refused with INVALID_TRANSITION (approved and declined appointments are not decided
again on this screen).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from doctordesk.domain.errors import InvalidTransition, ValidationFailed
from doctordesk.domain.inputs import text_problem
from doctordesk.domain.status import Status

MAX_REASON_CHARS = 1000


class Trigger(StrEnum):
    APPROVE = "approve"
    SUGGEST = "suggest"
    AUTO_APPROVE = "auto-approve"
    DECLINE = "decline"
    ACCEPT_OFFER = "accept-offer"
    REJECT_OFFERS = "reject-offers"


DOCTOR_TRIGGERS = frozenset({Trigger.APPROVE, Trigger.SUGGEST, Trigger.AUTO_APPROVE, Trigger.DECLINE})
PATIENT_TRIGGERS = frozenset({Trigger.ACCEPT_OFFER, Trigger.REJECT_OFFERS})


def can_decide(status: Status) -> bool:
    """Whether the doctor's three actions (Approve, Suggest another alternative, Decline) are available."""
    return status is Status.REQUESTED


def can_answer(status: Status) -> bool:
    """Whether the patient may accept or reject offers."""
    return status.is_pending_response


def why_not(status: Status) -> str:
    if status.is_final:
        return f"This appointment is {status.public_name}: no decision is possible."
    if status.is_pending_response:
        return "Alternatives were sent; the patient's answer is awaited."
    return f"This appointment is already {status.public_name}."


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
        raise ValidationFailed("Suggest at least one alternative.")
    if any(coverage_warnings):
        return Status.PENDING_RESPONSE_COVERAGE_RISK
    return Status.PENDING_RESPONSE


def clean_reason(raw: str | None) -> str:
    """The decline reason, required and bounded; errors name the ``reason`` field."""
    reason = (raw or "").strip()
    if not reason:
        raise ValidationFailed("A reason is required to decline.", fields={"reason": "Enter a reason."})
    problem = text_problem(reason, max_chars=MAX_REASON_CHARS, multiline=True)
    if problem is not None:
        raise ValidationFailed(fields={"reason": problem})
    return reason


TRUE_VALUES = frozenset({"true", "1", "on", "yes"})


def truthy(raw: str | None) -> bool:
    return (raw or "").strip().lower() in TRUE_VALUES
