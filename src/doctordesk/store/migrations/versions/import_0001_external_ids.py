"""the clinic's external ids

Revision ID: import_0001
Revises: 0001
Create Date: 2026-11-23

Locations, users, work hours, patients, insurance policies and appointments get ``external_id``: the clinic's own id
for the row, which bulk import upserts by and export writes. Nullable (rows made in the service have none until an
export gives them one); a unique index, so two rows never share one and every NULL is allowed.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "import_0001"
down_revision = "0001"
branch_labels = None
depends_on = None

TABLES = ("locations", "users", "work_hours", "patients", "insurance_policies", "appointments")


def upgrade() -> None:
    for table in TABLES:
        # A plain ADD COLUMN and CREATE INDEX: no table rebuild on SQLite (rebuilding would cascade deletes).
        op.add_column(table, sa.Column("external_id", sa.String(length=64), nullable=True))
        op.create_index(f"ix_{table}_external_id", table, ["external_id"], unique=True)


def downgrade() -> None:
    for table in TABLES:
        op.drop_index(f"ix_{table}_external_id", table_name=table)
        with op.batch_alter_table(table) as batch_op:
            batch_op.drop_column("external_id")
