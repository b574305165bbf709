"""The appointment list's filter and patient-name search: every section narrowed, the filter kept by the poll,
"show more" and real-time refreshes (it rides in the state token) and in the screen's URL, on SQLite and
PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event, select, text

from doctordesk.domain.appointments.status import Status
from doctordesk.screens.protocol import apply
from doctordesk.services.uow import unit_of_work
from doctordesk.store.tables import Appointment, Patient, PatientNameWord
from tests.integration.screens.test_list_sections import _insert, _more_link, _row, _row_ids, _section

SECTIONS = ("needs-decision", "waiting", "upcoming", "past")


def _all_rows(elements: list[dict[str, Any]]) -> list[int]:
    return [a for key in SECTIONS for a in _row_ids(_section(elements, key))]


async def _new_patient(runtime: Any, name: str) -> int:
    async with unit_of_work(runtime) as uow:
        p = Patient(name=name)
        uow.session.add(p)
        await uow.session.flush()
        return p.id


async def _appointments_of(runtime: Any, demo: Any, patient_id: int, starts: list[Any], status: Status) -> list[int]:
    now = runtime.clock.now()
    rows = [{**_row(demo, start=s, status=status, now=now), "patient_id": patient_id} for s in starts]
    return await _insert(runtime, rows)


async def _put(client: Any, headers: dict[str, str], **query: str) -> dict[str, Any]:
    response = await client.put("/profile/appointments", params=query, headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def _patch(client: Any, endpoint: str, headers: dict[str, str], state: str) -> dict[str, Any]:
    response = await client.patch(endpoint, headers={**headers, "X-Screen-State": state})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_a_name_search_matches_the_start_of_any_name_word_ignoring_case_and_accents(
    client, login, demo, runtime, clock
):
    now = clock.now()
    jorg = await _new_patient(runtime, "Jörg Meyer-Müller")
    starts = [now + timedelta(days=3), now - timedelta(days=3)]
    mine = await _appointments_of(runtime, demo, jorg, starts, Status.APPROVED)
    doctor = await login("doctor1")
    for search in ("müller", "MULL", "jorg", "meyer", "jörg mü"):
        page = await _put(client, doctor.headers, q=search)
        assert sorted(_all_rows(page["elements"])) == sorted(mine), search
    for search in ("ller", "jorgx", "jorg schmidt"):
        page = await _put(client, doctor.headers, q=search)
        assert _all_rows(page["elements"]) == [], search
        assert _section(page["elements"], "past")["children"][0]["value"] == "Nothing matches the filter."


async def test_renaming_a_patient_moves_them_in_the_search(client, login, demo, runtime, clock):
    pid = await _new_patient(runtime, "Anna Alt")
    [a] = await _appointments_of(runtime, demo, pid, [clock.now() + timedelta(days=2)], Status.REQUESTED)
    async with unit_of_work(runtime) as uow:
        patient = await uow.session.get(Patient, pid)
        assert patient is not None
        patient.name = "Anna Neu"
    doctor = await login("doctor1")
    assert a in _all_rows((await _put(client, doctor.headers, q="neu"))["elements"])
    assert a not in _all_rows((await _put(client, doctor.headers, q="alt"))["elements"])
    async with runtime.db.read() as session:
        words = set(await session.scalars(select(PatientNameWord.word).where(PatientNameWord.patient_id == pid)))
    assert words == {"anna", "neu"}


async def test_a_status_filter_keeps_only_that_status_in_every_section(client, login, demo, runtime, clock):
    doctor = await login("doctor1")
    for status in ("requested", "approved", "declined", "canceled", "completed", "pending-response"):
        page = await _put(client, doctor.headers, status=status)
        statuses = {
            c["props"]["status"]
            for key in SECTIONS
            for r in _section(page["elements"], key).get("children", [])
            if r["type"] == "Row"
            for c in r["children"]
            if c["id"].startswith("status-")
        }
        assert statuses <= {status}, (status, statuses)
    async with runtime.db.read() as session:
        declined = set(
            await session.scalars(
                select(Appointment.id).where(
                    Appointment.doctor_id == demo.users["doctor1"], Appointment.status == int(Status.DECLINED)
                )
            )
        )
    assert declined
    page = await _put(client, doctor.headers, status="declined")
    assert set(_all_rows(page["elements"])) == declined


async def test_a_date_range_keeps_the_days_from_first_to_last_in_the_doctors_time_zone(
    client, login, demo, runtime, clock
):
    now = clock.now()
    pid = await _new_patient(runtime, "Rita Range")
    base = (now + timedelta(days=40)).replace(hour=12, minute=0, second=0, microsecond=0)
    starts = [base + timedelta(days=d) for d in range(5)]
    ids = await _appointments_of(runtime, demo, pid, starts, Status.APPROVED)
    doctor = await login("doctor1")
    first, last = starts[1].date().isoformat(), starts[3].date().isoformat()
    page = await _put(client, doctor.headers, **{"from": first, "to": last, "q": "rita"})
    assert _all_rows(page["elements"]) == ids[1:4]
    assert page["endpoint"] == f"/profile/appointments?from={first}&to={last}&q=rita"


async def test_the_filter_form_navigates_to_the_lists_url_and_bad_input_is_refused_per_field(client, login):
    doctor = await login("doctor1")
    ok = await client.patch(
        "/profile/appointments/filter",
        data={"status": "approved", "from": "2026-01-01", "to": "", "q": "Maria S"},
        headers=doctor.headers,
    )
    assert ok.status_code == 200, ok.text
    assert ok.json()["navigate"] == "/profile/appointments?status=approved&from=2026-01-01&q=Maria+S"
    bad = await client.patch(
        "/profile/appointments/filter",
        data={"status": "lost", "from": "2026-02-30", "to": "2026-01-01", "q": "x"},
        headers=doctor.headers,
    )
    assert bad.status_code == 422
    assert bad.json()["code"] == "FIELDS_VALIDATION_ERROR"
    assert set(bad.json()["fields"]) == {"status", "from"}
    put = await client.put("/profile/appointments", params={"from": "yesterday"}, headers=doctor.headers)
    assert put.status_code == 422 and set(put.json()["fields"]) == {"from"}


async def test_poll_refresh_and_show_more_keep_the_filter_from_the_state_token(client, login, demo, runtime, clock):
    runtime.settings.list_page_size = 3
    now = clock.now()
    pid = await _new_patient(runtime, "Paula Paging")
    past = [now - timedelta(days=2 + i) for i in range(8)]
    mine = await _appointments_of(runtime, demo, pid, past, Status.COMPLETED)
    # Other patients' history in between: never shown while the search is on.
    await _insert(runtime, [_row(demo, start=now - timedelta(days=2 + i, hours=5), status=Status.COMPLETED, now=now)
                            for i in range(10)])  # fmt: skip
    doctor = await login("doctor1")
    page = await _put(client, doctor.headers, q="paula")
    elements, state = page["elements"], page["state"]
    assert _row_ids(_section(elements, "past")) == mine[:3]
    while (link := _more_link(_section(elements, "past"))) is not None and link.get("visible") is not False:
        update = await _patch(client, link["action"]["endpoint"], doctor.headers, state)
        elements, state = apply(elements, update["patches"]), update["state"]
    assert _row_ids(_section(elements, "past")) == mine  # every one of hers, newest first, nobody else's

    # Appointments arrive: the searched patient's shows up on the poll, another patient's does not.
    [hers] = await _appointments_of(runtime, demo, pid, [now + timedelta(days=5)], Status.REQUESTED)
    await _insert(runtime, [_row(demo, start=now + timedelta(days=6), status=Status.REQUESTED, now=now)])
    # Written behind the service's back (no event): seen once the page outlives the safety net.
    clock.advance(timedelta(seconds=runtime.settings.screen_max_age_seconds))
    update = await _patch(client, "/profile/appointments", doctor.headers, state)
    elements, state = apply(elements, update["patches"]), update["state"]
    assert _row_ids(_section(elements, "needs-decision")) == [hers]
    assert _row_ids(_section(elements, "past")) == mine  # the window is kept too

    # An action taken on the list (dismissing notices) answers with the filtered list.
    update = await _patch(client, "/profile/appointments", doctor.headers, state)
    response = await client.post("/profile/notices/dismiss", headers={**doctor.headers, "X-Screen-State": state})
    assert response.status_code == 200, response.text
    elements = apply(elements, response.json()["patches"])
    assert _all_rows(elements) == [hers, *mine]


@pytest.mark.slow
async def test_a_name_search_reads_index_ranges_not_the_doctors_whole_history(client, login, demo, runtime, clock):
    """20,000 appointments of 2,000 patients: searching one patient's name reads the name index and the
    appointments by (doctor, patient) or (patient) ranges; no statement of the PUT scans a table."""
    now = clock.now()
    async with runtime.db.transaction() as session:
        patients = [Patient(name=f"Crowd{i:04d} Person") for i in range(2000)]
        session.add_all(patients)
        await session.flush()
        crowd = [p.id for p in patients]
    rows = [
        {
            **_row(demo, start=now - timedelta(hours=1 + i), status=Status.COMPLETED, now=now),
            "patient_id": crowd[i % 2000],
        }
        for i in range(20_000)
    ]
    await _insert(runtime, rows)
    target = await _new_patient(runtime, "Quentin Quist")
    mine = await _appointments_of(
        runtime, demo, target, [now - timedelta(days=3), now + timedelta(days=3)], Status.COMPLETED
    )
    async with runtime.db.transaction() as session:
        await session.execute(text("ANALYZE"))

    statements: list[tuple[str, Any]] = []

    def capture(_conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, _many: bool) -> None:
        if "appointments" in statement and "patient_id IN" in statement:
            statements.append((statement, parameters))

    engine = runtime.db.screen_read_engine.sync_engine  # the list's reads (on SQLite its own engine)
    event.listen(engine, "before_cursor_execute", capture)
    try:
        doctor = await login("doctor1")
        page = await _put(client, doctor.headers, q="quis")
    finally:
        event.remove(engine, "before_cursor_execute", capture)
    assert sorted(_all_rows(page["elements"])) == sorted(mine)
    assert statements

    explain = "EXPLAIN QUERY PLAN " if runtime.db.is_sqlite else "EXPLAIN "
    async with runtime.db.read() as session:
        connection = await session.connection()
        for statement, parameters in statements:
            plan = " | ".join(str(r[-1]) for r in await connection.exec_driver_sql(explain + statement, parameters))
            assert "ix_appointments" in plan, plan
            assert "SCAN appointments" not in plan and "Seq Scan on appointments" not in plan, plan


def _find(elements: list[dict[str, Any]], id_: str) -> dict[str, Any] | None:
    for e in elements:
        if e["id"] == id_:
            return e
        found = _find(e.get("children", []), id_)
        if found:
            return found
    return None


async def test_the_active_filter_is_shown_as_chips_each_leading_to_the_list_without_its_part(client, login):
    doctor = await login("doctor1")
    plain = await _put(client, doctor.headers)
    chips = _find(plain["elements"], "filter-chips")
    assert chips is not None and chips.get("visible", True) is False  # no filter, no chips
    assert _find(plain["elements"], "filters")["props"] == {"fold": True}  # type: ignore[index]
    page = await _put(client, doctor.headers, status="approved", **{"from": "2026-12-01", "to": "2026-12-05"}, q="Anna")
    chips = _find(page["elements"], "filter-chips")
    assert chips is not None and chips.get("visible", True) is True
    parts = {c["id"]: c for c in chips["children"]}
    assert parts["chip-status"]["label"] == "Status: Approved"
    assert parts["chip-from"]["label"] == "From 01/12/2026" and parts["chip-to"]["label"] == "To 05/12/2026"
    assert parts["chip-q"]["label"] == "Patient: Anna"
    assert parts["chip-q"]["props"]["chip"] == "Remove from the filter: Patient: Anna"
    ends = {ref: c["action"]["endpoint"] for ref, c in parts.items()}
    assert ends["chip-status"] == "/profile/appointments?from=2026-12-01&to=2026-12-05&q=Anna"
    assert ends["chip-from"] == "/profile/appointments?status=approved&to=2026-12-05&q=Anna"
    assert ends["chip-to"] == "/profile/appointments?status=approved&from=2026-12-01&q=Anna"
    assert ends["chip-q"] == "/profile/appointments?status=approved&from=2026-12-01&to=2026-12-05"
    assert ends["clear-filter"] == "/profile/appointments"
    german = {**doctor.headers, "Accept-Language": "de"}
    page = await _put(client, german, status="approved", q="Anna")
    parts = {c["id"]: c for c in _find(page["elements"], "filter-chips")["children"]}  # type: ignore[index]
    assert parts["chip-status"]["label"] == "Status: Zugesagt"
    assert parts["chip-q"]["props"]["chip"] == "Aus dem Filter entfernen: Patient: Anna"
