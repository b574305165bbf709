"""Appointment requests from a clinic's systems (the integration API): create one, with an Idempotency-Key, by the
scheduling rules the screens apply; read one back.

Idempotency: the first request with a key stores the key, the hash of its body and its answer in the same
transaction as the appointment. The same key with the same body gets that answer again (and nothing new is
written); with another body it is refused (409 IDEMPOTENCY_KEY_REUSED). Two requests with one key at once: the
unique (account, key) row makes the second wait for the first and then answer as a repeat. A refused request
stores nothing, its key included, so it can be corrected and sent again with the same key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.errors import Forbidden, IdempotencyKeyReused, NotFound
from doctordesk.domain.integration import IDEMPOTENCY_TTL, Integration, Scope
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.services.lifecycle.placing import RequestInput, place_request, record_origin
from doctordesk.services.scheduling.clinic_facts import cached_clinic
from doctordesk.services.uow import unit_of_work
from doctordesk.store import plain_rows
from doctordesk.store.integration_tables import IdempotencyRecord, IntegrationRequest
from doctordesk.store.tables import Appointment, Location, Patient, User

CREATED = 201


@dataclass(frozen=True, slots=True)
class Answer:
    """An answer of the integration API: HTTP status and JSON body; ``replayed``: the stored first answer."""

    status_code: int
    body: dict[str, Any]
    replayed: bool = False


def require(caller: Integration, scope: Scope) -> None:
    if not caller.has(scope):
        raise Forbidden(Text("This API key lacks the scope {value}.", value=scope.value))


async def appointment_body(session: AsyncSession, appointment_id: int) -> dict[str, Any]:
    """The integration API's view of one appointment."""
    row = (
        await session.execute(
            select(Appointment, User.display_name, Patient.name, Location, IntegrationRequest)
            .join(User, User.id == Appointment.doctor_id)
            .join(Patient, Patient.id == Appointment.patient_id)
            .join(Location, Location.id == Appointment.location_id)
            .outerjoin(IntegrationRequest, IntegrationRequest.appointment_id == Appointment.id)
            .where(Appointment.id == appointment_id)
        )
    ).one_or_none()
    if row is None:
        raise NotFound(N_("Appointment not found."))
    a, doctor, patient, loc, origin = row
    return _body(
        a,
        doctor=doctor,
        patient=patient,
        location=(loc.id, loc.name, loc.timezone),
        note=origin.note if origin else None,
        service_account=origin.service_account_id if origin else None,
    )


def _body(
    a: Appointment,
    *,
    doctor: str,
    patient: str,
    location: tuple[int, str, str],
    note: str | None,
    service_account: int | None,
) -> dict[str, Any]:
    status = Status(a.status)
    location_id, location_name, timezone = location
    return {
        "id": a.id,
        "status": {"code": int(status), "name": status.public_name},
        "start": a.start_at.astimezone(ZoneInfo(timezone)).isoformat(),
        "duration_minutes": a.duration_minutes,
        "doctor": {"id": a.doctor_id, "name": doctor},
        "location": {"id": location_id, "name": location_name, "timezone": timezone},
        "patient": {"id": a.patient_id, "name": patient},
        "service": a.service,
        "note": note,
        "service_account": service_account,
        "version": a.version,
    }


async def get_appointment(rt: Runtime, caller: Integration, appointment_id: int) -> dict[str, Any]:
    """One appointment: any, with ``appointments:read``; with only ``appointments:write``, the ones this service
    account created. Others are 404, as unknown ones."""
    if not (caller.has(Scope.APPOINTMENTS_READ) or caller.has(Scope.APPOINTMENTS_WRITE)):
        raise Forbidden(N_("This API key lacks the scope appointments:read."))
    async with rt.db.read() as session:
        await require_visible(session, caller, appointment_id)
        return await appointment_body(session, appointment_id)


async def require_visible(session: AsyncSession, caller: Integration, appointment_id: int) -> None:
    """NotFound, as for an unknown id, unless the caller may see the appointment: any, with ``appointments:read``;
    with only ``appointments:write``, the ones its service account created. Checked before anything that tells
    the appointment's state (a status or version conflict), so a caller learns nothing of what it may not see."""
    if caller.has(Scope.APPOINTMENTS_READ):
        return
    owner = await session.scalar(
        select(IntegrationRequest.service_account_id).where(IntegrationRequest.appointment_id == appointment_id)
    )
    if owner != caller.service_account_id:
        raise NotFound(N_("Appointment not found."))


async def create_request(
    rt: Runtime, caller: Integration, req: RequestInput, *, idempotency_key: str | None, request_hash: str
) -> Answer:
    """Create an appointment request (status requested) for the doctor to review, or repeat the answer stored
    for ``idempotency_key``. The doctor's list updates at once and the doctor gets a push.

    A new key is the common case: it is written without being looked up first (the unique (account, key) row
    refuses it when it is not new), and only then is the stored record read and answered from."""
    require(caller, Scope.APPOINTMENTS_WRITE)
    try:
        return await _create_once(rt, caller, req, idempotency_key=idempotency_key, request_hash=request_hash)
    except IntegrityError:
        if idempotency_key is None:
            raise
        # The key was used before (or another request with it committed first): answer from its record.
        return await _create_once(
            rt, caller, req, idempotency_key=idempotency_key, request_hash=request_hash, look_up=True
        )


async def _create_once(
    rt: Runtime,
    caller: Integration,
    req: RequestInput,
    *,
    idempotency_key: str | None,
    request_hash: str,
    look_up: bool = False,
) -> Answer:
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        record = None
        kept: dict[str, Any] | None = None
        if idempotency_key is not None:
            if look_up:
                record = await session.scalar(
                    select(IdempotencyRecord).where(
                        IdempotencyRecord.service_account_id == caller.service_account_id,
                        IdempotencyRecord.key == idempotency_key,
                    )
                )
                if record is not None and record.expires_at > now:
                    if record.request_hash != request_hash:
                        raise IdempotencyKeyReused()
                    return Answer(record.status_code, dict(record.response), replayed=True)
                if record is not None:
                    await session.delete(record)
                    await session.flush()
            kept = {
                "service_account_id": caller.service_account_id,
                "key": idempotency_key,
                "request_hash": request_hash,
                "status_code": CREATED,
                "created_at": now,
                "expires_at": now + IDEMPOTENCY_TTL,
            }
            if not rt.db.is_sqlite:
                # Taken now: a concurrent request with the same key waits here and then fails on the unique key,
                # to be answered as a repeat. (SQLite writers take turns for the whole transaction: the record is
                # written last, with the answer, in one INSERT.)
                record = IdempotencyRecord(**kept, response={})
                session.add(record)
                await session.flush()
        placed = await place_request(rt, uow, caller, req, now=now)
        a = placed.appointment
        await record_origin(session, caller, a, note=req.note, now=now)
        # Everything the answer shows is known here: the row just written, the patient's name place_request read
        # and the cached reference data place_request checked the request against.
        c = await cached_clinic(rt, session)
        body = _body(
            a,
            doctor=c.directory.doctors[a.doctor_id],
            patient=placed.patient_name,
            location=(a.location_id, c.location_names[a.location_id], c.directory.locations[a.location_id]),
            note=req.note,
            service_account=caller.service_account_id,
        )
        if record is not None:
            record.response = body
        elif kept is not None:
            await plain_rows.add(session, IdempotencyRecord, {**kept, "response": body})
    return Answer(CREATED, body)
