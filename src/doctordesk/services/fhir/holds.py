"""``Appointment/$hold`` and ``Appointment/$book`` of the Argonaut Scheduling IG (docs/fhir.md#scheduling).

A hold keeps one time for its holder (a service account or a patient) for ``HOLD_MINUTES``: while it lasts the
time is taken for everyone else (``services/scheduling/busy_times.py`` counts it, as the booking screen, the
integration API and Review and Approve do). ``$book`` places the request by ``place_request``, the one path of the
booking screen and the integration API (same checks, history, audit, Review and Approve, webhooks), and keeps
the time taken while the request waits for the doctor. Both run under the doctor's schedule lock, so two bookings
of one time end as one request and one refusal.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.errors import IdempotencyKeyReused, NotFound, ValidationFailed
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.fhir.errors import Unprocessable
from doctordesk.domain.integration import Integration
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_, Moment, Text
from doctordesk.runtime import Runtime
from doctordesk.services.fhir import appointments as fhir_appointments
from doctordesk.services.fhir import requests as fhir_requests
from doctordesk.services.fhir.access import Caller
from doctordesk.services.lifecycle.placing import RequestInput, check_request, place_request, record_origin
from doctordesk.services.scheduling.busy_times import lock_schedules
from doctordesk.services.scheduling.clinic_facts import cached_clinic
from doctordesk.services.uow import unit_of_work
from doctordesk.store import plain_rows
from doctordesk.store.fhir_tables import SlotHold

# How long a hold keeps a time (decision): long enough for a person to confirm on a booking site, short enough
# that an abandoned one frees the time soon. A holder has at most MAX_HOLDS unexpired holds at once; beside that,
# a patient at most ``hold_patient_week_cap`` with one doctor in one week, and a lapsed hold's time waits
# ``hold_cooldown_minutes`` before its holder may hold it again (settings; docs/booking.md#holds).
HOLD_MINUTES = 10
MAX_HOLDS = 5
# How far before a time a lapsed hold may start and still overlap it (the longest visit is far shorter).
_LONGEST_VISIT = timedelta(days=1)
HOLD_EXTENSION = "urn:doctordesk:fhir:hold"
HOLD_EXPIRES_EXTENSION = "urn:doctordesk:fhir:hold-expires"
APPT_RESOURCE = "appt-resource"
# What a request's checks name, as elements of the Appointment.
_ELEMENT = {
    "patient": "participant[Patient]",
    "doctor": "participant[Practitioner]",
    "location": "participant[Location]",
}


@dataclass(frozen=True, slots=True)
class Booked:
    resource: dict[str, Any]
    version: int


def holder_of(caller: Caller) -> str:
    if isinstance(caller, Integration):
        return f"account:{caller.service_account_id}"
    return f"user:{caller.user_id}"


def appointment_in(body: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    """The Appointment a Parameters resource carries as ``appt-resource``, without the hold extension, and the
    hold's id when it names one."""
    params = body.get("parameter")
    only = params[0] if isinstance(params, list) and len(params) == 1 and isinstance(params[0], dict) else {}
    resource = only.get("resource") if only.get("name") == APPT_RESOURCE else None
    if not isinstance(resource, dict) or resource.get("resourceType") != "Appointment":
        raise ValidationFailed(
            fields={
                "parameter": Text("One parameter {appt_resource} holding an Appointment.", appt_resource=APPT_RESOURCE)
            }
        )
    extensions = resource.get("extension", [])
    if not isinstance(extensions, list) or not all(isinstance(x, dict) for x in extensions):
        raise ValidationFailed(fields={"extension": N_("Must be a list of extensions.")})
    hold: int | None = None
    for x in extensions:
        if x.get("url") == HOLD_EXTENSION:
            hold = fhir_mapping.parse_logical_id(str(x.get("valueString", "")))
            if hold is None:
                raise ValidationFailed(fields={"extension": N_("The hold is named by its id as valueString.")})
        elif x.get("url") != HOLD_EXPIRES_EXTENSION:
            raise ValidationFailed(fields={"extension": N_("Only the hold's extensions are accepted here.")})
    # The slot $find names is its start, doctor and place, which the request carries itself.
    plain = {k: v for k, v in resource.items() if k not in ("extension", "slot")}
    if plain.get("status") in ("proposed", "pending"):
        plain["status"] = "proposed"  # $find answers proposed appointments, $hold pending ones
    return plain, hold


def _request(caller: Caller, body: dict[str, Any]) -> tuple[RequestInput, str | None, int | None]:
    fhir_requests.authorize(caller)
    resource, hold = appointment_in(body)
    req, external_id = fhir_requests.parse(resource)
    if isinstance(caller, Actor) and req.patient_id != caller.patient_id:
        raise NotFound(N_("Patient not found."))
    return req, external_id, hold


