"""The Review and Approve screen (spec 2.5): appointment metadata, warnings, the Suggested Scheduling cards and the
three actions. A pure function of the assessment (domain/review/assessment.py): what the rules say is what the page
shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from doctordesk.domain.appointments.decisions import MAX_REASON_CHARS
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.appointments.views import AppointmentView
from doctordesk.domain.events import CLINIC_TOPIC, appointment_topic, doctor_topic
from doctordesk.domain.review.assessment import Assessment, CardAssessment
from doctordesk.domain.roles import Role
from doctordesk.domain.scheduling.suggestions import MAX_ALTERNATIVES
from doctordesk.i18n import _, maybe
from doctordesk.i18n.day_entry import date_attrs
from doctordesk.i18n.formats import format_local, money
from doctordesk.screens.protocol import Action, Element, Layout, Option, Page, el
from doctordesk.screens.state import Shown
from doctordesk.screens.wording import service_words, status_badge

SCREEN = "review-and-approve"
LIST_ENDPOINT = "/profile/appointments"

# Offered by the timezone selector (any IANA zone is accepted; the current choice is always listed).
COMMON_TIMEZONES = (
    "Europe/Berlin",
    "Europe/London",
    "Europe/Paris",
    "Europe/Madrid",
    "Europe/Rome",
    "Europe/Vienna",
    "Europe/Zurich",
    "Europe/Amsterdam",
    "Europe/Lisbon",
    "Europe/Warsaw",
    "Europe/Athens",
    "Europe/Helsinki",
    "America/New_York",
    "America/Chicago",
    "America/Los_Angeles",
    "Asia/Dubai",
    "Asia/Tokyo",
    "Australia/Sydney",
    "UTC",
)


def endpoint(appointment_id: int) -> str:
    return f"/profile/appointments/{appointment_id}/approve"


def draft_topic(appointment_id: int, user_id: int) -> str:
    """The draft of one user's Review and Approve screen (other tabs of that user refresh on it)."""
    return f"review:{appointment_id}:{user_id}"


def topics(appointment_id: int, user_id: int) -> tuple[str, ...]:
    # The doctor's own topic: a booking elsewhere in their schedule can change an overlap message here. The clinic:
    # fees, work hours, coverage, doctors' settings.
    return (
        appointment_topic(appointment_id),
        draft_topic(appointment_id, user_id),
        doctor_topic(user_id),
        CLINIC_TOPIC,
    )


def shown(appointment_id: int, user_id: int) -> Shown:
    """Repeatable: who may decide (the appointment's doctor, admins) changes only with the appointment (its
    topic: a change of doctor is an event there) or the viewer's role (the auth cache)."""
    return Shown(SCREEN, endpoint(appointment_id), topics(appointment_id, user_id), repeatable=True)


@dataclass(frozen=True, slots=True)
class ReviewScreen:
    view: AppointmentView
    assessment: Assessment
    doctors: Sequence[Option]
    locations: Sequence[Option]
    decline_open: bool
    layout: Layout
    timeout: int
    # When the viewer's draft (kept for them on every device, docs/review-and-approve.md#drafts) was last saved;
    # None without a draft or with nothing in it.
    draft_saved: datetime | None = None
    # The request came from the waitlist: the patient accepted a freed time offered to them (docs/waitlist.md).
    from_waitlist: bool = False


def _notice(ref: str, text: str | None, tone: str) -> Element:
    return el(ref, "Notice", value=maybe(text), visible=text is not None, props={"tone": tone})


