"""SQL the dashboard's metrics share."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, case


def span_index(column: Any, edges: Sequence[datetime]) -> ColumnElement[Any]:
    """The index ``i`` of the span ``[edges[i], edges[i+1])`` holding ``column`` (rows must already be limited to
    ``[edges[0], edges[-1])``): rows are counted per local day or week in the database, with range comparisons
    only, the same on SQLite and PostgreSQL (a zone's midnights are computed here, not by the database)."""
    return case(*((column < edge, i) for i, edge in enumerate(edges[1:])), else_=len(edges) - 1)
