"""Keeping ``fhir_appointment_versions`` (vread and ``_history``, docs/fhir.md#versions) in step with appointments.

Every ORM write of an appointment (the screens, the integration API, FHIR, the demo data) writes the row's state
at its version in the same flush, by mapper events: the state replaces what was kept for that version, so a
version reads as it was when the next one began. An update that raises the version also keeps the state before
it when that version was never kept (a row written by a bulk insert that bypassed the ORM).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import Connection, delete, event, insert, inspect, select

from doctordesk.store.fhir_tables import AppointmentVersion
from doctordesk.store.tables import Appointment

# The columns a version keeps: what the FHIR Appointment is built from.
COLUMNS = (
    "patient_id", "doctor_id", "location_id", "service", "start_at", "duration_minutes", "status", "version",
    "decline_reason", "request_note", "created_at", "updated_at", "external_id",
)  # fmt: skip
_WHEN = ("start_at", "created_at", "updated_at")


def _plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime | date) else value


def state_of(values: dict[str, Any]) -> dict[str, Any]:
    return {name: _plain(values[name]) for name in COLUMNS}


def appointment_from(appointment_id: int, state: dict[str, Any]) -> Appointment:
    """A transient Appointment with the kept state (to build the resource as it was)."""
    values = {name: state.get(name) for name in COLUMNS}
    for name in _WHEN:
        values[name] = datetime.fromisoformat(str(values[name]))
    return Appointment(id=appointment_id, **values)


def _write(connection: Connection, appointment_id: int, state: dict[str, Any], *, replace: bool) -> None:
    version = int(state["version"])
    key = (AppointmentVersion.appointment_id == appointment_id, AppointmentVersion.version == version)
    if replace:
        connection.execute(delete(AppointmentVersion).where(*key))
    elif connection.execute(select(AppointmentVersion.version).where(*key)).first() is not None:
        return
    connection.execute(
        insert(AppointmentVersion).values(
            appointment_id=appointment_id,
            version=version,
            state=state,
            recorded_at=datetime.fromisoformat(state["updated_at"]),
        )
    )


@event.listens_for(Appointment, "after_insert")
def _inserted(_mapper: Any, connection: Connection, target: Appointment) -> None:
    _write(connection, target.id, state_of({n: getattr(target, n) for n in COLUMNS}), replace=True)


@event.listens_for(Appointment, "after_update")
def _updated(_mapper: Any, connection: Connection, target: Appointment) -> None:
    attrs = inspect(target).attrs
    before: dict[str, Any] = {}
    changed = False
    for name in COLUMNS:
        history = attrs[name].history
        changed = changed or history.has_changes()
        before[name] = history.deleted[0] if history.deleted else getattr(target, name)
    if not changed:
        return
    if before["version"] != target.version:
        _write(connection, target.id, state_of(before), replace=False)
    _write(connection, target.id, state_of({n: getattr(target, n) for n in COLUMNS}), replace=True)
