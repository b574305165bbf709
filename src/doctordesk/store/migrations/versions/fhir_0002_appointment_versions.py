"""FHIR appointment versions

Revision ID: fhir_0002
Revises: fhir_0001
Create Date: 2026-11-25

Every version of an appointment, kept for vread and ``_history`` (docs/fhir.md#versions). Appointments written
before this revision have no kept versions: their current version reads from the appointment itself.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "fhir_0002"
down_revision = "fhir_0001"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "fhir_appointment_versions",
        sa.Column("appointment_id", ID, nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["appointment_id"],
            ["appointments.id"],
            name=op.f("fk_fhir_appointment_versions_appointment_id_appointments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("appointment_id", "version", name=op.f("pk_fhir_appointment_versions")),
    )


def downgrade() -> None:
    op.drop_table("fhir_appointment_versions")
