"""Chat drafts kept with the server (docs/chat.md#drafts), on SQLite and PostgreSQL: per user and thread, read
back from any device, removed by a send or an empty box, under the message rules, and hidden from anyone who may
not write in the thread."""

from __future__ import annotations

from sqlalchemy import func, select

from doctordesk.store.chat_tables import ChatDraft
from tests.support.chat import open_chat, send, walk

DRAFT = "/profile/messages/draft"
OTHER_DOCTORS = 14  # doctor2's first appointment


async def drafts(runtime) -> int:
    async with runtime.db.read() as s:
        return int(await s.scalar(select(func.count()).select_from(ChatDraft)) or 0)


def at(appointment: int) -> dict[str, str]:
    return {"appointment-id": str(appointment)}


async def test_a_draft_is_kept_per_user_and_thread_and_read_from_another_session(client, login, demo, runtime):
    a, b = demo.appointments[0], demo.appointments[1]
    doctor = await login("doctor1")
    empty = await client.get(DRAFT, params=at(a), headers=doctor.headers)
    assert empty.status_code == 200 and empty.json() == {"appointment_id": a, "content": "", "saved_at": None}
    text = "Half a thought\nabout the <b>rash</b> — "
    saved = await client.put(DRAFT, params=at(a), headers=doctor.headers, data={"content": text})
    assert saved.status_code == 200, saved.text
    assert saved.json()["content"] == text and saved.json()["saved_at"]
    # Another sign-in (another device) of the same user reads it back exactly; another thread has none.
    elsewhere = await login("doctor1")
    assert elsewhere.headers["Authorization"] != doctor.headers["Authorization"]
    assert (await client.get(DRAFT, params=at(a), headers=elsewhere.headers)).json()["content"] == text
    assert (await client.get(DRAFT, params=at(b), headers=elsewhere.headers)).json()["content"] == ""
    # Support has its own draft in the same thread.
    support = await login("support1")
    assert (await client.get(DRAFT, params=at(a), headers=support.headers)).json()["content"] == ""
    await client.put(DRAFT, params=at(a), headers=support.headers, data={"content": "Checking with the insurer"})
    assert (await client.get(DRAFT, params=at(a), headers=doctor.headers)).json()["content"] == text
    # Saving again replaces it; an empty box removes it.
    await client.put(DRAFT, params=at(a), headers=doctor.headers, data={"content": "Second try"})
    assert (await client.get(DRAFT, params=at(a), headers=doctor.headers)).json()["content"] == "Second try"
    assert await drafts(runtime) == 2
    cleared = await client.put(DRAFT, params=at(a), headers=doctor.headers, data={"content": "  \n"})
    assert cleared.status_code == 200 and cleared.json()["saved_at"] is None
    assert await drafts(runtime) == 1


async def test_sending_removes_the_senders_draft_of_that_thread_only(client, login, demo, runtime):
    a = demo.appointments[0]
    doctor, support = await login("doctor1"), await login("support1")
    await client.put(DRAFT, params=at(a), headers=doctor.headers, data={"content": "Is the PDF readable?"})
    await client.put(DRAFT, params=at(a), headers=support.headers, data={"content": "Answer later"})
    page = await open_chat(client, doctor, a)
    # The composer names where its draft is kept.
    composer = next(e for e in walk(page["elements"]) if e["id"] == "content")
    assert composer["props"]["draft"] == f"{DRAFT}?appointment-id={a}"
    sent = await send(client, doctor, a, "Is the PDF readable?", state=page["state"])
    assert sent.status_code == 200, sent.text
    assert (await client.get(DRAFT, params=at(a), headers=doctor.headers)).json()["content"] == ""
    assert (await client.get(DRAFT, params=at(a), headers=support.headers)).json()["content"] == "Answer later"


async def test_a_refused_send_keeps_the_draft(client, login, demo):
    a = demo.appointments[0]
    doctor = await login("doctor1")
    await client.put(DRAFT, params=at(a), headers=doctor.headers, data={"content": "keep me"})
    refused = await send(client, doctor, a, "bad \x1b[31m escape")
    assert refused.status_code == 422
    assert (await client.get(DRAFT, params=at(a), headers=doctor.headers)).json()["content"] == "keep me"


async def test_drafts_follow_the_message_rules_and_the_chats_access(client, login, demo, runtime, settings):
    a = demo.appointments[0]
    doctor = await login("doctor1")
    too_long = "x" * (settings.max_message_chars + 1)
    for content in (too_long, "NUL\x00", "escape \x1b[2J"):
        refused = await client.put(DRAFT, params=at(a), headers=doctor.headers, data={"content": content})
        assert refused.status_code == 422 and "content" in refused.json()["fields"], refused.text
    longest = "y" * settings.max_message_chars
    assert (await client.put(DRAFT, params=at(a), headers=doctor.headers, data={"content": longest})).status_code == 200
    # Another doctor's thread: not found, whether reading or writing; patients: forbidden; admins read chats but
    # do not write in them, so they keep no drafts there.
    other = demo.appointments[OTHER_DOCTORS]
    assert (await client.get(DRAFT, params=at(other), headers=doctor.headers)).status_code == 404
    put = await client.put(DRAFT, params=at(other), headers=doctor.headers, data={"content": "x"})
    assert put.status_code == 404
    patient = await login("patient1")
    assert (await client.get(DRAFT, params=at(a), headers=patient.headers)).status_code == 403
    admin = await login("admin")
    assert (await client.put(DRAFT, params=at(a), headers=admin.headers, data={"content": "x"})).status_code == 403
    assert (await client.get(DRAFT, params=at(a))).status_code == 401
    assert (await client.get(DRAFT, params={"appointment-id": "1x"}, headers=doctor.headers)).status_code == 422
    assert await drafts(runtime) == 1
