"""Alembic environment: runs on a connection handed in by ``store.migrate`` (sync or async engines alike)."""

from __future__ import annotations

from alembic import context

from doctordesk.store.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through `doctordesk migrate` (doctordesk.store.migrate)")

context.configure(connection=connection, target_metadata=metadata, render_as_batch=True, compare_type=True)
with context.begin_transaction():
    context.run_migrations()
