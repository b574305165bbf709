"""Row counts of the main tables, for "a refused request writes nothing"."""

from __future__ import annotations

from sqlalchemy import func, select

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


async def row_counts(runtime: Runtime) -> dict[str, int]:
    """Rows per main table (and the sum of versions, so an in-place update shows too)."""
    counts: dict[str, int] = {}
    async with runtime.db.read() as session:
        for name in MAIN_TABLES:
            table = metadata.tables[name]
            counts[name] = int(await session.scalar(select(func.count()).select_from(table)) or 0)
        appointments = metadata.tables["appointments"]
        counts["appointments.version"] = int(
            await session.scalar(select(func.coalesce(func.sum(appointments.c.version), 0))) or 0
        )
    return counts
