"""Screens through the SDK against a real server: the list, and polling alone keeping it current."""

from __future__ import annotations

import time

from doctordesk.client import Client
from tests.support.sdk_flows import approve_one_as, awaiting_decision, status_is


async def test_the_list_opens_with_its_sections_and_an_unchanged_poll_changes_nothing(shared_server) -> None:
    async with Client(shared_server.url, realtime=False) as client:
        await client.login("doctor1", "demo")
        screen = await client.open("/profile/appointments")
        assert [e["id"] for e in screen.elements] == [
            "title",
            "notices",
            "week-view",
            "calendar-feed",
            "dashboard",
            "filters",
            "filter-chips",
            "needs-decision",
            "waiting",
            "upcoming",
            "past",
        ]
        assert screen.timeout == 1 and screen.state
        assert await screen.patch() is None


async def test_polling_alone_keeps_the_list_current_without_a_stream(own_server) -> None:
    """No stream at all (as when it is blocked): the 1 s poll brings someone else's change."""
    async with Client(own_server.url, realtime=False) as doctor:
        await doctor.login("doctor1", "demo")
        screen = await doctor.open("/profile/appointments")
        seen = []
        screen.on_change(seen.append)
        appointment_id = await approve_one_as(own_server.url, "doctor1", awaiting_decision(screen))
        started = time.monotonic()
        await screen.wait_for(status_is(appointment_id, "approved"), timeout=3)
        assert time.monotonic() - started < 2.5  # within about one poll interval
        assert doctor.stream is None
        assert {c.trigger for c in seen if c.kind == "update"} == {"poll"}
