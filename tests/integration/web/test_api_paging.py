"""Keyset paging of the read API's list: every row once and in order, filters, bad limits and cursors, ownership;
on SQLite and PostgreSQL."""

from __future__ import annotations

import base64
import hashlib
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.cursors import MAX_LIMIT, encode_cursor
from doctordesk.domain.keyset import Position
from doctordesk.store.tables import Appointment
from tests.support.errors import assert_error


async def add_appointments(runtime, demo, *, doctor: str, starts: list[datetime], status: Status = Status.REQUESTED):
    """Appointments of ``doctor`` at ``starts`` (repeats allowed: equal start times need the id to break the tie)."""
    location = demo.locations["munich"] if doctor == "doctor2" else demo.locations["berlin"]
    async with runtime.db.transaction() as session:
        rows = [
            Appointment(
                patient_id=demo.patients["patient1"],
                doctor_id=demo.users[doctor],
                location_id=location,
                start_at=start,
                status=int(status),
                created_at=demo.now,
                updated_at=demo.now,
            )
            for start in starts
        ]
        session.add_all(rows)
    return [r.id for r in rows]


async def expected_ids(runtime, *, doctor_id: int | None = None) -> list[int]:
    """What the list must show, straight from the table in the documented order."""
    query = select(Appointment.id).order_by(Appointment.start_at, Appointment.id)
    if doctor_id is not None:
        query = query.where(Appointment.doctor_id == doctor_id)
    async with runtime.db.read() as session:
        return list(await session.scalars(query))


async def walk(client, headers, params=None, *, between=None) -> tuple[list[int], list[dict]]:
    """Every page from the first to the one without a cursor; ``between(page_number, last_cursor)`` runs after each
    page but the last. Returns the ids in the order received, and the pages."""
    ids: list[int] = []
    pages: list[dict] = []
    cursor = None
    while True:
        query = list(dict(params).items() if isinstance(params, dict) else params or []) + (
            [("cursor", cursor)] if cursor else []
        )
        response = await client.get("/api/appointments", params=query, headers=headers)
        assert response.status_code == 200, response.text
        page = response.json()
        pages.append(page)
        ids += [a["id"] for a in page["appointments"]]
        cursor = page["cursor"]
        if cursor is None:
            return ids, pages
        assert len(pages) < 500, "the cursor never ends"
        if between is not None:
            await between(len(pages), cursor)


def cursor_text(cursor: str) -> str:
    """The position part of a cursor: ``1:<microseconds since the epoch>:<id>`` (an 8-byte check digest follows)."""
    return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))[:-8].decode()


def sealed(text: str | bytes) -> str:
    """A cursor spelled by hand, with a correct check digest: what someone who read the code could build."""
    data = text.encode() if isinstance(text, str) else text
    digest = hashlib.sha256(b"doctordesk read API cursor\0" + data).digest()[:8]
    return base64.urlsafe_b64encode(data + digest).decode().rstrip("=")


def unsealed(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def repositioned(cursor: str, text: str) -> str:
    """Another position with the cursor's own check digest (an edited cursor)."""
    digest = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))[-8:]
    return base64.urlsafe_b64encode(text.encode() + digest).decode().rstrip("=")


async def test_walking_every_page_returns_every_row_once_in_start_then_id_order(client, login, demo, runtime, clock):
    doctor = await login("doctor1")
    slot = clock.now() + timedelta(days=30)
    # Ties on start time across page boundaries: only the id tells these apart.
    await add_appointments(runtime, demo, doctor="doctor1", starts=[slot] * 7 + [slot + timedelta(hours=1)] * 5)
    expected = await expected_ids(runtime, doctor_id=demo.users["doctor1"])
    assert len(expected) > 3 * 4

    ids, pages = await walk(client, doctor.headers, {"limit": 4})

    assert ids == expected
    assert all(len(p["appointments"]) == 4 for p in pages[:-1]) and 1 <= len(pages[-1]["appointments"]) <= 4
    assert pages[-1]["cursor"] is None


