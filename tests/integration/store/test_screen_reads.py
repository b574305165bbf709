"""A screen's reads on SQLite: the appointment list's changed poll (an event on the doctor's topic, so it renders
again) runs its statements on the event loop's thread, none handed to a reader thread, and answers the same as with
the readers' threads (``DOCTORDESK_DB_SQLITE_INLINE_SCREEN_READS``). On PostgreSQL there is nothing to hand off, so
these tests run on SQLite only (PostgreSQL's screens' reads: ``test_screen_reads_postgres.py``)."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import aiosqlite
import pytest
from sqlalchemy import Integer, bindparam, event, literal, select

from doctordesk.domain.appointments.list_sections import Section
from doctordesk.domain.events import doctor_topic
from doctordesk.domain.roles import Actor, Role
from doctordesk.services.appointments import list_screen, notices, reading
from doctordesk.services.appointments.reading import visibility, visibility_params
from doctordesk.store import chat_repo, sqlite_inline
from doctordesk.store.mail_tables import AppointmentConfirmation
from doctordesk.store.tables import Appointment
from tests.support.chat import LOAD_MORE, open_chat, send

LIST = "/profile/appointments"
# SQLite alone has reader threads to hand statements to.
pytestmark = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)


_OURS: contextvars.ContextVar[bool] = contextvars.ContextVar("ours", default=False)


@pytest.fixture
def handed_off(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many calls aiosqlite connections handed to their threads for a poll (the inline connection runs its own).
    Only calls made in the poll's context count: the app's background rounds (webhook claims, reminders, pushes) run
    in tasks made at its start, so one of them falling inside the poll is not the poll's."""
    count = [0]
    handed = aiosqlite.Connection._execute

    async def counted(self, fn, *args, **kwargs):  # type: ignore[no-untyped-def]
        if _OURS.get():
            count[0] += 1
        return await handed(self, fn, *args, **kwargs)

    monkeypatch.setattr(aiosqlite.Connection, "_execute", counted)
    return count


@contextlib.contextmanager
def _counted() -> Iterator[None]:
    """The block's calls are the ones ``handed_off`` counts."""
    ours = _OURS.set(True)
    try:
        yield
    finally:
        _OURS.reset(ours)


async def _changed_poll(client, runtime, doctor, headers: dict[str, str], state: str) -> dict:
    runtime.screens.revisions.bump([doctor_topic(doctor)])
    with _counted():
        answer = await client.patch(LIST, headers={**headers, "X-Screen-State": state})
    assert answer.status_code == 200, answer.text
    assert answer.json()["state"] != state  # rendered again, not answered from memory
    return answer.json()


async def test_the_lists_changed_poll_hands_no_statement_to_a_thread(client, login, demo, runtime, handed_off):
    doctor = await login("doctor1")
    page = await client.put(LIST, headers=doctor.headers)
    assert page.status_code == 200, page.text
    before = handed_off[0]
    answer = await _changed_poll(client, runtime, demo.users["doctor1"], doctor.headers, page.json()["state"])
    assert handed_off[0] == before
    assert answer["kind"] == "update" and answer["patches"] == []  # nothing the list shows changed


async def test_a_chat_sends_answer_and_the_chats_poll_hand_no_statement_to_a_thread(client, login, demo, handed_off):
    """The send is written on the loop's thread (the writer) and its answer, the chat rendered again, read there
    too; so is the poll of a chat that misses the new message. A hand-off per statement waited behind every ready
    callback of a busy loop: the sends' tail at 10,000 open lists."""
    doctor = await login("doctor1")
    a = demo.appointments[0]
    page = await open_chat(client, doctor, a)
    with _counted():
        sent = await send(client, doctor, a, "Hello")  # no state: the answer is the chat rendered again
        polled = await client.patch(
            LOAD_MORE, headers={**doctor.headers, "X-Screen-State": page["state"]}, params={"appointment-id": str(a)}
        )
    assert sent.status_code == 200, sent.text
    assert polled.status_code == 200, polled.text
    assert "Hello" in str(sent.json()["patches"]) and "Hello" in str(polled.json()["patches"])
    assert handed_off[0] == 0


async def test_a_tokens_check_on_the_request_path_hands_no_statement_to_a_thread(
    client, login, demo, runtime, handed_off
):
    """A token the process has not verified lately (a sign-in's first request, every cached token again after
    ``DOCTORDESK_AUTH_CACHE_SECONDS``) is read on the loop's thread: one small statement, not a hand-off on the
    request's path."""
    doctor = await login("doctor1")
    page = await client.put(LIST, headers=doctor.headers)
    runtime.auth_cache.drop_user(demo.users["doctor1"])  # as when its time in the cache ended
    with _counted():
        again = await client.patch(LIST, headers={**doctor.headers, "X-Screen-State": page.json()["state"]})
    assert again.status_code == 200, again.text
    assert runtime.auth_cache.token_ids()  # it was read again, and kept
    assert handed_off[0] == 0


@pytest.fixture
def inline_reads() -> bool:
    return True  # the default; a test parametrizes it off


@pytest.fixture
def settings(database_url, settings_factory, inline_reads):
    # No background loop of the app's own reads meanwhile (the waitlist's rounds, woken by the list's event).
    return settings_factory(
        database_url, db_sqlite_inline_screen_reads=inline_reads, waitlist_in_process=False, bulk_in_process=False
    )


