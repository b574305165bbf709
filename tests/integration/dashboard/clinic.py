"""A hand-made clinic for the dashboard's figures: rows written straight into an empty database, each with the
instants a test names, so every figure can be worked out by hand (docs/dashboard.md)."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from doctordesk.domain.appointments.status import Status
from doctordesk.runtime import Runtime
from doctordesk.store.admin_tables import WorkHoursException
from doctordesk.store.tables import Appointment, AppointmentHistory, DoctorProfile, Location, Patient, User, WorkHours

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def utc(text: str) -> datetime:
    """``2026-11-22 22:30`` as a UTC instant."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


class Clinic:
    """Berlin (the clinic's zone), Dr. Ada Hours (Mondays 08:00-12:00 in Berlin), Dr. Bo Nohours (no hours at all),
    and one patient."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.ids: dict[str, int] = {}

    async def build(self, *, bo_name: str = "Dr. Bo Nohours") -> Clinic:
        async with self.rt.db.transaction() as s:
            berlin = Location(name="Berlin", address="", timezone="Europe/Berlin")
            s.add(berlin)
            await s.flush()
            for key, name in (("ada", "Dr. Ada Hours"), ("bo", bo_name)):
                u = User(username=key, password_hash="x", role="doctor", display_name=name, created_at=EPOCH)
                s.add(u)
                await s.flush()
                s.add(DoctorProfile(user_id=u.id, specialty="GP", timezone="Europe/Berlin"))
                self.ids[key] = u.id
            p = Patient(name="Pat Ient")
            s.add(p)
            await s.flush()
            s.add(WorkHours(doctor_id=self.ids["ada"], location_id=berlin.id, weekday=0, start_time=time(8),
                            end_time=time(12)))  # fmt: skip
            self.ids |= {"berlin": berlin.id, "patient": p.id}
        return self

    async def exception(self, doctor: str, day: date, kind: str, opens: time | None = None,
                        closes: time | None = None) -> None:  # fmt: skip
        async with self.rt.db.transaction() as s:
            s.add(WorkHoursException(doctor_id=self.ids[doctor], location_id=None, day=day, kind=kind,
                                     start_time=opens, end_time=closes, created_at=EPOCH))  # fmt: skip

    async def appointment(
        self,
        doctor: str,
        *,
        created: datetime,
        start: datetime | None = None,
        status: Status = Status.REQUESTED,
        minutes: int = 30,
        history: list[tuple[Status | None, Status, datetime, dict[str, Any]]] = (),  # type: ignore[assignment]
    ) -> int:
        async with self.rt.db.transaction() as s:
            a = Appointment(
                patient_id=self.ids["patient"], doctor_id=self.ids[doctor], location_id=self.ids["berlin"],
                start_at=start or created + timedelta(days=7), duration_minutes=minutes, status=int(status),
                created_at=created, updated_at=created,
            )  # fmt: skip
            s.add(a)
            await s.flush()
            for from_status, to_status, at, details in history:
                s.add(AppointmentHistory(appointment_id=a.id, at=at, from_status=from_status, to_status=to_status,
                                         details=details))  # fmt: skip
            return a.id
