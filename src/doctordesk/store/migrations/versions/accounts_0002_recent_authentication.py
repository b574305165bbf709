"""recent authentication on access tokens

Revision ID: accounts_0002
Revises: accounts_0001
Create Date: 2026-11-28

A change of how an account signs in (a factor, recovery codes, an app's access) needs a recent proof of who one is:
each access token keeps when its holder last proved it (the sign-in or a re-authentication) and whether that proof
included a second factor. Tokens issued before have no proof on record: their holders re-authenticate once.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "accounts_0002"
down_revision = "accounts_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("access_tokens") as batch:
        batch.add_column(sa.Column("authenticated_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("second_factor", sa.Boolean(), server_default=sa.false(), nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("access_tokens") as batch:
        batch.drop_column("second_factor")
        batch.drop_column("authenticated_at")
