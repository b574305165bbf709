"""The administration's mail screen: the mails to patients that were not sent (the relay refused them, they ran out
of attempts, or the sender stopped after handing one over), then the latest mails with their state
(docs/notifications.md#sending)."""

from __future__ import annotations

from collections.abc import Sequence

from doctordesk.domain.mail.views import MailView
from doctordesk.i18n import N_, _
from doctordesk.i18n.formats import format_local
from doctordesk.screens.admin.pages import BASE, page
from doctordesk.screens.protocol import Element, Layout, Page, el

SCREEN = "admin-mail"
ENDPOINT = f"{BASE}/mail"
LOG_SIZE = 50
STATES = {
    "pending": N_("waiting"),
    "sending": N_("being sent"),
    "sent": N_("sent"),
    "failed": N_("not sent"),
    "unknown": N_("may have been sent (the sender stopped)"),
}
KINDS = {
    "approved": N_("Appointment confirmed"),
    "confirmed": N_("Chosen time confirmed"),
    "alternatives": N_("Other times offered"),
    "declined": N_("Request declined"),
    "canceled": N_("Canceled by the clinic"),
    "canceled-by-patient": N_("Canceled by the patient"),
    "moved": N_("New time"),
    "reminder": N_("Reminder"),
    "waitlist-offer": N_("Earlier time offered from the waitlist"),
    "staff-new-request": N_("New request (to the doctor)"),
    "staff-canceled-by-patient": N_("Canceled by the patient (to the doctor)"),
}


def _row(prefix: str, m: MailView) -> Element:
    state = _(STATES[m.status]) if m.status in STATES else m.status
    kind = _(KINDS[m.kind]) if m.kind in KINDS else m.kind
    when = _("{moment} · attempts {attempts}", moment=format_local(m.created_at, "UTC"), attempts=m.attempts)
    # The relay's answer is shown as recorded: it is the relay's own words.
    answer = " ".join(p for p in (str(m.last_code) if m.last_code else "", m.last_error or "") if p)
    return el(
        f"{prefix}{m.id}",
        "Row",
        el(f"{prefix}{m.id}-what", "Regular", value=f"{kind} · {m.recipient} · {state}"),
        el(f"{prefix}{m.id}-when", "Caption", value=f"{when} · {answer}" if answer else when),
        el(f"{prefix}{m.id}-id", "Caption", value=m.message_id),
    )


def render(not_sent: Sequence[MailView], latest: Sequence[MailView], *, layout: Layout, timeout: int) -> Page:
    problems = el(
        "not-sent",
        "Section",
        el("not-sent-empty", "Caption", value=_("Every mail was sent."), visible=not not_sent),
        *(_row("not-sent-", m) for m in not_sent),
        label=_("Not sent"),
    )
    log = el(
        "latest",
        "Section",
        el("latest-empty", "Caption", value=_("No mail yet."), visible=not latest),
        *(_row("mail-", m) for m in latest),
        label=_("Latest mail"),
    )
    return page(
        screen=SCREEN, current="mail", title=_("Mail to patients"), endpoint=ENDPOINT,
        elements=[problems, log], layout=layout, timeout=timeout,
    )  # fmt: skip
