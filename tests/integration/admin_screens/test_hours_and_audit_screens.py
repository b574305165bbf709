"""The work-hours and audit-trail administration screens (docs/administration.md), on SQLite and PostgreSQL: a
change that leaves approved appointments outside the hours is listed and applied only when confirmed, never moving
them; exceptions are added and removed; the audit trail filters and pages and names its exports."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from doctordesk.screens.protocol import walk
from doctordesk.store.admin_tables import WorkHoursException
from doctordesk.store.tables import Appointment, AuditLog, WorkHours
from tests.support.review import APPROVED, aid

HOURS = "/profile/admin/hours"
AUDIT = "/profile/admin/audit"


def by_id(elements: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in walk(elements)}


def form_of(page: dict[str, Any], section: str) -> dict[str, str]:
    elements = by_id(page["elements"])
    return {
        e["name"]: "" if e.get("value") is None else str(e["value"]).lower() if isinstance(e.get("value"), bool)
        else str(e["value"])
        for e in walk([elements[section]]) if e.get("name")
    }  # fmt: skip


async def hours_rows(runtime, doctor_id: int, location_id: int) -> list[tuple[int, str, str]]:
    async with runtime.db.read() as s:
        rows = (
            await s.scalars(
                select(WorkHours).where(WorkHours.doctor_id == doctor_id, WorkHours.location_id == location_id)
            )
        ).all()
    return sorted((r.weekday, r.start_time.isoformat(), r.end_time.isoformat()) for r in rows)


async def test_the_screen_shows_the_weekly_hours_of_the_chosen_doctor_and_location(client, login, demo, runtime):
    admin = await login("admin")
    doctor, berlin = demo.users["doctor1"], demo.locations["berlin"]
    page = (await client.put(f"{HOURS}?doctor={doctor}&location={berlin}", headers=admin.headers)).json()
    form = form_of(page, "weekly")
    stored = await hours_rows(runtime, doctor, berlin)
    shown = sorted(
        (int(form[f"weekday~{i}"]), form[f"opens~{i}"] + ":00", form[f"closes~{i}"] + ":00")
        for i in range(1, 60) if form.get(f"weekday~{i}")
    )  # fmt: skip
    assert shown == stored and stored
    chosen = await client.patch(f"{HOURS}/choose", headers=admin.headers, data={"doctor": str(doctor), "location": "x"})
    assert chosen.json()["navigate"] == f"{HOURS}?doctor={doctor}"


async def test_hours_that_leave_an_approved_appointment_outside_are_listed_and_applied_only_when_confirmed(
    client, login, demo, runtime
):
    admin = await login("admin")
    approved = aid(demo, APPROVED)
    async with runtime.db.read() as s:
        a = await s.get(Appointment, approved)
    url = f"{HOURS}?doctor={a.doctor_id}&location={a.location_id}"
    page = (await client.put(url, headers=admin.headers)).json()
    before = await hours_rows(runtime, a.doctor_id, a.location_id)
    form = {k: v for k, v in form_of(page, "weekly").items() if not k.startswith(("weekday~", "opens~", "closes~"))}
    form |= {"weekday~1": "6", "opens~1": "10:00", "closes~1": "12:00"}  # Sundays only
    headers = {**admin.headers, "X-Screen-State": page["state"]}
    first = await client.post(f"{HOURS}/save", headers=headers, data=form)
    assert first.status_code == 200, first.text
    patches = first.json()["patches"]
    assert {"op": "update", "id": "conflicts", "set": {"visible": True}} in patches
    assert f"conflict-{approved}" in str(patches)
    assert await hours_rows(runtime, a.doctor_id, a.location_id) == before
    confirm = next(p for p in patches if p["id"] == "confirm-change")["set"]["action"]
    assert confirm["endpoint"] == f"{HOURS}/save?confirm=true"
    second = await client.post(confirm["endpoint"], headers=headers, data=form)
    assert second.status_code == 200, second.text
    assert await hours_rows(runtime, a.doctor_id, a.location_id) == [(6, "10:00:00", "12:00:00")]
    async with runtime.db.read() as s:
        still = await s.get(Appointment, approved)
    assert still.start_at == a.start_at and still.status == a.status  # never moved


async def test_bad_hours_are_refused_on_their_line_and_change_nothing(client, login, demo, runtime):
    admin = await login("admin")
    doctor, berlin = demo.users["doctor1"], demo.locations["berlin"]
    before = await hours_rows(runtime, doctor, berlin)
    base = {"doctor": str(doctor), "location": str(berlin)}
    cases = [
        ({"weekday~2": "1", "opens~2": "9", "closes~2": "10:00"}, "opens~2"),
        ({"weekday~1": "9", "opens~1": "09:00", "closes~1": "10:00"}, "weekday~1"),
        ({"weekday~3": "1", "opens~3": "12:00", "closes~3": "10:00"}, "weekday~3"),
        ({"weekday~1": "١", "opens~1": "09:00", "closes~1": "10:00"}, "weekday~1"),
    ]
    for lines, field in cases:
        response = await client.post(f"{HOURS}/save", headers=admin.headers, data=base | lines)
        assert response.status_code == 422, (lines, response.text)
        assert field in response.json()["fields"], response.json()
    assert await hours_rows(runtime, doctor, berlin) == before


async def test_an_exception_is_added_and_removed_from_the_screen(client, login, demo, runtime):
    admin = await login("admin")
    doctor = demo.users["doctor2"]
    page = (await client.put(f"{HOURS}?doctor={doctor}", headers=admin.headers)).json()
    form = form_of(page, "new-exception") | {"day": "2027-01-01", "kind": "holiday", "note": "New Year"}
    added = await client.post(f"{HOURS}/exceptions/add", headers=admin.headers, data=form)
    assert added.status_code == 200, added.text
    async with runtime.db.read() as s:
        row = await s.scalar(select(WorkHoursException).where(WorkHoursException.note == "New Year"))
    assert row is not None and row.doctor_id == doctor
    fresh = by_id((await client.put(f"{HOURS}?doctor={doctor}", headers=admin.headers)).json()["elements"])
    assert f"exception-{row.id}" in fresh
    removed = await client.post(f"{HOURS}/exceptions/{row.id}/remove", headers=admin.headers)
    assert removed.status_code == 200, removed.text
    bad = await client.post(f"{HOURS}/exceptions/add", headers=admin.headers, data=form | {"day": "2027-02-30"})
    assert bad.status_code == 422 and "day" in bad.json()["fields"]


async def test_the_audit_trail_filters_pages_and_offers_its_exports(client, login, demo, runtime):
    admin = await login("admin")
    page = (await client.put(AUDIT, headers=admin.headers)).json()
    elements = by_id(page["elements"])
    async with runtime.db.read() as s:
        total = len((await s.scalars(select(AuditLog.id))).all())
    rows = [e for e in walk(page["elements"]) if e["type"] == "Row"]
    assert len(rows) == min(total, 50)
    assert elements["export-csv"]["props"]["href"] == "/admin/audit/export?format=csv"
    chosen = await client.patch(
        f"{AUDIT}/filter",
        headers=admin.headers,
        data={"actor": "", "appointment": str(aid(demo, APPROVED)), "action": "", "from": "2026-01-01", "to": ""},
    )
    assert chosen.status_code == 200, chosen.text
    target = chosen.json()["navigate"]
    assert "appointment=" in target and "from=2026-01-01" in target
    filtered = (await client.put(target, headers=admin.headers)).json()
    about = [e["value"] for e in walk(filtered["elements"]) if e["id"].startswith("audit-entity-")]
    assert set(about) <= {f"appointment {aid(demo, APPROVED)}"}
    export = by_id(filtered["elements"])["export-csv"]["props"]["href"]
    downloaded = await client.get(export, headers=admin.headers)
    assert downloaded.status_code == 200
    assert len(downloaded.text.strip().splitlines()) == 1 + len(about)  # the header and the same rows
    bad = await client.patch(f"{AUDIT}/filter", headers=admin.headers, data={"actor": "+1"})
    assert bad.status_code == 422 and "actor" in bad.json()["fields"]
    assert (await client.put(f"{AUDIT}?cursor=nonsense", headers=admin.headers)).status_code == 422
    doctor = await login("doctor1")
    assert (await client.put(AUDIT, headers=doctor.headers)).status_code == 404


async def test_the_audit_trail_reads_as_names_and_changes_and_filters_by_a_person_chosen_by_name(client, login, demo):
    admin = await login("admin")
    doctor = demo.users["doctor1"]
    changed = await client.post(
        f"/admin/doctors/{doctor}", json={"timezone": "Europe/London", "can_prescribe": False}, headers=admin.headers
    )
    assert changed.status_code == 200, changed.text
    page = (await client.put(f"{AUDIT}?action=admin.doctor-updated", headers=admin.headers)).json()
    (row,) = [e for e in walk(page["elements"]) if e["type"] == "Row"]
    entry = {e["id"].rsplit("-", 1)[0]: e for e in row["children"]}
    assert entry["audit-entity"]["value"] == "User: Dr. Anna Berger"  # a name, not "User 2"
    assert entry["audit-actor"]["value"] != f"user {demo.users['admin']}"
    assert entry["audit-at"]["value"].endswith(" CET")  # the clinic's zone, not UTC
    details = entry["audit-details"]
    assert details["type"] == "Text" and "{" not in details["value"]  # no raw JSON
    lines = details["value"].splitlines()
    assert "Time zone: Europe/Berlin → Europe/London" in lines
    assert "Can prescribe: yes → no" in lines
    assert not any(line.startswith("Name:") for line in lines)  # unchanged fields are left out
    german = (
        await client.put(f"{AUDIT}?action=admin.doctor-updated", headers={**admin.headers, "Accept-Language": "de"})
    ).json()
    (row,) = [e for e in walk(german["elements"]) if e["type"] == "Row"]
    text = next(e for e in row["children"] if e["id"].startswith("audit-details-"))["value"]
    assert "Zeitzone: Europe/Berlin → Europe/London" in text and "Darf verschreiben: ja → nein" in text
    # The filter offers people by name (and role), never a bare id to type.
    chooser = by_id(page["elements"])["f-actor"]
    assert chooser["type"] == "Combo"
    offered = {o["label"]: o["value"] for o in chooser["options"]}
    assert "Dr. Anna Berger (Doctor)" in offered and offered["Dr. Anna Berger (Doctor)"] == str(doctor)
    chosen = await client.patch(
        f"{AUDIT}/filter", headers=admin.headers,
        data={"actor": offered["Dr. Anna Berger (Doctor)"], "appointment": "", "action": "", "from": "", "to": ""},
    )  # fmt: skip
    filtered = (await client.put(chosen.json()["navigate"], headers=admin.headers)).json()
    who = {e["value"] for e in walk(filtered["elements"]) if e["id"].startswith("audit-actor-")}
    assert who <= {"Dr. Anna Berger"}
    assert by_id(filtered["elements"])["f-actor"]["value"] == str(doctor)