async def test_rows_inserted_between_pages_neither_repeat_nor_shift_the_walk(client, login, demo, runtime, clock):
    support = await login("support1")
    slot = clock.now() + timedelta(days=30)
    await add_appointments(runtime, demo, doctor="doctor1", starts=[slot + timedelta(minutes=i) for i in range(20)])
    before = await expected_ids(runtime)
    inserted: dict[str, list[int]] = {"behind": [], "ahead": []}

    async def insert(_page: int, cursor: str) -> None:
        _, micros, last_id = cursor_text(cursor).split(":")
        at = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=int(micros))
        # One before the page's end (already passed: not shown), one at its exact start time (a higher id:
        # after it in the order, so shown), one later (shown).
        inserted["behind"] += await add_appointments(runtime, demo, doctor="doctor2", starts=[at - timedelta(days=1)])
        inserted["ahead"] += await add_appointments(
            runtime, demo, doctor="doctor2", starts=[at, at + timedelta(days=400)]
        )
        assert max(inserted["ahead"]) > int(last_id)

    ids, pages = await walk(client, support.headers, {"limit": 6}, between=insert)

    assert len(pages) > 3
    assert len(ids) == len(set(ids)), "a row came twice"
    assert [i for i in ids if i in set(before)] == before, "an existing row was missed or out of order"
    assert set(inserted["ahead"]) <= set(ids)
    assert not set(inserted["behind"]) & set(ids)
    assert ids == [i for i in await expected_ids(runtime) if i in set(ids)], "not in start-then-id order"


async def test_filters_combine_with_paging(client, login, demo, runtime, clock):
    doctor = await login("doctor1")
    day = clock.now() + timedelta(days=10)
    await add_appointments(runtime, demo, doctor="doctor1", starts=[day + timedelta(minutes=10 * i) for i in range(9)])
    await add_appointments(
        runtime, demo, doctor="doctor1", starts=[day + timedelta(minutes=5)] * 4, status=Status.DECLINED
    )
    filters = [("status", "requested"), ("status", "declined"), ("from", day.date().isoformat())]
    filters.append(("to", day.date().isoformat()))

    unpaged = (await client.get("/api/appointments", params=filters, headers=doctor.headers)).json()
    ids, pages = await walk(client, doctor.headers, filters + [("limit", "2")])

    assert len(unpaged["appointments"]) >= 13 and unpaged["cursor"] is None
    assert ids == [a["id"] for a in unpaged["appointments"]]
    assert len(pages) == (len(ids) + 1) // 2
    listed = [a for p in pages for a in p["appointments"]]
    assert {a["status"]["name"] for a in listed} == {"requested", "declined"}
    assert all(a["start"].startswith(day.date().isoformat()) for a in listed)


async def test_a_page_that_ends_exactly_at_the_last_row_has_no_cursor(client, login, demo, runtime):
    doctor = await login("doctor2")
    count = len(await expected_ids(runtime, doctor_id=demo.users["doctor2"]))
    whole = (await client.get("/api/appointments", params={"limit": count}, headers=doctor.headers)).json()
    assert len(whole["appointments"]) == count and whole["cursor"] is None
    first = (await client.get("/api/appointments", params={"limit": count - 1}, headers=doctor.headers)).json()
    assert first["cursor"] is not None
    rest = (
        await client.get(
            "/api/appointments", params={"limit": count, "cursor": first["cursor"]}, headers=doctor.headers
        )
    ).json()
    assert len(rest["appointments"]) == 1 and rest["cursor"] is None


async def test_without_a_limit_a_page_holds_the_maximum_of_500(client, login, demo, runtime, clock):
    doctor = await login("doctor3")
    start = clock.now() + timedelta(days=1)
    await add_appointments(runtime, demo, doctor="doctor3", starts=[start + timedelta(hours=i) for i in range(501)])
    expected = await expected_ids(runtime, doctor_id=demo.users["doctor3"])

    first = (await client.get("/api/appointments", headers=doctor.headers)).json()
    rest = (await client.get("/api/appointments", params={"cursor": first["cursor"]}, headers=doctor.headers)).json()

    assert len(first["appointments"]) == MAX_LIMIT == 500 and first["cursor"]
    assert [a["id"] for a in first["appointments"] + rest["appointments"]] == expected and rest["cursor"] is None


async def test_an_empty_list_is_one_page_without_a_cursor(client, login):
    patient = await login("patient1")
    body = (await client.get("/api/appointments", params={"from": "2999-12-31"}, headers=patient.headers)).json()
    assert body == {"appointments": [], "cursor": None}


@pytest.mark.parametrize("limit", ["0", "-1", str(MAX_LIMIT + 1), "abc", "1.5", "", "9" * 40, "１"])
async def test_a_bad_limit_is_a_validation_error_naming_limit(client, login, limit):
    doctor = await login("doctor1")
    response = await client.get("/api/appointments", params={"limit": limit}, headers=doctor.headers)
    body = assert_error(response, 422, "FIELDS_VALIDATION_ERROR")
    assert list(body["fields"]) == ["limit"], body


