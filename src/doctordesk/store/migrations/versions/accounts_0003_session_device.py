"""the device a session signed in from

Revision ID: accounts_0003
Revises: accounts_0002
Create Date: 2026-11-29

The security page names each session's device ("Firefox on Windows"), read from the sign-in's User-Agent header
(docs/accounts.md#security-page). Only that short description is kept, never the header. Tokens issued before, and
sign-ins whose client is not known, have none: the page says "Unknown device".
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "accounts_0003"
down_revision = "accounts_0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("access_tokens") as batch:
        batch.add_column(sa.Column("device", sa.String(length=120), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("access_tokens") as batch:
        batch.drop_column("device")
