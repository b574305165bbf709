"""bulk export jobs

Revision ID: bulk_0001
Revises: 0001
Create Date: 2026-11-28

``bulk_jobs``: one row per FHIR ``$export`` (docs/fhir.md#bulk-export), claimed by the exporter with a lease
like the outboxes; due rows found by (status, next_attempt_at), a requester's running jobs by (requester,
status), expired ones by expires_at.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "bulk_0001"
down_revision = "0001"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "bulk_jobs",
        sa.Column("id", ID, nullable=False),
        sa.Column("public_id", sa.String(length=40), nullable=False),
        sa.Column("requester", sa.String(length=64), nullable=False),
        sa.Column("level", sa.String(length=10), nullable=False),
        sa.Column("group_id", sa.Integer(), nullable=True),
        sa.Column("types", sa.String(length=200), nullable=False),
        sa.Column("since", WHEN, nullable=True),
        sa.Column("request", sa.String(length=2000), nullable=False),
        sa.Column("transaction_time", WHEN, nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", WHEN, nullable=False),
        sa.Column("progress", sa.String(length=100), nullable=True),
        sa.Column("output", sa.JSON(), nullable=False),
        sa.Column("error", sa.String(length=500), nullable=True),
        sa.Column("finished_at", WHEN, nullable=True),
        sa.Column("expires_at", WHEN, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bulk_jobs")),
        sa.UniqueConstraint("public_id", name=op.f("uq_bulk_jobs_public_id")),
    )
    op.create_index("ix_bulk_jobs_due", "bulk_jobs", ["status", "next_attempt_at"])
    op.create_index("ix_bulk_jobs_requester", "bulk_jobs", ["requester", "status"])
    op.create_index("ix_bulk_jobs_expires", "bulk_jobs", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_bulk_jobs_expires", table_name="bulk_jobs")
    op.drop_index("ix_bulk_jobs_requester", table_name="bulk_jobs")
    op.drop_index("ix_bulk_jobs_due", table_name="bulk_jobs")
    op.drop_table("bulk_jobs")
