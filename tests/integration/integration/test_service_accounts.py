"""Service accounts and API keys, managed by admins; keys reach only the integration API (SQLite and PostgreSQL)."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from doctordesk.store.integration_tables import ApiKey, ServiceAccount
from doctordesk.store.tables import AuditLog
from tests.support.integration import make_key


async def count(runtime, table) -> int:
    async with runtime.db.read() as s:
        return int(await s.scalar(select(func.count()).select_from(table)) or 0)


async def test_an_admin_creates_an_account_and_a_key_that_is_shown_once_and_stored_hashed(client, login, runtime):
    admin = await login("admin")
    key = await make_key(client, admin.headers, name="portal")
    assert key.key.startswith("ddk_") and len(key.key) > 40
    listed = (await client.get("/admin/service-accounts", headers=admin.headers)).json()["service_accounts"]
    (account,) = listed
    assert account["name"] == "portal" and account["active"] is True
    (shown,) = account["keys"]
    assert "key" not in shown and shown["prefix"] == key.key[:12]
    assert shown["scopes"] == ["appointments:read", "appointments:write"]
    assert key.key not in str(listed)
    async with runtime.db.read() as s:
        row = await s.get(ApiKey, key.key_id)
    assert row.key_hash == hashlib.sha256(key.key.encode()).hexdigest()
    assert key.key not in (row.prefix, row.label, row.key_hash)
    async with runtime.db.read() as s:
        actions = set((await s.scalars(select(AuditLog.action))).all())
    assert {"service-account.create", "api-key.create"} <= actions


async def test_service_account_names_are_unique(client, login):
    admin = await login("admin")
    await make_key(client, admin.headers, name="booking")
    again = await client.post("/admin/service-accounts", headers=admin.headers, json={"name": "booking"})
    assert again.status_code == 422 and "name" in again.json()["fields"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"scopes": ["appointments:write"], "admin": True}, "admin"),
        ({"scopes": ["everything"]}, "scopes.0"),
        ({"scopes": []}, "scopes"),
        ({}, "scopes"),
        ({"scopes": ["appointments:read"], "label": "x" * 101}, "label"),
    ],
)
async def test_a_bad_key_request_is_refused_naming_the_field_and_writes_nothing(client, login, runtime, body, field):
    admin = await login("admin")
    account = (await client.post("/admin/service-accounts", headers=admin.headers, json={"name": "a"})).json()
    response = await client.post(f"/admin/service-accounts/{account['id']}/keys", headers=admin.headers, json=body)
    assert response.status_code == 422
    assert response.json()["code"] == "FIELDS_VALIDATION_ERROR" and field in response.json()["fields"]
    assert await count(runtime, ApiKey) == 0


async def test_unknown_fields_on_a_new_account_are_refused(client, login, runtime):
    admin = await login("admin")
    response = await client.post("/admin/service-accounts", headers=admin.headers, json={"name": "a", "role": "x"})
    assert response.status_code == 422 and "role" in response.json()["fields"]
    assert await count(runtime, ServiceAccount) == 0


@pytest.mark.parametrize("username", ["doctor1", "support1", "patient1"])
async def test_only_admins_manage_service_accounts(client, login, runtime, username):
    user = await login(username)
    assert (await client.get("/admin/service-accounts", headers=user.headers)).status_code == 403
    response = await client.post("/admin/service-accounts", headers=user.headers, json={"name": "mine"})
    assert response.status_code == 403 and response.json()["code"] == "FORBIDDEN"
    assert await count(runtime, ServiceAccount) == 0


async def test_an_api_key_cannot_manage_service_accounts(client, login):
    admin = await login("admin")
    key = await make_key(client, admin.headers)
    assert (await client.get("/admin/service-accounts", headers=key.headers)).status_code == 401


async def test_an_api_key_reaches_neither_the_screens_nor_the_read_api(client, login):
    admin = await login("admin")
    key = await make_key(client, admin.headers)
    for method, path in [
        ("PUT", "/profile/appointments"),
        ("PATCH", "/profile/appointments"),
        ("GET", "/api/appointments"),
        ("GET", "/profile/stream?client=integration-test"),
        ("PUT", "/profile/messages/user-chat"),
    ]:
        response = await client.request(method, path, headers=key.headers)
        assert response.status_code == 401, (path, response.text)
        assert response.json()["code"] == "UNAUTHORIZED"
    assert (await client.get("/api/appointments", headers={"X-Api-Key": key.key})).status_code == 401


@pytest.mark.parametrize("username", ["doctor1", "patient1", "support1", "admin"])
async def test_a_user_token_cannot_use_the_integration_api(client, login, demo, username):
    user = await login(username)
    a = demo.appointments[0]
    for response in [
        await client.get(f"/integration/v1/appointments/{a}", headers=user.headers),
        await client.post(f"/integration/v1/appointments/{a}/complete", headers=user.headers, json={}),
        await client.get(f"/integration/v1/appointments/{a}", headers={"X-Api-Key": user.token}),
    ]:
        assert response.status_code == 401 and response.json()["code"] == "UNAUTHORIZED"


async def test_a_revoked_key_is_refused_at_once_and_stays_listed(client, login, demo):
    admin = await login("admin")
    key = await make_key(client, admin.headers)
    url = f"/integration/v1/appointments/{demo.appointments[0]}"
    assert (await client.get(url, headers=key.headers)).status_code == 200
    revoked = await client.delete(f"/admin/service-accounts/{key.account_id}/keys/{key.key_id}", headers=admin.headers)
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
    response = await client.get(url, headers=key.headers)
    assert response.status_code == 401 and response.json()["code"] == "UNAUTHORIZED"
    account = (await client.get(f"/admin/service-accounts/{key.account_id}", headers=admin.headers)).json()
    assert account["keys"][0]["revoked_at"] == revoked.json()["revoked_at"]
    # Another key of the account keeps working.
    other = await make_key(client, admin.headers, account_id=key.account_id)
    assert (await client.get(url, headers=other.headers)).status_code == 200


async def test_revoking_a_key_of_another_account_is_not_found(client, login):
    admin = await login("admin")
    first = await make_key(client, admin.headers, name="one")
    second = await make_key(client, admin.headers, name="two")
    response = await client.delete(
        f"/admin/service-accounts/{second.account_id}/keys/{first.key_id}", headers=admin.headers
    )
    assert response.status_code == 404


async def test_last_use_is_recorded_at_most_once_a_minute(client, login, demo, runtime, clock):
    admin = await login("admin")
    key = await make_key(client, admin.headers)

    async def last_used():
        async with runtime.db.read() as s:
            return (await s.get(ApiKey, key.key_id)).last_used_at

    assert await last_used() is None
    url = f"/integration/v1/appointments/{demo.appointments[0]}"
    first = clock.now()
    assert (await client.get(url, headers={"X-Api-Key": key.key})).status_code == 200
    assert await last_used() == first
    clock.advance(timedelta(seconds=30))
    assert (await client.get(url, headers=key.headers)).status_code == 200
    assert await last_used() == first
    clock.advance(timedelta(seconds=31))
    assert (await client.get(url, headers=key.headers)).status_code == 200
    assert await last_used() == clock.now()


async def test_a_key_without_the_write_scope_cannot_create_requests(client, login, demo):
    admin = await login("admin")
    key = await make_key(client, admin.headers, scopes=["appointments:read"])
    response = await client.post(
        "/integration/v1/appointment-requests", headers=key.headers, json={"patient": 1, "doctor": 1, "location": 1}
    )
    # Scope is checked before the body's content: the key may not write at all.
    assert response.status_code in (403, 422)
    a = demo.appointments[6]
    refused = await client.post(f"/integration/v1/appointments/{a}/complete", headers=key.headers, json={})
    assert refused.status_code == 403 and "appointments:write" in refused.json()["message"]


async def test_unknown_or_malformed_keys_are_unauthorized(client, demo):
    url = f"/integration/v1/appointments/{demo.appointments[0]}"
    bad = [{}, {"Authorization": "Bearer ddk_nothing"}, {"X-Api-Key": "not-a-key"}, {"X-Api-Key": "ddk_" + "x" * 200}]
    for headers in bad:
        response = await client.get(url, headers=headers)
        assert response.status_code == 401 and response.json()["code"] == "UNAUTHORIZED"


async def test_a_deactivated_accounts_keys_are_refused_at_once_and_work_again_after_reactivation(
    client, login, runtime
):
    admin = await login("admin")
    key = await make_key(client, admin.headers, name="portal")
    url = f"/integration/v1/appointments/{1}"
    assert (await client.get(url, headers=key.headers)).status_code in (200, 404)
    off = await client.post(f"/admin/service-accounts/{key.account_id}/deactivate", headers=admin.headers)
    assert off.status_code == 200 and off.json()["active"] is False
    assert (await client.get(url, headers=key.headers)).status_code == 401
    again = await client.post(f"/admin/service-accounts/{key.account_id}/deactivate", headers=admin.headers)
    assert again.status_code == 200
    on = await client.post(f"/admin/service-accounts/{key.account_id}/reactivate", headers=admin.headers)
    assert on.status_code == 200 and on.json()["active"] is True
    assert (await client.get(url, headers=key.headers)).status_code in (200, 404)
    async with runtime.db.read() as s:
        rows = (
            await s.scalars(select(AuditLog).where(AuditLog.entity == "service_account").order_by(AuditLog.id))
        ).all()
    changes = [(r.action, r.details["before"], r.details["after"]) for r in rows]
    assert [c[0] for c in changes] == [
        "service-account.create",
        "service-account.deactivate",
        "service-account.reactivate",
    ]
    assert changes[1][1]["active"] is True and changes[1][2]["active"] is False
    assert changes[2][1]["active"] is False and changes[2][2]["active"] is True


async def test_key_changes_are_audited_with_before_and_after_without_the_key(client, login, runtime):
    admin = await login("admin")
    key = await make_key(client, admin.headers, name="portal")
    revoked = await client.delete(f"/admin/service-accounts/{key.account_id}/keys/{key.key_id}", headers=admin.headers)
    assert revoked.status_code == 200
    async with runtime.db.read() as s:
        rows = (await s.scalars(select(AuditLog).where(AuditLog.entity == "api_key").order_by(AuditLog.id))).all()
    create, revoke = rows
    assert create.details["before"] is None and create.details["after"]["prefix"] == key.key[:12]
    assert revoke.details["before"]["revoked_at"] is None and revoke.details["after"]["revoked_at"]
    assert all(key.key not in str(r.details) for r in rows)


async def test_only_admins_deactivate_service_accounts(client, login):
    admin = await login("admin")
    key = await make_key(client, admin.headers, name="portal")
    doctor = await login("doctor1")
    refused = await client.post(f"/admin/service-accounts/{key.account_id}/deactivate", headers=doctor.headers)
    assert refused.status_code in (403, 404)
    assert (await client.post("/admin/service-accounts/999999/deactivate", headers=admin.headers)).status_code == 404
    assert (await client.get("/integration/v1/appointments/1", headers=key.headers)).status_code != 401


async def test_a_key_revoked_or_deactivated_behind_the_instances_back_is_refused_after_the_next_token_check(
    client, login, demo, runtime
):
    # The key cache keeps a verified key; a change no event told this instance about (written straight to the
    # database, as when the bus was away) is caught by the periodic check that guards the streams.
    from sqlalchemy import update

    from doctordesk.workers.token_checks import TokenChecks

    admin = await login("admin")
    revoked = await make_key(client, admin.headers, name="revoked")
    deactivated = await make_key(client, admin.headers, name="deactivated")
    kept = await make_key(client, admin.headers, name="kept")
    url = f"/integration/v1/appointments/{demo.appointments[0]}"
    for key in (revoked, deactivated, kept):
        assert (await client.get(url, headers=key.headers)).status_code == 200
    async with runtime.db.transaction() as s:
        await s.execute(update(ApiKey).where(ApiKey.id == revoked.key_id).values(revoked_at=runtime.clock.now()))
        await s.execute(update(ServiceAccount).where(ServiceAccount.id == deactivated.account_id).values(active=False))
    # Cached: served without reading the key until the check ran.
    assert (await client.get(url, headers=revoked.headers)).status_code == 200
    await TokenChecks(runtime, interval=60).check()
    assert (await client.get(url, headers=revoked.headers)).status_code == 401
    assert (await client.get(url, headers=deactivated.headers)).status_code == 401
    assert (await client.get(url, headers=kept.headers)).status_code == 200


async def test_a_verified_key_is_not_read_again_until_it_changes(client, login, demo, runtime):
    admin = await login("admin")
    key = await make_key(client, admin.headers)
    url = f"/integration/v1/appointments/{demo.appointments[0]}"
    assert (await client.get(url, headers=key.headers)).status_code == 200
    assert [e.integration.key_id for e in runtime.key_cache._entries.values()] == [key.key_id]
    await client.delete(f"/admin/service-accounts/{key.account_id}/keys/{key.key_id}", headers=admin.headers)
    assert runtime.key_cache.key_ids() == []
    assert (await client.get(url, headers=key.headers)).status_code == 401
    assert runtime.key_cache.key_ids() == []  # a refused key is never cached
