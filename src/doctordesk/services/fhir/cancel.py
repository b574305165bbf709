"""``Appointment/<id>/$cancel`` (docs/fhir.md#cancel): the integration API's cancel through FHIR, for the clinic's
systems (API keys with ``appointments:write``). It runs ``services.integration.outside_events.report``, the one
path of ``POST /integration/v1/appointments/<id>/cancel``: the same checks (visibility, version, status), history,
audit, notices, webhooks and Subscriptions."""

from __future__ import annotations

from typing import Any, cast

from doctordesk.domain.appointments.decisions import MAX_REASON_CHARS, Trigger
from doctordesk.domain.errors import AppointmentChanged, Forbidden, ValidationFailed
from doctordesk.domain.fhir.errors import VersionMismatch
from doctordesk.domain.inputs import text_problem
from doctordesk.domain.integration import Integration, Scope
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.services.fhir import appointments as fhir_appointments
from doctordesk.services.fhir.access import Caller
from doctordesk.services.fhir.answers import if_match_version
from doctordesk.services.integration.outside_events import CanceledBy, OutsideEvent, report

PARAMETERS = {"reason": "valueString", "by": "valueCode"}
WHO = ("patient", "clinic")


def authorize(caller: Caller) -> None:
    """Before the body is read: only API keys with ``appointments:write`` cancel here (decision: a patient
    cancels in the app, whose path has its own rules; staff on Review and Approve)."""
    if not isinstance(caller, Integration):
        raise Forbidden(N_("Cancels through FHIR come from the clinic's systems (API keys)."))
    if not caller.has(Scope.APPOINTMENTS_WRITE):
        raise Forbidden(N_("This API key lacks the scope appointments:write."))


def _parameters(body: dict[str, Any]) -> tuple[CanceledBy, str]:
    """``by`` (valueCode ``patient`` or ``clinic``) and ``reason`` (valueString), each once, nothing else."""
    params = body.get("parameter")
    values: dict[str, Any] = {}
    refused = ValidationFailed(fields={"parameter": N_("Give by (valueCode) and reason (valueString), once each.")})
    for item in params if isinstance(params, list) else [None]:
        if not isinstance(item, dict):
            raise refused
        name = item.get("name")
        if name not in PARAMETERS or name in values or set(item) - {"name", PARAMETERS[name]}:
            raise refused
        values[name] = item.get(PARAMETERS[name])
    by = values.get("by")
    if by not in WHO:
        raise ValidationFailed(fields={"by": N_("Use patient or clinic.")})
    reason = values.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise ValidationFailed(fields={"reason": N_("Give the reason for the cancel.")})
    problem = text_problem(reason.strip(), max_chars=MAX_REASON_CHARS, multiline=True)
    if problem:
        raise ValidationFailed(fields={"reason": problem})
    return cast(CanceledBy, by), reason.strip()


async def cancel(
    rt: Runtime, caller: Caller, appointment_id: int, body: dict[str, Any], *, if_match: str | None
) -> tuple[dict[str, Any], int]:
    """Cancel the appointment; the Appointment afterwards and its version. ``If-Match`` naming another version
    is 412 and nothing changes."""
    authorize(caller)
    assert isinstance(caller, Integration)
    by, reason = _parameters(body)
    event = OutsideEvent(Trigger.CANCEL, version=if_match_version(if_match), by=by, reason=reason)
    try:
        await report(rt, caller, appointment_id, event)
    except AppointmentChanged as stale:
        raise VersionMismatch(stale.message) from None
    return await fhir_appointments.read(rt, caller, appointment_id)
