"""The appointment list's filter as conditions on every read of a section (``domain/appointments/list_filter.py``): its
days as a range of start times, its name search as the matching patients.

Days are the viewer's: a doctor's in the time zone of their profile, everyone else's (and a doctor without one)
in UTC. A name search first finds the matching patients in ``patient_name_words`` (one index range per search
word). Up to ``LISTED_PATIENTS`` of them are named in the read, so a section is one short index range per
patient ((doctor, patient, start) or (patient, start)); a broader search (a word like "a") is read as a
sub-query: its matches are dense, so the section's own index range reaches a page of them quickly.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import ColumnElement, Select, false, select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.list_filter import ListFilter, prefix_end
from doctordesk.domain.roles import Actor, Role
from doctordesk.store.tables import Appointment, DoctorProfile, PatientNameWord

LISTED_PATIENTS = 200


async def viewer_zone(session: AsyncSession, actor: Actor) -> tzinfo:
    """The time zone a viewer's days are in: the doctor's profile's, else UTC."""
    if actor.role is not Role.DOCTOR:
        return UTC
    name = await session.scalar(select(DoctorProfile.timezone).where(DoctorProfile.user_id == actor.user_id))
    try:
        return ZoneInfo(name) if name else UTC
    except (ZoneInfoNotFoundError, ValueError):
        return UTC


def matching_patients(words: tuple[str, ...]) -> Select[Any]:
    """The patients with, for every search word, a name word starting with it."""
    query: Select[Any] | None = None
    for word in words:
        one = select(PatientNameWord.patient_id).where(
            PatientNameWord.word >= word, PatientNameWord.word < prefix_end(word)
        )
        query = one if query is None else query.where(PatientNameWord.patient_id.in_(one))
    assert query is not None
    return query.distinct()


async def narrowing(session: AsyncSession, actor: Actor, list_filter: ListFilter) -> tuple[ColumnElement[bool], ...]:
    """The conditions the filter adds to every strand of every section."""
    where: list[ColumnElement[bool]] = []
    if list_filter.first or list_filter.last:
        zone = await viewer_zone(session, actor)
        if list_filter.first:
            where.append(
                Appointment.start_at >= datetime.combine(list_filter.first, time.min, tzinfo=zone).astimezone(UTC)
            )
        if list_filter.last:
            end = datetime.combine(list_filter.last + timedelta(days=1), time.min, tzinfo=zone)
            where.append(Appointment.start_at < end.astimezone(UTC))
    words = list_filter.words
    if words:
        patients = matching_patients(words)
        found = list(await session.scalars(patients.limit(LISTED_PATIENTS + 1)))
        if len(found) <= LISTED_PATIENTS:
            where.append(Appointment.patient_id.in_(found) if found else false())
        else:
            where.append(Appointment.patient_id.in_(patients))
    return tuple(where)
