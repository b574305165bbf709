"""One's own security page (docs/accounts.md#security-page), for every role: sessions and the phones that get
notifications (this one marked), passkeys, the authenticator app (its QR code while it is being set up), recovery
codes left, the apps one allowed; each with its control to end, remove or revoke it.

The QR code travels as an ``Image`` whose value is a ``data:image/svg+xml`` URL drawn here by ``segno``: the
client shows it as an ``<img>``, where an SVG runs no script, so nothing of it ever goes through HTML parsing."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import segno

from doctordesk.domain.accounts.security import ConnectedApp, DeviceRow, Overview, PasskeyRow, PendingTotp, SessionRow
from doctordesk.domain.accounts.user_agents import MAX_DEVICE_CHARS, SessionDevice, in_words
from doctordesk.domain.texts import Moment, Text
from doctordesk.i18n import _, stored
from doctordesk.screens.protocol import Action, Element, Layout, Page, el

SCREEN = "security"
MAX_PASSWORD = 1024
MAX_PASSKEY_NAME = 64
ENDPOINT = "/profile/security"
PLATFORMS = {"android": "Android", "ios": "iOS", "web": "Web"}


def qr_data_url(uri: str) -> str:
    """The QR code of ``uri`` as an SVG ``data:`` URL (dark on light, a quiet zone of four modules)."""
    return str(segno.make(uri, error="m").svg_data_uri(scale=5, border=4, dark="#000", light="#fff"))


def _when(at: datetime, zone: str) -> Moment:
    return Moment(at, zone)


def device_text(device: SessionDevice | None) -> str:
    """What signed in, in the reader's language: "Firefox on Windows" / "Firefox unter Windows", one name alone,
    a description stored whole as it is, or "Unknown device"; at most ``MAX_DEVICE_CHARS`` in any language. Every
    place that shows a session's device writes it so (docs/accounts.md#which-device-a-session-is)."""
    text = stored(in_words(device)) or _("Unknown device")
    return text[:MAX_DEVICE_CHARS].rstrip()


def _session(s: SessionRow, zone: str) -> Element:
    end = el(
        f"end-session-{s.id}", "Button", label=_("End this session"),
        action=Action("POST", f"{ENDPOINT}/sessions/{s.id}/end",
                      confirm=_("End this session? That browser or phone is signed out at once.")),
    )  # fmt: skip
    parts = [
        el(f"session-{s.id}-device", "Regular", value=device_text(s.device)),
        el(f"session-{s.id}-when", "Regular", value=_(Text("Signed in {at}", at=_when(s.created_at, zone)))),
        el(f"session-{s.id}-until", "Caption", value=_(Text("Valid until {at}", at=_when(s.expires_at, zone)))),
    ]
    if s.current:
        parts.append(el(f"session-{s.id}-current", "Badge", value=_("This device")))
    else:
        parts.append(end)
    return el(f"session-{s.id}", "Row", *parts, label=_("Session"))


def _device(d: DeviceRow, zone: str) -> Element:
    what = Text("{platform} phone, last active {at}", platform=PLATFORMS.get(d.platform, d.platform),
                at=_when(d.last_active_at, zone))  # fmt: skip
    return el(
        f"device-{d.id}", "Row",
        el(f"device-{d.id}-what", "Regular", value=_(what)),
        el(f"remove-device-{d.id}", "Button", label=_("Stop notifications"),
           action=Action("POST", f"{ENDPOINT}/devices/{d.id}/remove")),
        label=_("Phone"),
    )  # fmt: skip


def _sessions(sessions: Sequence[SessionRow], devices: Sequence[DeviceRow], zone: str) -> Element:
    others = any(not s.current for s in sessions) or bool(devices)
    return el(
        "sessions", "Section",
        el("sessions-intro", "Caption", value=_("Where you are signed in. End a session you do not recognise.")),
        *(_session(s, zone) for s in sessions),
        *(_device(d, zone) for d in devices),
        el("sign-out-elsewhere", "Button", label=_("Sign out everywhere else"), enabled=others,
           action=Action("POST", f"{ENDPOINT}/sign-out-elsewhere",
                         confirm=_("Sign out everywhere else? Your other sessions end, the apps you allowed lose "
                                   "their access and your phones stop getting notifications. This browser stays "
                                   "signed in."))),
        label=_("Sessions and devices"),
    )  # fmt: skip


