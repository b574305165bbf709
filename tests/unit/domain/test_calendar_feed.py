"""The calendar feed's rules: the secret's shape and hash, the window, and each event's words and status."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import pytest

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.calendar_feed import (
    FUTURE_WINDOW,
    PAST_WINDOW,
    SHOWN_STATUSES,
    FeedEntry,
    Kind,
    hashes_match,
    looks_like_token,
    new_token,
    token_hash,
    window,
)

NOW = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)


def entry(kind: Kind = Kind.APPOINTMENT, status: Status = Status.APPROVED, offer_n: int | None = None) -> FeedEntry:
    return FeedEntry(
        kind=kind,
        appointment_id=42,
        status=status,
        offer_n=offer_n,
        start=NOW,
        duration_minutes=45,
        timezone="Europe/Berlin",
        service="consultation",
        location_name="Berlin Mitte Clinic",
        location_address="Friedrichstrasse 100",
        sequence=0,
        created=NOW,
        modified=NOW,
    )


def test_a_new_secret_has_the_feed_shape_and_is_new_each_time():
    tokens = {new_token() for _ in range(50)}
    assert len(tokens) == 50
    assert all(looks_like_token(t) and t.startswith("ddcal_") for t in tokens)


@pytest.mark.parametrize(
    "raw",
    ["", "ddcal_", "ddcal_" + "A" * 42, "ddcal_" + "A" * 44, "ddk_" + "A" * 45, "ddcal_" + "é" * 43,
     "ddcal_" + "A" * 42 + "/", "ddcal_" + "A" * 42 + "."],
)  # fmt: skip
def test_anything_but_the_secrets_shape_is_refused_before_any_lookup(raw):
    assert not looks_like_token(raw)


def test_the_stored_form_is_the_sha256_and_compares_in_constant_time():
    token = new_token()
    assert token_hash(token) == hashlib.sha256(token.encode()).hexdigest()
    assert hashes_match(token_hash(token), token_hash(token))
    assert not hashes_match(token_hash(token), token_hash(new_token()))


def test_the_window_is_thirty_days_back_to_a_year_ahead():
    assert window(NOW) == (NOW - timedelta(days=30), NOW + timedelta(days=365))
    assert PAST_WINDOW == timedelta(days=30) and FUTURE_WINDOW == timedelta(days=365)


def test_declined_canceled_and_pending_times_are_not_shown_as_appointments():
    assert Status.DECLINED not in SHOWN_STATUSES and Status.CANCELED not in SHOWN_STATUSES
    assert Status.PENDING_RESPONSE not in SHOWN_STATUSES
    assert Status.PENDING_RESPONSE_COVERAGE_RISK not in SHOWN_STATUSES


def test_booked_times_are_confirmed_and_busy():
    e = entry()
    assert e.event_status == "CONFIRMED" and e.busy
    assert e.uid == "appointment-42@doctordesk"
    assert e.summary == "Consultation (appointment 42)"
    assert e.end == NOW + timedelta(minutes=45)


def test_a_request_is_tentative_and_does_not_block_time():
    e = entry(Kind.REQUEST, Status.REQUESTED)
    assert e.event_status == "TENTATIVE" and not e.busy
    assert e.uid == "appointment-42@doctordesk" and e.summary.startswith("Request to decide")


def test_each_offer_has_its_own_uid_and_is_tentative_but_holds_the_time():
    first, second = entry(Kind.OFFER, Status.PENDING_RESPONSE, 1), entry(Kind.OFFER, Status.PENDING_RESPONSE, 2)
    assert first.uid != second.uid and first.uid == "appointment-42-offer-1@doctordesk"
    assert first.event_status == "TENTATIVE" and first.busy
    assert "option 1" in first.summary


def test_completed_and_no_show_say_so():
    assert entry(status=Status.COMPLETED).summary.endswith("completed)")
    assert entry(status=Status.NO_SHOW).summary.endswith("no-show)")
