"""The appointment list: the doctor's appointments grouped by what they need, with entry points to Review and
Approve and to Chat."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from doctordesk import i18n
from doctordesk.domain.appointments.list_filter import ListFilter
from doctordesk.domain.appointments.list_sections import Section
from doctordesk.domain.appointments.notices import Notice
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.appointments.views import AppointmentView
from doctordesk.domain.events import ALL_APPOINTMENTS_TOPIC, CLINIC_TOPIC, doctor_topic, patient_topic, user_topic
from doctordesk.domain.keyset import Slice, count_label
from doctordesk.domain.roles import Actor, Role
from doctordesk.i18n import N_, _, stored
from doctordesk.i18n.formats import format_local
from doctordesk.screens import list_filter
from doctordesk.screens.protocol import Action, Element, Layout, Page, el
from doctordesk.screens.state import Shown
from doctordesk.screens.wording import service_words, status_badge

SCREEN = "appointment-list"
ENDPOINT = list_filter.ENDPOINT
MORE_ENDPOINT = "/profile/appointments/more"
NOTICES_ENDPOINT = "/profile/notices"
BOOK_ENDPOINT = "/profile/book"
ADMIN_ENDPOINT = "/profile/admin/users"
CALENDAR_ENDPOINT = "/profile/calendar-feed"
DASHBOARD_ENDPOINT = "/profile/dashboard"
WAITLIST_ENDPOINT = "/profile/waitlist"
WEEK_ENDPOINT = "/profile/appointments/week"

# Each section's title from the viewer's point of view.
_TITLES: dict[Role, dict[Section, str]] = {
    Role.DOCTOR: {
        Section.NEEDS_DECISION: N_("Awaiting your decision"),
        Section.WAITING: N_("Waiting for the patient"),
        Section.UPCOMING: N_("Upcoming"),
        Section.PAST: N_("Past and closed"),
    },
    Role.PATIENT: {
        Section.NEEDS_DECISION: N_("Waiting for the doctor"),
        Section.WAITING: N_("Offers for you to answer"),
        Section.UPCOMING: N_("Upcoming"),
        Section.PAST: N_("Past and closed"),
    },
    Role.SUPPORT: {
        Section.NEEDS_DECISION: N_("Awaiting the doctor's decision"),
        Section.WAITING: N_("Waiting for the patient"),
        Section.UPCOMING: N_("Upcoming"),
        Section.PAST: N_("Past and closed"),
    },
}


def topics(actor: Actor) -> tuple[str, ...]:
    """The data the list shows, for the poll's change check and real-time routing (the clinic: doctors' and
    locations' names, locations' time zones)."""
    if actor.role is Role.DOCTOR:
        return (doctor_topic(actor.user_id), user_topic(actor.user_id), CLINIC_TOPIC)
    if actor.role is Role.PATIENT and actor.patient_id is not None:
        return (patient_topic(actor.patient_id), user_topic(actor.user_id), CLINIC_TOPIC)
    return (ALL_APPOINTMENTS_TOPIC, user_topic(actor.user_id), CLINIC_TOPIC)


def shown(actor: Actor) -> Shown:
    return Shown(SCREEN, ENDPOINT, topics(actor), repeatable=True)


def chat_endpoint(appointment_id: int) -> str:
    return f"/profile/messages/user-chat?appointment-id={appointment_id}"


def _actions(view: AppointmentView, role: Role) -> list[Element]:
    """What the viewer can do from the row: a doctor decides, doctors and support chat, a patient answers."""
    a = view.id
    if role is Role.PATIENT:
        label = _("Choose a time") if view.status.is_pending_response else _("View")
        return [el(f"offers-{a}", "Link", label=label, action=Action("PUT", f"/profile/appointments/{a}/offers"))]
    actions = []
    if role is Role.DOCTOR:
        label = _("Review and approve") if view.status is Status.REQUESTED else _("Details")
        actions.append(
            el(f"review-{a}", "Link", label=label, action=Action("PUT", f"/profile/appointments/{a}/approve"))
        )
    actions.append(
        el(f"chat-{a}", "Link", label=_("Chat"), action=Action("PUT", chat_endpoint(a)), props={"panel": "chat"})
    )
    return actions


class _Rows:
    """Rows as built, by all a row reads: the appointment's view (its unread count included), the viewer's role,
    the language and whether it is today. A row is a pure function of these, so a list rendered again after a
    change rebuilds only the rows that changed (the rest are most of a list, and building them was a fifth of a
    render's CPU). Rows are never shared across what they show: another view, role or language is another key.

    Sized to what the open lists show: the rows used in the last ``idle_seconds`` are kept (lists poll every 30 s
    and render about once a minute), up to ``most`` rows (about 4 KiB each); rows beyond ``least`` that nobody
    used for that long are let go. A fixed size below the working set (a clinic of a thousand doctors shows
    12,000 rows) would drop every row shortly before its next use and rebuild them all."""

    def __init__(
        self,
        least: int = 8192,
        most: int = 65536,
        idle_seconds: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._least, self._most, self._idle = least, most, idle_seconds
        self._clock = clock
        self._rows: OrderedDict[tuple[AppointmentView, Role, str, bool], tuple[Element, float]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, view: AppointmentView, role: Role, *, today: bool) -> Element:
        key = (view, role, i18n.current(), today)
        now = self._clock()
        with self._lock:
            found = self._rows.get(key)
            if found is not None:
                self._rows[key] = (found[0], now)
                self._rows.move_to_end(key)
                return found[0]
        built = _row(view, role, today=today)
        with self._lock:
            self._rows[key] = (built, now)
            self._let_go(now)
        return built

    def _let_go(self, now: float) -> None:
        rows, idle_since = self._rows, now - self._idle
        while len(rows) > self._most or (len(rows) > self._least and next(iter(rows.values()))[1] < idle_since):
            rows.popitem(last=False)


_ROWS = _Rows()


def row(view: AppointmentView, actor: Actor, *, now: datetime) -> Element:
    """One appointment: its local time (marked when it is today), the other party (both for support), place,
    service, status in the viewer's words, unread messages and the viewer's actions."""
    is_today = view.local_start.date() == now.astimezone(view.local_start.tzinfo).date()
    return _ROWS.get(view, actor.role, today=is_today)


def _confirmed(view: AppointmentView) -> list[Element]:
    """The patient said they will come (a reminder's link): a badge in words, only then."""
    if not view.confirmed:
        return []
    return [el(f"confirmed-{view.id}", "Badge", value=_("Patient confirmed"), label=_("Attendance"))]


def _row(view: AppointmentView, role: Role, *, today: bool) -> Element:
    a, is_today = view.id, today
    children = [
        el(
            f"time-{a}",
            "Regular",
            value=format_local(view.start, view.location.timezone),
            props={"datetime": view.start.isoformat(), "minutes": view.duration_minutes, "today": is_today},
        ),
        el(f"today-{a}", "Badge", value=_("Today"), visible=is_today, props={"tone": "info"}),
    ]
    if role is Role.PATIENT:
        children.append(el(f"doctor-{a}", "Regular", value=view.doctor.name, label=_("Doctor")))
    else:
        children.append(el(f"patient-{a}", "Regular", value=view.patient.name, label=_("Patient")))
        if role is not Role.DOCTOR:
            children.append(el(f"doctor-{a}", "Regular", value=view.doctor.name, label=_("Doctor")))
    children += [
        el(f"location-{a}", "Regular", value=view.location.name, label=_("Location")),
        el(f"service-{a}", "Regular", value=service_words(view.service), label=_("Service")),
        status_badge(f"status-{a}", view.status, role),
        *_confirmed(view),
        el(
            f"unread-{a}",
            "Badge",
            value=count_label(view.unread),
            label=_("unread messages"),
            visible=view.unread > 0,
            props={"tone": "attention"},
        ),
        *_actions(view, role),
    ]
    return el(f"appointment-{a}", "Row", *children, props={"appointment": a})


def _label(section: Section, actor: Actor, rows: Slice[AppointmentView]) -> str:
    title = _(_TITLES.get(actor.role, _TITLES[Role.SUPPORT])[section])
    if section is Section.PAST:
        return title
    if rows.total is None:
        return f"{title} ({len(rows.rows)})"
    return f"{title} ({count_label(rows.total)})"


def _more(section: Section, rows: Slice[AppointmentView]) -> Element:
    """The section's "show more" link (or, at the most a section shows, a note that says so)."""
    key = section.value
    if rows.at_limit and rows.more:
        return el(f"{key}-limit", "Caption", value=_("The list shows no more here; the read API pages through all."))
    return el(
        f"{key}-more",
        "Link",
        label=_("Show older") if section.newest_first else _("Show more"),
        visible=rows.more,
        action=Action("PATCH", f"{MORE_ENDPOINT}?section={key}"),
    )


def _notice_link(n: Notice, actor: Actor) -> list[Element]:
    """The appointment a notice is about, one activation away: a patient's answer screen, a doctor's Review and
    Approve, support's chat."""
    a = n.appointment_id
    if a is None:
        return []
    if actor.role is Role.PATIENT:
        action = Action("PUT", f"/profile/appointments/{a}/offers")
    elif actor.role is Role.DOCTOR:
        action = Action("PUT", f"/profile/appointments/{a}/approve")
    else:
        return [el(f"open-notice-{n.id}", "Link", label=_("Open the chat"), action=Action("PUT", chat_endpoint(a)),
                   props={"panel": "chat"})]  # fmt: skip
    return [el(f"open-notice-{n.id}", "Link", label=_("Open the appointment"), action=action)]


def _notices(notices: Sequence[Notice], actor: Actor) -> Element:
    """What others changed on the viewer's appointments since they last looked (docs/booking.md), each naming the
    appointment's date and time and linking to it."""
    items = [
        el(
            f"notice-{n.id}",
            "Notice",
            *_notice_link(n, actor),
            el(
                f"dismiss-{n.id}",
                "Button",
                label=_("Dismiss"),
                action=Action("POST", f"{NOTICES_ENDPOINT}/{n.id}/dismiss"),
            ),
            label=_("Appointment on {when}", when=format_local(n.start, n.timezone))
            if n.start is not None and n.timezone
            else None,
            value=stored(n.text),
            props={"tone": "info", "appointment": n.appointment_id},
        )
        for n in notices
    ]
    dismiss_all = el(
        "dismiss-all",
        "Link",
        label=_("Dismiss all"),
        visible=len(items) > 1,
        action=Action("POST", f"{NOTICES_ENDPOINT}/dismiss"),
    )
    return el("notices", "Section", *items, dismiss_all, label=_("Notices"), visible=bool(items))


def render(
    sections: Mapping[Section, Slice[AppointmentView]],
    actor: Actor,
    *,
    now: datetime,
    layout: Layout,
    timeout: int,
    notices: Sequence[Notice] = (),
    current_filter: ListFilter | None = None,
) -> Page:
    """The list: the viewer's notices, the filter, then each section's rows in its order, each with its "show
    more" link. Patients also get the way to book, doctors their calendar feed, admins the way to administration."""
    current_filter = current_filter or ListFilter()
    elements: list[Element] = [el("title", "Heading", value=_("Appointments")), _notices(notices, actor)]
    if actor.role is Role.PATIENT:
        elements.append(el("book", "Link", label=_("Book an appointment"), action=Action("PUT", BOOK_ENDPOINT)))
        elements.append(el("waitlist", "Link", label=_("Waitlist"), action=Action("PUT", WAITLIST_ENDPOINT)))
    if actor.role is Role.DOCTOR:
        elements.append(el("week-view", "Link", label=_("Week"), action=Action("PUT", WEEK_ENDPOINT)))
        elements.append(el("calendar-feed", "Link", label=_("Calendar feed"), action=Action("PUT", CALENDAR_ENDPOINT)))
        elements.append(el("dashboard", "Link", label=_("Dashboard"), action=Action("PUT", DASHBOARD_ENDPOINT)))
    if actor.role is Role.ADMIN:
        elements.append(el("administration", "Link", label=_("Administration"), action=Action("PUT", ADMIN_ENDPOINT)))
    elements += [list_filter.form(current_filter, actor), list_filter.chips(current_filter, actor)]
    nothing = _("Nothing matches the filter.") if current_filter.active else _("Nothing here.")
    for section in Section:
        shown = sections[section]
        key = section.value
        rows = [row(v, actor, now=now) for v in shown.rows]
        empty = el(f"{key}-empty", "Caption", value=nothing, visible=not rows)
        elements.append(el(key, "Section", empty, *rows, _more(section, shown), label=_label(section, actor, shown)))
    return Page(
        screen=SCREEN,
        title=_("Appointments"),
        endpoint=list_filter.endpoint(current_filter),
        poll=ENDPOINT,
        timeout=timeout,
        elements=tuple(elements),
        layout=layout,
    )