async def _a_real_cursor(client, headers) -> str:
    cursor = (await client.get("/api/appointments", params={"limit": 1}, headers=headers)).json()["cursor"]
    assert cursor
    return cursor


def _flip(cursor: str, at: int) -> str:
    return cursor[:at] + ("A" if cursor[at] != "A" else "B") + cursor[at + 1 :]


@pytest.mark.parametrize(
    "tamper",
    [
        lambda c: "",
        lambda c: "garbage!",
        lambda c: "%00",
        lambda c: "é" + c,
        lambda c: c + "=",
        lambda c: c + "A",
        lambda c: c[:-1],
        lambda c: c[:5],
        lambda c: _flip(c, 0),
        lambda c: _flip(c, len(c) // 2),
        lambda c: _flip(c, len(c) - 1),
        lambda c: c.replace("-", "+").replace("_", "/") + "+/",
        lambda c: "A" * 65,
        lambda c: unsealed(cursor_text(c)),
        lambda c: repositioned(c, cursor_text(c)[:-1] + "9"),
        lambda c: sealed("2" + cursor_text(c)[1:]),
        lambda c: sealed("1:abc:1"),
        lambda c: sealed("1:1:0"),
        lambda c: sealed("1:1:-5"),
        lambda c: sealed("1:01:5"),
        lambda c: sealed("1:-0:5"),
        lambda c: sealed("1: 1:5"),
        lambda c: sealed("1:1:5 "),
        lambda c: sealed("1:1:9007199254740993"),
        lambda c: sealed("1:999999999999999999:1"),
        lambda c: sealed("1:-9999999999999999999:1"),
        lambda c: sealed("1:١٢:1"),
        lambda c: sealed("1:1:1:1"),
        lambda c: sealed("1:1"),
        lambda c: sealed(b"\xff\xfe1:1:1"),
        lambda c: sealed(""),
    ],
)
async def test_a_tampered_or_malformed_cursor_is_a_validation_error_naming_cursor(client, login, tamper):
    doctor = await login("doctor1")
    cursor = tamper(await _a_real_cursor(client, doctor.headers))
    response = await client.get("/api/appointments", params={"cursor": cursor}, headers=doctor.headers)
    body = assert_error(response, 422, "FIELDS_VALIDATION_ERROR")
    assert list(body["fields"]) == ["cursor"], body


@pytest.mark.parametrize(
    "start", [datetime(1, 1, 1, tzinfo=UTC), datetime(1970, 1, 1, tzinfo=UTC), datetime.max.replace(tzinfo=UTC)]
)
async def test_a_well_formed_cursor_at_the_ends_of_time_is_answered_not_a_500(client, login, runtime, demo, start):
    doctor = await login("doctor1")
    cursor = encode_cursor(Position(start, 1))
    response = await client.get("/api/appointments", params={"cursor": cursor}, headers=doctor.headers)
    assert response.status_code == 200, response.text
    own = await expected_ids(runtime, doctor_id=demo.users["doctor1"])
    assert [a["id"] for a in response.json()["appointments"]] == (own if start.year < 2000 else [])


async def test_a_cursor_made_from_another_doctors_row_shows_only_the_callers_own_rows(client, login, demo, runtime):
    doctor1 = await login("doctor1")
    doctor2 = await login("doctor2")
    support = await login("support1")
    own = await expected_ids(runtime, doctor_id=demo.users["doctor1"])
    async with runtime.db.read() as session:
        rows = list(await session.execute(select(Appointment.id, Appointment.start_at, Appointment.doctor_id)))
    position = {row.id: Position(row.start_at, row.id) for row in rows}
    theirs = [row.id for row in rows if row.doctor_id == demo.users["doctor2"]]
    assert theirs

    for their_id in theirs:
        crafted = encode_cursor(position[their_id])
        response = await client.get("/api/appointments", params={"cursor": crafted}, headers=doctor1.headers)
        assert response.status_code == 200, response.text
        shown = [a["id"] for a in response.json()["appointments"]]
        after = position[their_id]
        assert shown == [i for i in own if (position[i].at, i) > (after.at, after.id)]
        assert not set(shown) & set(theirs)

    # A cursor handed to another user (here: support, who sees everything) continues only through the caller's rows.
    _, pages = await walk(client, support.headers, {"limit": 3})
    for page in pages[:-1]:
        answer = await client.get("/api/appointments", params={"cursor": page["cursor"]}, headers=doctor2.headers)
        assert {a["doctor"]["id"] for a in answer.json()["appointments"]} <= {demo.users["doctor2"]}
