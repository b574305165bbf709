"""Reminders at their moments (docs/notifications.md#reminders), on SQLite and PostgreSQL, with the Clock put at
each: 24 h and 2 h before the start, one reminder (not one per passed window) for an appointment approved inside a
window, quiet hours moving a reminder, a moved appointment reminded for its new time, a canceled one not at all.
Received by a real SMTP server (parsed with ``email`` and ``icalendar``) and by the push partner."""

from __future__ import annotations

from datetime import timedelta

from icalendar import Calendar
from sqlalchemy import select, update

from doctordesk.store.mail_tables import MailMessage, ReminderSent
from doctordesk.store.realtime_tables import PushOutbox
from doctordesk.store.tables import Appointment, User
from tests.integration.reminders.conftest import START, hours, links_of, phone_of, place, zone_and_patient
from tests.support.integration import make_key


async def sent_windows(runtime, a: int) -> list[int]:
    async with runtime.db.read() as s:
        rows = await s.scalars(
            select(ReminderSent.hours).where(ReminderSent.appointment_id == a).order_by(ReminderSent.id)
        )
        return list(rows.all())


async def clinic(client, login, **changes) -> None:
    admin = await login("admin")
    response = await client.put("/admin/clinic", headers=admin.headers, json=changes)
    assert response.status_code == 200, response.text


async def test_reminders_go_24_and_2_hours_before_the_start_by_mail_with_links_and_calendar_part_and_by_push(
    client, login, demo, runtime, reminders, push
):
    a = await place(runtime, demo)
    zone, user_id, address = await zone_and_patient(runtime, a)
    assert zone == "Europe/Berlin" and address
    async with runtime.db.read() as s:
        username = await s.scalar(select(User.username).where(User.id == user_id))
    await phone_of(client, login, username)
    assert await reminders.at(START - hours(24) - timedelta(minutes=1)) == []
    [first] = await reminders.at(START - hours(24))
    assert "Reminder" in first["Subject"] and first["To"].addresses[0].addr_spec == address
    text = first.get_body(preferencelist=("plain",)).get_content()
    html = first.get_body(preferencelist=("html",)).get_content()
    assert "reminder of your appointment" in text and "Wed 20 Jan 2027, 10:00" in text
    confirm, cancel = links_of(first)
    assert confirm.startswith("https://clinic.example/reminder/") and confirm != cancel
    assert f'href="{confirm}"' in html and f'href="{cancel}"' in html
    [part] = [p for p in first.walk() if p.get_content_type() == "text/calendar"]
    [event] = Calendar.from_ical(part.get_payload(decode=True)).walk("VEVENT")
    assert str(event["UID"]) == f"appointment-{a}@clinic.example" and event["STATUS"] == "CONFIRMED"
    assert event["DTSTART"].dt == START
    assert len(push.accepted) == 1  # the patient's phone got it too
    assert await reminders.at(START - hours(3)) == []  # between the windows: nothing
    [second] = await reminders.at(START - hours(2))
    assert "Reminder" in second["Subject"] and links_of(second)[0] != confirm  # links of its own
    assert await reminders.at(START - hours(1)) == []
    assert await sent_windows(runtime, a) == [24, 2]
    assert len(push.accepted) == 2
    async with runtime.db.read() as s:
        kinds = (await s.scalars(select(PushOutbox.kind).order_by(PushOutbox.id))).all()
    assert list(kinds)[-2:] == ["appointment.reminder", "appointment.reminder"]


async def test_an_appointment_approved_inside_a_window_gets_that_windows_reminder_at_once_and_only_one(
    demo, runtime, reminders
):
    a = await place(runtime, demo, START)
    # Approved an hour before the start: both windows have passed; one reminder goes, the 2 h one.
    assert len(await reminders.at(START - hours(1))) == 1
    assert await reminders.at(START - hours(1) + timedelta(minutes=5)) == []
    assert await sent_windows(runtime, a) == [2]


async def test_approved_between_the_windows_gets_the_24_hour_reminder_at_once_then_the_2_hour_one(
    demo, runtime, reminders
):
    a = await place(runtime, demo, START)
    assert len(await reminders.at(START - hours(20))) == 1
    assert await reminders.at(START - hours(19)) == []
    assert len(await reminders.at(START - hours(2))) == 1
    assert await sent_windows(runtime, a) == [24, 2]


async def test_the_servers_reminder_hours_are_the_clinics_default(client, login, demo, runtime, reminders):
    # DOCTORDESK_REMINDER_HOURS=48,1 (read as tests/unit/test_config.py shows), no choice saved on the Clinic screen.
    runtime.settings = runtime.settings.model_copy(update={"reminder_hours": "48,1"})
    admin = await login("admin")
    assert (await client.get("/admin/clinic", headers=admin.headers)).json()["reminder_hours"] == [48, 1]
    a = await place(runtime, demo, START)
    assert await reminders.at(START - hours(48) - timedelta(minutes=1)) == []
    assert len(await reminders.at(START - hours(48))) == 1
    assert await reminders.at(START - hours(24)) == []
    assert await reminders.at(START - hours(2)) == []
    assert len(await reminders.at(START - hours(1))) == 1
    assert await sent_windows(runtime, a) == [48, 1]


