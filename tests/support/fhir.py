"""Helpers for the FHIR interface tests: the media type check, OperationOutcome assertions, and counts of what a
request may write."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import func, select

from doctordesk.runtime import Runtime
from doctordesk.store.integration_tables import IntegrationRequest
from doctordesk.store.review_tables import AppointmentOffer
from doctordesk.store.tables import Appointment, AppointmentHistory, AuditLog
from tests.support.fhir_models import validate

FHIR_JSON = "application/fhir+json"


def resource_of(response: httpx.Response, status: int = 200) -> dict[str, Any]:
    """The response's resource, checked: the status, the media type, and valid against the R4 models."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(FHIR_JSON)
    body: dict[str, Any] = response.json()
    validate(body)
    return body


def assert_outcome(response: httpx.Response, status: int, code: str, *, expression: str | None = None) -> None:
    """An OperationOutcome with ``status`` whose issues carry the spec's ``code`` (and ``expression``)."""
    body = resource_of(response, status)
    assert body["resourceType"] == "OperationOutcome"
    codes = {c["code"] for i in body["issue"] for c in i["details"]["coding"]}
    assert codes == {code}, body
    if expression is not None:
        assert any(expression in i.get("expression", []) for i in body["issue"]), body


async def written(rt: Runtime) -> tuple[int, ...]:
    """How many rows each table a FHIR write touches holds (a refused request changes none)."""
    counts = []
    async with rt.db.read() as s:
        for table in (Appointment, AppointmentHistory, AuditLog, IntegrationRequest, AppointmentOffer):
            counts.append(int(await s.scalar(select(func.count()).select_from(table)) or 0))
        counts.append(int(await s.scalar(select(func.sum(Appointment.version))) or 0))
    return tuple(counts)


def entries(bundle: dict[str, Any], mode: str = "match") -> list[dict[str, Any]]:
    return [e["resource"] for e in bundle.get("entry", []) if e["search"]["mode"] == mode]


def next_link(bundle: dict[str, Any]) -> str | None:
    for link in bundle["link"]:
        if link["relation"] == "next":
            url: str = link["url"]
            return url
    return None
