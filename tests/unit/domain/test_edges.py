"""The next moment time alone changes a screen (``domain/edges.py`` and the screens' own edges), as pure
functions: each edge is the first moment the rule it stands for answers otherwise."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from doctordesk.domain.appointments.list_sections import list_edge, section_of
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.appointments.views import AppointmentView, Party, Place
from doctordesk.domain.edges import (
    earliest,
    expiry_edge,
    midnight,
    next_midnight,
    next_utc_midnight,
    offsets_edge,
    today_edge,
)
from doctordesk.domain.scheduling.free_times import FreeTimeQuery, free_starts, free_starts_edge
from doctordesk.domain.scheduling.suggestions import LEAD_TIME, Hours

NOW = datetime(2026, 3, 28, 22, 30, tzinfo=UTC)
ZONES = ["UTC", "Europe/Berlin", "America/Santiago", "Pacific/Apia", "Asia/Kolkata", "America/St_Johns"]
MICRO = timedelta(microseconds=1)


def view(start: datetime, status: Status = Status.APPROVED, minutes: int = 30, zone: str = "Europe/Berlin"):
    return AppointmentView(
        id=1, status=status, start=start, duration_minutes=minutes, doctor=Party(1, "D"),
        location=Place(1, "L", zone), patient=Party(2, "P"), service="s", chat_enabled=True,
        disclaimer_required=False, prescription_needed=False, version=1, updated_at=start,
    )  # fmt: skip


def is_today(moment: datetime, zone: str, now: datetime) -> bool:
    z = ZoneInfo(zone)
    return moment.astimezone(z).date() == now.astimezone(z).date()


def test_earliest_takes_the_first_moment_after_now_and_none_when_nothing_is_ahead():
    assert earliest([NOW - MICRO, None, NOW + timedelta(hours=2), NOW + MICRO], after=NOW) == NOW + MICRO
    assert earliest([NOW, NOW - timedelta(days=1), None], after=NOW) is None


@settings(max_examples=60, deadline=None)
@given(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2040, 1, 1)), st.sampled_from(ZONES))
def test_the_next_midnight_is_where_the_local_date_turns(naive, zone):
    now = naive.replace(tzinfo=UTC)
    edge = next_midnight(now, zone)
    z = ZoneInfo(zone)
    assert edge > now
    assert (edge - MICRO).astimezone(z).date() == now.astimezone(z).date()
    assert edge.astimezone(z).date() > now.astimezone(z).date()


def test_a_skipped_midnight_begins_the_day_when_the_clocks_jump():
    # Santiago moved its clocks from 24:00 to 01:00 on 2022-09-11 (the local midnight did not exist).
    begins = midnight(date(2022, 9, 11), "America/Santiago")
    z = ZoneInfo("America/Santiago")
    assert (begins - MICRO).astimezone(z).date() == date(2022, 9, 10)
    assert begins.astimezone(z).date() == date(2022, 9, 11)


@settings(max_examples=60, deadline=None)
@given(
    st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2030, 1, 1)),
    st.timedeltas(min_value=timedelta(days=-3), max_value=timedelta(days=3)),
    st.sampled_from(ZONES),
)
def test_today_holds_until_its_edge_and_turns_there(naive, ahead, zone):
    now = naive.replace(tzinfo=UTC)
    moment = now + ahead
    edge = today_edge(moment, zone, now)
    if edge is None:
        assert not is_today(moment, zone, now) and not is_today(moment, zone, now + timedelta(days=4))
        return
    assert edge > now
    assert is_today(moment, zone, edge - MICRO) == is_today(moment, zone, now)
    assert is_today(moment, zone, edge) != is_today(moment, zone, now)


def test_offsets_edge_names_the_first_offset_moment_ahead():
    start = NOW + timedelta(hours=3)
    assert offsets_edge([start], [timedelta(0), LEAD_TIME], NOW) == start - LEAD_TIME
    assert offsets_edge([start], [timedelta(hours=4)], NOW) is None
    assert next_utc_midnight(NOW) == datetime(2026, 3, 29, tzinfo=UTC)


def test_a_hold_frees_its_time_at_the_first_expiry_ahead():
    soon, later = NOW + timedelta(minutes=4), NOW + timedelta(minutes=9)
    assert expiry_edge([later, None, soon, NOW - timedelta(seconds=1)], NOW) == soon
    assert expiry_edge([None, NOW], NOW) is None  # held while ``expires > now``: one expiring now is free already


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.timedeltas(min_value=timedelta(hours=-14), max_value=timedelta(days=3)),
            st.sampled_from([Status.REQUESTED, Status.PENDING_RESPONSE, Status.APPROVED, Status.DECLINED]),
            st.sampled_from([15, 30, 240]),
            st.sampled_from(ZONES),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_nothing_a_list_row_shows_changes_before_the_lists_edge(rows):
    views = [view(NOW + ahead, status, minutes, zone) for ahead, status, minutes, zone in rows]
    ends = [v.end for v in views if v.status is Status.APPROVED and v.start <= NOW < v.end]
    edge = list_edge(views, NOW, under_way_ends=ends)

    def shows(v: AppointmentView, at: datetime) -> tuple[object, ...]:
        return section_of(v, at), is_today(v.start, v.location.timezone, at), v.start <= at < v.end

    if edge is None:
        assert all(shows(v, NOW) == shows(v, NOW + timedelta(days=5)) for v in views)
        return
    assert edge > NOW
    assert all(shows(v, NOW) == shows(v, edge - MICRO) for v in views)
    assert any(shows(v, NOW) != shows(v, edge) for v in views)


def test_free_times_change_at_their_edge_and_not_before():
    q = FreeTimeQuery(doctor_id=1, location_id=1, timezone="Europe/Berlin", first_day=date(2026, 3, 30),
                      last_day=date(2026, 4, 5), duration_minutes=30, step_minutes=30)  # fmt: skip
    hours = [Hours(d, time(9), time(12)) for d in range(5)]
    horizon = timedelta(days=6)
    now = datetime(2026, 3, 30, 5, 10, tzinfo=UTC)
    for _ in range(6):  # several edges in a row: each a change, nothing between them
        edge = free_starts_edge(q, now=now, horizon=horizon, hours=hours)
        assert edge is not None and edge > now

        def free(at: datetime) -> list[datetime]:
            return free_starts(q, now=at, horizon=horizon, hours=hours, busy=[])

        # A strict rule ("less than the lead time ahead") turns just after its moment: the edge may be that early.
        assert free(edge - MICRO) == free(now)
        assert free(edge + MICRO) != free(now)
        now = edge + MICRO
