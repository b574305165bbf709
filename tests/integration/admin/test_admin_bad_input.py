"""Input storage cannot hold, or out of range, is a validation error naming the field: never a 500, nothing
written. On SQLite and PostgreSQL (which refuses NUL in text)."""

from __future__ import annotations

from tests.integration.admin.support import counts
from tests.support.errors import assert_error


async def test_control_characters_and_nul_are_refused_naming_the_field(client, login, demo, runtime):
    admin = await login("admin")
    before = await counts(runtime)
    patient = demo.patients["patient1"]
    policies = f"/admin/patients/{patient}/policies"
    policy = {"insurer": "X", "policy_number": "1", "valid_from": "2026-01-01", "valid_to": "2027-01-01"}
    new_admin = {"username": "ok", "role": "admin", "display_name": "A"}
    cases = [
        ("post", "/admin/users", {**new_admin, "display_name": "A\x00B"}, "display_name"),
        ("post", "/admin/users", {**new_admin, "password": "abc\x00defgh"}, "password"),
        ("post", "/admin/locations", {"name": "L\x07", "timezone": "Europe/Berlin"}, "name"),
        ("post", f"/admin/doctors/{demo.users['doctor1']}", {"specialty": "Skin\x00"}, "specialty"),
        ("post", policies, {**policy, "third_party_data": "{\x00}"}, "third_party_data"),
        ("post", policies, {**policy, "exclusions": {"services": ["a\x00"]}}, "exclusions.services"),
        ("post", f"/admin/doctors/{demo.users['doctor1']}/hours-exceptions",
         {"day": "2027-01-04", "kind": "holiday", "note": "\x00"}, "note"),
    ]  # fmt: skip
    for method, url, body, field in cases:
        response = await getattr(client, method)(url, json=body, headers=admin.headers)
        assert field in assert_error(response, 422, "FIELDS_VALIDATION_ERROR")["fields"], (url, response.text)
    assert await counts(runtime) == before


async def test_out_of_range_instants_and_control_characters_in_filters_are_422(client, login):
    admin = await login("admin")
    for path, params, field in [
        ("/admin/audit", {"from": "0001-01-01T00:00:00+14:00"}, "from"),
        ("/admin/audit", {"to": "9999-12-31T23:59:59-14:00"}, "to"),
        ("/admin/audit", {"action": "a\x00b"}, "action"),
        ("/admin/audit/export", {"entity": "\x00"}, "entity"),
        ("/admin/fees", {"at": "0001-01-01T00:00:00+05:00"}, "at"),
    ]:
        response = await client.get(path, params=params, headers=admin.headers)
        assert field in assert_error(response, 422, "FIELDS_VALIDATION_ERROR")["fields"], response.text
    far = {"kind": "doctor_fee", "amount_cents": 1, "effective_from": "9999-12-31T23:59:59-14:00"}
    response = await client.post("/admin/fees", json=far, headers=admin.headers)
    assert "effective_from" in assert_error(response, 422, "FIELDS_VALIDATION_ERROR")["fields"]


async def test_huge_numbers_are_refused_not_sent_to_the_database(client, login, demo):
    admin = await login("admin")
    for url, body, field in [
        ("/admin/fees", {"kind": "doctor_fee", "amount_cents": 10**30}, "amount_cents"),
        ("/admin/fees", {"kind": "weekend", "percent": 10**30}, "percent"),
        ("/admin/fees", {"kind": "doctor_fee", "amount_cents": 1, "doctor_id": 10**30}, "doctor_id"),
    ]:
        response = await client.post(url, json=body, headers=admin.headers)
        assert field in assert_error(response, 422, "FIELDS_VALIDATION_ERROR")["fields"], response.text
