"""The fees and webhook administration screens (docs/administration.md), on SQLite and PostgreSQL: the same rules
and audit as the JSON API, fee versions that never replace history, a webhook secret shown once, the delivery log
with replays, and nobody but admins reaching them."""

from __future__ import annotations

from sqlalchemy import func, select

from doctordesk.store.tables import AuditLog, FeeSchedule
from doctordesk.store.webhook_tables import WebhookDelivery, WebhookEndpoint
from tests.integration.admin_screens.test_user_screens import by_id, patched
from tests.support.integration import make_key

FEES = "/profile/admin/fees"
HOOKS = "/profile/admin/webhooks"
TYPES = ("appointment.approved", "appointment.declined")


async def fee_count(runtime) -> int:
    async with runtime.db.read() as s:
        return int(await s.scalar(select(func.count()).select_from(FeeSchedule)) or 0)


async def add_confirmed(client, headers, form):
    """The fee form sent, then confirmed: the first answer writes nothing and shows what changes; "Confirm" sends
    the same form with that version's digest."""
    asked = await client.post(f"{FEES}/add", headers=headers, data=form)
    assert asked.status_code == 200, asked.text
    action = patched(asked.json(), "confirm-fee")["set"]["action"]
    assert action["endpoint"].startswith(f"{FEES}/add?confirm=") and action["form"] == "new-fee"
    return await client.post(action["endpoint"], headers=headers, data=form)


def hook_form(url: str, *types: str, **extra: str) -> dict[str, str]:
    return {"url": url, "description": "CRM", **{f"type~{t}": "true" for t in types}, **extra}


async def test_a_fee_version_from_a_later_day_joins_the_history_and_leaves_todays_fee(client, login, demo, runtime):
    admin = await login("admin")
    page = (await client.put(FEES, headers=admin.headers)).json()
    shown = by_id(page["elements"])
    assert shown["nav-fees"]["highlighted"] is True
    in_force_before = [e for e in shown if e.startswith("fee-text-")]
    history_before = [e for e in shown if e.startswith("version-text-")]
    form = {"kind": "doctor_fee", "doctor": str(demo.users["doctor1"]), "location": "", "amount": "95.50",
            "percent": "", "currency": "EUR", "effective_from": "2026-12-01", "retired": "false"}  # fmt: skip
    added = await add_confirmed(client, {**admin.headers, "X-Screen-State": page["state"]}, form)
    assert added.status_code == 200, added.text
    assert "€95.50" in patched(added.json(), "saved")["set"]["value"]
    fresh = by_id((await client.put(FEES, headers=admin.headers)).json()["elements"])
    assert [e for e in fresh if e.startswith("fee-text-")] == in_force_before  # not in force before 1 December
    versions = [e for e in fresh if e.startswith("version-text-")]
    assert len(versions) == len(history_before) + 1
    assert "€95.50" in fresh[versions[0]]["value"]  # newest first
    assert fresh[versions[0].replace("text", "since")]["value"] == "from Tue 01 Dec 2026, 00:00 UTC"
    async with runtime.db.read() as s:
        entry = await s.scalar(select(AuditLog).where(AuditLog.action == "admin.fee-rule-added"))
    assert entry.actor_id == demo.users["admin"] and entry.details["after"]["amount_cents"] == 9550
    assert "before" in entry.details


async def test_a_fee_version_effective_today_is_in_force_at_once(client, login, demo):
    admin = await login("admin")
    form = {"kind": "weekend", "percent": "30", "effective_from": "2026-11-23", "retired": "false"}
    added = await add_confirmed(client, admin.headers, form)
    assert added.status_code == 200, added.text
    fresh = by_id((await client.put(FEES, headers=admin.headers)).json()["elements"])
    in_force = [v["value"] for k, v in fresh.items() if k.startswith("fee-text-")]
    assert any("weekend" in line and "30\u00a0%" in line for line in in_force)


