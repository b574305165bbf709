"""The background loops (``realtime/lease.DrainLoop``): a wake-up that arrives during a round that found nothing
still gives a round at once, instead of waiting for the next poll."""

from __future__ import annotations

import asyncio

from doctordesk.realtime.lease import DrainLoop


class Rounds(DrainLoop):
    """Counts its rounds; the first one is woken while it runs (a row committed after its claim read)."""

    def __init__(self) -> None:
        super().__init__(poll_seconds=3600)  # a second round can only come from a wake-up
        self.rounds = 0
        self.second = asyncio.Event()

    async def round(self) -> bool:
        self.rounds += 1
        if self.rounds == 1:
            self.wake()
        else:
            self.second.set()
        return False


async def test_a_wake_up_during_a_round_that_found_nothing_gives_another_round_at_once():
    loop = Rounds()
    loop.start()
    try:
        await asyncio.wait_for(loop.second.wait(), timeout=30)
    finally:
        await loop.stop(grace_seconds=5)
    assert loop.rounds >= 2
