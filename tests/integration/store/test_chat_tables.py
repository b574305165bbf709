from __future__ import annotations

import pytest
from sqlalchemy import delete, update
from sqlalchemy.exc import DBAPIError, IntegrityError

from doctordesk.store.chat_tables import Attachment, ChatMessage, ChatThread
from tests.conftest import NOW


async def _message(runtime, demo) -> tuple[int, int]:
    async with runtime.db.transaction() as session:
        thread = ChatThread(appointment_id=demo.appointments[0], created_at=NOW, last_activity_at=NOW)
        session.add(thread)
        await session.flush()
        file = Attachment(
            uploader_id=demo.users["doctor1"],
            filename="a.pdf",
            mime="application/pdf",
            size=1,
            sha256="0" * 64,
            data=b"x",
            created_at=NOW,
        )
        session.add(file)
        await session.flush()
        message = ChatMessage(
            thread_id=thread.id,
            sender_id=demo.users["doctor1"],
            content="Hello",
            created_at=NOW,
            attachment_id=file.id,
        )
        session.add(message)
        await session.flush()
        return message.id, file.id


async def test_messages_cannot_be_edited_or_deleted(runtime, demo):
    message_id, _ = await _message(runtime, demo)
    for statement in (
        update(ChatMessage).where(ChatMessage.id == message_id).values(content="rewritten"),
        delete(ChatMessage).where(ChatMessage.id == message_id),
    ):
        with pytest.raises(DBAPIError, match="append-only"):
            async with runtime.db.transaction() as session:
                await session.execute(statement)
    async with runtime.db.read() as session:
        assert (await session.get(ChatMessage, message_id)).content == "Hello"


async def test_attachments_cannot_be_replaced_or_deleted(runtime, demo):
    _, file_id = await _message(runtime, demo)
    for statement in (
        update(Attachment).where(Attachment.id == file_id).values(data=b"evil"),
        delete(Attachment).where(Attachment.id == file_id),
    ):
        with pytest.raises(DBAPIError, match="append-only"):
            async with runtime.db.transaction() as session:
                await session.execute(statement)


async def test_one_thread_per_appointment(runtime, demo):
    await _message(runtime, demo)
    with pytest.raises(IntegrityError):
        async with runtime.db.transaction() as session:
            session.add(ChatThread(appointment_id=demo.appointments[0], created_at=NOW, last_activity_at=NOW))


async def test_read_position_only_moves_forward(runtime, demo):
    from datetime import timedelta

    from doctordesk.domain.chat.messages import Cursor
    from doctordesk.store import chat_repo

    message_id, _ = await _message(runtime, demo)
    reader = demo.users["support1"]
    async with runtime.db.transaction() as session:
        thread_id = await chat_repo.thread_id_for(session, demo.appointments[0])
        assert thread_id is not None
        later, earlier = Cursor(NOW, message_id), Cursor(NOW - timedelta(seconds=1), message_id + 5)
        assert await chat_repo.mark_read(session, thread_id=thread_id, user_id=reader, up_to=later, now=NOW)
        assert not await chat_repo.mark_read(session, thread_id=thread_id, user_id=reader, up_to=earlier, now=NOW)
        assert not await chat_repo.mark_read(session, thread_id=thread_id, user_id=reader, up_to=later, now=NOW)
        positions = await chat_repo.read_positions(session, thread_id)
        assert positions.of(reader) == later and positions.support == later
        ahead = Cursor(NOW, message_id + 1)
        assert await chat_repo.mark_read(session, thread_id=thread_id, user_id=reader, up_to=ahead, now=NOW)


async def test_a_window_longer_than_the_limit_keeps_its_newest_messages(runtime, demo):
    from datetime import timedelta

    from doctordesk.store import chat_repo

    async with runtime.db.transaction() as session:
        thread = ChatThread(appointment_id=demo.appointments[0], created_at=NOW, last_activity_at=NOW)
        session.add(thread)
        await session.flush()
        for i in range(6):
            session.add(
                ChatMessage(
                    thread_id=thread.id,
                    sender_id=demo.users["doctor1"],
                    content=f"m{i}",
                    created_at=NOW + timedelta(seconds=i),
                )
            )
        await session.flush()
        first = await chat_repo.latest(session, thread.id, 6)
        start = first[0][0].cursor
        window, has_older = await chat_repo.since(session, thread.id, start, limit=4)
        assert [m.content for m in window] == ["m2", "m3", "m4", "m5"] and has_older
        window, has_older = await chat_repo.since(session, thread.id, start)
        assert [m.content for m in window] == [f"m{i}" for i in range(6)] and not has_older
