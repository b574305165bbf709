"""The dashboard screens over HTTP (docs/dashboard.md), on SQLite and PostgreSQL: who may see which figures, the
charts with their tables and CSV downloads, the CSV guarded against formulas, and the page catching up after a
change."""

from __future__ import annotations

import base64
import csv
import io
from datetime import timedelta
from typing import Any

from sqlalchemy import update

from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import ALL_APPOINTMENTS_TOPIC, DomainEvent
from doctordesk.screens.protocol import walk
from doctordesk.services.dashboard import screen as dashboard
from doctordesk.services.scheduling.clinic_facts import clinic_changed
from doctordesk.store.tables import User
from tests.support.review import REQUESTED, aid

ADMIN = "/profile/admin/dashboard"
OWN = "/profile/dashboard"
KEYS = ["requests", "decision-time", "booked-share", "attendance", "reminders", "waitlist"]  # all six


def by_id(page: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in walk(page["elements"])}


async def test_an_admin_sees_every_metric_as_a_chart_with_its_table_and_csv(client, login):
    admin = await login("admin")
    r = await client.put(ADMIN, headers=admin.headers)
    assert r.status_code == 200, r.text
    elements = by_id(r.json())
    assert [e["id"] for e in walk(r.json()["elements"]) if e["type"] == "Chart"] == [f"chart-{k}" for k in KEYS]
    for key in KEYS:
        chart = elements[f"chart-{key}"]
        assert chart["type"] == "Chart" and chart["label"]
        svg = base64.b64decode(chart["value"].removeprefix("data:image/svg+xml;base64,")).decode()
        assert '<title id="chart-title">' in svg and '<desc id="chart-desc">' in svg and "<script" not in svg
        assert chart["props"]["description"] and chart["props"]["columns"] and chart["props"]["rows"] is not None
        assert elements[f"csv-{key}"]["props"]["href"] == f"{ADMIN}/export/{key}"
    assert len(elements["chart-requests"]["props"]["rows"]) == 90


def rows_of(chart: dict[str, Any]) -> dict[str, list[str]]:
    return {r[0]: r[1:] for r in chart["props"]["rows"]}


async def test_a_doctor_sees_only_their_own_figures_and_csv(client, login, demo):
    doctor = await login("doctor1")
    r = await client.put(OWN, headers=doctor.headers)
    assert r.status_code == 200, r.text
    elements = by_id(r.json())
    shares = rows_of(elements["chart-booked-share"])
    assert list(shares) == [doctor.user["display_name"]]
    assert elements["csv-booked-share"]["props"]["href"] == f"{OWN}/export/booked-share"
    exported = await client.get(f"{OWN}/export/booked-share", headers=doctor.headers)
    assert exported.status_code == 200 and exported.headers["content-type"].startswith("text/csv")
    lines = list(csv.reader(io.StringIO(exported.text)))
    assert [row[0] for row in lines[1:]] == [doctor.user["display_name"]]
    # The clinic's dashboard, or another doctor's through its filter, is not theirs.
    other = demo.users["doctor2"]
    for url in (ADMIN, f"{ADMIN}?doctor={other}", f"{ADMIN}/export/requests?doctor={other}"):
        refused = await (client.get(url, headers=doctor.headers) if "export" in url else
                         client.put(url, headers=doctor.headers))  # fmt: skip
        assert refused.status_code == 404 and refused.json()["code"] == "NOT_FOUND", url


async def test_a_patient_and_support_get_not_found_and_anonymous_callers_401(client, login):
    for username in ("patient1", "support1"):
        user = await login(username)
        for method, url in (("PUT", OWN), ("PUT", ADMIN), ("PATCH", ADMIN), ("GET", f"{OWN}/export/requests"),
                            ("GET", f"{ADMIN}/export/requests")):  # fmt: skip
            r = await client.request(method, url, headers=user.headers)
            assert r.status_code == 404 and r.json()["code"] == "NOT_FOUND", (username, method, url)
    assert (await client.put(OWN)).status_code == 401
    assert (await client.get(f"{ADMIN}/export/requests")).status_code == 401


