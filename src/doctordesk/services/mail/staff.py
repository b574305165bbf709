"""A doctor's own mail about their appointments (docs/notifications.md#staff-mail): what the change's mail to its
doctor says, when the doctor gave an address and chose that kind; composed like the patients' mail, in the
doctor's language, without a calendar part."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.events import DomainEvent
from doctordesk.domain.mail.notices import STAFF_KINDS, MailKind
from doctordesk.services.mail.compose import MailFacts, appointment_facts
from doctordesk.store.mail_tables import StaffMailSetting
from doctordesk.store.tables import Appointment, Location, Patient, User


async def staff_facts(session: AsyncSession, event: DomainEvent, kind: MailKind) -> MailFacts | None:
    """The facts of ``kind``'s mail to the appointment's doctor; None when the doctor has no address or did not
    choose this kind (or the appointment is gone)."""
    appointment_id = event.data.get("appointment_id")
    if not isinstance(appointment_id, int):
        return None
    wanted = getattr(StaffMailSetting, STAFF_KINDS[kind])
    row = (
        await session.execute(
            select(Appointment, Patient.name, StaffMailSetting.email, User.language, User.display_name, Location)
            .join(Patient, Patient.id == Appointment.patient_id)
            .join(User, User.id == Appointment.doctor_id)
            .join(StaffMailSetting, StaffMailSetting.user_id == Appointment.doctor_id)
            .join(Location, Location.id == Appointment.location_id)
            .where(Appointment.id == appointment_id, User.active.is_(True), wanted.is_(True))
        )
    ).first()
    if row is None or not row[2]:
        return None
    a, patient_name, email, language, doctor_name, location = row
    return appointment_facts(
        a,
        location,
        patient_name=patient_name,
        doctor_name=doctor_name,
        recipient=str(email),
        language=language,
        recipient_name=doctor_name,
    )
