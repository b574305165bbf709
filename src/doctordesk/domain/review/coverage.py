"""Coverage and policy rules (spec 4.4, Review and Approve validations 4 and 6; Suggested Scheduling rule 7).

- The insurer's record (``third_party_data``) must be a JSON object with a non-empty ``member_id`` and ``plan``
  and ``status`` "active"; missing or malformed → THIRD_PARTY_DATA_INVALID (blocks every decision but decline).
- A date outside every policy period → APPOINTMENT_DATE_NOT_COVERED.
- An excluded service, or an excluded doctor (profile) → FORBIDDEN_DUE_TO_POLICY_TERMS.
- A doctor or location outside a non-empty network list → a coverage warning only (the doctor may still send it;
  it makes the pending status 9 instead of 5).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from doctordesk.domain.errors import DateNotCovered, DomainError, ForbiddenByPolicy, ThirdPartyDataInvalid
from doctordesk.domain.scheduling.booking import SERVICES
from doctordesk.domain.texts import N_, Text


@dataclass(frozen=True, slots=True)
class Policy:
    """A patient's policy as stored (``network``/``exclusions`` still raw JSON values, checked here)."""

    valid_from: date
    valid_to: date
    network: Any
    exclusions: Any
    third_party_data: str | None


@dataclass(frozen=True, slots=True)
class Terms:
    """A checked policy: the rules as plain sets (empty network set = any)."""

    valid_from: date
    valid_to: date
    network_doctors: frozenset[int] = field(default_factory=frozenset)
    network_locations: frozenset[int] = field(default_factory=frozenset)
    excluded_services: frozenset[str] = field(default_factory=frozenset)
    excluded_doctors: frozenset[int] = field(default_factory=frozenset)


def _ids(value: Any, what: str) -> frozenset[int]:
    if value is None:
        return frozenset()
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise ThirdPartyDataInvalid(Text("The policy's {what} list is malformed.", what=what))
    return frozenset(value)


def _names(value: Any, what: str) -> frozenset[str]:
    if value is None:
        return frozenset()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ThirdPartyDataInvalid(Text("The policy's {what} list is malformed.", what=what))
    return frozenset(v.lower() for v in value)


