"""Writing an export (docs/fhir.md#bulk-export), run by the exporter (``workers/bulk_exporter.py``) in the server
process or in ``doctordesk worker``.

A job is claimed like an outbox row (``realtime/lease.lease_due``: ``FOR UPDATE SKIP LOCKED`` on PostgreSQL) and
written type by type, a page at a time (``sources.py``), each page appended to the type's file and followed by a
renewal of the lease that succeeds only while the claim is still the job's latest (``attempts``) and the job is
still pending. Each claim writes under a directory of its own (``<job>/<attempt>/``), so a claim that lost its
lease — its process killed, stalled past the lease, or the job cancelled — never writes into another claim's
files: a job interrupted by ``kill -9`` is written again from the start by the next claim once the lease has
lapsed, and the files of the claim that completes are the only ones kept. Pages are read in id order and each
resource is serialised the same way, so two exports of the same data are byte for byte the same."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO, cast

from sqlalchemy import Select, delete, exists, or_, select, update

from doctordesk.config import Settings
from doctordesk.domain.clock import Clock
from doctordesk.domain.fhir.bulk import JobStatus, Level, file_name
from doctordesk.realtime.lease import lease_due
from doctordesk.services.fhir.bulk import jobs
from doctordesk.services.fhir.bulk.sources import PAGES, Scope
from doctordesk.services.uow import worker_transaction
from doctordesk.store.db import Database
from doctordesk.store.fhir_tables import BulkJob

log = logging.getLogger(__name__)


class LeaseLost(Exception):
    """The claim is no longer the job's (another claim took it, or it was cancelled or stopped): write no more."""


@dataclass(frozen=True, slots=True)
class Claimed:
    job_id: int
    attempt: int
    types: tuple[str, ...]
    scope: Scope


def _due(now: datetime) -> Select[int]:
    return select(BulkJob.id).where(BulkJob.status == JobStatus.PENDING.value, BulkJob.next_attempt_at <= now)


def _expired(now: datetime) -> Select[int]:
    return select(BulkJob.id).where(BulkJob.expires_at <= now)


async def anything_to_do(db: Database, *, now: datetime) -> bool:
    """Whether a job is due (``claim``) or has expired (``sweep``): one statement, for the exporter's rounds that
    find neither (most of them)."""
    async with db.read() as session:
        return bool(await session.scalar(select(or_(exists(_due(now)), exists(_expired(now))))))


async def claim(db: Database, *, now: datetime, settings: Settings) -> Claimed | None:
    """Lease the oldest due job, if any; one claimed too often already is marked ``error`` instead."""
    due = _due(now)
    async with db.read() as session:  # nothing due (most rounds): no write transaction
        if await session.scalar(due.limit(1)) is None:
            return None
    async with worker_transaction(db) as session:
        ids = await lease_due(
            session, BulkJob, now=now, limit=1, lease_seconds=settings.bulk_lease_seconds, skip_locked=not db.is_sqlite
        )
        if not ids:
            return None
        job = (await session.execute(select(BulkJob).where(BulkJob.id == ids[0]))).scalar_one()
        if job.attempts > settings.bulk_max_attempts:
            job.status = JobStatus.ERROR.value
            job.error = "The export stopped unfinished too often."
            job.finished_at = now
            job.expires_at = now + jobs.retention(settings)
            return None
        scope = Scope(Level(job.level), job.group_id, job.since, job.transaction_time)
        return Claimed(job.id, job.attempts, tuple(t for t in job.types.split(",") if t), scope)


async def _renew(db: Database, claimed: Claimed, **values: Any) -> None:
    """Update the job while ``claimed`` is still its latest claim and it is pending; LeaseLost otherwise."""
    async with worker_transaction(db) as session:
        result = await session.execute(
            update(BulkJob)
            .where(
                BulkJob.id == claimed.job_id,
                BulkJob.attempts == claimed.attempt,
                BulkJob.status == JobStatus.PENDING.value,
            )
            .values(**values)
        )
    if cast(Any, result).rowcount != 1:
        raise LeaseLost()


