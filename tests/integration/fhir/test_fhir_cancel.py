"""``Appointment/<id>/$cancel`` (docs/fhir.md#cancel): the integration API's cancel through FHIR, for API keys with
``appointments:write``: the same history, audit and outcome as ``POST /integration/v1/appointments/<id>/cancel``,
``If-Match`` for the version, 403 for anyone else before the body is read (SQLite and PostgreSQL)."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from doctordesk.store.tables import AppointmentHistory, AuditLog
from tests.integration.fhir.test_fhir_workflow import codes, statuses
from tests.support.fhir import FHIR_JSON, assert_outcome, resource_of, written
from tests.support.integration import make_key
from tests.support.review import APPROVED, PENDING_5, REQUESTED, aid


@pytest.fixture
async def key(client, login):
    return await make_key(client, (await login("admin")).headers)


def parameters(by="patient", reason="Feeling better"):
    return {
        "resourceType": "Parameters",
        "parameter": [{"name": "by", "valueCode": by}, {"name": "reason", "valueString": reason}],
    }


async def cancel(client, headers, appointment_id, body, **extra):
    return await client.post(
        f"/fhir/Appointment/{appointment_id}/$cancel",
        content=json.dumps(body) if isinstance(body, dict) else body,
        headers={**headers, "Content-Type": FHIR_JSON, **extra},
    )


async def trail(runtime, appointment_id):
    """What a cancel wrote: the history's step and details, the audit's actions."""
    async with runtime.db.read() as s:
        steps = await s.scalars(select(AppointmentHistory).where(AppointmentHistory.appointment_id == appointment_id))
        history = [(h.from_status, h.to_status, h.details) for h in steps.all()][-1]
        audit = select(AuditLog.action).where(AuditLog.entity_id == appointment_id).order_by(AuditLog.id)
        return history, list((await s.scalars(audit)).all())


async def test_a_cancel_through_fhir_is_the_integration_apis_cancel(client, key, demo, runtime):
    through_fhir, through_api = aid(demo, REQUESTED), aid(demo, APPROVED)
    before_fhir, before_api = await trail(runtime, through_fhir), await trail(runtime, through_api)
    response = await cancel(client, key.headers, through_fhir, parameters(), **{"If-Match": 'W/"1"'})
    body = resource_of(response)
    assert body["id"] == str(through_fhir) and body["status"] == "cancelled"
    assert body["cancelationReason"]["text"] == "Feeling better"
    assert codes(body) == {("appointment-cancellation-reason", "pat"), ("cancellation", "canceled")}
    assert statuses(body) == ["declined", "accepted", "declined"]
    assert response.headers["etag"] == f'W/"{body["meta"]["versionId"]}"'
    version = resource_of(await client.get(f"/fhir/Appointment/{through_api}", headers=key.headers))["meta"]
    api = await client.post(
        f"/integration/v1/appointments/{through_api}/cancel",
        headers=key.headers,
        json={"by": "patient", "reason": "Feeling better", "version": int(version["versionId"])},
    )
    assert api.status_code == 200, api.text
    (fhir_step, fhir_audit), (api_step, api_audit) = (
        await trail(runtime, through_fhir),
        await trail(runtime, through_api),
    )
    assert fhir_step[2] == api_step[2] and fhir_step[1] == api_step[1]  # the same record of who and why
    assert fhir_audit[len(before_fhir[1]) :] == api_audit[len(before_api[1]) :] != []


async def test_a_stale_version_is_412_and_changes_nothing(client, key, demo, runtime):
    before = await written(runtime)
    stale = await cancel(client, key.headers, aid(demo, PENDING_5), parameters(by="clinic"), **{"If-Match": 'W/"99"'})
    assert_outcome(stale, 412, "APPOINTMENT_CHANGED")
    assert await written(runtime) == before


async def test_only_api_keys_that_write_cancel_and_others_see_404(client, login, demo, runtime):
    target = aid(demo, REQUESTED)
    admin = (await login("admin")).headers
    reader = await make_key(client, admin, name="reader", scopes=["appointments:read"])
    writer = await make_key(client, admin, name="writer", scopes=["appointments:write"])  # not its request
    users = [(await login(user)).headers for user in ("patient1", "doctor1", "admin")]
    before = await written(runtime)  # signing in is audited: counted from here
    for headers in users:
        assert_outcome(await cancel(client, headers, target, b"not json"), 403, "FORBIDDEN")
    assert_outcome(await cancel(client, reader.headers, target, parameters()), 403, "FORBIDDEN")
    assert_outcome(await cancel(client, writer.headers, target, parameters()), 404, "NOT_FOUND")
    assert await written(runtime) == before


REASON = [{"name": "reason", "valueString": "x"}]


@pytest.mark.parametrize(
    "body",
    [
        {"resourceType": "Parameters"},
        {"resourceType": "Parameters", "parameter": [{"name": "by", "valueCode": "patient"}]},
        parameters(by="doctor"),
        parameters(reason="   "),
        parameters(reason="x" * 5000),
        {"resourceType": "Parameters", "parameter": [*parameters()["parameter"], {"name": "by", "valueCode": "x"}]},
        {"resourceType": "Parameters", "parameter": [{"name": "by", "valueString": "patient"}, *REASON]},
        {"resourceType": "Parameters", "parameter": ["by"]},
        {"resourceType": "Appointment"},
    ],
)  # fmt: skip
async def test_a_malformed_cancel_is_400_and_writes_nothing(client, key, demo, runtime, body):
    before = await written(runtime)
    assert_outcome(await cancel(client, key.headers, aid(demo, REQUESTED), body), 400, "FIELDS_VALIDATION_ERROR")
    assert await written(runtime) == before
