"""The patient's booking screen: choose doctor, location and service, browse a week of free times, pick one, add a
note and send the request. The choice lives in the screen's URL (``endpoint``), so Back, a reload and a shared
link show the same screen; free times are rendered in the location's timezone."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from itertools import groupby
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from doctordesk.domain import moments
from doctordesk.domain.events import CLINIC_TOPIC, doctor_topic, user_topic
from doctordesk.domain.scheduling.booking import NOTE_MAX, SERVICES, Choice
from doctordesk.i18n import _
from doctordesk.i18n.formats import format_day, format_local
from doctordesk.screens.protocol import Action, Element, Layout, Option, Page, el
from doctordesk.screens.state import Shown

SCREEN = "booking"
WAITLIST_ENDPOINT = "/profile/waitlist"
BASE = "/profile/book"
CHOOSE_ENDPOINT = f"{BASE}/choose"
REQUEST_ENDPOINT = f"{BASE}/request"
START_FORMAT = "%Y%m%dT%H%MZ"  # a picked start in the URL and the form: UTC, to the minute


def start_param(start: datetime) -> str:
    return start.astimezone(UTC).strftime(START_FORMAT)


def parse_start(value: str) -> datetime | None:
    """A start written by ``start_param`` (read by ``moments.parse_stamp``), or None when ``value`` is not one."""
    return moments.parse_stamp(value)


def endpoint(choice: Choice) -> str:
    query: dict[str, str] = {}
    if choice.doctor_id is not None:
        query["doctor"] = str(choice.doctor_id)
    if choice.location_id is not None:
        query["location"] = str(choice.location_id)
    query["service"] = choice.service
    if choice.week_asked:  # else the screen shows the first week with a free time, sought again at every render
        query["week"] = choice.week.isoformat()
    if choice.start is not None:
        query["start"] = start_param(choice.start)
    return f"{BASE}?{urlencode(query)}"


def shown(choice: Choice, user_id: int) -> Shown:
    """Free times change with any change to the doctor's appointments (the doctor's topic) and with work hours
    and the clinic's doctors and locations (the clinic's)."""
    mine = (user_topic(user_id), CLINIC_TOPIC)
    topics = (doctor_topic(choice.doctor_id), *mine) if choice.doctor_id else mine
    return Shown(SCREEN, endpoint(choice), topics)


@dataclass(frozen=True, slots=True)
class BookingScreen:
    choice: Choice
    doctors: Sequence[Option]
    locations: Sequence[Option]  # where the chosen doctor works
    timezone: str | None  # the chosen location's
    free: Sequence[datetime]  # the week's free starts, UTC, ascending
    first_week: date
    last_week: date
    layout: Layout
    timeout: int
    # The picked time as the patient's insurance sees it (``domain/review/coverage.booking_warning``).
    coverage_warning: str | None = None
    # The doctor could not approve the picked time (``coverage.blocks_approval``): "Request this time" is off.
    coverage_blocks: bool = False
    # The days from today on the patient's policies cover (``coverage.covered_ahead``), named when a date is not.
    covered: tuple[date, date] | None = None
    # No week was asked: ``choice.week`` is the first week with a free time, or, when there is none up to the
    # horizon, this week and ``free_until`` the horizon's last day (Next week is then off: nothing to find).
    free_until: date | None = None


def _choice(s: BookingScreen) -> Element:
    change = Action("PATCH", CHOOSE_ENDPOINT, form="choice")
    c = s.choice
    return el(
        "choice",
        "Section",
        el(
            "doctor",
            "Combo",
            label=_("Doctor"),
            name="doctor",
            value=str(c.doctor_id or ""),
            options=s.doctors,
            action=change,
        ),
        el(
            "location",
            "Combo",
            label=_("Location"),
            name="location",
            value=str(c.location_id or ""),
            options=s.locations,
            action=change,
        ),
        el(
            "service",
            "Combo",
            label=_("Service"),
            name="service",
            value=c.service,
            options=[Option(k, _(v)) for k, v in SERVICES.items()],
            action=change,
        ),
        label=_("What and where"),
    )


def _week_link(ref: str, s: BookingScreen, week: date, label: str, enabled: bool) -> Element:
    target = Choice(s.choice.doctor_id, s.choice.location_id, s.choice.service, week)
    return el(ref, "Link", label=label, enabled=enabled, action=Action("PUT", endpoint(target)))


def _first_free(s: BookingScreen) -> Element:
    """Why the screen opened on a later week than this one: no free time is left before it."""
    c = s.choice
    moved = not c.week_asked and s.free_until is None and c.week > s.first_week
    text = _(
        "No free times left this week. The first free time is in the week of {first} – {last}.",
        first=format_day(c.week),
        last=format_day(c.week + timedelta(days=6), with_year=True),
    )
    return el("first-free", "Notice", value=text if moved else None, visible=moved, props={"tone": "info"})


def _none_free(s: BookingScreen) -> Element:
    """Nothing to find up to the horizon: say so once, instead of a Next week to click through a year of."""
    c = s.choice
    doctor = next((o.label for o in s.doctors if o.value == str(c.doctor_id)), "")
    location = next((o.label for o in s.locations if o.value == str(c.location_id)), "")
    text = None
    if s.free_until is not None:
        text = _(
            "{doctor} has no free time at {location} until {day}. Choose another doctor or location, or ask the "
            "clinic.",
            doctor=doctor,
            location=location,
            day=format_day(s.free_until, with_year=True),
        )
    return el("none-free", "Notice", value=text, visible=text is not None, props={"tone": "warning"})


def _times(s: BookingScreen) -> Element:
    c = s.choice
    zone = ZoneInfo(s.timezone or "UTC")
    days: list[Element] = []
    for day, starts in groupby(s.free, key=lambda t: t.astimezone(zone).date()):
        links = [
            el(
                f"time-{start_param(t)}",
                "Link",
                label=t.astimezone(zone).strftime("%H:%M"),
                highlighted=t == c.start,
                action=Action("PUT", endpoint(Choice(c.doctor_id, c.location_id, c.service, c.week, t))),
                props={"start": t.isoformat()},
            )
            for t in starts
        ]
        days.append(el(f"day-{day.isoformat()}", "Group", *links, label=format_day(day)))
    last_day = c.week + timedelta(days=6)
    title = _("Free times {first} – {last}", first=format_day(c.week), last=format_day(last_day, with_year=True))
    return el(
        "times",
        "Section",
        _week_link("previous-week", s, c.week - timedelta(weeks=1), _("Previous week"), c.week > s.first_week),
        _week_link(
            "next-week", s, c.week + timedelta(weeks=1), _("Next week"), c.week < s.last_week and s.free_until is None
        ),
        _first_free(s),
        _none_free(s),
        el("timezone-note", "Caption", value=_("Times in {timezone}.", timezone=s.timezone) if s.timezone else None),
        el("times-empty", "Caption", value=_("No free times this week."), visible=not days and s.free_until is None),
        *days,
        label=title if s.timezone else _("Free times"),
    )


def _covered_days(s: BookingScreen) -> str:
    """Which days the patient's policy covers from today on, or that none does (then only support can help)."""
    if s.covered is None:
        return _("Your policy covers no date from today on. Please contact support.")
    first, last = s.covered
    return _(
        "Your policy covers {first} to {last}.",
        first=format_day(first, with_year=True),
        last=format_day(last, with_year=True),
    )


