"""A doctor's or support member's own mail (docs/notifications.md#staff-mail): the address the clinic's mail goes
to and the changes they chose to be mailed for. The address is the user's: they set it themselves (their security
page), or an admin sets it for them; a patient's address is their record's (``POST /admin/patients/{id}``).
Every change is audited and announced on the user's topic."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from doctordesk.domain.errors import NotFound, ValidationFailed
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import DomainEvent, user_topic
from doctordesk.domain.mail.addresses import optional_address
from doctordesk.domain.roles import Actor, Role, require_admin
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.services.audit.entries import audit
from doctordesk.services.uow import unit_of_work
from doctordesk.store.mail_tables import StaffMailSetting
from doctordesk.store.tables import User

STAFF_ROLES = (Role.DOCTOR, Role.SUPPORT)
CHANGED = EventKind.ACCOUNT_STAFF_MAIL_CHANGED


@dataclass(frozen=True, slots=True)
class StaffMail:
    email: str | None = None
    new_request: bool = False
    canceled_by_patient: bool = False


async def read(rt: Runtime, user_id: int) -> StaffMail:
    async with rt.db.read() as session:
        row = await session.get(StaffMailSetting, user_id)
    if row is None:
        return StaffMail()
    return StaffMail(row.email, row.new_request, row.canceled_by_patient)


async def save(rt: Runtime, actor: Actor, user_id: int, wanted: StaffMail) -> StaffMail:
    """Set ``user_id``'s mail: their own (a doctor or support member), or anyone's on the staff by an admin;
    another user's, or a patient's, is 404. The address is checked and stored normalized; a wrong one is the
    field's error and nothing is written."""
    if user_id != actor.user_id:
        require_admin(actor, hidden=True)
    try:
        email = optional_address(wanted.email)
    except ValueError as exc:
        raise ValidationFailed(fields={"email": str(exc)}) from None
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        role = await uow.session.scalar(select(User.role).where(User.id == user_id))
        if role is None or Role(role) not in STAFF_ROLES:
            raise NotFound(N_("Only for doctors and support."))
        row = await uow.session.get(StaffMailSetting, user_id)
        before = None if row is None else {"email": row.email, "new_request": row.new_request,
                                           "canceled_by_patient": row.canceled_by_patient}  # fmt: skip
        if row is None:
            row = StaffMailSetting(user_id=user_id, updated_at=now)
            uow.session.add(row)
        row.email, row.new_request, row.canceled_by_patient = email, wanted.new_request, wanted.canceled_by_patient
        row.updated_at = now
        after = {"email": email, "new_request": wanted.new_request, "canceled_by_patient": wanted.canceled_by_patient}
        audit(uow.session, at=now, actor_id=actor.user_id, action="staff-mail-changed", entity="user",
              entity_id=user_id, details={"before": before, "after": after})  # fmt: skip
        uow.emit(DomainEvent(CHANGED, (user_topic(user_id),), {"user_id": user_id}))
    return StaffMail(email, wanted.new_request, wanted.canceled_by_patient)
