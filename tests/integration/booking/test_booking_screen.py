"""The patient's booking screen (docs/booking.md), on SQLite and PostgreSQL: it offers the free times the
integration API computes, a picked time becomes a request in the doctor's list, a refused request writes nothing,
and only patients book."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

from sqlalchemy import func, select

from doctordesk.domain.appointments.status import Status
from doctordesk.screens.protocol import walk
from doctordesk.store.tables import Appointment
from tests.support.integration import make_key

BOOK = "/profile/book"


def by_id(page: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in walk(page["elements"])}


def free_links(page: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in walk(page["elements"]) if e["id"].startswith("time-")]


async def appointment_count(runtime) -> int:
    async with runtime.db.read() as s:
        return int(await s.scalar(select(func.count()).select_from(Appointment)) or 0)


async def open_booking(client, headers, url: str = BOOK) -> dict[str, Any]:
    response = await client.put(url, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


async def test_the_screen_offers_the_free_times_the_integration_api_computes(client, login, demo):
    patient = await login("patient1")
    doctor, berlin = demo.users["doctor1"], demo.locations["berlin"]
    page = await open_booking(client, patient.headers, f"{BOOK}?doctor={doctor}&location={berlin}&week=2026-11-30")
    shown = [datetime.fromisoformat(e["props"]["start"]) for e in free_links(page)]
    admin = await login("admin")
    key = await make_key(client, admin.headers)
    api = await client.get(
        "/integration/v1/free-times",
        headers=key.headers,
        params={"doctor": doctor, "location": berlin, "from": "2026-11-30", "to": "2026-12-06", "duration": 30},
    )
    assert api.status_code == 200, api.text
    assert shown and shown == [datetime.fromisoformat(f["start"]) for f in api.json()["free"]]
    assert by_id(page)["timezone-note"]["value"] == "Times in Europe/Berlin."


async def test_a_picked_time_becomes_a_request_in_the_doctors_list(client, login, demo, runtime):
    patient = await login("patient1")
    doctor = await login("doctor1")
    page = await open_booking(client, patient.headers, f"{BOOK}?week=2026-11-30")
    first = free_links(page)[0]
    picked = await open_booking(client, patient.headers, first["action"]["endpoint"])
    elements = by_id(picked)
    assert elements["request"].get("visible", True) and elements["chosen-time"]["value"]
    form = {e["name"]: e.get("value") or "" for e in walk([elements["confirm"]]) if e.get("name")}
    form["note"] = "Knee hurts when climbing stairs"
    before = await appointment_count(runtime)
    sent = await client.post(f"{BOOK}/request", headers=patient.headers, data=form)
    assert sent.status_code == 200, sent.text
    assert sent.json()["navigate"] == "/profile/appointments"
    assert "Request sent for" in sent.json()["notice"]["text"]
    assert await appointment_count(runtime) == before + 1
    listed = await client.put("/profile/appointments", headers=doctor.headers)
    rows = [e for e in walk(listed.json()["elements"]) if e["id"].startswith("appointment-")]
    async with runtime.db.read() as s:
        newest = await s.scalar(select(Appointment).order_by(Appointment.id.desc()).limit(1))
    assert newest is not None and newest.request_note == "Knee hurts when climbing stairs"
    assert f"appointment-{newest.id}" in {r["id"] for r in rows}
    review = await client.put(f"/profile/appointments/{newest.id}/approve", headers=doctor.headers)
    assert by_id(review.json())["request-note"]["value"] == "Knee hurts when climbing stairs"


async def test_a_time_taken_meanwhile_is_refused_and_nothing_is_written(client, login, runtime):
    patient = await login("patient1")
    other = await login("patient4")  # covered for Dr. Berger in Berlin (patient2's policy has expired)
    page = await open_booking(client, patient.headers, f"{BOOK}?week=2026-11-30")
    picked = by_id(await open_booking(client, patient.headers, free_links(page)[0]["action"]["endpoint"]))
    form = {e["name"]: e.get("value") or "" for e in walk([picked["confirm"]]) if e.get("name")}
    assert (await client.post(f"{BOOK}/request", headers=other.headers, data=form)).status_code == 200
    # The doctor approves the first request: its time is taken.
    async with runtime.db.transaction() as s:
        newest = await s.scalar(select(Appointment).order_by(Appointment.id.desc()).limit(1))
        assert newest is not None
        newest.status = int(Status.APPROVED)
    before = await appointment_count(runtime)
    refused = await client.post(f"{BOOK}/request", headers=patient.headers, data=form)
    assert refused.status_code == 422, refused.text
    body = refused.json()
    assert body["code"] == "FIELDS_VALIDATION_ERROR" and "start" in body["fields"]
    assert await appointment_count(runtime) == before


async def test_bad_input_is_refused_with_field_errors(client, login, runtime):
    patient = await login("patient1")
    before = await appointment_count(runtime)
    cases = [
        {"doctor": "²", "location": "1", "service": "consultation", "start": "20261130T0800Z"},
        {"doctor": "1", "location": "1", "service": "massage", "start": "20261130T0800Z"},
        {"doctor": "1", "location": "1", "service": "consultation", "start": "2026-11-30T08:00"},
        {"doctor": "1", "location": "1", "service": "consultation", "start": "20261130T0800Z", "note": "a\x00b"},
    ]
    for form in cases:
        response = await client.post(f"{BOOK}/request", headers=patient.headers, data=form)
        assert response.status_code == 422, (form, response.text)
        assert response.json()["fields"]
    assert (await client.put(f"{BOOK}?doctor=%2B1", headers=patient.headers)).status_code == 422
    assert (await client.put(f"{BOOK}?start=tomorrow", headers=patient.headers)).status_code == 422
    assert await appointment_count(runtime) == before


async def test_only_patients_book(client, login, demo):
    for who in ("doctor1", "support1", "admin"):
        user = await login(who)
        assert (await client.put(BOOK, headers=user.headers)).status_code == 404
        form = {"doctor": str(demo.users["doctor1"]), "location": "1", "service": "consultation", "start": "x"}
        assert (await client.post(f"{BOOK}/request", headers=user.headers, data=form)).status_code in (404, 422)
    assert (await client.put(BOOK)).status_code == 401


async def test_a_choice_that_no_longer_fits_is_settled(client, login, demo):
    patient = await login("patient1")
    page = await open_booking(client, patient.headers, f"{BOOK}?doctor=999999&location=999999&week=2001-01-01")
    query = parse_qs(urlsplit(page["endpoint"]).query)
    assert query["week"] == ["2026-11-23"]
    assert int(query["doctor"][0]) in demo.users.values()
    assert by_id(page)["previous-week"].get("enabled") is False
    chosen = await client.patch(
        f"{BOOK}/choose", headers=patient.headers, data={"doctor": query["doctor"][0], "service": "follow-up"}
    )
    assert chosen.status_code == 200, chosen.text
    assert "service=follow-up" in chosen.json()["navigate"]


async def test_a_time_the_doctor_approves_for_another_patient_leaves_the_screen(client, login, runtime):
    patient = await login("patient2")
    other = await login("patient1")  # whose policy covers the time
    doctor = await login("doctor1")
    page = await open_booking(client, patient.headers, f"{BOOK}?week=2026-11-30")
    state, first = page["state"], free_links(page)[0]
    quiet = await client.patch(page["endpoint"], headers={**patient.headers, "X-Screen-State": state})
    assert quiet.status_code == 200 and not quiet.json().get("patches")
    picked = by_id(await open_booking(client, other.headers, first["action"]["endpoint"]))
    form = {e["name"]: e.get("value") or "" for e in walk([picked["confirm"]]) if e.get("name")}
    assert (await client.post(f"{BOOK}/request", headers=other.headers, data=form)).status_code == 200
    async with runtime.db.read() as s:
        newest = await s.scalar(select(Appointment.id).order_by(Appointment.id.desc()).limit(1))
    approved = await client.post(
        f"/profile/appointments/{newest}/approve", headers=doctor.headers, data={"version": "1"}
    )
    assert approved.status_code == 200, approved.text
    polled = await client.patch(page["endpoint"], headers={**patient.headers, "X-Screen-State": state})
    assert polled.status_code == 200
    removed = {p["id"] for p in polled.json()["patches"] if p["op"] == "remove"}
    assert first["id"] in removed


async def test_a_holiday_removes_its_day_from_the_screen_and_refuses_a_request_for_it(client, login, demo, runtime):
    patient = await login("patient1")
    admin = await login("admin")
    page = await open_booking(client, patient.headers, f"{BOOK}?week=2026-11-30")
    first = free_links(page)[0]
    day = datetime.fromisoformat(first["props"]["start"]).astimezone(ZoneInfo("Europe/Berlin")).date()
    picked = by_id(await open_booking(client, patient.headers, first["action"]["endpoint"]))
    form = {e["name"]: e.get("value") or "" for e in walk([picked["confirm"]]) if e.get("name")}
    holiday = await client.post(
        f"/admin/doctors/{form['doctor']}/hours-exceptions",
        headers=admin.headers,
        json={"day": day.isoformat(), "kind": "holiday", "note": "Closed"},
    )
    assert holiday.status_code == 200, holiday.text
    again = await open_booking(client, patient.headers, page["endpoint"])
    assert f"day-{day.isoformat()}" not in by_id(again)
    before = await appointment_count(runtime)
    refused = await client.post(f"{BOOK}/request", headers=patient.headers, data=form)
    assert refused.status_code == 422 and "start" in refused.json()["fields"]
    assert await appointment_count(runtime) == before


async def picked(client, who, url: str) -> tuple[str, dict[str, dict[str, Any]]]:
    """The booking screen at ``url`` with its first free time picked: that time's address and the page."""
    page = await open_booking(client, who.headers, url)
    link = free_links(page)[0]["action"]["endpoint"]
    return link, by_id(await open_booking(client, who.headers, link))


