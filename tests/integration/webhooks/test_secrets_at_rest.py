"""Webhook signing secrets are stored encrypted (SQLite and PostgreSQL): the raw columns never hold a ``whsec_``
secret, and the receiver still verifies every signature, including both during a rotation's overlap and for an
endpoint stored in plain text before encryption (which ``reencrypt`` then encrypts)."""

from __future__ import annotations

from sqlalchemy import text

from doctordesk.store.secrets.rows import reencrypt


async def raw_secrets(runtime, endpoint_id: int) -> tuple[str, str | None]:
    async with runtime.db.read() as session:
        row = (
            await session.execute(
                text("SELECT secret, previous_secret FROM webhook_endpoints WHERE id = :i"), {"i": endpoint_id}
            )
        ).one()
    return row[0], row[1]


async def test_both_secrets_of_a_rotation_are_stored_encrypted_and_both_signatures_verify(
    client, runtime, receiver, register, admin, dispatcher
):
    endpoint = await register(receiver.url(), ["appointment.approved"])
    stored, previous = await raw_secrets(runtime, endpoint["id"])
    assert stored.startswith("fernet:") and "whsec_" not in stored and previous is None
    base = f"/admin/webhooks/{endpoint['id']}"
    rotated = (await client.post(f"{base}/rotate-secret", headers=admin.headers)).json()
    stored, previous = await raw_secrets(runtime, endpoint["id"])
    assert stored.startswith("fernet:") and previous is not None and previous.startswith("fernet:")
    assert "whsec_" not in stored + previous
    assert runtime.db.secret_box.open(previous) == endpoint["secret"]

    assert (await client.post(f"{base}/test", headers=admin.headers)).status_code == 202
    await dispatcher.drain()
    [got] = receiver.requests()
    assert got.verified(endpoint["secret"]) == got.verified(rotated["secret"])


async def test_an_endpoint_stored_in_plain_text_before_is_signed_and_then_encrypted_by_reencrypt(
    client, runtime, receiver, register, admin, dispatcher
):
    endpoint = await register(receiver.url(), ["appointment.approved"])
    async with runtime.db.transaction() as session:
        plain = {"s": endpoint["secret"], "i": endpoint["id"]}  # as stored before encryption
        await session.execute(text("UPDATE webhook_endpoints SET secret = :s WHERE id = :i"), plain)
    assert (await client.post(f"/admin/webhooks/{endpoint['id']}/test", headers=admin.headers)).status_code == 202
    await dispatcher.drain()
    [got] = receiver.requests()
    assert got.verified(endpoint["secret"])["type"] == "webhook.test"

    [report] = [r for r in await reencrypt(runtime.db) if r.column == "webhook_endpoints.secret"]
    assert (report.from_plain, report.current) == (1, 0)
    stored, _previous = await raw_secrets(runtime, endpoint["id"])
    assert stored.startswith("fernet:") and runtime.db.secret_box.open(stored) == endpoint["secret"]
