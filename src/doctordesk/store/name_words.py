"""Keeping ``patient_name_words`` (the name search's index, ``domain/appointments/list_filter.py``) in step with
patients' names.

Every ORM write of a patient (accounts, administration, the demo data) updates the words in the same flush, by
mapper events; bulk writes that bypass the ORM (import) call ``sync`` for the patients they wrote.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection, delete, event, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.list_filter import name_words
from doctordesk.store.tables import Patient, PatientNameWord

_CHUNK = 500


def _write(connection: Connection, names: Sequence[tuple[int, str]]) -> None:
    ids = [patient_id for patient_id, _name in names]
    connection.execute(delete(PatientNameWord).where(PatientNameWord.patient_id.in_(ids)))
    rows = [{"patient_id": p, "word": w} for p, name in names for w in sorted(name_words(name))]
    if rows:
        connection.execute(insert(PatientNameWord), rows)


def sync_names(connection: Connection, patient_ids: Iterable[int]) -> None:
    """Write again the words of these patients' stored names."""
    ids = sorted(set(patient_ids))
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        names = connection.execute(select(Patient.id, Patient.name).where(Patient.id.in_(chunk))).all()
        _write(connection, [(r.id, r.name) for r in names])


async def sync(session: AsyncSession, patient_ids: Iterable[int]) -> None:
    """``sync_names`` in an async session's transaction."""
    ids = list(patient_ids)
    await session.run_sync(lambda s: sync_names(s.connection(), ids))


def register() -> None:
    """Keep the words in step with every ORM write of a patient from now on (once per process; the database
    handle calls this)."""
    for name in ("after_insert", "after_update"):
        if not event.contains(Patient, name, _written):
            event.listen(Patient, name, _written)


def _written(_mapper: Any, connection: Connection, target: Patient) -> None:
    _write(connection, [(target.id, target.name)])