def request_form(elements: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {e["name"]: e.get("value") or "" for e in walk([elements["confirm"]]) if e.get("name")}


async def test_a_time_the_policy_does_not_cover_cannot_be_requested_by_the_rule_approval_applies(
    client, login, demo, runtime
):
    """Patient2's policy has expired. Picking a time says why the doctor could not approve it and what
    the patient can do, in their language, and "Request this time" is off; a POST anyway is refused with the code
    Review and Approve would give (APPOINTMENT_DATE_NOT_COVERED) and nothing is written. A covered patient gets
    neither."""
    covered = await login("patient1")
    _, fine = await picked(client, covered, f"{BOOK}?week=2026-11-30")
    assert fine["coverage-warning"].get("visible", True) is False and fine["request"].get("enabled", True)
    expired = await login("patient2")
    url, warned = await picked(client, expired, f"{BOOK}?week=2026-11-30")
    warning = warned["coverage-warning"]
    assert warning.get("visible", True) is True and warning["props"]["tone"] == "error"
    assert warning["value"].startswith("Your insurance policy does not cover this date, so the doctor could not")
    assert "contact support" in warning["value"]
    assert warned["coverage-period"]["value"] == "Your policy covers no date from today on. Please contact support."
    assert warned["request"]["enabled"] is False
    german = by_id((await client.put(url, headers={**expired.headers, "Accept-Language": "de"})).json())
    assert german["coverage-warning"]["value"].startswith("Ihre Versicherung deckt dieses Datum nicht")
    assert german["coverage-period"]["value"].startswith("Ihre Versicherung deckt ab heute kein Datum ab.")
    before = await appointment_count(runtime)
    refused = await client.post(f"{BOOK}/request", headers=expired.headers, data=request_form(warned))
    assert refused.status_code == 422, refused.text
    assert refused.json()["code"] == "APPOINTMENT_DATE_NOT_COVERED"
    assert refused.json()["fields"]["start"] == warning["value"]
    assert await appointment_count(runtime) == before


async def test_a_service_the_policy_excludes_or_unconfirmed_insurance_cannot_be_requested(client, login, demo, runtime):
    """The other verdicts that block approval block the request too, each with its code: patient5's policy excludes
    teledermatology (FORBIDDEN_DUE_TO_POLICY_TERMS), patient3's insurer data is malformed
    (THIRD_PARTY_DATA_INVALID)."""
    before = await appointment_count(runtime)
    cases = (
        ("patient5", "&service=teledermatology", "FORBIDDEN_DUE_TO_POLICY_TERMS", "excludes this service"),
        ("patient3", "", "THIRD_PARTY_DATA_INVALID", "could not be confirmed"),
    )
    for username, query, code, says in cases:
        who = await login(username)
        _, page = await picked(client, who, f"{BOOK}?week=2026-11-30{query}")
        assert page["request"]["enabled"] is False and says in page["coverage-warning"]["value"], username
        refused = await client.post(f"{BOOK}/request", headers=who.headers, data=request_form(page))
        assert (refused.status_code, refused.json()["code"]) == (422, code), refused.text
    assert await appointment_count(runtime) == before


async def test_an_out_of_network_time_is_warned_and_may_still_be_requested(client, login, demo, runtime):
    """Out of network is a risk, not a refusal (approval stays possible, as on Review and Approve): patient4's
    policy leaves Dr. Chen in London out of its network."""
    who = await login("patient4")
    chen, london = demo.users["doctor3"], demo.locations["london"]
    _, page = await picked(client, who, f"{BOOK}?doctor={chen}&location={london}&week=2026-11-30")
    assert page["coverage-warning"]["value"].startswith("Out of network: your insurance")
    assert page["coverage-warning"]["props"]["tone"] == "warning" and page["request"].get("enabled", True)
    assert page["coverage-period"]["visible"] is False
    sent = await client.post(f"{BOOK}/request", headers=who.headers, data=request_form(page))
    assert sent.status_code == 200, sent.text
