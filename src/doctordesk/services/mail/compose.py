"""A patient's mail, composed with ``email.message.EmailMessage``: a plain text part and an HTML part with the same
words (every value escaped, no remote content: no images, styles or links to fetch), and, when a time is agreed or
withdrawn, the appointment as an iCalendar invitation or cancellation (RFC 5546) that calendar programs import.

The calendar event's UID is the appointment's own (the same in every mail about it) and its SEQUENCE the
appointment's version, which moves with every change, so a later mail updates or removes the event an earlier
one added.
"""

from __future__ import annotations

import html
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime, formataddr
from typing import Any
from zoneinfo import ZoneInfo

from icalendar import Calendar, Event, vCalAddress, vText

from doctordesk import i18n
from doctordesk.domain.mail import notices
from doctordesk.domain.mail.notices import MailKind, Method
from doctordesk.domain.texts import Moment, Text
from doctordesk.store.tables import Appointment, Location

PRODID = "-//doctordesk//patient mail//EN"


@dataclass(frozen=True, slots=True)
class MailFacts:
    """What a mail about one appointment says."""

    appointment_id: int
    patient_id: int
    version: int
    patient_name: str
    recipient: str
    language: str
    doctor_name: str
    location_name: str
    location_address: str
    timezone: str
    start: datetime
    duration_minutes: int
    service: str
    reason: str | None = None
    # A reminder's links: (the line's words with a {url} placeholder, the address), in order.
    links: tuple[tuple[str, str], ...] = ()
    # What the mail is about when it is no appointment's change (a waitlist offer: ``offer:12``); the outbox's
    # ``event_key`` then names it instead of the appointment and its version.
    about: str | None = None
    # The recipient's name when the mail is not the patient's own (a doctor's staff mail).
    recipient_name: str | None = None
    # Further paragraphs after the place (a waitlist offer: how long it is theirs), translated as the rest.
    notes: tuple[Text, ...] = ()


def appointment_facts(
    appointment: Appointment,
    location: Location,
    *,
    patient_name: str,
    doctor_name: str,
    recipient: str,
    language: str | None,
    **rest: Any,
) -> MailFacts:
    """The facts of a mail about ``appointment`` at its ``location``, to
    ``recipient`` in ``language`` (the default language when unknown); ``rest``: the kind's own fields (a reason,
    links, the recipient's name)."""
    return MailFacts(
        appointment_id=appointment.id,
        patient_id=appointment.patient_id,
        version=appointment.version,
        patient_name=patient_name,
        recipient=recipient,
        language=language or i18n.DEFAULT,
        doctor_name=doctor_name,
        location_name=location.name,
        location_address=location.address,
        timezone=location.timezone,
        start=appointment.start_at,
        duration_minutes=appointment.duration_minutes,
        service=appointment.service,
        **rest,
    )


def sender_domain(sender: str) -> str:
    return sender.rpartition("@")[2] or "localhost"


def event_uid(appointment_id: int, sender: str) -> str:
    """The calendar event's UID for an appointment: stable across every mail about it."""
    return f"appointment-{appointment_id}@{sender_domain(sender)}"


