"""A bulk export as its requester sees it (docs/fhir.md#bulk-export): the kick-off queues a job, the status URL
answers its progress or its manifest, DELETE cancels it and removes its files, each file is read by its URL.
Only the requester (the same user or service account) sees a job: to anyone else it is 404, as an unknown one."""

from __future__ import annotations

import asyncio
import secrets
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, update

from doctordesk.config import Settings
from doctordesk.domain.errors import NotFound, TooManyRequests
from doctordesk.domain.events import DomainEvent
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.fhir.bulk import QUEUED_EVENT, JobStatus, Level, export_request, transaction_time, wants_async
from doctordesk.domain.fhir.errors import NotSupported
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.services.fhir.access import Caller
from doctordesk.services.fhir.bulk import groups
from doctordesk.services.fhir.bulk.access import authorize_export, requester
from doctordesk.services.uow import unit_of_work
from doctordesk.store.fhir_tables import BulkJob

# How long a client is asked to wait between two status requests (``Retry-After`` of a 202 and of a 429).
RETRY_SECONDS = 5
BUSY_RETRY_SECONDS = 60


def exports_root(settings: Settings) -> Path:
    """Where export files are kept: ``<data_dir>/exports/<job>/<claim>/<Type>.ndjson``."""
    return settings.data_dir / "exports"


def job_dir(settings: Settings, job_id: int) -> Path:
    return exports_root(settings) / str(job_id)


async def remove_files(settings: Settings, job_id: int) -> None:
    await asyncio.to_thread(shutil.rmtree, job_dir(settings, job_id), True)


@dataclass(frozen=True, slots=True)
class Job:
    """What the status URL shows of a job."""

    public_id: str
    status: JobStatus
    progress: str | None
    request: str
    transaction_time: datetime
    output: Sequence[dict[str, Any]]
    error: str | None
    expires_at: datetime | None


async def kick_off(
    rt: Runtime,
    caller: Caller,
    *,
    level: Level,
    items: Sequence[tuple[str, str]],
    request_url: str,
    prefer: str | None,
    group_id: int | None = None,
) -> str:
    """Queue an export (its status URL's id): the caller's rights first, then ``Prefer: respond-async`` and the
    parameters, then at most ``bulk_max_jobs_per_requester`` running jobs per requester (else 429)."""
    authorize_export(caller, level=level, types=(), group_id=group_id)
    if group_id is not None:
        async with rt.db.read() as session:
            await groups.find(session, caller, group_id)
    if not wants_async(prefer):
        raise NotSupported(
            N_("An export runs in the background: send Prefer: respond-async."),
            fields={"Prefer": N_("Send respond-async.")},
        )
    asked = export_request(level, items)
    authorize_export(caller, level=level, types=asked.types, group_id=group_id)
    who = requester(caller)
    now = rt.clock.now()
    public_id = secrets.token_urlsafe(24)
    async with unit_of_work(rt) as uow:
        running = await uow.session.scalar(
            select(func.count()).where(BulkJob.requester == who, BulkJob.status == JobStatus.PENDING)
        )
        limit = rt.settings.bulk_max_jobs_per_requester
        if int(running or 0) >= limit:
            raise TooManyRequests(
                Text("At most {n} exports run at once for you; wait for one to finish.", n=limit),
                retry_after=BUSY_RETRY_SECONDS,
            )
        uow.session.add(
            BulkJob(
                public_id=public_id,
                requester=who,
                level=level.value,
                group_id=group_id,
                types=",".join(asked.types),
                since=asked.since,
                request=request_url[:2000],
                transaction_time=transaction_time(now, settle_seconds=rt.settings.bulk_settle_seconds),
                created_at=now,
                status=JobStatus.PENDING.value,
                attempts=0,
                next_attempt_at=now,
                output=[],
            )
        )
        uow.emit(DomainEvent(QUEUED_EVENT, topics=()))
    return public_id


async def _own(rt: Runtime, caller: Caller, public_id: str) -> BulkJob:
    now = rt.clock.now()
    async with rt.db.read() as session:
        job = await session.scalar(
            select(BulkJob).where(
                BulkJob.public_id == public_id[:40],
                BulkJob.requester == requester(caller),
                BulkJob.status != JobStatus.CANCELLED,
            )
        )
    if job is None or (job.expires_at is not None and job.expires_at <= now):
        raise NotFound(N_("Export not found."))
    return job


async def status(rt: Runtime, caller: Caller, public_id: str) -> Job:
    job = await _own(rt, caller, public_id)
    return Job(
        public_id=job.public_id,
        status=JobStatus(job.status),
        progress=job.progress,
        request=job.request,
        transaction_time=job.transaction_time,
        output=list(job.output),
        error=job.error,
        expires_at=job.expires_at,
    )


async def cancel(rt: Runtime, caller: Caller, public_id: str) -> None:
    """Cancel the job (running or done): its status URL and files are 404 from now on, its files are deleted now
    (and again by the sweep, should a writer still be finishing a page)."""
    job = await _own(rt, caller, public_id)
    now = rt.clock.now()
    async with unit_of_work(rt) as uow:
        session = uow.session
        await session.execute(
            update(BulkJob)
            .where(BulkJob.id == job.id)
            .values(status=JobStatus.CANCELLED.value, expires_at=now, finished_at=now, progress=None)
        )
    await remove_files(rt.settings, job.id)


async def file(rt: Runtime, caller: Caller, public_id: str, name: str) -> Path:
    """The path of one of a complete job's files, by its name in the file URL."""
    job = await _own(rt, caller, public_id)
    for entry in job.output if job.status == JobStatus.COMPLETE else []:
        if entry["path"].rsplit("/", 1)[-1] == name:
            path = job_dir(rt.settings, job.id) / str(entry["path"])
            if path.is_file():
                return path
    raise NotFound(N_("Export file not found."))


def manifest(job: Job, *, status_url: str) -> dict[str, Any]:
    """The complete job's manifest (Bulk Data 2.0, "Response - Complete Status"): each file's type, URL and
    number of resources; no ``error`` files (a resource that cannot be written fails the whole job)."""
    return {
        "transactionTime": fhir_mapping.instant(job.transaction_time),
        "request": job.request,
        "requiresAccessToken": True,
        "output": [
            {"type": o["type"], "url": f"{status_url}/{o['path'].rsplit('/', 1)[-1]}", "count": o["count"]}
            for o in job.output
        ],
        "error": [],
    }


def retention(settings: Settings) -> timedelta:
    return timedelta(seconds=settings.bulk_retention_seconds)
