"""The whole schema: importing this module registers every feature's tables on ``Base.metadata``."""

from __future__ import annotations

from doctordesk.store import (
    admin_tables,
    calendar_tables,
    chat_tables,
    fhir_tables,
    integration_tables,
    mail_tables,
    mfa_tables,
    name_words,
    notice_tables,
    realtime_tables,
    review_tables,
    smart_tables,
    tables,
    webhook_tables,
)
from doctordesk.store.tables import Base
from doctordesk.store.waitlist import tables as waitlist_tables

metadata = Base.metadata

__all__ = [
    "Base",
    "admin_tables",
    "calendar_tables",
    "chat_tables",
    "fhir_tables",
    "integration_tables",
    "mail_tables",
    "metadata",
    "mfa_tables",
    "name_words",
    "notice_tables",
    "realtime_tables",
    "review_tables",
    "smart_tables",
    "tables",
    "waitlist_tables",
    "webhook_tables",
]