@pytest.mark.parametrize("inline_reads", [False])
async def test_with_the_setting_off_the_same_poll_reads_on_the_readers_threads(
    client, login, demo, runtime, handed_off
):
    assert runtime.db.screen_read_engine is runtime.db.read_engine
    doctor = await login("doctor1")
    page = await client.put(LIST, headers=doctor.headers)
    before = handed_off[0]
    answer = await _changed_poll(client, runtime, demo.users["doctor1"], doctor.headers, page.json()["state"])
    assert handed_off[0] > before
    assert answer["kind"] == "update" and answer["patches"] == []


@pytest.fixture
def executed(runtime) -> list[str]:
    """The statements SQLAlchemy executed on the screens' engine (a planned read runs none of its own)."""
    seen: list[str] = []

    def record(_conn, _cursor, statement, *_rest) -> None:  # type: ignore[no-untyped-def]
        seen.append(statement)

    engine = runtime.db.screen_read_engine.sync_engine
    event.listen(engine, "before_cursor_execute", record)
    yield seen
    event.remove(engine, "before_cursor_execute", record)


async def test_a_planned_read_answers_what_sqlalchemy_executes(runtime, demo, clock, executed):
    """Each statement the list's render reads through ``sqlite_inline.planned_rows`` answers the same rows, converted
    the same way (UTC times, booleans, counts, no rows), as SQLAlchemy's execution of it, with lists of every length
    the plans are made for; and it runs none of SQLAlchemy's executions."""
    actor = Actor(user_id=demo.users["doctor1"], username="doctor1", role=Role.DOCTOR, display_name="doctor1")
    now = clock.now()
    viewer = {**visibility_params(actor), "now": now}
    shape = visibility(actor)
    mine = select(Appointment.id, Appointment.start_at).where(Appointment.doctor_id == actor.user_id)
    async with runtime.db.transaction() as session:  # a confirmation and a notice, so they have rows to convert
        (first_id, first_start), *_ = (await session.execute(mine.order_by(Appointment.id))).all()
        session.add(AppointmentConfirmation(appointment_id=first_id, start_at=first_start, confirmed_at=now))
        notices.leave(session, [actor.user_id], appointment_id=first_id, text="A notice", now=now)
    async with runtime.db.read(screen=True) as session:
        ids = [a for a, _ in await session.execute(mine.order_by(Appointment.id))]
        assert len(ids) > 3
        _, plain = list_screen._first_pages_kept(shape, tuple(Section), False, None, 11)
        _, under_way = list_screen._first_pages_kept(shape, tuple(Section), True, None, 11)
        candidates = list_screen._under_way_statement(shape)
        reads: list[tuple[Any, dict[str, Any]]] = [
            (plain, viewer),
            *((under_way, {**viewer, "under_way": ids[:n]}) for n in (1, 3)),
            *(
                (candidates, {**viewer, "now": at, "since": at - timedelta(days=400)})
                for at in (now, now + timedelta(days=30))
            ),
            *((chat_repo._unread(), {"reader": actor.user_id, "ids": ids[:n]}) for n in (0, 1, len(ids))),
            *((reading._confirmations(), {"ids": ids[:n]}) for n in (0, len(ids))),
            (notices._open_notices(), {"user": actor.user_id}),
        ]
        await session.connection()
        before = len(executed)
        planned = [await sqlite_inline.planned_rows(session, statement, params) for statement, params in reads]
        assert len(executed) == before  # not a comparison of SQLAlchemy with itself
        executes = [[tuple(row) for row in await session.execute(s, params)] for s, params in reads]
    assert planned == executes
    first = planned[0]
    assert first and all(type(row[2]) is datetime and row[2].tzinfo is UTC for row in first)
    assert all(type(row[12]) is bool for row in first)  # chat_enabled: SQLite's 0 and 1 as booleans
    assert all(planned[1:3]) and planned[4] and planned[5] == [] and planned[8] == [] and planned[9] and planned[10]
    assert planned[9] == [(first_id, first_start)] and planned[10][0][3] == now


async def test_a_read_on_the_readers_threads_is_sqlalchemys(runtime, demo):
    """A session of the readers' engine (its statements on their connections' threads) is not planned: SQLAlchemy
    executes the statement."""
    seen: list[str] = []
    engine = runtime.db.read_engine.sync_engine
    event.listen(engine, "before_cursor_execute", lambda _c, _cur, statement, *_: seen.append(statement))
    async with runtime.db.read() as session:
        found = await sqlite_inline.planned_rows(session, notices._open_notices(), {"user": demo.users["doctor1"]})
        assert found == [
            tuple(row) for row in await session.execute(notices._open_notices(), {"user": demo.users["doctor1"]})
        ]
    assert len([s for s in seen if "user_notices" in s]) == 2


_NUMBER = select(bindparam("n", 5, type_=Integer).label("n"), literal(2).label("two"))


async def test_a_plan_takes_a_value_from_the_parameters_only_when_they_name_it(runtime, executed):
    async with runtime.db.read(screen=True) as session:
        assert await sqlite_inline.planned_rows(session, _NUMBER, {}) == [(5, 2)]
        assert await sqlite_inline.planned_rows(session, _NUMBER, {"n": 7}) == [(7, 2)]
        assert await sqlite_inline.planned_rows(session, _NUMBER, {}) == [(5, 2)]
    assert not [s for s in executed if "AS two" in s]  # planned, not executed by SQLAlchemy
