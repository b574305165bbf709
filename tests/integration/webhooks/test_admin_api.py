"""The admins' webhook API on SQLite and PostgreSQL: who may use it, what it accepts, the secret shown once, the
delivery log paged by cursor, and refusals that write nothing."""

from __future__ import annotations

import base64

import pytest
from sqlalchemy import func, select

from doctordesk.store.tables import AuditLog
from doctordesk.store.webhook_tables import WebhookDelivery, WebhookEndpoint

BASE = "/admin/webhooks"


async def endpoint_count(runtime) -> int:
    async with runtime.db.read() as s:
        return int(await s.scalar(select(func.count()).select_from(WebhookEndpoint)) or 0)


@pytest.mark.parametrize("username", ["doctor1", "support1", "patient1"])
async def test_only_admins_may_use_the_webhook_api(client, login, runtime, register, username):
    created = await register("http://127.0.0.1:9/hook", ["appointment.approved"])
    who = await login(username)
    body = {"url": "https://example.com/hook", "event_types": ["appointment.approved"]}
    for method, path, json in [
        ("POST", BASE, body),
        ("GET", BASE, None),
        ("GET", f"{BASE}/{created['id']}", None),
        ("POST", f"{BASE}/{created['id']}", {"description": "mine"}),
        ("POST", f"{BASE}/{created['id']}/disable", None),
        ("POST", f"{BASE}/{created['id']}/rotate-secret", None),
        ("GET", f"{BASE}/{created['id']}/deliveries", None),
        ("POST", f"{BASE}/{created['id']}/test", None),
        ("GET", "/admin/notices", None),
    ]:
        response = await client.request(method, path, json=json, headers=who.headers)
        assert response.status_code == 403, (method, path, response.text)
        assert response.json()["code"] == "FORBIDDEN"
    assert (await client.get(BASE)).status_code == 401
    assert await endpoint_count(runtime) == 1
    async with runtime.db.read() as s:
        assert await s.scalar(select(func.count()).select_from(WebhookDelivery)) == 0
        row = await s.get(WebhookEndpoint, created["id"])
        assert row.enabled and row.description == ""


async def test_a_new_endpoint_shows_its_whsec_secret_once(client, admin, runtime, register):
    created = await register("https://hooks.example.com/in", ["chat.message-created"], description="CRM")
    secret = created["secret"]
    assert secret.startswith("whsec_") and len(base64.b64decode(secret.removeprefix("whsec_"))) == 32
    assert created["enabled"] and created["include_content"] is False and created["description"] == "CRM"
    rotated = await client.post(f"{BASE}/{created['id']}/rotate-secret", headers=admin.headers)
    assert rotated.headers["cache-control"] == "no-store" and rotated.json()["secret"].startswith("whsec_")
    read = (await client.get(f"{BASE}/{created['id']}", headers=admin.headers)).json()
    listed = (await client.get(BASE, headers=admin.headers)).json()["endpoints"]
    assert "secret" not in read and all("secret" not in e for e in listed)
    assert secret not in str(read) + str(listed) and rotated.json()["secret"] not in str(read) + str(listed)
    assert read == {k: v for k, v in rotated.json().items() if k not in ("secret", "previous_secret_valid_until")}
    async with runtime.db.read() as s:
        actions = (await s.scalars(select(AuditLog.action).where(AuditLog.entity == "webhook_endpoint"))).all()
    assert actions == ["webhook.create", "webhook.rotate-secret"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": "ftp://example.com/x", "event_types": ["appointment.approved"]}, "url"),
        ({"url": "example.com/x", "event_types": ["appointment.approved"]}, "url"),
        ({"url": "https://", "event_types": ["appointment.approved"]}, "url"),
        ({"url": "https://example.com:99999/", "event_types": ["appointment.approved"]}, "url"),
        ({"url": "https://example.com/x", "event_types": ["appointment.eaten"]}, "event_types"),
        ({"url": "https://example.com/x", "event_types": []}, "event_types"),
        ({"url": "https://example.com/x"}, "event_types"),
        ({"url": "https://example.com/x", "event_types": ["appointment.approved"], "secret": "mine"}, "secret"),
        ({"url": "https://example.com/x", "event_types": ["chat.message-created"], "include_content": "yes"}, None),
        ({"url": "https://example.com/x", "event_types": "appointment.approved"}, "event_types"),
    ],
)
async def test_invalid_registrations_are_refused_naming_the_field_and_nothing_is_stored(
    client, admin, runtime, body, field
):
    response = await client.post(BASE, json=body, headers=admin.headers)
    assert response.status_code == 422, response.text
    error = response.json()
    assert error["code"] == "FIELDS_VALIDATION_ERROR"
    if field is not None:
        assert field in error["fields"], error
    assert await endpoint_count(runtime) == 0


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/x",
        "http://localhost/x",
        "https://10.1.2.3/x",
        "http://[::1]/x",
        "http://169.254.169.254/",
    ],
)
async def test_loopback_and_private_addresses_are_refused_unless_allowed(client, admin, runtime, url):
    runtime.settings.webhook_allow_private_addresses = False
    body = {"url": url, "event_types": ["appointment.approved"]}
    response = await client.post(BASE, json=body, headers=admin.headers)
    assert response.status_code == 422 and "url" in response.json()["fields"]
    assert await endpoint_count(runtime) == 0
    runtime.settings.webhook_allow_private_addresses = True
    assert (await client.post(BASE, json=body, headers=admin.headers)).status_code == 201


