"""FHIR tables: Subscriptions (R4, rest-hook on Appointment criteria; docs/fhir.md#subscription), migration
fhir_0001; the versions of appointments (vread and ``_history``; docs/fhir.md#versions), migration fhir_0002; the
times held and booked through ``Appointment/$hold`` and ``$book`` (docs/fhir.md#scheduling), migration fhir_0003;
bulk export jobs (docs/fhir.md#bulk-export), migration bulk_0001.

A subscription's channel is a webhook endpoint row of kind ``fhir-subscription`` (its URL, signing secret,
enabled state and failing streak), so its notifications go through the webhook outbox and dispatcher. Rows are
never deleted: a deleted subscription is off, with ``deleted_at``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from doctordesk.store.tables import Base, BigId


class FhirSubscription(Base):
    """One Subscription. The owner is a user (``user_id``) or a service account (``service_account_id``, with
    ``api_key_id``: the key that created or last updated it, whose rights narrow what is delivered)."""

    __tablename__ = "fhir_subscriptions"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    endpoint_id: Mapped[int] = mapped_column(ForeignKey("webhook_endpoints.id"), unique=True)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    service_account_id: Mapped[int | None] = mapped_column(ForeignKey("service_accounts.id"))
    api_key_id: Mapped[int | None] = mapped_column(ForeignKey("api_keys.id"))
    # As the client sent it, and parsed (parameter → groups of accepted values; see domain/fhir/subscriptions.py).
    criteria: Mapped[str] = mapped_column(String(1000))
    match: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    reason: Mapped[str] = mapped_column(String(500))
    payload: Mapped[str | None] = mapped_column(String(40))  # application/fhir+json, or None: empty notifications
    headers: Mapped[list[str]] = mapped_column(JSON, default=list)  # "Name: value", sent with every notification
    end_at: Mapped[datetime | None]
    # What the client asked for: "active" or "off". "error" is read from the endpoint (disabled by the service).
    status: Mapped[str] = mapped_column(String(10))
    deleted_at: Mapped[datetime | None]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]

    __table_args__ = (
        Index("ix_fhir_subscriptions_user", "user_id", "id"),
        Index("ix_fhir_subscriptions_account", "service_account_id", "id"),
    )


class AppointmentVersion(Base):
    """An appointment's row as it was at one version (its columns, as JSON), written with every ORM write of the
    appointment (``store/appointment_versions.py``), so any version the interface gave out can be read again."""

    __tablename__ = "fhir_appointment_versions"
    appointment_id: Mapped[int] = mapped_column(
        BigId, ForeignKey("appointments.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    version: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    state: Mapped[dict[str, Any]] = mapped_column(JSON)
    recorded_at: Mapped[datetime]


# An appointment's versions follow every ORM write of it (mapper events, registered on import).


class SlotHold(Base):
    """A time held for a booking system (``$hold``) until ``expires_at``, or taken by the request ``$book`` placed
    (``appointment_id``) while that request waits for the doctor. ``holder`` is who may book it: ``account:<id>``
    (a service account) or ``user:<id>`` (a patient)."""

    __tablename__ = "fhir_slot_holds"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    doctor_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    location_id: Mapped[int] = mapped_column(ForeignKey("locations.id"))
    start_at: Mapped[datetime]
    duration_minutes: Mapped[int] = mapped_column(Integer)
    expires_at: Mapped[datetime]
    holder: Mapped[str] = mapped_column(String(40))
    appointment_id: Mapped[int | None] = mapped_column(ForeignKey("appointments.id", ondelete="CASCADE"))
    created_at: Mapped[datetime]
    # Whom the time is held for (a patient's holds with one doctor in a week are capped, whoever holds them).
    patient_id: Mapped[int | None] = mapped_column(ForeignKey("patients.id", ondelete="CASCADE"))

    __table_args__ = (
        # The busy-time check reads one range of it per doctor (services/scheduling/busy_times.py).
        Index("ix_fhir_slot_holds_doctor_start", "doctor_id", "start_at"),
        Index("ix_fhir_slot_holds_holder", "holder", "expires_at"),
        Index("ix_fhir_slot_holds_appointment", "appointment_id"),
        Index("ix_fhir_slot_holds_patient", "patient_id", "doctor_id", "start_at"),
    )


class BulkJob(Base):
    """One ``$export``, claimed by the exporter like an outbox row (``realtime/lease.py``): while ``pending``,
    ``next_attempt_at`` is when it is due or, once claimed, when the claim's lease ends, and ``attempts`` counts
    the claims; each claim writes under a directory of its own (``services/fhir/bulk/writer.py``). The row holds
    who asked (``requester``: ``user:<id>`` or ``account:<id>``), what (``level``, the doctor of a Group export,
    the types, ``since``), the request's URL as sent, the transaction time (nothing changed after it is written),
    progress, and when done the files (``output``: type, path, count)."""

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
