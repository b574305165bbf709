"""The plain JSON read API: shape, ownership, filters and bad input, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from doctordesk.domain.appointments.status import Status
from doctordesk.store.tables import Appointment, AuditLog
from tests.support.errors import assert_error


async def _all(runtime) -> list[Appointment]:
    async with runtime.db.read() as session:
        return list(await session.scalars(select(Appointment).order_by(Appointment.id)))


async def test_an_appointment_has_exactly_the_documented_fields(client, login, demo, runtime):
    doctor = await login("doctor1")
    a = (await _all(runtime))[0]
    response = await client.get(f"/api/appointments/{a.id}", headers=doctor.headers)
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {
        "id",
        "status",
        "start",
        "duration_minutes",
        "doctor",
        "location",
        "patient",
        "service",
        "chat_enabled",
        "version",
    }
    assert body["id"] == a.id
    assert body["status"] == {"code": 1, "name": "requested"}
    assert body["duration_minutes"] == 30 and body["version"] == 1 and body["chat_enabled"] is True
    assert body["doctor"] == {"id": demo.users["doctor1"], "name": "Dr. Anna Berger"}
    assert body["location"] == {
        "id": demo.locations["berlin"],
        "name": "Berlin Mitte Clinic",
        "timezone": "Europe/Berlin",
    }
    assert body["patient"] == {"id": demo.patients["patient1"], "name": "Maria Schmidt"}
    # ISO 8601 with the offset of the location's timezone (Berlin in November: +01:00), 09:00 local.
    assert body["start"].endswith("T09:00:00+01:00")
    start = datetime.fromisoformat(body["start"])
    assert start == a.start_at and start.utcoffset() == ZoneInfo("Europe/Berlin").utcoffset(
        a.start_at.replace(tzinfo=None)
    )


async def test_a_london_appointment_starts_with_the_london_offset(client, login, runtime, demo):
    doctor = await login("doctor3")
    body = (await client.get("/api/appointments", headers=doctor.headers)).json()
    assert body["appointments"] and all(a["start"].endswith("+00:00") for a in body["appointments"])


@pytest.mark.parametrize(("code", "name"), [(5, "pending-response"), (9, "pending-response"), (6, "completed")])
async def test_status_codes_have_their_public_names(client, login, runtime, code, name):
    support = await login("support1")
    a = next(x for x in await _all(runtime) if x.status == code)
    body = (await client.get(f"/api/appointments/{a.id}", headers=support.headers)).json()
    assert body["status"] == {"code": code, "name": name}


async def test_a_doctor_lists_only_their_own_appointments_by_start_time(client, login, demo, runtime):
    doctor = await login("doctor2")
    listed = (await client.get("/api/appointments", headers=doctor.headers)).json()["appointments"]
    own = [a for a in await _all(runtime) if a.doctor_id == demo.users["doctor2"]]
    assert {a["id"] for a in listed} == {a.id for a in own}
    starts = [datetime.fromisoformat(a["start"]) for a in listed]
    assert starts == sorted(starts)


async def test_another_doctors_appointment_is_404_like_an_unknown_one(client, login, demo, runtime):
    doctor = await login("doctor1")
    other = next(a for a in await _all(runtime) if a.doctor_id == demo.users["doctor2"])
    theirs = assert_error(await client.get(f"/api/appointments/{other.id}", headers=doctor.headers), 404, "NOT_FOUND")
    unknown = assert_error(await client.get("/api/appointments/999999", headers=doctor.headers), 404, "NOT_FOUND")
    assert theirs == unknown


async def test_a_patient_sees_only_their_own_appointments(client, login, demo, runtime):
    patient = await login("patient4")
    listed = (await client.get("/api/appointments", headers=patient.headers)).json()["appointments"]
    everything = await _all(runtime)
    own = {a.id for a in everything if a.patient_id == demo.patients["patient4"]}
    assert {a["id"] for a in listed} == own and own
    foreign = next(a for a in everything if a.patient_id != demo.patients["patient4"])
    assert_error(await client.get(f"/api/appointments/{foreign.id}", headers=patient.headers), 404, "NOT_FOUND")
    mine = next(iter(own))
    assert (await client.get(f"/api/appointments/{mine}", headers=patient.headers)).status_code == 200


@pytest.mark.parametrize("username", ["support1", "admin"])
async def test_support_and_admin_see_every_appointment(client, login, runtime, username):
    user = await login(username)
    listed = (await client.get("/api/appointments", headers=user.headers)).json()["appointments"]
    everything = await _all(runtime)
    assert {a["id"] for a in listed} == {a.id for a in everything}
    for a in everything[:3]:
        assert (await client.get(f"/api/appointments/{a.id}", headers=user.headers)).status_code == 200


async def test_the_status_filter_is_repeatable_and_pending_response_covers_both_codes(client, login, runtime):
    support = await login("support1")
    response = await client.get(
        "/api/appointments", params=[("status", "pending-response"), ("status", "canceled")], headers=support.headers
    )
    listed = response.json()["appointments"]
    expected = {a.id for a in await _all(runtime) if a.status in (4, 5, 9)}
    assert {a["id"] for a in listed} == expected
    assert {a["status"]["code"] for a in listed} == {4, 5, 9}


@pytest.mark.parametrize("name", ["requested", "approved", "declined", "canceled", "completed"])
async def test_every_status_name_filters(client, login, runtime, name):
    support = await login("support1")
    listed = (await client.get("/api/appointments", params={"status": name}, headers=support.headers)).json()
    assert listed["appointments"] and {a["status"]["name"] for a in listed["appointments"]} == {name}


async def test_from_and_to_dates_are_inclusive_days(client, login, runtime, clock):
    support = await login("support1")
    day = (clock.now() + timedelta(days=2)).date()
    params = {"from": day.isoformat(), "to": day.isoformat()}
    listed = (await client.get("/api/appointments", params=params, headers=support.headers)).json()["appointments"]
    expected = {a.id for a in await _all(runtime) if a.start_at.date() == day}
    assert {a["id"] for a in listed} == expected and expected
    only_from = (
        await client.get("/api/appointments", params={"from": day.isoformat()}, headers=support.headers)
    ).json()["appointments"]
    assert {a["id"] for a in only_from} == {a.id for a in await _all(runtime) if a.start_at.date() >= day}


async def test_the_ends_of_the_accepted_range_are_accepted_and_beyond_them_refused(client, login):
    doctor = await login("doctor1")
    for params in ({"to": "2999-12-31"}, {"from": "1900-01-01"}, {"from": "2999-12-31"}):
        assert (await client.get("/api/appointments", params=params, headers=doctor.headers)).status_code == 200
    for params in ({"to": "9999-12-31"}, {"from": "0001-01-01"}, {"from": "3000-01-01"}):
        response = await client.get("/api/appointments", params=params, headers=doctor.headers)
        assert response.status_code == 422 and set(response.json()["fields"]) == set(params), response.text


async def test_filters_combine(client, login, runtime, clock):
    doctor = await login("doctor1")
    day = clock.now().date()
    params = {"status": "requested", "from": day.isoformat(), "to": (day + timedelta(days=4)).isoformat()}
    listed = (await client.get("/api/appointments", params=params, headers=doctor.headers)).json()["appointments"]
    assert listed and all(
        a["status"]["name"] == "requested" and a["doctor"]["name"] == "Dr. Anna Berger" for a in listed
    )


@pytest.mark.parametrize(
    "path",
    [
        "/api/appointments/abc",
        "/api/appointments/0",
        "/api/appointments/-1",
        "/api/appointments/1.5",
        "/api/appointments/99999999999999999999999999",
        "/api/appointments/9223372036854775808",
        "/api/appointments/%00",
    ],
)
async def test_a_malformed_or_huge_id_is_a_validation_error_never_a_500(client, login, path):
    doctor = await login("doctor1")
    body = assert_error(await client.get(path, headers=doctor.headers), 422, "FIELDS_VALIDATION_ERROR")
    assert "appointment_id" in body["fields"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"status": "approved-ish"}, "status"),
        ({"status": "2"}, "status"),
        ({"from": "2026-13-01"}, "from"),
        ({"from": "yesterday"}, "from"),
        ({"to": "2026-02-30"}, "to"),
        ({"to": "9" * 40}, "to"),
        ({"from": "2026-11-30", "to": "2026-11-01"}, "to"),
    ],
)
async def test_bad_filters_are_a_validation_error_naming_the_parameter(client, login, params, field):
    doctor = await login("doctor1")
    response = await client.get("/api/appointments", params=params, headers=doctor.headers)
    body = assert_error(response, 422, "FIELDS_VALIDATION_ERROR")
    assert any(k.split(".")[0] == field for k in body["fields"]), body


async def test_reading_writes_nothing_but_the_login(client, login, runtime):
    doctor = await login("doctor1")
    await client.get("/api/appointments", headers=doctor.headers)
    await client.get("/api/appointments/abc", headers=doctor.headers)
    async with runtime.db.read() as session:
        assert list(await session.scalars(select(AuditLog.action))) == ["login"]
    assert all(a.version == 1 for a in await _all(runtime))
    assert {a.status for a in await _all(runtime)} <= {int(s) for s in Status}
