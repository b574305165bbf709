"""Every screen in German, on SQLite and PostgreSQL: each administration screen (users, a user, a new user,
locations, work hours, fees, insurance, webhooks, an endpoint with its delivery log, the audit trail, single
sign-on) and each screen of the other roles (the security page too, also while an authenticator app is set up),
rendered for an English and a German reader, shows no English text in German but data
(docs/web-app.md#language; the judge is ``tests/support/leftovers.py``). The answers of the administration actions
are German too."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from doctordesk.screens.protocol import walk
from doctordesk.store.webhook_tables import WebhookDelivery, WebhookEndpoint
from tests.support.leftovers import describe, leftovers, same_in_german, stored_values
from tests.support.review import APPROVED, PENDING_5, REQUESTED, aid

GERMAN = {"Accept-Language": "de-DE,de;q=0.9"}
ENGLISH = {"Accept-Language": "en-GB,en;q=0.9"}
ADMIN = "/profile/admin"


def by_id(elements: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in walk(elements)}


def patched(update: dict[str, Any], element_id: str) -> str:
    (patch,) = [p for p in update["patches"] if p.get("id") == element_id]
    return str(patch["set"]["value"])


async def prepare_admin_screens(client, admin, demo, runtime) -> int:
    """Something on every screen: a webhook endpoint with a delivery, a dated exception; the id of the endpoint."""
    form = {"url": "https://hooks.example.com/in", "description": "CRM", "type~appointment.approved": "true"}
    assert (await client.post(f"{ADMIN}/webhooks/create", headers=admin.headers, data=form)).status_code == 200
    async with runtime.db.read() as s:
        endpoint_id = int(await s.scalar(select(WebhookEndpoint.id)))
    assert (await client.post(f"{ADMIN}/webhooks/{endpoint_id}/test", headers=admin.headers)).status_code == 200
    exception = {"doctor": str(demo.users["doctor1"]), "day": "2027-01-01", "kind": "absence", "location": "",
                 "opens": "", "closes": "", "note": "Congress"}  # fmt: skip
    added = await client.post(f"{ADMIN}/hours/exceptions/add", headers=admin.headers, data=exception)
    assert added.status_code == 200, added.text
    return endpoint_id


async def assert_german(client, headers, paths: list[str], runtime) -> None:
    data, same = await stored_values(runtime), same_in_german()
    problems = []
    for path in paths:
        english = await client.put(path, headers={**headers, **ENGLISH})
        german = await client.put(path, headers={**headers, **GERMAN})
        assert english.status_code == german.status_code == 200, (path, german.text)
        assert german.headers["content-language"] == "de"
        found = leftovers(english.json(), german.json(), data=data, same=same)
        if found:
            problems.append(f"{path}:\n{describe(found)}")
    assert not problems, "English on German screens:\n" + "\n".join(problems)


async def test_every_administration_screen_is_german_for_a_german_admin(client, login, demo, runtime):
    admin = await login("admin")
    endpoint_id = await prepare_admin_screens(client, admin, demo, runtime)
    patient = demo.patients[next(iter(demo.patients))]
    paths = [
        f"{ADMIN}/users", f"{ADMIN}/users/new", f"{ADMIN}/users/{demo.users['doctor1']}",
        f"{ADMIN}/users/{demo.users['patient1']}", f"{ADMIN}/locations",
        f"{ADMIN}/hours?doctor={demo.users['doctor1']}&location={demo.locations['berlin']}",
        f"{ADMIN}/fees", f"{ADMIN}/insurance?patient={patient}", f"{ADMIN}/webhooks",
        f"{ADMIN}/webhooks/{endpoint_id}", f"{ADMIN}/audit", f"{ADMIN}/sso",
    ]  # fmt: skip
    provider = {"name": "Clinic Login", "issuer": "https://login.example.org", "client_id": "dd", "client_secret": "s"}
    assert (await client.put("/admin/sso-providers/clinic", json=provider, headers=admin.headers)).status_code == 200
    await assert_german(client, admin.headers, paths, runtime)


async def test_every_screen_of_the_other_roles_is_german(client, login, demo, runtime):
    doctor, support, patient = await login("doctor1"), await login("support1"), await login("patient1")
    some = [aid(demo, i) for i in (REQUESTED, APPROVED, PENDING_5)]
    await assert_german(
        client,
        doctor.headers,
        [
            "/profile/appointments",
            "/profile/calendar-feed",
            "/profile/appointments/week",
            *(f"/profile/appointments/{a}/approve" for a in some),
            "/profile/security",
        ],
        runtime,
    )
    # The security page while an authenticator app is being set up (its QR code, key and code field).
    assert (await client.post("/profile/security/totp/start", headers=doctor.headers)).status_code == 200
    await assert_german(client, doctor.headers, ["/profile/security"], runtime)
    await assert_german(client, support.headers, ["/profile/appointments", "/profile/messages/threads"], runtime)
    await assert_german(
        client,
        patient.headers,
        ["/profile/appointments", "/profile/book", f"/profile/appointments/{aid(demo, PENDING_5)}/offers"],
        runtime,
    )


async def test_the_judge_finds_english_left_on_a_german_page(runtime, demo) -> None:
    """The check itself: an untranslated label is found, data and words German shares are not."""
    page = {
        "title": "Versicherung",
        "elements": [
            {"id": "insurer", "type": "Edit", "label": "Insurer", "value": "Hansa Health"},
            {"id": "who", "type": "Regular", "label": "Name", "value": "Dr. Anna Berger · Berlin Mitte Clinic"},
        ],
    }
    english = {**page, "title": "Insurance"}
    found = leftovers(english, page, data=await stored_values(runtime), same=same_in_german())
    assert found == [("insurer", "label", "Insurer")]


async def test_the_answers_of_administration_actions_are_german(client, login, demo, runtime):
    admin = await login("admin")
    de = {**admin.headers, **GERMAN}
    fee = {"kind": "doctor_fee", "doctor": str(demo.users["doctor1"]), "amount": "95.50", "currency": "EUR",
           "effective_from": "2026-12-01", "retired": "false"}  # fmt: skip
    asked = (await client.post(f"{ADMIN}/fees/add", headers=de, data=fee)).json()
    confirm = next(p for p in asked["patches"] if p["id"] == "confirm-fee")["set"]["action"]["endpoint"]
    added = (await client.post(confirm, headers=de, data=fee)).json()
    assert patched(added, "saved") == "Hinzugefügt: Arzthonorar · Dr. Anna Berger · jeder Standort: 95,50\u00a0€."
    fees = by_id((await client.put(f"{ADMIN}/fees", headers=de)).json()["elements"])
    assert any(e.get("value") == "ab Di., 1. Dez. 2026, 00:00 UTC" for e in fees.values())
    hook = {"url": "https://hooks.example.com/x", "type~appointment.approved": "true"}
    created = await client.post(f"{ADMIN}/webhooks/create", headers=de, data=hook)
    assert patched(created.json(), "created").startswith("https://hooks.example.com/x registriert. Signaturgeheimnis: ")
    user = {"role": "support", "username": "kim2", "display_name": "Kim Zwei", "password": "correct horse battery"}
    made = await client.post(f"{ADMIN}/users/create", headers=de, data=user)
    assert made.json()["notice"]["text"] == "Kim Zwei angelegt (kim2, Support-Mitarbeiter)."
    doctor = demo.users["doctor1"]
    toggled = await client.post(f"{ADMIN}/users/{demo.users['patient2']}/deactivate", headers=de)
    assert patched(toggled.json(), "saved").endswith("ist deaktiviert und überall abgemeldet.")
    link = await client.post(f"{ADMIN}/users/{doctor}/password-link", headers=de)
    text = patched(link.json(), "new-password")
    assert text.startswith("Einmal-Link: ") and "bis Di., 24. Nov. 2026, 08:00 MEZ." in text  # the clinic's zone
    refused = await client.post(f"{ADMIN}/fees/add", headers=de, data={"kind": "weekend", "percent": "5000"})
    assert refused.json()["fields"]["percent"] == "Eine ganze Zahl von 0 bis 1000."
    bad_hook = await client.post(f"{ADMIN}/webhooks/create", headers=de, data={"url": "", "description": "x"})
    assert bad_hook.json()["fields"]["url"] == "Erforderlich."


async def test_an_endpoint_the_service_disabled_says_why_in_the_readers_language(client, login, demo, runtime):
    from doctordesk.services.webhooks.endpoints import disable_and_tell_admins
    from doctordesk.workers.webhook_settling import GONE_REASON

    admin = await login("admin")
    endpoint_id = await prepare_admin_screens(client, admin, demo, runtime)
    async with runtime.db.transaction() as session:
        assert await disable_and_tell_admins(session, [endpoint_id], now=demo.now, reason=GONE_REASON) == [endpoint_id]
    page = f"{ADMIN}/webhooks/{endpoint_id}"
    german = by_id((await client.put(page, headers={**admin.headers, **GERMAN})).json()["elements"])
    english = by_id((await client.put(page, headers={**admin.headers, **ENGLISH})).json()["elements"])
    assert german["state"]["value"] == "Deaktiviert: Der Endpunkt hat mit 410 Gone geantwortet."
    assert english["state"]["value"] == "Disabled: The endpoint answered 410 Gone."
    notices = (await client.get("/admin/notices", headers={**admin.headers, **GERMAN})).json()["notices"]
    assert notices[0]["text"] == (
        f"Webhook-Endpunkt Nr. {endpoint_id} (https://hooks.example.com/in) wurde deaktiviert: "
        "Der Endpunkt hat mit 410 Gone geantwortet."
    )
    assert "message" not in notices[0]["details"]
    endpoint = (await client.get(f"/admin/webhooks/{endpoint_id}", headers={**admin.headers, **ENGLISH})).json()
    assert endpoint["disabled_reason"] == "The endpoint answered 410 Gone."
    async with runtime.db.read() as s:
        delivery = await s.scalar(select(WebhookDelivery))
    assert delivery is not None


@pytest.mark.parametrize("status_index", [APPROVED])
async def test_a_decision_on_a_decided_appointment_names_its_status_in_words(client, login, demo, status_index):
    doctor = await login("doctor1")
    url = f"/profile/appointments/{aid(demo, status_index)}/approve"
    page = (await client.put(url, headers=doctor.headers)).json()
    version = by_id(page["elements"])["version"]["value"]
    german = await client.post(url, headers={**doctor.headers, **GERMAN}, data={"version": version})
    english = await client.post(url, headers={**doctor.headers, **ENGLISH}, data={"version": version})
    assert german.status_code == english.status_code == 409
    assert german.json()["message"] == "Dieser Termin ist bereits zugesagt."
    assert english.json()["message"] == "This appointment is already approved."
    assert "pending-response" not in german.text and "approved" not in german.json()["message"]
