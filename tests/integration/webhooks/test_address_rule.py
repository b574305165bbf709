"""The private-address rule (docs/webhooks.md#addresses) on SQLite and PostgreSQL, against a receiver on loopback.

With private addresses not allowed, every spelling of a loopback, link-local or private address is refused when an
endpoint is registered, when its URL changes and as a FHIR Subscription's endpoint; and a row that got past
registration (written straight to the store), or a public-looking name that resolves to a private address
(resolution simulated by the dispatcher's base resolver), is refused again when dialled: nothing reaches the
receiver, and the attempt fails with its reason. Redirects are never followed."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select, update

from doctordesk.runtime import Runtime
from doctordesk.store.fhir_tables import FhirSubscription
from doctordesk.store.webhook_tables import WebhookDelivery, WebhookEndpoint
from doctordesk.workers.webhook_dispatcher import WebhookDispatcher
from tests.support.addresses import LOOPBACK, OTHER_PRIVATE
from tests.support.fhir import assert_outcome, resource_of
from tests.support.fhir_subscriptions import send, stored, subscriber_key, subscription
from tests.support.resolving import TableResolver
from tests.support.review import REQUESTED, aid, approve_url
from tests.support.webhook_receiver import WebhookReceiver

BASE = "/admin/webhooks"
TYPES = ["appointment.approved"]
PRIVATE = "Loopback and private addresses are not allowed."
EVERY = LOOPBACK + OTHER_PRIVATE
# What the HTTP client reports for a refused dial: this service's check, or aiohttp's own refusal of a
# non-canonical IPv4 literal (recent versions), which comes first for those.
REFUSALS = ("not a public address", "not a canonical IPv4 address")
# Spellings every aiohttp version dials when nothing stops it (the receiver gets them with the setting on).
DIALLED_WHEN_ALLOWED = ["0x7f000001", "0x7f.1", "localhost.", "localhost.localdomain", "[::ffff:127.0.0.1]"]


def allow_private(runtime: Runtime, allowed: bool) -> None:
    runtime.settings.webhook_allow_private_addresses = allowed


async def deliveries_of(runtime: Runtime, endpoint_id: int) -> list[WebhookDelivery]:
    async with runtime.db.read() as s:
        query = select(WebhookDelivery).where(WebhookDelivery.endpoint_id == endpoint_id)
        return list((await s.scalars(query.order_by(WebhookDelivery.id))).all())


async def endpoint_urls(runtime: Runtime) -> list[str]:
    async with runtime.db.read() as s:
        return list((await s.scalars(select(WebhookEndpoint.url).order_by(WebhookEndpoint.id))).all())


async def drain(runtime: Runtime, resolver: TableResolver) -> None:
    """One dispatcher built now (it reads the setting when it opens its client), resolving through ``resolver``."""
    dispatcher = WebhookDispatcher(runtime.db, settings=runtime.settings, clock=runtime.clock, resolver=resolver)
    try:
        await dispatcher.drain()
    finally:
        await dispatcher.close()


async def test_every_spelling_of_a_private_address_is_refused_at_registration_and_on_a_url_change(
    client, admin, runtime, register
):
    created = await register("https://hooks.example.org/in", TYPES)
    allow_private(runtime, False)
    for spelling in EVERY:
        url = f"http://{spelling}:8470/hook"
        response = await client.post(BASE, json={"url": url, "event_types": TYPES}, headers=admin.headers)
        assert response.status_code == 422, (spelling, response.text)
        assert response.json()["fields"] == {"url": PRIVATE}, spelling
        changed = await client.post(f"{BASE}/{created['id']}", json={"url": url}, headers=admin.headers)
        assert changed.status_code == 422 and changed.json()["fields"] == {"url": PRIVATE}, spelling
    assert await endpoint_urls(runtime) == ["https://hooks.example.org/in"]


async def test_every_spelling_of_a_private_address_is_refused_as_a_subscription_endpoint(client, admin, runtime):
    allow_private(runtime, False)
    key = await subscriber_key(client, admin.headers)
    created = resource_of(await send(client, key.headers, subscription("https://ehr.example.org/fhir")), 201)
    before = await stored(runtime)
    for spelling in EVERY:
        body = subscription(f"https://{spelling}/fhir")
        refused = await send(client, key.headers, body)
        assert_outcome(refused, 400, "FIELDS_VALIDATION_ERROR", expression="Subscription.channel.endpoint")
        changed = await send(client, key.headers, {**body, "id": created["id"]}, method="PUT", path=f"/{created['id']}")
        assert_outcome(changed, 400, "FIELDS_VALIDATION_ERROR", expression="Subscription.channel.endpoint")
    assert await stored(runtime) == before
    assert await endpoint_urls(runtime) == ["https://ehr.example.org/fhir"]


async def queue_test_event(client, admin, runtime, register, url: str) -> int:
    """An endpoint whose URL is ``url``, written straight to the store (past the registration check), with a test
    event queued for it."""
    endpoint_id = int((await register("https://hooks.example.org/in", TYPES))["id"])
    async with runtime.db.transaction() as s:
        await s.execute(update(WebhookEndpoint).where(WebhookEndpoint.id == endpoint_id).values(url=url))
    response = await client.post(f"{BASE}/{endpoint_id}/test", headers=admin.headers)
    assert response.status_code == 202, response.text
    return endpoint_id


async def test_rows_past_registration_are_refused_when_dialled_and_nothing_reaches_the_receiver(
    client, admin, runtime, clock, register, receiver
):
    endpoints = {
        spelling: await queue_test_event(
            client, admin, runtime, register, f"http://{spelling}:{receiver.port}/hook/{i}"
        )
        for i, spelling in enumerate(EVERY)
    }
    allow_private(runtime, False)
    await drain(runtime, TableResolver())
    assert receiver.requests() == []
    for spelling, endpoint_id in endpoints.items():
        [row] = await deliveries_of(runtime, endpoint_id)
        assert (row.status, row.attempts, row.last_status_code) == ("pending", 1, None), spelling
        assert any(r in (row.last_error or "") for r in REFUSALS), (spelling, row.last_error)
    # The same rows with private addresses allowed: the receiver gets them, so it was the rule that stopped them.
    allow_private(runtime, True)
    clock.advance(timedelta(minutes=1))
    await drain(runtime, TableResolver())
    reached = {r.path for r in receiver.requests()}
    assert {f"/hook/{EVERY.index(s)}" for s in DIALLED_WHEN_ALLOWED} <= reached


@pytest.mark.parametrize(
    "addresses",
    [["127.0.0.1"], ["::ffff:127.0.0.1"], ["169.254.169.254", "10.1.2.3", "fd00::1", "::1"]],
    ids=["loopback", "ipv4-mapped-loopback", "metadata-private-ula"],
)
async def test_a_public_name_that_resolves_to_private_addresses_is_refused_when_dialled(
    client, admin, runtime, clock, register, receiver, addresses
):
    allow_private(runtime, False)
    endpoint = await register(f"http://hooks.example.com:{receiver.port}/hook", TYPES)  # a public-looking name
    assert (await client.post(f"{BASE}/{endpoint['id']}/test", headers=admin.headers)).status_code == 202
    resolver = TableResolver({"hooks.example.com": addresses})
    await drain(runtime, resolver)
    assert "hooks.example.com" in resolver.asked and receiver.requests() == []
    [row] = await deliveries_of(runtime, endpoint["id"])
    assert row.status == "pending" and row.last_status_code is None
    assert f"not a public address: hooks.example.com resolves to {', '.join(addresses)}" in (row.last_error or "")
    if addresses[0].endswith("127.0.0.1"):
        # The simulated resolution does lead to the receiver: allowed, the delivery arrives.
        allow_private(runtime, True)
        clock.advance(timedelta(minutes=1))
        await drain(runtime, TableResolver({"hooks.example.com": addresses}))
        assert [r.path for r in receiver.requests()] == ["/hook"]


async def test_a_subscription_whose_endpoint_resolves_to_a_private_address_gets_nothing(
    client, login, demo, admin, runtime, receiver
):
    allow_private(runtime, False)
    key = await subscriber_key(client, admin.headers)
    endpoint = f"https://ehr.example.com:{receiver.port}/fhir"
    created = resource_of(await send(client, key.headers, subscription(endpoint)), 201)
    doctor = await login("doctor1")
    response = await client.post(approve_url(aid(demo, REQUESTED)), headers=doctor.headers, data={"version": "1"})
    assert response.status_code == 200, response.text
    await drain(runtime, TableResolver({"ehr.example.com": ["127.0.0.1"]}))
    assert receiver.requests() == []
    async with runtime.db.read() as s:
        sub = await s.get(FhirSubscription, int(created["id"]))
        assert sub is not None
        rows = (await s.scalars(select(WebhookDelivery).where(WebhookDelivery.endpoint_id == sub.endpoint_id))).all()
    [row] = rows
    assert row.attempts == 1 and "not a public address: ehr.example.com resolves to 127.0.0.1" in (row.last_error or "")


async def test_a_redirect_is_not_followed(client, admin, runtime, register, receiver, dispatcher):
    receiver.status_for["/hook"] = 307
    receiver.location_for["/hook"] = receiver.url("/elsewhere")
    endpoint: dict[str, Any] = await register(receiver.url("/hook"), TYPES)
    assert (await client.post(f"{BASE}/{endpoint['id']}/test", headers=admin.headers)).status_code == 202
    await dispatcher.drain()
    assert [r.path for r in receiver.requests()] == ["/hook"]
    [row] = await deliveries_of(runtime, endpoint["id"])
    assert (row.status, row.last_status_code, row.last_error) == ("pending", 307, "HTTP 307")


async def test_with_private_addresses_allowed_the_receiver_on_loopback_gets_its_delivery(
    client, admin, runtime, register, receiver: WebhookReceiver
):
    endpoint = await register(receiver.url("/hook"), TYPES)
    assert (await client.post(f"{BASE}/{endpoint['id']}/test", headers=admin.headers)).status_code == 202
    await drain(runtime, TableResolver())
    assert [r.path for r in receiver.requests()] == ["/hook"]
    [row] = await deliveries_of(runtime, endpoint["id"])
    assert row.status == "delivered"
