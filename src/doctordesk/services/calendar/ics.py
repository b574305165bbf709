"""A doctor's calendar feed as iCalendar (RFC 5545, with RFC 7986's calendar name and refresh interval), written
by the ``icalendar`` library from the feed's entries: pure, no I/O.

Every event starts and ends in its location's zone (``DTSTART;TZID=Europe/Berlin``) and the calendar carries a
VTIMEZONE for each zone used, generated from the zone database for the feed's window, so a subscribing calendar
shows the clinic's wall-clock time on both sides of a DST change whatever zone it is in itself.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from icalendar import Calendar, Event, vDuration

from doctordesk import i18n
from doctordesk.domain.calendar_feed import REFRESH_INTERVAL, FeedEntry, Kind
from doctordesk.domain.texts import Text

PRODID = "-//doctordesk//calendar feed//EN"


def _event(entry: FeedEntry, language: str) -> Event:
    zone = ZoneInfo(entry.timezone)
    event = Event()
    event.add("uid", entry.uid)
    # No METHOD on the calendar: DTSTAMP is then the event's last change (RFC 5545 3.8.7.2), so an unchanged
    # event reads the same on every fetch.
    event.add("dtstamp", entry.modified)
    event.add("created", entry.created)
    event.add("last-modified", entry.modified)
    event.add("sequence", entry.sequence)
    event.add("dtstart", entry.start.astimezone(zone))
    event.add("dtend", entry.end.astimezone(zone))
    event.add("summary", i18n.t(language, entry.summary))
    event.add("status", entry.event_status.value)
    event.add("transp", "OPAQUE" if entry.busy else "TRANSPARENT")
    event.add("class", "PRIVATE")
    where = ", ".join(part for part in (entry.location_name, entry.location_address) if part)
    if where:
        event.add("location", where)
    event.add("description", _description(entry, language))
    return event


def _description(entry: FeedEntry, language: str) -> str:
    lines = [
        Text("Status: {status}.", status=entry.status.in_words),
        Text("Service: {service}.", service=entry.service_words),
    ]
    if entry.kind is Kind.REQUEST:
        lines.append(Text("Awaiting your decision in doctordesk."))
    elif entry.kind is Kind.OFFER:
        lines.append(Text("Offered to the patient; the time is held until they answer."))
    lines.append(Text("Appointment {n} in doctordesk.", n=entry.appointment_id))
    return "\n".join(i18n.t(language, line) for line in lines)


def render_feed(
    entries: Sequence[FeedEntry], *, name: str, window: tuple[datetime, datetime], language: str = i18n.DEFAULT
) -> bytes:
    """The feed: one VEVENT per entry (in the order given) and one VTIMEZONE per zone the events use, covering
    ``window`` (the range of start times the entries were read from). Its words are in ``language`` (the
    doctor's stored choice: a calendar app sends no language of its own)."""
    calendar = Calendar()
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("name", name)
    calendar.add("x-wr-calname", name)
    calendar.add("refresh-interval", REFRESH_INTERVAL, parameters={"VALUE": "DURATION"})
    calendar.add("x-published-ttl", vDuration(REFRESH_INTERVAL))
    for entry in entries:
        calendar.add_component(_event(entry, language))
    first, last = window
    calendar.add_missing_timezones(
        first_date=date(first.year - 1, 1, 1), last_date=(last + timedelta(days=366)).date().replace(month=1, day=1)
    )
    ics: bytes = calendar.to_ical()
    return ics


def fingerprint(
    entries: Sequence[FeedEntry], *, name: str, window: tuple[datetime, datetime], language: str = i18n.DEFAULT
) -> str:
    """What the feed's bytes depend on, hashed: the entries, the calendar's name, its language and the years its
    VTIMEZONEs cover. Equal fingerprints give equal feeds, so it is the feed's ETag and its cache key."""
    first, last = window
    digest = hashlib.sha256(f"{PRODID}|{name}|{language}|{first.year}|{last.year}".encode())
    for entry in entries:
        digest.update(repr(entry).encode())
    return digest.hexdigest()[:32]
