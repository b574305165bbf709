"""The waitlist: entries (what a patient waits for), freed times (a free time the waitlist is offering, and who
took it) and offers (a time offered to one entry).

Exactly one patient wins a time: accepting sets ``waitlist_times.taken_offer_id`` by a conditional UPDATE
(``WHERE taken_offer_id IS NULL``), which one transaction alone can do on SQLite (writers take turns) and on
PostgreSQL (the row is locked by the first; the others find it taken when they read it again)."""

from __future__ import annotations

from datetime import date, datetime, time

from sqlalchemy import Date, ForeignKey, Index, Integer, String, Time, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from doctordesk.store.tables import Base, BigId


class WaitlistEntry(Base):
    __tablename__ = "waitlist_entries"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    patient_id: Mapped[int] = mapped_column(ForeignKey("patients.id", ondelete="CASCADE"))
    doctor_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))  # None: any doctor
    location_id: Mapped[int] = mapped_column(ForeignKey("locations.id"))
    service: Mapped[str] = mapped_column(String(64))
    until: Mapped[date] = mapped_column(Date)
    days: Mapped[int] = mapped_column(Integer)  # weekdays, Monday = bit 0
    time_from: Mapped[time] = mapped_column(Time)
    time_to: Mapped[time] = mapped_column(Time)
    appointment_id: Mapped[int | None] = mapped_column(ForeignKey("appointments.id", ondelete="SET NULL"))
    state: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime]
    ended_at: Mapped[datetime | None]

    __table_args__ = (
        Index("ix_waitlist_entries_patient", "patient_id", "state"),
        Index("ix_waitlist_entries_waiting", "state", "location_id", "created_at"),
    )


class WaitlistTime(Base):
    __tablename__ = "waitlist_times"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    doctor_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    location_id: Mapped[int] = mapped_column(ForeignKey("locations.id"))
    start_at: Mapped[datetime]
    duration_minutes: Mapped[int] = mapped_column(Integer)
    found_at: Mapped[datetime]
    taken_offer_id: Mapped[int | None] = mapped_column(Integer)

    __table_args__ = (UniqueConstraint("doctor_id", "start_at", name="uq_waitlist_times_doctor_start"),)


class WaitlistOffer(Base):
    __tablename__ = "waitlist_offers"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    entry_id: Mapped[int] = mapped_column(ForeignKey("waitlist_entries.id", ondelete="CASCADE"))
    time_id: Mapped[int] = mapped_column(ForeignKey("waitlist_times.id", ondelete="CASCADE"))
    patient_id: Mapped[int] = mapped_column(ForeignKey("patients.id", ondelete="CASCADE"))
    state: Mapped[str] = mapped_column(String(16))
    offered_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    answered_at: Mapped[datetime | None]
    # The request placed, or the appointment moved, when it was accepted.
    appointment_id: Mapped[int | None] = mapped_column(ForeignKey("appointments.id", ondelete="SET NULL"))
    moved: Mapped[bool] = mapped_column(default=False)

    __table_args__ = (
        UniqueConstraint("entry_id", "time_id", name="uq_waitlist_offers_entry_time"),
        Index("ix_waitlist_offers_patient", "patient_id", "state"),
        Index("ix_waitlist_offers_open", "state", "expires_at"),
        Index("ix_waitlist_offers_appointment", "appointment_id"),
    )
