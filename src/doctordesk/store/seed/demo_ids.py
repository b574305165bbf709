"""What the demo's core created, by name: the ids the seed's parts (offers, chats) build on."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass
class Demo:
    """Ids of what the core seed created, for the seed's parts."""

    users: dict[str, int]
    locations: dict[str, int]
    patients: dict[str, int]
    appointments: list[int]
    now: datetime
