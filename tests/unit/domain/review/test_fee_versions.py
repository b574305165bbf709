"""Fee rules as dated versions: the version in effect at the decision's moment applies."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from doctordesk.domain.review.fees import FeeRow, compute, in_force

NOW = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)
TUESDAY_10 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def fee(cents: int, at: datetime | None = None, *, retired: bool = False) -> FeeRow:
    return FeeRow("doctor_fee", 1, None, cents, 0, "EUR", at, retired)


def doctor_fee(rows: list[FeeRow], now: datetime) -> int | None:
    fees = compute(rows, doctor_id=1, location_id=2, start=TUESDAY_10, timezone="Europe/Berlin", now=now)
    return fees.doctor_fee_cents if fees else None


def test_a_new_version_applies_to_decisions_from_its_effective_date_only():
    rows = [fee(6000), fee(9000, NOW + timedelta(days=1))]
    assert doctor_fee(rows, NOW) == 6000
    assert doctor_fee(rows, NOW + timedelta(days=1)) == 9000


def test_the_latest_effective_version_wins_whatever_order_rows_were_added_in():
    rows = [fee(6000), fee(8000, NOW + timedelta(days=2)), fee(7000, NOW + timedelta(days=1))]
    assert doctor_fee(rows, NOW + timedelta(days=1, hours=1)) == 7000
    assert doctor_fee(rows, NOW + timedelta(days=3)) == 8000


def test_a_retired_version_ends_the_rule_and_a_later_one_restores_it():
    rows = [fee(6000), fee(0, NOW, retired=True), fee(6500, NOW + timedelta(days=5))]
    assert doctor_fee(rows, NOW - timedelta(seconds=1)) == 6000
    assert doctor_fee(rows, NOW) is None  # on request
    assert doctor_fee(rows, NOW + timedelta(days=5)) == 6500


def test_versions_of_other_doctors_and_kinds_are_independent():
    other = FeeRow("doctor_fee", 9, None, 1, 0, "EUR", NOW)
    surcharge = FeeRow("weekend", None, None, 0, 25, "EUR", NOW)
    kept = in_force([fee(6000), other, surcharge], NOW)
    assert len(kept) == 3
