"""FHIR subscriptions

Revision ID: fhir_0001
Revises: webhooks_0001, integ_0001
Create Date: 2026-11-25

FHIR R4 Subscriptions, delivered through the webhook outbox: the subscriptions (never deleted), the kind of a
webhook endpoint (an admin's webhook or a subscription's channel) and what a delivery is about (the path a FHIR
payload is PUT to).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "fhir_0001"
down_revision = ("webhooks_0001", "integ_0001")
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    with op.batch_alter_table("webhook_endpoints", schema=None) as batch_op:
        batch_op.add_column(sa.Column("kind", sa.String(length=20), server_default="webhook", nullable=False))
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.add_column(sa.Column("subject", sa.String(length=64), nullable=True))
    op.create_table(
        "fhir_subscriptions",
        sa.Column("id", ID, nullable=False),
        sa.Column("endpoint_id", ID, nullable=False),
        sa.Column("user_id", ID, nullable=True),
        sa.Column("service_account_id", ID, nullable=True),
        sa.Column("api_key_id", ID, nullable=True),
        sa.Column("criteria", sa.String(length=1000), nullable=False),
        sa.Column("match", sa.JSON(), nullable=False),
        sa.Column("reason", sa.String(length=500), nullable=False),
        sa.Column("payload", sa.String(length=40), nullable=True),
        sa.Column("headers", sa.JSON(), nullable=False),
        sa.Column("end_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["endpoint_id"], ["webhook_endpoints.id"], name=op.f("fk_fhir_subscriptions_endpoint_id_webhook_endpoints")
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_fhir_subscriptions_user_id_users")),
        sa.ForeignKeyConstraint(
            ["service_account_id"],
            ["service_accounts.id"],
            name=op.f("fk_fhir_subscriptions_service_account_id_service_accounts"),
        ),
        sa.ForeignKeyConstraint(
            ["api_key_id"], ["api_keys.id"], name=op.f("fk_fhir_subscriptions_api_key_id_api_keys")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fhir_subscriptions")),
        sa.UniqueConstraint("endpoint_id", name=op.f("uq_fhir_subscriptions_endpoint_id")),
    )
    op.create_index("ix_fhir_subscriptions_user", "fhir_subscriptions", ["user_id", "id"])
    op.create_index("ix_fhir_subscriptions_account", "fhir_subscriptions", ["service_account_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_fhir_subscriptions_account", table_name="fhir_subscriptions")
    op.drop_index("ix_fhir_subscriptions_user", table_name="fhir_subscriptions")
    op.drop_table("fhir_subscriptions")
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.drop_column("subject")
    with op.batch_alter_table("webhook_endpoints", schema=None) as batch_op:
        batch_op.drop_column("kind")
