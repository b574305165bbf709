"""The SDK against a real server whose storage is busy: a poll answered 503 SERVICE_BUSY with ``Retry-After`` shows
no error and is sent again after the stated time, not after the screen's timeout; a user's press is sent again
after it and done, and only a press still busy after its retries reaches the caller. The server runs on PostgreSQL
with a short lock timeout; another connection holds the appointments table (``LOCK TABLE``: even reads wait), so
the poll that must render the list's change is answered busy."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from doctordesk.client import Client, Screen
from doctordesk.client import screen as screen_module
from doctordesk.client.changes import Change
from doctordesk.client.errors import ServiceBusy
from doctordesk.store.tables import Appointment
from tests.support import databases
from tests.support.live import LiveServer
from tests.support.sdk_flows import approve_one_as, awaiting_decision, status_is

pytestmark = pytest.mark.postgres

POLL_SECONDS = 60  # the list's timeout: a change seen within seconds came by the busy answer's Retry-After (1 s)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    url = databases.postgres_url()
    asyncio.run(databases.truncate_postgres(url))
    env = {
        "DOCTORDESK_DATABASE_URL": url,
        "DOCTORDESK_DB_LOCK_TIMEOUT_MS": "200",
        "DOCTORDESK_POLL_LIST_SECONDS": str(POLL_SECONDS),
    }
    live = LiveServer(tmp_path / "live", extra_env=env)
    live.prepare()
    live.start()
    try:
        yield live
    finally:
        live.stop()


async def test_a_busy_answer_to_a_poll_is_retried_after_its_retry_after_without_an_error(server) -> None:
    async with Client(server.url, realtime=False) as doctor:
        await doctor.login("doctor1", "demo")
        screen = await doctor.open("/profile/appointments")
        seen: list[Change] = []
        screen.on_change(seen.append)
        appointment_id = await approve_one_as(server.url, "doctor1", awaiting_decision(screen))

        holder = await databases._connect(databases.postgres_url())
        try:
            transaction = holder.transaction()
            await transaction.start()
            await holder.execute(f"LOCK TABLE {Appointment.__tablename__} IN ACCESS EXCLUSIVE MODE")
            busy_at = time.monotonic()
            await screen.poll_in_background("poll")  # answered 503 SERVICE_BUSY, Retry-After: 1
            await transaction.rollback()
        finally:
            await holder.close()

        assert screen._busy_answers == 1  # the poll was answered busy
        assert screen.last_error is None
        assert not [c for c in seen if c.kind == "error"]
        assert not status_is(appointment_id, "approved")(screen)
        await screen.wait_for(status_is(appointment_id, "approved"), timeout=POLL_SECONDS / 2)
        assert time.monotonic() - busy_at < POLL_SECONDS / 2  # the retry, not the next timeout, brought it
        assert [c.trigger for c in seen if c.kind == "update"] == ["poll"]


async def review_to_approve(server) -> tuple[int, Client, Screen]:
    """doctor1's Review and Approve of a request whose Approve is enabled."""
    doctor = Client(server.url, realtime=False)
    await doctor.login("doctor1", "demo")
    listing = await doctor.open("/profile/appointments")
    for appointment_id in awaiting_decision(listing):
        review = await doctor.open(f"/profile/appointments/{appointment_id}/approve")
        if review.element("approve").get("enabled", True):
            return appointment_id, doctor, review
    raise AssertionError("no request doctor1 can approve")


async def press_until_answered_busy(doctor: Client, review: Screen, monkeypatch) -> asyncio.Task[Change | None]:
    """Press Approve; return once the server has answered the press busy, with the press still running."""
    answered_busy = asyncio.Event()
    send = doctor.request

    async def watched(*args, **kwargs):
        try:
            return await send(*args, **kwargs)
        except ServiceBusy:
            answered_busy.set()
            raise

    monkeypatch.setattr(doctor, "request", watched)
    pressing = asyncio.create_task(review.activate("approve"))
    await asyncio.wait_for(answered_busy.wait(), timeout=30)
    return pressing


@asynccontextmanager
async def appointments_locked() -> AsyncIterator[None]:
    """Another connection holds the appointments table (even reads wait) while the block runs."""
    holder = await databases._connect(databases.postgres_url())
    try:
        async with holder.transaction():
            await holder.execute(f"LOCK TABLE {Appointment.__tablename__} IN ACCESS EXCLUSIVE MODE")
            yield
    finally:
        await holder.close()


async def test_a_users_action_answered_busy_is_sent_again_and_done(server, monkeypatch) -> None:
    appointment_id, doctor, review = await review_to_approve(server)
    async with doctor:
        async with appointments_locked():
            pressing = await press_until_answered_busy(doctor, review, monkeypatch)
        # The burst is over before the press's Retry-After (1 s) ends.
        await pressing  # no ServiceBusy: the press was sent again and went through
        listing = await doctor.open("/profile/appointments")
        assert status_is(appointment_id, "approved")(listing)


async def test_a_press_still_busy_after_its_retries_reaches_the_caller_as_service_busy(server, monkeypatch) -> None:
    monkeypatch.setattr(screen_module, "ACTION_BUSY_RETRIES", 0)
    appointment_id, doctor, review = await review_to_approve(server)
    async with doctor:
        async with appointments_locked():
            pressing = await press_until_answered_busy(doctor, review, monkeypatch)
            with pytest.raises(ServiceBusy):
                await pressing
        listing = await doctor.open("/profile/appointments")
        assert not status_is(appointment_id, "approved")(listing)  # nothing was written
