"""integration API: service accounts, API keys, requests, idempotency

Revision ID: integ_0001
Revises: 0001
Create Date: 2026-11-23

Service accounts and their hashed, scoped, revocable API keys; which account created which appointment request
(with its note); the Idempotency-Keys of each account with the first answer (docs/integration.md).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "integ_0001"
down_revision = "0001"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "service_accounts",
        sa.Column("id", ID, nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("description", sa.String(length=500), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", ID, nullable=True),
        sa.ForeignKeyConstraint(["created_by"], ["users.id"], name=op.f("fk_service_accounts_created_by_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_service_accounts")),
        sa.UniqueConstraint("name", name=op.f("uq_service_accounts_name")),
    )
    op.create_table(
        "api_keys",
        sa.Column("id", ID, nullable=False),
        sa.Column("service_account_id", ID, nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("label", sa.String(length=100), nullable=False),
        sa.Column("scopes", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", ID, nullable=True),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["created_by"], ["users.id"], name=op.f("fk_api_keys_created_by_users")),
        sa.ForeignKeyConstraint(
            ["service_account_id"],
            ["service_accounts.id"],
            name=op.f("fk_api_keys_service_account_id_service_accounts"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_api_keys_key_hash")),
    )
    op.create_index(op.f("ix_api_keys_service_account_id"), "api_keys", ["service_account_id"], unique=False)
    op.create_table(
        "idempotency_records",
        sa.Column("id", ID, nullable=False),
        sa.Column("service_account_id", ID, nullable=False),
        sa.Column("key", sa.String(length=128), nullable=False),
        sa.Column("request_hash", sa.String(length=64), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=False),
        sa.Column("response", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["service_account_id"],
            ["service_accounts.id"],
            name=op.f("fk_idempotency_records_service_account_id_service_accounts"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_idempotency_records")),
        sa.UniqueConstraint("service_account_id", "key", name="uq_idempotency_records_account_key"),
    )
    op.create_index("ix_idempotency_records_expires", "idempotency_records", ["expires_at"], unique=False)
    op.create_table(
        "integration_requests",
        sa.Column("appointment_id", ID, nullable=False),
        sa.Column("service_account_id", ID, nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["appointment_id"],
            ["appointments.id"],
            name=op.f("fk_integration_requests_appointment_id_appointments"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["service_account_id"],
            ["service_accounts.id"],
            name=op.f("fk_integration_requests_service_account_id_service_accounts"),
        ),
        sa.PrimaryKeyConstraint("appointment_id", name=op.f("pk_integration_requests")),
    )
    op.create_index("ix_integration_requests_account", "integration_requests", ["service_account_id", "appointment_id"])


def downgrade() -> None:
    op.drop_index("ix_integration_requests_account", table_name="integration_requests")
    op.drop_table("integration_requests")
    op.drop_index("ix_idempotency_records_expires", table_name="idempotency_records")
    op.drop_table("idempotency_records")
    op.drop_index(op.f("ix_api_keys_service_account_id"), table_name="api_keys")
    op.drop_table("api_keys")
    op.drop_table("service_accounts")
