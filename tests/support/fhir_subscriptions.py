"""Helpers for the FHIR Subscription tests: a valid R4 Subscription to send, the calls, and counts of what a
refused request must not write."""

from __future__ import annotations

import json
from typing import Any

import httpx
from sqlalchemy import func, select

from doctordesk.runtime import Runtime
from doctordesk.store.fhir_tables import FhirSubscription
from doctordesk.store.tables import AuditLog
from doctordesk.store.webhook_tables import WebhookDelivery, WebhookEndpoint
from tests.support.fhir import FHIR_JSON
from tests.support.fhir_models import validate
from tests.support.integration import BOTH, Key, make_key

SUBSCRIBER_SCOPES = [*BOTH, "subscriptions:write"]
SECRET_EXTENSION = "urn:doctordesk:fhir:signing-secret"


def subscription(
    endpoint: str = "https://ehr.example.org/fhir",
    criteria: str = "Appointment?status=booked",
    *,
    payload: bool = True,
    **overrides: Any,
) -> dict[str, Any]:
    """A Subscription resource (validated against the R4 models unless ``overrides`` break it on purpose)."""
    channel: dict[str, Any] = {"type": "rest-hook", "endpoint": endpoint}
    if payload:
        channel["payload"] = FHIR_JSON
    body: dict[str, Any] = {
        "resourceType": "Subscription",
        "status": "requested",
        "reason": "Appointments for the clinic's EHR",
        "criteria": criteria,
        "channel": channel,
    }
    body.update(overrides)
    return body


def valid(body: dict[str, Any]) -> dict[str, Any]:
    validate(body)  # every Subscription the tests mean to be accepted is valid R4
    return body


async def send(
    client: httpx.AsyncClient, headers: dict[str, str], body: Any, *, method: str = "POST", path: str = ""
) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return await client.request(
        method, f"/fhir/Subscription{path}", content=content, headers={**headers, "Content-Type": FHIR_JSON}
    )


async def subscriber_key(client: httpx.AsyncClient, admin_headers: dict[str, str], **extra: Any) -> Key:
    extra.setdefault("scopes", SUBSCRIBER_SCOPES)
    extra.setdefault("name", "ehr")
    return await make_key(client, admin_headers, **extra)


def secret_of(created: dict[str, Any]) -> str:
    [extension] = created["extension"]
    assert extension["url"] == SECRET_EXTENSION
    secret: str = extension["valueString"]
    return secret


async def stored(rt: Runtime) -> tuple[int, ...]:
    """Rows a Subscription call may write: subscriptions, endpoints, deliveries, audit entries."""
    counts = []
    async with rt.db.read() as s:
        for table in (FhirSubscription, WebhookEndpoint, WebhookDelivery, AuditLog):
            counts.append(int(await s.scalar(select(func.count()).select_from(table)) or 0))
    return tuple(counts)
