"""What every administration request body shares: unknown fields refused, and text that storage can hold.

Text follows the one free-text rule (web/bodies.py); the insurer's raw record may hold line breaks and tabs.
"""

from __future__ import annotations

from datetime import UTC, datetime

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.inputs import is_plain_text
from doctordesk.domain.texts import N_
from doctordesk.web.bodies import StrictBody


class Strict(StrictBody):
    """An administration body: the insurer's raw record may hold line breaks and tabs."""

    MULTILINE = frozenset({"third_party_data"})


def printable(value: str | None, name: str) -> str | None:
    """A query text parameter without control characters (ValidationFailed naming it otherwise)."""
    if value is not None and not is_plain_text(value, max_chars=None):
        raise ValidationFailed(fields={name: N_("Contains characters that are not allowed (control characters).")})
    return value


def instant(value: datetime | None, name: str) -> datetime | None:
    """An instant with a zone offset that exists in UTC (ValidationFailed naming it otherwise)."""
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValidationFailed(fields={name: N_("Give a time zone offset, e.g. 2026-11-23T10:00:00Z.")})
    try:
        return value.astimezone(UTC)
    except (OverflowError, ValueError):
        raise ValidationFailed(fields={name: N_("Out of range.")}) from None
