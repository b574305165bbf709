"""Demo data: a small, realistic clinic that shows every case of the product.

Accounts (password ``demo``): doctor1..doctor3, support1, support2, patient1..patient5, admin.
Feature modules add their own demo rows through ``EXTRA_SEEDERS`` (chat threads, offers, devices), in
feature_seeders.py with ``Demo``; both are named here too.
"""

from __future__ import annotations

import importlib
import json
from datetime import date, datetime, time, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.roles import Role
from doctordesk.domain.scheduling.suggestions import Hours
from doctordesk.store.seed.calendar import DemoCalendar
from doctordesk.store.seed.feature_seeders import EXTRA_SEEDERS as EXTRA_SEEDERS
from doctordesk.store.seed.feature_seeders import Demo as Demo
from doctordesk.store.seed.feature_seeders import Seeder as Seeder
from doctordesk.store.tables import (
    Appointment,
    AppointmentHistory,
    DoctorProfile,
    FeeSchedule,
    InsurancePolicy,
    Location,
    Patient,
    User,
    WorkHours,
)

DEMO_PASSWORD = "demo"
DURATION_MINUTES = 30
# Modules that append their seeders to EXTRA_SEEDERS when imported (loaded by seed_demo).
FEATURE_SEEDERS = ("doctordesk.store.seed.offers", "doctordesk.store.seed.chat")


async def is_empty(session: AsyncSession) -> bool:
    return (await session.scalar(select(func.count()).select_from(User))) == 0


class _Users:
    """Adds the demo's accounts (password ``demo``), each flushed for its id, and keeps their ids by username."""

    def __init__(self, session: AsyncSession, passwords: Passwords, now: datetime) -> None:
        self.session, self.now = session, now
        self.password_hash = passwords.hash(DEMO_PASSWORD)
        self.ids: dict[str, int] = {}

    async def add(self, username: str, role: Role, name: str) -> User:
        u = User(
            username=username,
            password_hash=self.password_hash,
            role=role.value,
            display_name=name,
            active=True,
            created_at=self.now,
        )
        self.session.add(u)
        await self.session.flush()
        self.ids[username] = u.id
        return u


async def seed_demo(session: AsyncSession, passwords: Passwords, now: datetime) -> Demo:
    """Create the demo clinic in the given (empty) database."""
    users = _Users(session, passwords, now)
    d1, d2, d3 = await _staff(session, users)
    berlin = Location(name="Berlin Mitte Clinic", address="Friedrichstrasse 100, Berlin", timezone="Europe/Berlin")
    munich = Location(name="Munich Schwabing Clinic", address="Leopoldstrasse 50, Munich", timezone="Europe/Berlin")
    london = Location(name="London Bridge Clinic", address="1 Tooley Street, London", timezone="Europe/London")
    session.add_all([berlin, munich, london])
    await session.flush()
    locations = {"berlin": berlin.id, "munich": munich.id, "london": london.id}
    calendar = _work_hours(session, (d1, d2, d3), (berlin, munich, london))
    _fees(session, (d1, d2, d3), (berlin, munich, london))
    patients = await _patients(session, users, now.date(), (d1, d2), (berlin, munich))
    specs = _appointment_specs((d1, d2, d3), (berlin, munich, london))
    appointment_ids = await _appointments(session, calendar, patients, specs, now)
    demo = Demo(users=users.ids, locations=locations, patients=patients, appointments=appointment_ids, now=now)
    for module in FEATURE_SEEDERS:
        importlib.import_module(module)
    for seeder in EXTRA_SEEDERS:
        await seeder(session, demo)
    return demo


