"""The doctor's week view (docs/week-view.md): a ``Calendar`` of ``Day`` columns holding ``Event``s — approved
appointments, requests awaiting the doctor's decision, offers waiting for the patient, and the free times left in
the work hours — in the doctor's zone. A request or an appointment opens Review and Approve, an offer the chat. A
phone gets one day at a time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from typing import Any

from doctordesk.domain.appointments.week import Kind, Placed, hour_span
from doctordesk.domain.events import CLINIC_TOPIC, doctor_topic, user_topic
from doctordesk.domain.roles import Actor
from doctordesk.i18n import N_, _
from doctordesk.i18n.formats import format_day
from doctordesk.screens.protocol import Action, Element, Layout, Page, el
from doctordesk.screens.state import Shown
from doctordesk.screens.wording import service_words

SCREEN = "week-view"
ENDPOINT = "/profile/appointments/week"
LIST_ENDPOINT = "/profile/appointments"

# What each kind of entry is, in words (the colour says it too, but never alone).
KIND_WORDS: dict[Kind, str] = {
    Kind.APPOINTMENT: N_("Approved"),
    Kind.REQUEST: N_("Awaiting your decision"),
    Kind.OFFER: N_("Offer waiting for the patient"),
    Kind.FREE: N_("Free"),
}


def endpoint(day: date) -> str:
    return f"{ENDPOINT}?day={day.isoformat()}"


def shown(actor: Actor) -> Shown:
    return Shown(SCREEN, ENDPOINT, (doctor_topic(actor.user_id), user_topic(actor.user_id), CLINIC_TOPIC))


def _clock(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


def _action(p: Placed) -> tuple[Action | None, dict[str, Any]]:
    a = p.item.appointment_id
    if a is None:
        return None, {}
    if p.item.kind is Kind.OFFER:
        return Action("PUT", f"/profile/messages/user-chat?appointment-id={a}"), {"panel": "chat"}
    return Action("PUT", f"/profile/appointments/{a}/approve"), {}


def _event(p: Placed, n: int) -> Element:
    item, stamp = p.item, p.day.strftime("%Y%m%d")
    if item.kind is Kind.FREE:
        ref, label = f"free-{stamp}-{n}", _("Free")
    elif item.kind is Kind.OFFER:
        ref, label = f"offer-{item.appointment_id}-{item.offer_n}-{stamp}", item.who
    else:
        ref, label = f"slot-{item.appointment_id}-{stamp}", item.who
    what = _(KIND_WORDS[item.kind])
    details = [item.location] if item.kind is Kind.FREE else [what, service_words(item.service), item.location]
    if item.confirmed:
        details.insert(1, _("Patient confirmed"))
    action, extra = _action(p)
    props: dict[str, Any] = {
        "kind": item.kind.value,
        "start": p.start_minute,
        "end": p.end_minute,
        "lane": p.lane,
        "lanes": p.lanes,
        "details": " · ".join(d for d in details if d),
        **extra,
    }
    if item.appointment_id is not None:
        props["appointment"] = item.appointment_id
    if item.confirmed:
        props["confirmed"] = True
    value = f"{_clock(p.start_minute)}–{_clock(p.end_minute)}"
    return el(ref, "Event", label=label, value=value, action=action, props=props)


def _day(day: date, placed: Sequence[Placed], *, today: date) -> Element:
    events = [_event(p, n) for n, p in enumerate(placed)]
    note = _("Today") if day == today else None
    props = {"date": day.isoformat(), "today": day == today}
    return el(f"day-{day.isoformat()}", "Day", *events, label=format_day(day), value=note, props=props)


def _navigation(days: Sequence[date], *, today: date, one_day: bool) -> Element:
    step = timedelta(days=1 if one_day else 7)
    before, after = (_("Previous day"), _("Next day")) if one_day else (_("Previous week"), _("Next week"))
    here = _("Today") if one_day else _("This week")
    return el(
        "week-nav",
        "Group",
        el("week-prev", "Link", label=before, action=Action("PUT", endpoint(days[0] - step))),
        el("week-today", "Link", label=here, action=Action("PUT", endpoint(today)), enabled=today not in days),
        el("week-next", "Link", label=after, action=Action("PUT", endpoint(days[0] + step))),
        el("week-list", "Link", label=_("List"), action=Action("PUT", LIST_ENDPOINT)),
        props={"role": "toolbar"},
    )


def render(
    placed: Mapping[date, Sequence[Placed]],
    *,
    days: Sequence[date],
    today: date,
    zone: str,
    layout: Layout,
    timeout: int,
    week_over: bool = False,
) -> Page:
    """The week (or, on a phone, the day) as a page: its title, the way to other weeks and back to the list, the
    zone the times are in, and the grid. ``week_over``: next week is shown because this week's work hours are all
    behind (a notice says so; "This week" goes back)."""
    one_day = len(days) == 1
    if one_day:
        title = f"{format_day(days[0])} {days[0].year}"
    else:
        title = _("Week of {day}", day=format_day(days[0], with_year=True))
    first, last = hour_span(placed)
    grid = el(
        "week",
        "Calendar",
        *(_day(d, placed.get(d, ()), today=today) for d in days),
        label=_("Calendar"),
        props={"first_hour": first, "last_hour": last},
    )
    elements = (
        el("title", "Heading", value=title),
        _navigation(days, today=today, one_day=one_day),
        el(
            "week-over",
            "Notice",
            value=_("Your work hours this week are over: here is next week.") if week_over else None,
            visible=week_over,
            props={"tone": "info"},
        ),
        el("week-zone", "Caption", value=_("Times in {zone}.", zone=zone)),
        grid,
    )
    return Page(
        screen=SCREEN,
        title=_("Week"),
        endpoint=endpoint(days[0]),
        poll=ENDPOINT,
        timeout=timeout,
        elements=elements,
        layout=layout,
    )
