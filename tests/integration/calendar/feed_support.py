"""Helpers for the calendar feed tests: make a feed through the API, fetch and parse it, add appointments."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import httpx
from icalendar import Calendar, Event

from doctordesk.domain.appointments.status import Status
from doctordesk.store.review_tables import AppointmentOffer
from doctordesk.store.tables import Appointment


async def make_feed(client: httpx.AsyncClient, headers: dict[str, str]) -> str:
    """A new feed address for the logged-in doctor: the path part of the URL shown once."""
    made = await client.post("/api/calendar-feed", headers=headers)
    assert made.status_code == 201, made.text
    return urlsplit(made.json()["url"]).path


async def fetch(client: httpx.AsyncClient, path: str) -> Calendar:
    """The feed at ``path``, fetched as a calendar app does (no credentials), parsed with icalendar."""
    response = await client.get(path)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/calendar; charset=utf-8"
    return Calendar.from_ical(response.content)


def events(calendar: Calendar) -> dict[str, Event]:
    return {str(e["UID"]): e for e in calendar.walk("VEVENT")}


async def add_appointment(
    runtime: Any,
    demo: Any,
    *,
    start: datetime,
    status: Status,
    doctor: str = "doctor1",
    location: str = "berlin",
    patient: str = "patient1",
    version: int = 1,
    note: str | None = None,
) -> int:
    async with runtime.db.transaction() as session:
        row = Appointment(
            patient_id=demo.patients[patient],
            doctor_id=demo.users[doctor],
            location_id=demo.locations[location],
            start_at=start,
            status=int(status),
            version=version,
            request_note=note,
            created_at=demo.now,
            updated_at=demo.now,
        )
        session.add(row)
    return int(row.id)


async def add_offer(
    runtime: Any, demo: Any, appointment_id: int, *, n: int, start: datetime, state: str = "open"
) -> None:
    async with runtime.db.transaction() as session:
        session.add(
            AppointmentOffer(
                appointment_id=appointment_id,
                n=n,
                doctor_id=demo.users["doctor1"],
                location_id=demo.locations["berlin"],
                start_at=start,
                duration_minutes=30,
                state=state,
                created_at=demo.now,
            )
        )
