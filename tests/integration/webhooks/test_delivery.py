"""Webhook delivery on SQLite and PostgreSQL, to a real receiver on loopback: signed events for the subscribed
types only, retries with backoff under one webhook-id, replays, restarts, and disabling."""

from __future__ import annotations

import asyncio
import os
from datetime import timedelta

import httpx
from sqlalchemy import func, select

from doctordesk.app import create_app
from doctordesk.bootstrap import build_webhook_dispatcher
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import DomainEvent
from doctordesk.services.uow import unit_of_work
from doctordesk.services.webhooks import outbox as webhook_outbox
from doctordesk.store.realtime_tables import Device, PushOutbox
from doctordesk.store.review_tables import AppointmentOffer
from doctordesk.store.tables import AuditLog
from doctordesk.store.webhook_tables import WebhookDelivery, WebhookEndpoint
from tests.support import processes
from tests.support.chat import send
from tests.support.review import PENDING_5, PENDING_9, REQUESTED, aid, approve_url, card


async def approve(client, who, appointment_id, **fields):
    response = await client.post(approve_url(appointment_id), headers=who.headers, data={"version": "1", **fields})
    assert response.status_code == 200, response.text


async def deliveries(runtime):
    async with runtime.db.read() as s:
        return (await s.scalars(select(WebhookDelivery).order_by(WebhookDelivery.id))).all()


async def test_an_approval_reaches_the_subscribed_endpoint_signed_with_its_metadata(
    client, login, demo, runtime, receiver, register, dispatcher
):
    endpoint = await register(receiver.url(), ["appointment.approved"])
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    await approve(client, doctor, a)
    await dispatcher.drain()
    [got] = receiver.requests()
    payload = got.verified(endpoint["secret"])
    assert got.webhook_id.startswith("msg_") and got.headers["content-type"] == "application/json"
    assert payload["type"] == "appointment.approved" and payload["timestamp"] == "2026-11-23T07:00:00Z"
    data = payload["data"]
    assert data["appointment_id"] == a and data["status"] == {"code": 2, "name": "approved"}
    assert data["previous_status"] == {"code": 1, "name": "requested"} and data["version"] == 2
    assert data["doctor_id"] == doctor.user["id"] and isinstance(data["patient_id"], int)
    assert data["start"].startswith("2026-11-25")
    [row] = await deliveries(runtime)
    assert (row.status, row.attempts, row.last_status_code, row.message_id) == ("delivered", 1, 204, got.webhook_id)


async def test_each_endpoint_gets_exactly_the_event_types_it_subscribed_to(
    client, login, demo, runtime, receiver, register, dispatcher
):
    await register(receiver.url("/declines-and-chat"), ["appointment.declined", "chat.message-created"])
    await register(receiver.url("/offers"), ["appointment.alternatives-offered"])
    await register(receiver.url("/approvals"), ["appointment.approved"])
    doctor = await login("doctor1")
    berlin, d1 = demo.locations["berlin"], demo.users["doctor1"]
    await approve(client, doctor, aid(demo, REQUESTED), **card(1, d1, berlin, "2026-11-24", "10:00"))
    # Another of doctor1's requests, declined.
    second = next(a for i, a in enumerate(demo.appointments) if i == 5)
    response = await client.post(
        f"/profile/appointments/{second}/decline", headers=doctor.headers, data={"version": "1", "reason": "Away"}
    )
    assert response.status_code == 200, response.text
    assert (await send(client, doctor, demo.appointments[0], "Hello support")).status_code == 200
    await dispatcher.drain()
    types = {
        path: sorted(r.json()["type"] for r in receiver.requests(path))
        for path in ("/declines-and-chat", "/offers", "/approvals")
    }
    assert types == {
        "/declines-and-chat": ["appointment.declined", "chat.message-created"],
        "/offers": ["appointment.alternatives-offered"],
        "/approvals": [],
    }
    assert len({r.webhook_id for r in receiver.requests()}) == 3


