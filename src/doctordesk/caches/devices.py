"""What this process last wrote per push device, so unchanged calls skip the database."""

from __future__ import annotations

import time
from dataclasses import dataclass

# "Last active" is refreshed at most this often per device when nothing else changes.
ACTIVE_REFRESH_SECONDS = 300.0


@dataclass(frozen=True, slots=True)
class DeviceHeaders:
    device_key: str
    platform: str
    token: str | None


class DeviceCache:
    """What this process last wrote per device: (user, platform, token, monotonic time)."""

    def __init__(self, size: int = 100_000) -> None:
        self.size = size
        self.entries: dict[str, tuple[int, str, str | None, float]] = {}

    def fresh(self, headers: DeviceHeaders, user_id: int) -> bool:
        entry = self.entries.get(headers.device_key)
        if entry is None:
            return False
        user, platform, token, at = entry
        same = (user, platform, token) == (user_id, headers.platform, headers.token)
        return same and time.monotonic() - at < ACTIVE_REFRESH_SECONDS

    def remember(self, headers: DeviceHeaders, user_id: int) -> None:
        if len(self.entries) >= self.size:
            self.entries.clear()
        self.entries[headers.device_key] = (user_id, headers.platform, headers.token, time.monotonic())
