"""The waitlist (docs/waitlist.md), on SQLite and PostgreSQL: joining and its validation, a freed time offered to
the first patient waiting, then (one-at-a-time, on the Clock) to the next; all-at-once; accepting as a request
for the doctor or as a direct move; another patient's entry and offer are 404."""

from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from doctordesk.domain.appointments.status import Status
from doctordesk.screens.protocol import walk
from doctordesk.services.waitlist.matching import run_round
from doctordesk.store.tables import Appointment, AppointmentHistory
from doctordesk.store.waitlist.tables import WaitlistEntry
from tests.integration.waitlist.support import (
    APPROVED_TUESDAY,
    WAITLIST,
    cancel,
    join,
    offer_ids,
    offers,
    slot_of,
)
from tests.support.errors import assert_error
from tests.support.integration import make_key
from tests.support.review import Events, aid


@pytest.fixture
def settings(database_url, settings_factory):
    # Rounds are driven by the test, one at a time (the worker's wake-ups are tested in the live test).
    return settings_factory(database_url, waitlist_in_process=False)


def set_policy(runtime, **changes) -> None:
    runtime.settings = runtime.settings.model_copy(update=changes)


def ids(page) -> dict[str, dict]:
    return {e["id"]: e for e in walk(page["elements"])}


async def test_a_patient_joins_and_sees_the_entry_then_leaves(client, login, demo, runtime):
    patient = await login("patient1")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    response = await join(client, patient, slot.form())
    assert response.status_code == 200, response.text
    assert response.json()["notice"]["text"].startswith("You are on the waitlist")
    page = (await client.put(WAITLIST, headers=patient.headers)).json()
    (entry,) = [e for e in ids(page).values() if e["id"].startswith("entry-") and e["type"] == "Card"]
    assert "Dr. Anna Berger" in entry["label"] and "Berlin Mitte Clinic" in entry["label"]
    # The last day in the reader's words, as the form's Date shows it, not the wire's YYYY-MM-DD.
    day = slot.start.astimezone(ZoneInfo("Europe/Berlin")).date()
    number = entry["id"].removeprefix("entry-")
    assert ids(page)[f"entry-when-{number}"]["value"].endswith(f"until {day:%d %b %Y}")
    german = (await client.put(WAITLIST, headers={**patient.headers, "Accept-Language": "de"})).json()
    assert ids(german)[f"entry-when-{number}"]["value"].endswith(f"bis {day.day}. Nov. {day.year}")
    entry_id = int(entry["id"].removeprefix("entry-"))
    left = await client.post(f"{WAITLIST}/{entry_id}/leave", headers=patient.headers)
    assert left.status_code == 200, left.text
    async with runtime.db.read() as s:
        assert (await s.get(WaitlistEntry, entry_id)).state == "left"
    page = (await client.put(WAITLIST, headers=patient.headers)).json()
    assert "no-entries" in ids(page)


async def test_the_screen_is_in_german_for_a_german_reader(client, login, demo):
    patient = await login("patient1")
    page = (await client.put(WAITLIST, headers={**patient.headers, "Accept-Language": "de"})).json()
    assert page["title"] == "Warteliste"
    assert ids(page)["join-send"]["label"] == "Auf die Warteliste"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"location": "x"}, "location"),
        ({"service": "surgery"}, "service"),
        ({"until": "2026-13-01"}, "until"),
        ({"until": "2026-11-01"}, "until"),
        ({"until": "2027-06-01"}, "until"),
        ({"from": "25:00"}, "from"),
        ({"from": "12:00", "to": "11:00"}, "to"),
        ({"doctor": "-3"}, "doctor"),
        ({"location": "999"}, "location"),
        ({"appointment": "1"}, "appointment"),
    ],
)
async def test_a_wrong_field_is_refused_by_name_and_nothing_is_written(client, login, demo, runtime, change, field):
    patient = await login("patient1")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))  # patient4's: "appointment" 1 is not patient1's
    form = {**slot.form(), **change}
    if field == "appointment":
        form["appointment"] = str(slot.appointment_id)
    body = assert_error(await join(client, patient, form), 422, "FIELDS_VALIDATION_ERROR")
    assert field in body["fields"]
    async with runtime.db.read() as s:
        assert (await s.scalars(select(WaitlistEntry))).all() == []


