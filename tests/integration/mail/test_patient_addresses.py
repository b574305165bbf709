"""A patient's email address through the administration (API and screen): set at creation, changed, cleared,
refused with the field's error when it is no address (nothing written), only for patients; the demo patients have
``patientN@example.org``."""

from __future__ import annotations

from sqlalchemy import select

from doctordesk.store.tables import Patient


async def test_the_demo_patients_have_their_example_addresses(client, login, demo, runtime):
    async with runtime.db.read() as s:
        addresses = set((await s.scalars(select(Patient.email).where(Patient.user_id.is_not(None)))).all())
    assert {f"patient{n}@example.org" for n in range(1, 6)} <= addresses


async def test_an_admin_creates_a_patient_with_an_address_and_changes_and_clears_it(client, login, demo):
    admin = await login("admin")
    created = await client.post(
        "/admin/users",
        headers=admin.headers,
        json={"username": "lena", "role": "patient", "display_name": "Lena Vogel", "email": " Lena@Example.ORG "},
    )
    assert created.status_code == 201, created.text
    user = created.json()["user"]
    assert user["email"] == "Lena@example.org"  # trimmed, the domain lowercased
    changed = await client.post(f"/admin/patients/{user['id']}", headers=admin.headers, json={"email": "l@vogel.de"})
    assert changed.status_code == 200 and changed.json()["email"] == "l@vogel.de"
    cleared = await client.post(f"/admin/patients/{user['id']}", headers=admin.headers, json={"email": ""})
    assert cleared.status_code == 200 and cleared.json()["email"] is None


async def test_an_address_that_is_none_is_refused_with_the_fields_error_and_nothing_written(client, login, demo):
    admin = await login("admin")
    patient = demo.users["patient1"]
    refused = await client.post(f"/admin/patients/{patient}", headers=admin.headers, json={"email": "anna@@x"})
    assert refused.status_code == 422
    assert refused.json()["fields"]["email"] == "Enter an email address such as name@example.org."
    german = await client.post(
        f"/admin/patients/{patient}", headers={**admin.headers, "Accept-Language": "de"}, json={"email": "a@b"}
    )
    assert german.json()["fields"]["email"] == "Geben Sie eine E-Mail-Adresse wie name@example.org ein."
    after = await client.get(f"/admin/users/{patient}", headers=admin.headers)
    assert after.json()["email"] == "patient1@example.org"


async def test_only_patients_have_an_address(client, login, demo):
    admin = await login("admin")
    doctor = demo.users["doctor1"]
    assert (
        await client.post(f"/admin/patients/{doctor}", headers=admin.headers, json={"email": "d@x.de"})
    ).status_code == 404
    created = await client.post(
        "/admin/users",
        headers=admin.headers,
        json={"username": "otto", "role": "support", "display_name": "Otto", "email": "otto@example.org"},
    )
    assert created.status_code == 422 and created.json()["fields"]["email"] == "Only for patients."


async def test_a_patient_cannot_set_addresses(client, login, demo):
    patient = await login("patient1")
    response = await client.post(
        f"/admin/patients/{demo.users['patient1']}", headers=patient.headers, json={"email": "me@example.org"}
    )
    assert response.status_code == 403


async def test_the_patients_page_shows_the_address_and_saving_a_wrong_one_names_the_field(client, login, demo):
    admin = await login("admin")
    patient = demo.users["patient1"]
    page = await client.put(f"/profile/admin/users/{patient}", headers=admin.headers)
    assert page.status_code == 200, page.text
    [field] = [e for e in walk(page.json()["elements"]) if e.get("id") == "email"]
    assert field["value"] == "patient1@example.org"
    saved = await client.post(
        f"/profile/admin/users/{patient}/save",
        headers=admin.headers,
        data={"display_name": "Maria Schmidt", "email": "not-an-address"},
    )
    assert saved.status_code == 422
    assert "email" in saved.json()["fields"]


def walk(elements):
    for e in elements:
        yield e
        yield from walk(e.get("children") or [])