def check_third_party(raw: str | None) -> dict[str, Any]:
    """The insurer's record, or THIRD_PARTY_DATA_INVALID when missing or malformed."""
    if raw is None or not raw.strip():
        raise ThirdPartyDataInvalid(N_("The insurer's data for this patient is missing."))
    try:
        data = json.loads(raw)
    except ValueError:
        raise ThirdPartyDataInvalid(N_("The insurer's data for this patient is malformed.")) from None
    if not isinstance(data, dict):
        raise ThirdPartyDataInvalid(N_("The insurer's data for this patient is malformed."))
    for key in ("member_id", "plan", "status"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ThirdPartyDataInvalid(Text("The insurer's data lacks a valid '{key}'.", key=key))
    if data["status"] != "active":
        raise ThirdPartyDataInvalid(Text("The insurer reports the membership as '{status}'.", status=data["status"]))
    return data


def terms(policies: Sequence[Policy]) -> list[Terms]:
    """Check the patient's policies; no policy at all counts as missing insurer data."""
    if not policies:
        raise ThirdPartyDataInvalid(N_("The patient has no insurance policy on record."))
    out = []
    for p in policies:
        check_third_party(p.third_party_data)
        network = p.network if p.network is not None else {}
        exclusions = p.exclusions if p.exclusions is not None else {}
        if not isinstance(network, dict) or not isinstance(exclusions, dict):
            raise ThirdPartyDataInvalid(N_("The policy's network or exclusions are malformed."))
        out.append(
            Terms(
                valid_from=p.valid_from,
                valid_to=p.valid_to,
                network_doctors=_ids(network.get("doctors"), Text("network doctors")),
                network_locations=_ids(network.get("locations"), Text("network locations")),
                excluded_services=_names(exclusions.get("services"), Text("excluded services")),
                excluded_doctors=_ids(exclusions.get("doctors"), Text("excluded doctors")),
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class Coverage:
    """The verdict for one appointment slot: an error (blocking) or a warning (out of network), or neither."""

    error: DomainError | None = None
    warning: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _service_named(service: str) -> str:
    """A service as people name it, to open a sentence: the product's own by its name in the reader's language
    ("Teledermatology" / "Teledermatologie"), one the clinic's systems sent as they sent it, capitalised."""
    words = SERVICES.get(service.lower())
    return Text(words) if words is not None else service[:1].upper() + service[1:]


def evaluate(
    policies: Sequence[Terms], *, day: date, doctor_id: int, location_id: int, service: str, field_prefix: str = ""
) -> Coverage:
    """Coverage of one slot (``day`` in the location's timezone). ``field_prefix`` is the card suffix (``~2``)
    used to name the offending field in the error."""
    covering = [t for t in policies if t.valid_from <= day <= t.valid_to]
    if not covering:
        return Coverage(
            DateNotCovered(fields={f"date{field_prefix}": N_("Not covered by the patient's policy on this date.")})
            if field_prefix
            else DateNotCovered()
        )
    t = covering[0]
    if service.lower() in t.excluded_services:
        return Coverage(ForbiddenByPolicy(Text("{service} is not covered by the patient's policy.",
                                               service=_service_named(service))))  # fmt: skip
    if doctor_id in t.excluded_doctors:
        return Coverage(
            ForbiddenByPolicy(fields={f"profile{field_prefix}": N_("The patient's policy excludes this doctor.")})
            if field_prefix
            else ForbiddenByPolicy(N_("The patient's policy excludes this doctor."))
        )
    doctor_out = bool(t.network_doctors) and doctor_id not in t.network_doctors
    location_out = bool(t.network_locations) and location_id not in t.network_locations
    if doctor_out and location_out:
        return Coverage(
            warning=N_("Out of network: the doctor and the location may not be covered; the patient may pay more.")
        )
    if doctor_out:
        return Coverage(warning=N_("Out of network: the doctor may not be covered; the patient may pay more."))
    if location_out:
        return Coverage(warning=N_("Out of network: the location may not be covered; the patient may pay more."))
    return Coverage()


# The out-of-network warnings in the patient's own words: the doctor reads about "the patient", the
# patient about themselves. Keyed by the doctor's wording, which is what an offer stores.
FOR_PATIENT: dict[str, str] = {
    "Out of network: the doctor and the location may not be covered; the patient may pay more.": N_(
        "Out of network: your insurance may not cover this doctor and this location, so you may pay more."
    ),
    "Out of network: the doctor may not be covered; the patient may pay more.": N_(
        "Out of network: your insurance may not cover this doctor, so you may pay more."
    ),
    "Out of network: the location may not be covered; the patient may pay more.": N_(
        "Out of network: your insurance may not cover this location, so you may pay more."
    ),
}


def for_patient(warning: str | None) -> str | None:
    """A coverage warning as the patient reads it (the same text when it has no patient wording)."""
    if warning is None:
        return None
    return FOR_PATIENT.get(str(warning), warning)


def check(policies: Sequence[Policy], *, day: date, doctor_id: int, location_id: int, service: str) -> Coverage:
    """The whole coverage verdict for one slot from the stored policies: the insurer's data (``terms``), then the
    policy's period, exclusions and network (``evaluate``) — the rules Review and Approve applies, here for one
    slot (the booking screen warns with them before a patient sends a request the doctor could not approve)."""
    try:
        checked = terms(policies)
    except DomainError as exc:
        return Coverage(exc)
    return evaluate(checked, day=day, doctor_id=doctor_id, location_id=location_id, service=service)


def blocks_approval(verdict: Coverage) -> bool:
    """The doctor could not approve the slot: the date is not covered, the policy's terms forbid it, or the insurer's
    data is invalid (Review and Approve's blocking errors). An out-of-network warning alone does not block."""
    return verdict.error is not None


def covered_ahead(policies: Sequence[Policy], *, today: date) -> tuple[date, date] | None:
    """The days from ``today`` on that a policy covers, as (first, last) of the policy that reaches furthest; None
    when none does (an expired policy: no other date helps)."""
    spans = [(max(p.valid_from, today), p.valid_to) for p in policies if p.valid_to >= today]
    return max(spans, key=lambda span: span[1]) if spans else None


def booking_warning(verdict: Coverage) -> str | None:
    """What the patient reads at booking about a verdict of ``check``: why the doctor could not approve the
    time as it stands and what they can do, or the out-of-network warning in the patient's words; None when
    covered."""
    if isinstance(verdict.error, DateNotCovered):
        return N_(
            "Your insurance policy does not cover this date, so the doctor could not approve it and it cannot be "
            "requested. Choose a date your policy covers, or contact support if your policy has changed."
        )
    if isinstance(verdict.error, ForbiddenByPolicy):
        return N_(
            "Your insurance policy excludes this service or this doctor, so the doctor could not approve it and it "
            "cannot be requested. Choose another service or doctor, or contact support."
        )
    if verdict.error is not None:
        return N_(
            "Your insurance details could not be confirmed, so the doctor could not approve a request. Please "
            "contact support to update them."
        )
    return for_patient(verdict.warning)
