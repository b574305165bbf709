"""appointment list sections

Revision ID: api_0002
Revises: api_0001
Create Date: 2026-11-23

Indexes in the list sections' order (start time, then id), so the first page of every section is an index range
whatever the history: per doctor and status (requests, offers, approved), per doctor (past and closed), per
status for support agents, per patient.
"""

from __future__ import annotations

from alembic import op

revision = "api_0002"
down_revision = "api_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("appointments", schema=None) as batch_op:
        batch_op.drop_index("ix_appointments_doctor_status")
        batch_op.drop_index("ix_appointments_doctor_start")
        batch_op.create_index("ix_appointments_doctor_status", ["doctor_id", "status", "start_at", "id"], unique=False)
        batch_op.create_index("ix_appointments_doctor_start", ["doctor_id", "start_at", "id"], unique=False)
        batch_op.create_index("ix_appointments_status_start", ["status", "start_at", "id"], unique=False)
        batch_op.create_index("ix_appointments_patient_start", ["patient_id", "start_at", "id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("appointments", schema=None) as batch_op:
        batch_op.drop_index("ix_appointments_patient_start")
        batch_op.drop_index("ix_appointments_status_start")
        batch_op.drop_index("ix_appointments_doctor_start")
        batch_op.drop_index("ix_appointments_doctor_status")
        batch_op.create_index("ix_appointments_doctor_start", ["doctor_id", "start_at"], unique=False)
        batch_op.create_index("ix_appointments_doctor_status", ["doctor_id", "status"], unique=False)
