"""Streams opening together (a reconnect storm, nothing cached) read their tokens in one query, on SQLite and
PostgreSQL, and each still gets exactly its own token's grant: a revoked, expired or unknown token among them is
refused, an inactive user's too."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import update

from doctordesk.caches.auth import AuthCache
from doctordesk.domain.errors import Unauthorized
from doctordesk.services import streams
from doctordesk.store.tables import AccessToken, User

NAMES = ["doctor1", "doctor2", "doctor3", "support1", "support2", "patient1", "patient2"]


@pytest.fixture
def uncached(runtime):
    runtime.auth_cache = AuthCache(ttl=0)  # every open reads its token, as after a restart
    return runtime


async def test_streams_opening_together_read_their_tokens_in_one_query_each_as_its_own_user(uncached, login, demo):
    users = [await login(name) for name in NAMES]
    before = uncached.token_reads.queries
    grants = await asyncio.gather(*(streams.grant_for_token(uncached, u.token) for u in users))
    assert uncached.token_reads.queries - before == 1
    assert [g.actor.username for g in grants] == NAMES
    assert [g.actor.user_id for g in grants] == [demo.users[n] for n in NAMES]
    assert len({g.actor.token_id for g in grants}) == len(NAMES)
    assert all(g.expires_at > uncached.clock.now() for g in grants)
    patient = grants[NAMES.index("patient1")].actor
    assert patient.patient_id is not None


async def test_a_revoked_expired_unknown_or_deactivated_token_among_them_is_refused_and_only_that_one(
    uncached, login, demo, clock
):
    users = {name: await login(name) for name in NAMES}
    async with uncached.db.transaction() as session:
        await session.execute(
            update(AccessToken)
            .where(AccessToken.user_id == demo.users["doctor2"])
            .values(revoked_at=uncached.clock.now())
        )
        await session.execute(
            update(AccessToken)
            .where(AccessToken.user_id == demo.users["support1"])
            .values(expires_at=uncached.clock.now() - timedelta(seconds=1))
        )
        await session.execute(update(User).where(User.id == demo.users["patient1"]).values(active=False))
    tokens = [u.token for u in users.values()] + ["not-a-token-anyone-was-given"]
    results = await asyncio.gather(*(streams.grant_for_token(uncached, t) for t in tokens), return_exceptions=True)
    refused = {name for name, r in zip([*NAMES, "unknown"], results, strict=True) if isinstance(r, Unauthorized)}
    assert refused == {"doctor2", "support1", "patient1", "unknown"}
    granted = [r for r in results if not isinstance(r, BaseException)]
    assert sorted(g.actor.username for g in granted) == sorted(set(NAMES) - refused)


async def test_a_batch_of_any_size_runs_the_same_statement_so_prepared_statements_do_not_pile_up(uncached, login):
    from sqlalchemy import event

    users = [await login(name) for name in NAMES]
    statements: list[str] = []

    def record(_conn, _cursor, statement, *_args):
        if "access_tokens.token_hash" in statement.partition("WHERE")[2]:
            statements.append(statement)

    engine = uncached.db.screen_read_engine.sync_engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        await streams.grant_for_token(uncached, users[0].token)
        await asyncio.gather(*(streams.grant_for_token(uncached, u.token) for u in users[1:4]))
        await asyncio.gather(*(streams.grant_for_token(uncached, u.token) for u in users))
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert len(statements) == 3
    assert len(set(statements)) == 1