def _metadata(view: AppointmentView, *, from_waitlist: bool = False) -> Element:
    return el(
        "details",
        "Section",
        el("from-waitlist", "Badge", value=_("From the waitlist"), visible=from_waitlist),
        el(
            "requested-time",
            "Regular",
            label=_("Requested time"),
            value=format_local(view.start, view.location.timezone),
            props={"datetime": view.start.isoformat(), "minutes": view.duration_minutes},
        ),
        el("patient", "Regular", label=_("Patient"), value=view.patient.name),
        el("doctor", "Regular", label=_("Doctor"), value=view.doctor.name),
        el("location", "Regular", label=_("Location"), value=view.location.name),
        el("service", "Regular", label=_("Service"), value=service_words(view.service)),
        el("request-note", "Text", label=_("Patient's note"), value=view.request_note, visible=bool(view.request_note)),
        el(
            "decline-reason",
            "Text",
            label=_("Reason for declining"),
            value=view.decline_reason,
            visible=view.status is Status.DECLINED and bool(view.decline_reason),
        ),
        status_badge("status", view.status, Role.DOCTOR, label=_("Status")),
        label=_("Appointment"),
    )


def _card(screen: ReviewScreen, card: CardAssessment) -> Element:
    """One Suggested Scheduling card: its fields, its fees, and Delete from the second card on."""
    n, appointment_id = card.n, screen.view.id
    coverage_fields = card.coverage_error.fields if card.coverage_error is not None else {}
    children = [*_card_fields(screen, card, {**coverage_fields, **card.errors}), *_card_fees(card)]
    if n >= 2:
        children.append(
            el(
                f"delete~{n}",
                "Link",
                label=_("Delete"),
                action=Action("PATCH", f"{endpoint(appointment_id)}/delete-alternative/{n}"),
                props={"icon": "trash"},
            )
        )
    card_error = None
    if not card.complete and (card.card.date or card.card.time):
        # A card the doctor has not typed in yet shows no error (Approve stays disabled until it is complete).
        card_error = _("Enter a date and time for this alternative.")
    elif card.coverage_error is not None and not coverage_fields:
        card_error = card.coverage_error.message
    return el(
        f"alternative-{n}",
        "Card",
        *children,
        # The spec's card, titled and numbered as the errors name it ("Overlaps with alternative 1"), without the
        # feature's name ("Suggested Scheduling") that no one at the clinic says.
        label=_("Alternative {n}", n=n),
        error=maybe(card_error),
        warning=maybe(card.coverage_warning),
        props={"n": n, "equals_request": card.equals_request} if card.equals_request else {"n": n},
    )


def _card_fields(screen: ReviewScreen, card: CardAssessment, errors: dict[str, Any]) -> list[Element]:
    """Doctor, location, date and time (changed ones highlighted), with the prescription warning in between."""
    n = card.n
    change = Action("PATCH", f"{endpoint(screen.view.id)}/change", form=f"alternative-{n}")
    tz = screen.assessment.entry_timezone

    def field(key: str, kind: str, label: str, name: str, value: str, **more: Any) -> Element:
        return el(
            f"{key}~{n}", kind, label=label, name=f"{name}~{n}", value=value,
            highlighted=card.changed.get(key, False), error=maybe(errors.get(f"{name}~{n}")), action=change, **more,
        )  # fmt: skip

    fields = [
        field("doctor", "Combo", _("Doctor"), "profile", card.card.doctor, options=screen.doctors),
        field("location", "Combo", _("Location"), "location", card.card.location, options=screen.locations),
    ]
    if card.prescription_warning:
        warning = maybe(card.prescription_warning)
        fields.append(el(f"prescription-info~{n}", "Link", label=_("Prescription needed"), warning=warning))
    return [
        *fields,
        field("date", "Date", _("Date"), "date", card.card.date, **date_attrs()),
        field("time", "Time", _("Time ({timezone})", timezone=tz), "time", card.card.time, placeholder="HH:MM",
              props={"timezone": tz}),
    ]  # fmt: skip


def _card_fees(card: CardAssessment) -> list[Element]:
    """The card's total fee and doctor fee, shown once the card is valid."""
    n, fees = card.n, card.fees if card.valid else None
    return [
        el(
            f"fee-text~{n}",
            "Section",
            label=_("Total fee"),
            value=money(fees.total_fee_cents, fees.currency) if fees else None,
            visible=bool(fees),
        ),
        el(f"doctor-fee-text~{n}", "Regular", value=_("Doctor fee"), visible=bool(fees)),
        el(
            f"doctor-fee~{n}",
            "Highlight",
            value=money(fees.doctor_fee_cents, fees.currency) if fees else None,
            visible=bool(fees),
        ),
    ]


