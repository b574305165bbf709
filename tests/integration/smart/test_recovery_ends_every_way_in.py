"""Recovery ends every way in (docs/accounts.md#recovery): deactivation, an admin's password reset and factor reset
end the user's sessions, their apps' access and refresh tokens, stream tickets and push registrations; a password
reset removes passkeys and the authenticator app too (unless ``keep_factors``); reactivation revives nothing
(SQLite and PostgreSQL)."""

from __future__ import annotations

from sqlalchemy import func, select

from doctordesk.store.mfa_tables import Passkey, TotpSecret
from doctordesk.store.realtime_tables import Device, StreamTicket
from doctordesk.store.tables import AuditLog
from tests.integration.services.accounts.test_mfa import enable_totp
from tests.integration.services.accounts.test_recent_authentication import ORIGIN, add_passkey, passkey_answer
from tests.integration.smart.conftest import exchange
from tests.support.passkey_authenticator import SoftPasskey

SCOPE = "launch/patient patient/Appointment.rs offline_access"
PUSH = {"X-Device-Id": "phone-1", "X-Push-Platform": "ios", "X-Push-Token": "push-token-1"}


async def app_tokens(client, register, launch, name: str = "Patient portal") -> tuple[dict[str, str], dict[str, str]]:
    """An app's tokens for patient1: (bearer headers of the access token, the refresh form)."""
    app = await register(scopes=SCOPE.split(), name=name)
    granted = await exchange(client, app, await launch(app, SCOPE))
    assert granted.status_code == 200, granted.text
    body = granted.json()
    refresh = {"grant_type": "refresh_token", "refresh_token": body["refresh_token"], "client_id": app.client_id}
    return {"Authorization": f"Bearer {body['access_token']}"}, refresh


async def fhir_status(client, headers) -> int:
    return (await client.get("/fhir/Appointment", headers=headers)).status_code


async def count(runtime, table, user_id: int) -> int:
    async with runtime.db.read() as session:
        return int(await session.scalar(select(func.count()).where(table.user_id == user_id)) or 0)


async def test_reactivation_revives_no_app_token_and_no_session(client, login, register, launch, demo, runtime):
    patient = await login("patient1")
    app, refresh = await app_tokens(client, register, launch)
    assert await fhir_status(client, app) == 200
    assert (await client.get("/api/appointments", headers={**patient.headers, **PUSH})).status_code == 200
    assert (await client.post("/profile/stream/ticket", headers=patient.headers)).status_code == 200
    user_id = demo.users["patient1"]
    assert await count(runtime, Device, user_id) == 1 and await count(runtime, StreamTicket, user_id) == 1

    admin = await login("admin")
    assert (await client.post(f"/admin/users/{user_id}/deactivate", headers=admin.headers)).status_code == 200
    assert await fhir_status(client, app) == 401
    assert await count(runtime, Device, user_id) == 0 and await count(runtime, StreamTicket, user_id) == 0
    assert (await client.post(f"/admin/users/{user_id}/reactivate", headers=admin.headers)).status_code == 200
    # Nothing comes back: the app's tokens and the session stay ended.
    assert await fhir_status(client, app) == 401
    assert (await client.post("/oauth/token", data=refresh)).status_code == 400
    assert (await client.get("/auth/me", headers=patient.headers)).status_code == 401
    # A new sign-in and a new grant work as before.
    assert (await login("patient1")).token
    fresh, _refresh = await app_tokens(client, register, launch, name="Another app")
    assert await fhir_status(client, fresh) == 200


async def test_an_admin_password_reset_ends_every_way_in_and_removes_planted_factors(
    client, login, register, launch, demo, runtime, clock
):
    app, refresh = await app_tokens(client, register, launch)
    patient = await login("patient1")
    passkey = SoftPasskey(ORIGIN)
    assert (await add_passkey(client, patient.headers, passkey)).status_code == 200
    await enable_totp(client, clock, patient.headers)
    assert (await client.get("/api/appointments", headers={**patient.headers, **PUSH})).status_code == 200
    user_id = demo.users["patient1"]

    admin = await login("admin")
    reset = await client.post(f"/admin/users/{user_id}/password", json={}, headers=admin.headers)
    assert reset.status_code == 200 and reset.json()["password"]
    assert (await client.get("/auth/me", headers=patient.headers)).status_code == 401
    assert await fhir_status(client, app) == 401
    assert (await client.post("/oauth/token", data=refresh)).status_code == 400
    assert await count(runtime, Device, user_id) == 0
    # The passkey planted through the session no longer signs in; the authenticator app is gone.
    assert (await client.post("/auth/passkey/login", json=await passkey_answer(client, passkey))).status_code == 401
    assert await count(runtime, Passkey, user_id) == 0 and await count(runtime, TotpSecret, user_id) == 0
    new = {"username": "patient1", "password": reset.json()["password"]}
    assert (await client.post("/auth/login", data=new)).status_code == 200  # no code asked for
    async with runtime.db.read() as session:
        entry = await session.scalar(select(AuditLog).where(AuditLog.action == "admin.password-reset"))
    assert entry is not None and entry.details["after"]["factors_removed"] is True
    assert entry.details["after"]["app_tokens_revoked"] == 2 and entry.details["after"]["push_devices_removed"] == 1


async def test_a_password_reset_may_keep_the_factors_but_still_ends_every_session(client, login, demo, runtime):
    patient = await login("patient1")
    passkey = SoftPasskey(ORIGIN)
    assert (await add_passkey(client, patient.headers, passkey)).status_code == 200
    user_id = demo.users["patient1"]
    admin = await login("admin")
    body = {"password": "a new one", "keep_factors": True}
    assert (await client.post(f"/admin/users/{user_id}/password", json=body, headers=admin.headers)).status_code == 200
    assert (await client.get("/auth/me", headers=patient.headers)).status_code == 401
    assert (await client.post("/auth/passkey/login", json=await passkey_answer(client, passkey))).status_code == 200


async def test_a_factor_reset_ends_the_sessions_and_the_apps_too(client, login, register, launch, demo, runtime):
    patient = await login("patient1")
    app, _refresh = await app_tokens(client, register, launch)
    user_id = demo.users["patient1"]
    admin = await login("admin")
    assert (await client.delete(f"/admin/users/{user_id}/mfa", headers=admin.headers)).status_code == 204
    assert (await client.get("/auth/me", headers=patient.headers)).status_code == 401
    assert await fhir_status(client, app) == 401
    assert (await client.get("/auth/me", headers=admin.headers)).status_code == 200  # only that user's
