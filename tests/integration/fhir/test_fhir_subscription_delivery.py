"""FHIR Subscription notifications through the webhook outbox and dispatcher, to a real receiver on loopback
(SQLite and PostgreSQL): the changed Appointment PUT as application/fhir+json when the criteria match its new
state, nothing when they do not, never another doctor's appointment, retries under one webhook-id, and the
subscription in ``error`` when its endpoint keeps failing."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select
from standardwebhooks.webhooks import Webhook

from doctordesk.config import Settings
from doctordesk.store.tables import AuditLog
from doctordesk.store.webhook_tables import AdminNotice, WebhookDelivery
from tests.support.fhir import FHIR_JSON, resource_of
from tests.support.fhir_models import validate
from tests.support.fhir_subscriptions import secret_of, send, subscriber_key, subscription, valid
from tests.support.integration import FREE_START, make_key
from tests.support.review import (
    DISCLAIMER,
    NO_TIMEZONE,
    PRESCRIPTION,
    REQUESTED,
    aid,
    approve_url,
)
from tests.support.webhook_receiver import Received, WebhookReceiver


@pytest.fixture
def settings(database_url: str, settings_factory: Callable[..., Settings]) -> Settings:
    return settings_factory(database_url, webhook_in_process=False, webhook_allow_private_addresses=True)


@pytest.fixture
async def key(client, login):
    return await subscriber_key(client, (await login("admin")).headers)


async def subscribe(client, headers, **kwargs: Any) -> dict[str, Any]:
    return resource_of(await send(client, headers, valid(subscription(**kwargs))), 201)


async def decide(client, who, appointment_id: int, action: str = "approve", **fields: str) -> None:
    url = approve_url(appointment_id) if action == "approve" else f"/profile/appointments/{appointment_id}/{action}"
    response = await client.post(url, headers=who.headers, data={"version": "1", **fields})
    assert response.status_code == 200, response.text


async def deliveries(runtime):
    async with runtime.db.read() as s:
        return (await s.scalars(select(WebhookDelivery).order_by(WebhookDelivery.id))).all()


def under(receiver: WebhookReceiver, base: str) -> list[Received]:
    """What the receiver got under one subscriber's FHIR base."""
    return [r for r in receiver.requests() if r.path.startswith(base + "/")]


def appointment_of(got: Received) -> dict[str, Any]:
    assert got.method == "PUT" and got.headers["content-type"] == FHIR_JSON
    body: dict[str, Any] = json.loads(got.body)
    validate(body)
    return body


async def test_the_doctors_approval_on_the_screen_puts_the_booked_appointment_to_the_subscriber(
    client, login, demo, runtime, receiver, key, dispatcher
):
    doctor1 = demo.users["doctor1"]
    created = await subscribe(
        client,
        key.headers,
        endpoint=receiver.url("/ehr/fhir/"),
        criteria=f"Appointment?status=booked&practitioner=Practitioner/{doctor1}",
        channel={
            "type": "rest-hook",
            "endpoint": receiver.url("/ehr/fhir/"),
            "payload": FHIR_JSON,
            "header": ["Authorization: Bearer ehr-secret-token"],
        },
    )
    a = aid(demo, REQUESTED)
    await decide(client, await login("doctor1"), a)
    await dispatcher.drain()
    [got] = receiver.requests()
    assert got.path == f"/ehr/fhir/Appointment/{a}"  # R4 rest-hook: the endpoint is the receiver's FHIR base
    appointment = appointment_of(got)
    assert appointment["id"] == str(a) and appointment["status"] == "booked"
    assert appointment["meta"]["versionId"] == "2"
    assert appointment["participant"][1]["actor"]["reference"] == f"Practitioner/{doctor1}"
    assert got.headers["authorization"] == "Bearer ehr-secret-token"
    assert got.verified(secret_of(created)) == appointment  # signed as webhooks are
    [row] = await deliveries(runtime)
    assert (row.status, row.subject, row.event_type) == ("delivered", f"Appointment/{a}", "appointment.approved")
    assert row.message_id == got.webhook_id and got.webhook_id.startswith("msg_")


async def test_a_change_the_criteria_do_not_match_sends_nothing(
    client, login, demo, runtime, receiver, key, dispatcher
):
    await subscribe(client, key.headers, endpoint=receiver.url(), criteria="Appointment?status=booked")
    doctor = await login("doctor1")
    await decide(client, doctor, aid(demo, REQUESTED), "decline", reason="Away")  # cancelled, not booked
    await dispatcher.drain()
    assert receiver.requests() == [] and await deliveries(runtime) == []


