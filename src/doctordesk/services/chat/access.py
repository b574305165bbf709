"""Who may read a chat and its files, and marking a thread read: the chat's use cases the screen
(``services.chat.conversation_screen``), sending, drafts and FHIR share."""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.views import AppointmentView
from doctordesk.domain.chat.messages import Cursor, may_read, require_chat_role
from doctordesk.domain.errors import NotFound
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import DomainEvent, thread_topic, user_topic
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.services.appointments.reading import get_appointment_and_chat_setting
from doctordesk.services.uow import unit_of_work
from doctordesk.store import chat_repo

READ_EVENT = EventKind.CHAT_READ


async def chat_appointment(session: AsyncSession, actor: Actor, appointment_id: int) -> AppointmentView:
    """The appointment whose thread the actor may read (NotFound for other doctors' appointments)."""
    require_chat_role(actor)
    view, doctor_chat = await get_appointment_and_chat_setting(session, actor, appointment_id)
    if not may_read(actor, doctor_id=view.doctor.id):
        raise NotFound(N_("Appointment not found."))
    # Chat is on when it is on for the appointment and for its doctor (an admin's setting, absent: on).
    if view.chat_enabled and doctor_chat is False:
        return replace(view, chat_enabled=False)
    return view


def read_event(appointment_id: int, reader_id: int) -> DomainEvent:
    return DomainEvent(
        READ_EVENT,
        topics=(thread_topic(appointment_id), user_topic(reader_id)),
        data={"appointment_id": appointment_id, "reader_id": reader_id},
    )


async def read_up_to(rt: Runtime, actor: Actor, appointment_id: int, thread_id: int, up_to: Cursor) -> None:
    """The thread read by this reader up to ``up_to`` (the newest message shown to them)."""
    async with unit_of_work(rt) as uow:
        moved = await chat_repo.mark_read(
            uow.session,
            thread_id=thread_id,
            user_id=actor.user_id,
            up_to=up_to,
            now=rt.clock.now(),
        )
        if moved:
            uow.emit(read_event(appointment_id, actor.user_id))


async def read_all(rt: Runtime, actor: Actor, appointment_id: int) -> None:
    """The thread read by this reader up to its newest message (closing the chat)."""
    async with unit_of_work(rt) as uow:
        appointment = await chat_appointment(uow.session, actor, appointment_id)
        thread_id = await chat_repo.thread_id_for(uow.session, appointment.id)
        newest = await chat_repo.newest(uow.session, thread_id) if thread_id is not None else None
        if thread_id is not None and newest is not None:
            moved = await chat_repo.mark_read(
                uow.session, thread_id=thread_id, user_id=actor.user_id, up_to=newest, now=rt.clock.now()
            )
            if moved:
                uow.emit(read_event(appointment_id, actor.user_id))


@dataclass(frozen=True, slots=True)
class StoredFile:
    filename: str
    mime: str
    data: bytes


async def attachment_file(rt: Runtime, actor: Actor, attachment_id: int) -> StoredFile:
    """A file of a thread the actor may read (NotFound otherwise: ids cannot be probed)."""
    require_chat_role(actor)
    async with rt.db.read() as session:
        found = await chat_repo.attachment(session, attachment_id)
        if found is None:
            raise NotFound(N_("File not found."))
        file, appointment_id = found
        try:
            await chat_appointment(session, actor, appointment_id)
        except NotFound:
            raise NotFound(N_("File not found.")) from None
        return StoredFile(file.filename, file.mime, file.data)
