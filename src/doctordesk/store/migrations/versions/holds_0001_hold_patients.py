"""Holds: the patient a time is held for

Revision ID: holds_0001
Revises: fhir_0006
Create Date: 2026-11-28

``fhir_slot_holds.patient_id``: whom a hold is for, so a patient's holds with one doctor in one week can be capped
whoever holds them (docs/booking.md#holds). Existing rows keep it empty (they expire within minutes).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "holds_0001"
down_revision = "fhir_0006"
branch_labels = None
depends_on = None


ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
FK = "fk_fhir_slot_holds_patient_id_patients"


def upgrade() -> None:
    with op.batch_alter_table("fhir_slot_holds", schema=None) as batch_op:
        batch_op.add_column(sa.Column("patient_id", ID, nullable=True))
        batch_op.create_foreign_key(op.f(FK), "patients", ["patient_id"], ["id"], ondelete="CASCADE")
    op.create_index("ix_fhir_slot_holds_patient", "fhir_slot_holds", ["patient_id", "doctor_id", "start_at"])


def downgrade() -> None:
    op.drop_index("ix_fhir_slot_holds_patient", table_name="fhir_slot_holds")
    with op.batch_alter_table("fhir_slot_holds", schema=None) as batch_op:
        batch_op.drop_constraint(op.f(FK), type_="foreignkey")
        batch_op.drop_column("patient_id")
