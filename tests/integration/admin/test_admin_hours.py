"""Work hours and dated exceptions through the administration API, applied by Review and Approve, on SQLite and
PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select

from doctordesk.domain.appointments.status import Status
from doctordesk.store.review_tables import AppointmentOffer
from doctordesk.store.tables import Appointment, WorkHours
from tests.integration.admin.support import audit_rows, counts
from tests.support.errors import assert_error
from tests.support.review import REQUESTED, aid, approve_url, card

# Berlin moves its clocks forward on Sunday 28 March 2027: that Sunday and the Monday after are in summer time.
EXTRA_SUNDAY, HOLIDAY_MONDAY = "2027-03-28", "2027-03-29"


async def propose(client, headers, appointment_id, **cards):
    return await client.post(approve_url(appointment_id), headers=headers, data={**cards, "version": "1"})


async def test_a_holiday_blocks_a_suggestion_and_an_extra_day_allows_one_across_the_clock_change(
    client, login, demo, runtime
):
    admin, doctor = await login("admin"), await login("doctor1")
    doctor_id, berlin = demo.users["doctor1"], demo.locations["berlin"]
    a = aid(demo, REQUESTED)
    sunday = card(1, doctor_id, berlin, EXTRA_SUNDAY, "16:30")
    refused = assert_error(await propose(client, doctor.headers, a, **sunday), 422, "FIELDS_VALIDATION_ERROR")
    assert "work hours" in refused["fields"]["time~1"]  # no weekly hours on Sundays

    extra = {"day": EXTRA_SUNDAY, "kind": "extra", "location_id": berlin, "opens": "16:00", "closes": "17:00"}
    holiday = {"day": HOLIDAY_MONDAY, "kind": "holiday", "note": "Clinic closed"}
    for body in (extra, holiday):
        response = await client.post(f"/admin/doctors/{doctor_id}/hours-exceptions", json=body, headers=admin.headers)
        assert response.status_code == 200 and response.json()["applied"] is True, response.text

    both = {**card(1, doctor_id, berlin, HOLIDAY_MONDAY, "10:00"), **card(2, doctor_id, berlin, EXTRA_SUNDAY, "16:30")}
    refused = assert_error(await propose(client, doctor.headers, a, **both), 422, "FIELDS_VALIDATION_ERROR")
    assert "work hours" in refused["fields"]["time~1"] and "time~2" not in refused["fields"]

    late = card(1, doctor_id, berlin, EXTRA_SUNDAY, "16:45")  # ends 17:15, after the extra hours
    assert (
        "time~1"
        in assert_error(await propose(client, doctor.headers, a, **late), 422, "FIELDS_VALIDATION_ERROR")["fields"]
    )

    sent = await propose(client, doctor.headers, a, **sunday)
    assert sent.status_code < 400, sent.text
    async with runtime.db.read() as session:
        offer = (
            await session.execute(select(AppointmentOffer).where(AppointmentOffer.appointment_id == a))
        ).scalar_one()
    assert offer.start_at == datetime(2027, 3, 28, 14, 30, tzinfo=UTC)  # 16:30 summer time, UTC+2


async def book(runtime, demo, *, start: datetime, status: Status = Status.APPROVED) -> int:
    async with runtime.db.transaction() as session:
        row = Appointment(
            patient_id=demo.patients["patient2"], doctor_id=demo.users["doctor1"], location_id=demo.locations["berlin"],
            start_at=start, duration_minutes=30, status=int(status), created_at=demo.now, updated_at=demo.now,
        )  # fmt: skip
        session.add(row)
        await session.flush()
        return row.id


async def weekly_rows(runtime, doctor_id, location_id):
    async with runtime.db.read() as session:
        rows = await session.execute(
            select(WorkHours.weekday, WorkHours.start_time, WorkHours.end_time)
            .where(WorkHours.doctor_id == doctor_id, WorkHours.location_id == location_id)
            .order_by(WorkHours.weekday, WorkHours.start_time)
        )
        return rows.all()


async def test_a_change_leaving_approved_appointments_outside_lists_them_and_moves_nothing(
    client, login, demo, runtime
):
    admin = await login("admin")
    doctor_id, berlin = demo.users["doctor1"], demo.locations["berlin"]
    tuesday_10 = datetime(2027, 3, 30, 8, 0, tzinfo=UTC)  # 10:00 in Berlin (summer time)
    approved = await book(runtime, demo, start=tuesday_10)
    requested = await book(runtime, demo, start=tuesday_10, status=Status.REQUESTED)
    url = f"/admin/doctors/{doctor_id}/hours/{berlin}"
    afternoons = {"rules": [{"weekday": d, "opens": "13:00", "closes": "17:00"} for d in range(5)]}
    hours_before, rows_before = await weekly_rows(runtime, doctor_id, berlin), await counts(runtime)

    answer = (await client.put(url, json=afternoons, headers=admin.headers)).json()
    assert answer["applied"] is False
    assert [c["appointment_id"] for c in answer["conflicts"]] == [approved]  # not the mere request
    assert answer["conflicts"][0]["start"] == "2027-03-30T10:00:00+02:00"
    assert await weekly_rows(runtime, doctor_id, berlin) == hours_before and await counts(runtime) == rows_before

    confirmed = (await client.put(url, json={**afternoons, "confirm": True}, headers=admin.headers)).json()
    assert confirmed["applied"] is True and [c["appointment_id"] for c in confirmed["conflicts"]] == [approved]
    async with runtime.db.read() as session:
        kept = await session.get(Appointment, approved)
        assert kept.start_at == tuesday_10 and kept.status == int(Status.APPROVED)
    assert len(await weekly_rows(runtime, doctor_id, berlin)) == 5
    [row] = await audit_rows(runtime, "admin.work-hours-set")
    assert row.details["before"]["rules"][0] == {"weekday": 0, "opens": "08:00", "closes": "17:00"}
    assert row.details["after"]["rules"][0] == {"weekday": 0, "opens": "13:00", "closes": "17:00"}
    assert row.details["after"]["conflicts"] == [approved]
    del requested


async def test_a_holiday_on_an_approved_appointments_day_needs_confirmation(client, login, demo, runtime):
    admin = await login("admin")
    doctor_id = demo.users["doctor1"]
    approved = await book(runtime, demo, start=datetime(2027, 3, 29, 8, 0, tzinfo=UTC))
    url = f"/admin/doctors/{doctor_id}/hours-exceptions"
    answer = (await client.post(url, json={"day": HOLIDAY_MONDAY, "kind": "holiday"}, headers=admin.headers)).json()
    assert answer == {"applied": False, "conflicts": answer["conflicts"], "exception_id": None, "times": []}
    assert [c["appointment_id"] for c in answer["conflicts"]] == [approved]
    assert (await client.get(f"/admin/doctors/{doctor_id}/hours", headers=admin.headers)).json()["exceptions"] == []
    body = {"day": HOLIDAY_MONDAY, "kind": "holiday", "confirm": True}
    added = (await client.post(url, json=body, headers=admin.headers)).json()
    assert added["applied"] is True and added["exception_id"]
    hours = (await client.get(f"/admin/doctors/{doctor_id}/hours", headers=admin.headers)).json()
    assert [e["id"] for e in hours["exceptions"]] == [added["exception_id"]]
    removed = await client.post(
        f"/admin/hours-exceptions/{added['exception_id']}/remove", json={}, headers=admin.headers
    )
    assert removed.json()["applied"] is True
    assert (await client.get(f"/admin/doctors/{doctor_id}/hours", headers=admin.headers)).json()["exceptions"] == []
    [row] = await audit_rows(runtime, "admin.hours-exception-removed")
    assert row.details["before"]["kind"] == "holiday" and row.details["after"] is None
    again = await client.post(f"/admin/hours-exceptions/{added['exception_id']}/remove", json={}, headers=admin.headers)
    assert_error(again, 404, "NOT_FOUND")


async def test_invalid_hours_are_refused_naming_the_field_and_write_nothing(client, login, demo, runtime):
    admin = await login("admin")
    doctor_id, berlin = demo.users["doctor1"], demo.locations["berlin"]
    before = await counts(runtime), await weekly_rows(runtime, doctor_id, berlin)
    weekly, exceptions = f"/admin/doctors/{doctor_id}/hours/{berlin}", f"/admin/doctors/{doctor_id}/hours-exceptions"
    backwards = {"rules": [{"weekday": 1, "opens": "12:00", "closes": "09:00"}]}
    no_such_day = {"rules": [{"weekday": 9, "opens": "09:00", "closes": "12:00"}]}
    cases = [
        ("put", weekly, backwards, "rules.0"),
        ("put", weekly, no_such_day, "rules.0.weekday"),
        ("put", weekly, {"rules": [], "force": True}, "force"),
        ("post", exceptions, {"day": HOLIDAY_MONDAY, "kind": "extra"}, "opens"),
        ("post", exceptions, {"day": "2027-02-30", "kind": "holiday"}, "day"),
        ("post", exceptions, {"day": HOLIDAY_MONDAY, "kind": "trip"}, "kind"),
        ("post", exceptions, {"day": HOLIDAY_MONDAY, "kind": "holiday", "location_id": 99999}, "location_id"),
    ]
    for method, url, body, field in cases:
        response = await getattr(client, method)(url, json=body, headers=admin.headers)
        assert field in assert_error(response, 422, "FIELDS_VALIDATION_ERROR")["fields"], (body, response.text)
    support = demo.users["support1"]
    assert_error(await client.get(f"/admin/doctors/{support}/hours", headers=admin.headers), 404, "NOT_FOUND")
    missing = await client.put(f"/admin/doctors/{doctor_id}/hours/99999", json={"rules": []}, headers=admin.headers)
    assert_error(missing, 404, "NOT_FOUND")
    assert (await counts(runtime), await weekly_rows(runtime, doctor_id, berlin)) == before


async def test_doctors_cannot_edit_work_hours(client, login, demo):
    doctor = await login("doctor1")
    url = f"/admin/doctors/{demo.users['doctor1']}/hours/{demo.locations['berlin']}"
    assert_error(await client.put(url, json={"rules": []}, headers=doctor.headers), 403, "FORBIDDEN")


GAP = "02:15 does not exist on 2027-03-28 in Europe/Berlin: the clocks go from 02:00 straight to 03:00 (clock change)."


async def test_an_exception_time_the_clocks_jump_over_is_refused_naming_the_jump_and_nothing_is_written(
    client, login, demo, runtime
):
    admin = await login("admin")
    doctor_id, berlin = demo.users["doctor1"], demo.locations["berlin"]
    before = await counts(runtime)
    body = {"day": EXTRA_SUNDAY, "kind": "extra", "location_id": berlin, "opens": "02:15", "closes": "02:45"}
    url = f"/admin/doctors/{doctor_id}/hours-exceptions"
    refused = assert_error(await client.post(url, json=body, headers=admin.headers), 422, "FIELDS_VALIDATION_ERROR")
    assert refused["fields"]["opens"] == GAP and "02:45 does not exist" in refused["fields"]["closes"]
    every_location = {**body, "location_id": None}
    assert (
        "opens"
        in assert_error(
            await client.post(url, json=every_location, headers=admin.headers), 422, "FIELDS_VALIDATION_ERROR"
        )["fields"]
    )
    german = await client.post(url, json=body, headers={**admin.headers, "Accept-Language": "de"})
    assert "Zeitumstellung" in german.json()["fields"]["opens"]
    form = {"doctor": str(doctor_id), "location": str(berlin), "day": EXTRA_SUNDAY, "kind": "extra", "opens": "02:15",
            "closes": "02:45", "note": ""}  # fmt: skip
    screen = await client.post("/profile/admin/hours/exceptions/add", data=form, headers=admin.headers)
    assert assert_error(screen, 422, "FIELDS_VALIDATION_ERROR")["fields"]["opens"] == GAP
    assert await counts(runtime) == before
    assert (await client.get(f"/admin/doctors/{doctor_id}/hours", headers=admin.headers)).json()["exceptions"] == []


async def test_an_exception_time_the_clocks_pass_twice_is_its_first_occurrence_and_the_answer_states_its_offset(
    client, login, demo
):
    admin = await login("admin")
    doctor_id, berlin = demo.users["doctor1"], demo.locations["berlin"]
    body = {"day": "2027-10-31", "kind": "extra", "location_id": berlin, "opens": "02:15", "closes": "02:45"}
    added = await client.post(f"/admin/doctors/{doctor_id}/hours-exceptions", json=body, headers=admin.headers)
    assert added.status_code == 200, added.text
    assert added.json()["applied"] is True
    assert added.json()["times"] == [
        {"location_id": berlin, "opens": "2027-10-31T02:15:00+02:00", "closes": "2027-10-31T02:45:00+02:00"}
    ]
