"""The doctor's week view screen (``screens/week_view.py``, docs/week-view.md): the doctor's approved appointments,
requests and open offers in the shown days (two bounded index ranges, as the calendar feed reads them), and the
free times left in the work hours. Doctors only; anyone else gets 404.

The day the view is anchored on rides in the state token after ``@`` (as the list's filter does after ``!``), so a
poll or a real-time PATCH re-renders the same week on any instance."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.list_sections import MAX_VISIT
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.appointments.week import (
    Item,
    Kind,
    Workplace,
    days_shown,
    free_items,
    opening_day,
    place,
    week_over,
    window,
)
from doctordesk.domain.errors import NotFound
from doctordesk.domain.moments import parse_day
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.screens import week_view as screen
from doctordesk.screens.protocol import Layout, Page, UpdateSet
from doctordesk.screens.state import Viewer
from doctordesk.screens.viewing import Viewing
from doctordesk.services.appointments.reading import base_query, view_of, visible_to, with_confirmations
from doctordesk.services.scheduling.clinic_facts import Clinic, cached_clinic
from doctordesk.store.review_tables import AppointmentOffer, OfferState
from doctordesk.store.tables import Appointment, DoctorProfile, Location, Patient

DAY_MARK = "@"
_BOOKED = {Status.APPROVED: Kind.APPOINTMENT, Status.COMPLETED: Kind.APPOINTMENT, Status.NO_SHOW: Kind.APPOINTMENT,
           Status.REQUESTED: Kind.REQUEST}  # fmt: skip
_PENDING = (int(Status.PENDING_RESPONSE), int(Status.PENDING_RESPONSE_COVERAGE_RISK))
MAX_ENTRIES = 1000  # per kind and view: far more than a week holds


async def _booked(session: AsyncSession, actor: Actor, lo: datetime, hi: datetime) -> list[Item]:
    query = (
        visible_to(base_query(), actor)
        .where(
            Appointment.start_at >= lo - MAX_VISIT,
            Appointment.start_at < hi,
            Appointment.status.in_(sorted(int(s) for s in _BOOKED)),
        )
        .order_by(Appointment.start_at, Appointment.id)
        .limit(MAX_ENTRIES)
    )
    views = await with_confirmations(session, [view_of(r) for r in await session.execute(query)])
    return [
        Item(
            _BOOKED[v.status],
            v.start,
            v.start + timedelta(minutes=v.duration_minutes),
            v.id,
            None,
            v.patient.name,
            v.service,
            v.location.name,
            v.confirmed,
        )  # fmt: skip
        for v in views
    ]


async def _offers(session: AsyncSession, doctor_id: int, lo: datetime, hi: datetime) -> list[Item]:
    rows = await session.execute(
        select(AppointmentOffer, Appointment.service, Patient.name, Location.name)
        .join(Appointment, Appointment.id == AppointmentOffer.appointment_id)
        .join(Patient, Patient.id == Appointment.patient_id)
        .join(Location, Location.id == AppointmentOffer.location_id)
        .where(
            AppointmentOffer.doctor_id == doctor_id,
            AppointmentOffer.start_at >= lo - MAX_VISIT,
            AppointmentOffer.start_at < hi,
            AppointmentOffer.state == OfferState.OPEN,
            Appointment.status.in_(_PENDING),
        )
        .order_by(AppointmentOffer.start_at, AppointmentOffer.id)
        .limit(MAX_ENTRIES)
    )
    return [
        Item(
            Kind.OFFER,
            o.start_at,
            o.start_at + timedelta(minutes=o.duration_minutes),
            o.appointment_id,
            o.n,
            patient,
            service,
            location,
        )  # fmt: skip
        for o, service, patient, location in rows
    ]


def _workplaces(clinic: Clinic, doctor_id: int) -> list[Workplace]:
    return [
        Workplace(
            location_id,
            clinic.location_names.get(location_id, ""),
            clinic.directory.locations[location_id],
            tuple(hours),
        )  # fmt: skip
        for (doctor, location_id), hours in sorted(clinic.work_hours.items())
        if doctor == doctor_id and location_id in clinic.directory.locations
    ]


def split_day(token: str | None) -> tuple[str | None, date | None]:
    """The rest of a state token and the day it carries (None when it carries none or a malformed one)."""
    if not token or DAY_MARK not in token:
        return token, None
    rest, _, day = token.rpartition(DAY_MARK)
    return rest, parse_day(day)


async def _zone(session: AsyncSession, doctor_id: int) -> str:
    """The doctor's own zone when their profile has one, else UTC (the page says which)."""
    zone = await session.scalar(select(DoctorProfile.timezone).where(DoctorProfile.user_id == doctor_id))
    return zone or "UTC"


