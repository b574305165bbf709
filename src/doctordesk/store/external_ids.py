"""Rows by the clinic's external id, for bulk import and export: which table holds each kind, and lookups in
chunks (a long list of ids is never one huge statement)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from sqlalchemy import ColumnElement, Select, String, cast, literal, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.roles import Role
from doctordesk.domain.transfer.import_rows import Kind
from doctordesk.store.tables import Appointment, DoctorProfile, InsurancePolicy, Location, Patient, User, WorkHours

CHUNK = 500

MODELS: dict[Kind, Any] = {
    Kind.LOCATIONS: Location,
    Kind.DOCTORS: User,
    Kind.HOURS: WorkHours,
    Kind.PATIENTS: Patient,
    Kind.POLICIES: InsurancePolicy,
    Kind.APPOINTMENTS: Appointment,
}

# The columns an import writes, per kind (doctors: the user's, then the profile's under "profile_").
COLUMNS: dict[Kind, tuple[str, ...]] = {
    Kind.LOCATIONS: ("name", "address", "timezone"),
    Kind.DOCTORS: ("username", "display_name", "role"),
    Kind.HOURS: ("doctor_id", "location_id", "weekday", "start_time", "end_time"),
    Kind.PATIENTS: ("name", "birth_date", "email"),
    Kind.POLICIES: (
        "patient_id",
        "insurer",
        "policy_number",
        "valid_from",
        "valid_to",
        "network",
        "exclusions",
        "third_party_data",
    ),
    Kind.APPOINTMENTS: (
        "patient_id",
        "doctor_id",
        "location_id",
        "start_at",
        "duration_minutes",
        "status",
        "service",
        "decline_reason",
        "chat_enabled",
        "disclaimer_required",
        "prescription_needed",
    ),
}
PROFILE_COLUMNS = ("specialty", "can_prescribe", "timezone")


def chunks(items: Iterable[str], size: int = CHUNK) -> Iterator[list[str]]:
    batch: list[str] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _is_kind(kind: Kind) -> ColumnElement[bool] | None:
    return User.role == Role.DOCTOR.value if kind is Kind.DOCTORS else None


def _rows_query(kind: Kind) -> Select[Any]:
    model = MODELS[kind]
    columns = [model.id, model.external_id, *(getattr(model, c) for c in COLUMNS[kind])]
    if kind is Kind.APPOINTMENTS:
        columns.append(Appointment.version)
    if kind is Kind.DOCTORS:
        profile = [getattr(DoctorProfile, c).label(f"profile_{c}") for c in PROFILE_COLUMNS]
        has_profile = DoctorProfile.user_id.label("profile_user_id")
        return select(*columns, *profile, has_profile).outerjoin(DoctorProfile, DoctorProfile.user_id == User.id)
    return select(*columns)


async def rows_by_external_id(
    session: AsyncSession, kind: Kind, external_ids: Iterable[str]
) -> dict[str, dict[str, Any]]:
    """The stored rows of ``kind`` with these external ids (whatever their role, for doctors: the caller checks),
    as column dicts with ``id``."""
    model = MODELS[kind]
    found: dict[str, dict[str, Any]] = {}
    for batch in chunks(external_ids):
        result = await session.execute(_rows_query(kind).where(model.external_id.in_(batch)))
        for row in result.mappings():
            found[row["external_id"]] = dict(row)
    return found


async def ids_by_external_id(session: AsyncSession, kind: Kind, external_ids: Iterable[str]) -> dict[str, int]:
    """Ids of the stored rows of ``kind`` (doctors: users with the doctor role only) with these external ids."""
    model = MODELS[kind]
    found: dict[str, int] = {}
    condition = _is_kind(kind)
    for batch in chunks(external_ids):
        query = select(model.external_id, model.id).where(model.external_id.in_(batch))
        if condition is not None:
            query = query.where(condition)
        for ext, row_id in await session.execute(query):
            found[ext] = row_id
    return found


async def external_ids_by_id(session: AsyncSession, kind: Kind, ids: Iterable[int]) -> dict[int, str]:
    model = MODELS[kind]
    found: dict[int, str] = {}
    wanted = sorted(set(ids))
    for start in range(0, len(wanted), CHUNK):
        query = select(model.id, model.external_id).where(model.id.in_(wanted[start : start + CHUNK]))
        for row_id, ext in await session.execute(query):
            if ext is not None:
                found[row_id] = ext
    return found


async def users_by_username(session: AsyncSession, usernames: Sequence[str]) -> dict[str, str | None]:
    """username → the external id of the user who has it (None when that user has none)."""
    found: dict[str, str | None] = {}
    for batch in chunks(usernames):
        query = select(User.username, User.external_id).where(User.username.in_(batch))
        for name, ext in await session.execute(query):
            found[name] = ext
    return found


def generated_prefix(kind: Kind) -> str:
    return f"doctordesk-{kind.value}-"


async def assign_missing_external_ids(session: AsyncSession) -> dict[str, int]:
    """Give every importable row that has no external id one made from its id (``doctordesk-<kind>-<id>``), so an
    export names every row and a re-import of it finds them. Returns how many were given one, per kind."""
    given: dict[str, int] = {}
    for kind in Kind:
        model = MODELS[kind]
        statement = (
            update(model)
            .where(model.external_id.is_(None))
            .values(external_id=literal(generated_prefix(kind)) + cast(model.id, String))
            .execution_options(synchronize_session=False)
        )
        condition = _is_kind(kind)
        if condition is not None:
            statement = statement.where(condition)
        result = await session.execute(statement)
        count = int(getattr(result, "rowcount", 0) or 0)
        if count:
            given[kind.value] = count
    return given
