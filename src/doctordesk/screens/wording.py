"""Words people read for the service's codes, from the reader's point of view (the codes stay in ``props``)."""

from __future__ import annotations

from doctordesk.domain.roles import Role
from doctordesk.domain.status import Status
from doctordesk.screens.protocol import Element, el

_STATUS: dict[Status, str] = {
    Status.REQUESTED: "Requested",
    Status.APPROVED: "Approved",
    Status.DECLINED: "Declined",
    Status.CANCELED: "Canceled",
    Status.PENDING_RESPONSE: "Alternatives offered",
    Status.PENDING_RESPONSE_COVERAGE_RISK: "Alternatives offered",
    Status.COMPLETED: "Completed",
    Status.NO_SHOW: "No-show",
}
# Where the patient's point of view differs: the offers are theirs to answer.
_PATIENT_STATUS: dict[Status, str] = {
    Status.PENDING_RESPONSE: "Choose a time",
    Status.PENDING_RESPONSE_COVERAGE_RISK: "Choose a time",
}


def status_label(status: Status, role: Role) -> str:
    """E.g. "Alternatives offered" for a doctor, "Choose a time" for the patient, never "pending-response"."""
    if role is Role.PATIENT and status in _PATIENT_STATUS:
        return _PATIENT_STATUS[status]
    return _STATUS[status]


def status_props(status: Status) -> dict[str, object]:
    """What clients match on: the numeric code and the read API's status name."""
    return {"code": int(status), "status": status.public_name}


def status_badge(element_id: str, status: Status, role: Role, *, label: str | None = None) -> Element:
    """A status badge: the words for ``role``, the code and the public name in ``props``."""
    return el(element_id, "Badge", label=label, value=status_label(status, role), props=status_props(status))
