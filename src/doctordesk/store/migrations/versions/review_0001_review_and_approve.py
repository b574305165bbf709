"""review and approve

Revision ID: review_0001
Revises: 0001
Create Date: 2026-11-21

Offers sent to patients (indexed by doctor and start for the overlap check) and the server-side drafts of
the Review and Approve screen.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "review_0001"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "appointment_offers",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("appointment_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.Column("doctor_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("location_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("start_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("duration_minutes", sa.Integer(), nullable=False),
        sa.Column("doctor_fee_cents", sa.Integer(), nullable=True),
        sa.Column("total_fee_cents", sa.Integer(), nullable=True),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("coverage_warning", sa.Text(), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["appointment_id"],
            ["appointments.id"],
            name=op.f("fk_appointment_offers_appointment_id_appointments"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(["doctor_id"], ["users.id"], name=op.f("fk_appointment_offers_doctor_id_users")),
        sa.ForeignKeyConstraint(
            ["location_id"], ["locations.id"], name=op.f("fk_appointment_offers_location_id_locations")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_appointment_offers")),
    )
    with op.batch_alter_table("appointment_offers", schema=None) as batch_op:
        batch_op.create_index("ix_appointment_offers_appointment", ["appointment_id", "n"], unique=False)
        batch_op.create_index("ix_appointment_offers_doctor_start", ["doctor_id", "start_at"], unique=False)

    op.create_table(
        "review_drafts",
        sa.Column("appointment_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("cards", sa.JSON(), nullable=False),
        sa.Column("disclaimer_acknowledged_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("timezone", sa.String(length=64), nullable=True),
        sa.Column("decline_open", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["appointment_id"],
            ["appointments.id"],
            name=op.f("fk_review_drafts_appointment_id_appointments"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_review_drafts_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("appointment_id", "user_id", name=op.f("pk_review_drafts")),
    )


def downgrade() -> None:
    op.drop_table("review_drafts")
    with op.batch_alter_table("appointment_offers", schema=None) as batch_op:
        batch_op.drop_index("ix_appointment_offers_doctor_start")
        batch_op.drop_index("ix_appointment_offers_appointment")

    op.drop_table("appointment_offers")
