"""texts stored for another reader keep their template

Revision ID: i18n_0002
Revises: i18n_0001, booking_0001, webhooks_0001
Create Date: 2026-11-25

A notice is written when one person acts and read later by another, who may read another language. The text's
template and values (``domain/texts.py``) are stored beside its English, so it is shown in the reader's language:
``user_notices.message`` and ``webhook_endpoints.disabled_message`` (the service's reason for disabling an
endpoint; a reason an admin typed stays as typed). Rows written before keep only their English ``text`` /
``disabled_reason`` and are shown as they are (docs/web-app.md#language).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "i18n_0002"
# Joins the branches whose tables it changes (the notices' and the webhooks').
down_revision = ("i18n_0001", "booking_0001", "webhooks_0001")
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("user_notices", sa.Column("message", sa.JSON(), nullable=True))
    op.add_column("webhook_endpoints", sa.Column("disabled_message", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("webhook_endpoints") as batch_op:
        batch_op.drop_column("disabled_message")
    with op.batch_alter_table("user_notices") as batch_op:
        batch_op.drop_column("message")
