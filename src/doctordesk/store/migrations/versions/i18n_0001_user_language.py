"""each user's language

Revision ID: i18n_0001
Revises: 0001
Create Date: 2026-11-24

``users.language``: the language a user chose in the app (``en`` or ``de``); NULL until they choose, when the
browser's ``Accept-Language`` decides. Push notifications are written in it (docs/web-app.md#language).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "i18n_0001"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("users", sa.Column("language", sa.String(length=8), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("users") as batch_op:
        batch_op.drop_column("language")