def _password(view: Overview) -> Element:
    if not view.has_password:
        note = _(
            "You have no password to change: you sign in through single sign-on, or an administrator gives you a "
            "password."
        )
        return el("password", "Section", el("password-sso", "Caption", value=note), label=_("Password"))
    return el(
        "password", "Section",
        el("password-how", "Caption",
           value=_("At least 8 characters. Changing it signs you out everywhere else.")),
        el("password-current", "Password", label=_("Current password"), name="password",
           props={"maxlength": MAX_PASSWORD}),
        el("password-new", "Password", label=_("New password"), name="new_password",
           props={"maxlength": MAX_PASSWORD, "autocomplete": "new-password"}),
        el("password-again", "Password", label=_("New password again"), name="new_password_again",
           props={"maxlength": MAX_PASSWORD, "autocomplete": "new-password"}),
        el("password-change", "Button", label=_("Change password"),
           props={"requires": ["password", "new_password", "new_password_again"]},
           action=Action("POST", f"{ENDPOINT}/password", form="password")),
        label=_("Password"),
    )  # fmt: skip


def _passkey(k: PasskeyRow, zone: str) -> Element:
    used = (
        Text("Added {added}, last used {used}", added=_when(k.created_at, zone), used=_when(k.last_used_at, zone))
        if k.last_used_at is not None
        else Text("Added {added}, not used yet", added=_when(k.created_at, zone))
    )
    return el(
        f"passkey-{k.id}", "Row",
        el(f"passkey-{k.id}-name", "Regular", value=k.name),
        el(f"passkey-{k.id}-used", "Caption", value=_(used)),
        el(f"remove-passkey-{k.id}", "Button", label=_("Remove"),
           action=Action("POST", f"{ENDPOINT}/passkeys/{k.id}/remove",
                         confirm=_("Remove this passkey? It will no longer sign you in."))),
        label=_("Passkey"),
    )  # fmt: skip


def _passkeys(keys: Sequence[PasskeyRow], zone: str) -> Element:
    # "Add a passkey" runs the browser's WebAuthn call first (props.webauthn): the client asks
    # /auth/passkeys/options, lets the browser create the passkey and sends it here with the ticket.
    return el(
        "passkeys", "Section",
        el("no-passkeys", "Caption", value=_("You have no passkeys."), visible=not keys),
        *(_passkey(k, zone) for k in keys),
        el("passkey-name", "Edit", label=_("Name of the new passkey (optional)"), name="name",
           placeholder=_("e.g. Laptop"), props={"maxlength": MAX_PASSKEY_NAME}),
        el("add-passkey", "Button", label=_("Add a passkey"), props={"webauthn": "create"},
           action=Action("POST", f"{ENDPOINT}/passkeys", form="passkeys")),
        label=_("Passkeys"),
    )  # fmt: skip


def _setting_up(pending: PendingTotp) -> list[Element]:
    key = " ".join(pending.secret[i : i + 4] for i in range(0, len(pending.secret), 4))
    return [
        el("totp-how", "Caption",
           value=_("Scan the QR code with your authenticator app, or type the key into it; then enter the code it "
                   "shows.")),
        el("totp-qr", "Image", value=qr_data_url(pending.uri), label=_("QR code for your authenticator app")),
        el("totp-key", "Regular", label=_("Key"), value=key),
        el("totp-code", "Edit", label=_("Code from the app"), name="code", props={"maxlength": 6}),
        el("totp-confirm", "Button", label=_("Turn on"), props={"requires": ["code"]},
           action=Action("POST", f"{ENDPOINT}/totp/confirm", form="authenticator")),
        el("totp-cancel", "Button", label=_("Cancel"), action=Action("POST", f"{ENDPOINT}/totp/off")),
    ]  # fmt: skip


