"""A FHIR Subscription against a real server and a real receiver on loopback: a clinic system subscribes to one
doctor's booked appointments; that doctor declining a request and another doctor's decision send nothing; the
doctor approving on the screen PUTs the booked Appointment to the receiver as application/fhir+json, signed."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.fhir_models import validate
from tests.support.live import LiveServer, serving
from tests.support.webhook_receiver import Received, WebhookReceiver

FHIR_JSON = "application/fhir+json"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serving(
        tmp_path_factory.mktemp("subscriptions"),
        DOCTORDESK_WEBHOOK_ALLOW_PRIVATE_ADDRESSES="true",
        DOCTORDESK_WEBHOOK_POLL_SECONDS="0.2",
    ) as live:
        yield live


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    r = WebhookReceiver().up()
    yield r
    r.down()


def login(server: LiveServer, username: str) -> tuple[dict[str, str], int]:
    response = httpx.post(f"{server.url}/auth/login", data={"username": username, "password": "demo"}, timeout=10)
    response.raise_for_status()
    body = response.json()
    return {"Authorization": f"Bearer {body['access_token']}"}, int(body["user"]["id"])


def subscriber_key(server: LiveServer) -> dict[str, str]:
    admin, _ = login(server, "admin")
    account = httpx.post(f"{server.url}/admin/service-accounts", headers=admin, json={"name": "ehr"}).json()
    scopes = ["appointments:read", "subscriptions:write"]
    issued = httpx.post(
        f"{server.url}/admin/service-accounts/{account['id']}/keys", headers=admin, json={"scopes": scopes}
    )
    return {"Authorization": f"Bearer {issued.json()['key']}"}


def proposed(server: LiveServer, key: dict[str, str], doctor_id: int) -> list[dict[str, Any]]:
    url = f"{server.url}/fhir/Appointment?status=proposed&practitioner=Practitioner/{doctor_id}"
    bundle = httpx.get(url, headers=key, timeout=10).json()
    return [e["resource"] for e in bundle.get("entry", []) if e["search"]["mode"] == "match"]


def decide(server: LiveServer, who: dict[str, str], appointment: dict[str, Any], action: str, **fields: str) -> None:
    version = appointment["meta"]["versionId"]
    response = httpx.post(
        f"{server.url}/profile/appointments/{appointment['id']}/{action}",
        headers=who,
        data={"version": version, **fields},
        timeout=10,
    )
    assert response.status_code == 200, response.text


def wait_for(receiver: WebhookReceiver, count: int, *, seconds: float = 20) -> list[Received]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and len(receiver.requests()) < count:
        time.sleep(0.05)
    return receiver.requests()


def test_a_subscriber_gets_the_booked_appointment_when_the_doctor_approves_on_the_screen(
    server: LiveServer, receiver: WebhookReceiver
) -> None:
    key = subscriber_key(server)
    doctor1, doctor1_id = login(server, "doctor1")
    doctor2, doctor2_id = login(server, "doctor2")
    subscription = {
        "resourceType": "Subscription",
        "status": "requested",
        "reason": "Dr. Berger's bookings for the EHR",
        "criteria": f"Appointment?status=booked&practitioner=Practitioner/{doctor1_id}",
        "channel": {"type": "rest-hook", "endpoint": receiver.url("/ehr"), "payload": FHIR_JSON},
    }
    validate(subscription)
    created = httpx.post(
        f"{server.url}/fhir/Subscription",
        content=json.dumps(subscription),
        headers={**key, "Content-Type": FHIR_JSON},
        timeout=10,
    )
    assert created.status_code == 201, created.text
    validate(created.json())
    assert created.json()["status"] == "active"

    # Unmatched: the doctor declines a request (cancelled, not booked); another doctor decides on theirs.
    first, second = proposed(server, key, doctor1_id)[:2]
    decide(server, doctor1, second, "decline", reason="Away that day")
    decide(server, doctor2, proposed(server, key, doctor2_id)[0], "decline", reason="Away that day")
    # Matched: the doctor approves the requested time on Review and Approve.
    decide(server, doctor1, first, "approve")

    [got] = wait_for(receiver, 1)
    time.sleep(1)  # the two earlier changes were committed first: had they queued anything, it would be here
    assert len(receiver.requests()) == 1
    assert (got.method, got.path) == ("PUT", f"/ehr/Appointment/{first['id']}")
    assert got.headers["content-type"] == FHIR_JSON and got.webhook_id.startswith("msg_")
    booked = json.loads(got.body)
    validate(booked)
    assert booked["id"] == first["id"] and booked["status"] == "booked"
    assert booked["participant"][1]["actor"]["reference"] == f"Practitioner/{doctor1_id}"
