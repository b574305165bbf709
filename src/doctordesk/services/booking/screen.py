"""The patient's booking screen (``screens/booking.py``): its page and poll for a choice, the choice changed from
the form, and the request sent, through the same ``place_request`` the integration API uses (same rules, same
codes). Only patients book, each for themself; any other role gets 404, as for a screen that is not theirs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import date, datetime
from functools import partial

from doctordesk.domain.edges import earliest, next_utc_midnight
from doctordesk.domain.errors import NotFound, ValidationFailed
from doctordesk.domain.inputs import parse_id, text_problem
from doctordesk.domain.review import coverage
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.scheduling.booking import (
    NOTE_MAX,
    SERVICES,
    VISIT_MINUTES,
    Choice,
    last_week,
    monday,
    settle,
    week_days,
)
from doctordesk.domain.texts import N_, Text
from doctordesk.i18n import _
from doctordesk.i18n.formats import format_local
from doctordesk.runtime import Runtime
from doctordesk.screens import appointment_list
from doctordesk.screens import booking as screen
from doctordesk.screens.protocol import Layout, Option, Page, UpdateSet
from doctordesk.screens.state import Viewer, lasting
from doctordesk.screens.viewing import Viewing
from doctordesk.services.booking import cover, free_times
from doctordesk.services.lifecycle.placing import RequestInput, place_request
from doctordesk.services.scheduling.clinic_facts import Clinic, cached_clinic
from doctordesk.services.uow import unit_of_work


@dataclass(frozen=True, slots=True)
class Asked:
    """A choice as the request spelled it (already strictly parsed; unknown ids are settled, not refused)."""

    doctor_id: int | None = None
    location_id: int | None = None
    service: str | None = None
    week: date | None = None
    start: str | None = None


def _patient(actor: Actor) -> int:
    if actor.role is not Role.PATIENT or actor.patient_id is None:
        raise NotFound(N_("Screen not found."))
    return actor.patient_id


def _places(c: Clinic) -> dict[int, list[int]]:
    """Each doctor with the locations where they have work hours, in the directory's order."""
    places: dict[int, list[int]] = {}
    for doctor_id in c.directory.doctors:
        where = [loc for loc in c.location_names if (doctor_id, loc) in c.work_hours]
        if where:
            places[doctor_id] = where
    return places


async def _settled(rt: Runtime, asked: Asked) -> tuple[Choice, Clinic, dict[int, list[int]]]:
    async with rt.db.read() as session:
        c = await cached_clinic(rt, session)
    places = _places(c)
    today = rt.clock.now().date()
    start = screen.parse_start(asked.start) if asked.start else None
    # No week asked: the first week with a free time is sought from this one (``_render``); a picked time without
    # a week is shown in its own week.
    if asked.week is not None:
        week, week_asked = asked.week, True
    elif start is not None:
        week, week_asked = monday(start.date()), True
    else:
        week, week_asked = today, False
    wanted = Choice(asked.doctor_id, asked.location_id, asked.service or "", week, start, week_asked=week_asked)
    return settle(wanted, places=places, today=today, horizon=c.horizon), c, places


async def _picked_coverage(
    rt: Runtime, patient_id: int, choice: Choice, timezone: str | None
) -> cover.AtBooking | None:
    if choice.start is None or choice.doctor_id is None or choice.location_id is None:
        return None
    return await cover.coverage_at(
        rt,
        patient_id,
        doctor_id=choice.doctor_id,
        location_id=choice.location_id,
        service=choice.service,
        start=choice.start,
        timezone=timezone or "UTC",
    )


