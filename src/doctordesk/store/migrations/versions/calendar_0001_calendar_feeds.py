"""the doctors' calendar feeds

Revision ID: calendar_0001
Revises: 0001
Create Date: 2026-11-24

``calendar_feeds``: one row per feed address (the SHA-256 of its secret, unique; a short prefix; who made it;
when it was revoked; when it was last fetched). The feed itself reads appointments and offers through their
existing (doctor, start) indexes.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "calendar_0001"
down_revision = "0001"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "calendar_feeds",
        sa.Column("id", ID, nullable=False),
        sa.Column("doctor_id", ID, nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", ID, nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_fetched_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["doctor_id"], ["users.id"], name=op.f("fk_calendar_feeds_doctor_id_users"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["created_by"], ["users.id"], name=op.f("fk_calendar_feeds_created_by_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_calendar_feeds")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_calendar_feeds_token_hash")),
    )
    # At most one live feed per doctor, also when two requests race.
    op.create_index(
        "ix_calendar_feeds_live",
        "calendar_feeds",
        ["doctor_id"],
        unique=True,
        postgresql_where=sa.text("revoked_at IS NULL"),
        sqlite_where=sa.text("revoked_at IS NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_calendar_feeds_live", table_name="calendar_feeds")
    op.drop_table("calendar_feeds")
