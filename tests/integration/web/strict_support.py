"""Row counts of the main tables, for "a refused request writes nothing"."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, func, select

from doctordesk.runtime import Runtime
from doctordesk.store.schema import metadata

# Tables whose rows a refused request must not touch. Login throttle counts are left out: a failed login is
# counted by design, and the property test's refusals are validation errors that come before it anyway.
MAIN_TABLES = (
    "users",
    "access_tokens",
    "appointments",
    "appointment_history",
    "appointment_offers",
    "audit_log",
    "chat_threads",
    "chat_messages",
    "chat_attachments",
    "chat_reads",
    "review_drafts",
    "devices",
    "push_outbox",
    "doctor_profiles",
    "stream_tickets",
    "login_throttle",
    "login_address_throttle",
)


def _counts_statement() -> Select[Any]:
    """One statement for every count (one round trip per call: the property tests count before and after each
    example)."""
    appointments = metadata.tables["appointments"]
    columns = [
        select(func.count()).select_from(metadata.tables[name]).scalar_subquery().label(f"c{i}")
        for i, name in enumerate(MAIN_TABLES)
    ]
    versions = select(func.coalesce(func.sum(appointments.c.version), 0)).scalar_subquery().label("versions")
    return select(*columns, versions)


_COUNTS = _counts_statement()


async def row_counts(runtime: Runtime) -> dict[str, int]:
    """Rows per main table (and the sum of versions, so an in-place update shows too)."""
    async with runtime.db.read() as session:
        row = (await session.execute(_COUNTS)).one()
    counts = {name: int(row[i] or 0) for i, name in enumerate(MAIN_TABLES)}
    counts["appointments.version"] = int(row[-1] or 0)
    return counts
