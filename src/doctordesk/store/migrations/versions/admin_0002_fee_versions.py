"""fee rules with effective dates

Revision ID: admin_0002
Revises: admin_0001
Create Date: 2026-11-23

Fee rules become versioned data: each row applies from ``effective_from`` (null for the rows that were always in
force) until a newer row for the same kind, doctor and location; ``retired`` ends a rule. Existing rows keep
applying as before.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "admin_0002"
down_revision = "admin_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("fee_schedule", schema=None) as batch_op:
        batch_op.add_column(sa.Column("effective_from", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("retired", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("fee_schedule", schema=None) as batch_op:
        batch_op.drop_column("retired")
        batch_op.drop_column("effective_from")
