"""Appointment rows and requests as the tests and benchmarks write them in bulk or send them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from doctordesk.domain.appointments.status import Status


def appointment_row(
    *, patient_id: int, doctor_id: int, location_id: int, start: datetime, status: Status, now: datetime
) -> dict[str, Any]:
    """A 30-minute consultation as a row of ``appointments``, for a bulk insert."""
    return {
        "patient_id": patient_id,
        "doctor_id": doctor_id,
        "location_id": location_id,
        "service": "consultation",
        "start_at": start,
        "duration_minutes": 30,
        "status": int(status),
        "version": 1,
        "chat_enabled": True,
        "disclaimer_required": False,
        "prescription_needed": False,
        "created_at": now,
        "updated_at": now,
    }


def fhir_request(demo: Any, start: str) -> dict[str, Any]:
    """A FHIR Appointment proposed by the integration: patient1 with doctor1 in Berlin, 30 minutes from ``start``."""
    return {
        "resourceType": "Appointment",
        "status": "proposed",
        "serviceType": [{"text": "consultation"}],
        "start": start,
        "minutesDuration": 30,
        "participant": [
            {"actor": {"reference": f"Patient/{demo.patients['patient1']}"}, "status": "accepted"},
            {"actor": {"reference": f"Practitioner/{demo.users['doctor1']}"}, "status": "needs-action"},
            {"actor": {"reference": f"Location/{demo.locations['berlin']}"}, "status": "needs-action"},
        ],
    }