async def _render(
    rt: Runtime, patient_id: int, choice: Choice, c: Clinic, places: dict[int, list[int]], layout: Layout
) -> Page:
    timezone = c.directory.locations.get(choice.location_id) if choice.location_id is not None else None
    free: list[datetime] = []
    now = rt.clock.now()
    # When time alone changes the screen: "today" (UTC) moves on (the weeks offered), or a time's lead time or
    # horizon comes (``free_starts_edge``).
    edges: list[datetime | None] = [next_utc_midnight(now)]
    today = now.date()
    free_until: date | None = None
    if choice.doctor_id is not None and choice.location_id is not None and not choice.week_asked:
        found, free = await free_times.first_free_week(
            rt,
            doctor_id=choice.doctor_id,
            location_id=choice.location_id,
            first_week=choice.week,
            last_week=last_week(today, c.horizon),
            edge=edges,
        )
        if found is None:
            free_until = (now + c.horizon).date()
        else:
            choice = replace(choice, week=found)
    elif choice.doctor_id is not None and choice.location_id is not None:
        first, last = week_days(choice.week)
        _, free = await free_times.visit_times(
            rt, doctor_id=choice.doctor_id, location_id=choice.location_id, first_day=first, last_day=last, edge=edges
        )
    at_booking = await _picked_coverage(rt, patient_id, choice, timezone)
    page = screen.render(
        screen.BookingScreen(
            coverage_warning=coverage.booking_warning(at_booking.verdict) if at_booking else None,
            coverage_blocks=at_booking is not None and coverage.blocks_approval(at_booking.verdict),
            covered=at_booking.covered if at_booking else None,
            choice=choice,
            doctors=[Option(str(d), c.directory.doctors[d]) for d in places],
            locations=[Option(str(loc), c.location_names[loc]) for loc in places.get(choice.doctor_id or 0, [])],
            timezone=timezone,
            free=free,
            first_week=monday(today),
            last_week=last_week(today, c.horizon),
            layout=layout,
            timeout=rt.settings.poll_list_seconds,
            free_until=free_until,
        )
    )
    return lasting(page, earliest(edges, after=now))


async def viewing(rt: Runtime, actor: Actor, asked: Asked, *, layout: Layout, client_id: str | None) -> Viewing:
    """The booking screen for ``asked`` as settled now: ``page()`` for the PUT, ``poll()`` for the PATCH."""
    patient_id = _patient(actor)
    choice, c, places = await _settled(rt, asked)
    render = partial(_render, rt, patient_id, choice, c, places, layout)
    timeout = rt.settings.poll_list_seconds
    return Viewing(
        rt.screens, rt.wall(), Viewer.of(actor, client_id), screen.shown(choice, actor.user_id), timeout, render
    )


async def choose(rt: Runtime, actor: Actor, form: Mapping[str, str]) -> UpdateSet:
    """The choice changed on the form (doctor, location, service): the screen for it, as a navigation (the
    choice is the screen's URL), opening on the first week with a free time for it. A new doctor or location
    clears the picked time."""
    _patient(actor)
    # A new choice asks no week: it opens on the first week with a free time for that doctor, place and service.
    asked = Asked(parse_id(form.get("doctor")), parse_id(form.get("location")), form.get("service"))
    choice, _, _ = await _settled(rt, asked)
    return UpdateSet(
        screen=screen.SCREEN, state="", timeout=rt.settings.poll_list_seconds, navigate=screen.endpoint(choice)
    )


def _request_input(patient_id: int, form: Mapping[str, str]) -> RequestInput:
    fields: dict[str, str] = {}
    doctor, location = parse_id(form.get("doctor")), parse_id(form.get("location"))
    service = form.get("service", "")
    start = screen.parse_start(form.get("start", ""))
    note = form.get("note", "").strip()
    if doctor is None:
        fields["doctor"] = N_("Choose a doctor.")
    if location is None:
        fields["location"] = N_("Choose a location.")
    if service not in SERVICES:
        fields["service"] = N_("Choose a service.")
    if start is None:
        fields["start"] = N_("Pick one of the free times.")
    problem = text_problem(note, max_chars=NOTE_MAX, multiline=True)
    if problem:
        fields["note"] = problem
    if fields:
        raise ValidationFailed(fields=fields)
    assert doctor is not None and location is not None and start is not None
    return RequestInput(patient_id, doctor, location, service, start, VISIT_MINUTES, note)


async def request(rt: Runtime, actor: Actor, form: Mapping[str, str]) -> UpdateSet:
    """Send the request for the picked time: the doctor's list shows it at once; the patient goes back to their
    list. A time taken meanwhile, or outside the rules, is refused with the screens' message and nothing is
    written."""
    req = _request_input(_patient(actor), form)
    await cover.refuse_uncovered(rt, req)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        await place_request(rt, uow, actor, req, now=now)
        # The reference data place_request just read (cached): no second connection for the time zone.
        c = await cached_clinic(rt, uow.session)
        when = format_local(req.start, c.directory.locations.get(req.location_id, "UTC"))
    return UpdateSet(
        screen=screen.SCREEN,
        state="",
        timeout=rt.settings.poll_list_seconds,
        navigate=appointment_list.ENDPOINT,
        notice={
            "level": "info",
            "text": _(Text("Request sent for {when}. The doctor will confirm it or suggest other times.", when=when)),
        },
    )
