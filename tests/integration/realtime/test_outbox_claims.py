"""Several dispatchers claim the outbox at once: no notification is taken twice (SKIP LOCKED on PostgreSQL)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from sqlalchemy import select

from doctordesk.realtime import outbox
from doctordesk.store.db import Database
from doctordesk.store.realtime_tables import Device, PushOutbox
from doctordesk.store.tables import User


async def seed_rows(runtime, count: int) -> None:
    now = runtime.clock.now()
    async with runtime.db.transaction() as session:
        user_id = await session.scalar(select(User.id).limit(1))
        device = Device(
            device_key="d",
            platform="android",
            push_token="t",
            user_id=user_id,
            last_active_at=now,
            token_updated_at=now,
        )
        session.add(device)
        await session.flush()
        for n in range(count):
            session.add(
                PushOutbox(
                    notification_id=f"n-{n}",
                    device_id=device.id,
                    user_id=user_id,
                    data="Timeout",
                    kind="test",
                    created_at=now,
                    next_attempt_at=now,
                    attempts=0,
                    status="pending",
                )
            )


async def test_concurrent_claims_never_take_the_same_notification(runtime, demo, settings) -> None:
    await seed_rows(runtime, 200)
    databases = [Database(settings.database_url) for _ in range(4)]
    now = runtime.clock.now()
    try:

        async def drain(db: Database) -> list[int]:
            taken: list[int] = []
            while batch := await outbox.claim(db, now=now, limit=7, lease_seconds=60):
                taken.extend(d.id for d in batch)
            return taken

        results = await asyncio.gather(*(drain(db) for db in databases))
    finally:
        for db in databases:
            await db.dispose()
    everything = [i for r in results for i in r]
    assert len(everything) == len(set(everything)) == 200


async def test_a_claim_is_a_lease_that_comes_due_again(runtime, demo) -> None:
    await seed_rows(runtime, 1)
    now = runtime.clock.now()
    [first] = await outbox.claim(runtime.db, now=now, limit=10, lease_seconds=30)
    assert await outbox.claim(runtime.db, now=now + timedelta(seconds=29), limit=10, lease_seconds=30) == []
    [again] = await outbox.claim(runtime.db, now=now + timedelta(seconds=31), limit=10, lease_seconds=30)
    assert (again.notification_id, again.attempts) == (first.notification_id, 2)
