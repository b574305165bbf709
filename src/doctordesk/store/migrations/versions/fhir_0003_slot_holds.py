"""FHIR slot holds

Revision ID: fhir_0003
Revises: fhir_0002
Create Date: 2026-11-25

Times held through ``Appointment/$hold`` and taken by the requests ``Appointment/$book`` placed
(docs/fhir.md#scheduling).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "fhir_0003"
down_revision = "fhir_0002"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "fhir_slot_holds",
        sa.Column("id", ID, nullable=False),
        sa.Column("doctor_id", ID, nullable=False),
        sa.Column("location_id", ID, nullable=False),
        sa.Column("start_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("duration_minutes", sa.Integer(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("holder", sa.String(length=40), nullable=False),
        sa.Column("appointment_id", ID, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["doctor_id"], ["users.id"], name=op.f("fk_fhir_slot_holds_doctor_id_users")),
        sa.ForeignKeyConstraint(
            ["location_id"], ["locations.id"], name=op.f("fk_fhir_slot_holds_location_id_locations")
        ),
        sa.ForeignKeyConstraint(
            ["appointment_id"],
            ["appointments.id"],
            name=op.f("fk_fhir_slot_holds_appointment_id_appointments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fhir_slot_holds")),
    )
    op.create_index("ix_fhir_slot_holds_doctor_start", "fhir_slot_holds", ["doctor_id", "start_at"])
    op.create_index("ix_fhir_slot_holds_holder", "fhir_slot_holds", ["holder", "expires_at"])
    op.create_index("ix_fhir_slot_holds_appointment", "fhir_slot_holds", ["appointment_id"])


def downgrade() -> None:
    op.drop_index("ix_fhir_slot_holds_appointment", table_name="fhir_slot_holds")
    op.drop_index("ix_fhir_slot_holds_holder", table_name="fhir_slot_holds")
    op.drop_index("ix_fhir_slot_holds_doctor_start", table_name="fhir_slot_holds")
    op.drop_table("fhir_slot_holds")
