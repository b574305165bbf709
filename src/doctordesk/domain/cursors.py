"""Keyset paging for the read API: page sizes and the opaque cursor that marks where the next page starts.

A cursor is the position of the last row of a page (start time in microseconds since the epoch, and id) followed
by a check digest, base64url encoded. The digest catches a cursor that was cut short, mistyped or edited; it is not
a signature, and needs none: a cursor only says where to continue, and the query still applies the caller's rights
and filters, so even a cursor built by hand from someone else's row shows nothing of theirs (docs/accounts.md).
Decoding accepts exactly what ``encode_cursor`` produces; anything else is a validation error naming ``cursor``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from datetime import UTC, datetime, timedelta

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.inputs import MAX_ID
from doctordesk.domain.keyset import Position
from doctordesk.domain.texts import N_

# The default is the maximum, so a caller written before paging existed gets the same first page as before.
MAX_LIMIT = 500
DEFAULT_LIMIT = MAX_LIMIT
MAX_CURSOR_CHARS = 64

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_DIGEST_BYTES = 8
_ENCODED = re.compile(r"[A-Za-z0-9_-]+")
_POSITION = re.compile(r"1:(-?[1-9]\d{0,18}|0):([1-9]\d{0,15})", re.ASCII)  # version 1: micros, id


def _digest(position: bytes) -> bytes:
    return hashlib.sha256(b"doctordesk read API cursor\0" + position).digest()[:_DIGEST_BYTES]


def encode_cursor(position: Position) -> str:
    micros = (position.at - _EPOCH) // _MICROSECOND
    text = f"1:{micros}:{position.id}".encode()
    return base64.urlsafe_b64encode(text + _digest(text)).decode().rstrip("=")


def decode_cursor(raw: str) -> Position:
    """The position a cursor marks; ValidationFailed naming ``cursor`` for anything ``encode_cursor`` did not
    produce (cut short, altered, another version, out of range)."""
    invalid = ValidationFailed(fields={"cursor": N_("Not a cursor this service gave out; start again without one.")})
    if len(raw) > MAX_CURSOR_CHARS or not _ENCODED.fullmatch(raw):
        raise invalid
    try:
        data = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
    except (binascii.Error, ValueError):
        raise invalid from None
    text, digest = data[:-_DIGEST_BYTES], data[-_DIGEST_BYTES:]
    match = _POSITION.fullmatch(text.decode("latin-1"))
    if match is None or not hmac.compare_digest(digest, _digest(text)):
        raise invalid
    row_id = int(match[2])
    try:
        position = Position(_EPOCH + int(match[1]) * _MICROSECOND, row_id)
    except OverflowError:
        raise invalid from None
    # Only the canonical spelling is a cursor (no stray bits in the last base64 character).
    if row_id > MAX_ID or encode_cursor(position) != raw:
        raise invalid
    return position
