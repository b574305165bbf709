"""Timers of the poll cycle, behind a small interface so the sync rules can be tested on a virtual clock."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Scheduler(Protocol):
    """Calls ``callback`` once after ``delay`` seconds unless the handle is cancelled first."""

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle: ...


class LoopScheduler:
    """The running asyncio loop's timers (the default)."""

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        return asyncio.get_running_loop().call_later(delay, callback)
