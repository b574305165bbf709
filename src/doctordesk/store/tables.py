"""Core tables: accounts, clinic reference data, patients and policies, appointments, history, audit, fees.

Feature tables live beside this module (one module per feature) on the same ``Base``; ``store.schema`` imports
them all so Alembic and tests see the whole schema.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from typing import Any

from sqlalchemy import (
    JSON,
    TEXT,
    BigInteger,
    Boolean,
    Date,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    Time,
    TypeDecorator,
    false,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """Timestamps are stored in UTC and always come back timezone-aware (SQLite forgets the zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, _dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# Integer primary keys that are BIGINT on PostgreSQL and the rowid alias on SQLite.
BigId = BigInteger().with_variant(Integer(), "sqlite")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = {datetime: UTCDateTime, dict[str, Any]: JSON}


# --- accounts -------------------------------------------------------------------------------------------------


class User(Base):
    __tablename__ = "users"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16))
    display_name: Mapped[str] = mapped_column(String(128))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime]
    # The clinic's own id for the row (bulk import and export, migration import_0001); unique where present.
    external_id: Mapped[str | None] = mapped_column(String(64), unique=True, index=True)
    # The language the user chose (en, de); None: the browser's Accept-Language decides (migration i18n_0001).
    language: Mapped[str | None] = mapped_column(String(8))


class AccessToken(Base):
    """Bearer tokens, stored as a SHA-256 of the random token; revocable and expiring."""

    __tablename__ = "access_tokens"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None]
    # The holder's last proof of who they are (the sign-in, or a re-authentication), and whether it included a
    # second factor: what a change of how the account signs in asks for (docs/accounts.md#recent-authentication).
    authenticated_at: Mapped[datetime | None]
    second_factor: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # What signed in: the client's and the system's names ("Firefox", "Windows"), from the sign-in's User-Agent,
    # which is never kept itself (domain/accounts/user_agents.py), put into words in the reader's language where
    # they are shown; None: not known.
    device_client: Mapped[str | None] = mapped_column(String(120))
    device_system: Mapped[str | None] = mapped_column(String(120))
    # A description in one piece ("Firefox on Windows"), written only before the two names were kept apart (and
    # left by migration accounts_0004 where it could not split it): shown as it is.
    device: Mapped[str | None] = mapped_column(String(120))


class LoginThrottle(Base):
    """Failed logins per username from every address (domain/accounts/login_throttle.py): a count that drains by one per
    interval from ``updated_at``; at the ceiling the username is slowed and ``locked_until`` is when the next
    attempt may come."""

    __tablename__ = "login_throttle"
    username: Mapped[str] = mapped_column(String(64), primary_key=True)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    locked_until: Mapped[datetime | None]
    updated_at: Mapped[datetime]


class LoginAddressThrottle(Base):
    """Failed logins per username and client address: too many lock that address out of that username for a
    while; ``succeeded_at`` (the last successful login from there) exempts the address from the username's slowing.
    Migration accounts_0001."""

    __tablename__ = "login_address_throttle"
    username: Mapped[str] = mapped_column(String(64), primary_key=True)
    address: Mapped[str] = mapped_column(String(64), primary_key=True)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    locked_until: Mapped[datetime | None]
    succeeded_at: Mapped[datetime | None]
    updated_at: Mapped[datetime]


# --- clinic ---------------------------------------------------------------------------------------------------


class DoctorProfile(Base):
    __tablename__ = "doctor_profiles"
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    specialty: Mapped[str] = mapped_column(String(64))
    can_prescribe: Mapped[bool] = mapped_column(Boolean, default=True)
    timezone: Mapped[str | None] = mapped_column(String(64))  # unset: the doctor confirms one when suggesting


class Location(Base):
    __tablename__ = "locations"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    name: Mapped[str] = mapped_column(String(128))
    address: Mapped[str] = mapped_column(String(255), default="")
    timezone: Mapped[str] = mapped_column(String(64))
    # The clinic's own id for the row (bulk import and export, migration import_0001); unique where present.
    external_id: Mapped[str | None] = mapped_column(String(64), unique=True, index=True)


