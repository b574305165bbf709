"""FHIR: a doctor's appointments by last change

Revision ID: fhir_0005
Revises: fhir_0004
Create Date: 2026-11-26

A doctor's ``_lastUpdated`` search (docs/fhir.md#search-performance): the doctor's rows changed since a time are one
index range, so finding the few that match no longer reads the doctor's whole history.
"""

from __future__ import annotations

from alembic import op

revision = "fhir_0005"
down_revision = "fhir_0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_appointments_doctor_updated", "appointments", ["doctor_id", "updated_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_appointments_doctor_updated", table_name="appointments")
