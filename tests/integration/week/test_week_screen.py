"""The week view screen in-process (docs/week-view.md): doctors only, the day in the URL and in the state token, a
poll that is empty while nothing changed and whose patches give the fresh page after a patient books, one day on
a phone, German words; on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from doctordesk.screens.protocol import apply, walk

WEEK = "/profile/appointments/week"


async def _put(client: Any, headers: dict[str, str], **params: str) -> dict[str, Any]:
    response = await client.put(WEEK, params=params, headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _events(page: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in walk(page["elements"]) if e["type"] == "Event"]


def _days(page: dict[str, Any]) -> list[str]:
    return [e["props"]["date"] for e in walk(page["elements"]) if e["type"] == "Day"]


async def test_only_doctors_see_it_and_a_bad_day_is_refused_naming_the_field(client, login):
    for user in ("patient1", "support1"):
        response = await client.put(WEEK, headers=(await login(user)).headers)
        assert response.status_code == 404, user
    doctor = await login("doctor1")
    for bad in ("2026-13-01", "tomorrow", "3000-01-01"):
        response = await client.put(WEEK, params={"day": bad}, headers=doctor.headers)
        assert response.status_code == 422, bad
        assert "day" in response.json()["fields"]


async def test_the_week_holds_each_kind_and_its_day_rides_in_the_token(client, login, demo, clock):
    doctor = await login("doctor1")
    page = await _put(client, doctor.headers, day="2026-12-02")
    assert _days(page) == [(date(2026, 11, 30) + timedelta(days=i)).isoformat() for i in range(7)]
    assert page["endpoint"] == f"{WEEK}?day=2026-11-30" and page["state"].endswith("@2026-11-30")
    this_week = await _put(client, doctor.headers)
    kinds = {e["props"]["kind"] for e in _events(this_week)}
    assert {"appointment", "request", "free"} <= kinds, kinds
    for e in _events(this_week):
        if e["props"]["kind"] == "request":
            assert e["action"] == {
                "method": "PUT",
                "endpoint": f"/profile/appointments/{e['props']['appointment']}/approve",
            }
        if e["props"]["kind"] == "free":
            assert "action" not in e
    # The poll keeps the token's week: unchanged, it is empty and keeps the day.
    headers = {**doctor.headers, "X-Screen-State": page["state"]}
    poll = (await client.patch(WEEK, headers=headers)).json()
    assert poll["patches"] == [] and poll["state"].endswith("@2026-11-30")


async def test_a_new_request_reaches_the_open_week_as_patches_equal_to_a_fresh_page(client, login, demo, clock):
    doctor, patient = await login("doctor1"), await login("patient1")
    tomorrow = (clock.now() + timedelta(days=1)).date()
    page = await _put(client, doctor.headers, day=(tomorrow + timedelta(days=7)).isoformat())  # a whole week ahead
    free = next(
        e for e in _events(page) if e["props"]["kind"] == "free" and e["props"]["details"] == "Berlin Mitte Clinic"
    )
    day = datetime.strptime(free["id"].split("-")[1], "%Y%m%d").date()
    local = datetime.combine(day, time(0), tzinfo=ZoneInfo("Europe/Berlin")) + timedelta(minutes=free["props"]["start"])
    start = local.astimezone(UTC).strftime("%Y%m%dT%H%MZ")
    form = {"doctor": str(demo.users["doctor1"]), "location": str(demo.locations["berlin"]),
            "service": "consultation", "start": start}  # fmt: skip
    booked = await client.post("/profile/book/request", data=form, headers=patient.headers)
    assert booked.status_code == 200, booked.text
    poll = (await client.patch(WEEK, headers={**doctor.headers, "X-Screen-State": page["state"]})).json()
    assert poll["patches"], "the booking changed the doctor's week"
    fresh = await _put(client, doctor.headers, day=(tomorrow + timedelta(days=7)).isoformat())
    assert apply(page["elements"], poll["patches"]) == fresh["elements"]
    (new,) = [
        e
        for e in _events(fresh)
        if e["props"].get("appointment") not in {x["props"].get("appointment") for x in _events(page)}
    ]
    assert new["props"]["kind"] == "request" and new["label"] == "Maria Schmidt"
    frees = [e["props"]["start"] for e in _events(fresh) if e["id"].startswith(f"free-{day:%Y%m%d}-")]
    assert free["props"]["start"] in frees  # a request does not take the time until it is approved


async def test_a_phone_gets_one_day_in_german(client, login):
    doctor = await login("doctor1")
    headers = {**doctor.headers, "X-Layout": "mobile", "Accept-Language": "de"}
    page = await _put(client, headers, day="2026-11-25")
    assert _days(page) == ["2026-11-25"]
    words = {e["id"]: e.get("label") or e.get("value") for e in walk(page["elements"])}
    assert words["week-prev"] == "Voriger Tag" and words["week-next"] == "Nächster Tag"
    assert words["week-list"] == "Liste" and words["title"].startswith("Mi., 25. Nov.")
    assert page["endpoint"] == f"{WEEK}?day=2026-11-25"


# --- which week it opens on ----------------------------------------------------------------------------


def _by_id(page: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in walk(page["elements"])}


def _in_berlin(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, day, hour, minute, tzinfo=ZoneInfo("Europe/Berlin")).astimezone(UTC)


async def test_on_sunday_evening_the_week_opens_on_next_week_and_says_why(client, login, demo, clock):
    """Dr. Berger (Europe/Berlin) works weekdays: on Sunday evening nothing of this week is ahead, so the view opens
    on next week with a notice, "This week" goes back, and the token keeps the week shown."""
    clock.at = _in_berlin(29, 20)
    doctor = await login("doctor1")
    page = await _put(client, doctor.headers)
    elements = _by_id(page)
    assert _days(page)[0] == "2026-11-30" and page["state"].endswith("@2026-11-30")
    assert elements["week-over"].get("visible", True)
    assert elements["week-over"]["value"] == "Your work hours this week are over: here is next week."
    assert elements["week-today"].get("enabled", True)
    assert elements["week-today"]["action"]["endpoint"] == f"{WEEK}?day=2026-11-29"
    back = await _put(client, doctor.headers, day="2026-11-29")
    assert _days(back)[0] == "2026-11-23" and _by_id(back)["week-over"].get("visible") is False
    poll = (await client.patch(WEEK, headers={**doctor.headers, "X-Screen-State": page["state"]})).json()
    assert poll["patches"] == [] and poll["state"].endswith("@2026-11-30")
    german = await client.put(WEEK, headers={**doctor.headers, "Accept-Language": "de"})
    assert _by_id(german.json())["week-over"]["value"].startswith("Ihre Arbeitszeiten dieser Woche sind vorbei")
    phone = await client.put(WEEK, headers={**doctor.headers, "X-Layout": "mobile"})
    assert _days(phone.json()) == ["2026-11-30"]


async def test_while_work_hours_are_left_the_week_opens_on_this_week(client, login, demo, clock):
    clock.at = _in_berlin(27, 16, 30)  # Friday: half an hour of work left
    doctor = await login("doctor1")
    page = await _put(client, doctor.headers)
    assert _days(page)[0] == "2026-11-23" and _by_id(page)["week-over"].get("visible") is False
    clock.at = _in_berlin(27, 17)  # the last hour has ended
    assert _days(await _put(client, doctor.headers))[0] == "2026-11-30"