async def test_chat_text_is_sent_only_to_endpoints_that_ask_for_content(
    client, login, demo, receiver, register, dispatcher
):
    await register(receiver.url("/plain"), ["chat.message-created"])
    await register(receiver.url("/content"), ["chat.message-created"], include_content=True)
    doctor = await login("doctor1")
    assert (await send(client, doctor, demo.appointments[0], "Private words")).status_code == 200
    await dispatcher.drain()
    [plain] = [r.json()["data"] for r in receiver.requests("/plain")]
    [full] = [r.json()["data"] for r in receiver.requests("/content")]
    assert "content" not in plain and "Private words" not in str(plain)
    assert full["content"] == "Private words"
    assert plain["message_id"] == full["message_id"] and plain["sender_id"] == doctor.user["id"]


async def test_failed_attempts_are_retried_with_backoff_under_the_same_webhook_id(
    client, login, demo, runtime, clock, receiver, register, dispatcher
):
    await register(receiver.url(), ["appointment.approved"])
    receiver.fail_next(1, 503)
    receiver.fail_next(1, 500)
    await approve(client, await login("doctor1"), aid(demo, REQUESTED))
    assert await dispatcher.round()
    [row] = await deliveries(runtime)
    first_delay = (row.next_attempt_at - clock.now()).total_seconds()
    assert row.status == "pending" and row.last_status_code == 503 and 0.8 * 5 <= first_delay <= 1.2 * 5
    assert not await dispatcher.round()  # not due before the backoff
    clock.advance(timedelta(seconds=7))
    assert await dispatcher.round()
    [row] = await deliveries(runtime)
    second_delay = (row.next_attempt_at - clock.now()).total_seconds()
    assert row.last_status_code == 500 and 0.8 * 10 <= second_delay <= 1.2 * 10  # doubled
    clock.advance(timedelta(seconds=13))
    await dispatcher.drain()
    [row] = await deliveries(runtime)
    assert (row.status, row.attempts) == ("delivered", 3)
    ids = [r.webhook_id for r in receiver.requests()]
    assert len(ids) == 3 and len(set(ids)) == 1


async def test_retry_after_from_the_endpoint_is_honoured(
    client, login, demo, runtime, clock, receiver, register, dispatcher
):
    await register(receiver.url(), ["appointment.approved"])
    receiver.fail_next(1, 429, retry_after="120")
    await approve(client, await login("doctor1"), aid(demo, REQUESTED))
    await dispatcher.round()
    [row] = await deliveries(runtime)
    assert row.next_attempt_at - clock.now() >= timedelta(seconds=120)


async def test_replays_send_the_same_webhook_id_and_body_again(
    client, login, demo, runtime, clock, receiver, register, dispatcher, admin
):
    endpoint = await register(receiver.url(), ["appointment.approved"])
    await approve(client, await login("doctor1"), aid(demo, REQUESTED))
    await dispatcher.drain()
    [row] = await deliveries(runtime)
    url = f"/admin/webhooks/{endpoint['id']}/deliveries/{row.id}/replay"
    response = await client.post(url, headers=admin.headers)
    assert response.status_code == 200 and response.json()["status"] == "pending"
    await dispatcher.drain()
    first, again = receiver.requests()
    assert first.webhook_id == again.webhook_id and first.body == again.body
    assert again.verified(endpoint["secret"])["type"] == "appointment.approved"
    # A delivery that ran out of attempts is failed; "replay failed since" sends it again under its id.
    dispatcher.settings = dispatcher.settings.model_copy(update={"webhook_max_attempts": 1})
    receiver.fail_next(1, 500)
    await client.post(url, headers=admin.headers)
    await dispatcher.drain()
    [row] = await deliveries(runtime)
    assert row.status == "failed" and "gave up" in (row.last_error or "")
    response = await client.post(
        f"/admin/webhooks/{endpoint['id']}/replay", json={"since": "2026-11-23T00:00:00Z"}, headers=admin.headers
    )
    assert response.json() == {"replayed": 1}
    await dispatcher.drain()
    assert [r.webhook_id for r in receiver.requests()] == [first.webhook_id] * 4
    [row] = await deliveries(runtime)
    assert (row.status, row.replays) == ("delivered", 3)


