"""The patient's answer to the offers, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from sqlalchemy import select

from doctordesk.domain.appointments.status import Status
from doctordesk.screens.protocol import walk
from doctordesk.store.review_tables import AppointmentOffer
from doctordesk.store.tables import Appointment
from tests.support.review import (
    PENDING_5,
    PENDING_9,
    REQUESTED,
    Events,
    aid,
    approve_url,
    card,
    find,
    snapshot,
)


def offers_url(a: int) -> str:
    return f"/profile/appointments/{a}/offers"


async def offers_of(runtime, a):
    async with runtime.db.read() as s:
        rows = await s.execute(select(AppointmentOffer).where(AppointmentOffer.appointment_id == a))
        return sorted(rows.scalars().all(), key=lambda o: o.n)


async def test_the_seeded_pending_appointments_have_offers_5_in_network_and_9_with_a_warning(runtime, demo):
    five = await offers_of(runtime, aid(demo, PENDING_5))
    nine = await offers_of(runtime, aid(demo, PENDING_9))
    assert len(five) == 2 and not any(o.coverage_warning for o in five)
    assert any(o.coverage_warning for o in nine)


async def test_the_patient_sees_the_offers_with_times_fees_and_actions(client, login, demo):
    patient = await login("patient1")
    a = aid(demo, PENDING_5)
    page = (await client.put(offers_url(a), headers=patient.headers)).json()
    assert page["screen"] == "appointment-offers"
    offer = find(page["elements"], "offer-1")
    assert offer["type"] == "Card" and find(page["elements"], "accept~1").get("enabled", True)
    assert find(page["elements"], "offer-fee~1")["value"].startswith("€")
    assert find(page["elements"], "reject-all").get("enabled", True)


async def test_the_doctor_sees_the_offers_read_only(client, login, demo):
    doctor = await login("doctor1")
    page = (await client.put(offers_url(aid(demo, PENDING_5)), headers=doctor.headers)).json()
    assert find(page["elements"], "offer-1") and find(page["elements"], "accept~1") is None
    assert find(page["elements"], "reject-all") is None


async def test_accepting_an_offer_approves_at_that_time_and_withdraws_the_others(client, login, demo, runtime):
    events = Events(runtime)
    patient = await login("patient1")
    doctor = await login("doctor1")
    a = aid(demo, PENDING_5)
    doctor_page = (await client.put("/profile/appointments", headers=doctor.headers)).json()
    first, second = await offers_of(runtime, a)
    response = await client.post(f"{offers_url(a)}/{second.id}/accept", headers=patient.headers, data={"version": "1"})
    assert response.status_code == 200, response.text
    assert response.json()["navigate"] == "/profile/appointments"
    async with runtime.db.read() as s:
        row = await s.get(Appointment, a)
    assert (row.status, row.start_at, row.version) == (Status.APPROVED, second.start_at, 2)
    assert [o.state for o in await offers_of(runtime, a)] == ["withdrawn", "accepted"]
    event = events.seen[-1]
    assert event.kind == "appointment.accept-offer" and demo.users["doctor1"] in event.notify_user_ids
    # The doctor's list shows it: a poll brings the new status.
    poll = await client.patch(
        "/profile/appointments", headers={**doctor.headers, "X-Screen-State": doctor_page["state"]}
    )
    assert poll.json()["patches"]
    listing = (await client.put("/profile/appointments", headers=doctor.headers)).json()
    assert find(find(listing["elements"], "upcoming")["children"], f"appointment-{a}") is not None


async def test_an_offer_with_a_coverage_warning_needs_the_patients_acknowledgement(client, login, demo, runtime):
    patient = await login("patient4")
    a = aid(demo, PENDING_9)
    risky = next(o for o in await offers_of(runtime, a) if o.coverage_warning)
    before = await snapshot(runtime, a)
    refused = await client.post(f"{offers_url(a)}/{risky.id}/accept", headers=patient.headers, data={"version": "1"})
    assert refused.status_code == 422 and "coverage-acknowledged" in refused.json()["fields"]
    assert await snapshot(runtime, a) == before
    response = await client.post(
        f"{offers_url(a)}/{risky.id}/accept",
        headers=patient.headers,
        data={"version": "1", "coverage-acknowledged": "true"},
    )
    assert response.status_code == 200, response.text
    async with runtime.db.read() as s:
        row = await s.get(Appointment, a)
    assert row.doctor_id == risky.doctor_id and row.location_id == risky.location_id


async def test_rejecting_all_offers_cancels_the_request(client, login, demo, runtime):
    patient = await login("patient1")
    a = aid(demo, PENDING_5)
    response = await client.post(f"{offers_url(a)}/reject", headers=patient.headers, data={"version": "1"})
    assert response.status_code == 200, response.text
    async with runtime.db.read() as s:
        row = await s.get(Appointment, a)
    assert row.status == Status.CANCELED
    assert {o.state for o in await offers_of(runtime, a)} == {"rejected"}


async def test_only_the_patient_answers_others_get_404_and_nothing_changes(client, login, demo, runtime):
    a = aid(demo, PENDING_5)
    offer = (await offers_of(runtime, a))[0]
    before = await snapshot(runtime, a)
    for who in ("patient2", "doctor1", "admin"):
        user = await login(who)
        accept = await client.post(f"{offers_url(a)}/{offer.id}/accept", headers=user.headers, data={"version": "1"})
        reject = await client.post(f"{offers_url(a)}/reject", headers=user.headers, data={"version": "1"})
        assert (accept.status_code, reject.status_code) == (404, 404)
    stranger = await login("patient2")
    assert (await client.put(offers_url(a), headers=stranger.headers)).status_code == 404
    assert await snapshot(runtime, a) == before


async def test_a_stale_answer_is_appointment_changed(client, login, demo, runtime):
    patient = await login("patient1")
    a = aid(demo, PENDING_5)
    offer = (await offers_of(runtime, a))[0]
    response = await client.post(f"{offers_url(a)}/{offer.id}/accept", headers=patient.headers, data={"version": "7"})
    assert response.status_code == 409 and response.json()["code"] == "APPOINTMENT_CHANGED"


async def test_two_simultaneous_answers_exactly_one_wins(client, login, demo, runtime):
    patient = await login("patient1")
    a = aid(demo, PENDING_5)
    first, second = await offers_of(runtime, a)
    responses = await asyncio.gather(
        *(
            client.post(f"{offers_url(a)}/{o.id}/accept", headers=patient.headers, data={"version": "1"})
            for o in (first, second, first, second)
        ),
        client.post(f"{offers_url(a)}/reject", headers=patient.headers, data={"version": "1"}),
    )
    assert [r.status_code for r in responses].count(200) == 1
    states = [o.state for o in await offers_of(runtime, a)]
    assert states.count("accepted") + states.count("rejected") in (1, 2) and "open" not in states


async def test_offers_sent_by_the_doctor_reach_the_patients_screen(client, login, demo, runtime):
    doctor = await login("doctor1")
    patient = await login("patient1")
    a = aid(demo, REQUESTED)
    page = (await client.put(offers_url(a), headers=patient.headers)).json()
    assert find(page["elements"], "offer-1") is None
    fields = {**card(1, demo.users["doctor1"], demo.locations["berlin"], "2026-11-24", "10:00"), "version": "1"}
    assert (await client.post(approve_url(a), headers=doctor.headers, data=fields)).status_code == 200
    poll = await client.patch(offers_url(a), headers={**patient.headers, "X-Screen-State": page["state"]})
    assert poll.json()["patches"]
    fresh = (await client.put(offers_url(a), headers=patient.headers)).json()
    assert find(fresh["elements"], "offer-time~1")["value"] == "Tue 24 Nov 2026, 10:00 CET"


async def test_the_coverage_warning_speaks_to_the_patient_and_about_the_patient_to_the_doctor(client, login, demo):
    a = aid(demo, PENDING_9)
    patient = await login("patient4")
    mine = (await client.put(offers_url(a), headers=patient.headers)).json()
    warnings = [e["warning"] for e in walk(mine["elements"]) if e["type"] == "Card" and e.get("warning")]
    assert warnings and all("your insurance may not cover" in w and "you may pay more" in w for w in warnings)
    assert not any("the patient" in w for w in warnings)
    german = (await client.put(offers_url(a), headers={**patient.headers, "Accept-Language": "de"})).json()
    assert any("Ihre Versicherung" in (e.get("warning") or "") for e in walk(german["elements"]) if e["type"] == "Card")
    doctor = await login("doctor1")
    theirs = (await client.put(offers_url(a), headers=doctor.headers)).json()
    staff = [e["warning"] for e in walk(theirs["elements"]) if e["type"] == "Card" and e.get("warning")]
    assert staff and all("the patient may pay more" in w for w in staff)


async def test_an_offer_whose_time_has_passed_cannot_be_accepted_and_the_page_says_so(
    client, login, demo, runtime, clock
):
    """An open offer's time coming disables its "Accept this time" with a line saying why (accepting it would be
    refused), and the page's validity ends at that moment: its poll then brings the change."""
    patient = await login("patient1")
    a = aid(demo, PENDING_5)
    first, second = await offers_of(runtime, a)
    assert clock.now() < first.start_at < second.start_at
    page = (await client.put(offers_url(a), headers=patient.headers)).json()
    assert find(page["elements"], "accept~1").get("enabled", True) is True
    assert find(page["elements"], "accept-note~1")["visible"] is False
    async with runtime.db.read() as s:
        deadline = (await s.get(Appointment, a)).start_at - timedelta(hours=runtime.settings.patient_cancel_hours)

    def edge(after):  # the first moment ahead that changes the page: an open offer's time, or the cancel deadline
        return str(int(min(t for t in (first.start_at, second.start_at, deadline) if t > after).timestamp()))

    # The token says until when time alone leaves the page as it is: the first open offer's time (or the deadline
    # for canceling, when it comes first).
    assert page["state"].split(".")[5] == edge(clock.now())
    clock.advance(first.start_at - clock.now())
    patient = await login("patient1")  # the first session has expired meanwhile
    poll = {**patient.headers, "X-Screen-State": page["state"]}
    patches = (await client.patch(offers_url(a), headers=poll)).json()["patches"]
    updates = {p["id"]: p["set"] for p in patches if p["op"] == "update"}
    assert updates["accept~1"]["enabled"] is False and updates["accept-note~1"]["visible"] is True
    fresh = (await client.put(offers_url(a), headers=patient.headers)).json()
    assert find(fresh["elements"], "accept~1")["enabled"] is False
    note = find(fresh["elements"], "accept-note~1")
    assert note.get("visible", True) is True
    assert note["value"] == "This time has passed: it can no longer be accepted."
    assert find(fresh["elements"], "accept~2").get("enabled", True) is True
    assert fresh["state"].split(".")[5] == edge(first.start_at)
    german = (await client.put(offers_url(a), headers={**patient.headers, "Accept-Language": "de"})).json()
    assert find(german["elements"], "accept-note~1")["value"] == (
        "Dieser Termin ist vorbei: Er kann nicht mehr angenommen werden."
    )
    refused = await client.post(f"{offers_url(a)}/{first.id}/accept", headers=patient.headers, data={"version": "1"})
    assert refused.status_code == 409 and [o.state for o in await offers_of(runtime, a)] == ["open", "open"]
