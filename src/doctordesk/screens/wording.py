"""Words people read for the service's codes, from the reader's point of view (the codes stay in ``props``)."""

from __future__ import annotations

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.roles import Role
from doctordesk.domain.scheduling.booking import SERVICES
from doctordesk.i18n import N_, _
from doctordesk.screens.protocol import Element, el

_STATUS: dict[Status, str] = {
    Status.REQUESTED: N_("Requested"),
    Status.APPROVED: N_("Approved"),
    Status.DECLINED: N_("Declined"),
    Status.CANCELED: N_("Canceled"),
    Status.PENDING_RESPONSE: N_("Alternatives offered"),
    Status.PENDING_RESPONSE_COVERAGE_RISK: N_("Alternatives offered"),
    Status.COMPLETED: N_("Completed"),
    Status.NO_SHOW: N_("No-show"),
}
# Where the patient's point of view differs: the offers are theirs to answer.
_PATIENT_STATUS: dict[Status, str] = {
    Status.PENDING_RESPONSE: N_("Choose a time"),
    Status.PENDING_RESPONSE_COVERAGE_RISK: N_("Choose a time"),
}


def service_words(service: str) -> str:
    """A service by its label in the reader's language; a service the clinic's systems named (not one of the
    bookable ones) as it was stored."""
    return _(SERVICES[service]) if service in SERVICES else service


def status_label(status: Status, role: Role) -> str:
    """E.g. "Alternatives offered" for a doctor, "Choose a time" for the patient, never "pending-response"."""
    if role is Role.PATIENT and status in _PATIENT_STATUS:
        return _(_PATIENT_STATUS[status])
    return _(_STATUS[status])


def status_props(status: Status) -> dict[str, object]:
    """What clients match on: the numeric code and the read API's status name."""
    return {"code": int(status), "status": status.public_name}


def status_badge(element_id: str, status: Status, role: Role, *, label: str | None = None) -> Element:
    """A status badge: the words for ``role``, the code and the public name in ``props``."""
    return el(element_id, "Badge", label=label, value=status_label(status, role), props=status_props(status))
