"""The check of open streams' tokens against the database (workers/token_checks.py), on SQLite and PostgreSQL:
a stream closes when its token is revoked, expired or its user made inactive, and only then."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import update

from doctordesk.realtime.hub import Close, Stream
from doctordesk.services import streams
from doctordesk.store.tables import AccessToken, User
from doctordesk.workers.token_checks import TokenChecks


def is_closed(stream: Stream) -> bool:
    return any(isinstance(item, Close) for item in stream.pending)


async def open_for(runtime, login, username: str, client_id: str) -> tuple[Stream, int]:
    user = await login(username)
    grant = await streams.grant_for_token(runtime, user.token)
    assert grant.actor.token_id is not None
    # No expiry on the stream itself: the heartbeat's own expiry check (wall clock) stays out of these tests.
    stream = runtime.hub.open(client_id, user_id=grant.actor.user_id, token_id=grant.actor.token_id, expires_at=None)
    return stream, grant.actor.token_id


async def test_streams_of_revoked_tokens_and_of_inactive_users_close_at_the_check_and_others_stay(runtime, login, demo):
    revoked, revoked_id = await open_for(runtime, login, "doctor1", "c-1")
    inactive, _ = await open_for(runtime, login, "doctor2", "c-2")
    kept, _ = await open_for(runtime, login, "doctor3", "c-3")
    async with runtime.db.transaction() as session:
        # Written straight to the database: no event tells the instance (as when the bus was away).
        await session.execute(
            update(AccessToken).where(AccessToken.id == revoked_id).values(revoked_at=runtime.clock.now())
        )
        await session.execute(update(User).where(User.id == demo.users["doctor2"]).values(active=False))
    checks = TokenChecks(runtime, interval=60)
    assert await checks.check() == 2
    assert is_closed(revoked) and is_closed(inactive)
    assert not is_closed(kept)
    for closed in (revoked, inactive):
        runtime.hub.close(closed)  # what the stream's response does once it reads the close
    assert await checks.check() == 0


async def test_a_stream_whose_token_expired_closes_at_the_check(runtime, login, clock):
    stream, _ = await open_for(runtime, login, "doctor1", "c-1")
    checks = TokenChecks(runtime, interval=60)
    assert await checks.check() == 0
    clock.advance(timedelta(seconds=runtime.settings.token_ttl_seconds + 1))
    assert await checks.check() == 1
    assert is_closed(stream)


async def test_the_check_reads_tokens_in_batches_and_closes_unknown_ones(runtime, login):
    kept, kept_id = await open_for(runtime, login, "doctor1", "c-kept")
    # More unknown token ids than one batch holds (deleted tokens: their streams must close too).
    unknown = [runtime.hub.open(f"c-{i}", user_id=1, token_id=10_000_000 + i, expires_at=None) for i in range(2500)]
    assert await streams.valid_tokens(runtime, [kept_id, *range(10_000_000, 10_002_500)]) == {kept_id}
    assert await TokenChecks(runtime, interval=60).check() == 2500
    assert all(is_closed(s) for s in unknown)
    assert not is_closed(kept)
