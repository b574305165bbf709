"""Waitlist: entries, freed times and offers

Revision ID: waitlist_0001
Revises: 0001
Create Date: 2026-11-28

Patients waiting for an earlier time, the free times offered to them and who took each (docs/waitlist.md).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "waitlist_0001"
down_revision = "0001"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "waitlist_entries",
        sa.Column("id", ID, nullable=False),
        sa.Column("patient_id", ID, nullable=False),
        sa.Column("doctor_id", ID, nullable=True),
        sa.Column("location_id", ID, nullable=False),
        sa.Column("service", sa.String(length=64), nullable=False),
        sa.Column("until", sa.Date(), nullable=False),
        sa.Column("days", sa.Integer(), nullable=False),
        sa.Column("time_from", sa.Time(), nullable=False),
        sa.Column("time_to", sa.Time(), nullable=False),
        sa.Column("appointment_id", ID, nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["patient_id"], ["patients.id"], name=op.f("fk_waitlist_entries_patient_id_patients"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["doctor_id"], ["users.id"], name=op.f("fk_waitlist_entries_doctor_id_users")),
        sa.ForeignKeyConstraint(
            ["location_id"], ["locations.id"], name=op.f("fk_waitlist_entries_location_id_locations")
        ),
        sa.ForeignKeyConstraint(
            ["appointment_id"],
            ["appointments.id"],
            name=op.f("fk_waitlist_entries_appointment_id_appointments"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_waitlist_entries")),
    )
    op.create_index("ix_waitlist_entries_patient", "waitlist_entries", ["patient_id", "state"])
    op.create_index("ix_waitlist_entries_waiting", "waitlist_entries", ["state", "location_id", "created_at"])
    op.create_table(
        "waitlist_times",
        sa.Column("id", ID, nullable=False),
        sa.Column("doctor_id", ID, nullable=False),
        sa.Column("location_id", ID, nullable=False),
        sa.Column("start_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("duration_minutes", sa.Integer(), nullable=False),
        sa.Column("found_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("taken_offer_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["doctor_id"], ["users.id"], name=op.f("fk_waitlist_times_doctor_id_users")),
        sa.ForeignKeyConstraint(
            ["location_id"], ["locations.id"], name=op.f("fk_waitlist_times_location_id_locations")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_waitlist_times")),
        sa.UniqueConstraint("doctor_id", "start_at", name="uq_waitlist_times_doctor_start"),
    )
    op.create_table(
        "waitlist_offers",
        sa.Column("id", ID, nullable=False),
        sa.Column("entry_id", ID, nullable=False),
        sa.Column("time_id", ID, nullable=False),
        sa.Column("patient_id", ID, nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("offered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("appointment_id", ID, nullable=True),
        sa.Column("moved", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["entry_id"],
            ["waitlist_entries.id"],
            name=op.f("fk_waitlist_offers_entry_id_waitlist_entries"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["time_id"],
            ["waitlist_times.id"],
            name=op.f("fk_waitlist_offers_time_id_waitlist_times"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["patient_id"], ["patients.id"], name=op.f("fk_waitlist_offers_patient_id_patients"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["appointment_id"],
            ["appointments.id"],
            name=op.f("fk_waitlist_offers_appointment_id_appointments"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_waitlist_offers")),
        sa.UniqueConstraint("entry_id", "time_id", name="uq_waitlist_offers_entry_time"),
    )
    op.create_index("ix_waitlist_offers_patient", "waitlist_offers", ["patient_id", "state"])
    op.create_index("ix_waitlist_offers_open", "waitlist_offers", ["state", "expires_at"])
    op.create_index("ix_waitlist_offers_appointment", "waitlist_offers", ["appointment_id"])


def downgrade() -> None:
    op.drop_table("waitlist_offers")
    op.drop_table("waitlist_times")
    op.drop_table("waitlist_entries")
