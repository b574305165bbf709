"""The Review and Approve assessment: every rule applied to one state of the screen (the draft while editing, the
form on submission), as plain data the screen renders and the POST enforces.

One function, ``assess``, so the page's Approve button and the POST can never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from doctordesk.domain.appointments.decisions import can_decide, why_not
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.errors import DomainError, InvalidTransition, ValidationFailed
from doctordesk.domain.inputs import parse_id
from doctordesk.domain.review import coverage, fees
from doctordesk.domain.scheduling.suggestions import (
    Busy,
    CardInput,
    Directory,
    Hours,
    HoursException,
    Original,
    Proposal,
    check_proposals,
    is_original,
    overlaps,
    parse_cards,
    utc_to_local,
)
from doctordesk.domain.texts import N_, Text


@dataclass(frozen=True, slots=True)
class ReviewFacts:
    """What the rules need to know about one appointment, loaded by the service."""

    appointment_id: int
    status: Status
    version: int
    original: Original
    duration_minutes: int
    service: str
    location_timezone: str  # of the requested location
    disclaimer_required: bool
    prescription_needed: bool
    directory: Directory
    can_prescribe: Mapping[int, bool]
    profile_timezone: str | None  # the deciding doctor's profile timezone (None: confirmation needed)
    work_hours: Mapping[tuple[int, int], Sequence[Hours]]
    fee_rows: Sequence[fees.FeeRow]
    policies: Sequence[coverage.Policy]
    now: datetime
    horizon: timedelta  # how far ahead an alternative may be (the clinic's booking horizon)
    # Dated exceptions to the weekly hours, per doctor (holiday, absence, extra day).
    hours_exceptions: Mapping[int, Sequence[HoursException]] = field(default_factory=dict)


@dataclass
class CardAssessment:
    n: int
    card: CardInput
    proposal: Proposal | None
    errors: dict[str, str] = field(default_factory=dict)
    coverage_error: DomainError | None = None
    coverage_warning: str | None = None
    prescription_warning: str | None = None
    fees: fees.Fees | None = None
    changed: dict[str, bool] = field(default_factory=dict)  # doctor, location, date, time
    complete: bool = False
    equals_request: bool = False

    @property
    def valid(self) -> bool:
        return self.proposal is not None and not self.errors and self.coverage_error is None


@dataclass
class Assessment:
    facts: ReviewFacts
    entry_timezone: str
    timezone_confirmed: bool
    disclaimer_acknowledged: bool
    cards: list[CardAssessment]
    decidable: bool
    not_decidable_reason: str | None
    third_party_error: DomainError | None
    request_coverage: coverage.Coverage | None  # None when third-party data is invalid
    request_conflict: str | None
    request_prescription_warning: str | None
    form_errors: dict[str, str] = field(default_factory=dict)  # disclaimer, timezone, unknown fields
    covered_until: date | None = None  # the last day any of the patient's policies covers (None: no policy)

    @property
    def suggesting(self) -> bool:
        return bool(self.cards)

    @property
    def no_alternative_reason(self) -> str | None:
        """Why no alternative could ever be sent, when every date must fail (None when one may pass): invalid
        insurer data, or no policy covering any day from today on (every zone's today is at most a day behind
        UTC's)."""
        if self.third_party_error is not None:
            return N_("No alternative can be sent: the insurer's data for this patient is invalid.")
        if self.covered_until is None or self.covered_until < self.facts.now.date() - timedelta(days=1):
            return N_("No alternative can be sent: the patient's policy does not cover any date from today on.")
        return None

    def blocking_error(self) -> DomainError | None:
        """The first error that blocks approval, in the order the POST reports them: third-party data, input
        fields, policy coverage."""
        if not self.decidable:
            return InvalidTransition(self.not_decidable_reason)
        if self.third_party_error is not None:
            return self.third_party_error
        fields: dict[str, str] = dict(self.form_errors)
        for c in self.cards:
            fields.update(c.errors)
        if self.suggesting and not self.timezone_confirmed:
            fields.setdefault("timezone", N_("Confirm the timezone the times are entered in."))
        if self.facts.disclaimer_required and not self.disclaimer_acknowledged:
            fields.setdefault("disclaimer-displayed", N_("Acknowledge the disclaimer before approving."))
        if not self.suggesting and self.request_conflict:
            return ValidationFailed(self.request_conflict)
        if fields:
            return ValidationFailed(fields=fields)
        errors = [c.coverage_error for c in self.cards if c.coverage_error is not None]
        if not self.suggesting and self.request_coverage is not None and self.request_coverage.error is not None:
            errors.append(self.request_coverage.error)
        if errors:
            first = errors[0]
            for other in errors[1:]:
                if type(other) is type(first):
                    first.fields.update(other.fields)
            return first
        if self.suggesting and any(c.equals_request for c in self.cards) and self.request_conflict:
            return ValidationFailed(self.request_conflict)
        return None

    @property
    def ready(self) -> bool:
        """Whether Approve is enabled: everything complete, valid and acknowledged."""
        return all(c.complete for c in self.cards) and self.blocking_error() is None


def entry_timezone_of(facts: ReviewFacts, confirmed: str | None) -> str:
    """The timezone card times are typed in: the doctor's profile timezone, else the one confirmed on the
    screen, else (until confirmed) the requested location's."""
    return facts.profile_timezone or confirmed or facts.location_timezone


def _changed(card: CardInput, facts: ReviewFacts, timezone: str) -> dict[str, bool]:
    local = utc_to_local(facts.original.start, timezone)
    requested = {
        "doctor": str(facts.original.doctor_id),
        "location": str(facts.original.location_id),
        "date": local.date().isoformat(),
        "time": local.strftime("%H:%M"),
    }
    typed = {"doctor": card.doctor, "location": card.location, "date": card.date, "time": card.time}
    return {k: bool(typed[k].strip()) and typed[k].strip() != requested[k] for k in requested}


def assess(
    facts: ReviewFacts,
    cards: Sequence[CardInput],
    *,
    busy: Sequence[Busy],
    timezone: str | None,
    disclaimer_acknowledged: bool,
    submitted: bool,
    form_errors: Mapping[str, str] | None = None,
) -> Assessment:
    """Apply every rule. ``timezone`` is the confirmed entry timezone (None: not confirmed); ``busy`` the doctors'
    taken times around the proposals and the request (another appointment's, never this one's)."""
    entry_timezone = entry_timezone_of(facts, timezone)
    confirmed = facts.profile_timezone is not None or timezone is not None
    policy_terms, third_party_error = _policy_terms(facts)
    parsed = parse_cards(
        cards,
        timezone=entry_timezone,
        duration_minutes=facts.duration_minutes,
        directory=facts.directory,
        submitted=submitted,
    )
    rule_errors = check_proposals(
        parsed.proposals,
        now=facts.now,
        horizon=facts.horizon,
        original=facts.original,
        directory=facts.directory,
        work_hours=facts.work_hours,
        busy=busy,
        exceptions=facts.hours_exceptions,
    )
    proposals = {p.n: p for p in parsed.proposals}
    errors = {**parsed.errors, **rule_errors}
    results = [
        _card(
            facts,
            card,
            n,
            proposals.get(n),
            errors,
            entry_timezone,
            policy_terms if third_party_error is None else None,
        )
        for n, card in enumerate(cards, start=1)
    ]
    for result in results:
        result.complete = result.n not in parsed.incomplete
    request_coverage = None
    if third_party_error is None:
        request_coverage = coverage.evaluate(
            policy_terms,
            day=utc_to_local(facts.original.start, facts.location_timezone).date(),
            doctor_id=facts.original.doctor_id,
            location_id=facts.original.location_id,
            service=facts.service,
        )
    conflict = _request_conflict(facts, busy)
    prescription = None
    if facts.prescription_needed and not facts.can_prescribe.get(facts.original.doctor_id, True):
        prescription = N_("This appointment needs a prescription; the requested doctor cannot prescribe.")
    decidable = can_decide(facts.status)
    return Assessment(
        facts=facts,
        entry_timezone=entry_timezone,
        timezone_confirmed=confirmed,
        disclaimer_acknowledged=disclaimer_acknowledged,
        cards=results,
        decidable=decidable,
        not_decidable_reason=None if decidable else why_not(facts.status),
        third_party_error=third_party_error,
        request_coverage=request_coverage,
        request_conflict=conflict,
        request_prescription_warning=prescription,
        form_errors=dict(form_errors or {}),
        covered_until=max((t.valid_to for t in policy_terms), default=None),
    )


def _policy_terms(facts: ReviewFacts) -> tuple[list[coverage.Terms], DomainError | None]:
    """The patient's policy terms, or the error reading the insurer's data (then no terms)."""
    try:
        return coverage.terms(facts.policies), None
    except DomainError as exc:
        return [], exc


def _card(
    facts: ReviewFacts,
    card: CardInput,
    n: int,
    proposal: Proposal | None,
    errors: Mapping[str, Text | str],
    entry_timezone: str,
    policy_terms: list[coverage.Terms] | None,
) -> CardAssessment:
    """One card's errors, warnings and fees (``policy_terms`` None: the insurer's data is unreadable)."""
    suffix = f"~{n}"
    result = CardAssessment(n=n, card=card, proposal=proposal)
    result.errors = {k: v for k, v in errors.items() if k.endswith(suffix)}
    result.changed = _changed(card, facts, entry_timezone)
    doctor_id = _int(card.doctor)
    if facts.prescription_needed and doctor_id is not None and not facts.can_prescribe.get(doctor_id, True):
        result.prescription_warning = N_("This appointment needs a prescription; this doctor cannot prescribe.")
    p = proposal
    if p is None:
        return result
    result.equals_request = is_original(p, facts.original)
    timezone_of_location = facts.directory.locations[p.location_id]
    if policy_terms is not None:
        verdict = coverage.evaluate(
            policy_terms,
            day=utc_to_local(p.start, timezone_of_location).date(),
            doctor_id=p.doctor_id,
            location_id=p.location_id,
            service=facts.service,
            field_prefix=suffix,
        )
        result.coverage_error, result.coverage_warning = verdict.error, verdict.warning
    if not result.errors:
        result.fees = fees.compute(
            facts.fee_rows,
            doctor_id=p.doctor_id,
            location_id=p.location_id,
            start=p.start,
            timezone=timezone_of_location,
            now=facts.now,
        )
    return result


def _request_conflict(facts: ReviewFacts, busy: Sequence[Busy]) -> Text | str | None:
    """Why the requested time itself cannot be approved: it has passed, or the doctor is taken then."""
    if facts.original.start <= facts.now:
        return N_("The requested time has passed: suggest alternatives or decline.")
    end = facts.original.start + timedelta(minutes=facts.duration_minutes)
    for b in busy:
        if b.doctor_id == facts.original.doctor_id and overlaps(facts.original.start, end, b.start, b.end):
            return Text("The requested time overlaps {what}.", what=b.what)
    return None


def _int(raw: str) -> int | None:
    return parse_id(raw)
