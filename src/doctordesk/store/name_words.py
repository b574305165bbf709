"""Keeping ``patient_name_words`` (the name search's index, ``domain/appointments/list_filter.py``) and the
patients' sort keys (FHIR's ``_sort`` by the name's parts, ``domain/fhir/names.sort_keys``) in step with patients'
names.

Every ORM write of a patient (accounts, administration, the demo data) updates the words and keys in the same flush,
by mapper events; bulk writes that bypass the ORM (import) call ``sync`` for the patients they wrote.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection, bindparam, delete, event, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.list_filter import name_words
from doctordesk.domain.fhir.names import sort_keys
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


def sync_sort_keys(connection: Connection, patient_ids: Iterable[int]) -> None:
    """Write again the sort keys of these patients' stored names."""
    ids = sorted(set(patient_ids))
    statement = (
        update(Patient)
        .where(Patient.id == bindparam("row_id"))
        .values(family_key=bindparam("family"), given_key=bindparam("given"), name_key=bindparam("full"))
    )
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        names = connection.execute(select(Patient.id, Patient.name).where(Patient.id.in_(chunk))).all()
        rows = [dict(zip(("family", "given", "full"), sort_keys(r.name), strict=True), row_id=r.id) for r in names]
        if rows:
            connection.execute(statement, rows)


async def sync(session: AsyncSession, patient_ids: Iterable[int]) -> None:
    """``sync_names`` and ``sync_sort_keys`` in an async session's transaction."""
    ids = list(patient_ids)

    def both(connection: Connection) -> None:
        sync_names(connection, ids)
        sync_sort_keys(connection, ids)

    await session.run_sync(lambda s: both(s.connection()))


def register() -> None:
    """Keep the words in step with every ORM write of a patient from now on (once per process; the database
    handle calls this)."""
    for name in ("after_insert", "after_update"):
        if not event.contains(Patient, name, _written):
            event.listen(Patient, name, _written)
    for name in ("before_insert", "before_update"):
        if not event.contains(Patient, name, _keyed):
            event.listen(Patient, name, _keyed)


def _keyed(_mapper: Any, _connection: Connection, target: Patient) -> None:
    target.family_key, target.given_key, target.name_key = sort_keys(target.name)


def _written(_mapper: Any, connection: Connection, target: Patient) -> None:
    _write(connection, [(target.id, target.name)])
