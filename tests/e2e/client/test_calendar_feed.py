"""The SDK makes, reads and revokes a doctor's calendar feed against a real server, and a calendar app's plain
GET of the address (no credentials) gets the iCalendar until it is revoked."""

from __future__ import annotations

import httpx
import pytest
from icalendar import Calendar

from doctordesk.client import Client, NotFound


async def test_the_sdk_makes_reads_and_revokes_the_feed_and_a_calendar_app_fetches_it(shared_server) -> None:
    async with Client(shared_server.url, realtime=False) as client, httpx.AsyncClient(timeout=10) as app:
        await client.login("doctor1", "demo")
        made = await client.request("POST", "/api/calendar-feed")
        url = made["url"]
        assert url.startswith(shared_server.url + "/calendar/ddcal_")
        shown = await client.request("GET", "/api/calendar-feed")
        assert shown["feed"]["id"] == made["feed"]["id"] and "url" not in shown
        fetched = await app.get(url)
        assert fetched.status_code == 200
        assert Calendar.from_ical(fetched.content).walk("VEVENT")
        assert (await client.request("DELETE", "/api/calendar-feed")) == {"revoked": True}
        assert (await app.get(url)).status_code == 404


async def test_a_patient_has_no_feed_through_the_sdk(shared_server) -> None:
    async with Client(shared_server.url, realtime=False) as client:
        await client.login("patient1", "demo")
        with pytest.raises(NotFound):
            await client.request("POST", "/api/calendar-feed")
