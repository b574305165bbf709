"""Client secrets at /oauth/token and /oauth/revoke (docs/smart.md#client-secrets): stored as a fast digest, so a
wrong secret costs the server no password hash; wrong secrets counted per client and address and per client by
the login throttle (429 with Retry-After); a secret stored as argon2 before still works once and is then replaced
by the digest (SQLite and PostgreSQL)."""

from __future__ import annotations

import httpx
from sqlalchemy import select, update

from doctordesk.store.smart_tables import SmartClient
from tests.support.databases import PASSWORDS

SCOPE = ["patient/Appointment.rs"]


def revoke_form(app, secret: str) -> dict[str, str]:
    return {"token": "ddat_unknown", "client_id": app.client_id, "client_secret": secret}


async def test_wrong_client_secrets_are_throttled_per_client_and_address(app, client, register, runtime, monkeypatch):
    confidential = await register(scopes=SCOPE, kind="confidential")
    hashed: list[str] = []
    passwords = app.state.passwords
    monkeypatch.setattr(passwords, "verify", lambda *args: hashed.append("argon2") or False)
    for _ in range(5):
        wrong = await client.post("/oauth/revoke", data=revoke_form(confidential, "ddcs_wrong"))
        assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_client"
    locked = await client.post("/oauth/revoke", data=revoke_form(confidential, confidential.secret))
    assert locked.status_code == 429 and int(locked.headers["Retry-After"]) > 0
    assert locked.json()["error"] == "slow_down" and locked.json()["error_description"]  # OAuth 2's shape
    token = await client.post("/oauth/token", data={"grant_type": "refresh_token", "refresh_token": "x",
                                                   "client_id": confidential.client_id,
                                                   "client_secret": confidential.secret})  # fmt: skip
    assert token.status_code == 429
    assert hashed == []  # no wrong secret ran the password hash
    # Another address is not locked out by these failures.
    transport = httpx.ASGITransport(app=app, client=("198.51.100.7", 4000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as elsewhere:
        ok = await elsewhere.post("/oauth/revoke", data=revoke_form(confidential, confidential.secret))
    assert ok.status_code == 200, ok.text


async def test_a_public_client_is_not_counted(client, register):
    public = await register(scopes=SCOPE)
    for _ in range(8):
        answer = await client.post("/oauth/revoke", data={"token": "ddat_x", "client_id": public.client_id})
        assert answer.status_code == 200


async def test_an_argon2_secret_from_before_still_works_and_is_replaced_by_the_digest(client, register, runtime):
    confidential = await register(scopes=SCOPE, kind="confidential")
    async with runtime.db.transaction() as session:
        await session.execute(update(SmartClient).values(secret_hash=PASSWORDS.hash(confidential.secret)))
    wrong = await client.post("/oauth/revoke", data=revoke_form(confidential, "ddcs_wrong"))
    assert wrong.status_code == 400
    ok = await client.post("/oauth/revoke", data=revoke_form(confidential, confidential.secret))
    assert ok.status_code == 200, ok.text
    async with runtime.db.read() as session:
        stored = await session.scalar(select(SmartClient.secret_hash))
    assert stored is not None and stored.startswith("sha256$")
    again = await client.post("/oauth/revoke", data=revoke_form(confidential, confidential.secret))
    assert again.status_code == 200