async def test_the_admins_doctor_filter_navigates_and_shows_that_doctor_only(client, login, demo):
    admin = await login("admin")
    doctor = demo.users["doctor2"]
    chosen = await client.patch(f"{ADMIN}/choose", headers=admin.headers, data={"doctor": str(doctor)})
    assert chosen.json()["navigate"] == f"{ADMIN}?doctor={doctor}"
    page = (await client.put(f"{ADMIN}?doctor={doctor}", headers=admin.headers)).json()
    elements = by_id(page)
    assert elements["doctor"]["value"] == str(doctor)
    assert len(rows_of(elements["chart-booked-share"])) == 1
    assert elements["csv-requests"]["props"]["href"] == f"{ADMIN}/export/requests?doctor={doctor}"
    whole = await client.patch(f"{ADMIN}/choose", headers=admin.headers, data={"doctor": ""})
    assert whole.json()["navigate"] == ADMIN
    unknown = await client.put(f"{ADMIN}?doctor={demo.users['patient1']}", headers=admin.headers)
    assert unknown.status_code == 404
    assert (await client.get(f"{ADMIN}/export/nothing", headers=admin.headers)).status_code == 404


async def test_the_csv_writes_a_formula_like_name_as_text(client, login, demo, runtime):
    admin = await login("admin")
    doctor = demo.users["doctor2"]
    async with runtime.db.transaction() as s:
        await s.execute(update(User).where(User.id == doctor).values(display_name='=HYPERLINK("http://x","y")'))
    await clinic_changed(runtime)
    r = await client.get(f"{ADMIN}/export/booked-share", headers=admin.headers)
    assert r.status_code == 200, r.text
    assert r.headers["content-disposition"].startswith('attachment; filename="booked-share-')
    lines = list(csv.reader(io.StringIO(r.text)))
    assert lines[0] == ["Doctor", "Offered hours", "Booked hours", "Booked share (%)"]
    names = [row[0] for row in lines[1:]]
    assert '\'=HYPERLINK("http://x","y")' in names and not any(n.startswith("=") for n in names)
    requests = list(csv.reader(io.StringIO((await client.get(f"{ADMIN}/export/requests", headers=admin.headers)).text)))
    assert len(requests) == 91 and requests[1][0] == "2026-08-26" and requests[-1][0] == "2026-11-23"


async def test_german_readers_get_german_texts_numbers_and_days(client, login):
    admin = await login("admin")
    page = (await client.put(ADMIN, headers={**admin.headers, "Accept-Language": "de"})).json()
    elements = by_id(page)
    chart = elements["chart-requests"]
    assert chart["label"] == "Anfragen pro Tag"
    assert chart["props"]["columns"] == ["Tag", "Anfragen"]
    assert chart["props"]["rows"][-1][0] == "Mo., 23. Nov. 2026"
    csv_de = await client.get(f"{ADMIN}/export/requests", headers={**admin.headers, "Accept-Language": "de"})
    assert csv_de.text.splitlines()[0] == "Tag,Anfragen"


async def test_a_change_reaches_the_open_dashboard_within_the_hold(client, login, demo, runtime, clock):
    admin = await login("admin")
    page = (await client.put(ADMIN, headers=admin.headers)).json()
    before = rows_of(by_id(page)["chart-decision-time"])
    doctor = await login("doctor1")
    declined = await client.post(f"/profile/appointments/{aid(demo, REQUESTED)}/decline", headers=doctor.headers,
                                 data={"reason": "Fully booked", "version": "1"})  # fmt: skip
    assert declined.status_code == 200, declined.text
    # Figures are computed at most once per HOLD_SECONDS: the poll right after the change may still show them,
    # and its token says when to look again.
    clock.advance(timedelta(seconds=dashboard.HOLD_SECONDS))
    poll = await client.patch(ADMIN, headers={**admin.headers, "X-Screen-State": page["state"]})
    assert poll.status_code == 200, poll.text
    patches = poll.json()["patches"]
    changed = [p for p in patches if p.get("id") == "chart-decision-time"]
    assert changed and changed[0]["op"] == "update"
    after = changed[0]["set"]["props"]["rows"]
    this_week = after[-1]
    assert int(this_week[1]) == int(before[this_week[0]][0]) + 1


async def test_figures_are_computed_once_per_hold_and_a_stale_page_says_when_to_look_again(client, login, demo,
                                                                                           runtime, clock):  # fmt: skip
    admin = await login("admin")
    page = (await client.put(ADMIN, headers=admin.headers)).json()
    # An appointment changed (the event alone: the figures read the same rows) right after the page was drawn.
    await runtime.publish([DomainEvent(EventKind.APPOINTMENTS_IMPORTED, (ALL_APPOINTMENTS_TOPIC,))])
    held = await client.patch(ADMIN, headers={**admin.headers, "X-Screen-State": page["state"]})
    token = held.json()["state"]
    until = int(token.split(".")[5])
    assert until == int((clock.now() + timedelta(seconds=dashboard.HOLD_SECONDS)).timestamp())