async def test_another_doctors_appointment_never_reaches_a_doctors_subscription(
    client, login, demo, runtime, receiver, dispatcher
):
    doctor1, doctor2, support = await login("doctor1"), await login("doctor2"), await login("support1")
    await subscribe(client, doctor1.headers, endpoint=receiver.url("/doctor1"), criteria="Appointment")
    patient = demo.patients["patient1"]
    await subscribe(
        client, doctor1.headers, endpoint=receiver.url("/by-patient"), criteria=f"Appointment?patient={patient}"
    )
    await subscribe(client, support.headers, endpoint=receiver.url("/support"), criteria="Appointment")
    theirs = aid(demo, NO_TIMEZONE)  # Dr. Romero's request
    await decide(client, doctor2, theirs, "decline", reason="Away")
    await dispatcher.drain()
    assert under(receiver, "/doctor1") == [] and under(receiver, "/by-patient") == []
    [seen_by_support] = under(receiver, "/support")
    assert appointment_of(seen_by_support)["id"] == str(theirs)
    mine = aid(demo, REQUESTED)  # Dr. Berger's, Maria Schmidt's
    await decide(client, doctor1, mine)
    await dispatcher.drain()
    for base in ("/doctor1", "/by-patient"):
        [got] = under(receiver, base)
        assert got.path == f"{base}/Appointment/{mine}" and appointment_of(got)["id"] == str(mine)
    assert len(under(receiver, "/support")) == 2


async def test_without_payload_the_notification_is_an_empty_post(client, login, demo, receiver, key, dispatcher):
    created = await subscribe(
        client, key.headers, endpoint=receiver.url("/ping"), payload=False, criteria="Appointment"
    )
    await decide(client, await login("doctor1"), aid(demo, REQUESTED))
    await dispatcher.drain()
    [got] = receiver.requests()
    assert (got.method, got.path, got.body) == ("POST", "/ping", b"")
    assert "content-type" not in got.headers and got.headers["content-length"] == "0"
    stamp = datetime.fromtimestamp(int(got.headers["webhook-timestamp"]), tz=UTC)
    expected = Webhook(secret_of(created)).sign(got.webhook_id, stamp, "")
    assert got.webhook_id.startswith("msg_") and got.headers["webhook-signature"] == expected
    # The Standard Webhooks verifier accepts the empty body when told not to parse it (docs/fhir.md#notifications).
    assert Webhook(secret_of(created)).verify(got.body, dict(got.headers), json_parse=False) is None


async def test_the_owner_reads_the_delivery_log_and_no_one_else(client, login, demo, receiver, key, dispatcher):
    created = await subscribe(client, key.headers, endpoint=receiver.url("/log"), criteria="Appointment")
    log_url = f"/fhir/Subscription/{created['id']}/$deliveries"
    empty = resource_of(await client.get(log_url, headers=key.headers))
    assert empty == {"resourceType": "Parameters"}
    await decide(client, await login("doctor1"), aid(demo, REQUESTED))
    await dispatcher.drain()
    [got] = receiver.requests()
    log = resource_of(await client.get(log_url, headers=key.headers))
    [delivery] = log["parameter"]
    parts = {p["name"]: next(v for k, v in p.items() if k.startswith("value")) for p in delivery["part"]}
    assert parts["id"] == got.webhook_id and parts["status"] == "delivered" and parts["attempts"] == 1
    assert parts["subject"] == {"reference": f"Appointment/{aid(demo, REQUESTED)}"}
    assert 200 <= parts["lastStatusCode"] < 300
    stranger = await subscriber_key(client, (await login("admin")).headers, name="another-ehr")
    assert (await client.get(log_url, headers=stranger.headers)).status_code == 404
    assert (await client.get(f"{log_url}?since=1", headers=key.headers)).status_code == 400


async def test_a_write_only_key_is_notified_of_its_own_requests_only(client, login, demo, receiver, dispatcher):
    admin = await login("admin")
    mine = await subscriber_key(client, admin.headers, scopes=["appointments:write", "subscriptions:write"])
    other = await make_key(client, admin.headers, name="portal")
    await subscribe(client, mine.headers, endpoint=receiver.url(), criteria="Appointment?status=proposed")
    request = {
        "resourceType": "Appointment",
        "status": "proposed",
        "start": FREE_START,
        "participant": [
            {"actor": {"reference": f"Patient/{demo.patients['patient1']}"}, "status": "accepted"},
            {"actor": {"reference": f"Practitioner/{demo.users['doctor1']}"}, "status": "needs-action"},
            {"actor": {"reference": f"Location/{demo.locations['berlin']}"}, "status": "needs-action"},
        ],
    }
    headers = {"Content-Type": FHIR_JSON}
    theirs = resource_of(
        await client.post("/fhir/Appointment", json=request, headers={**other.headers, **headers}), 201
    )
    await dispatcher.drain()
    assert receiver.requests() == []
    later = {**request, "start": FREE_START.replace("11:00", "12:00")}
    own = resource_of(await client.post("/fhir/Appointment", json=later, headers={**mine.headers, **headers}), 201)
    await dispatcher.drain()
    [got] = receiver.requests()
    assert appointment_of(got)["id"] == own["id"] != theirs["id"]


