"""chat

Revision ID: chat_0001
Revises: 0001
Create Date: 2026-11-21

Chat threads (one per appointment), messages and attachments (append-only: triggers refuse updates and deletes,
the history is kept for audit) and per-reader read positions.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "chat_0001"
down_revision = "0001"
branch_labels = None
depends_on = None

APPEND_ONLY = ("chat_messages", "chat_attachments")
GUARD_SQLITE = (
    "CREATE TRIGGER {table}_no_{op} BEFORE {OP} ON {table} BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END"
)
GUARD_PG_FUNCTION = (
    "CREATE OR REPLACE FUNCTION chat_append_only() RETURNS trigger AS $$ "
    "BEGIN RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END; $$ LANGUAGE plpgsql"
)


def _append_only_guard() -> None:
    """Messages and their files are never edited or deleted: enforced by the database, not only by the code."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute(GUARD_PG_FUNCTION)
        for table in APPEND_ONLY:
            op.execute(
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION chat_append_only()"
            )
    else:
        for table in APPEND_ONLY:
            for name in ("update", "delete"):
                op.execute(GUARD_SQLITE.format(table=table, op=name, OP=name.upper()))


def _drop_append_only_guard() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in APPEND_ONLY:
            op.execute(f"DROP TRIGGER IF EXISTS {table}_append_only ON {table}")
        op.execute("DROP FUNCTION IF EXISTS chat_append_only()")
    else:
        for table in APPEND_ONLY:
            for name in ("update", "delete"):
                op.execute(f"DROP TRIGGER IF EXISTS {table}_no_{name}")


def upgrade() -> None:
    op.create_table(
        "chat_attachments",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("uploader_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("filename", sa.String(length=255), nullable=False),
        sa.Column("mime", sa.String(length=64), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["uploader_id"], ["users.id"], name=op.f("fk_chat_attachments_uploader_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chat_attachments")),
    )
    op.create_table(
        "chat_threads",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("appointment_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_activity_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_message_id", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["appointment_id"], ["appointments.id"], name=op.f("fk_chat_threads_appointment_id_appointments")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chat_threads")),
        sa.UniqueConstraint("appointment_id", name=op.f("uq_chat_threads_appointment_id")),
    )
    with op.batch_alter_table("chat_threads", schema=None) as batch_op:
        batch_op.create_index("ix_chat_threads_activity", ["last_activity_at"], unique=False)

    op.create_table(
        "chat_messages",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("thread_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("sender_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("attachment_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("client_message_id", sa.String(length=64), nullable=True),
        sa.ForeignKeyConstraint(
            ["attachment_id"], ["chat_attachments.id"], name=op.f("fk_chat_messages_attachment_id_chat_attachments")
        ),
        sa.ForeignKeyConstraint(["sender_id"], ["users.id"], name=op.f("fk_chat_messages_sender_id_users")),
        sa.ForeignKeyConstraint(
            ["thread_id"], ["chat_threads.id"], name=op.f("fk_chat_messages_thread_id_chat_threads")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chat_messages")),
        sa.UniqueConstraint("sender_id", "client_message_id", name="uq_chat_messages_sender_client_id"),
    )
    with op.batch_alter_table("chat_messages", schema=None) as batch_op:
        batch_op.create_index("ix_chat_messages_sender_time", ["sender_id", "created_at"], unique=False)
        batch_op.create_index("ix_chat_messages_thread_order", ["thread_id", "created_at", "id"], unique=False)

    op.create_table(
        "chat_reads",
        sa.Column("thread_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("message_created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("message_id", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["thread_id"], ["chat_threads.id"], name=op.f("fk_chat_reads_thread_id_chat_threads")),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_chat_reads_user_id_users")),
        sa.PrimaryKeyConstraint("thread_id", "user_id", name=op.f("pk_chat_reads")),
    )
    with op.batch_alter_table("chat_reads", schema=None) as batch_op:
        batch_op.create_index("ix_chat_reads_user", ["user_id"], unique=False)
    _append_only_guard()


def downgrade() -> None:
    _drop_append_only_guard()
    with op.batch_alter_table("chat_reads", schema=None) as batch_op:
        batch_op.drop_index("ix_chat_reads_user")

    op.drop_table("chat_reads")
    with op.batch_alter_table("chat_messages", schema=None) as batch_op:
        batch_op.drop_index("ix_chat_messages_thread_order")
        batch_op.drop_index("ix_chat_messages_sender_time")

    op.drop_table("chat_messages")
    with op.batch_alter_table("chat_threads", schema=None) as batch_op:
        batch_op.drop_index("ix_chat_threads_activity")

    op.drop_table("chat_threads")
    op.drop_table("chat_attachments")
