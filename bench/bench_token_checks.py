"""What one check of the open streams' tokens costs (workers/token_checks.py): 5,000 streams on one instance,
each with its own token, checked against the database in batched primary-key lookups. Prints the time per check
(p50, p99, in ms) with every token valid and with a tenth of them revoked; SQLite by default, PostgreSQL when
``DOCTORDESK_BENCH_POSTGRES_URL`` is set (in a database of its own on that server, dropped afterwards)."""

from __future__ import annotations

import asyncio
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from sqlalchemy import insert, update

from bench.common import database_label, machine, percentile, scratch_database, table
from bench.suites import migrated
from doctordesk.bootstrap import build_runtime
from doctordesk.config import Settings
from doctordesk.store.tables import AccessToken, User
from doctordesk.workers.token_checks import TokenChecks

STREAMS = 5000
RUNS = 30


async def _timed(checks: TokenChecks) -> list[float]:
    samples = []
    for _ in range(RUNS):
        started = time.perf_counter()
        await checks.check()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


async def run(url: str, tmp: str) -> list[list[object]]:
    await migrated(url)
    rt = build_runtime(Settings(database_url=url, data_dir=Path(tmp)))
    now = rt.clock.now()
    try:
        async with rt.db.transaction() as session:
            user = {"password_hash": "x", "role": "doctor", "display_name": "u", "created_at": now}
            users = [{**user, "username": f"u{i}"} for i in range(STREAMS // 5)]
            await session.execute(insert(User), users)
            await session.execute(
                insert(AccessToken),
                [
                    {
                        "token_hash": f"{i:064d}",
                        "user_id": i % len(users) + 1,
                        "created_at": now,
                        "expires_at": now + timedelta(hours=12),
                    }
                    for i in range(STREAMS)
                ],
            )
        for token_id in range(1, STREAMS + 1):
            rt.hub.open(f"client-{token_id}", user_id=1, token_id=token_id, expires_at=None)
        checks = TokenChecks(rt, interval=10)
        valid = await _timed(checks)
        async with rt.db.transaction() as session:
            await session.execute(update(AccessToken).where(AccessToken.id % 10 == 0).values(revoked_at=now))
        first = time.perf_counter()
        closed = await checks.check()
        closing = (time.perf_counter() - first) * 1000
    finally:
        await rt.db.dispose()
    return [
        [f"{STREAMS} streams, all tokens valid", percentile(valid, 50), percentile(valid, 99), 0],
        [f"{STREAMS} streams, a tenth revoked (one check)", closing, closing, closed],
    ]


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp, scratch_database(Path(tmp), "token_checks") as url:
        rows = asyncio.run(run(url, tmp))
    print(f"Stream token checks on {database_label()} ({machine()})")
    print(table(["check", "p50 ms", "p99 ms", "streams closed"], rows))
    return 0


if __name__ == "__main__":
    main()
