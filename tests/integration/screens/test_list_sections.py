"""The appointment list's sections are read on their own terms: a long history never hides current work, and
"show more" walks a section with no row twice or missing while appointments arrive, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import insert, select

from doctordesk.domain.appointments.list_sections import Section, section_of
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.roles import Actor
from doctordesk.screens.page_caches import PageCache
from doctordesk.screens.protocol import apply
from doctordesk.services.accounts.auth import authenticate
from doctordesk.services.appointments.reading import list_appointments
from doctordesk.store.tables import Appointment
from tests.integration.screens.test_appointment_list import new_appointment
from tests.support.appointments import appointment_row


def _row(demo: Any, *, start: Any, status: Status, now: Any, doctor: str = "doctor1") -> dict[str, Any]:
    patient, berlin = demo.patients["patient1"], demo.locations["berlin"]
    return appointment_row(
        patient_id=patient, doctor_id=demo.users[doctor], location_id=berlin, start=start, status=status, now=now
    )


async def _insert(runtime: Any, rows: list[dict[str, Any]]) -> list[int]:
    """Rows written as they are (no events: a poll learns of them only by its maximum age); their ids."""
    ids: list[int] = []
    async with runtime.db.transaction() as session:
        for chunk in range(0, len(rows), 2000):
            ids += await session.scalars(insert(Appointment).returning(Appointment.id), rows[chunk : chunk + 2000])
    return ids


def _section(page_elements: list[dict[str, Any]], key: str) -> dict[str, Any]:
    return next(e for e in page_elements if e["id"] == key)


def _row_ids(section: dict[str, Any]) -> list[int]:
    return [c["props"]["appointment"] for c in section.get("children", []) if c["type"] == "Row"]


def _more_link(section: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in section["children"] if c["id"] == f"{section['id']}-more"), None)


async def _expected(runtime: Any, actor: Actor, now: Any) -> dict[Section, list[int]]:
    """Each section's rows in its order, read the slow way: everything the actor may see, grouped."""
    async with runtime.db.read() as session:
        views = await list_appointments(session, actor, limit=1_000_000)
    grouped: dict[Section, list[int]] = {s: [] for s in Section}
    for view in views:
        grouped[section_of(view, now)].append(view.id)
    grouped[Section.PAST].reverse()
    return grouped