async def test_a_restart_between_commit_and_delivery_loses_nothing(
    client, login, demo, runtime, settings, clock, receiver, register
):
    await register(receiver.url(), ["appointment.approved"])
    await approve(client, await login("doctor1"), aid(demo, REQUESTED))
    # A dispatcher leased the delivery and died before it was sent.
    [leased] = await webhook_outbox.claim(runtime.db, now=clock.now(), limit=10, lease_seconds=60)
    assert receiver.requests() == []
    clock.advance(timedelta(seconds=61))
    # A new process with its dispatcher running in-process: the delivery goes out under the same id.
    restarted = create_app(settings.model_copy(update={"webhook_in_process": True}), clock=clock)
    async with restarted.router.lifespan_context(restarted):
        for _ in range(200):
            [row] = await deliveries(runtime)
            if row.status == "delivered":
                break
            await asyncio.sleep(0.05)
    [got] = receiver.requests()
    assert got.webhook_id == leased.message_id
    assert (row.status, row.attempts) == ("delivered", 2)


async def test_the_in_process_dispatcher_delivers_as_soon_as_the_decision_commits(demo, settings, clock, receiver):
    app = create_app(settings.model_copy(update={"webhook_in_process": True, "webhook_poll_seconds": 30}), clock=clock)
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:

            async def headers(username: str) -> dict[str, str]:
                response = await c.post("/auth/login", data={"username": username, "password": "demo"})
                return {"Authorization": f"Bearer {response.json()['access_token']}"}

            body = {"url": receiver.url(), "event_types": ["appointment.approved"]}
            response = await c.post("/admin/webhooks", json=body, headers=await headers("admin"))
            assert response.status_code == 201
            response = await c.post(
                approve_url(aid(demo, REQUESTED)), headers=await headers("doctor1"), data={"version": "1"}
            )
            assert response.status_code == 200
            # Woken by the event, not by the 30 s poll.
            for _ in range(200):
                if receiver.requests():
                    break
                await asyncio.sleep(0.05)
    assert [r.json()["type"] for r in receiver.requests()] == ["appointment.approved"]


async def test_an_endpoint_failing_for_days_is_disabled_and_the_admins_are_told(
    client, login, demo, runtime, clock, receiver, register, dispatcher, admin
):
    endpoint = await register(receiver.url(), ["appointment.approved"])
    now = clock.now()
    async with runtime.db.transaction() as s:
        s.add(
            Device(
                device_key="admin-phone",
                platform="ios",
                push_token="tok",
                user_id=admin.user["id"],
                last_active_at=now,
                token_updated_at=now,
            )
        )
    receiver.fail_next(1000, 500)
    await approve(client, await login("doctor1"), aid(demo, REQUESTED))
    await dispatcher.round()
    clock.advance(timedelta(days=4, hours=23))
    await dispatcher.drain()
    admin = await login("admin")  # the first session expired meanwhile
    assert (await client.get(f"/admin/webhooks/{endpoint['id']}", headers=admin.headers)).json()["enabled"]
    clock.advance(timedelta(hours=2))
    await dispatcher.drain()
    body = (await client.get(f"/admin/webhooks/{endpoint['id']}", headers=admin.headers)).json()
    assert not body["enabled"] and "5 days" in body["disabled_reason"]
    assert body["disabled_at"] is not None and body["failing_since"] == "2026-11-23T07:00:00Z"
    notices = (await client.get("/admin/notices", headers=admin.headers)).json()["notices"]
    assert [n["details"]["endpoint_id"] for n in notices] == [endpoint["id"]]
    async with runtime.db.read() as s:
        audits = (await s.scalars(select(AuditLog.action).where(AuditLog.entity == "webhook_endpoint"))).all()
        pushes = (await s.scalars(select(PushOutbox.text).where(PushOutbox.user_id == admin.user["id"]))).all()
    assert "webhook.disable" in audits
    assert len(pushes) == 1 and "disabled" in pushes[0]
    # Disabled: nothing more is attempted, and new events are not queued for it.
    attempts = len(receiver.requests())
    clock.advance(timedelta(days=1))
    await dispatcher.drain()
    assert len(receiver.requests()) == attempts


async def test_410_gone_disables_the_endpoint_at_once(client, login, demo, runtime, receiver, register, dispatcher):
    endpoint = await register(receiver.url(), ["appointment.approved", "appointment.declined"])
    receiver.fail_next(1, 410)
    await approve(client, await login("doctor1"), aid(demo, REQUESTED))
    await dispatcher.drain()
    async with runtime.db.read() as s:
        row = await s.get(WebhookEndpoint, endpoint["id"])
        assert not row.enabled and "410" in (row.disabled_reason or "")
    [delivery] = await deliveries(runtime)
    assert delivery.status == "failed"


