"""second factors and single sign-on

Revision ID: mfa_0001
Revises: 0001
Create Date: 2026-11-25

TOTP seeds, hashed recovery codes, passkeys, the per-role second-factor policy, single-use sign-in tickets, and
the clinic's OpenID Connect providers with the subjects linked to users.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "mfa_0001"
down_revision = "0001"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
AT = sa.DateTime(timezone=True)


def _user_fk(table: str, column: str = "user_id", ondelete: str = "CASCADE") -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint([column], ["users.id"], name=op.f(f"fk_{table}_{column}_users"), ondelete=ondelete)


def upgrade() -> None:
    op.create_table(
        "totp_secrets",
        sa.Column("user_id", ID, nullable=False),
        sa.Column("secret", sa.String(length=64), nullable=False),
        sa.Column("created_at", AT, nullable=False),
        sa.Column("confirmed_at", AT, nullable=True),
        sa.Column("last_step", sa.BigInteger(), nullable=True),
        _user_fk("totp_secrets"),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_totp_secrets")),
    )
    op.create_table(
        "recovery_codes",
        sa.Column("id", ID, nullable=False),
        sa.Column("user_id", ID, nullable=False),
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", AT, nullable=False),
        sa.Column("used_at", AT, nullable=True),
        _user_fk("recovery_codes"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_recovery_codes")),
    )
    op.create_index(op.f("ix_recovery_codes_user_id"), "recovery_codes", ["user_id"])
    op.create_table(
        "passkeys",
        sa.Column("id", ID, nullable=False),
        sa.Column("user_id", ID, nullable=False),
        sa.Column("credential_id", sa.String(length=255), nullable=False),
        sa.Column("public_key", sa.LargeBinary(), nullable=False),
        sa.Column("sign_count", sa.BigInteger(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("created_at", AT, nullable=False),
        sa.Column("last_used_at", AT, nullable=True),
        _user_fk("passkeys"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_passkeys")),
        sa.UniqueConstraint("credential_id", name=op.f("uq_passkeys_credential_id")),
    )
    op.create_index(op.f("ix_passkeys_user_id"), "passkeys", ["user_id"])
    op.create_table(
        "mfa_policy",
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("required", sa.Boolean(), nullable=False),
        sa.Column("updated_at", AT, nullable=False),
        sa.Column("updated_by", ID, nullable=True),
        _user_fk("mfa_policy", "updated_by", "SET NULL"),
        sa.PrimaryKeyConstraint("role", name=op.f("pk_mfa_policy")),
    )
    op.create_table(
        "sign_in_tickets",
        sa.Column("id", ID, nullable=False),
        sa.Column("ticket_hash", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("user_id", ID, nullable=True),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("created_at", AT, nullable=False),
        sa.Column("expires_at", AT, nullable=False),
        sa.Column("used_at", AT, nullable=True),
        _user_fk("sign_in_tickets"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sign_in_tickets")),
        sa.UniqueConstraint("ticket_hash", name=op.f("uq_sign_in_tickets_ticket_hash")),
    )
    op.create_table(
        "sso_providers",
        sa.Column("id", ID, nullable=False),
        sa.Column("slug", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("issuer", sa.String(length=255), nullable=False),
        sa.Column("client_id", sa.String(length=255), nullable=False),
        sa.Column("client_secret", sa.String(length=255), nullable=False),
        sa.Column("match_claim", sa.String(length=64), nullable=False),
        sa.Column("match_field", sa.String(length=16), nullable=False),
        sa.Column("role_claim", sa.String(length=64), nullable=True),
        sa.Column("role_map", sa.JSON(), nullable=False),
        sa.Column("default_role", sa.String(length=16), nullable=True),
        sa.Column("create_users", sa.Boolean(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", AT, nullable=False),
        sa.Column("updated_at", AT, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sso_providers")),
        sa.UniqueConstraint("slug", name=op.f("uq_sso_providers_slug")),
    )
    op.create_table(
        "sso_links",
        sa.Column("id", ID, nullable=False),
        sa.Column("provider_id", ID, nullable=False),
        sa.Column("subject", sa.String(length=255), nullable=False),
        sa.Column("user_id", ID, nullable=False),
        sa.Column("created_at", AT, nullable=False),
        sa.ForeignKeyConstraint(
            ["provider_id"],
            ["sso_providers.id"],
            name=op.f("fk_sso_links_provider_id_sso_providers"),
            ondelete="CASCADE",
        ),
        _user_fk("sso_links"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sso_links")),
        sa.UniqueConstraint("provider_id", "subject", name="uq_sso_links_provider_subject"),
    )
    op.create_index(op.f("ix_sso_links_user_id"), "sso_links", ["user_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_sso_links_user_id"), table_name="sso_links")
    op.drop_table("sso_links")
    op.drop_table("sso_providers")
    op.drop_table("sign_in_tickets")
    op.drop_table("mfa_policy")
    op.drop_index(op.f("ix_passkeys_user_id"), table_name="passkeys")
    op.drop_table("passkeys")
    op.drop_index(op.f("ix_recovery_codes_user_id"), table_name="recovery_codes")
    op.drop_table("recovery_codes")
    op.drop_table("totp_secrets")
