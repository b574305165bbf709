"""Waitlist entries on FHIR (docs/fhir.md, docs/waitlist.md), on SQLite and PostgreSQL: ``Appointment/waitlist-{id}``
is an R4 Appointment with status ``waitlist`` (valid with fhir.resources), readable by the patient, the doctor it
names, admins and a key that may read appointments, and 404 for anyone else; left, it is ``cancelled``."""

from __future__ import annotations

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