async def test_the_same_wish_twice_and_more_than_five_are_refused(client, login, demo, runtime):
    patient = await login("patient1")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    assert (await join(client, patient, slot.form())).status_code == 200
    assert_error(await join(client, patient, slot.form()), 422, "FIELDS_VALIDATION_ERROR")
    for service in ("follow-up", "teledermatology"):
        assert (await join(client, patient, slot.form(service=service))).status_code == 200
    for doctor in ("any",):
        assert (await join(client, patient, slot.form(doctor=doctor))).status_code == 200
    assert (await join(client, patient, slot.form(doctor="any", service="follow-up"))).status_code == 200
    body = assert_error(
        await join(client, patient, slot.form(doctor="any", service="teledermatology")), 422, "FIELDS_VALIDATION_ERROR"
    )
    assert "at most 5" in body["message"]


async def test_only_patients_have_a_waitlist(client, login, demo, runtime):
    doctor = await login("doctor1")
    assert_error(await client.put(WAITLIST, headers=doctor.headers), 404, "NOT_FOUND")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    assert_error(await join(client, doctor, slot.form()), 404, "NOT_FOUND")


async def test_a_cancelled_time_is_offered_to_the_first_waiting_then_to_the_next_when_it_lapses(
    client, login, demo, runtime, clock
):
    first, second, owner = await login("patient1"), await login("patient3"), await login("patient4")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    assert (await join(client, first, slot.form())).status_code == 200
    clock.advance(timedelta(seconds=1))
    assert (await join(client, second, slot.form())).status_code == 200
    assert (await run_round(runtime)).offered == 0  # the time is still taken
    events = Events(runtime)
    await cancel(client, owner, slot.appointment_id)
    done = await run_round(runtime)
    assert done.offered == 1
    p1, p3 = demo.patients["patient1"], demo.patients["patient3"]
    assert await offers(runtime) == [(p1, "open", slot.start)]
    offered = [e for e in events.seen if e.kind == "waitlist.offered"]
    assert offered and offered[0].notify_user_ids == (first.user["id"],)  # push, and live on the patient's topics
    page = (await client.put(WAITLIST, headers=first.headers)).json()
    (offer_id,) = await offer_ids(runtime, p1)
    assert f"accept-{offer_id}" in ids(page)
    clock.advance(timedelta(minutes=31))  # the offer minutes (30) run out
    done = await run_round(runtime)
    assert done.expired == 1 and done.offered == 1
    assert await offers(runtime) == [(p1, "expired", slot.start), (p3, "open", slot.start)]


async def test_a_declined_offer_goes_to_the_next(client, login, demo, runtime, clock):
    first, second, owner = await login("patient1"), await login("patient3"), await login("patient4")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    await join(client, first, slot.form())
    clock.advance(timedelta(seconds=1))
    await join(client, second, slot.form())
    await cancel(client, owner, slot.appointment_id)
    await run_round(runtime)
    (offer_id,) = await offer_ids(runtime, demo.patients["patient1"])
    response = await client.post(f"{WAITLIST}/offers/{offer_id}/decline", headers=first.headers)
    assert response.status_code == 200, response.text
    await run_round(runtime)
    assert [(p, s) for p, s, _ in await offers(runtime)] == [
        (demo.patients["patient1"], "declined"),
        (demo.patients["patient3"], "open"),
    ]