def _lease(now: datetime, settings: Settings) -> datetime:
    return now + timedelta(seconds=settings.bulk_lease_seconds)


async def run(
    db: Database, claimed: Claimed, *, settings: Settings, clock: Clock, stopping: Callable[[], bool] = lambda: False
) -> bool:
    """Write the claimed job's files and mark it complete; False when the claim was lost or given up (stopping:
    the job is due again at once for another exporter). The claim's own files are removed unless it completes."""
    own = jobs.job_dir(settings, claimed.job_id) / str(claimed.attempt)
    await asyncio.to_thread(_fresh_dir, own)
    output: list[dict[str, Any]] = []
    try:
        for resource_type in claimed.types:
            count = await _write_type(
                db, claimed, resource_type, own, settings=settings, clock=clock, stopping=stopping
            )
            if count:
                output.append(
                    {"type": resource_type, "path": f"{claimed.attempt}/{file_name(resource_type)}", "count": count}
                )
        now = clock.now()
        await _renew(
            db,
            claimed,
            status=JobStatus.COMPLETE.value,
            output=output,
            progress=None,
            finished_at=now,
            expires_at=now + jobs.retention(settings),
        )
    except LeaseLost:
        log.info("bulk export %s: claim %s lost its lease; its files are dropped", claimed.job_id, claimed.attempt)
        await asyncio.to_thread(_drop, own)
        return False
    except BaseException:
        await asyncio.to_thread(_drop, own)
        raise
    await asyncio.to_thread(_keep_only, own)
    return True


async def _write_type(
    db: Database,
    claimed: Claimed,
    resource_type: str,
    own: Path,
    *,
    settings: Settings,
    clock: Clock,
    stopping: Callable[[], bool],
) -> int:
    """Append every page of ``resource_type`` to its file (removed when empty); the number of resources."""
    path = own / file_name(resource_type)
    page_of = PAGES[resource_type]
    out = cast(BinaryIO, await asyncio.to_thread(open, path, "wb"))
    count, after = 0, 0
    try:
        while True:
            if stopping():
                await _renew(db, claimed, next_attempt_at=clock.now())
                raise LeaseLost()
            async with db.read() as session:
                page = await page_of(session, claimed.scope, after, settings.bulk_page_size)
            if not page:
                break
            data = b"".join(_line(resource) for _, resource in page)
            await asyncio.to_thread(out.write, data)
            count += len(page)
            after = page[-1][0]
            now = clock.now()
            await _renew(
                db,
                claimed,
                next_attempt_at=_lease(now, settings),
                progress=f"{resource_type}: {count}",
            )
        await asyncio.to_thread(_sync, out)
    finally:
        await asyncio.to_thread(out.close)
    if not count:
        await asyncio.to_thread(path.unlink, True)
    return count


def _line(resource: dict[str, Any]) -> bytes:
    return json.dumps(resource, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _sync(out: BinaryIO) -> None:
    out.flush()
    os.fsync(out.fileno())


def _fresh_dir(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True, exist_ok=True)


def _drop(own: Path) -> None:
    shutil.rmtree(own, ignore_errors=True)
    try:
        own.parent.rmdir()  # the job's directory, when no other claim's files are left in it
    except OSError:
        pass


def _keep_only(own: Path) -> None:
    """The completed claim's files stay; earlier claims' leftovers go."""
    for other in own.parent.iterdir():
        if other != own:
            shutil.rmtree(other, ignore_errors=True)


async def sweep(db: Database, *, now: datetime, settings: Settings, limit: int = 100) -> int:
    """Delete the jobs past their expiry (finished ones after ``bulk_retention_seconds``, cancelled ones at once)
    and their files; how many."""
    query = _expired(now).order_by(BulkJob.expires_at).limit(limit)
    async with db.read() as session:  # nothing expired (most rounds): no write transaction
        ids = list((await session.scalars(query)).all())
    if ids:
        async with worker_transaction(db) as session:
            await session.execute(delete(BulkJob).where(BulkJob.id.in_(ids)))
    for job_id in ids:
        await jobs.remove_files(settings, job_id)
    return len(ids)