def _timezone_box(s: ReviewScreen) -> Element:
    a = s.assessment
    options = list(COMMON_TIMEZONES)
    if a.entry_timezone not in options:
        options.insert(0, a.entry_timezone)
    # Asked for once the doctor entered a time, not before: no error on a card nobody has typed in.
    needed = a.suggesting and not a.timezone_confirmed and any(c.card.date or c.card.time for c in a.cards)
    return el(
        "timezone-box",
        "Section",
        el(
            "timezone",
            "Timezone",
            label=_("Times are entered in"),
            name="timezone",
            value=a.entry_timezone,
            options=[Option(z, z) for z in options],
            highlighted=needed,
            error=_("Confirm the timezone the times are entered in.") if needed else None,
        ),
        el(
            "confirm-timezone",
            "Button",
            label=_("Timezone confirmed") if a.timezone_confirmed else _("Confirm timezone"),
            action=Action("PATCH", f"{endpoint(s.view.id)}/timezone", form="timezone-box"),
        ),
        label=_("Timezone"),
        props={"reason": _("Your profile has no timezone set.")},
    )


def _disclaimer(s: ReviewScreen) -> Element:
    a = s.assessment
    return el(
        "disclaimer",
        "Section",
        el(
            "disclaimer-text",
            "Text",
            value=_(
                "This appointment requires the patient disclaimer to be shown and acknowledged: the patient is "
                "informed about the scope of a remote or follow-up consultation and its costs."
            ),
        ),
        el(
            "disclaimer-displayed",
            "Checkbox",
            label=_("I have displayed the disclaimer to the patient"),
            name="disclaimer-displayed",
            value=a.disclaimer_acknowledged,
            enabled=a.decidable,
            action=Action("PATCH", f"{endpoint(s.view.id)}/disclaimer", form="disclaimer"),
        ),
        label=_("Disclaimer"),
    )


def _decline_modal(s: ReviewScreen) -> Element:
    a = s.view.id
    return el(
        "decline-modal",
        "Modal",
        el(
            "reason",
            "Edit",
            label=_("Reason"),
            name="reason",
            placeholder=_("Why is the request declined?"),
            props={"multiline": True, "maxlength": MAX_REASON_CHARS},
        ),
        el("version~decline", "Hidden", name="version", value=str(s.view.version)),
        el(
            "decline-submit",
            "Button",
            label=_("Decline"),
            action=Action("POST", f"/profile/appointments/{a}/decline", form="decline-modal"),
        ),
        el("decline-close", "Link", label=_("Back"), action=Action("PATCH", f"{endpoint(a)}/decline-dialog/close")),
        label=_("Decline the request"),
        visible=s.decline_open and s.assessment.decidable,
        # Escape activates this control: the server closes the dialog too, so it does not open again next visit.
        props={"cancel": "decline-close"},
    )


def _approve_effect(a: Assessment) -> str:
    n = len(a.cards) if a.suggesting else 0
    if n == 1:
        return _("Sends 1 alternative to the patient, who chooses or declines it.")
    if n > 1:
        return _("Sends {n} alternatives to the patient, who chooses one or declines them.", n=n)
    return _("Approves the requested time and tells the patient.")


def _draft_note(s: ReviewScreen, base: str) -> Element:
    """Says that unsent changes were kept (they follow the doctor to every device), when, and offers to discard
    them: a card left on another device is seen, and can be dropped, before it blocks Approve."""
    saved = s.draft_saved
    text = None
    if saved is not None and s.assessment.decidable:
        when = format_local(saved, s.view.location.timezone)
        text = _("Restored your unsent changes from {when}. They are kept on every device you sign in on.", when=when)
    return el(
        "draft-note",
        "Notice",
        el("discard-draft", "Button", label=_("Discard changes"), action=Action("PATCH", f"{base}/discard")),
        value=text,
        visible=text is not None,
        props={"tone": "info"},
    )