async def test_a_disabled_endpoint_gets_nothing_queued_and_waiting_deliveries_go_out_when_enabled(
    client, login, demo, runtime, receiver, register, dispatcher, admin
):
    endpoint = await register(receiver.url(), ["appointment.approved", "chat.message-created"])
    doctor = await login("doctor1")
    await approve(client, doctor, aid(demo, REQUESTED))  # queued while enabled
    base = f"/admin/webhooks/{endpoint['id']}"
    assert (await client.post(f"{base}/disable", json={"reason": "maintenance"}, headers=admin.headers)).json()[
        "disabled_reason"
    ] == "maintenance"
    assert (await send(client, doctor, demo.appointments[0], "while disabled")).status_code == 200
    await dispatcher.drain()
    assert receiver.requests() == []
    async with runtime.db.read() as s:
        assert await s.scalar(select(func.count()).select_from(WebhookDelivery)) == 1
    assert (await client.post(f"{base}/enable", headers=admin.headers)).json()["enabled"]
    await dispatcher.drain()
    assert [r.json()["type"] for r in receiver.requests()] == ["appointment.approved"]


async def test_a_test_event_is_delivered_signed(client, demo, receiver, register, dispatcher, admin):
    endpoint = await register(receiver.url(), ["appointment.approved"])
    response = await client.post(f"/admin/webhooks/{endpoint['id']}/test", headers=admin.headers)
    assert response.status_code == 202 and response.json()["event_type"] == "webhook.test"
    await dispatcher.drain()
    [got] = receiver.requests()
    assert got.verified(endpoint["secret"])["type"] == "webhook.test"
    assert got.webhook_id == response.json()["webhook_id"]


async def test_after_a_secret_rotation_both_secrets_verify_for_the_overlap(
    client, login, demo, runtime, clock, receiver, register, admin
):
    endpoint = await register(receiver.url(), ["appointment.approved"])
    base = f"/admin/webhooks/{endpoint['id']}"
    rotated = (await client.post(f"{base}/rotate-secret", headers=admin.headers)).json()
    assert rotated["secret"].startswith("whsec_") and rotated["secret"] != endpoint["secret"]
    await client.post(f"{base}/test", headers=admin.headers)
    dispatcher = build_webhook_dispatcher(runtime)
    try:
        await dispatcher.drain()
        clock.advance(timedelta(days=1, seconds=1))
        await client.post(f"{base}/test", headers=(await login("admin")).headers)
        await dispatcher.drain()
    finally:
        await dispatcher.close()
    during, after = receiver.requests()
    assert during.verified(endpoint["secret"]) == during.verified(rotated["secret"])
    assert len(during.headers["webhook-signature"].split(" ")) == 2
    assert after.verified(rotated["secret"])["type"] == "webhook.test"
    assert len(after.headers["webhook-signature"].split(" ")) == 1


async def test_auto_approval_and_the_patients_answers_map_to_their_event_types(
    client, login, demo, runtime, receiver, register, dispatcher
):
    await register(
        receiver.url(), ["appointment.approved", "appointment.offer-accepted", "appointment.offers-rejected"]
    )
    berlin, d1 = demo.locations["berlin"], demo.users["doctor1"]
    # An alternative equal to the request approves it.
    await approve(client, await login("doctor1"), aid(demo, REQUESTED), **card(1, d1, berlin, "2026-11-25", "09:00"))
    offers = f"/profile/appointments/{aid(demo, PENDING_5)}/offers"
    async with runtime.db.read() as s:
        offer_id = await s.scalar(
            select(AppointmentOffer.id).where(AppointmentOffer.appointment_id == aid(demo, PENDING_5)).limit(1)
        )
    patient1 = await login("patient1")
    response = await client.post(f"{offers}/{offer_id}/accept", headers=patient1.headers, data={"version": "1"})
    assert response.status_code == 200, response.text
    rejected = f"/profile/appointments/{aid(demo, PENDING_9)}/offers/reject"
    response = await client.post(rejected, headers=(await login("patient4")).headers, data={"version": "1"})
    assert response.status_code == 200, response.text
    await dispatcher.drain()
    got = {r.json()["data"]["appointment_id"]: r.json() for r in receiver.requests()}
    assert {a: (p["type"], p["data"]["status"]["name"]) for a, p in got.items()} == {
        aid(demo, REQUESTED): ("appointment.approved", "approved"),
        aid(demo, PENDING_5): ("appointment.offer-accepted", "approved"),
        aid(demo, PENDING_9): ("appointment.offers-rejected", "canceled"),
    }