async def test_a_bad_fee_form_names_the_fields_and_writes_nothing(client, login, runtime):
    admin = await login("admin")
    before = await fee_count(runtime)
    cases = [
        ({"kind": "bribe"}, "kind"),
        ({"kind": "doctor_fee", "amount": "80,50"}, "amount"),
        ({"kind": "doctor_fee", "amount": "-1"}, "amount"),
        ({"kind": "doctor_fee", "amount": "10", "effective_from": "2020-01-01"}, "effective_from"),
        ({"kind": "doctor_fee", "amount": "10", "effective_from": "2026-02-30"}, "effective_from"),
        ({"kind": "doctor_fee", "amount": "10", "doctor": "999999"}, "doctor"),
        ({"kind": "weekend", "percent": "5000"}, "percent"),
        ({"kind": "doctor_fee", "amount": "10", "currency": "euro"}, "currency"),
        ({"kind": "doctor_fee", "amount": "10", "retired": "maybe"}, "retired"),
        # An empty form never records a free fee: the amount (fees) or the percentage (surcharges) is required.
        ({"kind": "doctor_fee"}, "amount"),
        ({"kind": "location_fee", "amount": "  ", "percent": "", "currency": "EUR"}, "amount"),
        ({"kind": "weekend", "percent": ""}, "percent"),
        ({"kind": "weekend", "amount": "5"}, "percent"),
        ({"kind": "evening", "percent": "10", "amount": "5"}, "amount"),
    ]
    for form, field in cases:
        response = await client.post(f"{FEES}/add", headers=admin.headers, data=form)
        assert response.status_code == 422, (form, response.text)
        assert field in response.json()["fields"], (form, response.json())
        # A forged confirmation is no way around the checks either.
        forged = await client.post(f"{FEES}/add?confirm=0123456789abcdef", headers=admin.headers, data=form)
        assert forged.status_code == 422, (form, forged.text)
    assert await fee_count(runtime) == before


async def test_a_fee_version_is_saved_only_once_confirmed_and_only_as_confirmed(client, login, demo, runtime):
    admin = await login("admin")
    page = (await client.put(FEES, headers=admin.headers)).json()
    assert by_id(page["elements"])["fee-confirm"]["visible"] is False
    headers = {**admin.headers, "X-Screen-State": page["state"]}
    before = await fee_count(runtime)
    form = {"kind": "doctor_fee", "doctor": str(demo.users["doctor1"]), "location": "", "amount": "80",
            "currency": "EUR", "effective_from": "", "retired": "false"}  # fmt: skip
    asked = await client.post(f"{FEES}/add", headers=headers, data=form)
    assert asked.status_code == 200 and await fee_count(runtime) == before  # nothing written yet
    assert patched(asked.json(), "fee-confirm")["set"] == {"visible": True}
    text = patched(asked.json(), "fee-confirm-text")["set"]["value"]
    # What changes (the fee in force for that doctor before and after), for whom, where, from when.
    assert text.startswith("Doctor fee for Dr. Anna Berger at every location: ")
    assert "→ €80.00, from now." in text and "Nothing is saved until you confirm." in text
    confirm = patched(asked.json(), "confirm-fee")["set"]["action"]["endpoint"]
    # The form changed after the confirmation was shown: its "Confirm" does not save the other amount.
    changed = await client.post(confirm, headers=headers, data={**form, "amount": "800"})
    assert changed.status_code == 200 and await fee_count(runtime) == before
    assert "→ €800.00" in patched(changed.json(), "fee-confirm-text")["set"]["value"]
    saved = await client.post(confirm, headers=headers, data=form)
    assert saved.status_code == 200 and await fee_count(runtime) == before + 1
    assert patched(saved.json(), "fee-confirm")["set"].get("visible", False) is False  # hidden again
    assert "€80.00" in patched(saved.json(), "saved")["set"]["value"]


async def test_a_surcharge_confirmation_names_its_percentage_in_german(client, login):
    admin = await login("admin")
    form = {"kind": "weekend", "percent": "25", "effective_from": "2026-12-01"}
    asked = await client.post(f"{FEES}/add", headers={**admin.headers, "Accept-Language": "de"}, data=form)
    text = patched(asked.json(), "fee-confirm-text")["set"]["value"]
    assert text.startswith("Zuschlag: Wochenende für jeden Arzt an jedem Standort: ")
    assert "→ 25\u00a0%, ab Di., 1. Dez. 2026, 00:00 UTC." in text


