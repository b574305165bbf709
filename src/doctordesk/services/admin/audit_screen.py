"""The audit trail screen (``screens/admin/audit.py``): a page of the filtered trail with the actors' names, and
the filter form turned into the screen's URL."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime, time, timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain import moments
from doctordesk.domain.audit import AuditFilter
from doctordesk.domain.cursors import encode_cursor
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.inputs import parse_id, text_problem
from doctordesk.domain.keyset import Position
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.screens.admin import audit as screen
from doctordesk.screens.admin.audit_changes import Names, patient_ids, person_ids
from doctordesk.screens.protocol import Layout, Page, UpdateSet
from doctordesk.screens.viewing import Viewing
from doctordesk.services.audit.trail import audit_page
from doctordesk.services.scheduling.clinic_facts import cached_clinic
from doctordesk.services.screen_base import clinic_zone, navigation, require_admin, viewing
from doctordesk.store.tables import Patient, User

PEOPLE_OFFERED = 500


def audit_screen(
    rt: Runtime,
    actor: Actor,
    audit_filter: AuditFilter,
    *,
    after: Position | None,
    cursor: str | None,
    layout: Layout,
    client_id: str | None,
) -> Viewing:
    async def render() -> Page:
        async with rt.db.read() as session:
            rows, position = await audit_page(session, audit_filter, after=after, limit=screen.PAGE_SIZE)
            ids = {r.actor_id for r in rows if r.actor_id is not None}
            ids |= {r.entity_id for r in rows if r.entity in ("user", "doctor") and r.entity_id is not None}
            records: set[int] = set()
            for r in rows:
                ids |= person_ids(r.details)
                records |= patient_ids(r.details)
            found = await session.execute(select(User.id, User.display_name).where(User.id.in_(sorted(ids))))
            people: dict[int, str] = {row[0]: row[1] for row in found.all()}
            named = await session.execute(select(Patient.id, Patient.name).where(Patient.id.in_(sorted(records))))
            patients: dict[int, str] = {row[0]: row[1] for row in named.all()}
            c = await cached_clinic(rt, session)
            choices = await _people(session, audit_filter.actor_id)
        names = Names(people, c.location_names, clinic_zone(c.directory.locations), patients)
        return screen.render(
            audit_filter,
            rows,
            names,
            people=choices,
            cursor=cursor,
            next_cursor=encode_cursor(position) if position else None,
            layout=layout,
            timeout=rt.settings.poll_list_seconds,
        )

    where = screen.endpoint(audit_filter, cursor)
    return viewing(rt, actor, screen_name=screen.SCREEN, endpoint=where, render=render, client_id=client_id)


async def _people(session: AsyncSession, chosen: int | None) -> list[tuple[int, str, str]]:
    """Who the filter offers, by name with their role: the first ``PEOPLE_OFFERED`` by name, and the one chosen."""
    statement = select(User.id, User.display_name, User.role).order_by(User.display_name, User.id)
    found = list((await session.execute(statement.limit(PEOPLE_OFFERED))).all())
    if chosen is not None and all(row[0] != chosen for row in found):
        found += list((await session.execute(select(User.id, User.display_name, User.role).where(
            User.id == chosen))).all())  # fmt: skip
    return [(i, name, role) for i, name, role in found]


def _day(raw: str | None, name: str, fields: dict[str, str]) -> date | None:
    return moments.form_day(raw, name, fields, message=moments.FORM_DAY_MESSAGE)


def apply_filters(rt: Runtime, actor: Actor, form: Mapping[str, str]) -> UpdateSet:
    """The filter form as the screen's URL: days become UTC instants, the last day included."""
    require_admin(actor)
    fields: dict[str, str] = {}
    ids: dict[str, int | None] = {}
    for name in ("actor", "appointment"):
        raw = form.get(name, "")
        ids[name] = parse_id(raw) if raw else None
        if raw and ids[name] is None:
            fields[name] = N_("An id in digits.")
    action = form.get("action", "").strip() or None
    if action is not None and (text_problem(action, max_chars=64) or " " in action):
        fields["action"] = N_("An action name, e.g. appointment.approve.")
    first, last = _day(form.get("from"), "from", fields), _day(form.get("to"), "to", fields)
    if first and last and last < first:
        fields["to"] = N_("Must not be before 'from'.")
    if fields:
        raise ValidationFailed(fields=fields)
    f = AuditFilter(
        actor_id=ids["actor"],
        appointment_id=ids["appointment"],
        action=action,
        since=datetime.combine(first, time.min, tzinfo=UTC) if first else None,
        until=datetime.combine(last + timedelta(days=1), time.min, tzinfo=UTC) if last else None,
    )
    return navigation(rt, screen.SCREEN, screen.endpoint(f))
