"""The appointment list and its poll: a PATCH's update set applied to the old page equals a fresh PUT, after real
changes (status changes, new appointments, time passing), on SQLite and PostgreSQL."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.events import (
    ALL_APPOINTMENTS_TOPIC,
    DomainEvent,
    appointment_topic,
    doctor_topic,
    patient_topic,
)
from doctordesk.screens.page_caches import PageCache
from doctordesk.screens.protocol import apply
from doctordesk.services.appointments import list_screen
from doctordesk.services.uow import unit_of_work
from doctordesk.store.tables import Appointment


async def _put(client, headers: dict[str, str]) -> dict[str, Any]:
    response = await client.put("/profile/appointments", headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


async def _poll(client, headers: dict[str, str], state: str) -> dict[str, Any]:
    response = await client.patch("/profile/appointments", headers={**headers, "X-Screen-State": state})
    assert response.status_code == 200, response.text
    return response.json()


def _topics(a: Appointment) -> tuple[str, ...]:
    return (doctor_topic(a.doctor_id), patient_topic(a.patient_id), appointment_topic(a.id), ALL_APPOINTMENTS_TOPIC)


async def change_status(runtime, appointment_id: int, status: Status) -> None:
    async with unit_of_work(runtime) as uow:
        a = await uow.session.get(Appointment, appointment_id)
        assert a is not None
        a.status = int(status)
        a.version += 1
        a.updated_at = runtime.clock.now()
        uow.emit(DomainEvent(EventKind.APPOINTMENTS_IMPORTED, _topics(a), {"id": a.id}))


async def new_appointment(runtime, *, like: int, days: int) -> int:
    async with unit_of_work(runtime) as uow:
        model = await uow.session.get(Appointment, like)
        assert model is not None
        now = runtime.clock.now()
        a = Appointment(
            patient_id=model.patient_id,
            doctor_id=model.doctor_id,
            location_id=model.location_id,
            start_at=now + timedelta(days=days, hours=3),
            duration_minutes=45,
            status=int(Status.REQUESTED),
            version=1,
            created_at=now,
            updated_at=now,
        )
        uow.session.add(a)
        await uow.session.flush()
        uow.emit(DomainEvent(EventKind.APPOINTMENTS_IMPORTED, _topics(a), {"id": a.id}))
        return a.id


def assert_patched_equals_fresh(old: dict[str, Any], update: dict[str, Any], fresh: dict[str, Any]) -> None:
    assert update["kind"] == "update" and update["screen"] == fresh["screen"]
    assert apply(old["elements"], update["patches"]) == fresh["elements"]
    # The new token names the fresh page's content.
    assert update["state"].split(".")[4] == fresh["state"].split(".")[4]


async def test_an_unchanged_poll_returns_an_empty_update_set_with_the_same_state(client, login):
    doctor = await login("doctor1")
    page = await _put(client, doctor.headers)
    update = await _poll(client, doctor.headers, page["state"])
    assert update == {
        "kind": "update",
        "screen": "appointment-list",
        "state": page["state"],
        "timeout": page["timeout"],
        "patches": [],
    }


async def test_the_list_shows_only_the_doctors_own_appointments_with_local_times_and_entry_points(
    client, login, demo, runtime
):
    doctor = await login("doctor3")
    page = await _put(client, doctor.headers)
    async with runtime.db.read() as session:
        own = set(await session.scalars(select(Appointment.id).where(Appointment.doctor_id == demo.users["doctor3"])))
    rows = [e for section in page["elements"][1:] for e in section.get("children", []) if e["type"] == "Row"]
    assert {r["props"]["appointment"] for r in rows} == own
    first = rows[0]
    ids = {c["id"] for c in first["children"]}
    a = first["props"]["appointment"]
    assert {f"time-{a}", f"patient-{a}", f"location-{a}", f"status-{a}", f"review-{a}", f"chat-{a}"} <= ids
    time_element = next(c for c in first["children"] if c["id"] == f"time-{a}")
    assert time_element["value"].endswith(("GMT", "BST"))  # London clinic: local time with its zone


async def test_a_status_change_by_someone_else_reaches_the_poll_as_patches(client, login, demo, runtime):
    doctor = await login("doctor1")
    old = await _put(client, doctor.headers)
    await change_status(runtime, demo.appointments[0], Status.APPROVED)
    update = await _poll(client, doctor.headers, old["state"])
    assert update["patches"] and not any(p["op"] == "reset" for p in update["patches"])
    assert_patched_equals_fresh(old, update, await _put(client, doctor.headers))


async def test_one_doctors_devices_share_a_render_and_each_gets_the_patches_to_a_fresh_page(
    client, login, demo, runtime, monkeypatch
):
    """A change renders the list once for one viewer's clients polling at the same revision (two sign-ins of one
    doctor, two devices); another user polling the same change renders their own."""
    reads = 0
    read_sections = list_screen.read_sections

    async def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal reads
        reads += 1
        return await read_sections(*args, **kwargs)

    monkeypatch.setattr(list_screen, "read_sections", counted)
    phone = {**(await login("doctor1")).headers, "X-Client-Id": "phone"}
    desk = {**(await login("doctor1")).headers, "X-Client-Id": "desk"}
    support = {**(await login("support1")).headers, "X-Client-Id": "support"}
    old = {name: await _put(client, h) for name, h in (("phone", phone), ("desk", desk), ("support", support))}
    await change_status(runtime, demo.appointments[0], Status.APPROVED)
    reads = 0
    on_phone = await _poll(client, phone, old["phone"]["state"])
    on_desk = await _poll(client, desk, old["desk"]["state"])
    assert reads == 1
    for_support = await _poll(client, support, old["support"]["state"])
    assert reads == 2
    assert on_phone["patches"] and on_desk["patches"] and for_support["patches"]
    assert_patched_equals_fresh(old["phone"], on_phone, await _put(client, phone))
    assert_patched_equals_fresh(old["desk"], on_desk, await _put(client, desk))
    assert_patched_equals_fresh(old["support"], for_support, await _put(client, support))
    assert on_phone["state"] == on_desk["state"] != for_support["state"]
    # Each token is its viewer's: the doctor's next poll is unchanged, the support agent's token is no token to them.
    assert (await _poll(client, desk, on_phone["state"]))["patches"] == []
    stranger = await _poll(client, support, on_phone["state"])
    assert [p["op"] for p in stranger["patches"]] == ["reset"]


async def test_a_new_appointment_appears_in_the_poll(client, login, demo, runtime):
    doctor = await login("doctor2")
    old = await _put(client, doctor.headers)
    new_id = await new_appointment(runtime, like=demo.appointments[14], days=1)
    update = await _poll(client, doctor.headers, old["state"])
    assert any(f"appointment-{new_id}" in str(p) for p in update["patches"])
    assert_patched_equals_fresh(old, update, await _put(client, doctor.headers))


async def test_time_passing_beyond_the_max_age_moves_rows_between_sections(client, login, runtime, clock):
    doctor = await login("doctor1")
    old = await _put(client, doctor.headers)
    clock.advance(timedelta(days=2, seconds=runtime.settings.screen_max_age_seconds))
    headers = (await login("doctor1")).headers  # the old token expired meanwhile
    update = await _poll(client, headers, old["state"])
    assert update["patches"]
    assert_patched_equals_fresh(old, update, await _put(client, headers))


async def test_within_the_max_age_and_without_events_the_poll_does_not_render(client, login, runtime, clock):
    doctor = await login("doctor1")
    old = await _put(client, doctor.headers)
    clock.advance(timedelta(seconds=runtime.settings.screen_max_age_seconds - 1))
    update = await _poll(client, doctor.headers, old["state"])
    assert update["patches"] == [] and update["state"] == old["state"]


async def test_an_old_page_the_server_no_longer_knows_is_answered_with_a_reset(client, login, demo, runtime):
    doctor = await login("doctor1")
    old = await _put(client, doctor.headers)
    await change_status(runtime, demo.appointments[1], Status.DECLINED)
    runtime.screens.cache = PageCache()  # as after a restart, or on another instance
    update = await _poll(client, doctor.headers, old["state"])
    assert [p["op"] for p in update["patches"]] == ["reset"]
    assert_patched_equals_fresh(old, update, await _put(client, doctor.headers))


@pytest.mark.parametrize("token", ["", "garbage", "a.b.c.d", "x" * 500, "1.2.3"])
async def test_a_missing_or_malformed_state_token_gets_the_whole_page_as_a_reset(client, login, token):
    doctor = await login("doctor1")
    fresh = await _put(client, doctor.headers)
    response = await client.patch("/profile/appointments", headers={**doctor.headers, "X-Screen-State": token})
    assert response.status_code == 200
    update = response.json()
    assert [p["op"] for p in update["patches"]] == ["reset"]
    assert apply([], update["patches"]) == fresh["elements"]


@pytest.mark.parametrize("username", ["doctor1", "support1", "patient1"])
@pytest.mark.parametrize("layout", ["desktop", "mobile"])
async def test_patches_applied_to_the_old_page_equal_a_fresh_page_through_random_changes(
    client, login, demo, runtime, clock, username, layout
):
    rng = random.Random(f"{username}-{layout}")
    headers = {**(await login(username)).headers, "X-Layout": layout}
    page = await _put(client, headers)
    ids = list(demo.appointments)
    for _ in range(6):
        kind = rng.choice(["status", "status", "new", "time", "cache"])
        if kind == "status":
            await change_status(runtime, rng.choice(ids), rng.choice(list(Status)))
        elif kind == "new":
            ids.append(await new_appointment(runtime, like=rng.choice(demo.appointments), days=rng.randint(-2, 5)))
        elif kind == "time":
            clock.advance(timedelta(hours=rng.randint(1, 30)))
            headers = {**(await login(username)).headers, "X-Layout": layout}
        else:
            runtime.screens.cache = PageCache()
            await change_status(runtime, rng.choice(ids), Status.REQUESTED)
        update = await _poll(client, headers, page["state"])
        fresh = await _put(client, headers)
        assert_patched_equals_fresh(page, update, fresh)
        page = {**page, "elements": apply(page["elements"], update["patches"]), "state": update["state"]}


@pytest.mark.parametrize(
    ("headers", "field"),
    [
        ({"X-Layout": "tablet"}, "X-Layout"),
        ({"X-Client-Id": "bad id!"}, "X-Client-Id"),
        ({"X-Client-Id": "x" * 65}, "X-Client-Id"),
        ({"X-Push-Platform": "windows", "X-Device-Id": "d1"}, "X-Push-Platform"),
    ],
)
@pytest.mark.parametrize("method", ["PUT", "PATCH"])
async def test_bad_screen_headers_are_a_validation_error_naming_the_header(client, login, headers, field, method):
    doctor = await login("doctor1")
    response = await client.request(method, "/profile/appointments", headers={**doctor.headers, **headers})
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == "FIELDS_VALIDATION_ERROR" and field in body["fields"]


async def test_the_mobile_layout_is_honoured_and_case_insensitive(client, login):
    doctor = await login("doctor1")
    page = await _put(client, {**doctor.headers, "X-Layout": "MOBILE"})
    assert page["layout"] == "mobile"


def _rows(page: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for section in page["elements"][1:] for e in section.get("children", []) if e["type"] == "Row"]


def _child(row: dict[str, Any], prefix: str) -> dict[str, Any] | None:
    return next((c for c in row["children"] if c["id"] == f"{prefix}-{row['props']['appointment']}"), None)


async def test_support_agents_see_the_doctor_and_can_chat_but_are_not_offered_decisions(client, login):
    support = await login("support1")
    rows = _rows(await _put(client, support.headers))
    assert rows
    for row in rows:
        assert _child(row, "doctor") is not None and _child(row, "patient") is not None
        assert _child(row, "review") is None  # support cannot decide: no link that ends in "not found"
        assert _child(row, "chat") is not None


async def test_statuses_read_as_words_for_people_and_keep_their_codes_for_clients(client, login):
    for username, pending_words in (("doctor1", "Alternatives offered"), ("patient1", "Choose a time")):
        rows = _rows(await _put(client, (await login(username)).headers))
        badges = [_child(r, "status") for r in rows]
        assert all(b is not None and b["value"] != b["props"]["status"] for b in badges)
        assert not any(b is not None and "-" in b["value"] for b in badges)
        pending = [b for b in badges if b is not None and b["props"]["status"] == "pending-response"]
        assert pending and all(b["value"] == pending_words for b in pending)


async def test_patients_are_offered_to_choose_a_time_only_where_offers_await_them(client, login):
    rows = _rows(await _put(client, (await login("patient1")).headers))
    for row in rows:
        action = _child(row, "offers")
        status = _child(row, "status")
        assert action is not None and status is not None
        expected = "Choose a time" if status["props"]["status"] == "pending-response" else "View"
        assert action["label"] == expected
        assert _child(row, "doctor") is not None and _child(row, "patient") is None


async def test_rows_show_the_service_and_mark_appointments_of_today(client, login, demo, runtime, clock):
    doctor = await login("doctor1")
    today_id = await new_appointment(runtime, like=demo.appointments[0], days=0)  # three hours from now
    rows = {r["props"]["appointment"]: r for r in _rows(await _put(client, doctor.headers))}
    for a, row in rows.items():
        service = _child(row, "service")
        assert service is not None and service["value"]
        marker = _child(row, "today")
        assert marker is not None
        time_props = _child(row, "time")["props"]  # type: ignore[index]
        assert (marker.get("visible") is not False) == time_props["today"]
        if a == today_id:
            assert time_props["today"] is True
    assert today_id in rows
