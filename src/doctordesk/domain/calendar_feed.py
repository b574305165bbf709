"""The rules of a doctor's calendar feed (docs/calendar-feed.md): the secret in its address, which appointments
it shows and as what, over which window, and in which words.

The secret is ``ddcal_`` followed by 43 URL-safe characters (32 random bytes). Only its SHA-256 is stored (as API
keys are), with a short prefix so the doctor can tell addresses apart; the address is shown when it is created or
rotated, never again.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.integration import key_hash
from doctordesk.domain.scheduling.booking import SERVICES
from doctordesk.domain.texts import Text

TOKEN_PREFIX = "ddcal_"
TOKEN_CHARS = len(TOKEN_PREFIX) + 43
SHOWN_PREFIX_CHARS = 10  # "ddcal_" and 4 characters: tells addresses apart, far too few to guess one
_TOKEN_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

# The feed shows appointments from this long ago to this far ahead: enough for a calendar's "last week" and the
# year ahead, bounded so a feed costs one small index range however old the practice is.
PAST_WINDOW = timedelta(days=30)
FUTURE_WINDOW = timedelta(days=365)
# At most this many events in one feed (a doctor's year is far fewer); the earliest are kept.
MAX_EVENTS = 5000
# How often a subscribed calendar should fetch the feed again (REFRESH-INTERVAL, X-PUBLISHED-TTL).
REFRESH_INTERVAL = timedelta(minutes=15)

# Statuses whose appointment time is shown as an event. Declined and canceled leave the feed; pending-response
# shows the open offers instead of the request's original time (that time was not taken).
CONFIRMED_STATUSES = frozenset({Status.APPROVED, Status.COMPLETED, Status.NO_SHOW})
TENTATIVE_STATUSES = frozenset({Status.REQUESTED})
PENDING_STATUSES = frozenset({Status.PENDING_RESPONSE, Status.PENDING_RESPONSE_COVERAGE_RISK})
SHOWN_STATUSES = CONFIRMED_STATUSES | TENTATIVE_STATUSES


class EventStatus(StrEnum):
    CONFIRMED = "CONFIRMED"
    TENTATIVE = "TENTATIVE"


class Kind(StrEnum):
    APPOINTMENT = "appointment"  # approved, completed or no-show: the booked time
    REQUEST = "request"  # awaiting the doctor's decision: the requested time
    OFFER = "offer"  # one of the times offered to the patient, awaiting the patient's answer


@dataclass(frozen=True, slots=True)
class FeedEntry:
    """One event of a feed, as plain facts (the store reads them, ``services/calendar/ics`` writes iCalendar)."""

    kind: Kind
    appointment_id: int
    status: Status
    offer_n: int | None  # the offer's number (1-3) for an offer
    start: datetime  # aware, UTC
    duration_minutes: int
    timezone: str  # the location's IANA zone: the event's TZID
    service: str
    location_name: str
    location_address: str
    sequence: int  # RFC 5545 SEQUENCE: grows with every change of the event
    created: datetime
    modified: datetime

    @property
    def uid(self) -> str:
        """Stable across fetches and distinct per event: a calendar updates the event in place when it changes."""
        if self.kind is Kind.OFFER:
            return f"appointment-{self.appointment_id}-offer-{self.offer_n}@doctordesk"
        return f"appointment-{self.appointment_id}@doctordesk"

    @property
    def event_status(self) -> EventStatus:
        return EventStatus.CONFIRMED if self.kind is Kind.APPOINTMENT else EventStatus.TENTATIVE

    @property
    def busy(self) -> bool:
        """Whether the event blocks the doctor's time in free/busy (TRANSP): booked times and open offers do (the
        booking rules hold them), a request does not (nothing is held until the doctor decides)."""
        return self.kind is not Kind.REQUEST

    @property
    def summary(self) -> str:
        """The event's title: the service and the appointment's number, never the patient (the feed's privacy
        rule: docs/calendar-feed.md)."""
        service = self.service_words
        n = self.appointment_id
        if self.kind is Kind.REQUEST:
            return Text("Request to decide: {service} (appointment {n})", service=service, n=n)
        if self.kind is Kind.OFFER:
            return Text(
                "Offered: {service} (appointment {n}, option {option})", service=service, n=n, option=self.offer_n
            )
        if self.status is Status.COMPLETED:
            return Text("{service} (appointment {n}, completed)", service=service, n=n)
        if self.status is Status.NO_SHOW:
            return Text("{service} (appointment {n}, no-show)", service=service, n=n)
        return Text("{service} (appointment {n})", service=service, n=n)

    @property
    def service_words(self) -> str:
        """The service: a bookable one by its label (a ``Text``, written in the feed's language), another as named
        by the clinic's systems, with a capital first letter."""
        if self.service in SERVICES:
            return Text(SERVICES[self.service])
        return self.service[:1].upper() + self.service[1:]

    @property
    def end(self) -> datetime:
        return self.start + timedelta(minutes=self.duration_minutes)


def window(now: datetime) -> tuple[datetime, datetime]:
    """The feed's range of start times: [now - PAST_WINDOW, now + FUTURE_WINDOW)."""
    return now - PAST_WINDOW, now + FUTURE_WINDOW


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """The stored form of a feed secret: its SHA-256, as for API keys."""
    return key_hash(token)


def looks_like_token(raw: str) -> bool:
    """The shape of a feed secret; anything else is refused before the database is asked."""
    return len(raw) == TOKEN_CHARS and raw.startswith(TOKEN_PREFIX) and set(raw) <= _TOKEN_ALPHABET


def hashes_match(stored: str, presented: str) -> bool:
    """Constant-time comparison of a stored hash with a presented token's hash."""
    return hmac.compare_digest(stored.encode(), presented.encode())


def feed_topic(doctor_id: int) -> str:
    """The topic of a doctor's feed settings: the feed screen watches it."""
    return f"calendar-feed:{doctor_id}"
