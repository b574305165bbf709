"""Insurance data edited by an admin drives the coverage rules of Review and Approve, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from tests.integration.admin.support import audit_rows, counts
from tests.support.errors import assert_error
from tests.support.review import REQUESTED, aid, approve_url, card


async def policy_of(client, headers, patient_id):
    [policy] = (await client.get(f"/admin/patients/{patient_id}/policies", headers=headers)).json()["policies"]
    return policy


async def decide(client, headers, appointment_id, **fields):
    return await client.post(approve_url(appointment_id), headers=headers, data={"version": "1", **fields})


async def test_policy_edits_drive_the_coverage_rules_and_are_audited(client, login, demo, runtime):
    admin, doctor = await login("admin"), await login("doctor1")
    a = aid(demo, REQUESTED)
    patient = demo.patients["patient1"]
    policy = await policy_of(client, admin.headers, patient)
    assert policy["third_party_status"] == "valid"
    url = f"/admin/policies/{policy['id']}"

    ended = await client.post(url, json={"valid_from": "2020-01-01", "valid_to": "2021-01-01"}, headers=admin.headers)
    assert ended.status_code == 200, ended.text
    assert_error(await decide(client, doctor.headers, a), 422, "APPOINTMENT_DATE_NOT_COVERED")
    await client.post(url, json={"valid_to": "2030-01-01"}, headers=admin.headers)

    doctor_id = demo.users["doctor1"]
    await client.post(url, json={"exclusions": {"doctors": [doctor_id]}}, headers=admin.headers)
    assert_error(await decide(client, doctor.headers, a), 422, "FORBIDDEN_DUE_TO_POLICY_TERMS")
    await client.post(url, json={"exclusions": {"doctors": []}}, headers=admin.headers)

    broken = await client.post(url, json={"third_party_data": '{"member_id": '}, headers=admin.headers)
    assert broken.json()["third_party_status"] != "valid"
    assert_error(await decide(client, doctor.headers, a), 422, "THIRD_PARTY_DATA_INVALID")
    unchanged = (await client.get(f"/api/appointments/{a}", headers=doctor.headers)).json()
    assert unchanged["status"]["code"] == 1 and unchanged["version"] == 1  # refusals wrote nothing
    await client.post(url, json={"third_party_data": policy["third_party_data"]}, headers=admin.headers)

    other = demo.users["doctor2"]
    network = {"network": {"doctors": [other], "locations": []}}
    assert (await client.post(url, json=network, headers=admin.headers)).json()["network"]["doctors"] == [other]
    berlin = demo.locations["berlin"]
    sent = await decide(client, doctor.headers, a, **card(1, doctor_id, berlin, "2026-12-01", "10:00"))
    assert sent.status_code < 400, sent.text
    view = (await client.get(f"/api/appointments/{a}", headers=doctor.headers)).json()
    assert view["status"]["code"] == 9  # out of network: pending with coverage risk

    rows = await audit_rows(runtime, "admin.policy-updated")
    assert len(rows) == 7
    assert (
        rows[0].details["before"]["valid_to"] == policy["valid_to"]
        and rows[0].details["after"]["valid_to"] == "2021-01-01"
    )


async def test_a_new_policy_is_created_and_insurers_are_listed(client, login, demo, runtime):
    admin = await login("admin")
    patient = demo.patients["patient2"]
    body = {
        "insurer": "Nordic Health",
        "policy_number": "NH-1",
        "valid_from": "2026-01-01",
        "valid_to": "2027-12-31",
        "network": {"locations": [demo.locations["berlin"]]},
        "exclusions": {"services": ["teledermatology"]},
        "third_party_data": '{"member_id": "M-1", "plan": "basic", "status": "active"}',
    }
    created = await client.post(f"/admin/patients/{patient}/policies", json=body, headers=admin.headers)
    assert created.status_code == 201, created.text
    assert created.json()["third_party_status"] == "valid"
    insurers = (await client.get("/admin/insurers", headers=admin.headers)).json()["insurers"]
    assert {"name": "Nordic Health", "policies": 1} in insurers
    [row] = await audit_rows(runtime, "admin.policy-created")
    assert row.details["before"] is None and row.details["after"]["policy_number"] == "NH-1"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"insurer": "X", "policy_number": "1", "valid_from": "2026-02-01", "valid_to": "2026-01-01"}, "valid_to"),
        ({"insurer": "X", "policy_number": "1", "valid_from": "2026-01-01"}, "valid_to"),
        ({"insurer": "X", "policy_number": "1", "valid_from": "2026-01-01", "valid_to": "2026-13-01"}, "valid_to"),
        ({"insurer": "X", "policy_number": "1", "valid_from": "2026-01-01", "valid_to": "2027-01-01",
          "network": {"doctors": [99999]}}, "network.doctors"),
        ({"insurer": "X", "policy_number": "1", "valid_from": "2026-01-01", "valid_to": "2027-01-01",
          "network": {"locations": [99999]}}, "network.locations"),
        ({"insurer": "X", "policy_number": "1", "valid_from": "2026-01-01", "valid_to": "2027-01-01",
          "network": {"doctors": [1], "rooms": []}}, "network.rooms"),
        ({"insurer": "X", "policy_number": "1", "valid_from": "2026-01-01", "valid_to": "2027-01-01", "x": 1}, "x"),
    ],
)  # fmt: skip
async def test_invalid_policies_are_refused_naming_the_field_and_write_nothing(
    client, login, demo, runtime, body, field
):
    admin = await login("admin")
    before = await counts(runtime)
    response = await client.post(
        f"/admin/patients/{demo.patients['patient2']}/policies", json=body, headers=admin.headers
    )
    assert field in assert_error(response, 422, "FIELDS_VALIDATION_ERROR")["fields"]
    assert await counts(runtime) == before


async def test_policies_of_unknown_patients_are_404_and_doctors_are_refused(client, login):
    admin, doctor = await login("admin"), await login("doctor1")
    assert_error(await client.get("/admin/patients/99999/policies", headers=admin.headers), 404, "NOT_FOUND")
    assert_error(await client.get("/admin/insurers", headers=doctor.headers), 403, "FORBIDDEN")
