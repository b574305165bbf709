"""Screens through the SDK against a real server: the list, and polling keeping it current with no stream."""

from __future__ import annotations

import sqlite3
import time

from doctordesk.client import Client
from doctordesk.domain.status import Status


def cancel_an_appointment_behind_the_service(server, doctor_id: int) -> int:
    """A change the service hears no event about: only a poll can find it (the trusted-unchanged age is 1 s)."""
    with sqlite3.connect(server.data_dir / "doctordesk.db") as db:
        (appointment_id,) = db.execute(
            "SELECT id FROM appointments WHERE doctor_id = ? AND status = ? ORDER BY start_at DESC LIMIT 1",
            (doctor_id, int(Status.REQUESTED)),
        ).fetchone()
        db.execute("UPDATE appointments SET status = ? WHERE id = ?", (int(Status.CANCELED), appointment_id))
    return int(appointment_id)


async def test_the_list_opens_with_its_sections_and_an_unchanged_poll_changes_nothing(shared_server) -> None:
    async with Client(shared_server.url, realtime=False) as client:
        await client.login("doctor1", "demo")
        screen = await client.open("/profile/appointments")
        assert [e["id"] for e in screen.elements] == ["title", "needs-decision", "waiting", "upcoming", "past"]
        assert screen.timeout == 1 and screen.state
        assert await screen.patch() is None


async def test_polling_alone_keeps_the_list_current(own_server) -> None:
    async with Client(own_server.url, realtime=False) as client:
        user = await client.login("doctor1", "demo")
        screen = await client.open("/profile/appointments")
        appointment_id = cancel_an_appointment_behind_the_service(own_server, user.id)
        started = time.monotonic()
        await screen.wait_for(lambda s: s.element(f"status-{appointment_id}").get("value") == "canceled", timeout=5)
        assert time.monotonic() - started < 3.5  # a 1 s poll cycle and a 1 s trusted age
        assert screen.find(f"appointment-{appointment_id}") in screen.element("past").get("children", [])
