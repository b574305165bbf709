"""Dashboard: requests by day and decisions by time

Revision ID: dashboard_0001
Revises: 0001
Create Date: 2026-11-28

The dashboard's figures (docs/dashboard.md#queries) count the last 90 days: requests by their ``created_at``, for the
clinic or one doctor, and decisions by the time of their history entry. Each is an index range instead of a scan of
every appointment the clinic ever had.
"""

from __future__ import annotations

from alembic import op

revision = "dashboard_0001"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_appointments_created_id", "appointments", ["created_at", "id"])
    op.create_index("ix_appointments_doctor_created", "appointments", ["doctor_id", "created_at", "id"])
    op.create_index("ix_appointment_history_to_at", "appointment_history", ["to_status", "at", "appointment_id"])


def downgrade() -> None:
    op.drop_index("ix_appointment_history_to_at", table_name="appointment_history")
    op.drop_index("ix_appointments_doctor_created", table_name="appointments")
    op.drop_index("ix_appointments_created_id", table_name="appointments")