async def test_all_at_once_offers_everyone_and_the_first_to_accept_wins(client, login, demo, runtime):
    # The clinic's setting (the Clinic screen's JSON twin), over the server's default.
    chosen = await client.put(
        "/admin/clinic", headers=(await login("admin")).headers, json={"waitlist_mode": "all-at-once"}
    )
    assert chosen.status_code == 200, chosen.text
    first, second, owner = await login("patient1"), await login("patient5"), await login("patient4")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    await join(client, first, slot.form())
    await join(client, second, slot.form())
    await cancel(client, owner, slot.appointment_id)
    assert (await run_round(runtime)).offered == 2
    (late,) = await offer_ids(runtime, demo.patients["patient1"])
    (early,) = await offer_ids(runtime, demo.patients["patient5"])
    events = Events(runtime)
    won = await client.post(f"{WAITLIST}/offers/{early}/accept", headers=second.headers)
    assert won.status_code == 200, won.text
    assert won.json()["navigate"] == "/profile/appointments"
    # The other is told at once: live on their screens, a notice, and a push (the offer reached their phone too).
    [gone] = [e for e in events.seen if e.kind == "waitlist.gone"]
    assert gone.data["offer_id"] == late and gone.notify_user_ids == (first.user["id"],)
    assert gone.notify_text is not None and "was taken by another patient" in gone.notify_text
    lost = await client.post(f"{WAITLIST}/offers/{late}/accept", headers=first.headers)
    assert_error(lost, 409, "APPOINTMENT_CHANGED")
    assert sorted((p, s) for p, s, _ in await offers(runtime)) == sorted(
        [(demo.patients["patient1"], "gone"), (demo.patients["patient5"], "accepted")]
    )
    async with runtime.db.read() as s:
        requests = (
            await s.scalars(
                select(Appointment).where(Appointment.start_at == slot.start, Appointment.status == Status.REQUESTED)
            )
        ).all()
    assert [a.patient_id for a in requests] == [demo.patients["patient5"]]


async def test_another_patients_entry_and_offer_are_not_found(client, login, demo, runtime):
    owner, other, holder = await login("patient1"), await login("patient3"), await login("patient4")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    await join(client, owner, slot.form())
    await cancel(client, holder, slot.appointment_id)
    await run_round(runtime)
    (offer_id,) = await offer_ids(runtime, demo.patients["patient1"])
    async with runtime.db.read() as s:
        entry_id = (await s.scalars(select(WaitlistEntry.id))).one()
    assert_error(await client.post(f"{WAITLIST}/{entry_id}/leave", headers=other.headers), 404, "NOT_FOUND")
    for action in ("accept", "decline"):
        response = await client.post(f"{WAITLIST}/offers/{offer_id}/{action}", headers=other.headers)
        assert_error(response, 404, "NOT_FOUND")
    assert [s for _, s, _ in await offers(runtime)] == ["open"]


async def test_a_direct_move_moves_the_approved_appointment_when_the_clinic_allows_it(client, login, demo, runtime):
    set_policy(runtime, waitlist_direct_move=True)
    patient, owner = await login("patient1"), await login("patient4")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    held = aid(demo, 7)  # patient1's approved visit with Dr. Berger (Munich), later than the freed time
    async with runtime.db.read() as s:
        a = await s.get(Appointment, held)
        later, service = a.start_at, a.service
    assert later > slot.start and a.doctor_id == slot.doctor_id
    form = slot.form(appointment=str(held), service=service)
    response = await join(client, patient, form)
    assert response.status_code == 200, response.text
    await cancel(client, owner, slot.appointment_id)
    await run_round(runtime)
    (offer_id,) = await offer_ids(runtime, demo.patients["patient1"])
    answer = await client.post(f"{WAITLIST}/offers/{offer_id}/accept", headers=patient.headers)
    assert answer.status_code == 200, answer.text
    assert answer.json()["notice"]["text"].startswith("Your appointment is moved to")
    async with runtime.db.read() as s:
        moved = await s.get(Appointment, held)
        history = (
            await s.scalars(
                select(AppointmentHistory)
                .where(AppointmentHistory.appointment_id == held)
                .order_by(AppointmentHistory.id.desc())
            )
        ).first()
    assert (moved.start_at, moved.location_id, moved.status, moved.version) == (
        slot.start,
        slot.location_id,
        Status.APPROVED,
        2,
    )
    assert history.details["action"] == "waitlist-move" and history.actor_id == patient.user["id"]


