"""read API paging

Revision ID: api_0001
Revises: 0001
Create Date: 2026-11-24

An index in the read API's order (start time, then id), so each page of everything (support, admin) is an index
range, however long the clinic's history.
"""

from __future__ import annotations

from alembic import op

revision = "api_0001"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("appointments", schema=None) as batch_op:
        batch_op.create_index("ix_appointments_start_id", ["start_at", "id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("appointments", schema=None) as batch_op:
        batch_op.drop_index("ix_appointments_start_id")
