"""chat drafts kept with the server

Revision ID: chat_0002
Revises: chat_0001
Create Date: 2026-11-25

``chat_drafts``: the message a user has begun in a thread and not sent, one row per (appointment, user), so it
survives a reload and follows the user to another device. Removed on send or when emptied.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "chat_0002"
down_revision = "chat_0001"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "chat_drafts",
        sa.Column("appointment_id", ID, nullable=False),
        sa.Column("user_id", ID, nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["appointment_id"],
            ["appointments.id"],
            name=op.f("fk_chat_drafts_appointment_id_appointments"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_chat_drafts_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("appointment_id", "user_id", name=op.f("pk_chat_drafts")),
    )


def downgrade() -> None:
    op.drop_table("chat_drafts")
