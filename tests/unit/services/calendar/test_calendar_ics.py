"""Writing the feed as iCalendar: what a subscribing calendar reads back (parsed with icalendar)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from icalendar import Calendar

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.calendar_feed import FeedEntry, Kind
from doctordesk.services.calendar.ics import fingerprint, render_feed

NOW = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)
WINDOW = (NOW - timedelta(days=30), NOW + timedelta(days=365))


def entry(start: datetime, zone: str, *, appointment_id: int = 1, sequence: int = 0) -> FeedEntry:
    return FeedEntry(
        kind=Kind.APPOINTMENT,
        appointment_id=appointment_id,
        status=Status.APPROVED,
        offer_n=None,
        start=start.astimezone(UTC),
        duration_minutes=30,
        timezone=zone,
        service="consultation",
        location_name="Clinic",
        location_address="1 Street, Town",
        sequence=sequence,
        created=NOW,
        modified=NOW + timedelta(minutes=5),
    )


def parse(entries: list[FeedEntry]) -> Calendar:
    return Calendar.from_ical(render_feed(entries, name="doctordesk: Dr. Test", window=WINDOW))


def test_an_empty_feed_is_a_valid_calendar_with_its_name_and_refresh_interval():
    calendar = parse([])
    assert str(calendar["VERSION"]) == "2.0" and str(calendar["NAME"]) == "doctordesk: Dr. Test"
    assert calendar.decoded("REFRESH-INTERVAL") == timedelta(minutes=15)
    assert calendar["REFRESH-INTERVAL"].params["VALUE"] == "DURATION"
    assert not calendar.walk("VEVENT") and not calendar.walk("VTIMEZONE")


def test_wall_clock_times_survive_dst_in_the_events_zone():
    berlin, new_york = ZoneInfo("Europe/Berlin"), ZoneInfo("America/New_York")
    summer = datetime(2027, 7, 6, 10, 0, tzinfo=berlin)
    winter = datetime(2026, 12, 8, 10, 0, tzinfo=berlin)
    ny = datetime(2027, 3, 15, 9, 0, tzinfo=new_york)  # the US changed on 14 March, Europe not yet
    calendar = parse(
        [entry(winter, "Europe/Berlin", appointment_id=1), entry(ny, "America/New_York", appointment_id=2),
         entry(summer, "Europe/Berlin", appointment_id=3)]
    )  # fmt: skip
    shown = {str(e["UID"]): e for e in calendar.walk("VEVENT")}
    for key, local in (("1", winter), ("2", ny), ("3", summer)):
        event = shown[f"appointment-{key}@doctordesk"]
        assert event["DTSTART"].to_ical().decode() == local.strftime("%Y%m%dT%H%M%S")
        assert event.decoded("DTSTART") == local and event["DTEND"].params["TZID"] == str(local.tzinfo)
    zones = {str(z["TZID"]): z.to_tz() for z in calendar.walk("VTIMEZONE")}
    assert set(zones) == {"Europe/Berlin", "America/New_York"}
    assert zones["America/New_York"].utcoffset(datetime(2027, 3, 15, 9, 0)) == timedelta(hours=-4)
    assert zones["Europe/Berlin"].utcoffset(datetime(2027, 3, 15, 9, 0)) == timedelta(hours=1)


def test_each_event_carries_the_properties_a_subscriber_needs():
    (event,) = parse([entry(NOW + timedelta(days=3), "Europe/London", sequence=4)]).walk("VEVENT")
    assert event["SEQUENCE"] == 4
    assert event.decoded("DTSTAMP") == NOW + timedelta(minutes=5) == event.decoded("LAST-MODIFIED")
    assert event.decoded("CREATED") == NOW
    assert str(event["STATUS"]) == "CONFIRMED" and str(event["TRANSP"]) == "OPAQUE"
    assert str(event["CLASS"]) == "PRIVATE"
    assert str(event["LOCATION"]) == "Clinic, 1 Street, Town"
    assert "Appointment 1" in str(event["DESCRIPTION"])


def test_the_same_entries_give_the_same_bytes():
    entries = [entry(NOW + timedelta(days=1), "Europe/Berlin")]
    first = render_feed(entries, name="x", window=WINDOW)
    assert first == render_feed(entries, name="x", window=WINDOW)


def test_the_fingerprint_changes_with_any_entry_and_the_name_only():
    base = [entry(NOW + timedelta(days=1), "Europe/Berlin")]
    moved = [entry(NOW + timedelta(days=1, hours=1), "Europe/Berlin")]
    resequenced = [entry(NOW + timedelta(days=1), "Europe/Berlin", sequence=1)]
    later = (WINDOW[0] + timedelta(hours=5), WINDOW[1] + timedelta(hours=5))
    assert fingerprint(base, name="x", window=WINDOW) == fingerprint(list(base), name="x", window=later)
    others = {fingerprint(e, name="x", window=WINDOW) for e in (moved, resequenced, [])}
    others.add(fingerprint(base, name="y", window=WINDOW))
    assert len(others) == 4 and fingerprint(base, name="x", window=WINDOW) not in others
