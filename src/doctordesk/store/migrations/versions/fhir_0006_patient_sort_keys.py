"""FHIR: patients' sort keys

Revision ID: fhir_0006
Revises: fhir_0005
Create Date: 2026-11-26

The parts of a patient's name folded for FHIR's ``_sort`` by ``family``, ``given`` and ``name``
(``domain/fhir/names.sort_keys``; collation "C" on PostgreSQL, so the database orders them in code point order as
Python does), each with an index in that order, written for every stored patient: a sorted Patient search pages in
the database instead of reading every match (docs/fhir.md#sorting).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from doctordesk.domain.fhir.names import sort_keys

revision = "fhir_0006"
down_revision = "fhir_0005"
branch_labels = None
depends_on = None

KEYS = ("family_key", "given_key", "name_key")
_CHUNK = 500


def upgrade() -> None:
    text = sa.TEXT().with_variant(sa.TEXT(collation="C"), "postgresql")  # TEXT: not a text to translate
    with op.batch_alter_table("patients", schema=None) as batch_op:
        for key in KEYS:
            batch_op.add_column(sa.Column(key, text, nullable=False, server_default=""))
    for key in KEYS:
        op.create_index(f"ix_patients_{key}", "patients", [key, "id"])
    patients = sa.table("patients", sa.column("id"), sa.column("name"), *(sa.column(k) for k in KEYS))
    statement = (
        patients.update()
        .where(patients.c.id == sa.bindparam("row_id"))
        .values({k: sa.bindparam(f"new_{k}") for k in KEYS})
    )
    connection = op.get_bind()
    after = None
    while True:
        query = sa.select(patients.c.id, patients.c.name).order_by(patients.c.id).limit(_CHUNK)
        rows = connection.execute(query if after is None else query.where(patients.c.id > after)).all()
        if not rows:
            break
        values = [
            {"row_id": r.id, **{f"new_{k}": v for k, v in zip(KEYS, sort_keys(r.name), strict=True)}} for r in rows
        ]
        connection.execute(statement, values)
        after = rows[-1].id


def downgrade() -> None:
    for key in KEYS:
        op.drop_index(f"ix_patients_{key}", table_name="patients")
    with op.batch_alter_table("patients", schema=None) as batch_op:
        for key in reversed(KEYS):
            batch_op.drop_column(key)
