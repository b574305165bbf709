"""The whole schema: importing this module registers every feature's tables on ``Base.metadata``."""

from __future__ import annotations

from doctordesk.store import realtime_tables, tables
from doctordesk.store.tables import Base

metadata = Base.metadata

__all__ = ["Base", "metadata", "realtime_tables", "tables"]
