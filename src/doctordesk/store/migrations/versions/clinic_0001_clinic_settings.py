"""clinic settings

Revision ID: clinic_0001
Revises: 0001
Create Date: 2026-11-28

``clinic_settings``: the clinic's own settings, changed by its administrators (reminders first; other features
add theirs by name): one row per setting that differs from its default, with who changed it last and when.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "clinic_0001"
down_revision = "0001"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "clinic_settings",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("value", sa.String(length=500), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_by", ID, nullable=True),
        sa.ForeignKeyConstraint(
            ["updated_by"], ["users.id"], name=op.f("fk_clinic_settings_updated_by_users"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_clinic_settings")),
    )


def downgrade() -> None:
    op.drop_table("clinic_settings")
