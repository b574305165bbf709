"""appointment list search by patient name

Revision ID: listsearch_0001
Revises: api_0002
Create Date: 2026-11-24

The folded words of every patient's name (``patient_name_words``, compared in code point order: collation "C"
on PostgreSQL), so the list's name search is an index range per word; and the doctor's appointments per patient
in the list's order, so a searched section is one short range per matching patient.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from doctordesk.store.name_words import sync_names

revision = "listsearch_0001"
down_revision = "api_0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "patient_name_words",
        sa.Column("word", sa.String(64).with_variant(sa.String(64, collation="C"), "postgresql"), nullable=False),
        sa.Column("patient_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.ForeignKeyConstraint(["patient_id"], ["patients.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("word", "patient_id"),
    )
    with op.batch_alter_table("appointments", schema=None) as batch_op:
        batch_op.create_index(
            "ix_appointments_doctor_patient_start", ["doctor_id", "patient_id", "start_at", "id"], unique=False
        )
    connection = op.get_bind()
    ids = connection.execute(sa.text("SELECT id FROM patients")).scalars().all()
    sync_names(connection, ids)


def downgrade() -> None:
    with op.batch_alter_table("appointments", schema=None) as batch_op:
        batch_op.drop_index("ix_appointments_doctor_patient_start")
    op.drop_table("patient_name_words")
