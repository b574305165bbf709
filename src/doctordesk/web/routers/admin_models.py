"""What every administration request body shares: unknown fields refused, and text that storage can hold.

Names, numbers and notes must be printable (no control characters); the insurer's raw record may hold line breaks
and tabs, but no NUL (PostgreSQL text cannot store it, and it would otherwise reach the driver as an error).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from doctordesk.domain.errors import ValidationFailed

RAW_TEXT_FIELDS = frozenset({"third_party_data", "password"})


def _text_ok(value: Any, *, raw: bool) -> bool:
    if isinstance(value, str):
        return "\x00" not in value if raw else value.isprintable()
    if isinstance(value, list):
        return all(_text_ok(v, raw=raw) for v in value)
    return True


class Strict(BaseModel):
    """A request body: extra fields are refused, text fields are checked for characters storage cannot keep."""

    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="after")
    @classmethod
    def _printable(cls, value: Any, info: ValidationInfo) -> Any:
        if not _text_ok(value, raw=info.field_name in RAW_TEXT_FIELDS):
            raise ValueError("Contains characters that are not allowed (control characters).")
        return value


def printable(value: str | None, name: str) -> str | None:
    """A query text parameter without control characters (ValidationFailed naming it otherwise)."""
    if value is not None and not value.isprintable():
        raise ValidationFailed(fields={name: "Contains characters that are not allowed (control characters)."})
    return value


def instant(value: datetime | None, name: str) -> datetime | None:
    """An instant with a zone offset that exists in UTC (ValidationFailed naming it otherwise)."""
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValidationFailed(fields={name: "Give a time zone offset, e.g. 2026-11-23T10:00:00Z."})
    try:
        return value.astimezone(UTC)
    except (OverflowError, ValueError):
        raise ValidationFailed(fields={name: "Out of range."}) from None
