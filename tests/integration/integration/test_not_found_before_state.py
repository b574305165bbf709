"""An appointment a service account may not see is 404 on every operation, exactly as an unknown id — before any
status or version check could tell that it exists, or in which state. A key with only
``appointments:write`` sees the appointments its account created (SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.integration import FREE_START, make_key, request_body
from tests.support.review import APPROVED, CANCELED, COMPLETED, PENDING_5, aid

UNKNOWN = 999_999
OPERATIONS: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", "", None),
    ("POST", "/complete", {}),
    ("POST", "/no-show", {}),
    ("POST", "/cancel", {"by": "clinic", "reason": "Closed"}),
    ("POST", "/reschedule-request", {"start": FREE_START, "note": "later"}),
]


async def _call(client: Any, key: Any, appointment_id: int, op: tuple[str, str, Any], version: int | None) -> Any:
    method, suffix, body = op
    path = f"/integration/v1/appointments/{appointment_id}{suffix}"
    if method == "GET":
        return await client.get(path, headers=key.headers)
    sent = dict(body) if version is None else {**body, "version": version}
    return await client.post(path, headers=key.headers, json=sent)


@pytest.mark.parametrize("op", OPERATIONS, ids=[f"{m} {s or '/'}" for m, s, _ in OPERATIONS])
async def test_another_accounts_appointment_is_404_as_an_unknown_one_whatever_its_state(client, login, demo, op):
    admin = await login("admin")
    own = await make_key(client, admin.headers, name="own", scopes=["appointments:write"])
    other = await make_key(client, admin.headers, name="other", scopes=["appointments:write"])
    created = await client.post("/integration/v1/appointment-requests", headers=own.headers, json=request_body(demo))
    assert created.status_code == 201, created.text
    mine = int(created.json()["id"])
    canceled = await client.post(
        f"/integration/v1/appointments/{mine}/cancel", headers=own.headers, json={"by": "patient", "reason": "Ill"}
    )
    assert canceled.status_code == 200, canceled.text
    unknown = await _call(client, other, UNKNOWN, op, None)
    assert unknown.status_code == 404 and unknown.json()["code"] == "NOT_FOUND"
    hidden = [mine, aid(demo, COMPLETED), aid(demo, CANCELED), aid(demo, APPROVED)]
    for appointment_id in hidden:
        for version in (None, 1, 99):  # a stale version tells nothing either
            answer = await _call(client, other, appointment_id, op, version)
            assert (answer.status_code, answer.json()) == (unknown.status_code, unknown.json()), (
                appointment_id,
                version,
            )
    if op[0] == "POST":
        # The account that created it still learns its state: the check is there, only after the access check.
        again = await _call(client, own, mine, op, None)
        assert again.status_code == 409, again.text


async def test_a_key_that_reads_every_appointment_still_gets_the_state_conflict(client, login, demo):
    admin = await login("admin")
    reader = await make_key(client, admin.headers, scopes=["appointments:write", "appointments:read"])
    answer = await client.post(
        f"/integration/v1/appointments/{aid(demo, COMPLETED)}/complete", headers=reader.headers, json={}
    )
    assert answer.status_code == 409, answer.text


SCREEN_WRITES = [
    ("/profile/appointments/{id}/approve", {"version": "1"}),
    ("/profile/appointments/{id}/approve", {"version": "99"}),
    ("/profile/appointments/{id}/decline", {"version": "1", "reason": "No"}),
    ("/profile/appointments/{id}/decline", {"version": "99", "reason": "No"}),
    ("/profile/appointments/{id}/offers/1/accept", {"version": "1"}),
    ("/profile/appointments/{id}/offers/reject", {"version": "1"}),
    ("/profile/messages/send-message", {"appointment-id": "{id}", "content": "Hello"}),
]


@pytest.mark.parametrize(("path", "form"), SCREEN_WRITES, ids=[f"{p} {f}" for p, f in SCREEN_WRITES])
@pytest.mark.parametrize("who", ["doctor2", "patient2"])
async def test_a_screen_write_on_an_appointment_not_the_callers_is_404_as_an_unknown_one(
    client, login, demo, path, form, who
):
    caller = await login(who)

    async def post(appointment_id: int) -> Any:
        data = {k: v.replace("{id}", str(appointment_id)) for k, v in form.items()}
        return await client.post(path.replace("{id}", str(appointment_id)), data=data, headers=caller.headers)

    unknown = await post(UNKNOWN)
    assert unknown.status_code in (403, 404), unknown.text
    for index in (COMPLETED, CANCELED, APPROVED):
        answer = await post(aid(demo, index))
        assert (answer.status_code, answer.json()) == (unknown.status_code, unknown.json()), index


@pytest.mark.parametrize("answer", ["declined", "accepted"])
async def test_a_fhir_answer_to_an_appointment_not_the_callers_is_404_as_an_unknown_one(client, login, demo, answer):
    patient = await login("patient2")

    async def post(appointment_id: int) -> Any:
        body = {
            "resourceType": "AppointmentResponse",
            "appointment": {"reference": f"Appointment/{appointment_id}"},
            "actor": {"reference": f"Patient/{demo.patients['patient2']}"},
            "participantStatus": answer,
            **({"start": FREE_START} if answer == "accepted" else {}),
        }
        headers = {**patient.headers, "Content-Type": "application/fhir+json"}
        return await client.post("/fhir/AppointmentResponse", json=body, headers=headers)

    unknown = await post(UNKNOWN)
    assert unknown.status_code == 404, unknown.text
    for index in (COMPLETED, CANCELED, APPROVED, PENDING_5):
        response = await post(aid(demo, index))
        assert (response.status_code, response.json()) == (unknown.status_code, unknown.json()), index
