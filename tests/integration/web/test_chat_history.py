"""Thread history: keyset pages of older messages, newer ones by the poll, read state per reader, unread
indicators, the support thread list, and a history that is never deleted."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete

from doctordesk.screens.protocol import apply
from doctordesk.store.chat_tables import ChatMessage
from tests.support.chat import LOAD_MORE, ids, messages, open_chat, send, walk


def _by_id(elements):
    return {e["id"]: e for e in walk(elements)}


async def _thread(client, login, a, count, runtime, clock, *, same_time=False):
    """``count`` messages alternating doctor / support, a second apart (or all at the same instant)."""
    runtime.settings.chat_send_per_minute = 0
    doctor, support = await login("doctor1"), await login("support1")
    for i in range(count):
        response = await send(client, doctor if i % 2 == 0 else support, a, f"m{i}")
        assert response.status_code == 200, response.text
        if not same_time:
            clock.advance(timedelta(seconds=1))
    return doctor, support


async def _load_older(client, who, page_elements, state, link, layout="desktop"):
    response = await client.patch(
        link["action"]["endpoint"], headers={**who.headers, "X-Screen-State": state, "X-Layout": layout}
    )
    assert response.status_code == 200, response.text
    update = response.json()
    return apply(page_elements, update["patches"]), update


async def test_chat_shows_the_latest_page_and_load_more_only_when_older_exist(client, login, demo, runtime, clock):
    runtime.settings.chat_page_size = 5
    doctor, _ = await _thread(client, login, demo.appointments[0], 5, runtime, clock)
    page = await open_chat(client, doctor, demo.appointments[0])
    assert "load-more" not in ids(page["elements"])
    await send(client, doctor, demo.appointments[0], "m5")
    page = await open_chat(client, doctor, demo.appointments[0])
    assert [m["value"] for m in messages(page["elements"])] == ["m1", "m2", "m3", "m4", "m5"]
    assert "load-more" in ids(page["elements"])


async def test_load_more_prepends_older_pages_until_the_start(client, login, demo, runtime, clock):
    runtime.settings.chat_page_size = 4
    doctor, _ = await _thread(client, login, demo.appointments[0], 10, runtime, clock)
    for layout in ("desktop", "mobile"):
        page = await open_chat(client, doctor, demo.appointments[0], layout)
        elements, state = page["elements"], page["state"]
        seen = [[m["value"] for m in messages(elements)]]
        while "load-more" in ids(elements):
            link = _by_id(elements)["load-more"]
            elements, update = await _load_older(client, doctor, elements, state, link, layout)
            state = update["state"]
            # Older messages arrive as one prepend into the thread container (the client keeps its scroll).
            prepends = [p for p in update["patches"] if p["op"] == "prepend"]
            assert prepends and prepends[0]["parent"] == "spacer"
            seen.append([m["value"] for m in messages(elements)])
        assert seen == [
            ["m6", "m7", "m8", "m9"],
            ["m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"],
            [f"m{i}" for i in range(10)],
        ]
        # The patched page is exactly what the server renders for that window.
        poll = await client.patch(LOAD_MORE, headers={**doctor.headers, "X-Screen-State": state, "X-Layout": layout})
        assert apply(elements, poll.json()["patches"]) == elements


async def test_keyset_pagination_orders_by_time_then_id_when_times_are_equal(client, login, demo, runtime, clock):
    runtime.settings.chat_page_size = 3
    doctor, _ = await _thread(client, login, demo.appointments[0], 7, runtime, clock, same_time=True)
    page = await open_chat(client, doctor, demo.appointments[0])
    elements, state = page["elements"], page["state"]
    while "load-more" in ids(elements):
        elements, update = await _load_older(client, doctor, elements, state, _by_id(elements)["load-more"])
        state = update["state"]
    values = [m["value"] for m in messages(elements)]
    assert values == [f"m{i}" for i in range(7)]  # none lost, none twice


async def test_load_more_from_another_chats_message_is_refused(client, login, demo, runtime, clock):
    doctor, _ = await _thread(client, login, demo.appointments[0], 2, runtime, clock)
    await send(client, doctor, demo.appointments[1], "elsewhere")
    page = await open_chat(client, doctor, demo.appointments[1])
    first_of_other = messages((await open_chat(client, doctor, demo.appointments[0]))["elements"])[0]["props"][
        "message"
    ]
    response = await client.patch(
        f"{LOAD_MORE}?appointment-id={demo.appointments[1]}&before={first_of_other}",
        headers={**doctor.headers, "X-Screen-State": page["state"]},
    )
    assert response.status_code == 422 and "before" in response.json()["fields"]


async def test_poll_brings_newer_messages_from_the_state_token_alone(client, login, demo, runtime, clock):
    doctor, support = await _thread(client, login, demo.appointments[0], 2, runtime, clock)
    page = await open_chat(client, doctor, demo.appointments[0])
    quiet = await client.patch(LOAD_MORE, headers={**doctor.headers, "X-Screen-State": page["state"]})
    assert quiet.status_code == 200 and quiet.json()["patches"] == []
    await send(client, support, demo.appointments[0], "news")
    # No query: the real-time message names the path only; the state token says which chat.
    update = (await client.patch(LOAD_MORE, headers={**doctor.headers, "X-Screen-State": page["state"]})).json()
    after = apply(page["elements"], update["patches"])
    assert [m["value"] for m in messages(after)] == ["m0", "m1", "news"]
    fresh = await open_chat(client, doctor, demo.appointments[0])
    assert [m["id"] for m in messages(after)] == [m["id"] for m in messages(fresh["elements"])]


async def test_poll_without_a_chat_is_a_validation_error(client, login, demo):
    doctor = await login("doctor1")
    response = await client.patch(LOAD_MORE, headers={**doctor.headers, "X-Screen-State": "garbage"})
    assert response.status_code == 422 and "appointment-id" in response.json()["fields"]


async def test_unread_marker_stands_before_the_first_unread_message(client, login, demo, runtime, clock):
    doctor, support = await _thread(client, login, demo.appointments[0], 2, runtime, clock)  # m0 doctor, m1 support
    page = await open_chat(client, doctor, demo.appointments[0])
    refs = [e["id"] for e in walk(page["elements"])]
    m1 = next(m for m in messages(page["elements"]) if m["value"] == "m1")
    assert refs.index("new-message") < refs.index(m1["id"])
    assert refs[refs.index(m1["id"]) - 3 : refs.index(m1["id"])] == [
        "new-message-line~before",
        "new-message",
        "new-message-line~after",
    ]
    # Sending marks the thread read for the sender: support1 wrote m1 after the doctor's m0.
    assert "new-message" not in ids((await open_chat(client, support, demo.appointments[0]))["elements"])
    other_agent = await open_chat(client, await login("support2"), demo.appointments[0])
    first_message = messages(other_agent["elements"])[0]["id"]
    assert ids(other_agent["elements"]).index("new-message") < ids(other_agent["elements"]).index(first_message)


async def test_closing_the_chat_marks_it_read_for_that_reader_only(client, login, demo, runtime, clock):
    a = demo.appointments[0]
    doctor, support = await _thread(client, login, a, 2, runtime, clock)
    support2 = await login("support2")
    closed = await client.post(f"/profile/messages/close?appointment-id={a}", headers=doctor.headers)
    assert closed.status_code == 200 and closed.json()["navigate"] == "/profile/appointments"
    assert "new-message" not in ids((await open_chat(client, doctor, a))["elements"])
    # support2 has read nothing: both messages are new to them.
    assert "new-message" in ids((await open_chat(client, support2, a))["elements"])
    # Read flags are the other side's: support1's m1 shows as read once the doctor closed the chat.
    support_page = await open_chat(client, support, a)
    outgoing = next(m for m in messages(support_page["elements"]) if m["value"] == "m1")
    assert outgoing["props"]["read"] is True  # the doctor closed the chat after m1
    closed = await client.post(f"/profile/messages/close?appointment-id={a}", headers=support.headers)
    assert closed.json()["navigate"] == "/profile/messages/threads"


async def test_new_message_sets_the_unread_indicator_on_the_doctors_list(client, login, demo, runtime, clock):
    a = demo.appointments[0]
    doctor, support = await login("doctor1"), await login("support1")
    listing = (await client.put("/profile/appointments", headers=doctor.headers)).json()
    assert _by_id(listing["elements"])[f"unread-{a}"]["visible"] is False
    await send(client, support, a, "Please call the patient")
    await send(client, support, a, "Thanks")
    update = (
        await client.patch("/profile/appointments", headers={**doctor.headers, "X-Screen-State": listing["state"]})
    ).json()
    badge = _by_id(apply(listing["elements"], update["patches"]))[f"unread-{a}"]
    assert badge["value"] == "2" and "visible" not in badge
    await client.post(f"/profile/messages/close?appointment-id={a}", headers=doctor.headers)
    listing = (await client.put("/profile/appointments", headers=doctor.headers)).json()
    assert _by_id(listing["elements"])[f"unread-{a}"]["visible"] is False


async def test_a_thread_being_viewed_is_marked_read_as_new_messages_arrive(client, login, demo, runtime, clock):
    a = demo.appointments[0]
    doctor, support = await login("doctor1"), await login("support1")
    page = await open_chat(client, doctor, a)
    await send(client, support, a, "Are you there?")
    await client.patch(LOAD_MORE, headers={**doctor.headers, "X-Screen-State": page["state"]})
    listing = (await client.put("/profile/appointments", headers=doctor.headers)).json()
    assert _by_id(listing["elements"])[f"unread-{a}"]["visible"] is False


async def test_support_thread_list_orders_by_activity_with_unread_and_latest_message(
    client, login, demo, runtime, clock
):
    runtime.settings.chat_send_per_minute = 0
    doctor1, doctor2, support = await login("doctor1"), await login("doctor2"), await login("support1")
    first, second = demo.appointments[0], demo.appointments[14]
    await send(client, doctor1, first, "Older thread")
    clock.advance(timedelta(minutes=1))
    await send(client, doctor2, second, "Newer thread")
    page = (await client.put("/profile/messages/threads", headers=support.headers)).json()
    mine = {f"thread-{first}", f"thread-{second}"}
    rows = [e for e in page["elements"][1]["children"] if e["type"] == "Row"]
    assert [r["id"] for r in rows][:2] == [f"thread-{second}", f"thread-{first}"]
    by_id = _by_id(page["elements"])
    assert by_id[f"thread-latest-{second}"]["value"] == "Newer thread"
    assert by_id[f"unread-{second}"]["value"] == "1"
    clock.advance(timedelta(minutes=1))
    await send(client, support, first, "Answer")
    update = (
        await client.patch("/profile/messages/threads", headers={**support.headers, "X-Screen-State": page["state"]})
    ).json()
    after = apply(page["elements"], update["patches"])
    rows = [e for e in after[1]["children"] if e["type"] == "Row" and e["id"] in mine]
    assert [r["id"] for r in rows] == [f"thread-{first}", f"thread-{second}"]
    assert _by_id(after)[f"unread-{first}"]["visible"] is False  # own answer: read
    assert (await client.put("/profile/messages/threads", headers=doctor1.headers)).status_code == 403


async def test_history_is_never_deleted(client, login, demo, runtime, clock):
    import pytest
    from sqlalchemy.exc import DBAPIError

    await _thread(client, login, demo.appointments[0], 3, runtime, clock)
    with pytest.raises(DBAPIError):
        async with runtime.db.transaction() as session:
            await session.execute(delete(ChatMessage))
    page = await open_chat(client, await login("admin"), demo.appointments[0])
    assert len(messages(page["elements"])) == 3


async def _bulk_messages(runtime, a, sender_id, count, clock):
    """``count`` messages of ``sender_id`` in the thread of ``a``, inserted in one statement, a second apart."""
    from sqlalchemy import insert, select

    from doctordesk.store.chat_tables import ChatThread

    async with runtime.db.transaction() as session:
        thread_id = await session.scalar(select(ChatThread.id).where(ChatThread.appointment_id == a))
        start = clock.now()
        at = [start + timedelta(seconds=i) for i in range(count)]
        rows = [{"thread_id": thread_id, "sender_id": sender_id, "content": "b", "created_at": t} for t in at]
        await session.execute(insert(ChatMessage), rows)
        newest = await session.scalar(select(ChatMessage.id).order_by(ChatMessage.id.desc()).limit(1))
        thread = await session.get(ChatThread, thread_id)
        thread.last_message_id = newest
        thread.last_activity_at = start + timedelta(seconds=count)
    clock.advance(timedelta(seconds=count + 1))


async def test_unread_counts_stop_at_99_plus_however_long_the_thread(client, login, demo, runtime, clock):
    a = demo.appointments[0]
    doctor, support = await login("doctor1"), await login("support1")
    await send(client, doctor, a, "Question")  # the thread exists, read by the doctor up to here
    await _bulk_messages(runtime, a, support.user["id"], 150, clock)
    listing = (await client.put("/profile/appointments", headers=doctor.headers)).json()
    assert _by_id(listing["elements"])[f"unread-{a}"]["value"] == "99+"
    threads = (await client.put("/profile/messages/threads", headers=(await login("support2")).headers)).json()
    assert _by_id(threads["elements"])[f"unread-{a}"]["value"] == "99+"  # 151 messages, none read by support2


async def test_unread_counts_below_the_cap_are_exact_and_skip_the_readers_own_messages(
    client, login, demo, runtime, clock
):
    a = demo.appointments[0]
    doctor, support = await login("doctor1"), await login("support1")
    await send(client, doctor, a, "Question")
    await _bulk_messages(runtime, a, support.user["id"], 98, clock)
    await _bulk_messages(runtime, a, doctor.user["id"], 5, clock)  # the doctor's own, not read yet: not unread
    listing = (await client.put("/profile/appointments", headers=doctor.headers)).json()
    assert _by_id(listing["elements"])[f"unread-{a}"]["value"] == "98"


async def test_messages_at_the_same_instant_as_the_read_position_count_by_their_order(
    client, login, demo, runtime, clock
):
    runtime.settings.chat_send_per_minute = 0
    a = demo.appointments[0]
    doctor, support = await login("doctor1"), await login("support1")
    page = await open_chat(client, doctor, a)
    await send(client, support, a, "first")
    await client.patch(LOAD_MORE, headers={**doctor.headers, "X-Screen-State": page["state"]})  # read: "first"
    await send(client, support, a, "second, same instant")
    await send(client, support, a, "third, same instant")
    listing = (await client.put("/profile/appointments", headers=doctor.headers)).json()
    assert _by_id(listing["elements"])[f"unread-{a}"]["value"] == "2"


async def test_unread_counts_of_many_threads_in_one_list_are_each_threads_own(client, login, demo, runtime, clock):
    """One statement counts every thread of the list: one the reader never opened, one read part way, one read to
    its newest message (not counted) and one without messages."""
    runtime.settings.chat_send_per_minute = 0
    doctor, support = await login("doctor1"), await login("support1")
    listing = (await client.put("/profile/appointments", headers=doctor.headers)).json()
    rows = [e["props"]["appointment"] for e in walk(listing["elements"]) if e["type"] == "Row"]
    never, part_way, read_all, silent = rows[:4]
    for _ in range(3):
        assert (await send(client, support, never, "to a thread never opened")).status_code == 200
    assert (await send(client, doctor, part_way, "read up to here")).status_code == 200
    await _bulk_messages(runtime, part_way, support.user["id"], 4, clock)
    for _ in range(2):
        assert (await send(client, support, read_all, "answered below")).status_code == 200
    assert (await send(client, doctor, read_all, "the newest, the doctor's own")).status_code == 200
    listing = (await client.put("/profile/appointments", headers=doctor.headers)).json()
    shown = _by_id(listing["elements"])
    assert (shown[f"unread-{never}"]["value"], shown[f"unread-{part_way}"]["value"]) == ("3", "4")
    assert shown[f"unread-{read_all}"].get("visible") is False
    assert shown[f"unread-{silent}"].get("visible") is False


async def test_one_agents_tabs_share_a_thread_list_render_and_another_agent_renders_their_own(
    client, login, demo, runtime, clock, monkeypatch
):
    from doctordesk.services.chat import threads_screen as threads

    renders = 0
    list_threads = threads.list_threads

    async def counted(*args, **kwargs):
        nonlocal renders
        renders += 1
        return await list_threads(*args, **kwargs)

    monkeypatch.setattr(threads, "list_threads", counted)
    doctor = await login("doctor1")
    tab_1 = {**(await login("support1")).headers, "X-Client-Id": "tab-1"}
    tab_2 = {**(await login("support1")).headers, "X-Client-Id": "tab-2"}
    other = {**(await login("support2")).headers, "X-Client-Id": "other"}
    pages = [(await client.put("/profile/messages/threads", headers=h)).json() for h in (tab_1, tab_2, other)]
    await send(client, doctor, demo.appointments[0], "A new question")
    renders = 0
    updates = [
        (await client.patch("/profile/messages/threads", headers={**h, "X-Screen-State": p["state"]})).json()
        for h, p in zip((tab_1, tab_2, other), pages, strict=True)
    ]
    assert renders == 2  # the two tabs of support1 once, support2 on their own
    for h, page, update in zip((tab_1, tab_2, other), pages, updates, strict=True):
        fresh = (await client.put("/profile/messages/threads", headers=h)).json()
        assert update["patches"] and apply(page["elements"], update["patches"]) == fresh["elements"]
    assert updates[0]["state"] == updates[1]["state"] != updates[2]["state"]
