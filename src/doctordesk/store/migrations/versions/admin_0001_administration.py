"""administration: doctor settings, work-hours exceptions, audit trail indexes

Revision ID: admin_0001
Revises: 0001
Create Date: 2026-11-23

Per-doctor settings beside the core profile (chat enabled), dated exceptions to the weekly work hours, and two
indexes so the audit trail's list and export read one (at, id) range, overall or per actor.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "admin_0001"
down_revision = "0001"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "doctor_settings",
        sa.Column("user_id", ID, nullable=False),
        sa.Column("chat_enabled", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_doctor_settings_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_doctor_settings")),
    )
    op.create_table(
        "work_hours_exceptions",
        sa.Column("id", ID, nullable=False),
        sa.Column("doctor_id", ID, nullable=False),
        sa.Column("location_id", ID, nullable=True),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("start_time", sa.Time(), nullable=True),
        sa.Column("end_time", sa.Time(), nullable=True),
        sa.Column("note", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("removed_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["doctor_id"], ["users.id"], name=op.f("fk_work_hours_exceptions_doctor_id_users"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["location_id"],
            ["locations.id"],
            name=op.f("fk_work_hours_exceptions_location_id_locations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_work_hours_exceptions")),
    )
    op.create_index("ix_work_hours_exceptions_doctor_day", "work_hours_exceptions", ["doctor_id", "day"])
    op.create_index("ix_audit_log_at_id", "audit_log", ["at", "id"])
    op.create_index("ix_audit_log_actor_at_id", "audit_log", ["actor_id", "at", "id"])


def downgrade() -> None:
    op.drop_index("ix_audit_log_actor_at_id", table_name="audit_log")
    op.drop_index("ix_audit_log_at_id", table_name="audit_log")
    op.drop_index("ix_work_hours_exceptions_doctor_day", table_name="work_hours_exceptions")
    op.drop_table("work_hours_exceptions")
    op.drop_table("doctor_settings")
