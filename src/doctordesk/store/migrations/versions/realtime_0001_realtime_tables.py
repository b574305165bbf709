"""realtime tables

Revision ID: realtime_0001
Revises: 0001
Create Date: 2026-11-21 20:22:01.528021
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "realtime_0001"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "devices",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("device_key", sa.String(length=128), nullable=False),
        sa.Column("platform", sa.String(length=8), nullable=False),
        sa.Column("push_token", sa.String(length=512), nullable=True),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("last_active_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("token_updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_devices_user_id_users"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_devices")),
        sa.UniqueConstraint("device_key", name=op.f("uq_devices_device_key")),
    )
    with op.batch_alter_table("devices", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_devices_user_id"), ["user_id"], unique=False)

    op.create_table(
        "push_outbox",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("notification_id", sa.String(length=36), nullable=False),
        sa.Column("device_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("data", sa.String(length=300), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.String(length=300), nullable=True),
        sa.ForeignKeyConstraint(
            ["device_id"], ["devices.id"], name=op.f("fk_push_outbox_device_id_devices"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_push_outbox_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_push_outbox")),
        sa.UniqueConstraint("notification_id", name=op.f("uq_push_outbox_notification_id")),
    )
    with op.batch_alter_table("push_outbox", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_push_outbox_device_id"), ["device_id"], unique=False)
        batch_op.create_index("ix_push_outbox_due", ["status", "next_attempt_at"], unique=False)

    op.create_table(
        "stream_tickets",
        sa.Column("ticket_hash", sa.String(length=64), nullable=False),
        sa.Column("token_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["token_id"],
            ["access_tokens.id"],
            name=op.f("fk_stream_tickets_token_id_access_tokens"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_stream_tickets_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("ticket_hash", name=op.f("pk_stream_tickets")),
    )
    with op.batch_alter_table("stream_tickets", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_stream_tickets_expires_at"), ["expires_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_stream_tickets_token_id"), ["token_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("stream_tickets", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_stream_tickets_token_id"))
        batch_op.drop_index(batch_op.f("ix_stream_tickets_expires_at"))

    op.drop_table("stream_tickets")
    with op.batch_alter_table("push_outbox", schema=None) as batch_op:
        batch_op.drop_index("ix_push_outbox_due")
        batch_op.drop_index(batch_op.f("ix_push_outbox_device_id"))

    op.drop_table("push_outbox")
    with op.batch_alter_table("devices", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_devices_user_id"))

    op.drop_table("devices")
