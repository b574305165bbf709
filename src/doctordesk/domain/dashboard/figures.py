"""A figure: what one metric computed for the window, as the table its chart, its screen-reader table and its CSV
are all drawn from. Values are plain numbers (None: no data); the screen formats them in the reader's language."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Literal

Kind = Literal["day", "week", "text"]  # what the first column holds: a local day, a week's Monday, a name
Unit = Literal["count", "hours", "percent"]


@dataclass(frozen=True, slots=True)
class Column:
    """A value column: its key (the CSV header), its unit, and its label (an ``N_`` text)."""

    key: str
    label: str
    unit: Unit


@dataclass(frozen=True, slots=True)
class Row:
    key: date | str
    values: tuple[float | int | None, ...]


@dataclass(frozen=True, slots=True)
class Figure:
    kind: Kind
    columns: tuple[Column, ...]
    rows: tuple[Row, ...] = field(default=())

    def column(self, key: str) -> list[float | int | None]:
        i = [c.key for c in self.columns].index(key)
        return [r.values[i] for r in self.rows]


def percentile(values: Sequence[float], percent: float) -> float | None:
    """The nearest-rank ``percent``-th percentile (0 < percent <= 100) of ``values``: a value that occurred (the
    median of two values is the lower one); None for none."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(percent / 100 * len(ordered)))
    return ordered[rank - 1]


def share(part: float, whole: float) -> float | None:
    """``part`` of ``whole`` in per cent, one decimal; None when there is no whole."""
    return round(100 * part / whole, 1) if whole > 0 else None
