"""FHIR search indexes

Revision ID: fhir_0004
Revises: fhir_0003
Create Date: 2026-11-26

Patients by birth date and appointments by their last change, for FHIR's ``birthdate`` and ``_lastUpdated``
searches (docs/fhir.md#search-and-paging): without them a clinic of 100,000 appointments read every row.
"""

from __future__ import annotations

from alembic import op

revision = "fhir_0004"
down_revision = "fhir_0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_patients_birth_date", "patients", ["birth_date", "id"])
    op.create_index("ix_appointments_updated_id", "appointments", ["updated_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_appointments_updated_id", table_name="appointments")
    op.drop_index("ix_patients_birth_date", table_name="patients")
