"""staff's own mail

Revision ID: staffmail_0001
Revises: mail_0001
Create Date: 2026-11-29

``staff_mail_settings``: a doctor's or support member's address for the clinic's mail and the changes they chose
to be mailed for (docs/notifications.md#staff-mail), one row per user.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "staffmail_0001"
down_revision = "mail_0001"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "staff_mail_settings",
        sa.Column("user_id", ID, nullable=False),
        sa.Column("email", sa.String(length=254), nullable=True),
        sa.Column("new_request", sa.Boolean(), nullable=False),
        sa.Column("canceled_by_patient", sa.Boolean(), nullable=False),
        sa.Column("updated_at", WHEN, nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_staff_mail_settings_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_staff_mail_settings")),
    )


def downgrade() -> None:
    op.drop_table("staff_mail_settings")
