"""Administration of users, doctor profiles and locations, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from tests.integration.admin.support import audit_rows, changed, counts
from tests.support.errors import assert_error


@pytest.mark.parametrize("who", ["doctor1", "support1", "patient1"])
async def test_non_admins_are_refused_administration_with_403_and_nothing_is_written(client, login, runtime, who):
    me = await login(who)
    before = await counts(runtime)
    assert_error(await client.get("/admin/users", headers=me.headers), 403, "FORBIDDEN")
    assert_error(await client.get("/admin/audit", headers=me.headers), 403, "FORBIDDEN")
    new = {"username": "x1", "role": "admin", "display_name": "X"}
    assert_error(await client.post("/admin/users", json=new, headers=me.headers), 403, "FORBIDDEN")
    loc = {"name": "Y", "timezone": "Europe/Berlin"}
    assert_error(await client.post("/admin/locations", json=loc, headers=me.headers), 403, "FORBIDDEN")
    assert await counts(runtime) == before


async def test_administration_without_a_token_is_401(client, demo):
    assert_error(await client.get("/admin/users"), 401, "UNAUTHORIZED")
    assert_error(await client.get("/admin/audit/export"), 401, "UNAUTHORIZED")


async def test_a_created_users_generated_password_is_shown_once_and_logs_in(client, login, runtime):
    admin = await login("admin")
    body = {"username": "Dr.New", "role": "doctor", "display_name": "Dr. New", "timezone": "Europe/Vienna"}
    response = await client.post("/admin/users", json=body, headers=admin.headers)
    assert response.status_code == 201, response.text
    created = response.json()
    password = created["password"]
    assert password and len(password) >= 16
    user = created["user"]
    assert user["username"] == "dr.new" and user["role"] == "doctor" and user["active"] is True
    assert user["doctor"] == {
        "specialty": "General practice", "timezone": "Europe/Vienna", "can_prescribe": True, "chat_enabled": True
    }  # fmt: skip
    again = (await client.get(f"/admin/users/{user['id']}", headers=admin.headers)).json()
    assert "password" not in again and password not in str(again)
    assert (await login("dr.new", password)).user["role"] == "doctor"
    [row] = await audit_rows(runtime, "admin.user-created")
    before, after = changed(row)
    assert before is None and after["username"] == "dr.new" and "password" not in after
    assert row.actor_id == admin.user["id"] and row.entity == "user" and row.entity_id == user["id"]


async def test_a_patient_account_gets_a_patient_record(client, login):
    admin = await login("admin")
    body = {"username": "pat9", "role": "patient", "display_name": "Pat Nine", "password": "long-enough"}
    created = (await client.post("/admin/users", json=body, headers=admin.headers)).json()
    assert created["password"] is None and created["user"]["patient_id"] is not None
    assert (await login("pat9", "long-enough")).user["role"] == "patient"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"username": "a", "role": "doctor", "display_name": "A", "extra": 1}, "extra"),
        ({"username": "a", "role": "boss", "display_name": "A"}, "role"),
        ({"username": "bad name", "role": "admin", "display_name": "A"}, "username"),
        ({"username": "doctor1", "role": "admin", "display_name": "A"}, "username"),
        ({"username": "a", "role": "doctor", "display_name": "A", "timezone": "Mars/Base"}, "timezone"),
        ({"username": "a", "role": "support", "display_name": "A", "specialty": "x"}, "specialty"),
        ({"username": "a", "role": "admin", "display_name": "A", "password": "short"}, "password"),
        ({"username": "a", "role": "admin", "display_name": "   "}, "display_name"),
        ({"username": "a" * 65, "role": "admin", "display_name": "A"}, "username"),
    ],
)
async def test_invalid_user_input_is_refused_naming_the_field_and_writes_nothing(client, login, runtime, body, field):
    admin = await login("admin")
    before = await counts(runtime)
    error = assert_error(
        await client.post("/admin/users", json=body, headers=admin.headers), 422, "FIELDS_VALIDATION_ERROR"
    )
    assert field in error["fields"]
    assert await counts(runtime) == before


async def test_a_deactivated_users_token_answers_401_at_once_and_their_login_is_refused(client, login, runtime, demo):
    admin, doctor = await login("admin"), await login("doctor1")
    assert (await client.get("/auth/me", headers=doctor.headers)).status_code == 200  # now cached
    user_id = demo.users["doctor1"]
    response = await client.post(f"/admin/users/{user_id}/deactivate", headers=admin.headers)
    assert response.status_code == 200 and response.json()["active"] is False
    assert_error(await client.get("/auth/me", headers=doctor.headers), 401, "UNAUTHORIZED")
    assert_error(await client.get("/api/appointments", headers=doctor.headers), 401, "UNAUTHORIZED")
    refused = await client.post("/auth/login", data={"username": "doctor1", "password": "demo"})
    assert_error(refused, 401, "UNAUTHORIZED")
    [row] = await audit_rows(runtime, "admin.user-deactivated")
    before, after = changed(row)
    assert before["active"] is True and after["active"] is False
    assert (await client.post(f"/admin/users/{user_id}/reactivate", headers=admin.headers)).json()["active"] is True
    assert_error(await client.get("/auth/me", headers=doctor.headers), 401, "UNAUTHORIZED")  # old token stays dead
    assert (await login("doctor1")).user["id"] == user_id


async def test_deactivation_publishes_the_revocation_of_each_of_the_users_tokens(client, login, runtime, demo):
    admin, first, second = await login("admin"), await login("doctor2"), await login("doctor2")
    published = []

    async def spy(event):
        published.append(event)

    runtime.bus.subscribe(spy)
    await client.post(f"/admin/users/{demo.users['doctor2']}/deactivate", headers=admin.headers)
    revoked = {e.data["token_id"] for e in published if e.kind == "token-revoked"}
    assert len(revoked) == 2
    assert all(e.topics == (f"user:{demo.users['doctor2']}",) for e in published if e.kind == "token-revoked")
    del first, second


async def test_an_admin_cannot_deactivate_their_own_account(client, login, runtime):
    admin = await login("admin")
    before = await counts(runtime)
    error = await client.post(f"/admin/users/{admin.user['id']}/deactivate", headers=admin.headers)
    assert "active" in assert_error(error, 422, "FIELDS_VALIDATION_ERROR")["fields"]
    assert await counts(runtime) == before


async def test_a_password_reset_is_shown_once_revokes_tokens_and_the_old_password_stops(client, login, runtime, demo):
    admin, support = await login("admin"), await login("support1")
    response = await client.post(f"/admin/users/{demo.users['support1']}/password", json={}, headers=admin.headers)
    new_password = response.json()["password"]
    assert response.status_code == 200 and len(new_password) >= 16
    assert_error(await client.get("/auth/me", headers=support.headers), 401, "UNAUTHORIZED")
    assert_error(
        await client.post("/auth/login", data={"username": "support1", "password": "demo"}), 401, "UNAUTHORIZED"
    )
    await login("support1", new_password)
    chosen = {"password": "correct horse"}
    response = await client.post(f"/admin/users/{demo.users['support1']}/password", json=chosen, headers=admin.headers)
    assert response.json() == {"password": None}
    await login("support1", "correct horse")
    rows = await audit_rows(runtime, "admin.password-reset") + await audit_rows(runtime, "admin.password-set")
    assert len(rows) == 2 and all(new_password not in str(r.details) for r in rows)


async def test_unknown_users_are_404_and_bad_ids_422(client, login):
    admin = await login("admin")
    assert_error(await client.post("/admin/users/999999/deactivate", headers=admin.headers), 404, "NOT_FOUND")
    assert_error(await client.get("/admin/users/0", headers=admin.headers), 422, "FIELDS_VALIDATION_ERROR")
    assert_error(await client.get(f"/admin/users/{2**60}", headers=admin.headers), 422, "FIELDS_VALIDATION_ERROR")


async def test_users_list_pages_by_id_and_filters_by_role(client, login):
    admin = await login("admin")
    first = (await client.get("/admin/users?limit=2", headers=admin.headers)).json()
    assert len(first["users"]) == 2 and first["next"] == first["users"][-1]["id"]
    rest = (await client.get(f"/admin/users?after={first['next']}&limit=500", headers=admin.headers)).json()
    assert rest["next"] is None
    ids = [u["id"] for u in first["users"] + rest["users"]]
    assert ids == sorted(set(ids))
    doctors = (await client.get("/admin/users?role=doctor", headers=admin.headers)).json()["users"]
    assert doctors and {u["role"] for u in doctors} == {"doctor"}


async def test_a_doctor_profile_edit_is_audited_with_before_and_after(client, login, runtime, demo):
    admin = await login("admin")
    doctor_id = demo.users["doctor3"]
    was = (await client.get(f"/admin/users/{doctor_id}", headers=admin.headers)).json()["doctor"]["can_prescribe"]
    change = {
        "display_name": "Dr. Renamed",
        "specialty": "Dermatology",
        "can_prescribe": not was,
        "chat_enabled": False,
    }
    response = await client.post(f"/admin/doctors/{doctor_id}", json=change, headers=admin.headers)
    assert response.status_code == 200, response.text
    assert response.json()["doctor"]["chat_enabled"] is False
    [row] = await audit_rows(runtime, "admin.doctor-updated")
    before, after = changed(row)
    assert before["display_name"] != "Dr. Renamed" and after["display_name"] == "Dr. Renamed"
    assert before["doctor"]["can_prescribe"] is was and after["doctor"]["can_prescribe"] is (not was)
    assert after["doctor"]["specialty"] == "Dermatology"
    bad = await client.post(f"/admin/doctors/{doctor_id}", json={"timezone": "Nowhere"}, headers=admin.headers)
    assert "timezone" in assert_error(bad, 422, "FIELDS_VALIDATION_ERROR")["fields"]
    not_doctor = await client.post(f"/admin/doctors/{demo.users['support1']}", json={}, headers=admin.headers)
    assert_error(not_doctor, 404, "NOT_FOUND")


async def test_locations_are_created_and_edited_with_an_audit_and_bad_zones_refused(client, login, runtime):
    admin = await login("admin")
    before = await counts(runtime)
    bad = await client.post("/admin/locations", json={"name": "X", "timezone": "Utopia/City"}, headers=admin.headers)
    assert "timezone" in assert_error(bad, 422, "FIELDS_VALIDATION_ERROR")["fields"]
    extra = await client.post(
        "/admin/locations", json={"name": "X", "timezone": "Europe/Paris", "rooms": 3}, headers=admin.headers
    )
    assert "rooms" in assert_error(extra, 422, "FIELDS_VALIDATION_ERROR")["fields"]
    assert await counts(runtime) == before
    created = await client.post(
        "/admin/locations", json={"name": "Paris", "timezone": "Europe/Paris"}, headers=admin.headers
    )
    assert created.status_code == 201
    loc = created.json()
    edited = await client.post(f"/admin/locations/{loc['id']}", json={"address": "1 Rue X"}, headers=admin.headers)
    assert edited.json() == {**loc, "address": "1 Rue X"}
    names = [x["name"] for x in (await client.get("/admin/locations", headers=admin.headers)).json()["locations"]]
    assert "Paris" in names
    [row] = await audit_rows(runtime, "admin.location-updated")
    assert changed(row) == ({**loc}, {**loc, "address": "1 Rue X"})


async def test_the_list_shows_the_same_user_as_the_single_read(client, login, demo):
    admin = await login("admin")
    listed = {u["id"]: u for u in (await client.get("/admin/users?limit=500", headers=admin.headers)).json()["users"]}
    for name in ("doctor1", "patient1", "support1", "admin"):
        one = (await client.get(f"/admin/users/{demo.users[name]}", headers=admin.headers)).json()
        assert listed[demo.users[name]] == one


async def test_the_administration_api_is_described_in_openapi(client):
    paths = (await client.get("/openapi.json")).json()["paths"]
    for path in ("/admin/users", "/admin/audit", "/admin/audit/export", "/admin/fees", "/admin/insurers"):
        assert path in paths
    assert "administration" in paths["/admin/users"]["post"]["tags"]
    assert not [p for p, ops in paths.items() if p.startswith("/admin") and "patch" in ops]
