"""login throttling per client address

Revision ID: accounts_0001
Revises: 0001
Create Date: 2026-11-24

Failed logins are counted per username and client address for the lockout (login_address_throttle); the existing
per-username row (login_throttle) keeps the username's count over every address, which slows rather than locks.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "accounts_0001"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "login_address_throttle",
        sa.Column("username", sa.String(length=64), nullable=False),
        sa.Column("address", sa.String(length=64), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("locked_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("succeeded_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("username", "address", name=op.f("pk_login_address_throttle")),
    )


def downgrade() -> None:
    op.drop_table("login_address_throttle")
