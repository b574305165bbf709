"""Any day, any hour: the date-sensitive screens and rules hold at every moment of the calendar, on SQLite and
PostgreSQL (docs/development.md#the-moment-a-test-runs-at).

Each test runs at every moment of ``MOMENTS``: each day of a week at 10:00 in Berlin, Sunday 23:55 in Berlin, the
nights of the spring and autumn clock changes in Berlin and London, New Year's Eve 23:50 and 29 February. The demo
clinic is seeded at that moment, as ``make run`` would seed it then. Each test checks the moment, then moves the
clock on by ``STEP`` (past midnight, past the clock change) and checks again: a page's poll then equals a fresh
page, and nothing shown lies in the past.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.clock import FixedClock
from doctordesk.domain.scheduling.booking import monday
from doctordesk.domain.scheduling.suggestions import DEFAULT_HORIZON, LEAD_TIME
from doctordesk.screens.protocol import apply, walk
from doctordesk.store.tables import Appointment
from tests.integration.calendar.feed_support import events, fetch, make_feed
from tests.integration.screens.test_time_edges import until
from tests.support.integration import make_key

BERLIN, LONDON = ZoneInfo("Europe/Berlin"), ZoneInfo("Europe/London")
STEP = timedelta(minutes=15)


def _at(zone: ZoneInfo, *parts: int, fold: int = 0) -> datetime:
    return datetime(*parts, tzinfo=zone, fold=fold).astimezone(UTC)  # type: ignore[misc]


MOMENTS = {
    **{
        f"{name}-10h-berlin": _at(BERLIN, 2026, 11, 30 + offset, 10, 0)
        if offset == 0
        else _at(BERLIN, 2026, 12, offset, 10, 0)
        for offset, name in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))
    },
    "sunday-23h55-berlin": _at(BERLIN, 2026, 12, 6, 23, 55),
    "spring-forward-berlin": _at(BERLIN, 2027, 3, 28, 1, 55),  # 02:00 CET does not happen: 03:00 CEST
    "fall-back-berlin": _at(BERLIN, 2027, 10, 31, 2, 55),  # the first 02:55 (CEST); 02:00-03:00 happens twice
    "spring-forward-london": _at(LONDON, 2027, 3, 28, 0, 55),  # 01:00 GMT does not happen: 02:00 BST
    "fall-back-london": _at(LONDON, 2027, 10, 31, 1, 55),  # the first 01:55 (BST)
    "new-years-eve": _at(BERLIN, 2026, 12, 31, 23, 50),
    "leap-day": _at(BERLIN, 2028, 2, 29, 10, 0),
}

# Each demo doctor's places, their zone and their work hours' earliest and latest local times (store/seed/demo.py).
PLACES = (("doctor1", "berlin", BERLIN), ("doctor2", "munich", BERLIN), ("doctor3", "london", LONDON))
OPEN, CLOSE = time(8, 0), time(18, 0)


@pytest.fixture(params=list(MOMENTS), ids=list(MOMENTS))
def clock(request: pytest.FixtureRequest) -> FixedClock:
    """This module's moment (overrides the suite's Monday morning)."""
    return FixedClock(MOMENTS[request.param])


def _walk(page: dict[str, Any]) -> list[dict[str, Any]]:
    return list(walk(page["elements"]))


async def _put(client: Any, url: str, headers: dict[str, str]) -> dict[str, Any]:
    response = await client.put(url, headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def _poll_equals_fresh(client: Any, url: str, headers: dict[str, str], page: dict[str, Any]) -> dict[str, Any]:
    """The page's poll now: its patches turn the old page into a fresh one. The fresh page."""
    poll = await client.patch(url.split("?")[0], headers={**headers, "X-Screen-State": page["state"]})
    assert poll.status_code == 200, poll.text
    fresh = await _put(client, page.get("endpoint") or url, headers)
    assert apply(page["elements"], poll.json()["patches"]) == fresh["elements"]
    return fresh


def _free_starts(page: dict[str, Any]) -> list[datetime]:
    return [datetime.fromisoformat(e["props"]["start"]) for e in _walk(page) if e["id"].startswith("time-")]


