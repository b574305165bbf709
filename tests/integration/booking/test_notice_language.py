"""A notice is written in one person's request and read in another's, on SQLite and PostgreSQL: it is stored as its
text's template and values, so each reader sees it in their own language with dates in their format, whatever the
writer read; a notice stored before templates were kept still reads as it was written (docs/web-app.md#language)."""

from __future__ import annotations

from sqlalchemy import select

from doctordesk.i18n.formats import format_local
from doctordesk.screens.protocol import walk
from doctordesk.store.notice_tables import UserNotice
from doctordesk.store.review_tables import AppointmentOffer
from doctordesk.store.tables import Location
from tests.support.review import PENDING_5, REQUESTED, aid

LIST = "/profile/appointments"
GERMAN = {"Accept-Language": "de-DE,de;q=0.9"}
ENGLISH = {"Accept-Language": "en-GB,en;q=0.9"}


async def notice_texts(client, headers) -> list[str]:
    page = (await client.put(LIST, headers=headers)).json()
    return [e["value"] for e in walk(page["elements"]) if e["id"].startswith("notice-") and e["type"] == "Notice"]


async def test_a_german_doctors_decline_reads_in_english_for_an_english_patient(client, login, demo, runtime):
    doctor, patient = await login("doctor1"), await login("patient1")
    await client.put("/profile/language", data={"language": "de"}, headers=doctor.headers)
    a = aid(demo, REQUESTED)
    declined = await client.post(
        f"/profile/appointments/{a}/decline",
        data={"version": "1", "reason": "Bitte einen Facharzt aufsuchen."},
        headers={**doctor.headers, **GERMAN},
    )
    assert declined.status_code == 200, declined.text
    assert declined.json()["notice"]["text"] == "Anfrage abgelehnt."  # the doctor's own answer: German
    (english,) = await notice_texts(client, {**patient.headers, **ENGLISH})
    assert english == "Dr. Anna Berger declined your appointment request: Bitte einen Facharzt aufsuchen."
    (german,) = await notice_texts(client, {**patient.headers, **GERMAN})
    assert german == "Dr. Anna Berger hat Ihre Terminanfrage abgelehnt: Bitte einen Facharzt aufsuchen."
    async with runtime.db.read() as s:
        row = await s.scalar(select(UserNotice).where(UserNotice.user_id == patient.user["id"]))
    assert row.text == english  # the English kept beside the template
    assert row.message == {
        "msgid": "{doctor} declined your appointment request: {reason}",
        "params": {"doctor": "Dr. Anna Berger", "reason": "Bitte einen Facharzt aufsuchen."},
    }


async def test_an_english_patients_answer_reads_in_german_for_a_german_doctor(client, login, demo, runtime):
    doctor, patient = await login("doctor1"), await login("patient1")
    a = aid(demo, PENDING_5)
    async with runtime.db.read() as s:
        offer = (await s.scalars(select(AppointmentOffer).where(AppointmentOffer.appointment_id == a))).first()
        zone = (await s.get(Location, offer.location_id)).timezone
    url = f"/profile/appointments/{a}/offers/{offer.id}/accept"
    accepted = await client.post(url, data={"version": "1"}, headers={**patient.headers, **ENGLISH})
    assert accepted.status_code == 200, accepted.text
    (german,) = await notice_texts(client, {**doctor.headers, **GERMAN})
    assert german == f"Maria Schmidt hat den Termin {format_local(offer.start_at, zone, 'de')} angenommen."
    (english,) = await notice_texts(client, {**doctor.headers, **ENGLISH})
    assert english == f"Maria Schmidt accepted the time {format_local(offer.start_at, zone, 'en')}."
    # The audit keeps the instant, not a date in the patient's words.
    from doctordesk.store.tables import AuditLog

    async with runtime.db.read() as s:
        entry = await s.scalar(select(AuditLog).where(AuditLog.action == "appointment.accept-offer"))
    assert entry.details["start"] == offer.start_at.isoformat()


async def test_a_notice_stored_before_templates_reads_as_it_was_written(client, login, demo, runtime):
    patient = await login("patient1")
    async with runtime.db.transaction() as s:
        s.add(
            UserNotice(
                user_id=patient.user["id"], appointment_id=aid(demo, REQUESTED), text="Dr. Berger approved your visit.",
                message=None, created_at=demo.now,
            )
        )  # fmt: skip
    assert await notice_texts(client, {**patient.headers, **GERMAN}) == ["Dr. Berger approved your visit."]
    assert await notice_texts(client, {**patient.headers, **ENGLISH}) == ["Dr. Berger approved your visit."]


async def test_a_clinic_cancellation_reads_in_each_readers_language(client, login, demo, runtime):
    """An outside event (the integration API) leaves notices with the appointment's time in each reader's format."""
    from tests.support.integration import make_key

    doctor, patient, admin = await login("doctor1"), await login("patient1"), await login("admin")
    a = aid(demo, REQUESTED)
    # The clinic's system reads the clinic's appointments too: reporting an event on one needs seeing it.
    key = await make_key(client, admin.headers, scopes=["appointments:write", "appointments:read"])
    cancelled = await client.post(
        f"/integration/v1/appointments/{a}/cancel",
        json={"by": "clinic", "reason": "Praxis geschlossen"},
        headers=key.headers,
    )
    assert cancelled.status_code == 200, cancelled.text
    (german,) = await notice_texts(client, {**patient.headers, **GERMAN})
    assert german == "Die Praxis hat den Termin am Mi., 25. Nov. 2026, 09:00 MEZ storniert: Praxis geschlossen"
    (english,) = await notice_texts(client, {**doctor.headers, **ENGLISH})
    assert english == "The clinic canceled the appointment on Wed 25 Nov 2026, 09:00 CET: Praxis geschlossen"


async def test_leaving_review_and_approve_says_changes_discarded_in_the_doctors_language(client, login, demo):
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    german = {**doctor.headers, **GERMAN}
    assert (await client.put(f"/profile/appointments/{a}/approve", headers=german)).status_code == 200
    left = await client.patch(f"/profile/appointments/{a}/approve/cancel", headers=german)
    assert left.status_code == 200, left.text
    assert left.json()["notice"]["text"] == "Änderungen verworfen."
