"""The SQLite writer: its statements run on the event loop's thread, yet neither another process's write lock nor
checkpoints ever stop the loop; a transaction that cannot get the lock in time writes nothing (ServiceBusy)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, event, func, insert, select, text

from doctordesk.domain.errors import ServiceBusy
from doctordesk.store.db import Database, create_engine

notes = Table("notes", MetaData(), Column("id", Integer, primary_key=True), Column("body", String))


@pytest.fixture
async def db(tmp_path: Path):
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'writer.db'}", lock_timeout_ms=2_000)
    async with database.engine.begin() as conn:
        await conn.run_sync(notes.metadata.create_all)
    yield database
    await database.dispose()


async def _count(db: Database) -> int:
    async with db.read() as s:
        return int(await s.scalar(select(func.count()).select_from(notes)) or 0)


async def _loop_ticks(stop: asyncio.Event) -> list[float]:
    """The longest gaps between 5 ms ticks of the loop while the test runs."""
    loop = asyncio.get_running_loop()
    gaps: list[float] = []
    last = loop.time()
    while not stop.is_set():
        await asyncio.sleep(0.005)
        now = loop.time()
        gaps.append(now - last)
        last = now
    return gaps


async def test_a_write_waits_for_another_process_lock_without_stopping_the_loop(db: Database) -> None:
    other = create_engine(db.url)  # another process's connection, holding the write lock for 300 ms
    stop = asyncio.Event()
    ticks = asyncio.create_task(_loop_ticks(stop))
    try:
        async with other.connect() as conn:
            await conn.begin()  # BEGIN IMMEDIATE: the write lock
            await conn.execute(insert(notes).values(body="theirs"))
            write_started = asyncio.get_running_loop().time()

            async def write() -> float:
                async with db.transaction() as s:
                    await s.execute(insert(notes).values(body="ours"))
                return asyncio.get_running_loop().time() - write_started

            ours = asyncio.create_task(write())
            await asyncio.sleep(0.3)
            assert not ours.done()
            await conn.commit()
            waited = await ours
    finally:
        await other.dispose()
        stop.set()
    gaps = await ticks
    assert 0.3 <= waited < 1.0
    assert max(gaps) < 0.1, f"the loop stood still for {max(gaps) * 1000:.0f} ms"
    assert await _count(db) == 2


async def test_a_write_that_cannot_get_the_lock_in_time_is_service_busy_and_writes_nothing(tmp_path: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'busy.db'}", lock_timeout_ms=200)
    async with db.engine.begin() as conn:
        await conn.run_sync(notes.metadata.create_all)
    other = create_engine(db.url)
    try:
        async with other.connect() as conn:
            await conn.begin()  # BEGIN IMMEDIATE: the write lock
            with pytest.raises(ServiceBusy):
                async with db.transaction() as s:
                    await s.execute(insert(notes).values(body="ours"))
            await conn.rollback()
        assert await _count(db) == 0
        async with db.transaction() as s:  # and the writer works once the lock is free
            await s.execute(insert(notes).values(body="ours"))
        assert await _count(db) == 1
    finally:
        await other.dispose()
        await db.dispose()


async def test_an_error_inside_the_transaction_rolls_everything_back(db: Database) -> None:
    with pytest.raises(RuntimeError):
        async with db.transaction() as s:
            await s.execute(insert(notes).values(body="half"))
            raise RuntimeError("refused")
    assert await _count(db) == 0
    async with db.transaction() as s:
        await s.execute(insert(notes).values(body="whole"))
    assert await _count(db) == 1


def _file_size(db: Database) -> int:
    return os.path.getsize(db.url.removeprefix("sqlite+aiosqlite:///"))


async def _write_pages(db: Database, commits: int) -> None:
    for _ in range(commits):
        async with db.transaction() as s:
            await s.execute(insert(notes), [{"body": "x" * 2000} for _ in range(8)])


async def test_the_writer_never_checkpoints_itself_and_checkpoints_run_every_so_many_commits(db: Database) -> None:
    db.CHECKPOINT_EVERY = 1_000_000
    before = _file_size(db)
    await _write_pages(db, 20)
    assert _file_size(db) == before  # everything is still in the write-ahead log: the writer did not checkpoint

    db.CHECKPOINT_EVERY = 10
    await _write_pages(db, 10)
    assert db._checkpoint is not None
    await db._checkpoint
    assert _file_size(db) > before + 20 * 8 * 2000  # the log's pages reached the database file
    async with db.read() as s:
        assert (await s.execute(text("PRAGMA wal_autocheckpoint"))).scalar() == 1000  # readers keep the default


def _refusals(db: Database) -> list[BaseException]:
    """The statements SQLite refused on ``db``'s writer connection (a busy write lock among them)."""
    refused: list[BaseException] = []
    event.listen(db.engine.sync_engine, "handle_error", lambda context: refused.append(context.original_exception))
    return refused


async def test_writers_of_two_processes_take_turns_without_asking_sqlite_in_vain(db: Database) -> None:
    other = Database(db.url, lock_timeout_ms=2_000)  # another process's handle on the same file: its own lock file
    refused = _refusals(db)
    stop = asyncio.Event()
    ticks = asyncio.create_task(_loop_ticks(stop))
    try:
        async with other.transaction() as theirs:
            await theirs.execute(insert(notes).values(body="theirs"))

            async def write() -> None:
                async with db.transaction() as s:
                    await s.execute(insert(notes).values(body="ours"))

            ours = asyncio.create_task(write())
            await asyncio.sleep(0.3)
            assert not ours.done()
        await ours
    finally:
        stop.set()
        await other.dispose()
    assert refused == []  # it waited for its turn, not for SQLite's lock
    assert max(await ticks) < 0.1  # in a thread: the loop went on
    assert await _count(db) == 2


async def test_a_turn_given_up_on_is_let_go_once_it_comes(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'turns.db'}"
    first, second = Database(url, lock_timeout_ms=2_000), Database(url, lock_timeout_ms=200)
    async with first.engine.begin() as conn:
        await conn.run_sync(notes.metadata.create_all)
    try:
        async with first.transaction() as s:
            await s.execute(insert(notes).values(body="first"))
            with pytest.raises(ServiceBusy):
                async with second.transaction() as late:
                    await late.execute(insert(notes).values(body="never"))
        for db in (second, first, second):  # neither waits on a turn left behind
            async with db.transaction() as s:
                await s.execute(insert(notes).values(body="again"))
        assert await _count(first) == 4
    finally:
        await first.dispose()
        await second.dispose()
