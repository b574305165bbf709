"""Keyset positions: where a row stands in a list ordered by a timestamp, then id.

The id breaks ties, so a position names exactly one row and a page that ends at it is never cut in the middle of
equal timestamps. Lists read "after" or "through" a position (never OFFSET), so rows inserted meanwhile never
shift what comes next: the read API's cursors and the screens' "show more" windows are both positions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True, order=True)
class Position:
    at: datetime  # UTC
    id: int


@dataclass(frozen=True, slots=True)
class Slice(Generic[T]):
    """The rows of one section a client is shown, and whether the section goes on ("show more")."""

    rows: Sequence[T]
    more: bool  # rows exist after the last one shown
    at_limit: bool = False  # the section shows as many rows as it ever will: "show more" is over
    total: int | None = None  # how many rows the section holds, when counted (at most COUNT_CAP)


# Section totals are counted up to this and shown as "99+" beyond: a count reads at most this many index
# entries, however long the history.
COUNT_CAP = 100


def count_label(count: int) -> str:
    """A count as shown: exact below ``COUNT_CAP``, "99+" from there (counts are read only that far)."""
    return f"{COUNT_CAP - 1}+" if count >= COUNT_CAP else str(count)
