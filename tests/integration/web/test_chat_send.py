"""Sending messages: the rules of spec 4.4 and 7, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import select

from doctordesk.screens.protocol import apply
from doctordesk.store.chat_tables import ChatMessage
from tests.support.chat import messages, open_chat, send, stored, walk

DISABLED = 7  # index in demo.appointments: doctor1's approved appointment with chat disabled
OTHER_DOCTORS = 14  # doctor2's first appointment


@pytest.mark.parametrize("content", ["", "   ", "\n\t \n"])
async def test_empty_or_whitespace_message_is_refused_and_nothing_stored(client, login, demo, runtime, content):
    doctor = await login("doctor1")
    response = await send(client, doctor, demo.appointments[0], content)
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "FIELDS_VALIDATION_ERROR" and "content" in body["fields"]
    assert await stored(runtime) == (0, 0, 0)


async def test_send_on_a_disabled_chat_is_refused_with_chat_disabled(client, login, demo, runtime):
    doctor = await login("doctor1")
    response = await send(client, doctor, demo.appointments[DISABLED], "Hello")
    assert response.status_code == 403
    assert response.json()["code"] == "DOCTOR_COMMUNITY_CHAT_DISABLED"
    assert await stored(runtime) == (0, 0, 0)


async def test_chat_switched_off_for_the_doctor_blocks_every_appointment_of_theirs_at_once(
    client, login, demo, runtime
):
    doctor = await login("doctor1")
    admin = await login("admin")
    a = demo.appointments[0]
    page = await open_chat(client, doctor, a)
    off = await client.post(
        f"/admin/doctors/{demo.users['doctor1']}", json={"chat_enabled": False}, headers=admin.headers
    )
    assert off.status_code == 200, off.text
    refused = await send(client, doctor, a, "Hello", state=page["state"])
    assert refused.status_code == 403 and refused.json()["code"] == "DOCTOR_COMMUNITY_CHAT_DISABLED"
    support = await send(client, await login("support1"), a, "Hello")
    assert support.status_code == 403
    assert await stored(runtime) == (0, 0, 0)
    # The open chat learns it on its poll, without a message in the thread.
    polled = await client.patch(
        "/profile/messages/load-more",
        headers={**doctor.headers, "X-Screen-State": page["state"]},
        params={"appointment-id": str(a)},
    )
    assert polled.status_code == 200, polled.text
    assert "chat-blocked" in str(polled.json()["patches"])
    # Another doctor's chat is untouched.
    other = await send(client, await login("doctor2"), demo.appointments[OTHER_DOCTORS], "Hello")
    assert other.status_code == 200, other.text
    on = await client.post(
        f"/admin/doctors/{demo.users['doctor1']}", json={"chat_enabled": True}, headers=admin.headers
    )
    assert on.status_code == 200
    assert (await send(client, doctor, a, "Hello again")).status_code == 200


async def test_disabled_chat_page_shows_the_chat_blocked(client, login, demo):
    page = await open_chat(client, await login("doctor1"), demo.appointments[DISABLED])
    by_id = {e["id"]: e for e in page["elements"]}
    assert by_id["chat-blocked"]["props"]["code"] == "DOCTOR_COMMUNITY_CHAT_DISABLED"
    assert not by_id["send"]["enabled"] and not by_id["content"]["enabled"] and not by_id["upload"]["enabled"]


async def test_valid_message_is_appended_and_the_input_cleared(client, login, demo):
    doctor = await login("doctor1")
    a = demo.appointments[0]
    await send(client, doctor, a, "First")
    page = await open_chat(client, doctor, a)
    response = await send(client, doctor, a, "Second", state=page["state"])
    assert response.status_code == 200, response.text
    update = response.json()
    assert update["kind"] == "update"
    assert {"op": "update", "id": "content", "set": {"value": ""}} in update["patches"]
    after = apply(page["elements"], update["patches"])
    assert [m["value"] for m in messages(after)] == ["First", "Second"]
    fresh = await open_chat(client, doctor, a)
    assert after == fresh["elements"]


async def test_text_is_stored_exactly_as_sent(client, login, demo, runtime):
    doctor = await login("doctor1")
    text = "  <script>alert('x')</script>\n\tÜnïcödé 😀 & \"quotes\"  "
    assert (await send(client, doctor, demo.appointments[0], text)).status_code == 200
    async with runtime.db.read() as session:
        assert await session.scalar(select(ChatMessage.content).order_by(ChatMessage.id.desc()).limit(1)) == text
    page = await open_chat(client, doctor, demo.appointments[0])
    assert messages(page["elements"])[0]["value"] == text


async def test_content_over_the_limit_is_refused(client, login, demo, runtime):
    doctor = await login("doctor1")
    response = await send(client, doctor, demo.appointments[0], "x" * (runtime.settings.max_message_chars + 1))
    assert response.status_code == 422 and "content" in response.json()["fields"]
    assert await stored(runtime) == (0, 0, 0)


async def test_missing_or_invalid_appointment_id_is_a_validation_error(client, login, demo, runtime):
    doctor = await login("doctor1")
    for value in ("", "abc", "-1", "0", str(2**63)):
        response = await client.post(
            "/profile/messages/send-message", data={"content": "Hi", "appointment-id": value}, headers=doctor.headers
        )
        assert response.status_code == 422, value
        assert response.json()["fields"] == {"appointment-id": "Required: the appointment's id."}
    assert await stored(runtime) == (0, 0, 0)


async def test_retried_send_with_a_client_message_id_creates_one_message(client, login, demo, runtime):
    doctor = await login("doctor1")
    a = demo.appointments[0]
    page = await open_chat(client, doctor, a)
    headers = {"X-Client-Message-Id": "msg-0001"}
    first = await send(client, doctor, a, "Once", state=page["state"], headers=headers)
    again = await send(client, doctor, a, "Once", state=page["state"], headers=headers)
    assert first.status_code == again.status_code == 200
    assert first.json()["patches"] == again.json()["patches"]
    assert (await stored(runtime))[1] == 1
    # The form field works the same as the header.
    await send(client, doctor, a, "Twice", extra={"client-message-id": "msg-0002"})
    await send(client, doctor, a, "Twice", extra={"client-message-id": "msg-0002"})
    assert (await stored(runtime))[1] == 2


async def test_concurrent_retries_create_one_message(client, login, demo, runtime):
    doctor = await login("doctor1")
    a = demo.appointments[0]
    responses = await asyncio.gather(
        *(send(client, doctor, a, "Same", headers={"X-Client-Message-Id": "retry-1"}) for _ in range(5))
    )
    assert [r.status_code for r in responses] == [200] * 5
    assert (await stored(runtime))[:2] == (1, 1)


async def test_client_message_id_reused_for_another_chat_is_refused(client, login, demo, runtime):
    doctor = await login("doctor1")
    headers = {"X-Client-Message-Id": "k1"}
    assert (await send(client, doctor, demo.appointments[0], "a", headers=headers)).status_code == 200
    response = await send(client, doctor, demo.appointments[1], "b", headers=headers)
    assert response.status_code == 422 and "client-message-id" in response.json()["fields"]
    bad = await send(client, doctor, demo.appointments[0], "c", headers={"X-Client-Message-Id": "../../x"})
    assert bad.status_code == 422
    assert (await stored(runtime))[1] == 1


async def test_sending_too_fast_is_refused_with_429_and_retry_after(client, login, demo, runtime):
    runtime.settings.chat_send_per_minute = 3
    doctor = await login("doctor1")
    for i in range(3):
        assert (await send(client, doctor, demo.appointments[0], f"m{i}")).status_code == 200
    response = await send(client, doctor, demo.appointments[0], "one too many")
    assert response.status_code == 429
    assert response.json()["code"] == "TOO_MANY_REQUESTS"
    assert int(response.headers["Retry-After"]) == 60
    assert (await stored(runtime))[1] == 3
    # The limit is per user: support can still answer.
    assert (await send(client, await login("support1"), demo.appointments[0], "answer")).status_code == 200


async def test_rate_limit_window_slides(client, login, demo, runtime, clock):
    from datetime import timedelta

    runtime.settings.chat_send_per_minute = 1
    doctor = await login("doctor1")
    assert (await send(client, doctor, demo.appointments[0], "a")).status_code == 200
    clock.advance(timedelta(seconds=30))
    response = await send(client, doctor, demo.appointments[0], "b")
    assert response.status_code == 429 and response.headers["Retry-After"] == "30"
    clock.advance(timedelta(seconds=31))
    assert (await send(client, doctor, demo.appointments[0], "c")).status_code == 200


async def test_patients_have_no_access_to_the_chat(client, login, demo, runtime):
    patient = await login("patient1")
    a = demo.appointments[0]  # patient1's own appointment
    assert (
        await client.put(f"/profile/messages/user-chat?appointment-id={a}", headers=patient.headers)
    ).status_code == 403
    assert (await send(client, patient, a, "Hi")).status_code == 403
    assert (
        await client.post(f"/profile/messages/close?appointment-id={a}", headers=patient.headers)
    ).status_code == 403
    assert await stored(runtime) == (0, 0, 0)


async def test_another_doctors_thread_is_not_found(client, login, demo, runtime):
    doctor = await login("doctor1")
    a = demo.appointments[OTHER_DOCTORS]
    response = await client.put(f"/profile/messages/user-chat?appointment-id={a}", headers=doctor.headers)
    assert response.status_code == 404 and response.json()["code"] == "NOT_FOUND"
    assert (await send(client, doctor, a, "Hi")).status_code == 404
    response = await client.patch(f"/profile/messages/load-more?appointment-id={a}", headers=doctor.headers)
    assert response.status_code == 404
    assert await stored(runtime) == (0, 0, 0)


async def test_support_may_answer_any_doctors_thread(client, login, demo):
    support = await login("support2")
    for index in (0, OTHER_DOCTORS):
        assert (await send(client, support, demo.appointments[index], "How can we help?")).status_code == 200


async def test_admins_read_but_cannot_send(client, login, demo, runtime):
    await send(client, await login("doctor1"), demo.appointments[0], "Hello")
    admin = await login("admin")
    page = await open_chat(client, admin, demo.appointments[0])
    assert len(messages(page["elements"])) == 1
    by_id = {e["id"]: e for e in page["elements"]}
    assert not by_id["send"]["enabled"]
    response = await send(client, admin, demo.appointments[0], "I am the admin")
    assert response.status_code == 403 and response.json()["code"] == "FORBIDDEN"
    assert (await stored(runtime))[1] == 1


async def test_unauthenticated_calls_are_refused(client, demo):
    a = demo.appointments[0]
    assert (await client.put(f"/profile/messages/user-chat?appointment-id={a}")).status_code == 401
    assert (
        await client.post("/profile/messages/send-message", data={"content": "x", "appointment-id": a})
    ).status_code == 401
    assert (await client.patch("/profile/messages/load-more")).status_code == 401
    assert (await client.get("/profile/messages/attachments/1")).status_code == 401


async def test_concurrent_first_messages_share_one_thread(client, login, demo, runtime):
    doctor, support = await login("doctor1"), await login("support1")
    a = demo.appointments[1]
    responses = await asyncio.gather(*(send(client, who, a, f"hi {i}") for i, who in enumerate([doctor, support] * 3)))
    assert [r.status_code for r in responses] == [200] * 6
    assert (await stored(runtime))[:2] == (1, 6)


async def test_a_message_is_never_timed_before_the_threads_newest(client, login, demo, runtime, clock):
    """An instance whose clock is behind writes after the thread's newest message: the thread's order is the order
    its sends committed in, so a reader who read up to the newest still finds the later message unread."""
    runtime.settings.chat_send_per_minute = 0
    doctor, support = await login("doctor1"), await login("support1")
    a = demo.appointments[0]
    assert (await send(client, doctor, a, "first")).status_code == 200
    closed = await client.post(f"/profile/messages/close?appointment-id={a}", headers=support.headers)
    assert closed.status_code == 200  # support has read up to "first"
    clock.advance(timedelta(minutes=-5))
    assert (await send(client, doctor, a, "second")).status_code == 200
    async with runtime.db.read() as session:
        rows = (
            await session.execute(
                select(ChatMessage.content, ChatMessage.created_at, ChatMessage.id)
                .where(ChatMessage.content.in_(["first", "second"]))
                .order_by(ChatMessage.created_at, ChatMessage.id)
            )
        ).all()
    assert [r.content for r in rows] == ["first", "second"] and rows[0].created_at == rows[1].created_at
    threads = (await client.put("/profile/messages/threads", headers=support.headers)).json()
    unread = next(e for e in walk(threads["elements"]) if e["id"] == f"unread-{a}")
    assert unread["value"] == "1"
