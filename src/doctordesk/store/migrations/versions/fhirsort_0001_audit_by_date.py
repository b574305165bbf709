"""FHIR sort: the audit trail by date

Revision ID: fhirsort_0001
Revises: fhir_0006
Create Date: 2026-11-29

The audit trail in the order it is read (when recorded, then id; either direction), for the AuditEvent search's
``_sort=date`` and ``-date`` and the audit screen's newest-first pages (docs/fhir.md#sorting): the trail only grows,
and without it every page read and sorted the whole table.
"""

from __future__ import annotations

from alembic import op

revision = "fhirsort_0001"
down_revision = "fhir_0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_audit_at_id", "audit_log", ["at", "id"])


def downgrade() -> None:
    op.drop_index("ix_audit_at_id", table_name="audit_log")