def _authenticator(view: Overview) -> Element:
    if view.totp:
        parts = [
            el("totp-state", "Regular", value=_("On: sign-ins ask for a code from your app.")),
            el("totp-off", "Button", label=_("Turn off"),
               action=Action("POST", f"{ENDPOINT}/totp/off",
                             confirm=_("Turn the authenticator app off? Its codes will no longer sign you in."))),
        ]  # fmt: skip
    elif view.pending is not None:
        parts = _setting_up(view.pending)
    else:
        parts = [
            el("totp-state", "Regular", value=_("Off.")),
            el("totp-on", "Button", label=_("Set up an authenticator app"),
               action=Action("POST", f"{ENDPOINT}/totp/start")),
        ]  # fmt: skip
    if view.required:
        parts.insert(0, el("factor-required", "Caption", value=_("Your role must sign in with a second factor.")))
    return el("authenticator", "Section", *parts, label=_("Authenticator app"))


def _recovery(view: Overview) -> Element:
    has_factor = view.totp or bool(view.passkeys)
    left = (
        _(Text("{count} unused recovery codes left.", count=view.recovery_left))
        if has_factor
        else _("Recovery codes come with a second factor.")
    )
    return el(
        "recovery", "Section",
        el("recovery-left", "Regular", value=left),
        el("new-codes", "Button", label=_("Make new recovery codes"), enabled=has_factor,
           action=Action("POST", f"{ENDPOINT}/recovery-codes",
                         confirm=_("Make new recovery codes? The old ones stop working."))),
        el("codes", "Section", visible=False, label=_("Your new recovery codes")),
        label=_("Recovery codes"),
    )  # fmt: skip


def _app(a: ConnectedApp, zone: str) -> Element:
    return el(
        f"app-{a.client_pk}", "Row",
        el(f"app-{a.client_pk}-name", "Regular", value=a.name),
        el(f"app-{a.client_pk}-scopes", "Caption", value=" ".join(a.scopes)),
        el(f"app-{a.client_pk}-when", "Caption",
           value=_(Text("Allowed {since}; access until {until} unless it is renewed",
                        since=_when(a.since, zone), until=_when(a.until, zone)))),
        el(f"revoke-app-{a.client_pk}", "Button", label=_("Revoke access"),
           action=Action("POST", f"{ENDPOINT}/apps/{a.client_pk}/revoke",
                         confirm=_("Revoke {app}'s access? It must ask you again.", app=a.name))),
        label=a.name,
    )  # fmt: skip


def _apps(apps: Sequence[ConnectedApp], zone: str) -> Element:
    return el(
        "apps", "Section",
        el("no-apps", "Caption", value=_("No app has access to your account."), visible=not apps),
        *(_app(a, zone) for a in apps),
        label=_("Connected apps"),
    )  # fmt: skip


def codes_element(codes: Sequence[str]) -> Element:
    """The new recovery codes, shown on the answer that made them (never on a page)."""
    return el(
        "codes", "Section",
        el("codes-note", "Caption", value=_("Keep these codes somewhere safe: each signs you in once. They are shown "
                                            "only now.")),
        *(el(f"code-{n}", "Regular", value=code) for n, code in enumerate(codes, start=1)),
        label=_("Your new recovery codes"),
    )  # fmt: skip


def render(view: Overview, *, zone: str, layout: Layout, timeout: int, notifications: Sequence[Element] = ()) -> Page:
    title = _("Security")
    elements = [
        el("title", "Heading", value=title),
        el("saved", "Notice", visible=False, props={"tone": "info"}),
        _sessions(view.sessions, view.devices, zone),
        _password(view),
        _authenticator(view),
        _passkeys(view.passkeys, zone),
        _recovery(view),
        _apps(view.apps, zone),
        *notifications,  # doctors and support: their own mail (screens/security_mail.py)
    ]
    return Page(screen=SCREEN, title=title, endpoint=ENDPOINT, poll=ENDPOINT, timeout=timeout,
                elements=tuple(elements), layout=layout)  # fmt: skip