@dataclass(frozen=True, slots=True)
class WeekScreen:
    """The week view as the doctor ``actor`` sees it: its page (PUT, anchored on a day), its poll (PATCH)."""

    rt: Runtime
    actor: Actor
    layout: Layout
    client_id: str | None

    def _viewing(self, anchor: date) -> tuple[Viewing, date]:
        rt, actor, timeout = self.rt, self.actor, self.rt.settings.poll_list_seconds
        now = rt.clock.now()
        days = days_shown(anchor, one_day=self.layout == "mobile")

        async def render() -> Page:
            async with rt.db.read() as session:
                zone = await _zone(session, actor.user_id)
                lo, hi = window(days, zone)
                items = await _booked(session, actor, lo, hi) + await _offers(session, actor.user_id, lo, hi)
                clinic = await cached_clinic(rt, session)
            exceptions = clinic.hours_exceptions.get(actor.user_id, [])
            workplaces = _workplaces(clinic, actor.user_id)
            free = free_items(workplaces, days, exceptions, items, zone=zone, now=now)
            placed = place([*free, *items], days, zone)
            today = now.astimezone(ZoneInfo(zone)).date()
            # Next week shown while this week's work is over: say so (what the view opens on then, ``_opening``).
            this_week = days_shown(today, one_day=False)
            over = days[0] == this_week[-1] + timedelta(days=1)
            over = over and week_over(workplaces, this_week, exceptions, zone=zone, now=now)
            return screen.render(
                placed, days=days, today=today, zone=zone, layout=self.layout, timeout=timeout, week_over=over
            )

        viewer = Viewer.of(actor, self.client_id)
        return Viewing(rt.screens, rt.wall(), viewer, screen.shown(actor), timeout, render), days[0]

    async def _opening(self) -> date:
        """The day shown when none is asked: today in the doctor's zone, or next Monday once this week's work
        hours are all behind (``week.opening_day``)."""
        async with self.rt.db.read() as session:
            zone = await _zone(session, self.actor.user_id)
            clinic = await cached_clinic(self.rt, session)
        now = self.rt.clock.now()
        today = now.astimezone(ZoneInfo(zone)).date()
        exceptions = clinic.hours_exceptions.get(self.actor.user_id, [])
        return opening_day(today, _workplaces(clinic, self.actor.user_id), exceptions, zone=zone, now=now)

    async def page(self, day: date | None) -> Page:
        viewing, first = self._viewing(day or await self._opening())
        page = await viewing.page()
        page.state += DAY_MARK + first.isoformat()
        return page

    async def poll(self, token: str | None) -> UpdateSet:
        """The poll: the token's day (today when it carries none) without reading anything while nothing the view
        shows changed."""
        rest, day = split_day(token)
        viewing, first = self._viewing(day or await self._opening())
        update = await viewing.poll(rest)
        if update.state:
            update.state += DAY_MARK + first.isoformat()
        return update


def week_screen(rt: Runtime, actor: Actor, *, layout: Layout, client_id: str | None) -> WeekScreen:
    """The week view of the doctor ``actor`` (404 for anyone else, as for a screen that is not theirs)."""
    if actor.role is not Role.DOCTOR:
        raise NotFound(N_("Screen not found."))
    return WeekScreen(rt, actor, layout, client_id)