async def _staff(session: AsyncSession, users: _Users) -> tuple[User, User, User]:
    """The doctors (with their profiles), support and the admin."""
    d1 = await users.add("doctor1", Role.DOCTOR, "Dr. Anna Berger")
    d2 = await users.add("doctor2", Role.DOCTOR, "Dr. Luis Romero")
    d3 = await users.add("doctor3", Role.DOCTOR, "Dr. Mei Chen")
    await users.add("support1", Role.SUPPORT, "Sam Keller (Support)")
    await users.add("support2", Role.SUPPORT, "Kim Novak (Support)")
    await users.add("admin", Role.ADMIN, "Clinic Admin")
    session.add_all(
        [
            DoctorProfile(user_id=d1.id, specialty="General practice", can_prescribe=True, timezone="Europe/Berlin"),
            # No timezone set: suggesting alternatives asks to confirm one.
            DoctorProfile(user_id=d2.id, specialty="Dermatology", can_prescribe=True, timezone=None),
            # Cannot prescribe: appointments that need a prescription warn.
            DoctorProfile(user_id=d3.id, specialty="Physiotherapy", can_prescribe=False, timezone="Europe/London"),
        ]
    )
    return d1, d2, d3


def _work_hours(
    session: AsyncSession, doctors: tuple[User, User, User], places: tuple[Location, Location, Location]
) -> DemoCalendar:
    """The doctors' weekly hours; the calendar the demo's appointments are placed in."""
    d1, d2, d3 = doctors
    berlin, munich, london = places
    hours = [
        (d1.id, berlin.id, range(0, 5), time(8, 0), time(17, 0)),
        (d1.id, munich.id, (1, 3), time(9, 0), time(13, 0)),
        (d2.id, munich.id, range(0, 5), time(9, 0), time(18, 0)),
        (d2.id, berlin.id, (5,), time(9, 0), time(13, 0)),
        (d3.id, london.id, range(0, 5), time(8, 0), time(16, 0)),
        (d3.id, berlin.id, (2,), time(10, 0), time(15, 0)),
    ]
    calendar = DemoCalendar(
        {
            (doctor_id, location_id): [Hours(w, opens, closes) for w in weekdays]
            for doctor_id, location_id, weekdays, opens, closes in hours
        },
        {loc.id: loc.timezone for loc in places},
    )
    for doctor_id, location_id, weekdays, opens, closes in hours:
        for weekday in weekdays:
            session.add(
                WorkHours(
                    doctor_id=doctor_id,
                    location_id=location_id,
                    weekday=weekday,
                    start_time=opens,
                    end_time=closes,
                )
            )

    return calendar


def _fees(session: AsyncSession, doctors: tuple[User, User, User], places: tuple[Location, Location, Location]) -> None:
    d1, d2, d3 = doctors
    berlin, munich, london = places
    session.add_all(
        [
            FeeSchedule(kind="doctor_fee", doctor_id=d1.id, location_id=berlin.id, amount_cents=6000),
            FeeSchedule(kind="doctor_fee", doctor_id=d1.id, location_id=munich.id, amount_cents=6500),
            FeeSchedule(kind="doctor_fee", doctor_id=d2.id, location_id=None, amount_cents=8500),
            FeeSchedule(kind="doctor_fee", doctor_id=d3.id, location_id=None, amount_cents=5500),
            FeeSchedule(kind="location_fee", location_id=berlin.id, amount_cents=1500),
            FeeSchedule(kind="location_fee", location_id=munich.id, amount_cents=2000),
            FeeSchedule(kind="location_fee", location_id=london.id, amount_cents=1800, currency="EUR"),
            FeeSchedule(kind="weekend", percent=25),
            FeeSchedule(kind="short_notice", percent=10),
        ]
    )


async def _patients(
    session: AsyncSession, users: _Users, today: date, doctors: tuple[User, User], places: tuple[Location, Location]
) -> dict[str, int]:
    """The patients and their insurance policies, one case each; their patient ids by username."""
    patients: dict[str, int] = {}
    patient_specs = _patient_specs(today, doctors, places)
    for username, name, born, start, end, network, exclusions, data in patient_specs:
        account = await users.add(username, Role.PATIENT, name)
        p = Patient(user_id=account.id, name=name, birth_date=born, email=f"{username}@example.org")
        session.add(p)
        await session.flush()
        patients[username] = p.id
        session.add(
            InsurancePolicy(
                patient_id=p.id,
                insurer="Hansa Health",
                policy_number=f"HH-{p.id:05d}",
                valid_from=start,
                valid_to=end,
                network=network,
                exclusions=exclusions,
                third_party_data=data,
            )
        )
    return patients


