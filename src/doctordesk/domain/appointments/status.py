"""Appointment statuses: a stable numeric enum (codes never change meaning once published)."""

from __future__ import annotations

from enum import IntEnum, StrEnum

from doctordesk.domain.texts import N_, Text


class Status(IntEnum):
    REQUESTED = 1
    APPROVED = 2
    DECLINED = 3
    CANCELED = 4
    # Alternatives sent to the patient, every one inside the patient's coverage network.
    PENDING_RESPONSE = 5
    COMPLETED = 6
    # Alternatives sent to the patient, at least one carrying an out-of-network coverage warning:
    # the patient must accept the cost risk when answering.
    PENDING_RESPONSE_COVERAGE_RISK = 9
    # An approved appointment the patient did not come to (reported by the clinic's systems).
    NO_SHOW = 7

    @property
    def public_name(self) -> str:
        """The name the read API and the screens use (both pending codes read "pending-response")."""
        return _NAMES[self]

    @property
    def in_words(self) -> str:
        """The status as a sentence says it ("This appointment is already {status}."): a ``Text``, so it is given
        in the reader's language (the public name stays the API's)."""
        return Text(_WORDS[self])

    @property
    def is_final(self) -> bool:
        return self in FINAL

    @property
    def is_pending_response(self) -> bool:
        return self in PENDING


class StatusName(StrEnum):
    REQUESTED = "requested"
    APPROVED = "approved"
    PENDING_RESPONSE = "pending-response"
    DECLINED = "declined"
    CANCELED = "canceled"
    COMPLETED = "completed"
    NO_SHOW = "no-show"


_NAMES = {
    Status.REQUESTED: StatusName.REQUESTED.value,
    Status.APPROVED: StatusName.APPROVED.value,
    Status.DECLINED: StatusName.DECLINED.value,
    Status.CANCELED: StatusName.CANCELED.value,
    Status.PENDING_RESPONSE: StatusName.PENDING_RESPONSE.value,
    Status.COMPLETED: StatusName.COMPLETED.value,
    Status.PENDING_RESPONSE_COVERAGE_RISK: StatusName.PENDING_RESPONSE.value,
    Status.NO_SHOW: StatusName.NO_SHOW.value,
}

_WORDS = {
    Status.REQUESTED: N_("requested"),
    Status.APPROVED: N_("approved"),
    Status.DECLINED: N_("declined"),
    Status.CANCELED: N_("canceled"),
    Status.PENDING_RESPONSE: N_("waiting for the patient's answer"),
    Status.PENDING_RESPONSE_COVERAGE_RISK: N_("waiting for the patient's answer"),
    Status.COMPLETED: N_("completed"),
    Status.NO_SHOW: N_("marked as a no-show"),
}

FINAL = frozenset({Status.CANCELED, Status.COMPLETED, Status.NO_SHOW})
PENDING = frozenset({Status.PENDING_RESPONSE, Status.PENDING_RESPONSE_COVERAGE_RISK})


def codes_for_name(name: str) -> list[int]:
    """The numeric codes behind a public status name (a filter by name)."""
    return [int(s) for s, n in _NAMES.items() if n == name]
