"""email to patients

Revision ID: mail_0001
Revises: 0001
Create Date: 2026-11-28

``patients.email``: where the clinic's mail reaches the patient (optional). ``mail_messages``: the mail outbox,
a row per mail with its whole content, its stable Message-ID and the change it tells of (unique); due rows found
by (status, next_attempt_at). ``mail_attempts``: every attempt at handing a mail to the relay.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "mail_0001"
down_revision = "0001"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("patients") as batch:
        batch.add_column(sa.Column("email", sa.String(length=254), nullable=True))
    op.create_table(
        "mail_messages",
        sa.Column("id", ID, nullable=False),
        sa.Column("message_id", sa.String(length=200), nullable=False),
        sa.Column("event_key", sa.String(length=100), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("appointment_id", ID, nullable=True),
        sa.Column("patient_id", ID, nullable=True),
        sa.Column("recipient", sa.String(length=254), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", WHEN, nullable=False),
        sa.Column("handed_over_at", WHEN, nullable=True),
        sa.Column("sent_at", WHEN, nullable=True),
        sa.Column("last_attempt_at", WHEN, nullable=True),
        sa.Column("last_code", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.String(length=300), nullable=True),
        sa.ForeignKeyConstraint(
            ["appointment_id"],
            ["appointments.id"],
            name=op.f("fk_mail_messages_appointment_id_appointments"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["patient_id"], ["patients.id"], name=op.f("fk_mail_messages_patient_id_patients"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mail_messages")),
        sa.UniqueConstraint("message_id", name=op.f("uq_mail_messages_message_id")),
        sa.UniqueConstraint("event_key", name=op.f("uq_mail_messages_event_key")),
    )
    op.create_index("ix_mail_messages_due", "mail_messages", ["status", "next_attempt_at"])
    op.create_index("ix_mail_messages_appointment", "mail_messages", ["appointment_id", "id"])
    op.create_table(
        "mail_attempts",
        sa.Column("id", ID, nullable=False),
        sa.Column("mail_id", ID, nullable=False),
        sa.Column("at", WHEN, nullable=False),
        sa.Column("outcome", sa.String(length=10), nullable=False),
        sa.Column("code", sa.Integer(), nullable=True),
        sa.Column("error", sa.String(length=300), nullable=True),
        sa.ForeignKeyConstraint(
            ["mail_id"], ["mail_messages.id"], name=op.f("fk_mail_attempts_mail_id_mail_messages"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mail_attempts")),
    )
    op.create_index(op.f("ix_mail_attempts_mail_id"), "mail_attempts", ["mail_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_mail_attempts_mail_id"), table_name="mail_attempts")
    op.drop_table("mail_attempts")
    op.drop_index("ix_mail_messages_appointment", table_name="mail_messages")
    op.drop_index("ix_mail_messages_due", table_name="mail_messages")
    op.drop_table("mail_messages")
    with op.batch_alter_table("patients") as batch:
        batch.drop_column("email")
