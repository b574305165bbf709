"""Which changes of an appointment mail its patient, and what each mail says (docs/notifications.md#which-mails).

A patient is mailed when the clinic answers or changes their appointment; never for what they did themselves in
the app but one case, their own cancellation, so their calendar drops the event. The clinic's wording is in the
texts below (English, German in the catalog); the times in them are ``Moment``s, written in the patient's language
in the location's zone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.texts import N_


class MailKind(StrEnum):
    APPROVED = "approved"
    CONFIRMED = "confirmed"  # the patient accepted an offered time: booked at that time
    ALTERNATIVES = "alternatives"
    DECLINED = "declined"
    CANCELED = "canceled"  # by the clinic
    CANCELED_BY_PATIENT = "canceled-by-patient"
    MOVED = "moved"  # to another time by the clinic's systems, awaiting the doctor's decision again
    REMINDER = "reminder"  # before an approved appointment (docs/notifications.md#reminders), with its links
    WAITLIST_OFFER = "waitlist-offer"  # a freed time offered from the waitlist (docs/waitlist.md)
    # To the doctor, when they chose it (docs/notifications.md#staff-mail): never with a calendar part.
    STAFF_NEW_REQUEST = "staff-new-request"
    STAFF_CANCELED = "staff-canceled-by-patient"


# The staff mails, and the setting (a column of ``staff_mail_settings``) that turns each on.
STAFF_KINDS: dict[MailKind, str] = {
    MailKind.STAFF_NEW_REQUEST: "new_request",
    MailKind.STAFF_CANCELED: "canceled_by_patient",
}


# The domain event of a reminder that went (services/reminders/sender.py): it mails and pushes, nothing else.
REMINDER_EVENT = EventKind.APPOINTMENT_REMINDER


class Method(StrEnum):
    """The iTIP method of the calendar part (RFC 5546); None: the mail has none (no time is agreed)."""

    REQUEST = "REQUEST"
    CANCEL = "CANCEL"


def kind_for(event_kind: str, data: Mapping[str, Any]) -> MailKind | None:
    """The mail an appointment event sends its patient; None: none."""
    if event_kind in (EventKind.APPOINTMENT_APPROVE, EventKind.APPOINTMENT_AUTO_APPROVE):
        return MailKind.APPROVED
    if event_kind == EventKind.APPOINTMENT_ACCEPT_OFFER:
        return MailKind.CONFIRMED
    if event_kind == EventKind.APPOINTMENT_SUGGEST:
        return MailKind.ALTERNATIVES
    if event_kind == EventKind.APPOINTMENT_DECLINE:
        return MailKind.DECLINED
    if event_kind == EventKind.APPOINTMENT_CANCEL:
        return MailKind.CANCELED_BY_PATIENT if data.get("canceled_by") == "patient" else MailKind.CANCELED
    if event_kind == EventKind.APPOINTMENT_RESCHEDULE_REQUEST:
        return MailKind.MOVED
    if event_kind == REMINDER_EVENT:
        return MailKind.REMINDER
    if event_kind == EventKind.WAITLIST_OFFERED:
        return MailKind.WAITLIST_OFFER
    return None


def staff_kind_for(event_kind: str, data: Mapping[str, Any]) -> MailKind | None:
    """The mail an appointment event sends its doctor when they chose it; None: none (a confirmation by a
    reminder's link, a decision the doctor made themselves, the clinic's own changes)."""
    if event_kind == EventKind.APPOINTMENT_REQUEST:
        return MailKind.STAFF_NEW_REQUEST
    if event_kind == EventKind.APPOINTMENT_CANCEL and data.get("canceled_by") == "patient":
        return MailKind.STAFF_CANCELED
    return None


@dataclass(frozen=True, slots=True)
class Wording:
    subject: str  # placeholders: {doctor}
    lead: str  # placeholders: {patient}, {doctor}, {when}
    method: Method | None
    event_status: str  # the VEVENT's STATUS


WORDING: dict[MailKind, Wording] = {
    MailKind.APPROVED: Wording(
        N_("Your appointment with {doctor} is confirmed"),
        N_("Dear {patient}, your appointment with {doctor} on {when} is confirmed."),
        Method.REQUEST,
        "CONFIRMED",
    ),
    MailKind.CONFIRMED: Wording(
        N_("Your appointment with {doctor} is confirmed"),
        N_("Dear {patient}, you chose {when}: your appointment with {doctor} is confirmed at this time."),
        Method.REQUEST,
        "CONFIRMED",
    ),
    MailKind.ALTERNATIVES: Wording(
        N_("{doctor} offers you other times"),
        N_(
            "Dear {patient}, {doctor} cannot see you on {when} and offers you other times. "
            "Please choose one in the app."
        ),
        None,
        "TENTATIVE",
    ),
    MailKind.DECLINED: Wording(
        N_("Your appointment request with {doctor} was declined"),
        N_("Dear {patient}, {doctor} cannot take your request for {when}."),
        Method.CANCEL,
        "CANCELLED",
    ),
    MailKind.CANCELED: Wording(
        N_("Your appointment with {doctor} is canceled"),
        N_("Dear {patient}, the clinic has canceled your appointment with {doctor} on {when}."),
        Method.CANCEL,
        "CANCELLED",
    ),
    MailKind.CANCELED_BY_PATIENT: Wording(
        N_("You canceled your appointment with {doctor}"),
        N_("Dear {patient}, you canceled your appointment with {doctor} on {when}."),
        Method.CANCEL,
        "CANCELLED",
    ),
    MailKind.MOVED: Wording(
        N_("Your appointment with {doctor} has a new time"),
        N_(
            "Dear {patient}, your appointment with {doctor} moves to {when}. "
            "The doctor will confirm the new time; we will write to you again."
        ),
        Method.REQUEST,
        "TENTATIVE",
    ),
    MailKind.REMINDER: Wording(
        N_("Reminder: your appointment with {doctor}"),
        N_("Dear {patient}, this is a reminder of your appointment with {doctor} on {when}."),
        Method.REQUEST,
        "CONFIRMED",
    ),
    # No calendar part: nothing is agreed until the patient accepts (and the doctor approves).
    MailKind.WAITLIST_OFFER: Wording(
        N_("An earlier time with {doctor} is free"),
        N_("Dear {patient}, an earlier time with {doctor} is free: {when}. Accept it on your waitlist in the app."),
        None,
        "TENTATIVE",
    ),
    MailKind.STAFF_NEW_REQUEST: Wording(
        N_("New appointment request from {patient}"),
        N_("Dear {doctor}, {patient} asks for an appointment with you on {when}. Please review it in the app."),
        None,
        "TENTATIVE",
    ),
    MailKind.STAFF_CANCELED: Wording(
        N_("{patient} canceled their appointment"),
        N_("Dear {doctor}, {patient} canceled their appointment with you on {when}."),
        None,
        "CANCELLED",
    ),
}

REASON = N_("Reason: {reason}")
# The reminder's links (docs/notifications.md#reminders): each opens a page that asks to confirm with a button.
LINK_CONFIRM = N_("Will you come? Tell the clinic: {url}")
LINK_CANCEL = N_("You cannot come? Cancel the appointment: {url}")
WHERE = N_("Where: {location}")
# How long a waitlist offer lasts, by the clinic's mode (docs/waitlist.md#modes-the-clinics-policy).
OFFER_UNTIL = N_("It is offered to you until {until}; then it goes to the next patient waiting.")
OFFER_TO_ALL = N_("It is offered to the other patients waiting for it too: the first to accept it gets it.")
SIGN_OFF = N_("This message was sent by your clinic's appointment service. Please do not reply to it.")
CALENDAR_NOTE = N_("The attached calendar file adds the appointment to your calendar, or updates it there.")
