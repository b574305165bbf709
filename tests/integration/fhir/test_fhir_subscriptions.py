"""FHIR Subscriptions through the interface (SQLite and PostgreSQL): create (requested → active, the signing secret
once), read, search, update, delete (off for good, 410); who may subscribe; every refusal an OperationOutcome that
writes nothing. Every Subscription sent or answered is validated against the R4 models."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import func, select

from doctordesk.config import Settings
from doctordesk.domain.fhir import subscriptions as rules
from doctordesk.store.fhir_tables import FhirSubscription
from doctordesk.store.tables import AuditLog
from doctordesk.store.webhook_tables import WebhookEndpoint
from tests.support.fhir import assert_outcome, entries, resource_of
from tests.support.fhir_subscriptions import secret_of, send, stored, subscriber_key, subscription, valid
from tests.support.integration import make_key


@pytest.fixture
def settings(database_url: str, settings_factory: Callable[..., Settings]) -> Settings:
    # No dispatcher: nothing is sent anywhere from these tests.
    return settings_factory(database_url, webhook_in_process=False)


@pytest.fixture
async def admin(login):
    return await login("admin")


@pytest.fixture
async def key(client, admin):
    return await subscriber_key(client, admin.headers)


async def create(client, headers, body: dict[str, Any]) -> dict[str, Any]:
    return resource_of(await send(client, headers, valid(body)), 201)


async def test_a_key_with_subscriptions_write_creates_an_active_subscription_and_gets_its_secret_once(
    client, key, runtime, admin
):
    body = subscription(
        criteria="Appointment?status=booked,fulfilled&practitioner=Practitioner/1",
        channel={
            "type": "rest-hook",
            "endpoint": "https://ehr.example.org/fhir",
            "payload": "application/fhir+json",
            "header": ["Authorization: Bearer ehr-token"],
        },
        end="2027-06-30T00:00:00Z",
    )
    response = await send(client, key.headers, valid(body))
    created = resource_of(response, 201)
    assert created["status"] == "active" and created["criteria"] == body["criteria"]
    assert created["channel"] == body["channel"] and created["end"] == "2027-06-30T00:00:00Z"
    assert secret_of(created).startswith("whsec_")
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["location"].endswith(f"/fhir/Subscription/{created['id']}")
    read = resource_of(await client.get(f"/fhir/Subscription/{created['id']}", headers=key.headers))
    assert "extension" not in read and read["status"] == "active" and read["channel"] == body["channel"]
    [found] = entries(resource_of(await client.get("/fhir/Subscription", headers=key.headers)))
    assert found == read
    # Its channel is a webhook endpoint of its own kind, which the admin webhook API does not show.
    async with runtime.db.read() as s:
        sub = await s.get(FhirSubscription, int(created["id"]))
        endpoint = await s.get(WebhookEndpoint, sub.endpoint_id)
    assert (endpoint.kind, endpoint.url, endpoint.enabled) == ("fhir-subscription", body["channel"]["endpoint"], True)
    assert (sub.service_account_id, sub.api_key_id) == (key.account_id, key.key_id)
    assert (await client.get("/admin/webhooks", headers=admin.headers)).json()["endpoints"] == []
    assert (await client.get(f"/admin/webhooks/{endpoint.id}", headers=admin.headers)).status_code == 404
    assert (await client.get(f"/admin/webhooks/{endpoint.id}/deliveries", headers=admin.headers)).status_code == 404


async def test_creating_updating_and_deleting_is_audited_without_header_values(client, key, runtime):
    body = subscription(channel={"type": "rest-hook", "endpoint": "https://e.example.org", "header": ["X-Key: s3"]})
    created = await create(client, key.headers, body)
    path = f"/{created['id']}"
    resource_of(
        await send(client, key.headers, {**body, "id": created["id"], "status": "off"}, method="PUT", path=path)
    )
    resource_of(await client.delete(f"/fhir/Subscription{path}", headers=key.headers))
    async with runtime.db.read() as s:
        entries = select(AuditLog).where(AuditLog.entity == "fhir_subscription").order_by(AuditLog.id)
        rows = (await s.scalars(entries)).all()
    assert [r.action for r in rows] == [
        "fhir-subscription.create",
        "fhir-subscription.update",
        "fhir-subscription.delete",
    ]
    assert all(r.details["service_account"]["key_id"] == key.key_id for r in rows)
    assert rows[0].details["after"]["headers"] == ["X-Key"] and "s3" not in str([r.details for r in rows])
    assert rows[1].details["after"]["status"] == "off"


async def test_a_key_without_subscriptions_write_is_forbidden_and_nothing_is_written(client, admin, runtime, demo):
    plain = await make_key(client, admin.headers, name="plain")  # appointments:read and write only
    before = await stored(runtime)
    assert_outcome(await send(client, plain.headers, valid(subscription())), 403, "FORBIDDEN")
    assert_outcome(await client.get("/fhir/Subscription", headers=plain.headers), 403, "FORBIDDEN")
    assert await stored(runtime) == before


async def test_a_key_that_may_read_no_appointment_cannot_subscribe(client, admin, runtime):
    only = await subscriber_key(client, admin.headers, name="only", scopes=["subscriptions:write"])
    before = await stored(runtime)
    assert_outcome(await send(client, only.headers, valid(subscription())), 403, "FORBIDDEN")
    assert await stored(runtime) == before


async def test_patients_may_not_subscribe(client, login, runtime):
    patient = await login("patient1")
    before = await stored(runtime)
    assert_outcome(await send(client, patient.headers, valid(subscription())), 403, "FORBIDDEN")
    assert_outcome(await client.get("/fhir/Subscription", headers=patient.headers), 403, "FORBIDDEN")
    assert await stored(runtime) == before


async def test_a_doctor_subscribes_to_their_own_appointments_only(client, login, demo, runtime):
    doctor = await login("doctor1")
    me, other = demo.users["doctor1"], demo.users["doctor2"]
    before = await stored(runtime)
    for criteria in (f"Appointment?practitioner=Practitioner/{other}", f"Appointment?practitioner={me},{other}"):
        response = await send(client, doctor.headers, valid(subscription(criteria=criteria)))
        assert_outcome(response, 403, "FORBIDDEN", expression="Subscription.criteria")
    assert await stored(runtime) == before
    mine = await create(client, doctor.headers, subscription(criteria=f"Appointment?practitioner=Practitioner/{me}"))
    everything = await create(client, doctor.headers, subscription(criteria="Appointment"))
    assert mine["status"] == everything["status"] == "active"
    async with runtime.db.read() as s:
        owners = {r.user_id for r in (await s.scalars(select(FhirSubscription))).all()}
    assert owners == {me}


async def test_support_and_admins_may_subscribe(client, login):
    for username in ("support1", "admin"):
        user = await login(username)
        assert (await create(client, user.headers, subscription()))["status"] == "active"


BAD = [
    # (body change, status, code, element)
    ({"channel": {"type": "websocket", "endpoint": "wss://e.example.org"}}, 400, "NOT_SUPPORTED", "channel.type"),
    ({"channel": {"type": "email", "endpoint": "mailto:a@example.org"}}, 400, "NOT_SUPPORTED", "channel.type"),
    ({"channel": {"type": "pigeon", "endpoint": "https://e.example.org"}}, 400, "FIELDS_VALIDATION_ERROR",
     "channel.type"),
    ({"criteria": "Observation?code=1975-2"}, 400, "NOT_SUPPORTED", "criteria"),
    ({"criteria": "Appointment?date=ge2026-11-01"}, 400, "NOT_SUPPORTED", "criteria"),
    ({"criteria": "Appointment?status:not=booked"}, 400, "NOT_SUPPORTED", "criteria"),
    ({"criteria": "Appointment?status=confirmed"}, 400, "FIELDS_VALIDATION_ERROR", "criteria"),
    ({"criteria": "Appointment?practitioner=Patient/1"}, 400, "FIELDS_VALIDATION_ERROR", "criteria"),
    ({"criteria": "Appointment?status"}, 400, "FIELDS_VALIDATION_ERROR", "criteria"),
    ({"channel": {"type": "rest-hook", "endpoint": "http://e.example.org"}}, 400, "FIELDS_VALIDATION_ERROR",
     "channel.endpoint"),
    ({"channel": {"type": "rest-hook", "endpoint": "https://10.0.0.8/fhir"}}, 400, "FIELDS_VALIDATION_ERROR",
     "channel.endpoint"),
    ({"channel": {"type": "rest-hook", "endpoint": "https://e.example.org", "payload": "application/fhir+xml"}},
     400, "NOT_SUPPORTED", "channel.payload"),
    ({"channel": {"type": "rest-hook", "endpoint": "https://e.example.org", "header": ["Content-Type: text/x"]}},
     400, "FIELDS_VALIDATION_ERROR", "channel.header"),
    ({"status": "error"}, 400, "FIELDS_VALIDATION_ERROR", "status"),
    ({"reason": ""}, 400, "FIELDS_VALIDATION_ERROR", "reason"),
    ({"contact": [{"system": "email", "value": "ops@example.org"}]}, 400, "FIELDS_VALIDATION_ERROR", "contact"),
    ({"end": "2027-01-01T00:00:00"}, 400, "FIELDS_VALIDATION_ERROR", "end"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "status", "code", "element"), BAD)
async def test_bad_subscriptions_are_an_operation_outcome_naming_the_element_and_write_nothing(
    client, key, runtime, change, status, code, element
):
    before = await stored(runtime)
    response = await send(client, key.headers, subscription(**change))
    assert_outcome(response, status, code, expression=f"Subscription.{element}")
    assert await stored(runtime) == before


@pytest.mark.parametrize(
    "content", [b"{not json", b"[]", b'{"resourceType": "Appointment"}', b"{}", b'{"resourceType": "Subscription"}']
)
async def test_malformed_bodies_are_400_and_write_nothing(client, key, runtime, content):
    before = await stored(runtime)
    assert_outcome(await send(client, key.headers, content), 400, "FIELDS_VALIDATION_ERROR")
    assert await stored(runtime) == before


async def test_each_owner_sees_only_its_own_subscriptions(client, login, key, admin, runtime):
    doctor1, doctor2 = await login("doctor1"), await login("doctor2")
    created = await create(client, doctor1.headers, subscription())
    other_account = await subscriber_key(client, admin.headers, name="other")
    before = await stored(runtime)
    path = f"/fhir/Subscription/{created['id']}"
    for who in (doctor2.headers, key.headers, other_account.headers, admin.headers):
        assert_outcome(await client.get(path, headers=who), 404, "NOT_FOUND")
        assert_outcome(await client.delete(path, headers=who), 404, "NOT_FOUND")
        body = {**subscription(), "id": created["id"], "status": "off"}
        assert_outcome(await send(client, who, body, method="PUT", path=f"/{created['id']}"), 404, "NOT_FOUND")
        assert entries(resource_of(await client.get("/fhir/Subscription", headers=who))) == []
    assert await stored(runtime) == before
    assert resource_of(await client.get(path, headers=doctor1.headers))["status"] == "active"


async def test_an_update_turns_a_subscription_off_and_on_again(client, key, runtime):
    created = await create(client, key.headers, subscription())
    path = f"/{created['id']}"
    off = valid({**subscription(), "id": created["id"], "status": "off"})
    assert resource_of(await send(client, key.headers, off, method="PUT", path=path))["status"] == "off"
    async with runtime.db.read() as s:
        endpoint = (await s.scalars(select(WebhookEndpoint))).one()
    assert endpoint.enabled is False
    changed = {**subscription(criteria="Appointment?status=cancelled"), "id": created["id"]}
    again = resource_of(await send(client, key.headers, valid(changed), method="PUT", path=path))
    assert again["status"] == "active" and again["criteria"] == "Appointment?status=cancelled"
    assert "extension" not in again  # the secret is shown on create only
    read = resource_of(await client.get(f"/fhir/Subscription{path}", headers=key.headers))
    assert read["status"] == "active" and read["criteria"] == "Appointment?status=cancelled"


async def test_an_update_must_name_the_subscription_it_replaces(client, key, runtime):
    created = await create(client, key.headers, subscription())
    before = await stored(runtime)
    for body in (subscription(status="off"), {**subscription(status="off"), "id": "999"}):
        response = await send(client, key.headers, body, method="PUT", path=f"/{created['id']}")
        assert_outcome(response, 400, "FIELDS_VALIDATION_ERROR", expression="Subscription.id")
    bad = {**subscription(criteria="Patient?name=x"), "id": created["id"]}
    assert_outcome(await send(client, key.headers, bad, method="PUT", path=f"/{created['id']}"), 400, "NOT_SUPPORTED")
    assert await stored(runtime) == before


async def test_delete_turns_it_off_for_good_and_it_reads_410(client, key, runtime):
    created = await create(client, key.headers, subscription())
    path = f"/fhir/Subscription/{created['id']}"
    answer = resource_of(await client.delete(path, headers=key.headers))
    assert answer["resourceType"] == "OperationOutcome" and answer["issue"][0]["severity"] == "information"
    assert_outcome(await client.get(path, headers=key.headers), 410, "NOT_FOUND")
    body = {**subscription(), "id": created["id"]}
    assert_outcome(await send(client, key.headers, body, method="PUT", path=f"/{created['id']}"), 410, "NOT_FOUND")
    resource_of(await client.delete(path, headers=key.headers))  # again: the same answer
    assert entries(resource_of(await client.get("/fhir/Subscription", headers=key.headers))) == []
    async with runtime.db.read() as s:
        sub = await s.get(FhirSubscription, int(created["id"]))
        endpoint = await s.get(WebhookEndpoint, sub.endpoint_id)
    assert sub.status == "off" and sub.deleted_at is not None and endpoint.enabled is False  # kept, as history


async def test_search_by_status_and_paging(client, key):
    first = await create(client, key.headers, subscription())
    second = await create(client, key.headers, subscription(criteria="Appointment?status=cancelled"))
    off = valid({**subscription(), "id": second["id"], "status": "off"})
    resource_of(await send(client, key.headers, off, method="PUT", path=f"/{second['id']}"))
    ids = {}
    for status in ("active", "off", "error", "requested", "active,off"):
        bundle = resource_of(await client.get(f"/fhir/Subscription?status={status}", headers=key.headers))
        ids[status] = [e["id"] for e in entries(bundle)]
    assert ids == {
        "active": [first["id"]],
        "off": [second["id"]],
        "error": [],
        "requested": [],
        "active,off": [first["id"], second["id"]],
    }
    page = resource_of(await client.get("/fhir/Subscription?_count=1", headers=key.headers))
    assert [e["id"] for e in entries(page)] == [first["id"]]
    nxt = next(link["url"] for link in page["link"] if link["relation"] == "next")
    rest = resource_of(await client.get(nxt.removeprefix("http://testserver"), headers=key.headers))
    assert [e["id"] for e in entries(rest)] == [second["id"]]
    assert_outcome(
        await client.get("/fhir/Subscription?status=on", headers=key.headers), 400, "FIELDS_VALIDATION_ERROR"
    )


async def test_an_owner_keeps_at_most_twenty_subscriptions_on(client, login, runtime):
    doctor = await login("doctor1")
    created = [await create(client, doctor.headers, subscription()) for _ in range(rules.MAX_ACTIVE_PER_OWNER)]
    before = await stored(runtime)
    assert_outcome(await send(client, doctor.headers, subscription()), 422, "FIELDS_VALIDATION_ERROR")
    assert await stored(runtime) == before
    paused = valid({**subscription(), "id": created[0]["id"], "status": "off"})
    resource_of(await send(client, doctor.headers, paused, method="PUT", path=f"/{created[0]['id']}"))
    assert (await create(client, doctor.headers, subscription()))["status"] == "active"


async def test_two_creates_at_the_same_moment_never_take_an_owner_past_twenty(client, login, runtime):
    doctor = await login("doctor1")
    for _ in range(rules.MAX_ACTIVE_PER_OWNER - 1):
        await create(client, doctor.headers, subscription())
    answers = await asyncio.gather(*(send(client, doctor.headers, valid(subscription())) for _ in range(4)))
    assert sorted(a.status_code for a in answers) == [201, 422, 422, 422]
    async with runtime.db.read() as s:
        on = await s.scalar(
            select(func.count()).select_from(FhirSubscription).where(FhirSubscription.status == "active")
        )
    assert on == rules.MAX_ACTIVE_PER_OWNER
