"""Schema migrations (Alembic), run from code: ``doctordesk migrate`` and the test fixtures use this.

Feature migrations branch from the core revision; ``upgrade`` always goes to every head.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy.ext.asyncio import AsyncEngine

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(connection: Any = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


async def upgrade(engine: AsyncEngine, target: str = "heads") -> None:
    """Bring the database to ``target`` (default: every head)."""
    async with engine.begin() as conn:
        await conn.run_sync(lambda sync_conn: command.upgrade(alembic_config(sync_conn), target))


async def downgrade(engine: AsyncEngine, target: str = "base") -> None:
    async with engine.begin() as conn:
        await conn.run_sync(lambda sync_conn: command.downgrade(alembic_config(sync_conn), target))


async def current_heads(engine: AsyncEngine) -> set[str]:
    from alembic.runtime.migration import MigrationContext

    async with engine.connect() as conn:
        return set(await conn.run_sync(lambda c: MigrationContext.configure(c).get_current_heads()))
