"""Keyset conditions in SQL: the rows after (or through) a position in a list ordered by a timestamp, then id.

Spelled as a bound on the timestamp plus a tie-break, not as a row-value comparison, so the timestamp bound is an
index range on every index that has the timestamp after its equality columns, on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, and_, or_

from doctordesk.domain.keyset import Position


def beyond(at: Any, row_id: Any, position: Position, *, descending: bool = False) -> ColumnElement[bool]:
    """Rows after ``position`` in the list's order."""
    if descending:
        return and_(at <= position.at, or_(at < position.at, row_id < position.id))
    return and_(at >= position.at, or_(at > position.at, row_id > position.id))


def through(at: Any, row_id: Any, position: Position, *, descending: bool = False) -> ColumnElement[bool]:
    """Rows from the start of the list up to and including ``position``."""
    if descending:
        return and_(at >= position.at, or_(at > position.at, row_id >= position.id))
    return and_(at <= position.at, or_(at < position.at, row_id <= position.id))


def ordered(at: Any, row_id: Any, *, descending: bool = False) -> tuple[Any, Any]:
    """The ORDER BY of such a list."""
    return (at.desc(), row_id.desc()) if descending else (at, row_id)