PatientSpec = tuple[str, str, date, date, date, dict[str, Any], dict[str, Any], str]


def _patient_specs(today: date, doctors: tuple[User, User], places: tuple[Location, Location]) -> list[PatientSpec]:
    """(username, name, birth date, policy from, policy to, network, exclusions, the insurer's data) per patient."""
    d1, d2 = doctors
    berlin, munich = places
    valid_data = json.dumps({"member_id": "M-1001", "plan": "comfort", "status": "active"})
    return [
        (
            "patient1",
            "Maria Schmidt",
            date(1984, 3, 2),
            today - timedelta(days=400),
            today + timedelta(days=700),
            {},
            {},
            valid_data,
        ),
        # Expired policy: every date is outside the coverage period.
        (
            "patient2",
            "Jonas Weber",
            date(1979, 7, 19),
            today - timedelta(days=800),
            today - timedelta(days=30),
            {},
            {},
            valid_data,
        ),
        # Malformed third-party data from the insurer.
        (
            "patient3",
            "Emma Clarke",
            date(1992, 11, 5),
            today - timedelta(days=100),
            today + timedelta(days=365),
            {},
            {},
            '{"member_id": "M-3003", "plan": ',
        ),
        # Out of network for Dr. Chen and the London clinic.
        (
            "patient4",
            "Oliver Brown",
            date(1966, 1, 23),
            today - timedelta(days=30),
            today + timedelta(days=500),
            {"doctors": [d1.id, d2.id], "locations": [berlin.id, munich.id]},
            {},
            valid_data,
        ),
        # Policy excludes teledermatology and Dr. Romero's profile.
        (
            "patient5",
            "Sofia Rossi",
            date(2001, 5, 30),
            today - timedelta(days=10),
            today + timedelta(days=300),
            {},
            {"services": ["teledermatology"], "doctors": [d2.id]},
            valid_data,
        ),
    ]


AppointmentSpec = tuple[User, Location, str, int, int, int, Status, dict[str, Any]]


