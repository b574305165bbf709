"""Bulk export jobs (docs/fhir.md#bulk-export), migration bulk_0001.

A job is claimed by the exporter like an outbox row (``realtime/lease.py``): while ``pending``, ``next_attempt_at``
is when it is due or, once claimed, when the claim's lease ends, and ``attempts`` counts the claims. Each claim
writes its files under a directory of its own (the attempt's number) and renews its lease after every page only
while ``attempts`` is still its own: a claim that lost its lease (its process stopped or stalled) never writes
into the files of the claim after it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from doctordesk.store.tables import Base, BigId


class BulkJob(Base):
    """One ``$export``: who asked (``requester``: ``user:<id>`` or ``account:<id>``), what (``level``, the
    doctor of a Group export, the types, ``since``), the request's URL as sent, the transaction time (nothing
    changed after it is written), progress, and when done the files (``output``: type, file name, count)."""

    __tablename__ = "bulk_jobs"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    public_id: Mapped[str] = mapped_column(String(40), unique=True)  # the status URL's id (not guessable)
    requester: Mapped[str] = mapped_column(String(64))
    level: Mapped[str] = mapped_column(String(10))
    group_id: Mapped[int | None] = mapped_column(Integer)
    types: Mapped[str] = mapped_column(String(200))  # comma-separated, in writing order
    since: Mapped[datetime | None]
    request: Mapped[str] = mapped_column(String(2000))
    transaction_time: Mapped[datetime]
    created_at: Mapped[datetime]
    status: Mapped[str] = mapped_column(String(10), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime]
    progress: Mapped[str | None] = mapped_column(String(100))
    output: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    error: Mapped[str | None] = mapped_column(String(500))
    finished_at: Mapped[datetime | None]
    expires_at: Mapped[datetime | None]  # set when finished: the job and its files are deleted then

    __table_args__ = (
        Index("ix_bulk_jobs_due", "status", "next_attempt_at"),
        Index("ix_bulk_jobs_requester", "requester", "status"),
        Index("ix_bulk_jobs_expires", "expires_at"),
    )
