"""The patient's waitlist screen (docs/waitlist.md): the times offered to them (accept or decline), what they wait
for (leave), and the form to join: doctor (or any doctor), location, service, last day, weekdays, times of day,
and optionally the appointment they hold and want earlier."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time

from doctordesk.domain.scheduling.booking import SERVICES
from doctordesk.domain.waitlist.rules import ALL_DAYS, DAY_KEYS, DEFAULT_FROM, DEFAULT_TO, MAX_DAYS_AHEAD
from doctordesk.i18n import N_, _
from doctordesk.i18n.day_entry import date_attrs
from doctordesk.i18n.formats import format_day, format_local
from doctordesk.screens.protocol import Action, Element, Layout, Option, Page, el

SCREEN = "waitlist"
ENDPOINT = "/profile/waitlist"
LIST_ENDPOINT = "/profile/appointments"
BOOK_ENDPOINT = "/profile/book"
DAY_NAMES = (N_("Mon"), N_("Tue"), N_("Wed"), N_("Thu"), N_("Fri"), N_("Sat"), N_("Sun"))


def accept_endpoint(offer_id: int) -> str:
    return f"{ENDPOINT}/offers/{offer_id}/accept"


def decline_endpoint(offer_id: int) -> str:
    return f"{ENDPOINT}/offers/{offer_id}/decline"


def leave_endpoint(entry_id: int) -> str:
    return f"{ENDPOINT}/{entry_id}/leave"


@dataclass(frozen=True, slots=True)
class EntryView:
    id: int
    doctor: str | None  # None: any doctor
    place: str
    service: str
    until: date
    days: int
    time_from: time
    time_to: time
    held: str | None  # the appointment held, as a time


@dataclass(frozen=True, slots=True)
class OfferView:
    id: int
    doctor: str
    place: str
    service: str
    when: str
    answer_by: str | None  # None: until someone else takes it (all-at-once)


@dataclass(frozen=True, slots=True)
class WaitlistScreen:
    entries: Sequence[EntryView]
    offers: Sequence[OfferView]
    doctors: Sequence[Option]
    locations: Sequence[Option]
    held: Sequence[Option]  # the patient's coming appointments
    today: date
    layout: Layout
    timeout: int
    picked: dict[str, str]  # the booking screen's choice, to start the form from


def _days_text(days: int) -> str:
    if days == ALL_DAYS:
        return _("any day")
    return ", ".join(_(DAY_NAMES[i]) for i in range(7) if days & (1 << i))


def _times_text(e: EntryView) -> str:
    if e.time_from == DEFAULT_FROM and e.time_to == DEFAULT_TO:
        return _("any time")
    return f"{e.time_from:%H:%M}–{e.time_to:%H:%M}"


def _offer(o: OfferView) -> Element:
    what = _(
        "{service} with {doctor} at {place}",
        service=_(SERVICES.get(o.service, o.service)),
        doctor=o.doctor,
        place=o.place,
    )
    by = (
        _("Answer by {when}; then it goes to the next patient.", when=o.answer_by)
        if o.answer_by
        else _("Others were offered it too: the first to accept gets it.")
    )
    return el(
        f"offer-{o.id}",
        "Card",
        el(f"offer-when-{o.id}", "Regular", label=_("Time"), value=o.when),
        el(f"offer-what-{o.id}", "Text", value=what),
        el(f"offer-by-{o.id}", "Caption", value=by),
        el(
            f"accept-{o.id}",
            "Button",
            label=_("Accept this time"),
            action=Action(
                "POST", accept_endpoint(o.id), confirm=_("Take {when} with {doctor}?", when=o.when, doctor=o.doctor)
            ),
        ),
        el(f"decline-{o.id}", "Button", label=_("Not this time"), action=Action("POST", decline_endpoint(o.id))),
        label=_("An earlier time for you"),
    )


def _entry(e: EntryView) -> Element:
    who = e.doctor or _("any doctor")
    what = _(
        "{service} with {doctor} at {place}", service=_(SERVICES.get(e.service, e.service)), doctor=who, place=e.place
    )
    until = format_day(e.until, with_year=True)
    when = _("{days}, {times}, until {until}", days=_days_text(e.days), times=_times_text(e), until=until)
    children = [
        el(f"entry-what-{e.id}", "Text", value=what),
        el(f"entry-when-{e.id}", "Caption", value=when),
    ]
    if e.held:
        children.append(
            el(f"entry-held-{e.id}", "Caption", value=_("Earlier than your appointment on {when}", when=e.held))
        )
    children.append(
        el(f"leave-{e.id}", "Button", label=_("Leave the waitlist"), action=Action("POST", leave_endpoint(e.id)))
    )
    return el(f"entry-{e.id}", "Card", *children, label=what)


def _join(s: WaitlistScreen) -> Element:
    p = s.picked
    services = [Option(k, _(v)) for k, v in SERVICES.items()]
    days = [
        el(f"days-{key}", "Checkbox", label=_(DAY_NAMES[i]), name=f"days-{key}", value=False)
        for i, key in enumerate(DAY_KEYS)
    ]
    return el(
        "join",
        "Section",
        el(
            "join-doctor",
            "Combo",
            label=_("Doctor"),
            name="doctor",
            value=p.get("doctor", "any"),
            options=[Option("any", _("Any doctor")), *s.doctors],
        ),
        el(
            "join-location",
            "Combo",
            label=_("Location"),
            name="location",
            value=p.get("location", s.locations[0].value if s.locations else ""),
            options=list(s.locations),
        ),
        el(
            "join-service",
            "Combo",
            label=_("Service"),
            name="service",
            value=p.get("service", next(iter(SERVICES))),
            options=services,
        ),
        el("join-until", "Date", label=_("Until"), name="until", **date_attrs()),
        el("join-until-note", "Caption", value=_("At most {count} days ahead.", count=MAX_DAYS_AHEAD)),
        el("join-days", "Group", *days, label=_("Days you can come (none ticked: any day)")),
        el("join-from", "Time", label=_("From"), name="from", value=""),
        el("join-to", "Time", label=_("To"), name="to", value=""),
        el(
            "join-appointment",
            "Combo",
            label=_("Earlier than my appointment (optional)"),
            name="appointment",
            value="",
            options=[Option("", _("None")), *s.held],
        ),
        el("join-send", "Button", label=_("Join the waitlist"), action=Action("POST", ENDPOINT, form="join")),
        label=_("Tell me of an earlier time"),
    )


def render(screen: WaitlistScreen) -> Page:
    """The waitlist screen for one patient."""
    offers = [_offer(o) for o in screen.offers] or [
        el("no-offers", "Caption", value=_("No time is offered to you now."))
    ]
    entries = [_entry(e) for e in screen.entries] or [
        el("no-entries", "Caption", value=_("You are not waiting for a time."))
    ]
    elements: list[Element] = [
        el("back", "Link", label=_("Back to the list"), action=Action("PUT", LIST_ENDPOINT)),
        el("title", "Heading", value=_("Waitlist")),
        el(
            "about",
            "Text",
            value=_(
                "Tell us when you could come, and we offer you a time as soon as one frees up: by a notice here, "
                "a push and an email. Accepting sends the request to the doctor, as a booking does."
            ),
        ),
        el("offers", "Section", *offers, label=_("Times offered to you")),
        el("entries", "Section", *entries, label=_("You are waiting for")),
        _join(screen),
        el("book", "Link", label=_("Book an appointment"), action=Action("PUT", BOOK_ENDPOINT)),
    ]
    return Page(
        screen=SCREEN,
        title=_("Waitlist"),
        endpoint=ENDPOINT,
        poll=ENDPOINT,
        timeout=screen.timeout,
        elements=tuple(elements),
        layout=screen.layout,
    )


def expiry_text(expires_at: datetime, start: datetime, timezone: str) -> str | None:
    """When an offer must be answered, or None when it lasts until the time itself (all-at-once)."""
    return None if expires_at >= start else format_local(expires_at, timezone)
