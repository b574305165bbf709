"""The Notifications section of one's own security page (docs/notifications.md#staff-mail), for doctors and
support: the address the clinic's mail goes to and, per kind, whether to be mailed."""

from __future__ import annotations

from doctordesk.i18n import _
from doctordesk.screens.protocol import Action, Element, el

ENDPOINT = "/profile/security/mail"
MAX_ADDRESS = 254
FORM = "notifications"


def section(*, email: str | None, new_request: bool, canceled_by_patient: bool) -> Element:
    return el(
        FORM, "Section",
        el("mail-how", "Caption", value=_("The clinic mails you at this address for the changes you choose. "
                                          "Leave it empty to get no mail.")),
        el("mail-email", "Edit", label=_("Your email address"), name="email", value=email or "",
           props={"maxlength": MAX_ADDRESS, "autocomplete": "email", "inputmode": "email"}),
        el("mail-new-request", "Checkbox", label=_("Mail me a new appointment request for me"), name="new_request",
           value=new_request),
        el("mail-canceled", "Checkbox", label=_("Mail me when a patient cancels their appointment with me"),
           name="canceled_by_patient", value=canceled_by_patient),
        el("mail-save", "Button", label=_("Save notifications"), action=Action("POST", ENDPOINT, form=FORM)),
        label=_("Notifications by email"),
    )  # fmt: skip