def _unprocessable(refused: ValidationFailed) -> Unprocessable:
    fields = {_ELEMENT.get(k, k): v for k, v in refused.fields.items()}
    return Unprocessable(refused.message, fields=fields)


def held(req: RequestInput, hold_id: int, expires: datetime, timezone: str, names: dict[str, str]) -> dict[str, Any]:
    """The held time as an Appointment (``pending``: not booked yet), with the hold's id and end as extensions."""
    zone = ZoneInfo(timezone)
    end = req.start + timedelta(minutes=req.duration_minutes)
    code = {"system": fhir_mapping.SERVICE_SYSTEM, "code": req.service}
    return {
        "resourceType": "Appointment",
        "extension": [
            {"url": HOLD_EXTENSION, "valueString": str(hold_id)},
            {"url": HOLD_EXPIRES_EXTENSION, "valueInstant": fhir_mapping.instant(expires)},
        ],
        "status": "pending",
        "serviceType": [{"coding": [code], "text": req.service}],
        "start": fhir_mapping.local_instant(req.start, zone),
        "end": fhir_mapping.local_instant(end, zone),
        "minutesDuration": req.duration_minutes,
        **({"comment": req.note} if req.note else {}),
        "participant": [
            {"actor": fhir_mapping.reference("Patient", req.patient_id), "required": "required", "status": "accepted"},
            {
                "actor": fhir_mapping.reference("Practitioner", req.doctor_id, names["doctor"]),
                "required": "required",
                "status": "needs-action",
            },
            {
                "actor": fhir_mapping.reference("Location", req.location_id, names["location"]),
                "required": "required",
                "status": "needs-action",
            },
        ],
    }


async def _unexpired(session: AsyncSession, holder: str, now: datetime) -> int:
    query = select(func.count()).where(
        SlotHold.holder == holder, SlotHold.expires_at > now, SlotHold.appointment_id.is_(None)
    )
    return int(await session.scalar(query) or 0)


def week_of(start: datetime, timezone: str) -> tuple[datetime, datetime]:
    """The week (Monday to Sunday, in the location's time zone) ``start`` falls in, as a UTC range."""
    zone = ZoneInfo(timezone)
    local = start.astimezone(zone)
    monday = (local - timedelta(days=local.weekday())).date()
    first = datetime(monday.year, monday.month, monday.day, tzinfo=zone)
    after = first.date() + timedelta(days=7)
    return first.astimezone(UTC), datetime(after.year, after.month, after.day, tzinfo=zone).astimezone(UTC)


async def _check_patient_week(
    session: AsyncSession, req: RequestInput, timezone: str, *, now: datetime, cap: int
) -> None:
    """A patient holds at most ``cap`` times with one doctor in one week, whoever holds them for them."""
    lo, hi = week_of(req.start, timezone)
    query = select(func.count()).where(
        SlotHold.patient_id == req.patient_id,
        SlotHold.doctor_id == req.doctor_id,
        SlotHold.start_at >= lo,
        SlotHold.start_at < hi,
        SlotHold.appointment_id.is_(None),
        SlotHold.expires_at > now,
    )
    if int(await session.scalar(query) or 0) >= cap:
        raise ValidationFailed(
            Text(
                "At most {cap} held times for one patient with one doctor in a week: book one or let one expire.",
                cap=cap,
            )
        )


async def _check_cooldown(
    session: AsyncSession, holder: str, req: RequestInput, timezone: str, *, now: datetime, cooldown: timedelta
) -> None:
    """A hold that lapsed without a booking frees its time for others: its holder may not hold a time overlapping
    it again until ``cooldown`` after it lapsed (so renewing cannot keep a time forever)."""
    end = req.start + timedelta(minutes=req.duration_minutes)
    rows = await session.execute(
        select(SlotHold.start_at, SlotHold.duration_minutes, SlotHold.expires_at).where(
            SlotHold.holder == holder,
            SlotHold.doctor_id == req.doctor_id,
            SlotHold.appointment_id.is_(None),
            SlotHold.expires_at <= now,
            SlotHold.expires_at > now - cooldown,
            SlotHold.start_at < end,
            SlotHold.start_at > req.start - _LONGEST_VISIT,
        )
    )
    lapsed = [expires for start, minutes, expires in rows.all() if start + timedelta(minutes=minutes) > req.start]
    if lapsed:
        again = max(lapsed) + cooldown
        raise ValidationFailed(
            Text("Your hold of this time lapsed: you can hold it again from {again}.", again=Moment(again, timezone))
        )