async def test_subscriptions_that_are_off_or_whose_key_was_revoked_get_nothing(
    client, login, demo, runtime, receiver, key, dispatcher
):
    admin = await login("admin")
    created = await subscribe(client, key.headers, endpoint=receiver.url("/off"), criteria="Appointment")
    off = valid({**subscription(receiver.url("/off"), "Appointment"), "id": created["id"], "status": "off"})
    resource_of(await send(client, key.headers, off, method="PUT", path=f"/{created['id']}"))
    revoked = await subscriber_key(client, admin.headers, name="revoked")
    await subscribe(client, revoked.headers, endpoint=receiver.url("/revoked"), criteria="Appointment")
    response = await client.delete(
        f"/admin/service-accounts/{revoked.account_id}/keys/{revoked.key_id}", headers=admin.headers
    )
    assert response.status_code in (200, 204), response.text
    await decide(client, await login("doctor1"), aid(demo, REQUESTED))
    await dispatcher.drain()
    assert receiver.requests() == [] and await deliveries(runtime) == []


async def test_failed_notifications_are_retried_under_the_same_webhook_id(
    client, login, demo, runtime, clock, receiver, key, dispatcher
):
    await subscribe(client, key.headers, endpoint=receiver.url(), criteria="Appointment?status=booked")
    receiver.fail_next(1, 503)
    await decide(client, await login("doctor1"), aid(demo, REQUESTED))
    assert await dispatcher.round()
    [row] = await deliveries(runtime)
    assert row.status == "pending" and row.last_status_code == 503
    clock.advance(timedelta(seconds=7))
    await dispatcher.drain()
    first, second = receiver.requests()
    assert first.webhook_id == second.webhook_id and first.body == second.body
    [row] = await deliveries(runtime)
    assert (row.status, row.attempts) == ("delivered", 2)


async def test_an_endpoint_answering_410_puts_the_subscription_into_error_until_turned_on_again(
    client, login, demo, runtime, receiver, key, dispatcher
):
    created = await subscribe(client, key.headers, endpoint=receiver.url(), criteria="Appointment")
    receiver.fail_next(1, 410)
    doctor = await login("doctor1")
    await decide(client, doctor, aid(demo, REQUESTED))
    await dispatcher.drain()
    read = resource_of(await client.get(f"/fhir/Subscription/{created['id']}", headers=key.headers))
    assert read["status"] == "error" and read["error"] == "The endpoint answered 410 Gone."
    async with runtime.db.read() as s:
        notices = (await s.scalars(select(AdminNotice))).all()
        audited = (await s.scalars(select(AuditLog).where(AuditLog.action == "fhir-subscription.error"))).all()
    assert notices == [] and len(audited) == 1 and audited[0].actor_id is None  # the owner reads it, not the admins
    # In error, changes queue nothing.
    await decide(client, doctor, aid(demo, DISCLAIMER), "decline", reason="Away")
    assert len(await deliveries(runtime)) == 1
    # Turned on again (requested), it is active and notified again.
    again = valid({**subscription(receiver.url(), "Appointment"), "id": created["id"]})
    assert resource_of(await send(client, key.headers, again, method="PUT", path=f"/{created['id']}"))["status"] == (
        "active"
    )
    await decide(client, doctor, aid(demo, PRESCRIPTION), "decline", reason="Away")
    await dispatcher.drain()
    assert len(receiver.requests()) == 2 and receiver.requests()[-1].method == "PUT"


async def test_an_endpoint_failing_for_days_puts_the_subscription_into_error(
    client, login, demo, runtime, clock, receiver, key, dispatcher
):
    created = await subscribe(client, key.headers, endpoint=receiver.url(), criteria="Appointment")
    receiver.fail_next(50, 500)
    await decide(client, await login("doctor1"), aid(demo, REQUESTED))
    assert await dispatcher.round()
    clock.advance(timedelta(days=5, hours=1))
    assert await dispatcher.round()
    read = resource_of(await client.get(f"/fhir/Subscription/{created['id']}", headers=key.headers))
    assert read["status"] == "error" and read["error"] == "Every delivery attempt failed for 5 days."
    [row] = await deliveries(runtime)
    assert row.status == "pending"  # kept: it goes out if the subscription is turned on again
