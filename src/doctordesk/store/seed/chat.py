"""Demo chat threads: conversations between doctors and support, some unread, one with a PDF and one with a PNG."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.files import check as file_check
from doctordesk.store import chat_repo
from doctordesk.store.chat_tables import ChatMessage, ChatRead, ChatThread
from doctordesk.store.seed import sample_files
from doctordesk.store.seed.feature_seeders import EXTRA_SEEDERS, Demo

# (appointment index, [(sender, minutes before now, text, file)], readers who have read everything)
CONVERSATIONS: list[tuple[int, list[tuple[str, int, str, str | None]], tuple[str, ...]]] = [
    (
        2,
        [
            ("doctor1", 180, "Hello, the patient asks whether the insurer covers a blood test at this visit.", None),
            ("support1", 150, "Let me check the policy. One moment, please.", None),
            ("support1", 40, "Covered. Here is the insurer's confirmation.", "pdf"),
            ("support1", 35, "Anything else I can help with?", None),
        ],
        ("support1",),  # doctor1 has not read support's last three: unread 3
    ),
    (
        6,
        [
            ("doctor1", 300, "The patient sent a photo of the rash, see attached.", "png"),
            ("support2", 290, "Thanks, forwarded to the dermatology team.", None),
            ("doctor1", 20, "Any news from dermatology?", None),
        ],
        ("doctor1",),  # support has not read the doctor's latest question
    ),
    (
        15,
        [
            ("doctor2", 600, "Can you move my 10:00 patient to the afternoon?", None),
            ("support1", 590, "Done: 15:00 works for the patient.", None),
        ],
        ("doctor2", "support1", "support2"),  # all read
    ),
]


async def seed_chat(session: AsyncSession, demo: Demo) -> None:
    made = {"pdf": sample_files.pdf("Insurance confirmation: blood test covered"), "png": sample_files.png(4, 4)}
    names = {"pdf": "Coverage confirmation.pdf", "png": "rash photo.png"}
    for index, messages, readers in CONVERSATIONS:
        appointment_id = demo.appointments[index]
        first_at = demo.now - timedelta(minutes=messages[0][1])
        thread = ChatThread(appointment_id=appointment_id, created_at=first_at, last_activity_at=first_at)
        session.add(thread)
        await session.flush()
        last: ChatMessage | None = None
        for sender, minutes, text, file_kind in messages:
            at = demo.now - timedelta(minutes=minutes)
            attachment_id = None
            if file_kind is not None:
                checked = file_check.check_bytes(made[file_kind])
                stored = await chat_repo.add_attachment(
                    session,
                    uploader_id=demo.users[sender],
                    filename=names[file_kind],
                    kind=checked.kind,
                    data=checked.read(),
                    at=at,
                )
                attachment_id = stored.id
            last = ChatMessage(
                thread_id=thread.id,
                sender_id=demo.users[sender],
                content=text,
                created_at=at,
                attachment_id=attachment_id,
            )
            session.add(last)
            await session.flush()
            # Senders have read the thread up to their own message.
            await _read(session, thread.id, demo.users[sender], last)
        assert last is not None
        thread.last_activity_at = last.created_at
        thread.last_message_id = last.id
        for reader in readers:
            await _read(session, thread.id, demo.users[reader], last)


async def _read(session: AsyncSession, thread_id: int, user_id: int, message: ChatMessage) -> None:
    existing = await session.get(ChatRead, (thread_id, user_id))
    if existing is None:
        session.add(
            ChatRead(
                thread_id=thread_id,
                user_id=user_id,
                message_created_at=message.created_at,
                message_id=message.id,
                updated_at=message.created_at,
            )
        )
    else:
        existing.message_created_at = message.created_at
        existing.message_id = message.id
        existing.updated_at = message.created_at
    await session.flush()


EXTRA_SEEDERS.append(seed_chat)
