"""relayed events: events of processes without the bus, published by a serving process

Revision ID: realtime_0002
Revises: realtime_0001
Create Date: 2026-11-26 09:40:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "realtime_0002"
down_revision = "realtime_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "relayed_events",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("topics", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_relayed_events")),
    )


def downgrade() -> None:
    op.drop_table("relayed_events")
