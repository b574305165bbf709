"""The links of a reminder (docs/notifications.md#reminders), on SQLite and PostgreSQL: opening one changes
nothing; its button confirms (history, audit, the doctor's list, the webhook ``appointment.confirmed`` at a real
receiver) or cancels through the patient's own cancellation with its deadline; a used, expired or forged link gets
a clear page, never an error document."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from doctordesk.domain.appointments.status import Status
from doctordesk.store.mail_tables import AppointmentConfirmation
from doctordesk.store.tables import Appointment, AppointmentHistory, AuditLog
from tests.integration.reminders.conftest import START, hours, links_of, path_of, place
from tests.support.review import find


async def links_at(reminders, moment) -> tuple[str, str]:
    [mail] = [m for m in await reminders.at(moment) if "Reminder" in m["Subject"]]
    confirm, cancel = links_of(mail)
    return path_of(confirm), path_of(cancel)


async def status_of(runtime, a: int) -> Status:
    async with runtime.db.read() as s:
        return Status(await s.scalar(select(Appointment.status).where(Appointment.id == a)))


async def test_opening_a_link_changes_nothing_and_the_button_confirms_once(client, login, demo, runtime, reminders):
    a = await place(runtime, demo)
    confirm, _ = await links_at(reminders, START - hours(24))
    page = await client.get(confirm)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "I will come" in page.text and f'action="{confirm}"' in page.text and 'method="post"' in page.text
    assert page.headers["cache-control"] == "no-store"
    again = await client.get(confirm)  # a mail scanner opened it too: still usable
    assert "I will come" in again.text
    async with runtime.db.read() as s:
        assert (await s.scalars(select(AppointmentConfirmation))).all() == []
    done = await client.post(confirm)
    assert done.status_code == 200 and "the clinic now knows that you will come" in done.text
    reused = await client.post(confirm)
    assert reused.status_code == 410 and "already used" in reused.text
    assert "already used" in (await client.get(confirm)).text
    async with runtime.db.read() as s:
        [c] = (await s.scalars(select(AppointmentConfirmation))).all()
        history = (await s.scalars(select(AppointmentHistory).where(AppointmentHistory.appointment_id == a))).all()
        audit = (await s.scalars(select(AuditLog.action).where(AuditLog.entity_id == a))).all()
    assert (c.appointment_id, c.start_at) == (a, START)
    assert history[-1].details["action"] == "patient-confirm" and history[-1].details["via"] == "reminder"
    assert "appointment.patient-confirm" in audit
    assert await status_of(runtime, a) is Status.APPROVED
    # The doctor's list shows it.
    doctor = await login("doctor1")
    listing = (await client.put("/profile/appointments", headers=doctor.headers)).json()
    badge = find(listing["elements"], f"confirmed-{a}")
    assert badge is not None and badge["value"] == "Patient confirmed"


async def test_the_cancel_link_cancels_through_the_patients_own_cancellation(client, demo, runtime, reminders):
    a = await place(runtime, demo)
    confirm, cancel = await links_at(reminders, START - hours(24))
    page = await client.get(cancel)
    assert page.status_code == 200 and "Cancel the appointment" in page.text
    assert await status_of(runtime, a) is Status.APPROVED
    done = await client.post(cancel)
    assert done.status_code == 200 and "Your appointment is canceled" in done.text
    assert await status_of(runtime, a) is Status.CANCELED
    async with runtime.db.read() as s:
        last = (
            await s.scalars(
                select(AppointmentHistory)
                .where(AppointmentHistory.appointment_id == a)
                .order_by(AppointmentHistory.id.desc())
            )
        ).first()
    assert last is not None and last.details["by"] == "patient"
    assert (await client.post(cancel)).status_code == 410  # used
    changed = await client.post(confirm)  # the other link no longer applies
    assert changed.status_code == 200 and "no longer booked" in changed.text
    await reminders.at(START - hours(20))  # the cancellation's own mail goes out
    assert "You canceled your appointment" in reminders.smtp.mailbox.messages()[-1]["Subject"]


async def test_past_the_cancellation_deadline_the_page_says_to_call_the_clinic(client, demo, runtime, reminders):
    a = await place(runtime, demo)
    _, cancel = await links_at(reminders, START - hours(2))  # the clinic's deadline is 12 h before the start
    page = await client.get(cancel)
    assert page.status_code == 200 and "too late to cancel here" in page.text and "call the clinic" in page.text
    assert "<form" not in page.text
    refused = await client.post(cancel)
    assert "too late to cancel here" in refused.text
    assert await status_of(runtime, a) is Status.APPROVED


async def test_a_link_expires_at_the_start(client, demo, runtime, reminders):
    await place(runtime, demo)
    confirm, _ = await links_at(reminders, START - hours(2))
    reminders.clock.at = START
    page = await client.get(confirm)
    assert page.status_code == 410 and "expired" in page.text
    assert (await client.post(confirm)).status_code == 410


async def test_a_forged_or_mangled_link_gets_a_clear_page(client, demo, runtime, reminders):
    await place(runtime, demo)
    confirm, _ = await links_at(reminders, START - hours(24))
    for path in (
        "/reminder/forged-token",
        confirm[:-1] + ("A" if confirm[-1] != "A" else "B"),
        "/reminder/" + "x" * 128,
    ):
        page = await client.get(path)
        assert page.status_code == 404 and "not valid" in page.text, path
        assert (await client.post(path)).status_code == 404
    too_long = await client.get("/reminder/" + "x" * 129)
    assert too_long.status_code == 422


async def test_the_page_speaks_the_patients_language(client, demo, runtime, reminders):
    from sqlalchemy import update

    from doctordesk.store.tables import Patient, User

    a = await place(runtime, demo)
    async with runtime.db.transaction() as s:
        user_id = await s.scalar(
            select(Patient.user_id).join(Appointment, Appointment.patient_id == Patient.id).where(Appointment.id == a)
        )
        await s.execute(update(User).where(User.id == user_id).values(language="de"))
    [mail] = await reminders.at(START - hours(24))
    assert mail["Content-Language"] == "de" and "Erinnerung" in mail["Subject"]
    confirm, _ = (path_of(u) for u in links_of(mail))
    page = await client.get(confirm)
    assert '<html lang="de">' in page.text and "Ich komme" in page.text
    assert "Mi., 20. Jan. 2027" in page.text


async def test_a_confirmation_reaches_webhooks_as_appointment_confirmed(
    client, demo, runtime, reminders, receiver, register, dispatcher
):
    endpoint = await register(receiver.url(), ["appointment.confirmed"])
    a = await place(runtime, demo)
    confirm, _ = await links_at(reminders, START - hours(24))
    assert (await client.post(confirm)).status_code == 200
    await dispatcher.drain()
    [got] = receiver.requests()
    payload = got.verified(endpoint["secret"])
    assert payload["type"] == "appointment.confirmed"
    data = payload["data"]
    assert data["appointment_id"] == a and data["status"]["name"] == "approved"
    assert data["start"] == START.isoformat() and data["confirmed_at"] == (START - hours(24)).isoformat()


async def test_a_moved_appointment_is_unconfirmed_and_its_old_links_no_longer_apply(client, demo, runtime, reminders):
    from sqlalchemy import update

    a = await place(runtime, demo)
    confirm, _ = await links_at(reminders, START - hours(24))
    assert (await client.post(confirm)).status_code == 200
    later = START + timedelta(days=1)
    async with runtime.db.transaction() as s:
        await s.execute(update(Appointment).where(Appointment.id == a).values(start_at=later))
    [moved] = [m for m in await reminders.at(later - hours(24)) if "Reminder" in m["Subject"]]
    fresh, _ = (path_of(u) for u in links_of(moved))
    assert (await client.post(fresh)).status_code == 200
    async with runtime.db.read() as s:
        starts = sorted((await s.scalars(select(AppointmentConfirmation.start_at))).all())
    assert starts == [START, later]


async def test_the_doctors_open_list_learns_of_the_confirmation_live(client, login, demo, runtime, reminders):
    from doctordesk.realtime.routing import Screen, message_for
    from tests.support.review import Events

    a = await place(runtime, demo)
    confirm, _ = await links_at(reminders, START - hours(24))
    doctor = await login("doctor1")
    listing = (await client.put("/profile/appointments", headers={**doctor.headers, "X-Client-Id": "desk"})).json()
    assert find(listing["elements"], f"confirmed-{a}") is None
    events = Events(runtime)
    assert (await client.post(confirm)).status_code == 200
    [event] = [e for e in events.seen if e.kind == "appointment.patient-confirm"]
    # The real-time router tells the open list to poll now (the stream's Timeout, as for any change of it) ...
    shown = runtime.hub.screen_of("desk")
    assert shown is not None and shown.screen == listing["screen"]
    message = message_for(frozenset(event.topics), Screen(shown.user_id, shown.screen, shown.poll, shown.topics))
    assert message is not None and message.timeout is True
    # ... and the poll answers the badge as a patch.
    polled = await client.patch(
        "/profile/appointments", headers={**doctor.headers, "X-Client-Id": "desk", "X-Screen-State": listing["state"]}
    )
    assert polled.status_code == 200 and f"confirmed-{a}" in polled.text and "Patient confirmed" in polled.text


async def test_the_week_view_shows_the_confirmation_in_words_in_english_and_german(
    client, login, demo, runtime, reminders
):
    from doctordesk.screens.protocol import walk

    a = await place(runtime, demo)
    confirm, _ = await links_at(reminders, START - hours(24))
    assert (await client.post(confirm)).status_code == 200
    doctor = await login("doctor1")
    for language, words in (("en", "Patient confirmed"), ("de", "Kommen bestätigt")):
        page = await client.put(
            "/profile/appointments/week",
            params={"day": "2027-01-20"},
            headers={**doctor.headers, "Accept-Language": language},
        )
        assert page.status_code == 200, page.text
        [entry] = [e for e in walk(page.json()["elements"]) if e.get("props", {}).get("appointment") == a]
        assert entry["props"]["confirmed"] is True and words in entry["props"]["details"]


async def test_a_patient_without_an_account_is_asked_to_call_to_cancel(client, demo, runtime, reminders):
    from sqlalchemy import update

    from doctordesk.store.tables import Patient

    a = await place(runtime, demo)
    async with runtime.db.transaction() as s:
        patient = await s.scalar(select(Appointment.patient_id).where(Appointment.id == a))
        await s.execute(update(Patient).where(Patient.id == patient).values(user_id=None))
    confirm, cancel = await links_at(reminders, START - hours(24))
    page = await client.get(cancel)
    assert page.status_code == 200 and "Please call the clinic to cancel" in page.text and "<form" not in page.text
    assert "Please call the clinic to cancel" in (await client.post(cancel)).text
    assert await status_of(runtime, a) is Status.APPROVED
    assert "the clinic now knows" in (await client.post(confirm)).text  # confirming needs no account