async def test_without_direct_moves_accepting_is_a_request_for_the_doctor(client, login, demo, runtime):
    patient, owner = await login("patient1"), await login("patient4")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    held = aid(demo, 7)
    async with runtime.db.read() as s:
        service = (await s.get(Appointment, held)).service
    await join(client, patient, slot.form(appointment=str(held), service=service))
    await cancel(client, owner, slot.appointment_id)
    await run_round(runtime)
    (offer_id,) = await offer_ids(runtime, demo.patients["patient1"])
    answer = await client.post(f"{WAITLIST}/offers/{offer_id}/accept", headers=patient.headers)
    assert answer.status_code == 200, answer.text
    async with runtime.db.read() as s:
        kept = await s.get(Appointment, held)
        new = (
            await s.scalars(
                select(Appointment).where(Appointment.start_at == slot.start, Appointment.status == Status.REQUESTED)
            )
        ).one()
    assert kept.version == 1 and new.patient_id == demo.patients["patient1"]
    # The doctor's Review and Approve says where the request came from; a booked request says nothing.
    doctor = await login("doctor1")
    review = (await client.put(f"/profile/appointments/{new.id}/approve", headers=doctor.headers)).json()
    assert ids(review)["from-waitlist"].get("visible", True) is True
    assert ids(review)["from-waitlist"]["value"] == "From the waitlist"
    booked = (await client.put(f"/profile/appointments/{aid(demo, 0)}/approve", headers=doctor.headers)).json()
    assert ids(booked)["from-waitlist"]["visible"] is False


async def test_admins_see_a_doctors_waitlist_in_order_and_others_do_not(client, login, demo, runtime, clock):
    first, second, admin = await login("patient1"), await login("patient3"), await login("admin")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    await join(client, first, slot.form())
    clock.advance(timedelta(seconds=1))
    await join(client, second, slot.form(doctor="any"))
    url = f"/profile/admin/waitlist?doctor={slot.doctor_id}"
    page = (await client.put(url, headers=admin.headers)).json()
    rows = [e["value"] for e in walk(page["elements"]) if e["id"].endswith("-who")]
    assert rows[0].startswith("1. Maria Schmidt") and rows[1].startswith("2. Emma Clarke")
    # Moments in the clinic's zone and days in the reader's words, as everywhere in the administration.
    day = slot.start.astimezone(ZoneInfo("Europe/Berlin")).date()
    since = [e["value"] for e in walk(page["elements"]) if e["id"].endswith("-since")]
    assert " CET, until " in since[0] and since[0].endswith(f"until {day:%d %b %Y}"), since
    german = (await client.put(url, headers={**admin.headers, "Accept-Language": "de"})).json()
    assert german["title"] == "Warteliste"
    seit = [e["value"] for e in walk(german["elements"]) if e["id"].endswith("-since")]
    assert seit[0].startswith("Wartet seit ") and " MEZ, bis " in seit[0], seit
    assert seit[0].endswith(f"bis {day.day}. Nov. {day.year}"), seit
    assert (await client.put(url, headers=first.headers)).status_code in (403, 404)


async def test_the_integration_api_lists_open_offers_to_a_key_that_may_read(client, login, demo, runtime):
    patient, owner, admin = await login("patient1"), await login("patient4"), await login("admin")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    await join(client, patient, slot.form())
    await cancel(client, owner, slot.appointment_id)
    await run_round(runtime)
    reader = await make_key(client, admin.headers, name="reader", scopes=["appointments:read"])
    writer = await make_key(client, admin.headers, name="writer", scopes=["appointments:write"])
    answer = await client.get("/integration/v1/waitlist-offers", headers=reader.headers)
    assert answer.status_code == 200, answer.text
    (offer,) = answer.json()["offers"]
    assert offer["patient_id"] == demo.patients["patient1"] and offer["doctor_id"] == slot.doctor_id
    assert offer["start"] == slot.start.astimezone(ZoneInfo("Europe/Berlin")).isoformat()
    assert answer.json()["mode"] == "one-at-a-time"
    assert_error(await client.get("/integration/v1/waitlist-offers", headers=writer.headers), 403, "FORBIDDEN")
