"""Review and Approve tables: the offers sent to patients, and the server-side draft of the screen.

The draft lives in the database (not in process memory) so that the screen's PATCHes work whichever instance
answers them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from doctordesk.store.tables import Base, BigId


class OfferState:
    OPEN = "open"  # sent, awaiting the patient's answer; reserves the doctor's time
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    WITHDRAWN = "withdrawn"  # another offer of the same appointment was accepted


class AppointmentOffer(Base):
    """One alternative sent to the patient (n = 1..3 on its appointment)."""

    __tablename__ = "appointment_offers"
    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    appointment_id: Mapped[int] = mapped_column(ForeignKey("appointments.id", ondelete="CASCADE"))
    n: Mapped[int] = mapped_column(Integer)
    doctor_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    location_id: Mapped[int] = mapped_column(ForeignKey("locations.id"))
    start_at: Mapped[datetime]
    duration_minutes: Mapped[int] = mapped_column(Integer)
    doctor_fee_cents: Mapped[int | None] = mapped_column(Integer)
    total_fee_cents: Mapped[int | None] = mapped_column(Integer)
    currency: Mapped[str] = mapped_column(String(3), default="EUR")
    coverage_warning: Mapped[str | None] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(16), default=OfferState.OPEN)
    created_at: Mapped[datetime]
    answered_at: Mapped[datetime | None]
    __table_args__ = (
        # The overlap check reads one bounded range of this index per proposal.
        Index("ix_appointment_offers_doctor_start", "doctor_id", "start_at"),
        Index("ix_appointment_offers_appointment", "appointment_id", "n"),
    )


class ReviewDraft(Base):
    """The Review and Approve screen being edited by one user for one appointment: the cards as typed, the
    disclaimer acknowledgement, the confirmed timezone and whether the decline dialog is open."""

    __tablename__ = "review_drafts"
    appointment_id: Mapped[int] = mapped_column(ForeignKey("appointments.id", ondelete="CASCADE"), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    # {"cards": [{"doctor": "3", "location": "1", "date": "2026-11-25", "time": "10:00"}, ...]}
    cards: Mapped[dict[str, Any]] = mapped_column(default=dict)
    disclaimer_acknowledged_at: Mapped[datetime | None]
    timezone: Mapped[str | None] = mapped_column(String(64))
    decline_open: Mapped[bool] = mapped_column(default=False)
    updated_at: Mapped[datetime]


__all__ = ["AppointmentOffer", "OfferState", "ReviewDraft"]