async def test_the_demo_clinic_lays_its_requests_ahead_in_work_hours(runtime, demo, clock):
    now = clock.now()
    zones = {demo.locations[place]: zone for _, place, zone in PLACES}
    async with runtime.db.read() as session:
        rows = (await session.scalars(select(Appointment))).all()
    requests = [a for a in rows if a.status == Status.REQUESTED]
    assert len(requests) == 14
    for a in requests:
        start = a.start_at.replace(tzinfo=UTC) if a.start_at.tzinfo is None else a.start_at
        local = start.astimezone(zones[a.location_id])
        assert start >= now + LEAD_TIME, (a.id, start, now)
        assert local.weekday() < 5 or a.location_id == demo.locations["berlin"], (a.id, local)
        assert OPEN <= local.time() < CLOSE, (a.id, local)
        assert local.replace(tzinfo=None) == datetime.combine(local.date(), local.time()), "a real wall time"


async def test_the_booking_screen_opens_on_free_times_ahead(client, login, demo, clock):
    patient = await login("patient1")
    for _ in range(2):
        now = clock.now()
        page = await _put(client, "/profile/book", patient.headers)
        starts = _free_starts(page)
        assert starts, f"no free time shown at {now:%a %Y-%m-%d %H:%M} UTC"
        assert all(now + LEAD_TIME <= s <= now + DEFAULT_HORIZON for s in starts)
        # The page holds until time alone changes it: a moment ahead, no later than the first time it shows comes
        # within the lead time (a time exactly the lead time ahead is still free now).
        edge = next((s - LEAD_TIME for s in starts if s - LEAD_TIME > now), None)
        assert now.timestamp() < until(page["state"]) <= (edge or now + DEFAULT_HORIZON).timestamp()
        week = monday(starts[0].astimezone(BERLIN).date())  # the demo's first doctor and place: Berlin
        previous = next(e for e in _walk(page) if e["id"] == "previous-week")
        # The current week stays in reach: Previous is on whenever the week shown is a later one.
        assert previous.get("enabled", True) == (week > monday(now.date()))
        clock.advance(STEP)


async def test_free_times_lie_in_work_hours_on_local_wall_time(client, login, demo, clock):
    admin = await login("admin")
    key = await make_key(client, admin.headers)
    for _ in range(2):
        now = clock.now()
        for doctor, place, zone in PLACES:
            first = now.astimezone(zone).date()
            response = await client.get(
                "/integration/v1/free-times",
                headers=key.headers,
                params={
                    "doctor": demo.users[doctor],
                    "location": demo.locations[place],
                    "from": first.isoformat(),
                    "to": (first + timedelta(days=13)).isoformat(),
                    "duration": 30,
                },
            )
            assert response.status_code == 200, response.text
            starts = [datetime.fromisoformat(f["start"]) for f in response.json()["free"]]
            assert starts, (doctor, now)
            assert starts == sorted(set(starts))
            for s in starts:
                local = s.astimezone(zone)
                assert s >= now + LEAD_TIME, (doctor, s, now)
                assert OPEN <= local.time() < CLOSE and local.minute in (0, 30), (doctor, local)
        clock.advance(STEP)


async def test_a_suggestion_keeps_the_lead_time_and_the_next_free_time_is_taken(client, login, demo, clock):
    doctor, admin = await login("doctor1"), await login("admin")
    key = await make_key(client, admin.headers)
    clock.advance(STEP)  # past midnight or the clock change, before anything is read
    now = clock.now()
    first = now.astimezone(BERLIN).date()
    response = await client.get(
        "/integration/v1/free-times",
        headers=key.headers,
        params={"doctor": demo.users["doctor1"], "location": demo.locations["berlin"], "from": first.isoformat(),
                "to": (first + timedelta(days=13)).isoformat(), "duration": 30},
    )  # fmt: skip
    soonest = datetime.fromisoformat(response.json()["free"][0]["start"]).astimezone(BERLIN)
    request_id = int(demo.appointments[0])
    page = await _put(client, f"/profile/appointments/{request_id}/approve", doctor.headers)
    version = next(e for e in _walk(page) if e.get("name") == "version")["value"]
    too_soon = (now + LEAD_TIME - timedelta(minutes=30)).astimezone(BERLIN)
    for when, accepted in ((too_soon, False), (soonest, True)):
        form = {
            "version": str(version),
            "profile~1": str(demo.users["doctor1"]),
            "location~1": str(demo.locations["berlin"]),
            "date~1": when.date().isoformat(),
            "time~1": when.strftime("%H:%M"),
        }
        answer = await client.post(f"/profile/appointments/{request_id}/approve", data=form, headers=doctor.headers)
        assert (answer.status_code == 200) == accepted, (when, answer.text)


