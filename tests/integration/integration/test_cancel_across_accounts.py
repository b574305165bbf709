"""Who may cancel an appointment another service account created (docs/integration.md#acting-on-others-appointments):
a key with ``appointments:read`` and ``appointments:write`` may, through the integration API and FHIR's ``$cancel``
alike, and the audit trail and history name the account that canceled; a key with only ``appointments:write``
may not (404, as an unknown id). SQLite and PostgreSQL."""

from __future__ import annotations

import json

from sqlalchemy import select

from doctordesk.store.tables import AppointmentHistory, AuditLog
from tests.support.fhir import FHIR_JSON
from tests.support.integration import make_key, request_body

CANCEL = {"by": "patient", "reason": "Called the clinic"}


async def _created_by_a_booking_partner(client, admin, demo) -> int:
    partner = await make_key(client, admin.headers, name="partner", scopes=["appointments:write"])
    created = await client.post(
        "/integration/v1/appointment-requests", headers=partner.headers, json=request_body(demo)
    )
    assert created.status_code == 201, created.text
    return int(created.json()["id"])


async def test_a_key_that_reads_and_writes_cancels_another_accounts_appointment_and_is_named(
    client, login, demo, runtime
):
    admin = await login("admin")
    appointment = await _created_by_a_booking_partner(client, admin, demo)
    clinic = await make_key(client, admin.headers, name="practice", scopes=["appointments:read", "appointments:write"])
    canceled = await client.post(
        f"/integration/v1/appointments/{appointment}/cancel", headers=clinic.headers, json=CANCEL
    )
    assert canceled.status_code == 200 and canceled.json()["status"]["name"] == "canceled", canceled.text
    async with runtime.db.read() as session:
        audited = (
            await session.scalars(
                select(AuditLog).where(AuditLog.entity == "appointment", AuditLog.entity_id == appointment)
            )
        ).all()
        history = (
            await session.scalars(select(AppointmentHistory).where(AppointmentHistory.appointment_id == appointment))
        ).all()
    cancels = [a for a in audited if a.details.get("action") == "cancel"]
    assert len(cancels) == 1 and cancels[0].details["service_account"]["id"] == clinic.account_id
    assert [h for h in history if h.details.get("service_account", {}).get("id") == clinic.account_id]


async def test_fhir_cancel_follows_the_same_decision(client, login, demo):
    admin = await login("admin")
    appointment = await _created_by_a_booking_partner(client, admin, demo)
    body = {
        "resourceType": "Parameters",
        "parameter": [{"name": "by", "valueCode": "clinic"}, {"name": "reason", "valueString": "Closed"}],
    }
    writer = await make_key(client, admin.headers, name="other partner", scopes=["appointments:write"])
    headers = {**writer.headers, "Content-Type": FHIR_JSON}
    hidden = await client.post(f"/fhir/Appointment/{appointment}/$cancel", headers=headers, content=json.dumps(body))
    assert hidden.status_code == 404, hidden.text
    clinic = await make_key(client, admin.headers, name="practice", scopes=["appointments:read", "appointments:write"])
    headers = {**clinic.headers, "Content-Type": FHIR_JSON}
    done = await client.post(f"/fhir/Appointment/{appointment}/$cancel", headers=headers, content=json.dumps(body))
    assert done.status_code == 200 and done.json()["status"] == "cancelled", done.text


async def test_a_write_only_key_cannot_cancel_another_accounts_appointment(client, login, demo):
    admin = await login("admin")
    appointment = await _created_by_a_booking_partner(client, admin, demo)
    other = await make_key(client, admin.headers, name="other partner", scopes=["appointments:write"])
    refused = await client.post(
        f"/integration/v1/appointments/{appointment}/cancel", headers=other.headers, json=CANCEL
    )
    assert refused.status_code == 404 and refused.json()["code"] == "NOT_FOUND"
    still = await client.get(f"/integration/v1/appointments/{appointment}", headers=other.headers)
    assert still.status_code == 404
