"""The appointment list's rows are built once per what they show (the view, the viewer's role, the language, whether
it is today) and reused by later renders: a reused row is exactly the row built anew, and anything a row shows that
changes gets a row of its own."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from doctordesk import i18n
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.appointments.views import AppointmentView, Party, Place
from doctordesk.domain.roles import Actor, Role
from doctordesk.screens.appointment_list import _row, _Rows, row

NOW = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)
VIEW = AppointmentView(
    id=41,
    status=Status.APPROVED,
    start=NOW + timedelta(hours=3),
    duration_minutes=30,
    doctor=Party(2, "Dr. Anna Berger"),
    location=Place(1, "Berlin Mitte Clinic", "Europe/Berlin"),
    patient=Party(9, "Jonas Weber"),
    service="consultation",
    chat_enabled=True,
    disclaimer_required=False,
    prescription_needed=False,
    version=3,
    updated_at=NOW,
)
DOCTOR = Actor(user_id=2, username="doctor1", role=Role.DOCTOR, display_name="Dr. Anna Berger")
PATIENT = Actor(user_id=30, username="patient1", role=Role.PATIENT, display_name="Jonas Weber", patient_id=9)


def by_id(element: object) -> dict[str, object]:
    json = element.to_json()  # type: ignore[attr-defined]
    return {c["id"]: c for c in json["children"]}


def test_a_row_built_again_is_the_row_reused_and_equals_a_fresh_build() -> None:
    first = row(VIEW, DOCTOR, now=NOW)
    assert row(VIEW, DOCTOR, now=NOW) is first
    assert first == _row(VIEW, Role.DOCTOR, today=True)


def test_what_a_row_shows_changing_gives_a_new_row() -> None:
    shown = by_id(row(VIEW, DOCTOR, now=NOW))
    unread = by_id(row(replace(VIEW, unread=2), DOCTOR, now=NOW))
    assert shown["unread-41"].get("visible") is False and unread["unread-41"]["value"] == "2"
    canceled = by_id(row(replace(VIEW, status=Status.CANCELED), DOCTOR, now=NOW))
    assert canceled["status-41"]["value"] != shown["status-41"]["value"]
    renamed = by_id(row(replace(VIEW, patient=Party(9, "Jonas Weber-Lang")), DOCTOR, now=NOW))
    assert renamed["patient-41"]["value"] == "Jonas Weber-Lang"
    tomorrow = by_id(row(VIEW, DOCTOR, now=NOW - timedelta(days=1)))
    assert shown["today-41"].get("visible", True) is True and tomorrow["today-41"]["visible"] is False


def test_another_role_or_language_never_gets_a_row_built_for_someone_else() -> None:
    doctors = by_id(row(VIEW, DOCTOR, now=NOW))
    patients = by_id(row(VIEW, PATIENT, now=NOW))
    assert "patient-41" in doctors and "review-41" in doctors
    assert "patient-41" not in patients and "doctor-41" in patients and "review-41" not in patients
    i18n.use("de")
    try:
        german = by_id(row(VIEW, DOCTOR, now=NOW))
    finally:
        i18n.use("en")
    assert german["time-41"]["value"] != doctors["time-41"]["value"]
    assert german == by_id(_row_in("de"))


def _row_in(language: str) -> object:
    i18n.use(language)
    try:
        return _row(VIEW, Role.DOCTOR, today=True)
    finally:
        i18n.use("en")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def views(count: int, first: int = 1) -> list[AppointmentView]:
    return [replace(VIEW, id=n) for n in range(first, first + count)]


def test_rows_in_use_are_kept_beyond_the_least_size_while_lists_come_back_for_them() -> None:
    clock = Clock()
    rows = _Rows(least=10, most=100, idle_seconds=600, clock=clock)
    shown = views(40)
    first = {v.id: rows.get(v, Role.DOCTOR, today=False) for v in shown}
    for _minute in range(5):  # every list renders again once a minute: every row is reused, none rebuilt
        clock.now += 60
        assert all(rows.get(v, Role.DOCTOR, today=False) is first[v.id] for v in shown)
    assert len(rows) == 40


def test_rows_nobody_used_for_a_while_are_let_go_down_to_the_least_size() -> None:
    clock = Clock()
    rows = _Rows(least=10, most=100, idle_seconds=600, clock=clock)
    old = views(40)
    for v in old:
        rows.get(v, Role.DOCTOR, today=False)
    clock.now += 601
    fresh = views(5, first=1000)
    for v in fresh:
        rows.get(v, Role.DOCTOR, today=False)
    assert len(rows) == 10  # the five in use and the five most recent of the idle ones (the least kept)
    kept = rows.get(fresh[0], Role.DOCTOR, today=False)
    assert rows.get(fresh[0], Role.DOCTOR, today=False) is kept


def test_never_more_rows_than_the_most() -> None:
    clock = Clock()
    rows = _Rows(least=10, most=50, idle_seconds=600, clock=clock)
    shown = views(80)
    built = [rows.get(v, Role.DOCTOR, today=False) for v in shown]
    assert len(rows) == 50
    assert rows.get(shown[-1], Role.DOCTOR, today=False) is built[-1]  # the most recent are kept
    assert rows.get(shown[0], Role.DOCTOR, today=False) is not built[0]  # the oldest was let go and built again