async def test_after_an_endpoint_asks_to_slow_down_its_other_deliveries_wait_too(
    client, login, demo, runtime, clock, receiver, register, dispatcher, admin
):
    endpoint = await register(receiver.url(), ["appointment.approved"])
    for _ in range(3):
        response = await client.post(f"/admin/webhooks/{endpoint['id']}/test", headers=admin.headers)
        assert response.status_code == 202
    receiver.fail_next(1, 503, retry_after="300")
    await dispatcher.round()
    assert len(receiver.requests()) == 1  # the other two were not tried against an endpoint that asked for a pause
    rows = await deliveries(runtime)
    assert all(r.status == "pending" and r.next_attempt_at - clock.now() >= timedelta(seconds=300) for r in rows)
    assert sum("not sent" in (r.last_error or "") for r in rows) == 2
    assert sorted(r.attempts for r in rows) == [0, 0, 1]  # not sent: no attempt counted
    clock.advance(timedelta(seconds=400))
    await dispatcher.drain()
    assert len({r.webhook_id for r in receiver.requests()}) == 3
    assert {r.status for r in await deliveries(runtime)} == {"delivered"}


async def test_doctordesk_worker_delivers_what_the_server_queued(
    client, login, demo, database_url, settings, tmp_path, receiver, register
):
    endpoint = await register(receiver.url(), ["appointment.approved"])
    await approve(client, await login("doctor1"), aid(demo, REQUESTED))
    env = {
        **os.environ,
        "DOCTORDESK_DATABASE_URL": database_url,
        "DOCTORDESK_DATA_DIR": str(settings.data_dir),  # the server's, with its secrets key
        # The receiver is on loopback: the worker dials it only where private addresses are allowed.
        "DOCTORDESK_WEBHOOK_ALLOW_PRIVATE_ADDRESSES": "true",
    }
    output = tmp_path / "worker.log"
    process = processes.launch(["doctordesk", "worker", "--once"], env, output)
    assert await process.finished(120) == 0, output.read_text()
    [got] = receiver.requests()
    assert got.verified(endpoint["secret"])["type"] == "appointment.approved"


async def test_a_request_event_from_the_coming_integration_api_is_delivered_as_appointment_requested(
    demo, runtime, receiver, register, dispatcher
):
    await register(receiver.url(), ["appointment.requested", "appointment.canceled"])
    a = aid(demo, REQUESTED)
    async with unit_of_work(runtime) as uow:
        # The shape its transition emits for a new appointment: no previous status.
        uow.emit(DomainEvent(EventKind.APPOINTMENT_REQUEST, topics=(), data={"appointment_id": a, "from_status": None}))
        uow.emit(
            DomainEvent(
                EventKind.APPOINTMENT_CANCEL, topics=(), data={"appointment_id": a, "from_status": 1, "status": 4}
            )
        )
    await dispatcher.drain()
    got = sorted((r.json() for r in receiver.requests()), key=lambda p: p["type"])
    assert [p["type"] for p in got] == ["appointment.canceled", "appointment.requested"]
    requested = got[1]["data"]
    assert requested["status"] == {"code": 1, "name": "requested"} and "previous_status" not in requested
    assert requested["version"] == 1 and requested["appointment_id"] == a
    assert got[0]["data"]["previous_status"]["name"] == "requested"


async def test_a_stopping_dispatcher_sends_nothing_more_and_gives_its_leases_back(
    client, demo, runtime, clock, receiver, register, dispatcher, admin
):
    endpoint = await register(receiver.url(), ["appointment.approved"])
    await client.post(f"/admin/webhooks/{endpoint['id']}/test", headers=admin.headers)
    dispatcher._stopping = True  # as stop() sets it while a round is under way
    await dispatcher.round()
    assert receiver.requests() == []
    [row] = await deliveries(runtime)
    assert (row.status, row.attempts, row.next_attempt_at) == ("pending", 0, clock.now())
    await dispatcher.stop()
    fresh = build_webhook_dispatcher(runtime)
    try:
        await fresh.drain()
    finally:
        await fresh.close()
    assert len(receiver.requests()) == 1
