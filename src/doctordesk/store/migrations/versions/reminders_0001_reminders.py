"""reminders before appointments

Revision ID: reminders_0001
Revises: clinic_0001
Create Date: 2026-11-28

``reminders_sent``: one row per reminder that went (appointment, the start it was for, its window in hours:
unique, so a reminder goes at most once). ``reminder_links``: the links of a reminder (the token's SHA-256, the
action, the appointment's start, its expiry and when it was used). ``appointment_confirmations``: a patient said
they will come, for one start of the appointment.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "reminders_0001"
down_revision = "clinic_0001"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = sa.DateTime(timezone=True)


def _appointment(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["appointment_id"], ["appointments.id"], name=op.f(f"fk_{table}_appointment_id_appointments"),
        ondelete="CASCADE",
    )  # fmt: skip


def upgrade() -> None:
    op.create_table(
        "reminders_sent",
        sa.Column("id", ID, nullable=False),
        sa.Column("appointment_id", ID, nullable=False),
        sa.Column("start_at", WHEN, nullable=False),
        sa.Column("hours", sa.Integer(), nullable=False),
        sa.Column("sent_at", WHEN, nullable=False),
        _appointment("reminders_sent"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reminders_sent")),
        sa.UniqueConstraint("appointment_id", "start_at", "hours", name=op.f("uq_reminders_sent_appointment_id")),
    )
    op.create_table(
        "reminder_links",
        sa.Column("id", ID, nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("appointment_id", ID, nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("start_at", WHEN, nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("expires_at", WHEN, nullable=False),
        sa.Column("used_at", WHEN, nullable=True),
        _appointment("reminder_links"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reminder_links")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_reminder_links_token_hash")),
    )
    op.create_index(op.f("ix_reminder_links_appointment_id"), "reminder_links", ["appointment_id"])
    op.create_table(
        "appointment_confirmations",
        sa.Column("id", ID, nullable=False),
        sa.Column("appointment_id", ID, nullable=False),
        sa.Column("start_at", WHEN, nullable=False),
        sa.Column("confirmed_at", WHEN, nullable=False),
        _appointment("appointment_confirmations"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_appointment_confirmations")),
        sa.UniqueConstraint("appointment_id", "start_at", name=op.f("uq_appointment_confirmations_appointment_id")),
    )
    op.create_index(
        "ix_appointment_confirmations_appointment", "appointment_confirmations", ["appointment_id", "start_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_appointment_confirmations_appointment", table_name="appointment_confirmations")
    op.drop_table("appointment_confirmations")
    op.drop_index(op.f("ix_reminder_links_appointment_id"), table_name="reminder_links")
    op.drop_table("reminder_links")
    op.drop_table("reminders_sent")