class WorkHours(Base):
    """A doctor's hours at a location on one weekday (0 = Monday), in the location's local time."""

    __tablename__ = "work_hours"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    doctor_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    location_id: Mapped[int] = mapped_column(ForeignKey("locations.id", ondelete="CASCADE"))
    weekday: Mapped[int] = mapped_column(Integer)
    start_time: Mapped[time] = mapped_column(Time)
    end_time: Mapped[time] = mapped_column(Time)
    # The clinic's own id for the row (bulk import and export, migration import_0001); unique where present.
    external_id: Mapped[str | None] = mapped_column(String(64), unique=True, index=True)
    __table_args__ = (Index("ix_work_hours_doctor_location", "doctor_id", "location_id", "weekday"),)


class FeeSchedule(Base):
    """Fee rules. ``kind``: doctor_fee (per doctor and location), location_fee (per location), or a surcharge
    (per cent of the doctor fee, e.g. weekend or short_notice). Amounts in cents; null doctor/location = any."""

    __tablename__ = "fee_schedule"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    doctor_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    location_id: Mapped[int | None] = mapped_column(ForeignKey("locations.id", ondelete="CASCADE"))
    amount_cents: Mapped[int] = mapped_column(Integer, default=0)
    percent: Mapped[int] = mapped_column(Integer, default=0)
    currency: Mapped[str] = mapped_column(String(3), default="EUR")
    # Versions (admin_0002): a row applies to decisions from ``effective_from`` (null: always) until a newer row of
    # the same kind, doctor and location takes effect; ``retired`` ends the rule from its ``effective_from``. Rows
    # are only ever added, so the schedule of any past moment can be read back.
    effective_from: Mapped[datetime | None]
    retired: Mapped[bool] = mapped_column(Boolean, default=False)


# --- patients -------------------------------------------------------------------------------------------------


# TEXT, not Text: the texts marked for translation are found by that name (i18n/catalog.py).
_SortText = TEXT().with_variant(TEXT(collation="C"), "postgresql")


class Patient(Base):
    __tablename__ = "patients"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), unique=True)
    name: Mapped[str] = mapped_column(String(128))
    birth_date: Mapped[date | None] = mapped_column(Date)
    # The clinic's own id for the row (bulk import and export, migration import_0001); unique where present.
    external_id: Mapped[str | None] = mapped_column(String(64), unique=True, index=True)
    # Where the clinic's mail reaches the patient (``domain/mail/addresses``); None: no mail (migration mail_0001).
    email: Mapped[str | None] = mapped_column(String(254))
    # FHIR's ``_sort`` by family, given and name: the name's parts folded (``domain/fhir/names.sort_keys``), compared
    # in code point order (collation "C" on PostgreSQL), kept by ``store/name_words.py`` (fhir_0006).
    family_key: Mapped[str] = mapped_column(_SortText, default="", server_default="")
    given_key: Mapped[str] = mapped_column(_SortText, default="", server_default="")
    name_key: Mapped[str] = mapped_column(_SortText, default="", server_default="")
    __table_args__ = (
        # FHIR's Patient search by birthdate (fhir_0004).
        Index("ix_patients_birth_date", "birth_date", "id"),
        # FHIR's Patient _sort by the name's parts (fhir_0006).
        Index("ix_patients_family_key", "family_key", "id"),
        Index("ix_patients_given_key", "given_key", "id"),
        Index("ix_patients_name_key", "name_key", "id"),
    )


class PatientNameWord(Base):
    """The folded words of a patient's name (``domain/appointments/list_filter.name_words``), for the list's name
    search: a search word is an index range on ``word`` (migration ``listsearch_0001``). Kept by
    ``store/name_words.py`` (registered by ``store/db.py``) whenever a name is written. Compared in code point order
    (PostgreSQL: collation "C"), so "starts with" is a range in every database."""

    __tablename__ = "patient_name_words"
    word: Mapped[str] = mapped_column(
        String(64).with_variant(String(64, collation="C"), "postgresql"), primary_key=True
    )
    patient_id: Mapped[int] = mapped_column(ForeignKey("patients.id", ondelete="CASCADE"), primary_key=True)


class InsurancePolicy(Base):
    """A patient's policy. ``network`` and ``exclusions`` are JSON lists; ``third_party_data`` is the raw record
    from the insurer's system as received (it may be missing or malformed; the rules check it)."""

    __tablename__ = "insurance_policies"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    patient_id: Mapped[int] = mapped_column(ForeignKey("patients.id", ondelete="CASCADE"), index=True)
    insurer: Mapped[str] = mapped_column(String(128))
    policy_number: Mapped[str] = mapped_column(String(64))
    valid_from: Mapped[date] = mapped_column(Date)
    valid_to: Mapped[date] = mapped_column(Date)
    # {"doctors": [ids], "locations": [ids]}; empty lists mean "any"
    network: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # {"services": [names], "doctors": [ids]}: approvals for these are forbidden by the policy terms
    exclusions: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    third_party_data: Mapped[str | None] = mapped_column(Text)
    # The clinic's own id for the row (bulk import and export, migration import_0001); unique where present.
    external_id: Mapped[str | None] = mapped_column(String(64), unique=True, index=True)