async def test_an_update_changes_only_the_fields_sent_and_refuses_bad_ones(client, admin, register):
    created = await register("https://example.com/a", ["appointment.approved"])
    path = f"{BASE}/{created['id']}"
    response = await client.post(
        path, json={"event_types": ["appointment.declined", "appointment.approved"]}, headers=admin.headers
    )
    assert response.status_code == 200
    body = response.json()
    # Stored in the documented order, URL untouched.
    assert body["event_types"] == ["appointment.approved", "appointment.declined"] and body["url"] == created["url"]
    refused = await client.post(path, json={"url": "gopher://x"}, headers=admin.headers)
    assert refused.status_code == 422 and "url" in refused.json()["fields"]
    assert (await client.post(path, json={"colour": "red"}, headers=admin.headers)).status_code == 422
    assert (await client.get(path, headers=admin.headers)).json()["url"] == "https://example.com/a"
    assert (await client.get(f"{BASE}/999999", headers=admin.headers)).status_code == 404


async def test_endpoints_are_disabled_and_enabled_never_deleted(client, admin, register):
    created = await register("https://example.com/a", ["appointment.approved"])
    path = f"{BASE}/{created['id']}"
    assert (await client.delete(path, headers=admin.headers)).status_code == 405
    disabled = (await client.post(f"{path}/disable", headers=admin.headers)).json()
    assert not disabled["enabled"] and disabled["disabled_reason"] == "Disabled by an admin."
    enabled = (await client.post(f"{path}/enable", headers=admin.headers)).json()
    assert enabled["enabled"] and enabled["disabled_reason"] is None and enabled["disabled_at"] is None
    assert [e["id"] for e in (await client.get(BASE, headers=admin.headers)).json()["endpoints"]] == [created["id"]]


async def test_the_delivery_log_is_newest_first_and_paged_by_cursor(client, admin, register):
    created = await register("https://example.com/a", ["appointment.approved"])
    path = f"{BASE}/{created['id']}"
    ids = [(await client.post(f"{path}/test", headers=admin.headers)).json()["id"] for _ in range(5)]
    seen: list[int] = []
    cursor = None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = (await client.get(f"{path}/deliveries", params=params, headers=admin.headers)).json()
        seen += [d["id"] for d in page["deliveries"]]
        assert all(d["status"] == "pending" and d["webhook_id"].startswith("msg_") for d in page["deliveries"])
        cursor = page["cursor"]
        if cursor is None:
            break
    assert seen == sorted(ids, reverse=True)
    one = (await client.get(f"{path}/deliveries/{ids[0]}", headers=admin.headers)).json()
    assert '"type":"webhook.test"' in one["payload"]
    bad = await client.get(f"{path}/deliveries", params={"cursor": "nope"}, headers=admin.headers)
    assert bad.status_code == 422 and "cursor" in bad.json()["fields"]
    other = await register("https://example.com/b", ["appointment.approved"])
    assert (await client.get(f"{BASE}/{other['id']}/deliveries/{ids[0]}", headers=admin.headers)).status_code == 404
    failed = await client.get(f"{path}/deliveries", params={"status": "failed"}, headers=admin.headers)
    assert failed.json() == {"deliveries": [], "cursor": None}