async def test_a_webhook_registered_on_the_screen_shows_its_secret_once(client, login, demo, runtime):
    admin = await login("admin")
    page = (await client.put(HOOKS, headers=admin.headers)).json()
    assert by_id(page["elements"])["nav-webhooks"]["highlighted"] is True
    form = hook_form("https://hooks.example.com/in", *TYPES, include_content="false")
    created = await client.post(
        f"{HOOKS}/create", headers={**admin.headers, "X-Screen-State": page["state"]}, data=form
    )
    assert created.status_code == 200, created.text
    text = patched(created.json(), "created")["set"]["value"]
    secret = text.split("Signing secret: ")[1].split(" ")[0]
    assert secret.startswith("whsec_")
    async with runtime.db.read() as s:
        row = await s.scalar(select(WebhookEndpoint))
        audit = await s.scalar(select(AuditLog).where(AuditLog.action == "webhook.create"))
    assert row.secret == secret and sorted(row.event_types) == sorted(TYPES)
    assert audit.details["before"] is None and secret not in str(audit.details)
    listed = (await client.put(HOOKS, headers=admin.headers)).json()
    assert secret not in str(listed) and f"webhook-{row.id}" in by_id(listed["elements"])
    assert secret not in str((await client.put(f"{HOOKS}/{row.id}", headers=admin.headers)).json())


async def test_an_endpoint_is_edited_disabled_enabled_tested_and_replayed_on_its_page(client, login, demo, runtime):
    admin = await login("admin")
    await client.post(f"{HOOKS}/create", headers=admin.headers, data=hook_form("https://hooks.example.com/a", *TYPES))
    async with runtime.db.read() as s:
        endpoint_id = await s.scalar(select(WebhookEndpoint.id))
    url = f"{HOOKS}/{endpoint_id}"
    page = (await client.put(url, headers=admin.headers)).json()
    assert by_id(page["elements"])["deliveries-empty"].get("visible", True) is True
    saved = await client.post(
        f"{url}/save", headers=admin.headers, data=hook_form("https://hooks.example.com/b", "appointment.canceled")
    )
    assert saved.status_code == 200, saved.text
    off = await client.post(f"{url}/disable", headers=admin.headers)
    assert patched(off.json(), "saved")["set"]["value"] == "Disabled."
    shown = by_id((await client.put(url, headers=admin.headers)).json()["elements"])
    assert shown["toggle-enabled"]["label"] == "Enable" and shown["url"]["value"] == "https://hooks.example.com/b"
    assert shown["type-appointment.canceled"]["value"] is True and shown["type-appointment.approved"]["value"] is False
    # Event types read as words with their code, in the reader's language.
    assert shown["type-appointment.canceled"]["label"] == "Appointment canceled · appointment.canceled"
    german = by_id((await client.put(url, headers={**admin.headers, "Accept-Language": "de"})).json()["elements"])
    assert german["type-appointment.approved"]["label"] == "Termin zugesagt · appointment.approved"
    assert (await client.post(f"{url}/enable", headers=admin.headers)).status_code == 200
    tested = await client.post(f"{url}/test", headers=admin.headers)
    assert "Test event queued" in patched(tested.json(), "saved")["set"]["value"]
    async with runtime.db.read() as s:
        delivery = await s.scalar(select(WebhookDelivery))
    log = by_id((await client.put(url, headers=admin.headers)).json()["elements"])
    assert f"delivery-{delivery.id}" in log and log[f"delivery-id-{delivery.id}"]["value"] == delivery.message_id
    assert log[f"delivery-type-{delivery.id}"]["value"].startswith("Test event · webhook.test · ")
    replayed = await client.post(f"{url}/deliveries/{delivery.id}/replay", headers=admin.headers)
    assert replayed.status_code == 200, replayed.text
    async with runtime.db.read() as s:
        assert (await s.get(WebhookDelivery, delivery.id)).replays == 1
        actions = (await s.scalars(select(AuditLog.action).where(AuditLog.entity == "webhook_endpoint"))).all()
    assert set(actions) >= {"webhook.create", "webhook.update", "webhook.disable", "webhook.enable",
                            "webhook.send-test", "webhook.replay"}  # fmt: skip
    other = await client.post(f"{HOOKS}/{endpoint_id + 1}/deliveries/{delivery.id}/replay", headers=admin.headers)
    assert other.status_code == 404
    rotated = await client.post(f"{url}/rotate-secret", headers=admin.headers)
    secret = patched(rotated.json(), "secret")["set"]["value"].split("New signing secret: ")[1].split(" ")[0]
    async with runtime.db.read() as s:
        row = await s.get(WebhookEndpoint, endpoint_id)
        entry = await s.scalar(select(AuditLog).where(AuditLog.action == "webhook.rotate-secret"))
    assert row.secret == secret and row.previous_secret and row.previous_secret != secret
    assert secret not in str(entry.details)
    assert secret not in str((await client.put(url, headers=admin.headers)).json())


