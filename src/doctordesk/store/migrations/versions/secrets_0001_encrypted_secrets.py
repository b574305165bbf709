"""secrets read back to be used are stored encrypted

Revision ID: secrets_0001
Revises: mfa_0001, webhooks_0001
Create Date: 2026-11-26

TOTP seeds, the single sign-on client secret and webhook signing secrets are stored encrypted from now on
(``store/encryption.py``, docs/operations.md#secrets-at-rest); an encrypted value is longer than the plain one, so
their columns become unbounded text (the SMART signing key's already was). Values stored before stay readable as
they are; ``doctordesk reencrypt-secrets`` encrypts them.

SQLite does not hold a value to its column's declared length, and changing a declared type there means copying the
table, whose drop would take the rows of tables referring to it along (``ON DELETE CASCADE``: SSO links, webhook
deliveries): on SQLite only the declared types change, in the schema SQLite keeps, which leaves every row alone.
"""

from __future__ import annotations

import re

import sqlalchemy as sa
from alembic import op

revision = "secrets_0001"
# Joins the branches whose tables it changes (second factors and SSO, webhooks).
down_revision = ("mfa_0001", "webhooks_0001")
branch_labels = None
depends_on = None

# (table, column, length before, nullable)
COLUMNS = (
    ("totp_secrets", "secret", 64, False),
    ("sso_providers", "client_secret", 255, False),
    ("webhook_endpoints", "secret", 100, False),
    ("webhook_endpoints", "previous_secret", 100, True),
)


def upgrade() -> None:
    for table, column, length, nullable in COLUMNS:
        _retype(table, column, sa.String(length=length), sa.Text(), nullable=nullable)


def downgrade() -> None:
    # Encrypted values do not fit the old lengths on PostgreSQL: the version before this one cannot read them anyway.
    for table, column, length, nullable in COLUMNS:
        _retype(table, column, sa.Text(), sa.String(length=length), nullable=nullable)


def _retype(
    table: str, column: str, old: sa.types.TypeEngine[str], new: sa.types.TypeEngine[str], *, nullable: bool
) -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        _sqlite_declared_type(bind, table, column, old, new)
    else:
        op.alter_column(table, column, existing_type=old, type_=new, existing_nullable=nullable)


def _sqlite_declared_type(
    bind: sa.Connection, table: str, column: str, old: sa.types.TypeEngine[str], new: sa.types.TypeEngine[str]
) -> None:
    """SQLite's procedure for a table change that leaves the stored rows as they are (sqlite.org/lang_altertable.html,
    "other kinds of table schema changes"): both types have TEXT affinity, so only the declaration changes."""
    before, after = (t.compile(dialect=bind.dialect) for t in (old, new))
    sql = bind.exec_driver_sql("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).scalar_one()
    declared = re.compile(rf'([(,]\s*"?{column}"?\s+){re.escape(before)}(?=[\s,)])')
    changed, found = declared.subn(rf"\g<1>{after}", sql)
    if found != 1:
        raise RuntimeError(f"{table}.{column} is not declared {before} in: {sql}")
    version = bind.exec_driver_sql("PRAGMA schema_version").scalar_one()
    bind.exec_driver_sql("PRAGMA writable_schema = ON")
    try:
        bind.exec_driver_sql("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?", (changed, table))
        bind.exec_driver_sql(f"PRAGMA schema_version = {int(version) + 1}")
    finally:
        bind.exec_driver_sql("PRAGMA writable_schema = OFF")
