"""Outside events' transitions and free times, as pure rules."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import pytest

from doctordesk.domain.appointments.decisions import Trigger, can_decide, next_status, outside_next_status
from doctordesk.domain.appointments.status import Status, codes_for_name
from doctordesk.domain.errors import InvalidTransition
from doctordesk.domain.integration import Integration, Scope, body_hash, needs_last_use
from doctordesk.domain.scheduling.free_times import FreeTimeQuery, free_starts
from doctordesk.domain.scheduling.suggestions import DEFAULT_HORIZON, Busy, ExceptionKind, Hours, HoursException

OPEN = [Status.REQUESTED, Status.APPROVED, Status.PENDING_RESPONSE, Status.PENDING_RESPONSE_COVERAGE_RISK]
CLOSED = [Status.DECLINED, Status.CANCELED, Status.COMPLETED, Status.NO_SHOW]


def test_no_show_is_status_7_named_no_show_and_final():
    assert int(Status.NO_SHOW) == 7 and Status.NO_SHOW.public_name == "no-show"
    assert Status.NO_SHOW.is_final and not can_decide(Status.NO_SHOW)
    assert codes_for_name("no-show") == [7]


@pytest.mark.parametrize("status", OPEN)
def test_an_open_appointment_can_be_canceled_or_asked_to_move(status):
    assert outside_next_status(status, Trigger.CANCEL, started=False) is Status.CANCELED
    assert outside_next_status(status, Trigger.RESCHEDULE_REQUEST, started=False) is Status.REQUESTED


@pytest.mark.parametrize("status", CLOSED)
@pytest.mark.parametrize("trigger", [Trigger.CANCEL, Trigger.RESCHEDULE_REQUEST, Trigger.COMPLETE, Trigger.NO_SHOW])
def test_no_outside_event_changes_a_closed_appointment(status, trigger):
    with pytest.raises(InvalidTransition):
        outside_next_status(status, trigger, started=True)


@pytest.mark.parametrize("trigger", [Trigger.COMPLETE, Trigger.NO_SHOW])
def test_only_an_approved_appointment_whose_time_came_is_completed_or_a_no_show(trigger):
    for status in (Status.REQUESTED, Status.PENDING_RESPONSE):
        with pytest.raises(InvalidTransition):
            outside_next_status(status, trigger, started=True)
    with pytest.raises(InvalidTransition, match="not started"):
        outside_next_status(Status.APPROVED, trigger, started=False)
    expected = Status.COMPLETED if trigger is Trigger.COMPLETE else Status.NO_SHOW
    assert outside_next_status(Status.APPROVED, trigger, started=True) is expected


def test_a_doctor_decision_on_a_no_show_is_refused():
    with pytest.raises(InvalidTransition):
        next_status(Status.NO_SHOW, Trigger.APPROVE)


def test_the_body_hash_ignores_key_order_and_sees_values():
    assert body_hash({"a": 1, "b": [1, 2]}) == body_hash({"b": [1, 2], "a": 1})
    assert body_hash({"a": 1}) != body_hash({"a": 2})


def test_last_use_is_written_at_most_once_a_minute():
    now = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)
    assert needs_last_use(None, now)
    assert not needs_last_use(now - timedelta(seconds=59), now)
    assert needs_last_use(now - timedelta(seconds=60), now)


def test_a_caller_has_only_its_scopes():
    caller = Integration(1, "portal", 2, frozenset({Scope.APPOINTMENTS_READ}))
    assert caller.has(Scope.APPOINTMENTS_READ) and not caller.has(Scope.APPOINTMENTS_WRITE)
    assert caller.audit_details() == {"service_account": {"id": 1, "name": "portal", "key_id": 2}}


# --- free times -----------------------------------------------------------------------------------------------

NOW = datetime(2026, 3, 1, 0, 0, tzinfo=UTC)
BERLIN_HOURS = [Hours(weekday, time(8, 0), time(10, 0)) for weekday in range(7)]


def query(first: date, last: date, *, duration: int = 30, step: int = 30, tz: str = "Europe/Berlin") -> FreeTimeQuery:
    return FreeTimeQuery(1, 1, tz, first, last, duration, step)


def local(moment: datetime, tz: str = "Europe/Berlin") -> str:
    from zoneinfo import ZoneInfo

    return moment.astimezone(ZoneInfo(tz)).strftime("%Y-%m-%d %H:%M")


def test_free_starts_step_through_work_hours_in_local_time():
    starts = free_starts(
        query(date(2026, 3, 2), date(2026, 3, 2)), now=NOW, horizon=DEFAULT_HORIZON, hours=BERLIN_HOURS, busy=[]
    )
    assert [local(s) for s in starts] == [
        "2026-03-02 08:00",
        "2026-03-02 08:30",
        "2026-03-02 09:00",
        "2026-03-02 09:30",
    ]


def test_free_starts_keep_local_hours_across_the_clock_change():
    # Berlin moves to summer time on Sunday 29 March 2026: 08:00 local is 07:00 UTC before, 06:00 UTC after.
    starts = free_starts(
        query(date(2026, 3, 28), date(2026, 3, 29)), now=NOW, horizon=DEFAULT_HORIZON, hours=BERLIN_HOURS, busy=[]
    )
    firsts = [s for s in starts if local(s).endswith("08:00")]
    assert [s.hour for s in firsts] == [7, 6]


def test_a_start_that_does_not_exist_on_the_spring_forward_day_is_skipped():
    night = [Hours(6, time(1, 0), time(4, 0))]  # Sunday 01:00-04:00: 02:00-03:00 does not exist on 29 March
    starts = free_starts(
        query(date(2026, 3, 29), date(2026, 3, 29), duration=30, step=30),
        now=NOW,
        horizon=DEFAULT_HORIZON,
        hours=night,
        busy=[],
    )
    assert "2026-03-29 02:00" not in [local(s) for s in starts]
    assert "2026-03-29 02:30" not in [local(s) for s in starts]
    assert all(s.minute in (0, 30) for s in starts)


def test_free_starts_leave_out_the_lead_time_and_busy_times():
    now = datetime(2026, 3, 2, 6, 0, tzinfo=UTC)  # 07:00 Berlin: nothing before 09:00
    busy = [Busy(1, datetime(2026, 3, 2, 8, 15, tzinfo=UTC), datetime(2026, 3, 2, 8, 45, tzinfo=UTC), "x")]
    starts = free_starts(
        query(date(2026, 3, 2), date(2026, 3, 2)), now=now, horizon=DEFAULT_HORIZON, hours=BERLIN_HOURS, busy=busy
    )
    # 09:00 and 09:30 local are 08:00 and 08:30 UTC: both overlap the busy 08:15-08:45.
    assert starts == []
    other_doctor = [Busy(2, busy[0].start, busy[0].end, "x")]
    assert (
        len(
            free_starts(
                query(date(2026, 3, 2), date(2026, 3, 2)),
                now=now,
                horizon=DEFAULT_HORIZON,
                hours=BERLIN_HOURS,
                busy=other_doctor,
            )
        )
        == 2
    )


def test_a_visit_must_fit_inside_the_block():
    starts = free_starts(
        query(date(2026, 3, 2), date(2026, 3, 2), duration=90, step=30),
        now=NOW,
        horizon=DEFAULT_HORIZON,
        hours=BERLIN_HOURS,
        busy=[],
    )
    assert [local(s) for s in starts] == ["2026-03-02 08:00", "2026-03-02 08:30"]


def test_free_starts_follow_holidays_absences_and_extra_days():
    holiday = HoursException(date(2026, 3, 2), ExceptionKind.HOLIDAY)
    away = HoursException(date(2026, 3, 3), ExceptionKind.ABSENCE, None, time(8, 30), time(9, 30))
    extra = HoursException(date(2026, 3, 4), ExceptionKind.EXTRA, 1, time(14, 0), time(15, 0))
    elsewhere = HoursException(date(2026, 3, 5), ExceptionKind.HOLIDAY, 2)  # another location
    starts = free_starts(
        query(date(2026, 3, 2), date(2026, 3, 5)),
        now=NOW,
        horizon=DEFAULT_HORIZON,
        hours=BERLIN_HOURS,
        busy=[],
        exceptions=[holiday, away, extra, elsewhere],
    )
    shown = [local(s) for s in starts]
    assert not any(s.startswith("2026-03-02") for s in shown)
    assert [s for s in shown if s.startswith("2026-03-03")] == ["2026-03-03 08:00", "2026-03-03 09:30"]
    assert "2026-03-04 14:00" in shown and "2026-03-04 14:30" in shown
    assert len([s for s in shown if s.startswith("2026-03-05")]) == 4
