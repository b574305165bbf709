"""Export: the import's shapes written back out (CSV or JSON), so export → import round-trips.

Every exported row needs an external id and every reference is one, so an export first gives each row that has
none its own (``doctordesk-<kind>-<id>``), in one audited transaction; re-importing the export then finds every row.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from datetime import UTC, date, datetime, time
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.roles import Role
from doctordesk.domain.transfer.csv_cells import Cell, CsvWriter
from doctordesk.domain.transfer.import_rows import FIELDS, LIST_FIELDS, WEEKDAYS, Kind
from doctordesk.services.audit.entries import audit
from doctordesk.services.uow import worker_transaction
from doctordesk.store import external_ids
from doctordesk.store.db import Database
from doctordesk.store.tables import Appointment, DoctorProfile, InsurancePolicy, Location, Patient, User, WorkHours

ExportRow = dict[str, Any]


async def export_rows(db: Database, *, kinds: Sequence[Kind], now: datetime) -> dict[Kind, list[ExportRow]]:
    """The rows of each of ``kinds`` in the import's shape (JSON values: text, numbers, booleans, lists, null)."""
    async with worker_transaction(db) as session:
        given = await external_ids.assign_missing_external_ids(session)
        if given:
            audit(
                session,
                at=now,
                actor_id=None,
                action="export.external_ids",
                entity="import",
                entity_id=None,
                details={"given": given},
            )
        refs = _Refs(session)
        return {kind: await _EXPORTERS[kind](session, refs) for kind in kinds}


class _Refs:
    """id → external id of the rows other rows name, loaded once per kind."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session
        self.maps: dict[Kind, dict[int, str]] = {}

    async def of(self, kind: Kind) -> dict[int, str]:
        if kind not in self.maps:
            model = external_ids.MODELS[kind]
            rows = await self.session.execute(select(model.id, model.external_id))
            self.maps[kind] = {row_id: ext for row_id, ext in rows if ext is not None}
        return self.maps[kind]


def _hhmm(value: time) -> str:
    return value.strftime("%H:%M")


def _day(value: date | None) -> str | None:
    return value.isoformat() if value is not None else None


def _ids(document: Any, key: str, names: dict[int, str]) -> list[str]:
    items = document.get(key) if isinstance(document, dict) else None
    return [names[i] for i in items or [] if isinstance(i, int) and i in names]


async def _locations(session: AsyncSession, _refs: _Refs) -> list[ExportRow]:
    rows = await session.scalars(select(Location).order_by(Location.id))
    return [{"external_id": r.external_id, "name": r.name, "address": r.address, "timezone": r.timezone} for r in rows]


async def _doctors(session: AsyncSession, _refs: _Refs) -> list[ExportRow]:
    query = (
        select(User, DoctorProfile)
        .join(DoctorProfile, DoctorProfile.user_id == User.id)
        .where(User.role == Role.DOCTOR.value)
        .order_by(User.id)
    )
    return [
        {
            "external_id": user.external_id,
            "username": user.username,
            "name": user.display_name,
            "specialty": profile.specialty,
            "timezone": profile.timezone,
            "can_prescribe": profile.can_prescribe,
        }
        for user, profile in (await session.execute(query))
    ]


async def _hours(session: AsyncSession, refs: _Refs) -> list[ExportRow]:
    doctors, locations = await refs.of(Kind.DOCTORS), await refs.of(Kind.LOCATIONS)
    rows = await session.scalars(select(WorkHours).order_by(WorkHours.id))
    return [
        {
            "external_id": r.external_id,
            "doctor": doctors[r.doctor_id],
            "location": locations[r.location_id],
            "weekday": WEEKDAYS[r.weekday],
            "start": _hhmm(r.start_time),
            "end": _hhmm(r.end_time),
        }
        for r in rows
        if r.doctor_id in doctors
    ]


async def _patients(session: AsyncSession, _refs: _Refs) -> list[ExportRow]:
    rows = await session.scalars(select(Patient).order_by(Patient.id))
    return [
        {"external_id": r.external_id, "name": r.name, "birth_date": _day(r.birth_date), "email": r.email} for r in rows
    ]


async def _policies(session: AsyncSession, refs: _Refs) -> list[ExportRow]:
    patients, doctors = await refs.of(Kind.PATIENTS), await refs.of(Kind.DOCTORS)
    locations = await refs.of(Kind.LOCATIONS)
    rows = await session.scalars(select(InsurancePolicy).order_by(InsurancePolicy.id))
    exported = []
    for r in rows:
        services = r.exclusions.get("services") if isinstance(r.exclusions, dict) else None
        exported.append(
            {
                "external_id": r.external_id,
                "patient": patients[r.patient_id],
                "insurer": r.insurer,
                "policy_number": r.policy_number,
                "valid_from": _day(r.valid_from),
                "valid_to": _day(r.valid_to),
                "network_doctors": _ids(r.network, "doctors", doctors),
                "network_locations": _ids(r.network, "locations", locations),
                "excluded_services": [s for s in services or [] if isinstance(s, str)],
                "excluded_doctors": _ids(r.exclusions, "doctors", doctors),
                "third_party_data": r.third_party_data,
            }
        )
    return exported


async def _appointments(session: AsyncSession, refs: _Refs) -> list[ExportRow]:
    patients, doctors = await refs.of(Kind.PATIENTS), await refs.of(Kind.DOCTORS)
    locations = await refs.of(Kind.LOCATIONS)
    rows = await session.scalars(select(Appointment).order_by(Appointment.start_at, Appointment.id))
    return [
        {
            "external_id": r.external_id,
            "patient": patients[r.patient_id],
            "doctor": doctors[r.doctor_id],
            "location": locations[r.location_id],
            "start": r.start_at.astimezone(UTC).isoformat(),
            "duration_minutes": r.duration_minutes,
            "status": Status(r.status).public_name,
            "service": r.service,
            "decline_reason": r.decline_reason,
            "chat_enabled": r.chat_enabled,
            "disclaimer_required": r.disclaimer_required,
            "prescription_needed": r.prescription_needed,
        }
        for r in rows
    ]


_EXPORTERS = {
    Kind.LOCATIONS: _locations,
    Kind.DOCTORS: _doctors,
    Kind.HOURS: _hours,
    Kind.PATIENTS: _patients,
    Kind.POLICIES: _policies,
    Kind.APPOINTMENTS: _appointments,
}


def to_json(rows: dict[Kind, list[ExportRow]]) -> str:
    """A JSON document with a list per kind, one row per line (so an import's line numbers point at rows)."""
    parts = []
    for kind, items in rows.items():
        lines = ",\n".join("  " + json.dumps(item, ensure_ascii=False) for item in items)
        parts.append(f" {json.dumps(kind.value)}: [\n{lines}\n ]" if items else f" {json.dumps(kind.value)}: []")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def _cell(name: str, value: Any) -> Cell:
    """A field as a CSV cell: numbers stay numbers (``duration_minutes``); everything else is text, neutralised by
    ``CsvWriter`` when a spreadsheet would read it as a formula."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if name in LIST_FIELDS:
        return ";".join(value)
    if value is None or isinstance(value, int | str):
        return value
    return str(value)


def to_csv(kind: Kind, rows: list[ExportRow]) -> str:
    """One kind as CSV: the header names every field of the kind."""
    out = io.StringIO()
    writer = CsvWriter(out)
    names = list(FIELDS[kind])
    writer.row(names)
    for row in rows:
        writer.row([_cell(name, row.get(name)) for name in names])
    return out.getvalue()
