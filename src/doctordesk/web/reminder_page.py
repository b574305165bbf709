"""The page behind a reminder's link (docs/notifications.md#reminders): a small server page in the patient's
language, on the web app's stylesheet, without scripts. Opening it shows the appointment and a button; only the
button's POST acts. Every outcome and refusal is a page of its own (never an error document)."""

from __future__ import annotations

import html

from doctordesk import i18n
from doctordesk.domain.texts import N_, Text
from doctordesk.i18n.formats import format_local
from doctordesk.services.reminders.links import CONFIRM, LinkView, State

TITLE = N_("Your appointment")
ASK = {
    CONFIRM: (N_("Please confirm that you will come to this appointment."), N_("I will come")),
    "cancel": (N_("Do you want to cancel this appointment?"), N_("Cancel the appointment")),
}
SAID: dict[State, str] = {
    State.CONFIRMED: N_("Thank you: the clinic now knows that you will come."),
    State.CANCELED: N_("Your appointment is canceled. The clinic has been told."),
    State.USED: N_("This link was already used. Nothing more needs to be done."),
    State.EXPIRED: N_("This link has expired: the appointment has already started."),
    State.INVALID: N_("This link is not valid. Please open the whole address from the clinic's message."),
    State.CHANGED: N_(
        "This appointment was changed or is no longer booked, so this link no longer applies. "
        "Please read the clinic's latest message."
    ),
    State.TOO_LATE: N_(
        "It is too late to cancel here: appointments can be canceled up to {hours} hours before they start. "
        "Please call the clinic."
    ),
    State.NO_ACCOUNT: N_("Please call the clinic to cancel this appointment."),
}
STATUS = {State.INVALID: 404, State.USED: 410, State.EXPIRED: 410}


def render(view: LinkView, *, language: str, action_path: str) -> tuple[int, str]:
    """The page's HTTP status and HTML."""
    lang = language if language in i18n.LOCALES else i18n.DEFAULT
    title = i18n.t(lang, TITLE)
    parts = [f"<h1>{html.escape(title)}</h1>"]
    if view.start is not None and view.state is not State.INVALID:
        when = format_local(view.start, view.timezone, lang)
        summary = ", ".join(p for p in (view.doctor, when, view.location) if p)
        parts.append(f'<p class="reminder-appointment">{html.escape(summary)}</p>')
    if view.state is State.READY:
        question, button = ASK[view.action]
        tone = "primary" if view.action == CONFIRM else "danger"
        parts.append(f"<p>{html.escape(i18n.t(lang, question))}</p>")
        parts.append(
            f'<form method="post" action="{html.escape(action_path)}">'
            f'<button type="submit" class="btn" data-tone="{tone}">{html.escape(i18n.t(lang, button))}</button>'
            "</form>"
        )
    else:
        words = i18n.t(lang, Text(SAID[view.state], hours=view.cancel_hours))
        parts.append(f'<p role="status" class="reminder-outcome">{html.escape(words)}</p>')
    page = (
        f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>{html.escape(title)} · doctordesk</title><link rel="stylesheet" href="/app.css"></head>'
        f'<body><main id="main" class="reminder-page">{"".join(parts)}</main></body></html>\n'
    )
    return STATUS.get(view.state, 200), page
