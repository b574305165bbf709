"""Helpers for the Review and Approve tests: the demo's appointments by case, requests, and database snapshots."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from doctordesk.domain.events import DomainEvent
from doctordesk.runtime import Runtime
from doctordesk.store.review_tables import AppointmentOffer
from doctordesk.store.tables import Appointment, AppointmentHistory, AuditLog

# Indexes into demo.appointments (store/seed/demo.py, in the order of its specs).
REQUESTED = 0  # Dr. Berger, Berlin, Maria Schmidt, Wed 25 Nov 09:00 Berlin
DISCLAIMER = 1  # Dr. Berger, Berlin, Oliver Brown (out of network for Dr. Chen/London), disclaimer required
THIRD_PARTY_INVALID = 2  # Emma Clarke: malformed insurer data
NOT_COVERED = 3  # Jonas Weber: expired policy
EXCLUDED_SERVICE = 4  # Sofia Rossi, teledermatology excluded
PRESCRIPTION = 5  # Dr. Berger, needs a prescription, Mon 30 Nov 08:30
APPROVED = 6
PENDING_5 = 8
PENDING_9 = 9
COMPLETED = 10
CANCELED = 12
DECLINED = 13
NO_TIMEZONE = 14  # Dr. Romero (no profile timezone), Munich, Wed 25 Nov 10:00
EXCLUDED_DOCTOR = 16  # Sofia Rossi with Dr. Romero (excluded by her policy)
CHEN_PRESCRIPTION = 23  # Dr. Chen (cannot prescribe), London
CHEN_OUT_OF_NETWORK = 24  # Dr. Chen, London, Oliver Brown: out of network


def aid(demo: Any, index: int) -> int:
    return int(demo.appointments[index])


def approve_url(appointment_id: int) -> str:
    return f"/profile/appointments/{appointment_id}/approve"


async def open_page(client: Any, headers: dict[str, str], appointment_id: int) -> dict[str, Any]:
    response = await client.put(approve_url(appointment_id), headers=headers)
    assert response.status_code == 200, response.text
    page: dict[str, Any] = response.json()
    return page


def find(elements: list[dict[str, Any]], element_id: str) -> dict[str, Any] | None:
    for e in elements:
        if e["id"] == element_id:
            return e
        found = find(e.get("children", []), element_id)
        if found is not None:
            return found
    return None


def card(n: int, doctor: int, location: int, day: str, at: str) -> dict[str, str]:
    return {f"profile~{n}": str(doctor), f"location~{n}": str(location), f"date~{n}": day, f"time~{n}": at}


def alternatives(doctor: int, location: int, *times: tuple[str, str], version: str = "1") -> dict[str, str]:
    """The Approve form with a card per ``(day, time)`` of one doctor at one location, at the page's ``version``."""
    fields = {"version": version}
    for n, (day, at) in enumerate(times, start=1):
        fields.update(card(n, doctor, location, day, at))
    return fields


async def snapshot(rt: Runtime, appointment_id: int) -> dict[str, Any]:
    """Everything a decision may write, for "a rejected request changes nothing"."""
    async with rt.db.read() as s:
        a = await s.get(Appointment, appointment_id)
        assert a is not None
        history = await s.scalar(
            select(func.count())
            .select_from(AppointmentHistory)
            .where(AppointmentHistory.appointment_id == appointment_id)
        )
        offers = (
            await s.execute(
                select(AppointmentOffer.id, AppointmentOffer.state).where(
                    AppointmentOffer.appointment_id == appointment_id
                )
            )
        ).all()
        audits = await s.scalar(
            select(func.count())
            .select_from(AuditLog)
            .where(AuditLog.entity == "appointment", AuditLog.entity_id == appointment_id)
        )
        return {
            "status": a.status,
            "version": a.version,
            "start": a.start_at,
            "reason": a.decline_reason,
            "history": history,
            "offers": sorted(offers),
            "audit": audits,
        }


class Events:
    """Collects the events published on the runtime's bus."""

    def __init__(self, rt: Runtime) -> None:
        self.seen: list[DomainEvent] = []
        rt.bus.subscribe(self._on)

    async def _on(self, event: DomainEvent) -> None:
        self.seen.append(event)

    def kinds(self) -> list[str]:
        return [e.kind for e in self.seen if not e.kind.startswith("review.")]
