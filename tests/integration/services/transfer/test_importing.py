"""Bulk import and export on SQLite and PostgreSQL: every kind imports, a re-run changes nothing, bad rows are all
reported with their lines and nothing is written, --skip-invalid and --dry-run, references by external id, and
export → import round-trips (JSON and CSV)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select

from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.transfer.import_rows import KIND_ORDER, Kind
from doctordesk.services.transfer.exporting import export_rows, to_csv, to_json
from doctordesk.services.transfer.import_files import read_rows
from doctordesk.services.transfer.importing import ImportReport, import_rows
from doctordesk.store.db import Database
from doctordesk.store.seed import demo as seed
from doctordesk.store.tables import (
    Appointment,
    AppointmentHistory,
    AuditLog,
    DoctorProfile,
    InsurancePolicy,
    Location,
    Patient,
    User,
    WorkHours,
)
from tests.support import databases

NOW = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)
TABLES = (Location, User, DoctorProfile, WorkHours, Patient, InsurancePolicy, Appointment, AppointmentHistory)

CLINIC = {
    "locations": [
        {"external_id": "L-1", "name": "Berlin", "address": "Main St 1", "timezone": "Europe/Berlin"},
        {"external_id": "L-2", "name": "London", "timezone": "Europe/London"},
    ],
    "doctors": [
        {
            "external_id": "D-1",
            "username": "dr.berger",
            "name": "Dr. Berger",
            "specialty": "General practice",
            "timezone": "Europe/Berlin",
            "can_prescribe": True,
        },
        {
            "external_id": "D-2",
            "username": "dr.chen",
            "name": "Dr. Chen",
            "specialty": "Physio",
            "can_prescribe": False,
        },
    ],
    "hours": [
        {
            "external_id": "H-1",
            "doctor": "D-1",
            "location": "L-1",
            "weekday": "monday",
            "start": "08:00",
            "end": "17:00",
        },
        {
            "external_id": "H-2",
            "doctor": "D-2",
            "location": "L-2",
            "weekday": "friday",
            "start": "09:30",
            "end": "13:00",
        },
    ],
    "patients": [
        {"external_id": "P-1", "name": "Maria Schmidt", "birth_date": "1984-03-02"},
        {"external_id": "P-2", "name": "Jonas Weber"},
    ],
    "policies": [
        {
            "external_id": "PO-1",
            "patient": "P-1",
            "insurer": "Hansa Health",
            "policy_number": "HH-1",
            "valid_from": "2026-01-01",
            "valid_to": "2027-12-31",
            "network_doctors": ["D-1"],
            "network_locations": ["L-1"],
            "excluded_services": ["teledermatology"],
            "excluded_doctors": ["D-2"],
            "third_party_data": '{"member_id": "M-1"}',
        }
    ],
    "appointments": [
        {
            "external_id": "A-1",
            "patient": "P-1",
            "doctor": "D-1",
            "location": "L-1",
            "start": "2026-11-25T09:30:00+01:00",
            "duration_minutes": 45,
            "status": "approved",
        },
        {
            "external_id": "A-2",
            "patient": "P-2",
            "doctor": "D-2",
            "location": "L-2",
            "start": "2026-11-26T10:00:00Z",
            "status": "declined",
            "decline_reason": "Please see your GP first.",
            "service": "physiotherapy",
        },
    ],
}


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    database = Database(database_url)
    yield database
    await database.dispose()


async def count(db: Database, table: type) -> int:
    async with db.read() as session:
        return int(await session.scalar(select(func.count()).select_from(table)) or 0)


async def counts(db: Database) -> dict[str, int]:
    return {t.__tablename__: await count(db, t) for t in TABLES}


def write(tmp_path: Path, name: str, content: str | dict) -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content, indent=1), encoding="utf-8")
    return path


async def run(db: Database, path: Path, **options) -> ImportReport:
    rows = read_rows(path, kind=options.pop("kind", None))
    return await import_rows(db, rows, source=path.name, now=options.pop("now", NOW), **options)


def created(report: ImportReport) -> dict[str, int]:
    return {k.value: c.created for k, c in report.counts.items()}


async def test_every_kind_imports_with_references_resolved_by_external_id(db, tmp_path):
    report = await run(db, write(tmp_path, "clinic.json", CLINIC))
    assert report.bad_rows == [] and report.written
    assert created(report) == {
        "locations": 2,
        "doctors": 2,
        "hours": 2,
        "patients": 2,
        "policies": 1,
        "appointments": 2,
    }
    async with db.read() as session:
        doctor = await session.scalar(select(User).where(User.external_id == "D-1"))
        assert doctor is not None and doctor.role == "doctor" and doctor.username == "dr.berger"
        profile = await session.get(DoctorProfile, doctor.id)
        assert profile is not None and profile.timezone == "Europe/Berlin" and profile.can_prescribe
        berlin = await session.scalar(select(Location.id).where(Location.external_id == "L-1"))
        chen = await session.scalar(select(User.id).where(User.external_id == "D-2"))
        hours = await session.scalar(select(WorkHours).where(WorkHours.external_id == "H-2"))
        assert hours is not None and hours.weekday == 4 and hours.start_time == time(9, 30) and hours.doctor_id == chen
        policy = await session.scalar(select(InsurancePolicy).where(InsurancePolicy.external_id == "PO-1"))
        assert policy is not None and policy.valid_to == date(2027, 12, 31)
        assert policy.network == {"doctors": [doctor.id], "locations": [berlin]}
        assert policy.exclusions == {"services": ["teledermatology"], "doctors": [chen]}
        first = await session.scalar(select(Appointment).where(Appointment.external_id == "A-1"))
        assert first is not None and first.start_at == datetime(2026, 11, 25, 8, 30, tzinfo=UTC)
        assert first.status == Status.APPROVED and first.duration_minutes == 45 and first.doctor_id == doctor.id
        second = await session.scalar(select(Appointment).where(Appointment.external_id == "A-2"))
        assert second is not None and second.status == Status.DECLINED and second.service == "physiotherapy"
        history = (await session.scalars(select(AppointmentHistory).order_by(AppointmentHistory.id))).all()
        assert [(h.from_status, h.to_status) for h in history] == [(None, Status.APPROVED), (None, Status.DECLINED)]
        runs = (await session.scalars(select(AuditLog).where(AuditLog.action == "import"))).all()
        assert len(runs) == 1 and runs[0].details["counts"]["appointments"]["created"] == 2


async def test_imported_doctors_cannot_log_in_until_a_password_is_set(db, tmp_path):
    await run(db, write(tmp_path, "clinic.json", CLINIC))
    async with db.read() as session:
        stored = await session.scalar(select(User.password_hash).where(User.external_id == "D-1"))
    passwords = Passwords(time_cost=1, memory_kib=1024)
    assert not await passwords.verify(stored, "")
    assert not await passwords.verify(stored, stored or "x")


async def test_a_second_run_of_the_same_file_changes_nothing(db, tmp_path):
    path = write(tmp_path, "clinic.json", CLINIC)
    await run(db, path)
    before = await counts(db)
    async with db.read() as session:
        stamps = (await session.execute(select(Appointment.version, Appointment.updated_at))).all()
    again = await run(db, path, now=NOW + timedelta(hours=1))
    assert again.changes == 0 and again.written
    assert {k.value: c.unchanged for k, c in again.counts.items()} == {k: len(v) for k, v in CLINIC.items()}
    assert await counts(db) == before
    async with db.read() as session:
        assert (await session.execute(select(Appointment.version, Appointment.updated_at))).all() == stamps
    assert await count(db, AuditLog) == 1  # a run that changed nothing leaves no audit row


async def test_a_changed_row_is_updated_and_a_status_change_gets_a_history_entry(db, tmp_path):
    await run(db, write(tmp_path, "clinic.json", CLINIC))
    changed = json.loads(json.dumps(CLINIC))
    changed["appointments"][0]["status"] = "completed"
    changed["doctors"][1]["specialty"] = "Physiotherapy"
    report = await run(db, write(tmp_path, "changed.json", changed), now=NOW + timedelta(hours=1))
    assert report.counts[Kind.APPOINTMENTS].updated == 1 and report.counts[Kind.APPOINTMENTS].unchanged == 1
    assert report.counts[Kind.DOCTORS].updated == 1 and report.counts[Kind.LOCATIONS].unchanged == 2
    async with db.read() as session:
        row = await session.scalar(select(Appointment).where(Appointment.external_id == "A-1"))
        assert row is not None and row.status == Status.COMPLETED and row.version == 2
        assert row.updated_at == NOW + timedelta(hours=1)
        last = await session.scalar(select(AppointmentHistory).order_by(AppointmentHistory.id.desc()).limit(1))
        assert last is not None and (last.from_status, last.to_status) == (Status.APPROVED, Status.COMPLETED)
    assert await count(db, AuditLog) == 2


BAD_CSV = """external_id,patient,doctor,location,start,duration_minutes,status
A-1,P-1,D-1,L-1,2026-11-25T09:30:00+01:00,30,approved
A-2,P-1,D-1,L-1,2026-11-25 09:30,30,approved
A-3,P-1,D-1,L-1,2026-11-25T10:30:00+01:00,３０,approved
A-4,P-1,D-9,L-1,2026-11-25T11:30:00+01:00,30,pending
A-5,P-1,D-1,L-1,2026-11-25T12:30:00+01:00,30,requested
A-1,P-1,D-1,L-1,2026-11-25T13:30:00+01:00,30,requested
"""


async def test_a_file_with_bad_rows_reports_every_one_with_line_and_reason_and_writes_nothing(db, tmp_path):
    await run(db, write(tmp_path, "clinic.json", {k: v for k, v in CLINIC.items() if k != "appointments"}))
    before = await counts(db)
    report = await run(db, write(tmp_path, "appointments.csv", BAD_CSV))
    found = {(b.line, b.field) for b in report.bad_rows}
    assert found == {(3, "start"), (4, "duration_minutes"), (5, "doctor"), (5, "status"), (7, "external_id")}
    reasons = {b.line: b.reason for b in report.bad_rows if b.field != "status"}
    assert "not found" in reasons[5] and "D-9" in reasons[5] and "line 2" in reasons[7]
    assert all(b.source == "appointments.csv" and b.kind is Kind.APPOINTMENTS for b in report.bad_rows)
    assert not report.written and report.counts[Kind.APPOINTMENTS].invalid == 4
    assert await counts(db) == before


async def test_skip_invalid_writes_the_good_rows_and_reports_the_rest(db, tmp_path):
    await run(db, write(tmp_path, "clinic.json", {k: v for k, v in CLINIC.items() if k != "appointments"}))
    report = await run(db, write(tmp_path, "appointments.csv", BAD_CSV), skip_invalid=True)
    assert report.written and report.counts[Kind.APPOINTMENTS].created == 2
    assert len({b.line for b in report.bad_rows}) == 4
    async with db.read() as session:
        stored = set((await session.scalars(select(Appointment.external_id))).all())
    assert stored == {"A-1", "A-5"}


async def test_a_patients_email_address_is_imported_and_a_wrong_one_is_a_bad_row(db, tmp_path):
    rows = [
        {"external_id": "P-1", "name": "Maria Schmidt", "email": "maria@Example.ORG"},
        {"external_id": "P-2", "name": "Jonas Weber", "email": "jonas@"},
    ]
    report = await run(db, write(tmp_path, "clinic.json", {"patients": rows}), skip_invalid=True)
    [bad] = report.bad_rows
    assert (bad.field, bad.reason) == ("email", "not an email address (for example name@example.org)")
    async with db.read() as session:
        stored = (await session.execute(select(Patient.external_id, Patient.email))).all()
    assert [tuple(r) for r in stored] == [("P-1", "maria@example.org")]


async def test_a_file_without_a_column_keeps_what_is_stored_and_an_empty_cell_clears_it(db, tmp_path):
    first = "external_id,name,birth_date,email\nP-1,Maria Schmidt,1980-04-02,maria@example.org\n"
    first += "P-2,Jonas Weber,1975-01-20,jonas@example.org\n"
    await run(db, write(tmp_path, "patients.csv", first))
    # A list from another system, without addresses or birth dates: names change, the rest is kept.
    renamed = write(tmp_path, "renamed.csv", "external_id,name\nP-1,Maria Schmidt-Braun\nP-2,Jonas Weber\n")
    report = await run(db, renamed, kind=Kind.PATIENTS)
    assert (report.counts[Kind.PATIENTS].updated, report.counts[Kind.PATIENTS].unchanged) == (1, 1)
    # The column present with an empty cell: that patient's address is cleared on purpose.
    cleared = write(tmp_path, "cleared.csv", "external_id,name,email\nP-2,Jonas Weber,\n")
    await run(db, cleared, kind=Kind.PATIENTS)
    async with db.read() as session:
        stored = (
            await session.execute(
                select(Patient.external_id, Patient.name, Patient.birth_date, Patient.email).order_by(Patient.id)
            )
        ).all()
    assert [tuple(r) for r in stored] == [
        ("P-1", "Maria Schmidt-Braun", date(1980, 4, 2), "maria@example.org"),
        ("P-2", "Jonas Weber", date(1975, 1, 20), None),
    ]


async def test_a_doctors_time_zone_is_kept_by_a_file_without_the_column(db, tmp_path):
    await run(db, write(tmp_path, "clinic.json", CLINIC))
    renamed = {"external_id": "D-1", "username": "dr.berger", "name": "Dr. Anna Berger", "specialty": "GP"}
    await run(db, write(tmp_path, "doctors.json", {"doctors": [renamed]}))
    async with db.read() as session:
        stored = (
            await session.execute(
                select(User.display_name, DoctorProfile.timezone)
                .join(DoctorProfile, DoctorProfile.user_id == User.id)
                .where(User.external_id == "D-1")
            )
        ).one()
    assert tuple(stored) == ("Dr. Anna Berger", "Europe/Berlin")  # renamed, the zone kept


async def test_a_reference_to_a_bad_row_of_the_same_file_is_a_bad_row_too(db, tmp_path):
    clinic = json.loads(json.dumps(CLINIC))
    clinic["doctors"][0]["timezone"] = "Berlin"
    report = await run(db, write(tmp_path, "clinic.json", clinic), skip_invalid=True)
    bad = {(b.kind, b.field): b.reason for b in report.bad_rows}
    assert ("doctors", "timezone") in {(k.value, f) for k, f in bad}
    assert "a bad row of this file" in bad[(Kind.HOURS, "doctor")]
    assert "a bad row of this file" in bad[(Kind.APPOINTMENTS, "doctor")]
    assert "a bad row of this file" in bad[(Kind.POLICIES, "network_doctors")]
    assert report.counts[Kind.APPOINTMENTS].created == 1 and report.counts[Kind.DOCTORS].created == 1


async def test_json_rows_are_reported_with_the_line_they_start_on(db, tmp_path):
    text = (
        '{\n "patients": [\n  {"external_id": "P-1", "name": "A"},\n'
        '  {"external_id": "P-2",\n   "name": 5.5},\n  "x"\n ]\n}\n'
    )
    report = await run(db, write(tmp_path, "patients.json", text))
    assert {(b.line, b.field) for b in report.bad_rows} == {(4, "name"), (6, "")}
    assert await count(db, Patient) == 0


async def test_a_json_field_given_twice_in_a_row_is_a_bad_row(db, tmp_path):
    text = '[\n{"external_id": "P-1", "name": "A", "name": "B"}\n]\n'
    report = await run(db, write(tmp_path, "patients.json", text))
    assert [(b.line, b.field, b.reason) for b in report.bad_rows] == [(2, "name", "given twice")]


async def test_a_username_taken_by_another_account_is_a_bad_row(db, tmp_path):
    async with db.transaction() as session:
        await seed.seed_demo(session, Passwords(time_cost=1, memory_kib=1024), NOW)
    doctors = {"doctors": [{**CLINIC["doctors"][0], "username": "doctor1"}]}
    report = await run(db, write(tmp_path, "doctors.json", doctors))
    assert [(b.field, b.reason) for b in report.bad_rows] == [("username", "taken by another account")]


async def test_a_dry_run_counts_the_changes_and_writes_nothing(db, tmp_path):
    before = await counts(db)
    report = await run(db, write(tmp_path, "clinic.json", CLINIC), dry_run=True)
    assert report.dry_run and not report.written and report.changes == 11
    assert await counts(db) == before and await count(db, AuditLog) == 0


async def test_pending_response_keeps_a_stored_coverage_risk_code(db, tmp_path):
    clinic = json.loads(json.dumps(CLINIC))
    clinic["appointments"][0]["status"] = "pending-response"
    path = write(tmp_path, "clinic.json", clinic)
    await run(db, path)
    async with db.transaction() as session:
        row = await session.scalar(select(Appointment).where(Appointment.external_id == "A-1"))
        assert row is not None and row.status == Status.PENDING_RESPONSE
        row.status = int(Status.PENDING_RESPONSE_COVERAGE_RISK)
    assert (await run(db, path)).changes == 0


async def empty_twin(database_url: str, tmp_path: Path) -> str:
    """An empty database of the same engine: a new SQLite file, or the PostgreSQL test database emptied."""
    if database_url.startswith("sqlite"):
        return databases.sqlite_url(tmp_path / "twin", tmp_path)
    await databases.truncate_postgres(database_url)
    return database_url


async def test_export_then_import_into_an_empty_database_round_trips_as_json(db, database_url, tmp_path):
    async with db.transaction() as session:
        await seed.seed_demo(session, Passwords(time_cost=1, memory_kib=1024), NOW)
    exported = to_json(await export_rows(db, kinds=KIND_ORDER, now=NOW))
    # Re-importing the export into the same database changes nothing (the export named every row).
    assert (await run(db, write(tmp_path, "clinic.json", exported))).changes == 0
    await db.dispose()
    (tmp_path / "twin").mkdir()
    twin = Database(await empty_twin(database_url, tmp_path))
    try:
        report = await run(twin, tmp_path / "clinic.json")
        assert report.bad_rows == [] and report.counts[Kind.APPOINTMENTS].created == 32
        assert to_json(await export_rows(twin, kinds=KIND_ORDER, now=NOW)) == exported
        assert (await run(twin, tmp_path / "clinic.json")).changes == 0
    finally:
        await twin.dispose()


async def test_export_then_import_round_trips_as_csv_one_file_per_kind(db, database_url, tmp_path):
    await run(db, write(tmp_path, "clinic.json", CLINIC))
    exported = await export_rows(db, kinds=KIND_ORDER, now=NOW)
    for kind in KIND_ORDER:
        write(tmp_path, f"{kind.value}.csv", to_csv(kind, exported[kind]))
        assert (await run(db, tmp_path / f"{kind.value}.csv")).changes == 0
    await db.dispose()
    (tmp_path / "twin").mkdir()
    twin = Database(await empty_twin(database_url, tmp_path))
    try:
        for kind in KIND_ORDER:
            report = await run(twin, tmp_path / f"{kind.value}.csv")
            assert report.bad_rows == [] and report.counts[kind].created == len(CLINIC[kind.value])
        assert await export_rows(twin, kinds=KIND_ORDER, now=NOW) == exported
    finally:
        await twin.dispose()


async def test_imported_patients_are_found_by_the_lists_name_search_and_a_renamed_one_under_the_new_name(db, tmp_path):
    from doctordesk.domain.appointments.list_filter import search_words
    from doctordesk.services.appointments.list_search import matching_patients

    async def found(text: str) -> set[int]:
        async with db.read() as session:
            return set(await session.scalars(matching_patients(search_words(text))))

    await run(db, write(tmp_path, "clinic.json", CLINIC))
    async with db.read() as session:
        p1 = await session.scalar(select(Patient.id).where(Patient.external_id == "P-1"))
    assert await found("schmi") == {p1}
    renamed = json.loads(json.dumps(CLINIC))
    renamed["patients"][0]["name"] = "Maria Schmidt-Özdemir"
    await run(db, write(tmp_path, "renamed.json", renamed), now=NOW + timedelta(hours=1))
    assert await found("ozd") == {p1}
    assert await found("maria schmidt") == {p1}


async def test_formulas_round_trip_through_csv_into_an_empty_database_and_no_cell_can_run(db, database_url, tmp_path):
    import csv
    import io

    from doctordesk.domain.transfer.csv_cells import FORMULA_STARTS
    from tests.integration.test_cli_transfer_hostile import formula_clinic

    clinic = formula_clinic()
    assert (await run(db, write(tmp_path, "clinic.json", clinic))).bad_rows == []
    exported = await export_rows(db, kinds=KIND_ORDER, now=NOW)
    for kind in KIND_ORDER:
        text = to_csv(kind, exported[kind])
        assert all(not c or c[0] not in FORMULA_STARTS for row in csv.reader(io.StringIO(text)) for c in row)
        (tmp_path / f"{kind.value}.csv").write_bytes(text.encode())
    await db.dispose()
    (tmp_path / "twin").mkdir()
    twin = Database(await empty_twin(database_url, tmp_path))
    try:
        for kind in KIND_ORDER:
            report = await run(twin, tmp_path / f"{kind.value}.csv")
            assert report.bad_rows == [] and created(report).get(kind.value, 0) == len(clinic[kind.value])
        assert await export_rows(twin, kinds=KIND_ORDER, now=NOW) == exported
        names = {row["name"] for row in exported[Kind.PATIENTS]}
        assert names == {row["name"] for row in clinic["patients"]}
    finally:
        await twin.dispose()
