"""The booking screen opens on the first week with a free time (docs/booking.md): a patient who opens it
on a Saturday, a Sunday night or a Friday evening sees next week's free times at once, told why, and may still go
back to this week; a week asked for stays as asked; the page moves on by itself when the shown week's last free
time passes. SQLite and PostgreSQL; the clock is set to each moment (Berlin is UTC+1 in November)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

import pytest

from doctordesk.screens.protocol import apply, walk
from tests.support.integration import make_key

BOOK = "/profile/book"
BERLIN = ZoneInfo("Europe/Berlin")
THIS_WEEK, NEXT_WEEK = "2026-11-23", "2026-11-30"


def berlin(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, day, hour, minute, tzinfo=BERLIN).astimezone(UTC)


def by_id(page: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in walk(page["elements"])}


def starts(page: dict[str, Any]) -> list[datetime]:
    return [datetime.fromisoformat(e["props"]["start"]) for e in walk(page["elements"]) if e["id"].startswith("time-")]


def week_in(url: str) -> str | None:
    return parse_qs(urlsplit(url).query).get("week", [None])[0]


def shown(element: dict[str, Any]) -> bool:
    return bool(element.get("visible", True))


async def put(client, headers, url: str) -> dict[str, Any]:
    response = await client.put(url, headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def api_free_times(client, login, demo, first: str, last: str) -> list[datetime]:
    key = await make_key(client, (await login("admin")).headers)
    doctor, place = demo.users["doctor1"], demo.locations["berlin"]
    params = {"doctor": doctor, "location": place, "from": first, "to": last, "duration": 30}
    response = await client.get("/integration/v1/free-times", headers=key.headers, params=params)
    assert response.status_code == 200, response.text
    return [datetime.fromisoformat(f["start"]) for f in response.json()["free"]]


@pytest.mark.parametrize(
    "moment",
    [berlin(28, 10), berlin(29, 23, 55), berlin(27, 18)],
    ids=["saturday-10:00", "sunday-23:55", "friday-18:00"],
)
async def test_opened_when_this_weeks_times_are_past_it_shows_next_weeks_free_times_at_once(
    client, login, demo, clock, moment
):
    clock.at = moment
    patient = await login("patient1")
    doctor, place = demo.users["doctor1"], demo.locations["berlin"]
    page = await put(client, patient.headers, f"{BOOK}?doctor={doctor}&location={place}")
    elements = by_id(page)
    assert starts(page) == await api_free_times(client, login, demo, NEXT_WEEK, "2026-12-06")
    assert starts(page)[0].astimezone(BERLIN).date().isoformat() == NEXT_WEEK  # Monday's times first
    assert elements["times"]["label"] == "Free times Mon 30 Nov – 06 Dec 2026"
    assert shown(elements["first-free"]) and elements["first-free"]["value"] == (
        "No free times left this week. The first free time is in the week of Mon 30 Nov – 06 Dec 2026."
    )
    assert not shown(elements["times-empty"]) and not shown(elements["none-free"])
    # The address names no week: a reload or a poll looks again.
    assert week_in(page["endpoint"]) is None and week_in(page["poll"]) is None
    assert elements["previous-week"].get("enabled", True) and elements["next-week"].get("enabled", True)
    assert week_in(elements["previous-week"]["action"]["endpoint"]) == THIS_WEEK


async def test_previous_week_leads_back_to_this_week_and_no_further(client, login, demo, clock):
    clock.at = berlin(28, 10)
    patient = await login("patient1")
    page = await put(client, patient.headers, BOOK)
    back = await put(client, patient.headers, by_id(page)["previous-week"]["action"]["endpoint"])
    elements = by_id(back)
    assert week_in(back["endpoint"]) == THIS_WEEK and starts(back) == []
    assert shown(elements["times-empty"]) and not shown(elements["first-free"])
    assert elements["previous-week"].get("enabled") is False  # this week is the first
    assert week_in(elements["next-week"]["action"]["endpoint"]) == NEXT_WEEK


async def test_a_week_asked_for_stays_as_asked(client, login, demo, clock):
    clock.at = berlin(28, 10)
    patient = await login("patient1")
    for week in (THIS_WEEK, "2026-12-07"):
        page = await put(client, patient.headers, f"{BOOK}?week={week}")
        assert week_in(page["endpoint"]) == week
        assert not shown(by_id(page)["first-free"])
    later = await put(client, patient.headers, f"{BOOK}?week=2026-12-07")
    assert starts(later) and all(s.astimezone(BERLIN).date().isoformat() >= "2026-12-07" for s in starts(later))


async def test_with_free_times_left_this_week_it_opens_on_this_week_without_a_word(client, login, demo, clock):
    clock.at = berlin(25, 9)  # a Wednesday morning
    patient = await login("patient1")
    page = await put(client, patient.headers, BOOK)
    assert starts(page) and starts(page)[0].astimezone(BERLIN).date().isoformat() == "2026-11-25"
    assert by_id(page)["times"]["label"].startswith("Free times Mon 23 Nov")
    assert not shown(by_id(page)["first-free"])


async def test_another_choice_on_the_form_opens_on_its_first_free_week(client, login, demo, clock):
    clock.at = berlin(28, 10)
    patient = await login("patient1")
    form = {"doctor": str(demo.users["doctor1"]), "location": str(demo.locations["berlin"]),
            "service": "follow-up", "week": THIS_WEEK}  # fmt: skip
    chosen = await client.patch(f"{BOOK}/choose", headers=patient.headers, data=form)
    assert chosen.status_code == 200, chosen.text
    target = chosen.json()["navigate"]
    assert week_in(target) is None and "service=follow-up" in target
    page = await put(client, patient.headers, target)
    assert starts(page)[0].astimezone(BERLIN).date().isoformat() == NEXT_WEEK
    assert by_id(page)["service"]["value"] == "follow-up"


async def test_the_screen_moves_on_by_itself_when_this_weeks_last_free_time_passes(client, login, demo, clock):
    """Friday 13:00: this week still has free times this afternoon. At each moment the page names (its state
    token), the poll's patches give exactly a fresh page; once the last of them is within the lead time, the page
    is next week's, without the patient doing anything."""
    clock.at = berlin(27, 13)
    patient = await login("patient1")
    doctor, place = demo.users["doctor1"], demo.locations["berlin"]
    path = f"{BOOK}?doctor={doctor}&location={place}"
    page = await put(client, patient.headers, path)
    assert starts(page) and all(s.astimezone(BERLIN).day == 27 for s in starts(page))
    for _ in range(12):
        edge = int(page["state"].split("~", 1)[0].split("!", 1)[0].split(".")[5])
        assert edge, "a page with free times left names when they pass"
        # A second past the moment: a start exactly the lead time ahead is still free, one a second less is not.
        clock.at = datetime.fromtimestamp(edge + 1, UTC)
        update = await client.patch(page["poll"], headers={**patient.headers, "X-Screen-State": page["state"]})
        assert update.status_code == 200, update.text
        fresh = await put(client, patient.headers, path)
        elements = apply(page["elements"], update.json()["patches"])
        assert elements == fresh["elements"]
        page = {**fresh, "elements": elements, "state": update.json()["state"]}
        if starts(page) and starts(page)[0].astimezone(BERLIN).date().isoformat() == NEXT_WEEK:
            break
    else:
        raise AssertionError("the page stayed on this week")
    assert clock.now() <= berlin(27, 15)  # the last start, 16:30, is within the lead time from 14:30 on
    assert shown(by_id(page)["first-free"])
