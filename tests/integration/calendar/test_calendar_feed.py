"""A doctor's calendar feed: what it shows and in which zone, that it follows changes, that it is the doctor's
alone, and that its address is a revocable secret (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import hashlib
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import func, select, update

from doctordesk.domain.appointments.status import Status
from doctordesk.store.calendar_tables import CalendarFeed
from doctordesk.store.review_tables import AppointmentOffer
from doctordesk.store.tables import Appointment, AuditLog, Patient, User
from tests.integration.calendar.feed_support import add_appointment, add_offer, events, fetch, make_feed
from tests.support.integration import make_key, request_body

BERLIN = ZoneInfo("Europe/Berlin")
LONDON = ZoneInfo("Europe/London")


def uid(appointment_id: int) -> str:
    return f"appointment-{appointment_id}@doctordesk"


async def audit_actions(runtime) -> list[str]:
    async with runtime.db.read() as s:
        return list((await s.scalars(select(AuditLog.action).order_by(AuditLog.id))).all())


async def test_a_doctor_makes_a_feed_whose_secret_is_shown_once_stored_hashed_and_audited(client, login, runtime):
    doctor = await login("doctor1")
    made = await client.post("/api/calendar-feed", headers=doctor.headers)
    assert made.status_code == 201
    url = made.json()["url"]
    assert url.startswith("http://testserver/calendar/ddcal_") and url.endswith(".ics")
    token = url.removeprefix("http://testserver/calendar/").removesuffix(".ics")
    async with runtime.db.read() as s:
        row = (await s.scalars(select(CalendarFeed))).one()
    assert row.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert row.doctor_id == doctor.user["id"] and token not in (row.prefix, row.token_hash)
    shown = (await client.get("/api/calendar-feed", headers=doctor.headers)).json()
    assert shown["feed"]["prefix"] == token[:10] and token not in str(shown)
    assert "calendar-feed.create" in await audit_actions(runtime)


async def test_the_feed_is_an_icalendar_a_calendar_app_can_subscribe_to_without_credentials(client, login):
    doctor = await login("doctor1")
    path = await make_feed(client, doctor.headers)
    response = await client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/calendar; charset=utf-8"
    assert "no-store" not in response.headers["cache-control"] and "private" in response.headers["cache-control"]
    calendar = await fetch(client, path)
    assert str(calendar["VERSION"]) == "2.0" and "doctordesk" in str(calendar["PRODID"])
    assert str(calendar["X-WR-CALNAME"]) == "doctordesk: Dr. Anna Berger"
    head = await client.head(path)
    assert head.status_code == 200 and head.content == b""
    assert int(head.headers["content-length"]) == len(response.content)


async def test_times_are_in_each_locations_zone_and_dst_correct_with_one_vtimezone_per_zone(
    client, login, runtime, demo
):
    summer = await add_appointment(
        runtime, demo, start=datetime(2027, 7, 6, 10, 0, tzinfo=BERLIN), status=Status.APPROVED
    )
    winter = await add_appointment(
        runtime, demo, start=datetime(2026, 12, 8, 10, 0, tzinfo=BERLIN), status=Status.APPROVED
    )
    london = await add_appointment(
        runtime,
        demo,
        start=datetime(2027, 6, 15, 9, 0, tzinfo=LONDON),
        status=Status.APPROVED,
        location="london",
    )
    doctor = await login("doctor1")
    calendar = await fetch(client, await make_feed(client, doctor.headers))
    shown = events(calendar)
    expected = {
        summer: ("Europe/Berlin", datetime(2027, 7, 6, 8, 0, tzinfo=UTC)),
        winter: ("Europe/Berlin", datetime(2026, 12, 8, 9, 0, tzinfo=UTC)),
        london: ("Europe/London", datetime(2027, 6, 15, 8, 0, tzinfo=UTC)),
    }
    for a, (zone, at_utc) in expected.items():
        event = shown[uid(a)]
        assert event["DTSTART"].params["TZID"] == zone
        start = event.decoded("DTSTART")
        assert start == at_utc and start.hour in (9, 10)  # the wall-clock time in the clinic's zone
        assert event.decoded("DTEND") - start == timedelta(minutes=30)
    zones = {str(z["TZID"]): z for z in calendar.walk("VTIMEZONE")}
    assert set(zones) == {"Europe/Berlin", "Europe/London"}
    # The VTIMEZONE itself (not only the reader's zone database) gives the right offsets on both sides of DST.
    berlin = zones["Europe/Berlin"].to_tz()
    assert berlin.utcoffset(datetime(2027, 7, 6, 10, 0)) == timedelta(hours=2)
    assert berlin.utcoffset(datetime(2026, 12, 8, 10, 0)) == timedelta(hours=1)
    assert zones["Europe/London"].to_tz().utcoffset(datetime(2027, 6, 15, 9, 0)) == timedelta(hours=1)


async def test_booked_times_are_confirmed_requests_and_open_offers_tentative_and_the_rest_absent(
    client, login, runtime, demo
):
    day = datetime(2026, 12, 2, 9, 0, tzinfo=BERLIN)
    approved = await add_appointment(runtime, demo, start=day, status=Status.APPROVED, version=3)
    completed = await add_appointment(
        runtime, demo, start=datetime(2026, 11, 20, 9, 0, tzinfo=BERLIN), status=Status.COMPLETED
    )
    requested = await add_appointment(runtime, demo, start=day + timedelta(hours=1), status=Status.REQUESTED)
    pending = await add_appointment(runtime, demo, start=day + timedelta(hours=2), status=Status.PENDING_RESPONSE)
    await add_offer(runtime, demo, pending, n=1, start=day + timedelta(days=1))
    await add_offer(runtime, demo, pending, n=2, start=day + timedelta(days=2))
    await add_offer(runtime, demo, pending, n=3, start=day + timedelta(days=3), state="rejected")
    declined = await add_appointment(runtime, demo, start=day + timedelta(hours=3), status=Status.DECLINED)
    canceled = await add_appointment(runtime, demo, start=day + timedelta(hours=4), status=Status.CANCELED)
    doctor = await login("doctor1")
    shown = events(await fetch(client, await make_feed(client, doctor.headers)))

    assert str(shown[uid(approved)]["STATUS"]) == "CONFIRMED" and shown[uid(approved)]["SEQUENCE"] == 2
    assert str(shown[uid(approved)]["TRANSP"]) == "OPAQUE"
    assert str(shown[uid(completed)]["STATUS"]) == "CONFIRMED"
    request = shown[uid(requested)]
    assert str(request["STATUS"]) == "TENTATIVE" and str(request["TRANSP"]) == "TRANSPARENT"
    assert str(request["SUMMARY"]).startswith("Request to decide")
    # Pending-response: the open offers, not the request's original time.
    assert uid(pending) not in shown
    offers = {k: v for k, v in shown.items() if k.startswith(f"appointment-{pending}-offer-")}
    assert set(offers) == {f"appointment-{pending}-offer-1@doctordesk", f"appointment-{pending}-offer-2@doctordesk"}
    assert all(str(o["STATUS"]) == "TENTATIVE" and str(o["TRANSP"]) == "OPAQUE" for o in offers.values())
    assert uid(declined) not in shown and uid(canceled) not in shown
    for event in shown.values():
        assert event.decoded("DTSTAMP") == event.decoded("LAST-MODIFIED")


async def test_the_feed_covers_thirty_days_back_to_a_year_ahead(client, login, runtime, demo):
    now = demo.now
    inside = [
        await add_appointment(runtime, demo, start=now - timedelta(days=29), status=Status.APPROVED),
        await add_appointment(runtime, demo, start=now + timedelta(days=364), status=Status.APPROVED),
    ]
    outside = [
        await add_appointment(runtime, demo, start=now - timedelta(days=31), status=Status.APPROVED),
        await add_appointment(runtime, demo, start=now + timedelta(days=366), status=Status.APPROVED),
    ]
    doctor = await login("doctor1")
    shown = events(await fetch(client, await make_feed(client, doctor.headers)))
    assert all(uid(a) in shown for a in inside) and not any(uid(a) in shown for a in outside)


async def test_a_canceled_request_and_a_canceled_appointment_leave_the_feed(client, login, runtime, demo):
    admin = await login("admin")
    key = await make_key(client, admin.headers)
    created = await client.post("/integration/v1/appointment-requests", headers=key.headers, json=request_body(demo))
    assert created.status_code == 201, created.text
    requested = int(created.json()["id"])
    approved = await add_appointment(
        runtime, demo, start=datetime(2026, 12, 3, 11, 0, tzinfo=BERLIN), status=Status.APPROVED
    )
    doctor = await login("doctor1")
    path = await make_feed(client, doctor.headers)
    before = events(await fetch(client, path))
    assert str(before[uid(requested)]["STATUS"]) == "TENTATIVE" and uid(approved) in before

    for a in (requested, approved):
        version = (await client.get(f"/api/appointments/{a}", headers=doctor.headers)).json()["version"]
        canceled = await client.post(
            f"/integration/v1/appointments/{a}/cancel",
            headers=key.headers,
            json={"by": "clinic", "reason": "Doctor ill", "version": version},
        )
        assert canceled.status_code == 200, canceled.text
    after = events(await fetch(client, path))
    assert uid(requested) not in after and uid(approved) not in after


async def test_a_change_of_time_keeps_the_uid_and_raises_sequence(client, login, runtime, demo):
    a = await add_appointment(runtime, demo, start=datetime(2026, 12, 4, 9, 0, tzinfo=BERLIN), status=Status.APPROVED)
    doctor = await login("doctor1")
    path = await make_feed(client, doctor.headers)
    first = events(await fetch(client, path))[uid(a)]
    async with runtime.db.transaction() as s:
        await s.execute(
            update(Appointment)
            .where(Appointment.id == a)
            .values(
                start_at=datetime(2026, 12, 4, 11, 0, tzinfo=BERLIN),
                version=2,
                updated_at=demo.now + timedelta(hours=1),
            )
        )
    second = events(await fetch(client, path))[uid(a)]
    assert second["SEQUENCE"] > first["SEQUENCE"]
    assert second.decoded("DTSTAMP") > first.decoded("DTSTAMP")
    assert second.decoded("DTSTART").astimezone(BERLIN).hour == 11


async def test_the_feed_shows_no_patient_name_or_note(client, login, runtime, demo):
    a = await add_appointment(
        runtime,
        demo,
        start=datetime(2026, 12, 2, 14, 0, tzinfo=BERLIN),
        status=Status.REQUESTED,
        note="Severe migraine since Tuesday",
    )
    doctor = await login("doctor1")
    path = await make_feed(client, doctor.headers)
    body = (await client.get(path)).text
    async with runtime.db.read() as s:
        names = list((await s.scalars(select(Patient.name))).all())
    assert uid(a) in body
    assert "migraine" not in body and not any(name in body for name in names)


async def test_another_doctors_appointments_never_appear_in_a_feed(client, login, runtime, demo):
    chens = await add_appointment(
        runtime,
        demo,
        start=datetime(2026, 12, 2, 9, 0, tzinfo=LONDON),
        status=Status.APPROVED,
        doctor="doctor3",
        location="london",
    )
    berger = await login("doctor1")
    chen = await login("doctor3")
    bergers_feed = events(await fetch(client, await make_feed(client, berger.headers)))
    chens_feed = events(await fetch(client, await make_feed(client, chen.headers)))
    assert uid(chens) in chens_feed and uid(chens) not in bergers_feed
    for doctor, shown in ((berger, bergers_feed), (chen, chens_feed)):
        # An appointment's event is its doctor's; an offer's is the doctor it offers (who may not be the one asked).
        booked = {int(u.split("@")[0].split("-")[1]) for u in shown if "-offer-" not in u}
        offered = {tuple(int(p) for p in u.split("@")[0].split("-")[1::2]) for u in shown if "-offer-" in u}
        async with runtime.db.read() as s:
            owners = set((await s.scalars(select(Appointment.doctor_id).where(Appointment.id.in_(booked)))).all())
            for a, n in offered:
                offer = (
                    await s.scalars(
                        select(AppointmentOffer).where(AppointmentOffer.appointment_id == a, AppointmentOffer.n == n)
                    )
                ).one()
                owners.add(offer.doctor_id)
        assert owners == {doctor.user["id"]}


async def test_rotating_or_revoking_makes_the_old_address_404_at_once(client, login, runtime):
    doctor = await login("doctor1")
    first = await make_feed(client, doctor.headers)
    second = await make_feed(client, doctor.headers)
    assert first != second
    assert (await client.get(first)).status_code == 404
    assert (await client.get(second)).status_code == 200
    revoked = await client.delete("/api/calendar-feed", headers=doctor.headers)
    assert revoked.status_code == 200 and revoked.json() == {"revoked": True}
    gone = await client.get(second)
    assert gone.status_code == 404 and gone.json()["code"] == "NOT_FOUND"
    assert (await client.get("/api/calendar-feed", headers=doctor.headers)).json() == {"feed": None}
    again = await client.delete("/api/calendar-feed", headers=doctor.headers)
    assert again.json() == {"revoked": False}
    actions = [a for a in await audit_actions(runtime) if a.startswith("calendar-feed.")]
    assert actions == ["calendar-feed.create", "calendar-feed.rotate", "calendar-feed.revoke"]


@pytest.mark.parametrize(
    "token",
    [
        "x",
        "ddcal_" + "A" * 43,  # the right shape, never issued
        "ddcal_" + "A" * 44,
        "ddk_" + "A" * 43,
        "ddcal_" + "%C3%A9" * 10,
        "ddcal_" + "A" * 120,
    ],
)
async def test_a_bad_address_is_404_in_the_error_shape(client, login, token):
    doctor = await login("doctor1")
    await make_feed(client, doctor.headers)
    response = await client.get(f"/calendar/{token}.ics")
    assert response.status_code == 404
    assert response.json()["code"] == "NOT_FOUND"


async def test_a_deactivated_doctors_feed_is_404(client, login, runtime):
    doctor = await login("doctor1")
    path = await make_feed(client, doctor.headers)
    async with runtime.db.transaction() as s:
        await s.execute(update(User).where(User.id == doctor.user["id"]).values(active=False))
    assert (await client.get(path)).status_code == 404


@pytest.mark.parametrize("username", ["patient1", "support1", "admin"])
async def test_only_doctors_have_feeds_others_get_404_and_nothing_is_written(client, login, runtime, username):
    user = await login(username)
    for method, path in (
        ("GET", "/api/calendar-feed"),
        ("POST", "/api/calendar-feed"),
        ("DELETE", "/api/calendar-feed"),
        ("PUT", "/profile/calendar-feed"),
        ("PATCH", "/profile/calendar-feed"),
        ("POST", "/profile/calendar-feed/make"),
        ("POST", "/profile/calendar-feed/revoke"),
    ):
        response = await client.request(method, path, headers=user.headers)
        assert response.status_code == 404, (method, path, response.text)
    async with runtime.db.read() as s:
        assert await s.scalar(select(func.count()).select_from(CalendarFeed)) == 0
    assert not any(a.startswith("calendar-feed.") for a in await audit_actions(runtime))


async def test_anonymous_calls_to_the_feed_settings_are_401(client):
    assert (await client.get("/api/calendar-feed")).status_code == 401
    assert (await client.post("/api/calendar-feed")).status_code == 401


async def test_an_admin_revokes_a_doctors_feed_and_no_one_else_may(client, login, runtime, demo):
    doctor = await login("doctor1")
    path = await make_feed(client, doctor.headers)
    url = f"/admin/users/{demo.users['doctor1']}/calendar-feed"
    other = await login("doctor3")
    assert (await client.delete(url, headers=other.headers)).status_code == 403  # as every administration route
    assert (await client.get(path)).status_code == 200
    admin = await login("admin")
    patient = f"/admin/users/{demo.users['patient1']}/calendar-feed"
    assert (await client.delete(patient, headers=admin.headers)).status_code == 404
    revoked = await client.delete(url, headers=admin.headers)
    assert revoked.status_code == 200 and revoked.json() == {"revoked": True}
    assert (await client.get(path)).status_code == 404
    async with runtime.db.read() as s:
        row = (await s.scalars(select(AuditLog).where(AuditLog.action == "calendar-feed.revoke"))).one()
    assert row.actor_id == admin.user["id"]


async def test_concurrent_creates_leave_one_live_address_and_every_other_is_404(client, login, runtime):
    doctor = await login("doctor1")
    answers = await asyncio.gather(*(client.post("/api/calendar-feed", headers=doctor.headers) for _ in range(4)))
    assert [a.status_code for a in answers] == [201] * 4
    async with runtime.db.read() as s:
        live = (await s.scalars(select(CalendarFeed).where(CalendarFeed.revoked_at.is_(None)))).all()
    assert len(live) == 1
    working = [a for a in answers if (await client.get(urlsplit(a.json()["url"]).path)).status_code == 200]
    assert len(working) == 1 and working[0].json()["feed"]["id"] == live[0].id


async def test_an_unchanged_feed_answers_304_to_its_etag_and_a_change_gives_a_new_one(client, login, runtime, demo):
    doctor = await login("doctor1")
    path = await make_feed(client, doctor.headers)
    first = await client.get(path)
    etag = first.headers["etag"]
    again = await client.get(path, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
    assert (await client.get(path)).content == first.content
    a = await add_appointment(runtime, demo, start=datetime(2026, 12, 9, 9, 0, tzinfo=BERLIN), status=Status.APPROVED)
    changed = await client.get(path, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag
    assert uid(a) in changed.text


async def test_the_feed_is_written_in_the_doctors_stored_language(client, login, demo, runtime):
    """A calendar app sends no language of its own: the feed follows the doctor's choice, and a change of choice
    is a new feed (its ETag differs)."""
    from icalendar import Calendar

    day = datetime(2026, 11, 26, 9, 0, tzinfo=BERLIN)
    requested = await add_appointment(runtime, demo, start=day, status=Status.REQUESTED)
    doctor = await login("doctor1")
    path = await make_feed(client, doctor.headers)
    english = await client.get(path)
    request = events(Calendar.from_ical(english.content))[uid(requested)]
    assert str(request["SUMMARY"]) == f"Request to decide: Consultation (appointment {requested})"
    assert "Awaiting your decision in doctordesk." in str(request["DESCRIPTION"])
    await client.put("/profile/language", data={"language": "de"}, headers=doctor.headers)
    german = await client.get(path)
    assert german.headers["etag"] != english.headers["etag"]
    request = events(Calendar.from_ical(german.content))[uid(requested)]
    assert str(request["SUMMARY"]) == f"Zu entscheidende Anfrage: Beratung (Termin {requested})"
    assert str(request["DESCRIPTION"]).splitlines() == [
        "Status: angefragt.",
        "Leistung: Beratung.",
        "Wartet in doctordesk auf Ihre Entscheidung.",
        f"Termin {requested} in doctordesk.",
    ]
