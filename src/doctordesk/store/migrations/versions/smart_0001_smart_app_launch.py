"""SMART App Launch: client apps, authorizations, tokens, the id token signing key

Revision ID: smart_0001
Revises: 0001
Create Date: 2026-11-25

The apps an admin registers (hashed secrets), the authorization requests with their one-time codes, the access
and refresh tokens (hashed, in families for rotation), and the key that signs id tokens (docs/smart.md).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "smart_0001"
down_revision = "0001"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "smart_clients",
        sa.Column("id", ID, nullable=False),
        sa.Column("client_id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("secret_hash", sa.String(length=255), nullable=True),
        sa.Column("redirect_uris", sa.JSON(), nullable=False),
        sa.Column("allowed_scopes", sa.JSON(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("created_by", ID, nullable=True),
        sa.ForeignKeyConstraint(["created_by"], ["users.id"], name=op.f("fk_smart_clients_created_by_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_smart_clients")),
        sa.UniqueConstraint("client_id", name=op.f("uq_smart_clients_client_id")),
        sa.UniqueConstraint("name", name=op.f("uq_smart_clients_name")),
    )
    op.create_table(
        "smart_authorizations",
        sa.Column("id", ID, nullable=False),
        sa.Column("ticket_hash", sa.String(length=64), nullable=False),
        sa.Column("code_hash", sa.String(length=64), nullable=True),
        sa.Column("client_pk", ID, nullable=False),
        sa.Column("redirect_uri", sa.String(length=500), nullable=False),
        sa.Column("scope", sa.Text(), nullable=False),
        sa.Column("state", sa.Text(), nullable=True),
        sa.Column("nonce", sa.String(length=255), nullable=True),
        sa.Column("code_challenge", sa.String(length=128), nullable=False),
        sa.Column("user_id", ID, nullable=True),
        sa.Column("patient_id", ID, nullable=True),
        sa.Column("granted_scope", sa.Text(), nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("expires_at", WHEN, nullable=False),
        sa.Column("decided_at", WHEN, nullable=True),
        sa.Column("used_at", WHEN, nullable=True),
        sa.ForeignKeyConstraint(
            ["client_pk"], ["smart_clients.id"], name=op.f("fk_smart_authorizations_client_pk_smart_clients")
        ),
        sa.ForeignKeyConstraint(
            ["patient_id"], ["patients.id"], name=op.f("fk_smart_authorizations_patient_id_patients")
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_smart_authorizations_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_smart_authorizations")),
        sa.UniqueConstraint("code_hash", name=op.f("uq_smart_authorizations_code_hash")),
        sa.UniqueConstraint("ticket_hash", name=op.f("uq_smart_authorizations_ticket_hash")),
    )
    op.create_index(op.f("ix_smart_authorizations_client_pk"), "smart_authorizations", ["client_pk"], unique=False)
    op.create_table(
        "smart_tokens",
        sa.Column("id", ID, nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("family", ID, nullable=False),
        sa.Column("client_pk", ID, nullable=False),
        sa.Column("user_id", ID, nullable=False),
        sa.Column("patient_id", ID, nullable=True),
        sa.Column("scope", sa.Text(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("expires_at", WHEN, nullable=False),
        sa.Column("rotated_at", WHEN, nullable=True),
        sa.Column("revoked_at", WHEN, nullable=True),
        sa.ForeignKeyConstraint(
            ["client_pk"], ["smart_clients.id"], name=op.f("fk_smart_tokens_client_pk_smart_clients")
        ),
        sa.ForeignKeyConstraint(
            ["family"], ["smart_authorizations.id"], name=op.f("fk_smart_tokens_family_smart_authorizations")
        ),
        sa.ForeignKeyConstraint(["patient_id"], ["patients.id"], name=op.f("fk_smart_tokens_patient_id_patients")),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_smart_tokens_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_smart_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_smart_tokens_token_hash")),
    )
    op.create_index(op.f("ix_smart_tokens_family"), "smart_tokens", ["family"], unique=False)
    op.create_table(
        "smart_signing_keys",
        sa.Column("id", ID, nullable=False),
        sa.Column("kid", sa.String(length=64), nullable=False),
        sa.Column("private_jwk", sa.Text(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_smart_signing_keys")),
        sa.UniqueConstraint("kid", name=op.f("uq_smart_signing_keys_kid")),
    )


def downgrade() -> None:
    op.drop_table("smart_signing_keys")
    op.drop_index(op.f("ix_smart_tokens_family"), table_name="smart_tokens")
    op.drop_table("smart_tokens")
    op.drop_index(op.f("ix_smart_authorizations_client_pk"), table_name="smart_authorizations")
    op.drop_table("smart_authorizations")
    op.drop_table("smart_clients")