@pytest.mark.slow
async def test_a_long_history_never_hides_new_requests_or_upcoming_appointments(client, login, demo, runtime, clock):
    now = clock.now()
    history = [
        _row(demo, start=now - timedelta(days=1 + i // 8, hours=i % 8), status=Status.COMPLETED, now=now)
        for i in range(10_000)
    ]
    await _insert(runtime, history)
    new = [
        _row(demo, start=now + timedelta(days=20 + i, hours=2), status=Status.REQUESTED, now=now + timedelta(seconds=1))
        for i in range(3)
    ]
    new_ids = await _insert(runtime, new)
    doctor = await login("doctor1")
    page = (await client.put("/profile/appointments", headers=doctor.headers)).json()

    expected = await _expected(runtime, await authenticate(runtime, doctor.token), now)
    size = runtime.settings.list_page_size
    needs = _row_ids(_section(page["elements"], "needs-decision"))
    assert set(new_ids) <= set(needs)
    assert needs == expected[Section.NEEDS_DECISION][:size]
    assert _row_ids(_section(page["elements"], "upcoming")) == expected[Section.UPCOMING][:size]
    assert _row_ids(_section(page["elements"], "waiting")) == expected[Section.WAITING][:size]
    past = _section(page["elements"], "past")
    assert _row_ids(past) == expected[Section.PAST][:size]
    assert len(expected[Section.PAST]) > 10_000
    more = _more_link(past)
    assert more is not None and more.get("visible", True) is not False


async def test_the_first_page_is_the_same_size_whatever_the_history(client, login, demo, runtime, clock):
    now = clock.now()
    doctor = await login("doctor1")
    sizes = []
    for batch in range(3):
        await _insert(
            runtime,
            [
                _row(demo, start=now - timedelta(days=3 + i, hours=1 + batch), status=Status.COMPLETED, now=now)
                for i in range(400)
            ],
        )
        page = await client.put("/profile/appointments", headers=doctor.headers)
        sizes.append(len(page.content))
    # 400, 800 and 1,200 past appointments: the same rows' worth of JSON (ids and times differ in length only).
    assert max(sizes) - min(sizes) < min(sizes) * 0.02, sizes


async def test_show_more_walks_past_and_closed_to_the_oldest_with_no_row_twice_while_appointments_arrive(
    client, login, demo, runtime, clock
):
    runtime.settings.list_page_size = 7
    now = clock.now()
    await _insert(
        runtime,
        [_row(demo, start=now - timedelta(days=2 + i, hours=3), status=Status.COMPLETED, now=now) for i in range(60)],
    )
    doctor = await login("doctor1")
    page = (await client.put("/profile/appointments", headers=doctor.headers)).json()
    elements, state = page["elements"], page["state"]
    arrivals = 0
    for step in range(40):
        past = _section(elements, "past")
        link = _more_link(past)
        if link is None or link.get("visible") is False:
            break
        assert link["action"]["method"] == "PATCH"
        # Meanwhile: a visit recorded late lands among the rows already shown, a new request arrives.
        if step % 3 == 1:
            shown = _row_ids(past)
            async with runtime.db.read() as session:
                middle = await session.get(Appointment, shown[len(shown) // 2])
            assert middle is not None
            late = middle.start_at - timedelta(minutes=5)
            await _insert(
                runtime,
                [
                    _row(demo, start=late, status=Status.COMPLETED, now=now + timedelta(seconds=step)),
                    _row(demo, start=now + timedelta(days=9, hours=step % 8), status=Status.REQUESTED, now=now),
                ],
            )
            arrivals += 1
        response = await client.patch(link["action"]["endpoint"], headers={**doctor.headers, "X-Screen-State": state})
        assert response.status_code == 200, response.text
        update = response.json()
        elements, state = apply(elements, update["patches"]), update["state"]
    else:
        pytest.fail("show more never ended")

    assert arrivals >= 3
    expected = await _expected(runtime, await authenticate(runtime, doctor.token), now)
    walked = _row_ids(_section(elements, "past"))
    assert len(walked) == len(set(walked))
    assert walked == expected[Section.PAST]  # every row once, newest first, down to the oldest
    # The walked page is what a fresh render through the same windows shows: its poll is empty.
    unchanged = await _poll(client, doctor.headers, state)
    assert unchanged["patches"] == [] and unchanged["state"] == state


async def _poll(client: Any, headers: dict[str, str], state: str) -> dict[str, Any]:
    response = await client.patch("/profile/appointments", headers={**headers, "X-Screen-State": state})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_a_poll_after_show_more_keeps_the_rows_shown_and_an_unchanged_poll_stays_empty(
    client, login, demo, runtime, clock
):
    runtime.settings.list_page_size = 5
    now = clock.now()
    await _insert(
        runtime,
        [_row(demo, start=now - timedelta(days=2 + i), status=Status.COMPLETED, now=now) for i in range(20)],
    )
    doctor = await login("doctor1")
    page = (await client.put("/profile/appointments", headers=doctor.headers)).json()
    link = _more_link(_section(page["elements"], "past"))
    assert link is not None
    update = (
        await client.patch(link["action"]["endpoint"], headers={**doctor.headers, "X-Screen-State": page["state"]})
    ).json()
    elements = apply(page["elements"], update["patches"])
    assert len(_row_ids(_section(elements, "past"))) == 10

    unchanged = await _poll(client, doctor.headers, update["state"])
    assert unchanged["patches"] == [] and unchanged["state"] == update["state"]

    # A change elsewhere re-renders the page through the same window: the ten rows stay.
    new_id = await new_appointment(runtime, like=demo.appointments[0], days=1)
    runtime.screens.cache = PageCache()  # as on another instance: nothing remembered, the page comes whole
    changed = await _poll(client, doctor.headers, update["state"])
    assert [p["op"] for p in changed["patches"]] == ["reset"]
    after = apply([], changed["patches"])
    assert len(_row_ids(_section(after, "past"))) == 10
    assert new_id in _row_ids(_section(after, "needs-decision"))


async def test_show_more_of_an_unknown_section_is_a_validation_error(client, login):
    doctor = await login("doctor1")
    response = await client.patch("/profile/appointments/more", params={"section": "all"}, headers=doctor.headers)
    assert response.status_code == 422
    assert response.json()["code"] == "FIELDS_VALIDATION_ERROR"


@pytest.mark.parametrize("username", ["patient1", "support1"])
async def test_patients_and_support_agents_lists_page_the_same_way(client, login, demo, runtime, clock, username):
    runtime.settings.list_page_size = 4
    now = clock.now()
    await _insert(
        runtime,
        [_row(demo, start=now - timedelta(days=2 + i), status=Status.COMPLETED, now=now) for i in range(15)],
    )
    user = await login(username)
    page = (await client.put("/profile/appointments", headers=user.headers)).json()
    elements, state = page["elements"], page["state"]
    while (link := _more_link(_section(elements, "past"))) is not None and link.get("visible") is not False:
        update = (
            await client.patch(link["action"]["endpoint"], headers={**user.headers, "X-Screen-State": state})
        ).json()
        elements, state = apply(elements, update["patches"]), update["state"]
    walked = _row_ids(_section(elements, "past"))
    me: Actor = await authenticate(runtime, user.token)
    async with runtime.db.read() as session:
        views = await list_appointments(session, me, limit=1_000_000)
    expected = [v.id for v in reversed(views) if section_of(v, now) is Section.PAST]
    assert walked == expected


async def test_the_support_thread_list_pages_with_show_more_down_to_the_least_recently_active(
    client, login, demo, runtime, clock
):
    from doctordesk.store.chat_tables import ChatThread
    from tests.support.chat import send

    runtime.settings.list_page_size = 3
    support = await login("support1")
    async with runtime.db.read() as session:
        chatty = list(await session.scalars(select(Appointment.id).where(Appointment.chat_enabled).limit(8)))
    for a in chatty:
        clock.advance(timedelta(minutes=1))
        assert (await send(client, support, a, f"About {a}")).status_code == 200
    page = (await client.put("/profile/messages/threads", headers=support.headers)).json()
    elements, state = page["elements"], page["state"]
    assert len([c for c in _section(elements, "threads")["children"] if c["type"] == "Row"]) == 3
    clicks = 0
    while (link := _more_link(_section(elements, "threads"))) is not None and link.get("visible") is not False:
        if clicks == 1:  # a thread already shown becomes the most recent: it moves up, it is not shown twice
            clock.advance(timedelta(minutes=1))
            assert (await send(client, support, chatty[-2], "Again")).status_code == 200
        response = await client.patch(link["action"]["endpoint"], headers={**support.headers, "X-Screen-State": state})
        assert response.status_code == 200, response.text
        elements, state = apply(elements, response.json()["patches"]), response.json()["state"]
        clicks += 1
    rows = [c["id"] for c in _section(elements, "threads")["children"] if c["type"] == "Row"]
    async with runtime.db.read() as session:
        order = select(ChatThread.appointment_id).order_by(ChatThread.last_activity_at.desc(), ChatThread.id.desc())
        expected = [f"thread-{a}" for a in await session.scalars(order)]
    assert len(expected) >= len(chatty) and clicks >= 2
    assert rows[0] == f"thread-{chatty[-2]}"
    assert rows == expected  # every thread once, most recently active first