# --- appointments ---------------------------------------------------------------------------------------------


class Appointment(Base):
    __tablename__ = "appointments"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    patient_id: Mapped[int] = mapped_column(ForeignKey("patients.id"), index=True)
    doctor_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    location_id: Mapped[int] = mapped_column(ForeignKey("locations.id"))
    service: Mapped[str] = mapped_column(String(64), default="consultation")
    start_at: Mapped[datetime]
    duration_minutes: Mapped[int] = mapped_column(Integer, default=30)
    status: Mapped[int] = mapped_column(Integer)
    version: Mapped[int] = mapped_column(Integer, default=1)
    chat_enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    disclaimer_required: Mapped[bool] = mapped_column(Boolean, default=False)
    prescription_needed: Mapped[bool] = mapped_column(Boolean, default=False)
    decline_reason: Mapped[str | None] = mapped_column(Text)
    # What the patient (or the clinic's booking system) wrote with the request (migration booking_0001).
    request_note: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    # The clinic's own id for the row (bulk import and export, migration import_0001); unique where present.
    external_id: Mapped[str | None] = mapped_column(String(64), unique=True, index=True)
    __table_args__ = (
        # The list sections' order per doctor, per doctor and status, per status, per patient (api_0002); the read
        # API's (api_0001).
        Index("ix_appointments_doctor_start", "doctor_id", "start_at", "id"),
        Index("ix_appointments_doctor_status", "doctor_id", "status", "start_at", "id"),
        Index("ix_appointments_status_start", "status", "start_at", "id"),
        Index("ix_appointments_patient_start", "patient_id", "start_at", "id"),
        # A doctor's list searched by patient name: per matching patient, a range in the list's order
        # (listsearch_0001).
        Index("ix_appointments_doctor_patient_start", "doctor_id", "patient_id", "start_at", "id"),
        Index("ix_appointments_start_id", "start_at", "id"),
        # FHIR's search by _lastUpdated (fhir_0004).
        Index("ix_appointments_updated_id", "updated_at", "id"),
        # A doctor's search by _lastUpdated (fhir_0005).
        Index("ix_appointments_doctor_updated", "doctor_id", "updated_at", "id"),
        # The dashboard's requests per day, the clinic's and a doctor's (dashboard_0001).
        Index("ix_appointments_created_id", "created_at", "id"),
        Index("ix_appointments_doctor_created", "doctor_id", "created_at", "id"),
    )


class AppointmentHistory(Base):
    __tablename__ = "appointment_history"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    appointment_id: Mapped[int] = mapped_column(ForeignKey("appointments.id", ondelete="CASCADE"), index=True)
    at: Mapped[datetime]
    actor_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    from_status: Mapped[int | None] = mapped_column(Integer)
    to_status: Mapped[int] = mapped_column(Integer)
    details: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # The dashboard's decisions by the time they were made (dashboard_0001).
    __table_args__ = (Index("ix_appointment_history_to_at", "to_status", "at", "appointment_id"),)


class AuditLog(Base):
    """Append-only: rows are inserted, never updated or deleted (a trigger refuses both on PostgreSQL and
    SQLite)."""

    __tablename__ = "audit_log"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    at: Mapped[datetime]
    actor_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    action: Mapped[str] = mapped_column(String(64))
    entity: Mapped[str] = mapped_column(String(32))
    entity_id: Mapped[int | None] = mapped_column(BigInteger)
    details: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    __table_args__ = (Index("ix_audit_entity", "entity", "entity_id"),)


__all__ = [
    "AccessToken",
    "Appointment",
    "AppointmentHistory",
    "AuditLog",
    "Base",
    "DoctorProfile",
    "FeeSchedule",
    "InsurancePolicy",
    "Location",
    "LoginAddressThrottle",
    "LoginThrottle",
    "Patient",
    "PatientNameWord",
    "User",
    "WorkHours",
]