async def hold(rt: Runtime, caller: Caller, body: dict[str, Any]) -> dict[str, Any]:
    """Hold the time the Appointment names for ``HOLD_MINUTES``, by the checks of a request (a time that is not
    free, a sixth hold, the patient's cap with the doctor that week, or a time whose hold by the same holder lapsed
    within the cool-down, is 422)."""
    req, _external_id, _ = _request(caller, body)
    now = rt.clock.now()
    expires = now + timedelta(minutes=HOLD_MINUTES)
    holder = holder_of(caller)
    cooldown = timedelta(minutes=rt.settings.hold_cooldown_minutes)
    try:
        async with unit_of_work(rt) as uow:
            session = uow.session
            c = await cached_clinic(rt, session)
            await check_request(session, c, req, now=now)
            # The holder's holds lapsed before the cool-down go (booked ones stay: they keep their request's time
            # taken; recently lapsed ones stay for the cool-down to see).
            lapsed = (SlotHold.appointment_id.is_(None), SlotHold.expires_at <= now - cooldown)
            await session.execute(delete(SlotHold).where(SlotHold.holder == holder, *lapsed))
            if await _unexpired(session, holder, now) >= MAX_HOLDS:
                raise ValidationFailed(
                    Text("At most {max_holds} holds at once: book or let one expire first.", max_holds=MAX_HOLDS)
                )
            timezone = c.directory.locations[req.location_id]
            cap = rt.settings.hold_patient_week_cap
            await _check_patient_week(session, req, timezone, now=now, cap=cap)
            await _check_cooldown(session, holder, req, timezone, now=now, cooldown=cooldown)
            values = {
                "doctor_id": req.doctor_id,
                "location_id": req.location_id,
                "start_at": req.start,
                "duration_minutes": req.duration_minutes,
                "expires_at": expires,
                "holder": holder,
                "appointment_id": None,
                "created_at": now,
                "patient_id": req.patient_id,
            }
            hold_id = await plain_rows.add_returning_id(session, SlotHold, values)
    except ValidationFailed as refused:
        raise _unprocessable(refused) from None
    names = {"doctor": c.directory.doctors[req.doctor_id], "location": c.location_names[req.location_id]}
    return held(req, hold_id, expires, c.directory.locations[req.location_id], names)


async def _take_hold(session: AsyncSession, hold_id: int, holder: str, req: RequestInput, now: datetime) -> None:
    """Consume the caller's hold (locked until the transaction ends): it must be theirs, unexpired, not booked,
    and for the time asked. It stops counting as a hold now, so the request's own checks pass it by."""
    row = await session.scalar(select(SlotHold).where(SlotHold.id == hold_id).with_for_update())
    if row is None or row.holder != holder:
        raise ValidationFailed(fields={"extension": N_("No such hold of yours.")})
    if row.appointment_id is not None:
        raise ValidationFailed(fields={"extension": N_("This hold is booked already.")})
    if row.expires_at <= now:
        raise ValidationFailed(fields={"extension": N_("This hold has expired: hold the time again.")})
    same = (row.doctor_id, row.location_id, row.start_at, row.duration_minutes)
    if same != (req.doctor_id, req.location_id, req.start, req.duration_minutes):
        raise ValidationFailed(fields={"extension": N_("The hold is for another time, doctor or location.")})
    await session.execute(update(SlotHold).where(SlotHold.id == hold_id).values(expires_at=now))


async def book(rt: Runtime, caller: Caller, body: dict[str, Any]) -> Booked:
    """Place the request the Appointment names (with the caller's hold, if it names one), as the booking screen
    and the integration API do, and keep its time taken while the doctor decides."""
    req, external_id, hold_id = _request(caller, body)
    now = rt.clock.now()
    holder = holder_of(caller)
    try:
        async with unit_of_work(rt) as uow:
            session = uow.session
            await lock_schedules(session, [req.doctor_id])  # before the hold's row: the order every booking takes
            if hold_id is not None:
                await _take_hold(session, hold_id, holder, req, now)
            a = (await place_request(rt, uow, caller, req, now=now, external_id=external_id)).appointment
            if isinstance(caller, Integration):
                await record_origin(session, caller, a, note=req.note, now=now)
            values = {
                "doctor_id": req.doctor_id,
                "location_id": req.location_id,
                "start_at": req.start,
                "duration_minutes": req.duration_minutes,
                "expires_at": now,
                "holder": holder,
                "appointment_id": a.id,
                "created_at": now,
                "patient_id": req.patient_id,
            }
            if hold_id is None:
                await plain_rows.add(session, SlotHold, values)
            else:
                await session.execute(update(SlotHold).where(SlotHold.id == hold_id).values(appointment_id=a.id))
    except ValidationFailed as refused:
        raise _unprocessable(refused) from None
    except IntegrityError:
        if external_id is None:
            raise
        raise IdempotencyKeyReused(N_("This identifier belongs to another appointment.")) from None
    async with rt.db.read() as session:
        row = await fhir_appointments.read_row(session, caller, a.id)
        resource = await fhir_appointments.resource_of(session, row)
    return Booked(resource, row[0].version)
