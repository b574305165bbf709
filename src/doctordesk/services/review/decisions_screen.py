"""The Review and Approve screen's decisions: approve (or suggest alternatives) and decline run their use case
(``services.review.decisions``), then answer with the screen closed and the list showing the new status."""

from __future__ import annotations

from collections.abc import Mapping

from doctordesk.domain.appointments.decisions import Trigger
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_
from doctordesk.i18n import _
from doctordesk.runtime import Runtime
from doctordesk.screens import review_approve
from doctordesk.screens.protocol import UpdateSet, p_update
from doctordesk.screens.wording import status_label, status_props
from doctordesk.services.review import decisions


async def approve(rt: Runtime, actor: Actor, appointment_id: int, form: Mapping[str, str]) -> UpdateSet:
    """POST approve (``decisions.approve``), answered with the notice for what it did."""
    to, trigger = await decisions.approve(rt, actor, appointment_id, form)
    return decided(rt, to, _notice_for(trigger, to))


async def decline(rt: Runtime, actor: Actor, appointment_id: int, form: Mapping[str, str]) -> UpdateSet:
    """POST decline with a required ``reason`` (``decisions.decline``)."""
    to = await decisions.decline(rt, actor, appointment_id, form)
    return decided(rt, to, N_("Request declined."))


def _notice_for(trigger: Trigger, to: Status) -> str:
    if trigger is Trigger.SUGGEST:
        if to is Status.PENDING_RESPONSE_COVERAGE_RISK:
            return N_("Alternatives sent to the patient (with an out-of-network coverage warning).")
        return N_("Alternatives sent to the patient.")
    if trigger is Trigger.AUTO_APPROVE:
        return N_("An alternative equals the requested time: the appointment is approved.")
    return N_("Appointment approved.")


def decided(rt: Runtime, to: Status, text: str) -> UpdateSet:
    """The answer to a successful decision: the screen closes and the list shows the new status."""
    return UpdateSet(
        screen=review_approve.SCREEN,
        state="",
        timeout=rt.settings.poll_list_seconds,
        patches=[
            p_update("status", value=status_label(to, Role.DOCTOR), props=status_props(to)),
            p_update("approve", enabled=False),
            p_update("another-alternative", enabled=False),
            p_update("decline", enabled=False),
        ],
        navigate=review_approve.LIST_ENDPOINT,
        notice={"level": "info", "text": _(text)},
    )
