"""Emptying a test's PostgreSQL database in one round trip: the statements that delete every table's rows and set
the sequences back, and what they read of the database first (its sequences, its tables with triggers)."""

from __future__ import annotations

from typing import Any

from doctordesk.store.schema import metadata


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def empty_statements(guarded: list[str], sequences: list[str], *, replica: bool) -> list[str]:
    """Statements that empty every table and set the sequences back (one transaction, ``finish`` ends it)."""
    # Children before parents (the foreign keys hold at every step); a test's tables are small, where DELETE is
    # many times faster than TRUNCATE. Append-only tables refuse deletes in a trigger: off meanwhile. A superuser
    # turns every trigger off for the transaction (``session_replication_role``: the foreign keys' checks too, and
    # no catalog write); any other owner of the tables turns off those triggers (ALTER TABLE: DDL, three times as
    # slow, and every other connection reloads those tables' descriptions).
    statements = ["BEGIN"]
    if replica:
        statements.append("SET LOCAL session_replication_role = replica")
    else:
        statements += [f"ALTER TABLE public.{quoted(t)} DISABLE TRIGGER USER" for t in guarded]
    statements += [f"DELETE FROM public.{quoted(t.name)}" for t in reversed(metadata.sorted_tables)]
    if sequences:
        # Each sequence back to its start, as RESTART does; setval is not DDL (ALTER SEQUENCE writes a new file for
        # the sequence: four times the whole reset's time).
        names = ", ".join(f"'public.{quoted(s)}'" for s in sequences)
        where = f"seqrelid = ANY(ARRAY[{names}]::regclass[])"
        statements.append(f"SELECT setval(seqrelid, seqstart, false) FROM pg_sequence WHERE {where}")
    return statements


def finish(guarded: list[str], *, replica: bool) -> list[str]:
    enable = [] if replica else [f"ALTER TABLE public.{quoted(t)} ENABLE TRIGGER USER" for t in guarded]
    return [*enable, "COMMIT"]


async def sequences(conn: Any) -> list[tuple[str, int | None]]:
    rows = await conn.fetch(
        "SELECT sequencename, last_value FROM pg_sequences WHERE schemaname = 'public' ORDER BY sequencename"
    )
    return [(r["sequencename"], r["last_value"]) for r in rows]


async def guarded_tables(conn: Any) -> list[str]:
    """The tables with triggers of their own (the append-only ones)."""
    rows = await conn.fetch(
        "SELECT DISTINCT c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
        " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND NOT t.tgisinternal"
        " ORDER BY c.relname"
    )
    return [r["relname"] for r in rows]