async def test_the_list_puts_each_request_in_its_section(client, login, demo, clock, runtime):
    doctor = await login("doctor1")
    page = await _put(client, "/profile/appointments", doctor.headers)
    for _ in range(2):
        now = clock.now()
        async with runtime.db.read() as session:
            ahead = await session.scalars(
                select(Appointment.id).where(
                    Appointment.doctor_id == demo.users["doctor1"], Appointment.status == Status.REQUESTED
                )
            )
            expected = {f"appointment-{i}" for i in ahead}
        needs = next(e for e in _walk(page) if e["id"] == "needs-decision")
        shown = {e["id"] for e in walk(needs.get("children", [])) if e["id"].startswith("appointment-")}
        assert shown == expected, now
        clock.advance(STEP)
        page = await _poll_equals_fresh(client, "/profile/appointments", doctor.headers, page)


async def test_the_week_view_opens_on_today_in_the_doctors_zone(client, login, demo, clock, runtime):
    runtime.screens.max_age = 400 * 86400  # only time itself may change the page
    doctor = await login("doctor1")
    shown = await _put(client, "/profile/appointments/week", doctor.headers)
    for _ in range(2):
        today = clock.now().astimezone(BERLIN).date()
        page = await _put(client, "/profile/appointments/week", doctor.headers)
        days = [e for e in _walk(page) if e["type"] == "Day"]
        assert len(days) == 7
        marked = [d["props"]["date"] for d in days if d["props"]["today"]]
        # The week opened is today's, or (when today's week has no working time left) the next one.
        first = date.fromisoformat(days[0]["props"]["date"])
        assert (first, marked) in ((monday(today), [today.isoformat()]), (monday(today) + timedelta(days=7), [])), (
            first,
            marked,
            today,
        )
        clock.advance(STEP)
        # A week already open stays the week its doctor looks at; its poll brings what time changed in it.
        shown = await _poll_equals_fresh(client, "/profile/appointments/week", doctor.headers, shown)


async def test_the_calendar_feed_holds_the_approved_appointments_at_their_instants(client, login, demo, clock, runtime):
    doctor = await login("doctor1")
    path = await make_feed(client, doctor.headers)
    calendar = await fetch(client, path)
    async with runtime.db.read() as session:
        approved = (
            await session.scalars(
                select(Appointment).where(
                    Appointment.doctor_id == demo.users["doctor1"], Appointment.status == Status.APPROVED
                )
            )
        ).all()
    starts = {e["DTSTART"].dt.astimezone(UTC) for e in events(calendar).values()}
    for a in approved:
        start = a.start_at.replace(tzinfo=UTC) if a.start_at.tzinfo is None else a.start_at.astimezone(UTC)
        assert start in starts, (a.id, start)


async def test_the_horizon_ends_requests_on_its_last_day(client, login, demo, clock):
    admin = await login("admin")
    key = await make_key(client, admin.headers)
    now = clock.now()
    response = await client.get(
        "/integration/v1/free-times",
        headers=key.headers,
        params={"doctor": demo.users["doctor2"], "location": demo.locations["munich"],
                "from": (now + DEFAULT_HORIZON - timedelta(days=13)).date().isoformat(),
                "to": (now + DEFAULT_HORIZON + timedelta(days=5)).date().isoformat(), "duration": 30},
    )  # fmt: skip
    assert response.status_code == 200, response.text
    starts = [datetime.fromisoformat(f["start"]) for f in response.json()["free"]]
    assert starts and max(starts) <= now + DEFAULT_HORIZON
    body = {"patient": demo.patients["patient1"], "doctor": demo.users["doctor2"],
            "location": demo.locations["munich"], "service": "consultation", "note": "Any moment"}  # fmt: skip
    beyond = starts[-1] + timedelta(days=7)
    refused = await client.post(
        "/integration/v1/appointment-requests", headers=key.headers, json={**body, "start": beyond.isoformat()}
    )
    assert refused.status_code == 422, refused.text
    taken = await client.post(
        "/integration/v1/appointment-requests", headers=key.headers, json={**body, "start": starts[-1].isoformat()}
    )
    assert taken.status_code == 201, taken.text
