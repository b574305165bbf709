"""Running a benchmark's suite on SQLite and on PostgreSQL, and the appointment rows the suites fill databases with."""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Callable, Coroutine, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from bench.common import own_postgres_databases
from doctordesk.domain.appointments.status import Status
from doctordesk.store.db import create_engine
from doctordesk.store.migrate import upgrade

T = TypeVar("T")
Suite = Callable[[str, list[str], Path], Coroutine[Any, Any, T]]


def on_each_database(
    name: str, databases: Sequence[object], suite: Suite[T], *, one_postgres: bool = False
) -> list[tuple[str, T]]:
    """``suite(label, urls, scratch folder)`` on SQLite (a file per entry of ``databases``) and, when
    ``DOCTORDESK_BENCH_POSTGRES_URL`` names a server, on PostgreSQL (a database of the benchmark's own per entry, or
    one for all with ``one_postgres``, created and dropped): each run's label and result."""
    results: list[tuple[str, T]] = []
    with tempfile.TemporaryDirectory(prefix=f"bench-{name}-") as tmp:
        root = Path(tmp)
        files = [f"sqlite+aiosqlite:///{root}/{name}-{d}.db" for d in databases]
        results.append(("SQLite", asyncio.run(suite("SQLite", files, root))))
        server = os.environ.get("DOCTORDESK_BENCH_POSTGRES_URL")
        if server:
            names = (
                [f"doctordesk_bench_{name}"] if one_postgres else [f"doctordesk_bench_{name}_{d}" for d in databases]
            )
            with own_postgres_databases(server, names) as urls:
                results.append(("PostgreSQL", asyncio.run(suite("PostgreSQL", urls, root))))
    return results


async def migrated(url: str) -> None:
    """Bring a new database's schema up to date."""
    engine = create_engine(url)
    try:
        await upgrade(engine)
    finally:
        await engine.dispose()


def appointment_row(
    *, patient_id: int, doctor_id: int, location_id: int, start: datetime, status: Status, now: datetime
) -> dict[str, Any]:
    """A 30-minute consultation as a row of ``appointments``, for a bulk insert."""
    return {
        "patient_id": patient_id,
        "doctor_id": doctor_id,
        "location_id": location_id,
        "service": "consultation",
        "start_at": start,
        "duration_minutes": 30,
        "status": int(status),
        "version": 1,
        "chat_enabled": True,
        "disclaimer_required": False,
        "prescription_needed": False,
        "created_at": now,
        "updated_at": now,
    }
