"""The integration API's rules: service accounts and their keys, scopes, idempotency of requests.

A key is ``ddk_`` followed by 43 URL-safe characters (32 random bytes). Only its SHA-256 is stored, with a short
prefix to tell keys apart in lists; the key itself is shown once, when it is created.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

KEY_PREFIX = "ddk_"
SHOWN_PREFIX_CHARS = 12  # "ddk_" and 8 characters: enough to tell keys apart, far too few to guess one
MAX_KEY_CHARS = 128
# The last use of a key is written at most this often (a request does not cost a write).
LAST_USE_RESOLUTION = timedelta(minutes=1)
# How long an Idempotency-Key is remembered with the first answer.
IDEMPOTENCY_TTL = timedelta(hours=24)
MAX_IDEMPOTENCY_KEY_CHARS = 128
# An Idempotency-Key as it arrives (HTTP drops the spaces around a header value), as the API description states
# it: printable ASCII, not starting or ending with a space.
IDEMPOTENCY_KEY_PATTERN = f"^[!-~]([ -~]{{0,{MAX_IDEMPOTENCY_KEY_CHARS - 2}}}[!-~])?$"


class Scope(StrEnum):
    APPOINTMENTS_WRITE = "appointments:write"  # create requests, report outside events, read what it created
    APPOINTMENTS_READ = "appointments:read"  # read any appointment of the clinic
    # Manage the account's FHIR Subscriptions; what they deliver is what the key may read (docs/fhir.md).
    SUBSCRIPTIONS_WRITE = "subscriptions:write"


@dataclass(frozen=True, slots=True)
class Integration:
    """The service account behind an integration API call (the key it used and that key's scopes)."""

    service_account_id: int
    name: str
    key_id: int
    scopes: frozenset[Scope]

    def has(self, scope: Scope) -> bool:
        return scope in self.scopes

    def audit_details(self) -> dict[str, Any]:
        """How history and the audit log name this caller (their ``actor_id`` stays null: it is not a user)."""
        return {"service_account": {"id": self.service_account_id, "name": self.name, "key_id": self.key_id}}


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def looks_like_key(raw: str) -> bool:
    return raw.startswith(KEY_PREFIX) and len(raw) <= MAX_KEY_CHARS and raw.isascii() and raw.isprintable()


def body_hash(body: Any) -> str:
    """A hash of a request's meaning: its JSON with keys sorted, so key order and spacing do not matter."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def is_valid_idempotency_key(raw: str) -> bool:
    return 0 < len(raw) <= MAX_IDEMPOTENCY_KEY_CHARS and raw.isascii() and raw.isprintable()


def needs_last_use(last_used_at: datetime | None, now: datetime) -> bool:
    return last_used_at is None or now - last_used_at >= LAST_USE_RESOLUTION
