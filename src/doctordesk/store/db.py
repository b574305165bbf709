"""The database handle: one async engine, sessions, and the SQLite settings the embedded mode needs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from doctordesk.config import Settings

DEFAULT_LOCK_TIMEOUT_MS = 10_000


def _sqlite_pragmas(lock_timeout_ms: int) -> Any:
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA busy_timeout={int(lock_timeout_ms)}")
        cursor.close()

    return on_connect


def _sqlite_begin_immediate(conn: Any) -> None:
    # BEGIN IMMEDIATE takes the write lock up front, so two writers serialise instead of failing on upgrade.
    conn.exec_driver_sql("BEGIN IMMEDIATE")


def _sqlite_begin_deferred(conn: Any) -> None:
    conn.exec_driver_sql("BEGIN")


def create_engine(
    url: str, *, echo: bool = False, writer: bool = True, lock_timeout_ms: int = DEFAULT_LOCK_TIMEOUT_MS
) -> AsyncEngine:
    """An engine for ``url``; a statement waiting longer than ``lock_timeout_ms`` for another transaction's lock
    fails (SQLite: busy timeout, PostgreSQL: ``lock_timeout``) instead of holding the request indefinitely."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(url, echo=echo, connect_args={"timeout": lock_timeout_ms / 1000})
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas(lock_timeout_ms))
        # Let SQLAlchemy drive transactions explicitly (pysqlite's own BEGIN handling is off).
        event.listen(engine.sync_engine, "connect", lambda c, _r: setattr(c, "isolation_level", None))
        event.listen(engine.sync_engine, "begin", _sqlite_begin_immediate if writer else _sqlite_begin_deferred)
        return engine
    return create_async_engine(
        url,
        echo=echo,
        pool_size=10,
        max_overflow=20,
        pool_pre_ping=True,
        connect_args={"server_settings": {"lock_timeout": str(int(lock_timeout_ms))}},
    )


class Database:
    """Owns the engine; hands out sessions and transactions."""

    def __init__(self, url: str, *, echo: bool = False, lock_timeout_ms: int = DEFAULT_LOCK_TIMEOUT_MS) -> None:
        self.url = url
        self.engine = create_engine(url, echo=echo, lock_timeout_ms=lock_timeout_ms)
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        # SQLite: readers get their own engine with deferred transactions, so they never wait for the write lock.
        self.read_engine = (
            create_engine(url, echo=echo, writer=False, lock_timeout_ms=lock_timeout_ms)
            if self.is_sqlite
            else self.engine
        )
        self.read_sessions = async_sessionmaker(self.read_engine, expire_on_commit=False)

    @classmethod
    def from_settings(cls, settings: Settings) -> Database:
        return cls(settings.database_url, lock_timeout_ms=settings.db_lock_timeout_ms)

    @property
    def is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """One unit of work: commits when the block ends, rolls back on any exception."""
        async with self.sessions() as session, session.begin():
            yield session

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        """A read-only session (no write lock on SQLite)."""
        async with self.read_sessions() as session:
            yield session

    async def dispose(self) -> None:
        await self.engine.dispose()
        if self.read_engine is not self.engine:
            await self.read_engine.dispose()
