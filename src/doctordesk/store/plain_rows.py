"""Rows written at once by one plain INSERT, outside the ORM's unit of work.

For the hot write paths only (a new appointment request and the rows every status change appends): there the
unit of work's flush cost several times the statements it sent. A row written here is not in the session: read
it back with a query, never expect the session to know it. Column defaults of the model apply as in a flush.
"""

from __future__ import annotations

import functools
from typing import Any

from sqlalchemy import Insert, Table, insert
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.store.tables import Base


@functools.cache
def _insert(table: Table, returning_id: bool) -> Insert:
    statement = insert(table)
    return statement.returning(table.c.id) if returning_id else statement


def _table(model: type[Base]) -> Table:
    table = model.__table__
    assert isinstance(table, Table)
    return table


async def add(session: AsyncSession, model: type[Base], values: dict[str, Any] | list[dict[str, Any]]) -> None:
    """Insert one row (or several) of ``model`` now, in the session's transaction."""
    if not values:
        return
    conn = await session.connection()
    await conn.execute(_insert(_table(model), False), values)


async def add_returning_id(session: AsyncSession, model: type[Base], values: dict[str, Any]) -> int:
    """Insert one row of ``model`` now and give its new id."""
    conn = await session.connection()
    return int((await conn.execute(_insert(_table(model), True), values)).scalar_one())
