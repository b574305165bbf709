"""one-time password links

Revision ID: admin_0003
Revises: admin_0002
Create Date: 2026-11-24

Links through which a user sets their own password: the token's SHA-256 only, an expiry, and when the link was
used or made void by a newer one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "admin_0003"
down_revision = "admin_0002"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "password_links",
        sa.Column("id", ID, nullable=False),
        sa.Column("user_id", ID, nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_by", ID, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("voided_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_password_links_user_id_users"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["created_by"], ["users.id"], name=op.f("fk_password_links_created_by_users"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_password_links")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_password_links_token_hash")),
    )
    op.create_index(op.f("ix_password_links_user_id"), "password_links", ["user_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_password_links_user_id"), table_name="password_links")
    op.drop_table("password_links")
