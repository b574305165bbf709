"""One app's life on an empty, migrated database, as every integration test lives it: ``create_app``, the lifespan's
start, its stop. CPU (this process's user + system; SQLite runs inside it, PostgreSQL's server does not count) and
wall time per app, with the in-process background tasks on (the default) and off, and how long the stop alone
takes (wall). Each case builds ``DOCTORDESK_BENCH_APPS`` apps (default 40) after two not counted.

    python -m bench app_lifecycle            (PostgreSQL when DOCTORDESK_BENCH_POSTGRES_URL is set)
"""

from __future__ import annotations

import asyncio
import os
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import create_async_engine

from bench.common import database_label, machine, percentile, scratch_database, table
from doctordesk.app import create_app
from doctordesk.config import Settings
from doctordesk.store.migrate import upgrade

APPS = int(os.environ.get("DOCTORDESK_BENCH_APPS", "40"))
OFF = dict.fromkeys(
    (
        "waitlist_in_process",
        "webhook_in_process",
        "bulk_in_process",
        "push_in_process",
        "mail_in_process",
        "reminder_in_process",
    ),
    False,
)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _one(url: str, data_dir: Path, overrides: dict[str, Any]) -> tuple[float, float, float]:
    """CPU ms, wall ms and the stop's wall ms of one app's life."""
    cpu, wall = _cpu(), time.perf_counter()
    settings = Settings(database_url=url, data_dir=data_dir, argon2_time_cost=1, argon2_memory_kib=1024, **overrides)
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        stopping = time.perf_counter()
    stop = time.perf_counter() - stopping
    return (_cpu() - cpu) * 1000, (time.perf_counter() - wall) * 1000, stop * 1000


async def _case(url: str, data_dir: Path, overrides: dict[str, Any]) -> list[tuple[float, float, float]]:
    for _ in range(2):
        await _one(url, data_dir, overrides)
    return [await _one(url, data_dir, overrides) for _ in range(APPS)]


async def _run(url: str, data_dir: Path) -> list[list[Any]]:
    engine = create_async_engine(url)
    await upgrade(engine)
    await engine.dispose()
    rows: list[list[Any]] = []
    for label, overrides in (("background tasks on", {}), ("in-process jobs off", OFF)):
        runs = await _case(url, data_dir, overrides)
        cpu = [r[0] for r in runs]
        wall = [r[1] for r in runs]
        stop = [r[2] for r in runs]
        rows.append(
            [
                database_label(),
                label,
                len(runs),
                sum(cpu) / len(cpu),
                percentile(cpu, 50),
                percentile(wall, 50),
                percentile(stop, 50),
                max(stop),
            ]
        )
    return rows


def main() -> int:
    print(machine())
    os.umask(0o077)  # the database and the key file private, as a deployment keeps them
    with tempfile.TemporaryDirectory(prefix="doctordesk-bench-") as tmp:
        with scratch_database(Path(tmp), "lifecycle") as url:
            rows = asyncio.run(_run(url, Path(tmp) / "data"))
    print(
        table(
            ["database", "case", "apps", "CPU ms mean", "CPU ms p50", "wall ms p50", "stop ms p50", "stop ms max"],
            rows,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
