"""Login-throttle rows that no longer change any answer are deleted (services/accounts/login_throttle.prune), by the
server at start and hourly; on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

from sqlalchemy import func, insert, select

from doctordesk.app import create_app
from doctordesk.services.accounts import login_throttle
from doctordesk.store.tables import LoginAddressThrottle, LoginThrottle

DAY = timedelta(days=1)


def name_row(username: str, *, updated: datetime, failures: int = 3, locked_until: datetime | None = None) -> dict:
    return {"username": username, "failures": failures, "updated_at": updated, "locked_until": locked_until}


def place_row(username: str, *, updated: datetime, failures: int = 2, locked_until: datetime | None = None) -> dict:
    return {
        "username": username,
        "address": "203.0.113.9",
        "failures": failures,
        "updated_at": updated,
        "locked_until": locked_until,
        "succeeded_at": None,
    }


async def remaining(db) -> tuple[set[str], set[str]]:
    async with db.read() as session:
        names = set(await session.scalars(select(LoginThrottle.username)))
        places = set(await session.scalars(select(LoginAddressThrottle.username)))
    return names, places


# Pruned "later" than any prune of the server's own (a minute after its start) could have run.
LATER = 40 * DAY


async def test_rows_that_no_longer_change_an_answer_are_pruned_and_the_others_kept(runtime, clock):
    now = clock.now() + LATER
    async with runtime.db.transaction() as session:
        await session.execute(
            insert(LoginThrottle),
            [
                name_row("drained", updated=now - 2 * DAY),  # 3 failures drained long ago
                name_row("recent", updated=now - timedelta(hours=1)),
                name_row("not-drained", updated=now - 2 * DAY, failures=5000),  # a day forgives 1,440 at 60 s
                name_row("still-slowed", updated=now - 2 * DAY, locked_until=now + timedelta(minutes=1)),
            ],
        )
        await session.execute(
            insert(LoginAddressThrottle),
            [
                place_row("forgotten", updated=now - 31 * DAY),
                place_row("known", updated=now - 29 * DAY),
                place_row("locked", updated=now - 31 * DAY, locked_until=now + DAY),
            ],
        )
    limits = login_throttle.limits(runtime.settings)
    assert await login_throttle.prune(runtime.db, limits, now=now) == 2
    assert await remaining(runtime.db) == ({"recent", "not-drained", "still-slowed"}, {"known", "locked"})
    assert await login_throttle.prune(runtime.db, limits, now=now) == 0


async def test_pruning_deletes_in_batches_until_nothing_stale_is_left(runtime, clock):
    now = clock.now() + LATER
    count = login_throttle.PRUNE_BATCH * 2 + 17
    async with runtime.db.transaction() as session:
        await session.execute(insert(LoginThrottle), [name_row(f"u{i}", updated=now - 2 * DAY) for i in range(count)])
    limits = login_throttle.limits(runtime.settings)
    assert await login_throttle.prune(runtime.db, limits, now=now) == count
    async with runtime.db.read() as session:
        assert await session.scalar(select(func.count()).select_from(LoginThrottle)) == 0


async def test_a_pruned_username_answers_as_before_its_row_was_deleted(runtime, client, demo, clock):
    # Failures long drained: the next wrong password is an ordinary 401, the right one logs in.
    now = clock.now()
    async with runtime.db.transaction() as session:
        await session.execute(insert(LoginThrottle), [name_row("doctor1", updated=now - 2 * DAY, failures=30)])
    await login_throttle.prune(runtime.db, login_throttle.limits(runtime.settings), now=now)
    assert await remaining(runtime.db) == (set(), set())
    wrong = await client.post("/auth/login", data={"username": "doctor1", "password": "nope"})
    assert wrong.status_code == 401
    right = await client.post("/auth/login", data={"username": "doctor1", "password": "demo"})
    assert right.status_code == 200


async def test_the_server_prunes_stale_rows_once_it_has_run_for_the_prune_delay(settings, clock):
    application = create_app(settings.model_copy(update={"login_prune_delay_seconds": 0.0}), clock=clock)
    db = application.state.runtime.db
    now = clock.now()
    async with db.transaction() as session:
        await session.execute(insert(LoginThrottle), [name_row("stale", updated=now - 2 * DAY)])
    async with application.router.lifespan_context(application):
        for _ in range(100):
            if await remaining(db) == (set(), set()):
                break
            await asyncio.sleep(0.05)
        assert await remaining(db) == (set(), set())


async def test_a_process_that_has_just_started_leaves_stale_rows_to_the_first_prune(settings, clock, runtime, client):
    # The default delay: a one-off process (a command, a short-lived test app) does not prune.
    assert settings.login_prune_delay_seconds == 60.0
    db = runtime.db
    async with db.transaction() as session:
        await session.execute(insert(LoginThrottle), [name_row("stale", updated=clock.now() - 2 * DAY)])
    assert (await client.get("/readyz")).status_code == 200
    assert await remaining(db) == ({"stale"}, set())
