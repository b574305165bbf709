"""Fees per alternative, from the rows of the fee schedule (data, not code): the doctor fee with its surcharges and
the location fee, the most specific row of each kind in force at the decision (docs/review-and-approve.md#fees);
and what a new version of a fee rule must give."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

SHORT_NOTICE = timedelta(hours=24)
EVENING_FROM = 18


@dataclass(frozen=True, slots=True)
class FeeRow:
    kind: str
    doctor_id: int | None
    location_id: int | None
    amount_cents: int
    percent: int
    currency: str
    effective_from: datetime | None = None
    retired: bool = False


def in_force(rows: Sequence[FeeRow], now: datetime) -> list[FeeRow]:
    """The rows that apply to a decision at ``now``: per kind, doctor and location the latest version already in
    effect (the later row on a tie), unless it retires the rule. Order of first appearance is kept."""
    latest: dict[tuple[str, int | None, int | None], tuple[datetime | None, int, FeeRow]] = {}
    for i, row in enumerate(rows):
        if row.effective_from is not None and row.effective_from > now:
            continue
        key = (row.kind, row.doctor_id, row.location_id)
        seen = latest.get(key)
        if seen is None or _sort_key(row.effective_from, i) >= _sort_key(seen[0], seen[1]):
            latest[key] = (row.effective_from, i, row)
    kept = sorted((i, row) for _, i, row in latest.values() if not row.retired)
    return [row for _, row in kept]


def _sort_key(at: datetime | None, index: int) -> tuple[bool, datetime | None, int]:
    return (at is not None, at, index) if at is not None else (False, None, index)


@dataclass(frozen=True, slots=True)
class Fees:
    doctor_fee_cents: int
    total_fee_cents: int
    currency: str
    surcharges: tuple[str, ...]

    @property
    def doctor_fee(self) -> str:
        return money(self.doctor_fee_cents, self.currency)

    @property
    def total_fee(self) -> str:
        return money(self.total_fee_cents, self.currency)


SYMBOLS = {"EUR": "€", "GBP": "£", "USD": "$", "CHF": "CHF "}


def money(cents: int, currency: str) -> str:
    return f"{SYMBOLS.get(currency, currency + ' ')}{cents // 100:,}.{cents % 100:02d}"


def _specificity(row: FeeRow, doctor_id: int, location_id: int) -> int | None:
    """Higher is more specific; None when the row does not apply."""
    if row.doctor_id is not None and row.doctor_id != doctor_id:
        return None
    if row.location_id is not None and row.location_id != location_id:
        return None
    return (2 if row.doctor_id is not None else 0) + (1 if row.location_id is not None else 0)


def _best(rows: Sequence[FeeRow], kind: str, doctor_id: int, location_id: int) -> FeeRow | None:
    best: tuple[int, int, FeeRow] | None = None
    for i, row in enumerate(rows):
        if row.kind != kind:
            continue
        s = _specificity(row, doctor_id, location_id)
        if s is not None and (best is None or (s, -i) > (best[0], best[1])):
            best = (s, -i, row)
    return best[2] if best else None


Condition = Callable[[datetime, datetime], bool]  # (local start, now) → applies

SURCHARGES: dict[str, Condition] = {
    "weekend": lambda local, _now: local.weekday() >= 5,
    "short_notice": lambda local, now: local - now < SHORT_NOTICE,
    "evening": lambda local, _now: local.hour >= EVENING_FROM,
}
AMOUNT_KINDS = ("doctor_fee", "location_fee")
KINDS = (*AMOUNT_KINDS, *SURCHARGES)
MAX_AMOUNT_CENTS = 10_000_000
MAX_PERCENT = 1000


def charged_by(kind: str, *, retired: bool) -> Literal["amount", "percent"] | None:
    """What a new version of a rule must give: a doctor or location fee its ``amount_cents`` (0: no fee), a
    surcharge its ``percent`` of the doctor fee; a version that ends the rule (or of an unknown kind) neither."""
    if retired or kind not in KINDS:
        return None
    return "amount" if kind in AMOUNT_KINDS else "percent"


def compute(
    rows: Sequence[FeeRow], *, doctor_id: int, location_id: int, start: datetime, timezone: str, now: datetime
) -> Fees | None:
    """Fees of one alternative decided at ``now``, or None when the schedule has no doctor fee for it."""
    rows = in_force(rows, now)
    base = _best(rows, "doctor_fee", doctor_id, location_id)
    if base is None:
        return None
    local = start.astimezone(ZoneInfo(timezone))
    doctor = base.amount_cents
    applied = []
    for kind, condition in SURCHARGES.items():
        row = _best(rows, kind, doctor_id, location_id)
        if row is not None and row.percent and condition(local, now):
            doctor += (base.amount_cents * row.percent + 50) // 100
            applied.append(kind)
    location = _best(rows, "location_fee", doctor_id, location_id)
    total = doctor + (location.amount_cents if location else 0)
    return Fees(doctor_fee_cents=doctor, total_fee_cents=total, currency=base.currency, surcharges=tuple(applied))