def _appointment_specs(
    doctors: tuple[User, User, User], places: tuple[Location, Location, Location]
) -> list[AppointmentSpec]:
    d1, d2, d3 = doctors
    berlin, munich, london = places
    # (doctor, location, patient, days from today, hh, mm, status, extras)
    A = Status
    return [
        (d1, berlin, "patient1", 2, 9, 0, A.REQUESTED, {}),
        (d1, berlin, "patient4", 3, 10, 30, A.REQUESTED, {"disclaimer_required": True}),
        (d1, munich, "patient3", 4, 11, 0, A.REQUESTED, {}),
        (d1, berlin, "patient2", 5, 14, 0, A.REQUESTED, {}),
        (d1, berlin, "patient5", 6, 15, 0, A.REQUESTED, {"service": "teledermatology"}),
        (d1, berlin, "patient1", 7, 8, 30, A.REQUESTED, {"prescription_needed": True}),
        (d1, berlin, "patient4", 1, 16, 0, A.APPROVED, {}),
        (d1, munich, "patient1", 8, 9, 30, A.APPROVED, {"chat_enabled": False}),
        (d1, berlin, "patient1", 9, 13, 0, A.PENDING_RESPONSE, {}),
        (d1, berlin, "patient4", 10, 12, 0, A.PENDING_RESPONSE_COVERAGE_RISK, {}),
        (d1, berlin, "patient5", -3, 10, 0, A.COMPLETED, {}),
        (d1, berlin, "patient1", -5, 11, 0, A.COMPLETED, {}),
        (d1, berlin, "patient4", 4, 9, 0, A.CANCELED, {}),
        (d1, berlin, "patient1", 3, 15, 30, A.DECLINED, {"decline_reason": "Please book a specialist."}),
        (d2, munich, "patient1", 2, 10, 0, A.REQUESTED, {}),
        (
            d2,
            munich,
            "patient4",
            3,
            11,
            30,
            A.REQUESTED,
            {"disclaimer_required": True, "prescription_needed": True},
        ),
        (d2, munich, "patient5", 4, 9, 30, A.REQUESTED, {}),
        (d2, munich, "patient3", 5, 16, 0, A.REQUESTED, {"chat_enabled": False}),
        (d2, munich, "patient1", 1, 12, 0, A.APPROVED, {}),
        (d2, munich, "patient2", -2, 14, 0, A.COMPLETED, {}),
        (d2, munich, "patient4", 6, 10, 0, A.PENDING_RESPONSE, {}),
        (d2, munich, "patient1", 2, 15, 0, A.CANCELED, {}),
        (d2, munich, "patient5", -1, 9, 0, A.DECLINED, {"decline_reason": "Outside my specialty."}),
        (d3, london, "patient1", 2, 9, 0, A.REQUESTED, {"prescription_needed": True}),
        (d3, london, "patient4", 3, 10, 0, A.REQUESTED, {}),
        (d3, london, "patient2", 4, 13, 0, A.REQUESTED, {}),
        (d3, london, "patient5", 5, 14, 30, A.REQUESTED, {"disclaimer_required": True}),
        (d3, london, "patient1", 1, 11, 0, A.APPROVED, {}),
        (d3, london, "patient3", -4, 10, 0, A.COMPLETED, {}),
        (d3, london, "patient4", 6, 9, 0, A.PENDING_RESPONSE_COVERAGE_RISK, {}),
        (d3, london, "patient1", 2, 14, 0, A.CANCELED, {"chat_enabled": False}),
        (d3, london, "patient5", 7, 15, 0, A.DECLINED, {"decline_reason": "Please see your GP first."}),
    ]


async def _appointments(
    session: AsyncSession, calendar: DemoCalendar, patients: dict[str, int], specs: list[AppointmentSpec],
    now: datetime,
) -> list[int]:  # fmt: skip
    """The appointments with their history, each placed in the calendar; their ids in the order of ``specs``."""
    today = now.date()
    A = Status
    appointment_ids: list[int] = []
    for doctor, loc, patient, days, hh, mm, status, extras in specs:
        # On the described day or the first after it (before it, for the past) where the doctor works there and
        # is free: store/seed/calendar.py.
        start_at = calendar.place(
            doctor_id=doctor.id,
            location_id=loc.id,
            day=today + timedelta(days=days),
            at=time(hh, mm),
            minutes=DURATION_MINUTES,
            holds=status not in (A.CANCELED, A.DECLINED),
            backwards=days < 0,
        )
        appointment = Appointment(
            patient_id=patients[patient],
            doctor_id=doctor.id,
            location_id=loc.id,
            start_at=start_at,
            duration_minutes=DURATION_MINUTES,
            status=int(status),
            version=1,
            created_at=now - timedelta(days=3),
            updated_at=now - timedelta(days=3),
            **extras,
        )
        session.add(appointment)
        await session.flush()
        appointment_ids.append(appointment.id)
        session.add(
            AppointmentHistory(
                appointment_id=appointment.id,
                at=appointment.created_at,
                actor_id=None,
                from_status=None,
                to_status=int(A.REQUESTED),
                details={"note": "requested by the patient"},
            )
        )
        if status is not A.REQUESTED:
            session.add(
                AppointmentHistory(
                    appointment_id=appointment.id,
                    at=now - timedelta(days=1),
                    actor_id=doctor.id,
                    from_status=int(A.REQUESTED),
                    to_status=int(status),
                    details={"note": "demo data"},
                )
            )

    return appointment_ids
