"""One rule for every name (domain/names.py), through every way a name comes in, on SQLite and PostgreSQL: a
bidirectional control or another invisible character is refused with FIELDS_VALIDATION_ERROR naming the field
and nothing is written; names in any script, with the joiners they need, are accepted; chat messages, free text,
keep bidirectional controls."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.roles import Role
from doctordesk.services.admin import command_line
from doctordesk.store.integration_tables import ServiceAccount
from doctordesk.store.tables import Appointment, AuditLog, InsurancePolicy, Location, User
from tests.support.chat import send, stored
from tests.support.errors import assert_error
from tests.support.fhir import FHIR_JSON, assert_outcome
from tests.support.integration import make_key, request_body

# U+202E (right-to-left override), U+2067 (right-to-left isolate), U+200B (zero-width space), U+3164 (a filler).
SNEAKY = ["Dr. A\u202eregreB", "Praxis \u2067Nord", "Ber\u200bger", "\u3164"]
# Names that show nothing though no character in them is refused: the Braille blank, joiners, an ideographic space.
BLANK = ["\u2800", "\u200d", "\u200c\u200d", "\u3000\u2800", " \u200d "]
NOTHING_SHOWN = "Shows no visible character: give a letter, digit or sign."


async def written(runtime) -> tuple[int, ...]:
    async with runtime.db.read() as s:
        return tuple(
            [
                int(await s.scalar(select(func.count()).select_from(t)) or 0)
                for t in (User, Location, InsurancePolicy, ServiceAccount, Appointment, AuditLog)
            ]
        )


@pytest.mark.parametrize("name", SNEAKY + BLANK)
async def test_every_admin_api_name_field_refuses_invisible_characters_and_writes_nothing(
    client, login, demo, runtime, name
):
    admin = await login("admin")
    patient, doctor = demo.patients["patient1"], demo.users["doctor1"]
    policy = {"insurer": "AOK", "policy_number": "1", "valid_from": "2026-01-01", "valid_to": "2027-01-01"}
    account = await client.post("/admin/service-accounts", headers=admin.headers, json={"name": "ok"})
    policy_id = (await client.post(f"/admin/patients/{patient}/policies", json=policy, headers=admin.headers)).json()
    before = await written(runtime)
    cases = [
        ("/admin/users", {"username": "new", "role": "admin", "display_name": name}, "display_name"),
        (f"/admin/users/{demo.users['support1']}", {"display_name": name}, "display_name"),
        (f"/admin/doctors/{doctor}", {"display_name": name}, "display_name"),
        (f"/admin/doctors/{doctor}", {"specialty": name}, "specialty"),
        ("/admin/locations", {"name": name, "timezone": "Europe/Berlin"}, "name"),
        ("/admin/locations", {"name": "Nord", "address": name, "timezone": "Europe/Berlin"}, "address"),
        (f"/admin/locations/{demo.locations['berlin']}", {"name": name}, "name"),
        (f"/admin/patients/{patient}/policies", {**policy, "insurer": name}, "insurer"),
        (f"/admin/patients/{patient}/policies", {**policy, "policy_number": name}, "policy_number"),
        (f"/admin/patients/{patient}/policies", {**policy, "exclusions": {"services": [name]}}, "exclusions.services"),
        (f"/admin/policies/{policy_id['id']}", {"insurer": name}, "insurer"),
        ("/admin/service-accounts", {"name": name}, "name"),
        (f"/admin/service-accounts/{account.json()['id']}/keys", {"scopes": ["appointments:read"], "label": name},
         "label"),
    ]  # fmt: skip
    for url, body, field in cases:
        response = await client.post(url, json=body, headers=admin.headers)
        assert field in assert_error(response, 422, "FIELDS_VALIDATION_ERROR")["fields"], (url, response.text)
    assert await written(runtime) == before


async def test_the_admin_screens_refuse_the_same_names(client, login, demo, runtime):
    admin = await login("admin")
    before = await written(runtime)
    page = (await client.put("/profile/admin/locations", headers=admin.headers)).json()
    state = {**admin.headers, "X-Screen-State": page["state"]}
    location = {"name": SNEAKY[0], "address": "", "timezone": "Europe/Berlin"}
    user = {"role": "admin", "username": "new", "display_name": SNEAKY[1], "password": ""}
    policy = {"patient": str(demo.patients["patient1"]), "insurer": SNEAKY[2], "policy_number": "1"}
    policy |= {"valid_from": "2026-01-01", "valid_to": "2027-01-01"}
    for url, form, field in [
        ("/profile/admin/locations/create", location, "name"),
        ("/profile/admin/users/create", user, "display_name"),
        ("/profile/admin/insurance/create", policy, "insurer"),
    ]:
        response = await client.post(url, headers=state, data=form)
        assert field in assert_error(response, 422, "FIELDS_VALIDATION_ERROR")["fields"], (url, response.text)
    assert await written(runtime) == before


async def test_the_integration_api_fhir_and_booking_refuse_an_invisible_service(client, login, demo, runtime):
    key = await make_key(client, (await login("admin")).headers)
    patient = await login("patient1")
    before = await written(runtime)
    response = await client.post(
        "/integration/v1/appointment-requests", headers=key.headers, json=request_body(demo, service=SNEAKY[0])
    )
    assert "service" in assert_error(response, 422, "FIELDS_VALIDATION_ERROR")["fields"]
    fhir = {
        "resourceType": "Appointment",
        "status": "proposed",
        "serviceType": [{"text": "consul\u202etation"}],
        "start": request_body(demo)["start"],
        "minutesDuration": 30,
        "participant": [
            {"actor": {"reference": f"Patient/{demo.patients['patient1']}"}, "status": "accepted"},
            {"actor": {"reference": f"Practitioner/{demo.users['doctor1']}"}, "status": "needs-action"},
            {"actor": {"reference": f"Location/{demo.locations['berlin']}"}, "status": "needs-action"},
        ],
    }
    response = await client.post(
        "/fhir/Appointment", content=json.dumps(fhir), headers={**key.headers, "Content-Type": FHIR_JSON}
    )
    assert response.status_code in (400, 422), response.text
    assert_outcome(response, response.status_code, "FIELDS_VALIDATION_ERROR", expression="Appointment.serviceType")
    booked = await client.post(
        "/profile/book/request",
        headers=patient.headers,
        data={
            "doctor": str(demo.users["doctor1"]),
            "location": str(demo.locations["berlin"]),
            "service": "consultation\u202e",
            "start": request_body(demo)["start"],
        },
    )
    assert "service" in assert_error(booked, 422, "FIELDS_VALIDATION_ERROR")["fields"]
    assert await written(runtime) == before


async def test_the_command_lines_create_user_refuses_an_invisible_display_name(runtime):
    with pytest.raises(ValidationFailed) as refused:
        await command_line.create_user(
            runtime, username="x", role=Role.PATIENT, display_name=SNEAKY[0], password="secret"
        )
    assert "display_name" in refused.value.fields


@pytest.mark.parametrize("name", BLANK)
async def test_a_name_that_shows_nothing_gets_one_message_through_every_way_in(client, login, demo, runtime, name):
    admin = await login("admin")
    before = await written(runtime)
    for url, body, field in [
        ("/admin/users", {"username": "new", "role": "admin", "display_name": name}, "display_name"),
        (f"/admin/users/{demo.users['support1']}", {"display_name": name}, "display_name"),
        ("/admin/service-accounts", {"name": name}, "name"),
    ]:
        response = await client.post(url, json=body, headers=admin.headers)
        assert assert_error(response, 422, "FIELDS_VALIDATION_ERROR")["fields"][field] == NOTHING_SHOWN, url
    with pytest.raises(ValidationFailed) as refused:
        await command_line.create_user(runtime, username="x", role=Role.PATIENT, display_name=name, password="secret")
    assert refused.value.fields["display_name"] == NOTHING_SHOWN
    assert await written(runtime) == before


async def test_names_in_any_script_with_their_joiners_are_accepted_and_stored_as_given(client, login, runtime):
    admin = await login("admin")
    for name in ["محمد\u200cرضا", "ד״ר כהן", "Zoë 李", "👩\u200d⚕️ Praxis"]:
        response = await client.post(
            "/admin/locations", json={"name": name, "timezone": "Europe/Berlin"}, headers=admin.headers
        )
        assert response.status_code == 201 and response.json()["name"] == name, response.text


async def test_a_chat_message_is_free_text_and_keeps_its_bidirectional_controls(client, login, demo, runtime):
    doctor = await login("doctor1")
    content = "Die Dosis: \u2067٢ حبة\u2069 täglich \u202eok"
    response = await send(client, doctor, demo.appointments[0], content)
    assert response.status_code == 200, response.text
    assert (await stored(runtime))[0] == 1