def _confirm(s: BookingScreen) -> Element:
    c = s.choice
    picked = c.start if c.start is not None and c.start in s.free else None
    gone = c.start is not None and picked is None
    return el(
        "confirm",
        "Section",
        el(
            "taken",
            "Notice",
            value=_("That time is no longer free. Please pick another."),
            visible=gone,
            props={"tone": "warning"},
        ),
        el(
            "coverage-warning",
            "Notice",
            value=_(s.coverage_warning) if s.coverage_warning else None,
            visible=picked is not None and s.coverage_warning is not None,
            props={"tone": "error" if s.coverage_blocks else "warning"},
        ),
        el(
            "coverage-period",
            "Caption",
            value=_covered_days(s) if picked is not None and s.coverage_blocks else None,
            visible=picked is not None and s.coverage_blocks,
        ),
        el(
            "chosen-time",
            "Regular",
            label=_("Time"),
            value=format_local(picked, s.timezone or "UTC") if picked else None,
            visible=picked is not None,
        ),
        el(
            "note",
            "Edit",
            label=_("Note for the doctor (optional)"),
            name="note",
            visible=picked is not None,
            props={"multiline": True, "maxlength": NOTE_MAX},
        ),
        el("req-doctor", "Hidden", name="doctor", value=str(c.doctor_id or "")),
        el("req-location", "Hidden", name="location", value=str(c.location_id or "")),
        el("req-service", "Hidden", name="service", value=c.service),
        el("req-start", "Hidden", name="start", value=start_param(picked) if picked else ""),
        el(
            "request",
            "Button",
            label=_("Request this time"),
            visible=picked is not None,
            enabled=not s.coverage_blocks,
            action=Action("POST", REQUEST_ENDPOINT, form="confirm"),
        ),
        label=_("Your request"),
        visible=c.start is not None,
        # The next step once a time is picked: clients move focus and view here.
        props={"focus": True} if picked is not None else None,
    )


def _waitlist(s: BookingScreen) -> Element:
    """The way to the waitlist for this choice (docs/waitlist.md): told when an earlier time frees up."""
    c = s.choice
    query = "&".join(
        f"{k}={v}" for k, v in (("doctor", c.doctor_id), ("location", c.location_id), ("service", c.service)) if v
    )
    target = f"{WAITLIST_ENDPOINT}?{query}" if query else WAITLIST_ENDPOINT
    return el("waitlist", "Link", label=_("Tell me of an earlier time"), action=Action("PUT", target))


def render(screen: BookingScreen) -> Page:
    elements = [
        el("title", "Heading", value=_("Book an appointment")),
        el(
            "no-doctors",
            "Notice",
            value=_("No doctor can be booked at the moment."),
            visible=not screen.doctors,
            props={"tone": "info"},
        ),
        _choice(screen),
        _times(screen),
        _confirm(screen),
        _waitlist(screen),
    ]
    return Page(
        screen=SCREEN,
        title=_("Book an appointment"),
        endpoint=endpoint(screen.choice),
        poll=endpoint(screen.choice),
        timeout=screen.timeout,
        elements=tuple(elements),
        layout=screen.layout,
    )