async def test_a_bad_webhook_form_names_the_fields_and_writes_nothing(client, login, runtime):
    admin = await login("admin")
    cases = [
        (hook_form("ftp://hooks.example.com/in", *TYPES), "url"),
        (hook_form("https://hooks.example.com/in"), "event_types"),
        (hook_form("https://hooks.example.com/in", *TYPES, include_content="yes"), "include_content"),
        ({"description": "no url", "type~appointment.approved": "true"}, "url"),
        (hook_form("https://hooks.example.com/in", *TYPES, description="x" * 501), "description"),
    ]
    for form, field in cases:
        response = await client.post(f"{HOOKS}/create", headers=admin.headers, data=form)
        assert response.status_code == 422, (form, response.text)
        assert field in response.json()["fields"], (form, response.json())
    async with runtime.db.read() as s:
        assert await s.scalar(select(func.count()).select_from(WebhookEndpoint)) == 0


async def test_only_admins_reach_the_fee_and_webhook_screens(client, login, demo, runtime):
    admin = await login("admin")
    await client.post(f"{HOOKS}/create", headers=admin.headers, data=hook_form("https://hooks.example.com/a", *TYPES))
    async with runtime.db.read() as s:
        endpoint_id = await s.scalar(select(WebhookEndpoint.id))
    key = await make_key(client, admin.headers)
    pages = (FEES, HOOKS, f"{HOOKS}/{endpoint_id}")
    posts = (
        (f"{FEES}/add", {"kind": "doctor_fee", "amount": "1"}),
        (f"{HOOKS}/create", hook_form("https://hooks.example.com/x", *TYPES)),
        (f"{HOOKS}/{endpoint_id}/save", hook_form("https://hooks.example.com/x", *TYPES)),
        (f"{HOOKS}/{endpoint_id}/disable", {}),
        (f"{HOOKS}/{endpoint_id}/enable", {}),
        (f"{HOOKS}/{endpoint_id}/test", {}),
        (f"{HOOKS}/{endpoint_id}/rotate-secret", {}),
        (f"{HOOKS}/{endpoint_id}/deliveries/1/replay", {}),
    )
    fees_before = await fee_count(runtime)
    for who in ("doctor1", "support1", "patient1"):
        user = await login(who)
        for url in pages:
            assert (await client.put(url, headers=user.headers)).status_code == 404, (who, url)
            assert (await client.patch(url, headers=user.headers)).status_code == 404, (who, url)
        for url, form in posts:
            assert (await client.post(url, headers=user.headers, data=form)).status_code == 404, (who, url)
    for url in pages:
        assert (await client.put(url)).status_code == 401
        assert (await client.put(url, headers=key.headers)).status_code == 401
    for url, form in posts:
        assert (await client.post(url, headers=key.headers, data=form)).status_code == 401
    assert await fee_count(runtime) == fees_before
    async with runtime.db.read() as s:
        assert await s.scalar(select(func.count()).select_from(WebhookEndpoint)) == 1
        assert await s.scalar(select(func.count()).select_from(WebhookDelivery)) == 0
