"""Chat drafts kept with the server (docs/chat.md#drafts): the message a user has begun in a thread and not sent,
per user and appointment, so it survives a reload and follows the user to another device.

The web app reads the draft when it shows the chat and writes it as the user types (``props.draft`` on the
composer, docs/protocol.md); a send removes the sender's draft of that thread. Only those who may write in the
thread keep drafts there; anyone else learns nothing (the chat's own 404 and 403)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.chat.messages import may_write
from doctordesk.domain.errors import Forbidden, ValidationFailed
from doctordesk.domain.inputs import text_problem
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.services.chat.access import chat_appointment
from doctordesk.services.uow import unit_of_work
from doctordesk.store.chat_tables import ChatDraft


@dataclass(frozen=True, slots=True)
class Draft:
    appointment_id: int
    content: str
    saved_at: datetime | None

    def to_json(self) -> dict[str, object]:
        return {
            "appointment_id": self.appointment_id,
            "content": self.content,
            "saved_at": self.saved_at.isoformat() if self.saved_at else None,
        }


async def _require_writer(rt: Runtime, actor: Actor, appointment_id: int) -> None:
    async with rt.db.read() as session:
        view = await chat_appointment(session, actor, appointment_id)  # 404 for what the actor may not read
    if not may_write(actor, doctor_id=view.doctor.id):
        raise Forbidden(N_("You can read this chat but not write in it."))


async def read_draft(rt: Runtime, actor: Actor, appointment_id: int) -> Draft:
    """The actor's draft in this thread (empty content when there is none)."""
    await _require_writer(rt, actor, appointment_id)
    async with rt.db.read() as session:
        row = await session.get(ChatDraft, (appointment_id, actor.user_id))
    if row is None:
        return Draft(appointment_id, "", None)
    return Draft(appointment_id, row.content, row.updated_at)


async def save_draft(rt: Runtime, actor: Actor, appointment_id: int, content: str) -> Draft:
    """Keep ``content`` as the actor's draft in this thread; empty (or only white space) removes it. The same
    free-text rule and length limit as a message, so a draft can always be sent."""
    problem = text_problem(content, max_chars=rt.settings.max_message_chars, multiline=True)
    if problem is not None:
        raise ValidationFailed(fields={"content": problem})
    await _require_writer(rt, actor, appointment_id)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        if not content.strip():
            await clear_in(session, actor.user_id, appointment_id)
            return Draft(appointment_id, "", None)
        insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
        statement = insert(ChatDraft).values(
            appointment_id=appointment_id, user_id=actor.user_id, content=content, updated_at=now
        )
        await session.execute(
            statement.on_conflict_do_update(
                index_elements=["appointment_id", "user_id"],
                set_={"content": statement.excluded.content, "updated_at": statement.excluded.updated_at},
            )
        )
    return Draft(appointment_id, content, now)


async def clear_in(session: AsyncSession, user_id: int, appointment_id: int) -> None:
    """Remove a user's draft of a thread (after a send, or an emptied box), in the caller's transaction."""
    await session.execute(
        delete(ChatDraft).where(ChatDraft.appointment_id == appointment_id, ChatDraft.user_id == user_id)
    )
