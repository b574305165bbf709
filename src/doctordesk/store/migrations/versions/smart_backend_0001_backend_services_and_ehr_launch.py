"""SMART Backend Services and EHR launch: a backend service's keys, its tokens and used assertion ids; launch values

Revision ID: smart_backend_0001
Revises: smart_0001
Create Date: 2026-11-28

A registered app gains its public keys (a JWKS URL or an inline JWKS) and an EHR launch URL; backend services'
access tokens (hashed), the client assertions' ``jti`` values already used (kept until their ``exp``) and the EHR
launch values (hashed, single use) get tables of their own (docs/smart.md).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "smart_backend_0001"
down_revision = "smart_0001"
branch_labels = None
depends_on = "integ_0001"  # a launch value names the service account that asked for it

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.add_column("smart_clients", sa.Column("jwks_uri", sa.String(length=500), nullable=True))
    op.add_column("smart_clients", sa.Column("jwks", sa.JSON(), nullable=True))
    op.add_column("smart_clients", sa.Column("launch_url", sa.String(length=500), nullable=True))
    op.create_table(
        "smart_system_tokens",
        sa.Column("id", ID, nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("client_pk", ID, nullable=False),
        sa.Column("scope", sa.Text(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("expires_at", WHEN, nullable=False),
        sa.Column("revoked_at", WHEN, nullable=True),
        sa.ForeignKeyConstraint(
            ["client_pk"], ["smart_clients.id"], name=op.f("fk_smart_system_tokens_client_pk_smart_clients")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_smart_system_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_smart_system_tokens_token_hash")),
    )
    op.create_index(op.f("ix_smart_system_tokens_client_pk"), "smart_system_tokens", ["client_pk"], unique=False)
    op.create_table(
        "smart_assertion_jtis",
        sa.Column("id", ID, nullable=False),
        sa.Column("client_pk", ID, nullable=False),
        sa.Column("jti", sa.String(length=255), nullable=False),
        sa.Column("expires_at", WHEN, nullable=False),
        sa.ForeignKeyConstraint(
            ["client_pk"], ["smart_clients.id"], name=op.f("fk_smart_assertion_jtis_client_pk_smart_clients")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_smart_assertion_jtis")),
        sa.UniqueConstraint("client_pk", "jti", name="uq_smart_assertion_jtis_client_jti"),
    )
    op.create_index("ix_smart_assertion_jtis_expires", "smart_assertion_jtis", ["expires_at"], unique=False)
    op.create_table(
        "smart_launches",
        sa.Column("id", ID, nullable=False),
        sa.Column("launch_hash", sa.String(length=64), nullable=False),
        sa.Column("client_pk", ID, nullable=False),
        sa.Column("patient_id", ID, nullable=False),
        sa.Column("issued_by_user", ID, nullable=True),
        sa.Column("issued_by_account", ID, nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("expires_at", WHEN, nullable=False),
        sa.Column("used_at", WHEN, nullable=True),
        sa.ForeignKeyConstraint(
            ["client_pk"], ["smart_clients.id"], name=op.f("fk_smart_launches_client_pk_smart_clients")
        ),
        sa.ForeignKeyConstraint(["patient_id"], ["patients.id"], name=op.f("fk_smart_launches_patient_id_patients")),
        sa.ForeignKeyConstraint(["issued_by_user"], ["users.id"], name=op.f("fk_smart_launches_issued_by_user_users")),
        sa.ForeignKeyConstraint(
            ["issued_by_account"],
            ["service_accounts.id"],
            name=op.f("fk_smart_launches_issued_by_account_service_accounts"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_smart_launches")),
        sa.UniqueConstraint("launch_hash", name=op.f("uq_smart_launches_launch_hash")),
    )
    op.create_index(op.f("ix_smart_launches_client_pk"), "smart_launches", ["client_pk"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_smart_launches_client_pk"), table_name="smart_launches")
    op.drop_table("smart_launches")
    op.drop_index("ix_smart_assertion_jtis_expires", table_name="smart_assertion_jtis")
    op.drop_table("smart_assertion_jtis")
    op.drop_index(op.f("ix_smart_system_tokens_client_pk"), table_name="smart_system_tokens")
    op.drop_table("smart_system_tokens")
    with op.batch_alter_table("smart_clients") as batch:
        batch.drop_column("launch_url")
        batch.drop_column("jwks")
        batch.drop_column("jwks_uri")