def compose(facts: MailFacts, kind: MailKind, *, sender: str, now: datetime) -> tuple[str, str]:
    """The mail's Message-ID and its whole text (as it goes over SMTP)."""
    wording = notices.WORDING[kind]
    lang = facts.language if facts.language in i18n.LOCALES else i18n.DEFAULT
    when = Moment(facts.start, facts.timezone)
    subject = i18n.t(lang, Text(wording.subject, doctor=facts.doctor_name, patient=facts.patient_name))
    lines = [i18n.t(lang, Text(wording.lead, patient=facts.patient_name, doctor=facts.doctor_name, when=when))]
    where = ", ".join(p for p in (facts.location_name, facts.location_address) if p)
    if where:
        lines.append(i18n.t(lang, Text(notices.WHERE, location=where)))
    if facts.reason:
        lines.append(i18n.t(lang, Text(notices.REASON, reason=facts.reason)))
    lines.extend(i18n.t(lang, note) for note in facts.notes)
    link_lines = [(i18n.t(lang, Text(words, url="\x00")), url) for words, url in facts.links]
    lines.extend(words.replace("\x00", url) for words, url in link_lines)
    if wording.method is not None:
        lines.append(i18n.t(lang, notices.CALENDAR_NOTE))
    lines.append(i18n.t(lang, notices.SIGN_OFF))
    message_id = f"<{uuid.uuid4().hex}@{sender_domain(sender)}>"
    msg = EmailMessage(policy=SMTP)
    msg["From"] = sender
    msg["To"] = formataddr((facts.recipient_name or facts.patient_name, facts.recipient))
    msg["Subject"] = subject
    msg["Date"] = format_datetime(now)
    msg["Message-ID"] = message_id
    msg["Auto-Submitted"] = "auto-generated"  # RFC 3834: vacation responders do not answer it
    msg.set_content("\n\n".join(lines) + "\n")
    paragraphs = "".join(f"<p>{_html_line(line, link_lines)}</p>" for line in lines)
    page = f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><title>{html.escape(subject)}</title>'
    msg.add_alternative(f"{page}</head><body>{paragraphs}</body></html>\n", subtype="html")
    if wording.method is not None:
        ics = invitation(facts, wording.method, wording.event_status, sender=sender, now=now, summary=subject)
        msg.add_attachment(
            ics,
            maintype="text",
            subtype="calendar",
            filename="appointment.ics",
            params={"method": wording.method.value, "charset": "utf-8"},
        )
    msg["Content-Language"] = lang  # after the parts: setting the content drops the Content-* headers set before
    return message_id, msg.as_string()


def _html_line(line: str, links: list[tuple[str, str]]) -> str:
    """A paragraph's HTML: escaped, a link line's address as a link to follow."""
    for words, url in links:
        if line == words.replace("\x00", url):
            before, _, after = words.partition("\x00")
            anchor = f'<a href="{html.escape(url)}">{html.escape(url)}</a>'
            return f"{html.escape(before)}{anchor}{html.escape(after)}"
    return html.escape(line)


def invitation(facts: MailFacts, method: Method, status: str, *, sender: str, now: datetime, summary: str) -> bytes:
    """The appointment as an iTIP ``REQUEST`` or ``CANCEL``: one VEVENT in the location's zone, its VTIMEZONE,
    the clinic as organizer and the patient as the attendee."""
    zone = ZoneInfo(facts.timezone)
    calendar = Calendar()
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("method", method.value)
    event = Event()
    event.add("uid", event_uid(facts.appointment_id, sender))
    event.add("dtstamp", now)
    event.add("sequence", facts.version)
    event.add("dtstart", facts.start.astimezone(zone))
    event.add("dtend", (facts.start + timedelta(minutes=facts.duration_minutes)).astimezone(zone))
    event.add("summary", summary)
    event.add("status", status)
    where = ", ".join(p for p in (facts.location_name, facts.location_address) if p)
    if where:
        event.add("location", where)
    organizer = vCalAddress(f"mailto:{sender}")
    organizer.params["cn"] = vText(facts.doctor_name)
    event.add("organizer", organizer)
    attendee = vCalAddress(f"mailto:{facts.recipient}")
    attendee.params["cn"] = vText(facts.patient_name)
    attendee.params["role"] = vText("REQ-PARTICIPANT")
    attendee.params["partstat"] = vText("ACCEPTED")
    attendee.params["rsvp"] = vText("FALSE")
    event.add("attendee", attendee)
    calendar.add_component(event)
    year = facts.start.astimezone(zone).year
    calendar.add_missing_timezones(
        first_date=datetime(year - 1, 1, 1).date(), last_date=datetime(year + 2, 1, 1).date()
    )
    ics: bytes = calendar.to_ical()
    return ics
