"""``_sort`` for the FHIR searches (docs/fhir.md#sorting): the keys a search offers, several comma-separated, ``-``
for descending, the id breaking ties; keyset pages under any such order, in SQL or over rows in memory.

A page's cursor holds the last row's sort values and id, with a digest over them and the sort they belong to: a
cursor made under one sort is refused under another, and the query still applies the caller's rights and filters.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import and_, false, or_
from sqlalchemy.sql.elements import ColumnElement

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.texts import N_

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_DIGEST_BYTES = 8
MAX_CURSOR_CHARS = 1200
MAX_KEYS = 5


@dataclass(frozen=True, slots=True)
class SortKey:
    name: str
    descending: bool = False

    @property
    def text(self) -> str:
        return f"-{self.name}" if self.descending else self.name


Sort = tuple[SortKey, ...]


def sort_text(sort: Sort) -> str:
    return ",".join(k.text for k in sort)


def parse(raw: str, offered: Sequence[str]) -> tuple[Sort, list[str]]:
    """The keys of one ``_sort`` value that ``offered`` holds (each once, the first spelling counts) and the ones it
    does not (to be refused or ignored, as unknown parameters are)."""
    keys: list[SortKey] = []
    unsupported: list[str] = []
    for part in raw.split(","):
        name = part.strip()
        descending = name.startswith("-")
        name = name.removeprefix("-")
        if name in offered and len(keys) < MAX_KEYS:
            if all(k.name != name for k in keys):
                keys.append(SortKey(name, descending))
        elif part and part not in unsupported:
            unsupported.append(part)
    return tuple(keys), unsupported


# Cursor values: JSON scalars, instants and days tagged so they come back as they were.
def _dump(value: Any) -> Any:
    if isinstance(value, datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=UTC)  # a database's naive UTC
        return {"t": (aware - _EPOCH) // timedelta(microseconds=1)}
    if isinstance(value, date):
        return {"d": value.toordinal()}
    if value is None or isinstance(value, (int, str)):
        return value
    raise TypeError(f"not a sort value: {value!r}")


def _load(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"t"} and isinstance(value["t"], int):
            return _EPOCH + timedelta(microseconds=value["t"])
        if set(value) == {"d"} and isinstance(value["d"], int) and 0 < value["d"] <= date.max.toordinal():
            return date.fromordinal(value["d"])
        raise ValueError("bad sort value")
    if value is None or (isinstance(value, (int, str)) and not isinstance(value, bool)):
        return value
    raise ValueError("bad sort value")


def _digest(sort: Sort, body: bytes) -> bytes:
    text = b"doctordesk FHIR sort cursor\0" + sort_text(sort).encode() + b"\0" + body
    return hashlib.sha256(text).digest()[:_DIGEST_BYTES]


def encode_cursor(sort: Sort, values: Sequence[Any]) -> str:
    """The cursor after a row whose sort values (one per key, then the id) are ``values``."""
    body = json.dumps([_dump(v) for v in values], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(body + _digest(sort, body)).decode().rstrip("=")


def decode_cursor(sort: Sort, raw: str) -> tuple[Any, ...]:
    """The values ``encode_cursor`` put in a cursor under this ``sort``; ValidationFailed naming ``_cursor`` for
    anything else (cut short, altered, made under another sort)."""
    invalid = ValidationFailed(fields={"_cursor": N_("Not a page link this service gave out.")})
    if len(raw) > MAX_CURSOR_CHARS:
        raise invalid
    try:
        data = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
    except (binascii.Error, ValueError):
        raise invalid from None
    body, digest = data[:-_DIGEST_BYTES], data[-_DIGEST_BYTES:]
    if not hmac.compare_digest(digest, _digest(sort, body)):
        raise invalid
    try:
        values = json.loads(body)
        loaded = tuple(_load(v) for v in values) if isinstance(values, list) else ()
    except (ValueError, OverflowError):
        raise invalid from None
    if len(loaded) != len(sort) + 1 or not isinstance(loaded[-1], (int, str)) or encode_cursor(sort, loaded) != raw:
        raise invalid
    return loaded


def tie_break_descending(sort: Sort) -> bool:
    """The id breaks ties in the direction of the last key."""
    return sort[-1].descending if sort else False


# SQL: columns that are never NULL.
def order_by(sort: Sort, columns: Mapping[str, Any], row_id: Any) -> list[Any]:
    out = [columns[k.name].desc() if k.descending else columns[k.name] for k in sort]
    out.append(row_id.desc() if tie_break_descending(sort) else row_id)
    return out


def beyond(sort: Sort, columns: Mapping[str, Any], row_id: Any, after: Sequence[Any]) -> ColumnElement[bool]:
    """The rows after ``after`` (sort values, then id) in the order of ``order_by``: the first key as a bound (an
    index range where one exists), then the lexicographic test."""
    keyed = [(columns[k.name], k.descending) for k in sort] + [(row_id, tie_break_descending(sort))]
    options: list[ColumnElement[bool]] = []
    for i, (column, descending) in enumerate(keyed):
        equal = [c == v for (c, _), v in zip(keyed[:i], after[:i], strict=True)]
        options.append(and_(*equal, column < after[i] if descending else column > after[i]))
    first, descending = keyed[0]
    bound = first <= after[0] if descending else first >= after[0]
    return and_(bound, or_(*options)) if options else false()


# In memory: values may be None (missing: after every value, in either direction's ascending sense).
def _compare_one(a: Any, b: Any) -> int:
    if a is None or b is None:
        return (a is None) - (b is None)
    return int(a > b) - int(a < b)


def compare(sort: Sort, left: Sequence[Any], right: Sequence[Any]) -> int:
    """Order two rows' values (sort values, then id) as the sort says."""
    directions = [k.descending for k in sort] + [tie_break_descending(sort)]
    for x, y, descending in zip(left, right, directions, strict=True):
        result = _compare_one(x, y)
        if result:
            return -result if descending else result
    return 0


def page_in_memory(
    sort: Sort, rows: Sequence[Any], values: Callable[[Any], tuple[Any, ...]], after: Sequence[Any] | None, limit: int
) -> list[Any]:
    """``rows`` sorted, those after ``after``, at most ``limit``."""
    ordered = sorted(rows, key=functools.cmp_to_key(lambda a, b: compare(sort, values(a), values(b))))
    if after is not None:
        ordered = [r for r in ordered if compare(sort, values(r), after) > 0]
    return ordered[:limit]