async def test_a_reminder_due_in_quiet_hours_goes_at_their_end_when_that_is_before_the_start(
    client, login, demo, runtime, reminders
):
    await clinic(client, login, reminder_hours=[4], quiet_begin="21:00", quiet_end="08:00")
    a = await place(runtime, demo, START)  # 10:00 Berlin: 4 h before is 06:00, in the quiet hours
    assert await reminders.at(START - hours(4)) == []
    assert await reminders.at(START - hours(2) - timedelta(minutes=1)) == []  # 07:59 Berlin
    assert len(await reminders.at(START - hours(2))) == 1  # 08:00 Berlin: the quiet hours end
    assert await sent_windows(runtime, a) == [4]


async def test_a_reminder_whose_quiet_hours_end_after_the_start_goes_when_they_begin_the_evening_before(
    client, login, demo, runtime, reminders
):
    await clinic(client, login, reminder_hours=[2], quiet_begin="21:00", quiet_end="08:00")
    early = START - hours(2) - timedelta(minutes=30)  # 07:30 Berlin: 2 h before is 05:30, quiet until 08:00
    a = await place(runtime, demo, early)
    evening = early.replace(hour=20, minute=0) - timedelta(days=1)  # 21:00 Berlin the evening before
    assert await reminders.at(evening - timedelta(minutes=1)) == []
    assert len(await reminders.at(evening)) == 1
    assert await reminders.at(early - hours(2)) == []
    assert await sent_windows(runtime, a) == [2]


async def test_a_moved_appointment_is_reminded_for_its_new_time(demo, runtime, reminders):
    a = await place(runtime, demo, START)
    assert len(await reminders.at(START - hours(24))) == 1
    later = START + timedelta(days=2)
    async with runtime.db.transaction() as s:
        await s.execute(update(Appointment).where(Appointment.id == a).values(start_at=later))
    assert await reminders.at(START - hours(2)) == []  # nothing at the old time
    [moved] = await reminders.at(later - hours(24))
    assert "Fri 22 Jan 2027, 10:00" in moved.get_body(preferencelist=("plain",)).get_content()
    assert len(await reminders.at(later - hours(2))) == 1


async def test_a_canceled_appointment_gets_no_more_reminders(client, login, demo, runtime, reminders):
    a = await place(runtime, demo, START)
    assert len(await reminders.at(START - hours(24))) == 1
    key = await make_key(client, (await login("admin")).headers)
    response = await client.post(
        f"/integration/v1/appointments/{a}/cancel", headers=key.headers, json={"by": "clinic", "reason": "Doctor ill"}
    )
    assert response.status_code == 200, response.text
    later = await reminders.at(START - hours(2))
    assert [m["Subject"] for m in later if "Reminder" in m["Subject"]] == []
    assert await sent_windows(runtime, a) == [24]


async def test_reminders_switched_off_by_the_clinic_are_not_sent(client, login, demo, runtime, reminders):
    await clinic(client, login, reminders_enabled=False)
    a = await place(runtime, demo, START)
    assert await reminders.at(START - hours(24)) == []
    assert await sent_windows(runtime, a) == []
    async with runtime.db.read() as s:
        assert (await s.scalars(select(MailMessage).where(MailMessage.kind == "reminder"))).all() == []


async def test_every_appointment_due_is_reminded_however_many_batches_they_take(demo, runtime, reminders, monkeypatch):
    from doctordesk.domain.appointments.status import Status
    from doctordesk.services.reminders import sender

    monkeypatch.setattr(sender, "BATCH", 2)
    async with runtime.db.read() as s:
        approved = list(
            (await s.scalars(select(Appointment.id).where(Appointment.status == int(Status.APPROVED)))).all()
        )
    assert len(approved) >= 3
    async with runtime.db.transaction() as s:
        for n, a in enumerate(approved):
            await s.execute(
                update(Appointment).where(Appointment.id == a).values(start_at=START + timedelta(minutes=n))
            )
    await reminders.at(START - hours(1))
    async with runtime.db.read() as s:
        reminded = set((await s.scalars(select(ReminderSent.appointment_id))).all())
    assert reminded == set(approved)


async def test_reminders_run_only_where_a_patient_can_be_reached(runtime, settings):
    from doctordesk.bootstrap import build_reminder_sender, reminders_reach_patients

    assert build_reminder_sender(runtime) is not None  # a relay and a push partner
    assert reminders_reach_patients(settings.model_copy(update={"smtp_url": ""}))  # push alone
    assert reminders_reach_patients(settings.model_copy(update={"push_url": ""}))  # mail alone
    assert not reminders_reach_patients(settings.model_copy(update={"smtp_url": "", "push_url": ""}))
