"""What the core demo seed hands the feature seeders: the ids it created (``Demo``) and the list feature modules
append their seeders to when imported (``EXTRA_SEEDERS``).

A module of its own so that the core seed (demo.py, which loads the feature modules by name) and the feature
modules (which append to the list) do not import each other in a circle.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession


@dataclass
class Demo:
    """Ids of what the core seed created, for the feature seeders."""

    users: dict[str, int]
    locations: dict[str, int]
    patients: dict[str, int]
    appointments: list[int]
    now: datetime


Seeder = Callable[[AsyncSession, Demo], Awaitable[None]]
EXTRA_SEEDERS: list[Seeder] = []
