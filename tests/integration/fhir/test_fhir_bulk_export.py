"""FHIR Bulk Data export (docs/fhir.md#bulk-export): kick-off → status → manifest → files, every line a valid R4
resource; ``_type`` and ``_since``; a doctor's panel only; cancel; the requester alone sees a job; the same export
twice is the same bytes; refusals as OperationOutcomes (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import func, select, update

from doctordesk.config import Settings
from doctordesk.domain.fhir import mapping as fhir
from doctordesk.services.fhir.bulk import jobs
from doctordesk.store.fhir_tables import BulkJob
from doctordesk.store.tables import Appointment, Patient
from tests.support.bulk import ASYNC, file_bytes, kick_off, manifest, resources, run_exports
from tests.support.fhir import assert_outcome, resource_of
from tests.support.integration import make_key


@pytest.fixture
def settings(database_url: str, settings_factory: Callable[..., Settings]) -> Settings:
    # The tests run the exporter themselves; small pages, so every export spans many.
    return settings_factory(database_url, bulk_in_process=False, bulk_page_size=10)


async def _ids(runtime: Any, query: Any) -> list[str]:
    async with runtime.db.read() as s:
        return [str(i) for i in (await s.scalars(query)).all()]


async def _jobs(runtime: Any) -> int:
    async with runtime.db.read() as s:
        return int(await s.scalar(select(func.count()).select_from(BulkJob)) or 0)


async def test_an_export_runs_in_the_background_and_its_manifest_lists_valid_ndjson_files(
    client, runtime, login, clock
):
    admin = await login("admin")
    status_url = await kick_off(client, admin.headers)
    assert "/fhir/$export-status/" in status_url
    waiting = await client.get(status_url, headers=admin.headers)
    assert waiting.status_code == 202
    assert waiting.headers["x-progress"] == "queued" and int(waiting.headers["retry-after"]) > 0
    await run_exports(runtime)
    body = await manifest(client, admin.headers, status_url)
    settle = timedelta(seconds=runtime.settings.bulk_settle_seconds)
    assert settle == timedelta(minutes=1)  # the default: a change is committed within a minute of its stamp
    assert body["transactionTime"] == fhir.instant(clock.now() - settle)
    assert body["request"] == "http://testserver/fhir/$export"
    assert body["requiresAccessToken"] is True and body["error"] == []
    assert [o["type"] for o in body["output"]] == ["Patient", "Practitioner", "Location", "Appointment", "Group"]
    found = await resources(client, admin.headers, body)
    appointments = await _ids(runtime, select(Appointment.id).order_by(Appointment.id))
    patients = await _ids(runtime, select(Patient.id).order_by(Patient.id))
    assert [a["id"] for a in found["Appointment"]] == appointments  # each once, in id order
    assert [p["id"] for p in found["Patient"]] == patients
    # Each file is what a read of the same resource answers.
    first = found["Appointment"][0]
    read = resource_of(await client.get(f"/fhir/Appointment/{first['id']}", headers=admin.headers))
    assert read == first


async def test_the_output_format_may_be_given_in_each_of_its_three_spellings(client, runtime, login):
    admin = await login("admin")
    for spelling in ("application/fhir+ndjson", "application/ndjson", "ndjson"):
        status_url = await kick_off(client, admin.headers, _outputFormat=spelling, _type="Location")
        await run_exports(runtime)
        assert [o["type"] for o in (await manifest(client, admin.headers, status_url))["output"]] == ["Location"]


async def test_type_chooses_the_files_and_since_the_appointments_changed_after_it(client, runtime, login, clock):
    admin = await login("admin")
    now = clock.now()
    async with runtime.db.transaction() as s:
        ids = list((await s.scalars(select(Appointment.id).order_by(Appointment.id))).all())
        await s.execute(update(Appointment).values(updated_at=now - timedelta(days=2)))
        await s.execute(
            update(Appointment).where(Appointment.id.in_(ids[:2])).values(updated_at=now - timedelta(minutes=30))
        )
        # Changed after the export's transaction time: left for the next export.
        await s.execute(update(Appointment).where(Appointment.id == ids[2]).values(updated_at=now + timedelta(hours=1)))
    since = fhir.instant(now - timedelta(hours=1))
    status_url = await kick_off(client, admin.headers, _type="Appointment,Patient", _since=since)
    await run_exports(runtime)
    body = await manifest(client, admin.headers, status_url)
    assert [o["type"] for o in body["output"]] == ["Patient", "Appointment"]
    found = await resources(client, admin.headers, body)
    assert [a["id"] for a in found["Appointment"]] == [str(i) for i in ids[:2]]
    assert len(found["Patient"]) == len(await _ids(runtime, select(Patient.id)))  # no change time: all of them
    everything = await manifest(client, admin.headers, await _run(client, runtime, admin.headers, _type="Appointment"))
    every = await resources(client, admin.headers, everything)
    assert str(ids[2]) not in {a["id"] for a in every["Appointment"]}
    assert len(every["Appointment"]) == len(ids) - 1


async def test_each_change_is_in_exactly_one_of_two_chained_exports(client, runtime, login, clock):
    # The manifest states transactionTime to the second, settle_seconds before the kick-off, and the next export
    # asks _since=<that>. A change stamped in that second just after it, one stamped before the kick-off whose
    # transaction commits only after the first export has read (held up across the kick-off), and a later one: each
    # change is in the second export, so none is lost between the two.
    admin = await login("admin")
    settle = timedelta(seconds=runtime.settings.bulk_settle_seconds)
    stated = (clock.now() - settle).replace(microsecond=0)
    async with runtime.db.transaction() as s:
        ids = [str(i) for i in (await s.scalars(select(Appointment.id).order_by(Appointment.id))).all()]
        await s.execute(update(Appointment).values(updated_at=stated - timedelta(days=2)))
        in_its_second = stated + timedelta(milliseconds=300)
        await s.execute(update(Appointment).where(Appointment.id == int(ids[0])).values(updated_at=in_its_second))
    clock.advance(stated + settle + timedelta(milliseconds=700) - clock.now())  # the kick-off
    first = await manifest(client, admin.headers, await _run(client, runtime, admin.headers, _type="Appointment"))
    assert first["transactionTime"] == fhir.instant(stated)
    async with runtime.db.transaction() as s:
        held_up = clock.now() - timedelta(seconds=2)  # stamped before the kick-off, committed after the export read
        await s.execute(update(Appointment).where(Appointment.id == int(ids[2])).values(updated_at=held_up))
        after = clock.now() + timedelta(milliseconds=200)  # changed after the first kick-off
        await s.execute(update(Appointment).where(Appointment.id == int(ids[1])).values(updated_at=after))
    clock.advance(settle + timedelta(seconds=5))  # the next export, once these changes have settled
    chained = await _run(client, runtime, admin.headers, _type="Appointment", _since=first["transactionTime"])
    then = await manifest(client, admin.headers, chained)
    before = [a["id"] for a in (await resources(client, admin.headers, first))["Appointment"]]
    since = [a["id"] for a in (await resources(client, admin.headers, then))["Appointment"]]
    assert before == ids[1:]  # every appointment but the one changed after the stated time, as it stood
    assert since == ids[:3]  # the three changes, the held-up one included


async def _run(client: Any, runtime: Any, headers: dict[str, str], path: str = "/fhir/$export", **params: str) -> str:
    status_url = await kick_off(client, headers, path, **params)
    await run_exports(runtime)
    return status_url


async def test_a_doctor_exports_their_own_panel_and_nothing_else(client, runtime, login, demo):
    doctor = await login("doctor1")
    me = demo.users["doctor1"]
    other = demo.users["doctor2"]
    group = resource_of(await client.get(f"/fhir/Group/{me}", headers=doctor.headers))
    body = await manifest(
        client, doctor.headers, await _run(client, runtime, doctor.headers, f"/fhir/Group/{me}/$export")
    )
    found = await resources(client, doctor.headers, body)
    mine = await _ids(runtime, select(Appointment.id).where(Appointment.doctor_id == me).order_by(Appointment.id))
    panel = await _ids(
        runtime,
        select(Appointment.patient_id).where(Appointment.doctor_id == me).distinct().order_by(Appointment.patient_id),
    )
    assert [a["id"] for a in found["Appointment"]] == mine
    assert [p["id"] for p in found["Patient"]] == panel
    assert [m["entity"]["reference"] for m in group["member"]] == [f"Patient/{p}" for p in panel]
    assert group["quantity"] == len(panel) and group["managingEntity"]["reference"] == f"Practitioner/{me}"
    assert_outcome(await client.get(f"/fhir/Group/{other}", headers=doctor.headers), 404, "NOT_FOUND")
    refused = await client.get(f"/fhir/Group/{other}/$export", headers={**doctor.headers, **ASYNC})
    assert_outcome(refused, 404, "NOT_FOUND")
    for path in ("/fhir/$export", "/fhir/Patient/$export"):
        assert_outcome(await client.get(path, headers={**doctor.headers, **ASYNC}), 403, "FORBIDDEN")
    search = resource_of(await client.get("/fhir/Group", headers=doctor.headers))
    assert [e["resource"]["id"] for e in search["entry"]] == [str(me)]


async def test_an_admin_exports_any_panel_and_searches_every_group(client, runtime, login, demo):
    admin = await login("admin")
    other = demo.users["doctor2"]
    body = await manifest(
        client, admin.headers, await _run(client, runtime, admin.headers, f"/fhir/Group/{other}/$export")
    )
    found = await resources(client, admin.headers, body)
    theirs = await _ids(runtime, select(Appointment.id).where(Appointment.doctor_id == other).order_by(Appointment.id))
    assert [a["id"] for a in found.get("Appointment", [])] == theirs
    search = resource_of(await client.get("/fhir/Group", headers=admin.headers))
    assert {str(demo.users["doctor1"]), str(other)} <= {e["resource"]["id"] for e in search["entry"]}
    only = resource_of(await client.get(f"/fhir/Group?_id={other}", headers=admin.headers))
    assert [e["resource"]["id"] for e in only["entry"]] == [str(other)]
    assert_outcome(await client.get("/fhir/Group/999999", headers=admin.headers), 404, "NOT_FOUND")


async def test_a_patient_gets_the_refusal_on_every_level(client, runtime, login, demo):
    patient = await login("patient1")
    doctor = demo.users["doctor1"]
    for path in ("/fhir/$export", "/fhir/Patient/$export", f"/fhir/Group/{doctor}/$export"):
        assert_outcome(await client.get(path, headers={**patient.headers, **ASYNC}), 403, "FORBIDDEN")
    assert_outcome(await client.get(f"/fhir/Group/{doctor}", headers=patient.headers), 404, "NOT_FOUND")
    assert await _jobs(runtime) == 0


async def test_an_api_key_needs_appointments_read(client, runtime, login):
    admin = await login("admin")
    writer = await make_key(client, admin.headers, name="writer", scopes=["appointments:write"])
    assert_outcome(await client.get("/fhir/$export", headers={**writer.headers, **ASYNC}), 403, "FORBIDDEN")
    reader = await make_key(client, admin.headers, name="reader", scopes=["appointments:read"])
    body = await manifest(client, reader.headers, await _run(client, runtime, reader.headers, "/fhir/Patient/$export"))
    assert [o["type"] for o in body["output"]] == ["Patient", "Appointment"]


@pytest.mark.parametrize(
    ("params", "headers", "status", "code"),
    [
        ({}, {"Accept": "application/fhir+json"}, 400, "NOT_SUPPORTED"),  # no Prefer: respond-async
        ({"_outputFormat": "text/csv"}, ASYNC, 400, "NOT_SUPPORTED"),
        ({"_since": "2026-01-01"}, ASYNC, 400, "FIELDS_VALIDATION_ERROR"),  # a date, not an instant
        ({"_since": "yesterday"}, ASYNC, 400, "FIELDS_VALIDATION_ERROR"),
        ({"_since": "9999-01-01T00:00:00Z"}, ASYNC, 400, "FIELDS_VALIDATION_ERROR"),
        ({"_type": "Observation"}, ASYNC, 400, "NOT_SUPPORTED"),
        ({"_type": "Patient,Slot"}, ASYNC, 400, "NOT_SUPPORTED"),
        ({"_typeFilter": "Appointment?status=booked"}, ASYNC, 400, "NOT_SUPPORTED"),
    ],
)
async def test_a_bad_kick_off_is_an_operation_outcome_and_queues_nothing(
    client, runtime, login, params, headers, status, code
):
    admin = await login("admin")
    answer = await client.get("/fhir/$export", params=params, headers={**admin.headers, **headers})
    assert_outcome(answer, status, code)
    assert await _jobs(runtime) == 0


async def test_a_requester_runs_at_most_the_configured_number_of_exports_at_once(client, runtime, login):
    admin = await login("admin")
    limit = runtime.settings.bulk_max_jobs_per_requester
    for _ in range(limit):
        await kick_off(client, admin.headers)
    refused = await client.get("/fhir/$export", headers={**admin.headers, **ASYNC})
    assert_outcome(refused, 429, "TOO_MANY_REQUESTS")
    assert int(refused.headers["retry-after"]) > 0
    support = await login("support1")
    await kick_off(client, support.headers)  # another requester's count is their own
    await run_exports(runtime)
    await kick_off(client, admin.headers)  # finished jobs no longer count


async def test_delete_cancels_the_export_and_removes_its_files(client, runtime, login):
    admin = await login("admin")
    status_url = await _run(client, runtime, admin.headers, _type="Patient")
    body = await manifest(client, admin.headers, status_url)
    [output] = body["output"]
    async with runtime.db.read() as s:
        job_id = await s.scalar(select(BulkJob.id))
    folder = jobs.job_dir(runtime.settings, job_id)
    assert any(folder.rglob("*.ndjson"))
    cancelled = await client.delete(status_url, headers=admin.headers)
    assert cancelled.status_code == 202
    assert not folder.exists()
    assert_outcome(await client.get(status_url, headers=admin.headers), 404, "NOT_FOUND")
    assert_outcome(await client.get(output["url"], headers=admin.headers), 404, "NOT_FOUND")
    assert_outcome(await client.delete(status_url, headers=admin.headers), 404, "NOT_FOUND")


async def test_an_export_cancelled_before_it_runs_is_never_written(client, runtime, login, settings):
    admin = await login("admin")
    status_url = await kick_off(client, admin.headers)
    assert (await client.delete(status_url, headers=admin.headers)).status_code == 202
    await run_exports(runtime)
    assert not jobs.exports_root(settings).exists() or not any(jobs.exports_root(settings).rglob("*.ndjson"))


async def test_another_requester_cannot_see_a_job_or_its_files(client, runtime, login):
    admin = await login("admin")
    status_url = await _run(client, runtime, admin.headers, _type="Location")
    url = (await manifest(client, admin.headers, status_url))["output"][0]["url"]
    support = await login("support1")
    key = await make_key(client, admin.headers, name="reader", scopes=["appointments:read"])
    doctor = await login("doctor1")
    for headers in (support.headers, key.headers, doctor.headers):
        assert_outcome(await client.get(status_url, headers=headers), 404, "NOT_FOUND")
        assert_outcome(await client.get(url, headers=headers), 404, "NOT_FOUND")
        assert_outcome(await client.delete(status_url, headers=headers), 404, "NOT_FOUND")
    assert_outcome(await client.get(url), 401, "UNAUTHORIZED")  # the files need the access token
    ndjson = {**admin.headers, "Accept": "application/fhir+ndjson"}
    assert (await client.get(url, headers=ndjson)).status_code == 200


async def test_the_same_export_twice_is_the_same_bytes(client, runtime, login, clock):
    admin = await login("admin")
    first = await manifest(client, admin.headers, await _run(client, runtime, admin.headers))
    clock.advance(timedelta(minutes=5))
    second = await manifest(client, admin.headers, await _run(client, runtime, admin.headers))
    assert [o["type"] for o in first["output"]] == [o["type"] for o in second["output"]]
    for one, two in zip(first["output"], second["output"], strict=True):
        assert one["url"] != two["url"]
        assert await file_bytes(client, admin.headers, one["url"]) == await file_bytes(
            client, admin.headers, two["url"]
        )


async def test_a_finished_export_expires_and_its_files_are_deleted(client, runtime, login, clock, settings):
    admin = await login("admin")
    status_url = await _run(client, runtime, admin.headers, _type="Location")
    async with runtime.db.read() as s:
        job_id = await s.scalar(select(BulkJob.id))
    answer = await client.get(status_url, headers=admin.headers)
    assert answer.headers["expires"]
    clock.advance(timedelta(seconds=settings.bulk_retention_seconds))
    admin = await login("admin")  # a day later: a new sign-in
    assert_outcome(await client.get(status_url, headers=admin.headers), 404, "NOT_FOUND")
    await run_exports(runtime)  # the exporter's sweep
    assert await _jobs(runtime) == 0
    assert not jobs.job_dir(settings, job_id).exists()


async def test_the_capability_statement_lists_the_export_operations(client):
    statement = resource_of(await client.get("/fhir/metadata"))
    rest = statement["rest"][0]
    assert [o["name"] for o in rest["operation"]] == ["export"]
    by_type = {r["type"]: r for r in rest["resource"]}
    assert {o["name"] for o in by_type["Group"]["operation"]} == {"export"}
    assert {o["name"] for o in by_type["Patient"]["operation"]} == {"export", "everything"}
    assert {i["code"] for i in by_type["Group"]["interaction"]} == {"read", "search-type"}
