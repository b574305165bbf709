"""Appointments as the screens and the read API see them, and who may see which."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.roles import Actor, Role


@dataclass(frozen=True, slots=True)
class Party:
    id: int
    name: str


@dataclass(frozen=True, slots=True)
class Place:
    id: int
    name: str
    timezone: str


@dataclass(frozen=True, slots=True)
class AppointmentView:
    id: int
    status: Status
    start: datetime  # UTC
    duration_minutes: int
    doctor: Party
    location: Place
    patient: Party
    service: str
    chat_enabled: bool
    disclaimer_required: bool
    prescription_needed: bool
    version: int
    updated_at: datetime
    unread: int = 0  # unread chat messages for the viewer
    request_note: str | None = None  # what the patient wrote with the request
    decline_reason: str | None = None  # the doctor's reason, when declined
    confirmed: bool = False  # the patient said they will come, at this start (docs/notifications.md#reminders)

    @property
    def end(self) -> datetime:
        return self.start + timedelta(minutes=self.duration_minutes)

    @property
    def local_start(self) -> datetime:
        """The start in the location's timezone (what doctor and patient see)."""
        return self.start.astimezone(ZoneInfo(self.location.timezone))


def can_view(actor: Actor, *, doctor_id: int, patient_id: int) -> bool:
    """Doctors see their own appointments, patients theirs, support and admins all of them."""
    if actor.role in (Role.ADMIN, Role.SUPPORT):
        return True
    if actor.role is Role.DOCTOR:
        return actor.user_id == doctor_id
    return actor.patient_id is not None and actor.patient_id == patient_id


def format_local(moment: datetime, timezone: str) -> str:
    """E.g. ``Mon 23 Nov 2026, 09:30 CET`` in the given timezone."""
    local = moment.astimezone(ZoneInfo(timezone))
    return local.strftime("%a %d %b %Y, %H:%M ") + (local.tzname() or timezone)