async def test_replay_since_needs_a_time_with_a_zone(client, admin, register):
    created = await register("https://example.com/a", ["appointment.approved"])
    path = f"{BASE}/{created['id']}/replay"
    response = await client.post(path, json={"since": "2026-11-23T00:00:00"}, headers=admin.headers)
    assert response.status_code == 422 and "since" in response.json()["fields"]
    response = await client.post(path, json={"since": "2026-11-23T00:00:00+01:00"}, headers=admin.headers)
    assert response.json() == {"replayed": 0}


async def test_metrics_show_how_many_deliveries_wait(client, admin, register):
    created = await register("https://example.com/a", ["appointment.approved"])
    for _ in range(2):
        await client.post(f"{BASE}/{created['id']}/test", headers=admin.headers)
    metrics = (await client.get("/metrics")).text
    assert "doctordesk_webhook_outbox_depth 2.0" in metrics


async def test_every_endpoint_change_is_audited_with_before_and_after_and_no_secret(client, admin, runtime, register):
    created = await register("https://hooks.example.com/in", ["appointment.approved"], description="CRM")
    base = f"{BASE}/{created['id']}"
    changed = await client.post(base, headers=admin.headers, json={"description": "CRM v2"})
    assert changed.status_code == 200, changed.text
    rotated = (await client.post(f"{base}/rotate-secret", headers=admin.headers)).json()
    assert (await client.post(f"{base}/disable", headers=admin.headers, json={})).status_code == 200
    assert (await client.post(f"{base}/enable", headers=admin.headers)).status_code == 200
    async with runtime.db.read() as s:
        rows = (
            await s.scalars(select(AuditLog).where(AuditLog.entity == "webhook_endpoint").order_by(AuditLog.id))
        ).all()
    by_action = {r.action: r.details for r in rows}
    assert list(by_action) == [
        "webhook.create",
        "webhook.update",
        "webhook.rotate-secret",
        "webhook.disable",
        "webhook.enable",
    ]
    assert by_action["webhook.create"]["before"] is None
    assert by_action["webhook.update"]["before"]["description"] == "CRM"
    assert by_action["webhook.update"]["after"]["description"] == "CRM v2"
    assert by_action["webhook.rotate-secret"]["before"]["previous_secret_until"] is None
    assert by_action["webhook.rotate-secret"]["after"]["previous_secret_until"]
    assert by_action["webhook.disable"]["before"]["enabled"] is True
    assert by_action["webhook.disable"]["after"]["enabled"] is False
    assert by_action["webhook.enable"]["after"]["enabled"] is True
    for secret in (created["secret"], rotated["secret"]):
        assert all(secret not in str(r.details) for r in rows)


async def test_test_events_and_replays_are_audited_with_the_delivery_before_and_after(client, admin, runtime, register):
    created = await register("https://hooks.example.com/in", ["appointment.approved"])
    base = f"{BASE}/{created['id']}"
    sent = (await client.post(f"{base}/test", headers=admin.headers)).json()
    replayed = await client.post(f"{base}/deliveries/{sent['id']}/replay", headers=admin.headers)
    assert replayed.status_code == 200, replayed.text
    since = {"since": "2026-01-01T00:00:00Z"}
    assert (await client.post(f"{base}/replay", headers=admin.headers, json=since)).json() == {"replayed": 0}
    async with runtime.db.read() as s:
        rows = (
            await s.scalars(
                select(AuditLog)
                .where(AuditLog.entity == "webhook_endpoint", AuditLog.action != "webhook.create")
                .order_by(AuditLog.id)
            )
        ).all()
    by_action = {r.action: r.details for r in rows}
    assert list(by_action) == ["webhook.send-test", "webhook.replay", "webhook.replay-failed"]
    assert by_action["webhook.send-test"] == {"before": None, "after": by_action["webhook.send-test"]["after"]}
    assert by_action["webhook.send-test"]["after"]["event_type"] == "webhook.test"
    assert by_action["webhook.replay"]["before"]["replays"] == 0
    assert by_action["webhook.replay"]["after"]["replays"] == 1
    assert by_action["webhook.replay"]["after"]["message_id"] == sent["webhook_id"]
    assert by_action["webhook.replay-failed"]["before"]["count"] == 0
    assert all(created["secret"] not in str(r.details) for r in rows)
