"""Waitlist entries on FHIR (docs/fhir.md, docs/waitlist.md), on SQLite and PostgreSQL: ``Appointment/waitlist-{id}``
is an R4 Appointment with status ``waitlist`` (valid with fhir.resources), readable by the patient, the doctor it
names, admins and a key that may read appointments, and 404 for anyone else; left, it is ``cancelled``."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from sqlalchemy import select

from doctordesk.store.waitlist.tables import WaitlistEntry
from tests.integration.waitlist.support import APPROVED_TUESDAY, join, slot_of
from tests.support.fhir_models import validate
from tests.support.integration import make_key
from tests.support.review import aid


@pytest.fixture
def settings(database_url, settings_factory):
    return settings_factory(database_url, waitlist_in_process=False)


async def test_a_waitlist_entry_is_an_appointment_with_status_waitlist_for_those_who_may_see_it(
    client, login, demo, runtime
):
    patient, doctor, other_doctor = await login("patient1"), await login("doctor1"), await login("doctor2")
    other_patient, admin = await login("patient3"), await login("admin")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    assert (await join(client, patient, slot.form())).status_code == 200
    async with runtime.db.read() as s:
        entry_id = (await s.scalars(select(WaitlistEntry.id))).one()
    url = f"/fhir/Appointment/waitlist-{entry_id}"
    reader = await make_key(client, admin.headers, name="reader", scopes=["appointments:read"])
    writer = await make_key(client, admin.headers, name="writer", scopes=["appointments:write"])
    for who in (patient, doctor, admin, reader):
        response = await client.get(url, headers=who.headers)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("application/fhir+json")
    body = (await client.get(url, headers=patient.headers)).json()
    validate(body)
    assert body["id"] == f"waitlist-{entry_id}" and body["status"] == "waitlist"
    actors = [p["actor"]["reference"] for p in body["participant"]]
    assert actors == [
        f"Patient/{demo.patients['patient1']}",
        f"Practitioner/{slot.doctor_id}",
        f"Location/{slot.location_id}",
    ]
    assert body["requestedPeriod"][0]["end"].startswith("2026-11-24T23:59:59")
    for who in (other_patient, other_doctor, writer):
        assert (await client.get(url, headers=who.headers)).status_code == 404
    assert (await client.get("/fhir/Appointment/waitlist-0999", headers=admin.headers)).status_code == 404
    left = await client.post(f"/profile/waitlist/{entry_id}/leave", headers=patient.headers)
    assert left.status_code == 200, left.text
    ended = (await client.get(url, headers=patient.headers)).json()
    validate(ended)
    assert ended["status"] == "cancelled" and ended["meta"]["versionId"] == "2"


def _next(bundle: dict) -> str | None:
    return next((link["url"] for link in bundle["link"] if link["relation"] == "next"), None)


async def _search(client, who, query: str) -> dict:
    response = await client.get(f"/fhir/Appointment?{query}", headers=who.headers)
    assert response.status_code == 200, response.text
    bundle = response.json()
    validate(bundle)  # a searchset Bundle with its Appointments, valid R4
    return bundle


def _listed(bundle: dict) -> list[str]:
    return [e["resource"]["id"] for e in bundle.get("entry", []) if e["search"]["mode"] == "match"]


async def test_a_search_for_status_waitlist_lists_the_entries_to_those_who_may_read_them(
    client, login, demo, runtime, clock
):
    first, second = await login("patient1"), await login("patient3")
    doctor, other_doctor, admin = await login("doctor1"), await login("doctor2"), await login("admin")
    slot = await slot_of(runtime, aid(demo, APPROVED_TUESDAY))
    for who, form in (
        (first, slot.form()),
        (second, slot.form(doctor="any")),
        (first, slot.form(service="follow-up")),
    ):
        clock.advance(timedelta(seconds=1))
        assert (await join(client, who, form)).status_code == 200
    async with runtime.db.read() as s:
        ids = [f"waitlist-{i}" for i in (await s.scalars(select(WaitlistEntry.id).order_by(WaitlistEntry.id))).all()]

    page = await _search(client, admin, "status=waitlist&_count=2")
    assert _listed(page) == ids[:2]
    assert all(e["resource"]["status"] == "waitlist" for e in page["entry"])
    link = urlsplit(_next(page))
    rest = (await client.get(f"{link.path}?{link.query}", headers=admin.headers)).json()
    validate(rest)
    assert _listed(rest) == ids[2:] and _next(rest) is None  # keyset: nothing repeated, nothing skipped

    assert _listed(await _search(client, second, "status=waitlist")) == [ids[1]]  # a patient: their own
    assert _listed(await _search(client, doctor, "status=waitlist")) == [ids[0], ids[2]]  # entries naming them
    assert _listed(await _search(client, other_doctor, "status=waitlist")) == []
    p1 = demo.patients["patient1"]
    assert _listed(await _search(client, admin, f"status=waitlist&patient=Patient/{p1}")) == [ids[0], ids[2]]
    named = await _search(client, admin, f"status=waitlist&practitioner=Practitioner/{slot.doctor_id}")
    assert _listed(named) == [ids[0], ids[2]]  # "any doctor" names no practitioner
    assert _listed(await _search(client, admin, f"status=waitlist&location=Location/{slot.location_id}")) == ids

    # Any other search lists appointments only, as before (docs/fhir.md#waitlist-entries).
    for query in ("", "status=booked", "status=booked,waitlist", f"patient=Patient/{p1}"):
        listed = _listed(await _search(client, admin, query))
        assert listed and not any(i.startswith("waitlist-") for i in listed), query

    left = await client.post(f"/profile/waitlist/{ids[0].removeprefix('waitlist-')}/leave", headers=first.headers)
    assert left.status_code == 200, left.text
    assert _listed(await _search(client, admin, "status=waitlist")) == ids[1:]  # ended entries are not waiting


async def test_a_waitlist_search_refuses_bad_values_as_every_search_does(client, login, demo):
    admin = await login("admin")
    for query, field in (("status=waitlist&patient=Location/1", "patient"), ("status=waitlist&_cursor=xyz", "_cursor")):
        waitlist = await client.get(f"/fhir/Appointment?{query}", headers=admin.headers)
        appointments = await client.get(
            f"/fhir/Appointment?{query.replace('waitlist', 'booked')}", headers=admin.headers
        )
        assert waitlist.status_code == appointments.status_code == 400, (query, waitlist.text)
        validate(waitlist.json())
        assert field in waitlist.text
