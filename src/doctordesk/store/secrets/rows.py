"""The stored secrets as a whole: every ``EncryptedText`` column of the schema, checked against the keys when a
process starts (``check_keys``) and sealed again with the current key (``reencrypt``, the command
``doctordesk reencrypt-secrets``; docs/operations.md#secrets-at-rest)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Column, Row, Select, Table, Text, select, type_coerce, update
from sqlalchemy.exc import DBAPIError

from doctordesk.store.db import Database
from doctordesk.store.schema import metadata
from doctordesk.store.secrets.encryption import PREFIX, EncryptedText, SecretBox, SecretKeyError, is_sealed

log = logging.getLogger(__name__)


def encrypted_columns() -> list[tuple[Table, Column[str]]]:
    """Every column typed ``EncryptedText``, in a stable order (a new one is found without being listed)."""
    return [
        (table, column)
        for table in metadata.sorted_tables
        for column in table.columns
        if isinstance(column.type, EncryptedText)
    ]


def _name(table: Table, column: Column[str]) -> str:
    return f"{table.name}.{column.name}"


def _box(db: Database) -> SecretBox:
    if db.secret_box is None:
        raise SecretKeyError("this database handle was opened without the secrets key")
    return db.secret_box


def _first_sealed(table: Table, column: Column[str]) -> Select[Any, str]:
    raw = type_coerce(column, Text)
    (key,) = table.primary_key.columns
    return select(key, raw).where(raw.startswith(PREFIX, autoescape=True)).order_by(key).limit(1)


async def _first_sealed_values(db: Database) -> list[tuple[Table, Column[str], Row[Any, str] | None]]:
    """The first encrypted value of every column (None: none yet), read in one session; a column whose table is
    missing (a database not migrated yet) is left out, logged."""
    columns = encrypted_columns()
    try:
        async with db.read() as session:
            return [(t, c, (await session.execute(_first_sealed(t, c))).first()) for t, c in columns]
    except DBAPIError:
        pass  # a table is missing: each column on its own (a failed statement ends PostgreSQL's transaction)
    found: list[tuple[Table, Column[str], Row[Any, str] | None]] = []
    for table, column in columns:
        try:
            async with db.read() as session:
                found.append((table, column, (await session.execute(_first_sealed(table, column))).first()))
        except DBAPIError as exc:
            log.debug("secrets of %s not checked: %s", _name(table, column), exc)
    return found


async def check_keys(db: Database) -> None:
    """SecretKeyError when the first encrypted value of any column does not open with the keys: the usual mistake
    (another installation's key, a lost key file, a new key listed without the old one) shows when a process starts,
    not at a user's sign-in. A database without the tables yet (not migrated) is left to the migration."""
    box = _box(db)
    for table, column, row in await _first_sealed_values(db):
        if row is None:
            continue
        try:
            box.open(row[1])
        except SecretKeyError:
            raise SecretKeyError(
                f"{_name(table, column)} of row {row[0]} was encrypted with a key that {box.source} does not list: "
                "give the service the key the database was written with (docs/operations.md#secrets-at-rest)"
            ) from None


@dataclass
class ColumnReport:
    """What ``reencrypt`` did to one column's values."""

    column: str
    from_plain: int = 0  # stored before encryption, now encrypted
    from_older_key: int = 0  # sealed with a key listed after the first, now with the first
    current: int = 0  # already sealed with the first key: left alone
    changed_meanwhile: int = 0  # written by the service while this ran (so sealed with the first key)
    unreadable: list[str] = field(default_factory=list)  # primary keys of values no listed key opens

    def summary(self) -> str:
        meanwhile = f", {self.changed_meanwhile} rewritten by the service meanwhile" if self.changed_meanwhile else ""
        return (
            f"{self.column}: {self.from_plain} encrypted from plain text, {self.from_older_key} from an older key, "
            f"{self.current} already current{meanwhile}"
        )


async def reencrypt(db: Database) -> list[ColumnReport]:
    """Seal every stored secret with the first key: values stored in plain text before encryption and values
    sealed with an older key. A value the service rewrites meanwhile is left to the service's write (the update
    applies only while the value is still the one read). Values no key opens are reported and left as they are."""
    box = _box(db)
    return [await _reencrypt_column(db, box, table, column) for table, column in encrypted_columns()]


async def _reencrypt_column(db: Database, box: SecretBox, table: Table, column: Column[str]) -> ColumnReport:
    report = ColumnReport(_name(table, column))
    raw = type_coerce(column, Text)
    (key,) = table.primary_key.columns
    async with db.transaction() as session:
        rows = (await session.execute(select(key, raw).where(column.is_not(None)).order_by(key))).all()
        for row_key, stored in rows:
            if box.is_current(stored):
                report.current += 1
                continue
            try:
                plain = box.open(stored)
            except SecretKeyError:
                report.unreadable.append(str(row_key))
                continue
            # The column's type seals ``plain`` with the first key as the statement is sent.
            result = await session.execute(
                update(table).where(key == row_key, raw == stored).values({column.name: plain})
            )
            if result.rowcount == 0:  # type: ignore[attr-defined]
                report.changed_meanwhile += 1
            elif is_sealed(stored):
                report.from_older_key += 1
            else:
                report.from_plain += 1
    return report
