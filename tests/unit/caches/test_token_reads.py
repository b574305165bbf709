"""Batched reads (caches/token_reads.py): reads asked for together share one fetch, each reader gets its own
key's value, a failed fetch reaches every reader of its batch, and no more fetches run at once than allowed."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from doctordesk.caches.token_reads import BatchedReads


class Recorder:
    def __init__(self, *, delay: float = 0.0, fail: bool = False) -> None:
        self.batches: list[list[str]] = []
        self.delay = delay
        self.fail = fail
        self.running = 0
        self.most_running = 0

    async def __call__(self, keys: Sequence[str]) -> dict[str, str]:
        self.batches.append(list(keys))
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        try:
            await asyncio.sleep(self.delay)
            if self.fail:
                raise ConnectionError("database away")
            return {k: f"value of {k}" for k in keys if not k.startswith("unknown")}
        finally:
            self.running -= 1


async def test_reads_asked_for_together_share_one_fetch_and_each_gets_its_own_value() -> None:
    reads: BatchedReads[str] = BatchedReads()
    fetch = Recorder()
    got = await asyncio.gather(*(reads.get(k, fetch) for k in ["a", "b", "unknown-c", "a"]))
    assert got == ["value of a", "value of b", None, "value of a"]
    assert fetch.batches == [["a", "b", "unknown-c"]]
    assert reads.queries == 1


async def test_a_single_read_is_fetched_alone_at_once() -> None:
    reads: BatchedReads[str] = BatchedReads()
    fetch = Recorder()
    assert await reads.get("a", fetch) == "value of a"
    assert await reads.get("b", fetch) == "value of b"
    assert fetch.batches == [["a"], ["b"]]


async def test_a_failed_fetch_reaches_every_reader_of_its_batch_and_the_next_read_fetches_again() -> None:
    reads: BatchedReads[str] = BatchedReads()
    failing = Recorder(fail=True)
    results = await asyncio.gather(*(reads.get(k, failing) for k in "abc"), return_exceptions=True)
    assert all(isinstance(r, ConnectionError) for r in results)
    assert await reads.get("a", Recorder()) == "value of a"


async def test_no_more_fetches_run_at_once_than_allowed_and_reads_waiting_meanwhile_go_together() -> None:
    reads: BatchedReads[str] = BatchedReads(max_batch=10, in_flight=2)
    fetch = Recorder(delay=0.02)
    first = [asyncio.ensure_future(reads.get(f"k{i}", fetch)) for i in range(25)]
    await asyncio.sleep(0.005)  # two fetches of 10 are running; the other 5 and the next 40 wait
    later = [asyncio.ensure_future(reads.get(f"m{i}", fetch)) for i in range(40)]
    got = await asyncio.gather(*first, *later)
    assert got == [f"value of k{i}" for i in range(25)] + [f"value of m{i}" for i in range(40)]
    assert fetch.most_running == 2
    assert all(len(batch) <= 10 for batch in fetch.batches)
    assert len(fetch.batches) == 7  # 65 keys in batches of at most 10


async def test_a_reader_that_goes_away_does_not_cancel_the_fetch_for_the_others() -> None:
    reads: BatchedReads[str] = BatchedReads()
    fetch = Recorder(delay=0.02)
    leaving = asyncio.ensure_future(reads.get("a", fetch))
    staying = asyncio.ensure_future(reads.get("a", fetch))
    await asyncio.sleep(0.005)
    leaving.cancel()
    assert await staying == "value of a"
    with pytest.raises(asyncio.CancelledError):
        await leaving


async def test_a_read_of_a_key_whose_fetch_is_under_way_shares_it() -> None:
    reads: BatchedReads[str] = BatchedReads()
    fetch = Recorder(delay=0.05)
    first = asyncio.ensure_future(reads.get("a", fetch))
    await asyncio.sleep(0.01)  # the fetch of "a" has started
    assert await asyncio.gather(first, reads.get("a", fetch)) == ["value of a", "value of a"]
    assert fetch.batches == [["a"]]
    assert await reads.get("a", fetch) == "value of a"  # once answered, a new read fetches again
    assert fetch.batches == [["a"], ["a"]]
