"""booking: in-app notices, the request's note

Revision ID: booking_0001
Revises: 0001
Create Date: 2026-11-24

What each person was told about their appointments (a patient's answer to offers, a decision, a cancellation),
shown in their appointment list until dismissed; and the note a patient (or a clinic's booking system) sent with a
request, shown to the doctor (docs/booking.md).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "booking_0001"
down_revision = "0001"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "user_notices",
        sa.Column("id", ID, nullable=False),
        sa.Column("user_id", ID, nullable=False),
        sa.Column("appointment_id", ID, nullable=True),
        sa.Column("text", sa.String(length=500), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("dismissed_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_user_notices_user_id_users"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["appointment_id"],
            ["appointments.id"],
            name=op.f("fk_user_notices_appointment_id_appointments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_user_notices")),
    )
    op.create_index("ix_user_notices_open", "user_notices", ["user_id", "dismissed_at", "id"])
    with op.batch_alter_table("appointments") as batch:
        batch.add_column(sa.Column("request_note", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("appointments") as batch:
        batch.drop_column("request_note")
    op.drop_index("ix_user_notices_open", table_name="user_notices")
    op.drop_table("user_notices")