def render(screen: ReviewScreen) -> Page:
    a = screen.assessment
    view = screen.view
    base = endpoint(view.id)
    request_coverage = a.request_coverage
    coverage_error = None
    coverage_warning = None
    if request_coverage is not None and not a.suggesting:
        coverage_error = request_coverage.error.message if request_coverage.error is not None else None
        coverage_warning = request_coverage.warning
    elements: list[Element] = [
        el("title", "Heading", value=_("Review and approve")),
        _draft_note(screen, base),
        el("version", "Hidden", name="version", value=str(view.version)),
        _metadata(view, from_waitlist=screen.from_waitlist),
        _notice("status-note", a.not_decidable_reason, "info"),
        el(
            "offers-link",
            "Link",
            label=_("See the times offered to the patient"),
            visible=view.status.is_pending_response,
            action=Action("PUT", f"/profile/appointments/{view.id}/offers"),
        ),
        _notice("third-party-error", a.third_party_error.message if a.third_party_error else None, "error"),
        _notice("coverage-error", coverage_error if a.decidable else None, "error"),
        _notice("coverage-warning", coverage_warning if a.decidable else None, "warning"),
        _notice(
            "prescription-warning",
            a.request_prescription_warning if a.decidable and not a.suggesting else None,
            "warning",
        ),
        _notice("request-conflict", a.request_conflict if a.decidable and not a.suggesting else None, "warning"),
    ]
    if a.facts.disclaimer_required:
        elements.append(_disclaimer(screen))
    if a.facts.profile_timezone is None and a.decidable:
        elements.append(_timezone_box(screen))
    if a.decidable:
        elements += [_card(screen, c) for c in a.cards]
    elements += _actions(screen, base)
    return Page(
        screen=SCREEN,
        title=_("Review and approve: {name}", name=view.patient.name),
        endpoint=base,
        poll=base,
        timeout=screen.timeout,
        elements=tuple(elements),
        layout=screen.layout,
    )


def _actions(s: ReviewScreen, base: str) -> list[Element]:
    """Another alternative, Approve (with what it will do), Decline, Cancel and the decline dialog."""
    a = s.assessment
    full = len(a.cards) >= MAX_ALTERNATIVES
    # Disabled, with the reason beside it, when it could only add cards that must fail.
    hopeless = maybe(a.no_alternative_reason) if a.decidable else None
    return [
        el(
            "another-alternative",
            "Link",
            label=_("Suggest another alternative"),
            enabled=a.decidable and not full and hopeless is None,
            warning=_("At most {count} alternatives.", count=MAX_ALTERNATIVES) if full and a.decidable else None,
            action=Action("PATCH", f"{base}/add-alternative"),
            props={"description": hopeless} if hopeless else None,
        ),
        el("another-alternative-note", "Caption", value=hopeless, visible=hopeless is not None),
        el("spacer", "Spacer"),
        el(
            "approve",
            "Button",
            label=_("Approve"),
            enabled=a.decidable and a.ready,
            action=Action("POST", base),
            props={"tone": "primary"},
        ),
        # The spec's Approve keeps its label; this line says what it will do.
        el("approve-effect", "Caption", value=_approve_effect(a), visible=a.decidable),
        el(
            "decline",
            "Button",
            label=_("Decline"),
            enabled=a.decidable,
            action=Action("PATCH", f"{base}/decline-dialog"),
        ),
        el(
            "cancel",
            "Link",
            # Beside Decline on a canceled appointment, "Cancel" read as "cancel the appointment".
            label=_("Discard changes and go back") if a.suggesting else _("Back to the list"),
            action=Action("PATCH", f"{base}/cancel", confirm=_("Discard your changes?") if a.suggesting else None),
        ),
        _decline_modal(s),
    ]
